"""Registration of the published baselines: each under its name, only where its package is installed.

``openspiel_simple`` needs ``open-spiel`` and ``rlcard_novice`` needs ``rlcard`` (the ``baselines``
extra). Whether a package is installed is found without importing it, so registering costs nothing;
each adapter imports its package when it is first built. ``ginenv.agents`` calls
:func:`register_available` when it is imported.
"""

from __future__ import annotations

from ginenv.agents.baselines.openspiel_simple import OpenSpielSimpleAgent, openspiel_installed
from ginenv.agents.baselines.rlcard_novice import RLCardNoviceAgent, rlcard_installed

__all__ = ["register_available"]


def register_available() -> list[str]:
    """Register the baselines whose package is installed; returns the names registered."""
    from ginenv.agents.registry import available, register_builtin

    names = []
    known = set(available())
    if openspiel_installed() and "openspiel_simple" not in known:
        register_builtin(
            "openspiel_simple",
            OpenSpielSimpleAgent,
            "OpenSpiel's simple_gin_rummy_bot (published baseline; needs open-spiel)",
        )
        names.append("openspiel_simple")
    if rlcard_installed() and "rlcard_novice" not in known:
        register_builtin(
            "rlcard_novice",
            RLCardNoviceAgent,
            "RLCard's gin rummy novice rule agent (published baseline; needs rlcard)",
        )
        names.append("rlcard_novice")
    return names
