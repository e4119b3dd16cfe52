"""Renamed modules: their old import paths, kept working for one release, warn once.

When a module is renamed (so that no two modules share a name, issue 66), its old path stays as a
tiny alias module until :data:`REMOVED_IN`. The alias names the module it stands for in
``__deprecated_alias__`` (the marker ``tools/archcheck.py`` reads: an alias is exempt from the
rules about modules that nothing imports and modules that share a name), re-exports that module's
names with a star import, and hands every other attribute on through the ``__getattr__`` that
:func:`moved_module` returns, so an old import gives the very same objects as the new one::

    from ginenv.deprecation import moved_module
    from ginenv.kernels.meld_search import *  # noqa: F403

    __deprecated_alias__ = "ginenv.kernels.meld_search"
    __getattr__ = moved_module(__name__, __deprecated_alias__)

Importing the alias warns once, with a :class:`DeprecationWarning` that names the new path and the
release that drops the old one; the warning points at the line that imported the old path (not at
the import machinery), so Python's default filters show it in a script and pytest shows it under
the test that imported it. The changelog's *Changed* section lists every rename.
"""

from __future__ import annotations

import importlib
import inspect
import warnings
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["REMOVED_IN", "moved_module"]

#: The release that removes the old paths of the modules renamed in 0.2.0.
REMOVED_IN = "0.3.0"


def moved_module(old: str, new: str, removed_in: str = REMOVED_IN) -> Callable[[str], Any]:
    """Warn that module ``old`` is now ``new``, and return the alias module's ``__getattr__``.

    Called once, from the body of the alias module at ``old``, which Python runs once per process
    (a later import finds it in ``sys.modules``): so the warning comes once. The returned function
    looks up any name the star import did not bind (private names, or every name of a module
    without ``__all__`` that starts with an underscore) on the module at ``new``.
    """
    target = importlib.import_module(new)
    warnings.warn(
        f"{old} is deprecated and will be removed in ginenv {removed_in}: import {new} instead",
        DeprecationWarning,
        stacklevel=_importer_level(),
    )

    def __getattr__(name: str) -> Any:
        # Only names the alias module lacks arrive here; the module at ``new`` has the rest.
        try:
            return getattr(target, name)
        except AttributeError:
            raise AttributeError(f"module {old!r} (now {new!r}) has no attribute {name!r}") from None

    return __getattr__


def _importer_level() -> int:
    """The ``stacklevel`` that makes the warning point at the line that imported the old path.

    :func:`warnings.warn` counts its levels from :func:`moved_module` (1) through the alias module's
    body (2) outwards, passing over the frozen import bootstrap by itself; what is left to pass over
    is ``importlib.import_module``, for an old path imported by name.
    """
    frame = inspect.currentframe()
    frames: list[FrameType] = []
    while frame is not None:  # innermost first: this function, moved_module, the alias, ...
        frames.append(frame)
        frame = frame.f_back
    level = 2
    for frame in frames[3:]:
        code = frame.f_code.co_filename
        if "importlib" in code and "_bootstrap" in code:
            continue  # warnings skips these frames without counting them
        level += 1
        if frame.f_globals.get("__name__") != "importlib":
            break
    return level
