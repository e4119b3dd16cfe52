"""What a process still has to compile, and the one line said before numba compiles it.

Every kernel of ginenv (the engine's, the agents', the harness's) is ``@njit(cache=True)``: the
first process that calls one compiles it (seconds each; a minute or more for a first command on a
slow machine) and writes it to numba's cache; every later process loads it in well under a second.
numba writes the cache beside the source (``__pycache__``) where that folder is writable, else in
the folder that ``NUMBA_CACHE_DIR`` names, else in a user-wide folder (``~/.cache/numba`` on Linux):
an installed, read-only ``site-packages`` still gets a cache shared by the user's processes.

This module owns two things:

- **The note.** :func:`note_once` listens to numba's own compile event (:mod:`numba.core.event`):
  the first time the process starts compiling a ginenv kernel that numba's cache lacks, it says
  :data:`NOTE` on stderr, once, before the wait. The note is therefore said exactly when something
  the command runs compiles (the engine, an agent's kernels or the harness's, whichever comes
  first) and never when everything loads from the cache. :func:`compile_seconds` is the time the
  process has spent compiling since.
- **The registry of compiled entry points**, the kernels that Python code calls (a kernel only
  other kernels call is compiled, and cached, with its caller). Each module registers the entry
  points of the code it defines, under that code's owner (:func:`register`: a class, or a module's
  name); :func:`pending` reads their cache indexes, compiling nothing, and says which of an owner's
  entry points (a class's bases' included) would compile now. A command uses it to compile before
  its progress bar starts (the harness plays its first deal before the bar), so that no bar's rate
  or ETA counts the compilation. The registry only decides that: an entry point it lacks still
  gets the note, and then compiles where it is first called (under the bar, at worst).

Importing this module prints nothing and imports no numba.
"""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Any, TextIO

#: The line said before a first compilation ({where}: the cache folder it is written to).
NOTE = (
    "ginenv: compiling numba code once (about 30-60 s, more on busy cores); "
    "later runs load it from {where} at once"
)

#: The line a command says once the compilation it waited on is over (a prefix before it: its name).
COMPILED = "compiled in {seconds:.0f} s, once (later runs load it)"

#: Owner (a class, or a module's ``__name__``) -> what its Python code calls: compiled kernels, or
#: other owners whose entry points it runs too.
_REGISTRY: dict[object, list[Any]] = {}


def is_note(line: str) -> bool:
    """Whether ``line``, of a command's stderr, is :data:`NOTE` or :data:`COMPILED`: what a reader of
    stderr skips when it looks for the other lines (a first run says them, a later one does not)."""
    head, _, tail = COMPILED.partition("{seconds:.0f}")
    seconds = line.rpartition(head)[2].removesuffix(tail)
    return line.startswith(NOTE.partition("{")[0]) or (line.endswith(tail) and seconds.isdigit())


def register(owner: object, *uses: Any) -> None:
    """Record that ``owner``'s Python code calls the compiled kernels in ``uses`` (dispatchers of
    ``@njit(cache=True)``); an item of ``uses`` that is not a kernel is another owner whose entry
    points ``owner`` runs as well (an env runs its engine's). Called where the owner is defined."""
    _REGISTRY.setdefault(owner, []).extend(uses)


def _is_kernel(obj: object) -> bool:
    return hasattr(obj, "py_func") and hasattr(obj, "_cache")


def entry_points(*owners: object) -> list[Any]:
    """The registered kernels that ``owners`` run (a class's bases' and the owners they name
    included), each once, in registration order."""
    found: dict[int, Any] = {}
    seen: set[int] = set()

    def visit(owner: object) -> None:
        for item in getattr(owner, "__mro__", (owner,)):
            if id(item) in seen:
                continue
            seen.add(id(item))
            for use in _REGISTRY.get(item, ()):
                if _is_kernel(use):
                    found.setdefault(id(use), use)
                else:
                    visit(use)

    for owner in owners:
        visit(owner)
    return list(found.values())


def kernel_name(kernel: Any) -> str:
    """A kernel's qualified name (``ginenv.kernels.hand.deal``)."""
    func = kernel.py_func
    return f"{func.__module__}.{func.__qualname__}"


def _cache_file(kernel: Any) -> Any:
    """numba's on-disk cache file of ``kernel``; None for a kernel without one (``cache=False``)."""
    return getattr(getattr(kernel, "_cache", None), "_cache_file", None)


def _cache_folder(kernel: Any) -> str | None:
    """Where numba caches ``kernel``; None for a kernel without a disk cache (``cache=False``)."""
    cache_file = _cache_file(kernel)
    return None if cache_file is None else str(cache_file._cache_path)


def _is_cached(kernel: Any) -> bool:
    """Whether numba's cache holds a compilation of ``kernel`` for its source as it is now: one
    small index file read (none, another numba's, or a stale one: not cached). A kernel compiled in
    this process already, or whose cache cannot be read this way (numba's internals moved), counts
    as cached: this only decides a note and when to compile, never what runs."""
    if kernel.overloads:
        return True
    cache_file = _cache_file(kernel)
    if cache_file is None:
        return True
    try:
        return bool(cache_file._load_index())
    except Exception:
        return True


def pending(*owners: object) -> list[tuple[str, str]]:
    """``(name, cache folder)`` of each entry point of ``owners`` (:func:`entry_points`) that would
    compile if called now: neither compiled in this process nor in numba's cache."""
    return [(kernel_name(k), _cache_folder(k) or "") for k in entry_points(*owners) if not _is_cached(k)]


class _Watch:
    """numba's compile-event listener: says :data:`NOTE` at the first compilation of a ginenv kernel
    and sums the time spent compiling (outermost compilations only: a kernel's callees compile
    inside it)."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.said = False
        self.depth = 0
        self.started = 0.0
        self.seconds = 0.0

    def on_start(self, event: Any) -> None:
        self.depth += 1
        if self.depth > 1:
            return
        self.started = time.perf_counter()
        kernel = event.data["dispatcher"]
        where = _cache_folder(kernel)
        if self.said or where is None or not kernel.py_func.__module__.startswith("ginenv"):
            return  # said already, a kernel without a cache, or not ginenv's (a user's own)
        self.said = True
        stream = self.stream or sys.stderr
        tqdm = sys.modules.get("tqdm")
        # A progress bar on the screen (training's) is cleared for the line and drawn again below it.
        with tqdm.tqdm.external_write_mode(file=stream) if tqdm else contextlib.nullcontext():
            print(NOTE.format(where=where), file=stream, flush=True)

    def on_end(self, event: Any) -> None:
        self.depth -= 1
        if self.depth == 0:
            self.seconds += time.perf_counter() - self.started


_watch: _Watch | None = None


def note_once(stream: TextIO | None = None) -> bool:
    """Say :data:`NOTE` on ``stream`` (default stderr) when, and just before, this process first
    compiles a ginenv kernel; once a process. The first call decides the stream (later calls
    change nothing); returns whether this call started listening."""
    global _watch
    if _watch is not None:
        return False
    from numba.core import event

    watch = _Watch(stream)

    # numba's listeners are subclasses of its abstract Listener: this one forwards to _Watch.
    class Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            watch.on_start(ev)

        def on_end(self, ev: Any) -> None:
            watch.on_end(ev)

    event.register("numba:compile", Listener())
    _watch = watch
    return True


def compile_seconds() -> float:
    """Seconds this process has spent compiling since :func:`note_once` first listened (0 before)."""
    return 0.0 if _watch is None else _watch.seconds


def said() -> bool:
    """Whether this process has said :data:`NOTE`."""
    return _watch is not None and _watch.said
