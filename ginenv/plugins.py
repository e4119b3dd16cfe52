"""What installed packages name in ginenv's entry-point groups: the core's door to the layers above.

The core never imports the agents layer; the package metadata names what it needs from it (the agent
factory, group ``ginenv.agent_factory``; the compiled opponents, group ``ginenv.compiled_policies``),
and :func:`installed` reads a group's entries, loaded by the caller on first use.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, distributions


def installed(group: str) -> dict[str, EntryPoint]:
    """The entry points of ``group`` by name (the first found of each), over every installed
    distribution.

    Every distribution is read, not only the first of each name that ``entry_points()`` keeps: a
    stale ``ginenv.egg-info`` in a checkout's root (left by a build there) would otherwise hide the
    installed metadata."""
    found: dict[str, EntryPoint] = {}
    for dist in distributions():
        for point in dist.entry_points:
            if point.group == group:
                found.setdefault(point.name, point)  # the first distribution naming it, as before
    return found


__all__ = ["installed"]
