"""Whether the compiled game engine is in numba's on-disk cache, and the one line said when it is not.

Every kernel of :mod:`ginenv.kernels` and :mod:`ginenv.vector` is ``@njit(cache=True)``: the first
process that calls one compiles it (about 30 s for the whole engine) and writes it to numba's cache;
every later process loads it in well under a second. numba writes the cache beside the source
(``__pycache__``) where that folder is writable, else in the folder that ``NUMBA_CACHE_DIR`` names,
else in a user-wide folder (``~/.cache/numba`` on Linux): an installed, read-only ``site-packages``
still gets a cache shared by the user's processes.

:func:`note_compilation` tells a command's user that the silence to come is that compilation, and
only when it will happen: it reads the kernels' cache indexes (numba's own record of what is
cached for the source as it is now) and compiles nothing; :func:`note_once` does so at most once a
process (the AEC env and the command line call it as they start). The note is for a first compilation,
when no kernel is cached (a fresh install, a new version, a cleared cache): a kernel that only
other kernels call is compiled into them and never cached on its own, and a process that needs an
entry point no earlier one did compiles that one alone, in a few seconds. Importing this module
prints nothing.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TextIO

#: The line said before a first compilation ({where}: the cache folder it is written to).
NOTE = "ginenv: compiling the game engine once (about 30 s); later runs load it from {where} at once"


def engine_modules() -> list[ModuleType]:
    """The modules holding the engine's cached kernels."""
    from ginenv import vector
    from ginenv.kernels import hand, melds, opponent_loops, policies

    return [melds, hand, policies, opponent_loops, vector]


def _kernels() -> list[tuple[str, object]]:
    """``(qualified name, dispatcher)`` of every ``cache=True`` kernel defined in the engine's modules."""
    found: list[tuple[str, object]] = []
    for module in engine_modules():
        for name, obj in vars(module).items():
            func = getattr(obj, "py_func", None)
            if getattr(getattr(obj, "_cache", None), "_cache_file", None) is None or func is None:
                continue
            if func.__module__ == module.__name__:  # not one imported from another module
                found.append((f"{module.__name__}.{name}", obj))
    return found


def kernel_count() -> int:
    """How many cached kernels the engine defines."""
    return len(_kernels())


def uncached_kernels() -> list[tuple[str, str]]:
    """``(name, cache folder)`` of each cached kernel with nothing in numba's cache for its source as
    it is now (no index, another numba's, or a stale one). Reads one small index file per kernel;
    a kernel whose cache cannot be read this way (numba's internals moved) counts as cached."""
    missing: list[tuple[str, str]] = []
    for name, kernel in _kernels():
        cache_file = kernel._cache._cache_file  # type: ignore[attr-defined]
        try:
            cached = bool(cache_file._load_index())
        except Exception:  # an unreadable index: numba recompiles, but this is only a note
            cached = True
        if not cached:
            missing.append((name, str(cache_file._cache_path)))
    return missing


def note_compilation(stream: TextIO | None = None) -> bool:
    """Write :data:`NOTE` to ``stream`` (default stderr) when no kernel of the engine is in numba's
    cache yet (the whole engine compiles now); whether it was written."""
    missing = uncached_kernels()
    if not missing or len(missing) < kernel_count():
        return False
    print(NOTE.format(where=missing[0][1]), file=stream or sys.stderr, flush=True)
    return True


_noted = False


def note_once(stream: TextIO | None = None) -> bool:
    """:func:`note_compilation`, the first time a process asks (later calls return False at once)."""
    global _noted
    if _noted:
        return False
    _noted = True
    return note_compilation(stream)
