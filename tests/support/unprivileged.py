"""Running a command as a user without privileges, as an attacker on a shared machine would be.

Attack tests (a spy ``exec:`` agent reading its parent's memory) mean something only where the
attacker has no privilege the real one would lack: a process of root reads any memory. So when the
tests run as root, :func:`unprivileged_command` runs its command as ``nobody`` (``setpriv`` from
util-linux: its user and group ids, no supplementary groups, no capabilities), the harness and its
spy alike, which is the case that matters (an agent of the same user as its harness). Where
``nobody`` cannot reach this checkout's interpreter (a checkout in a private folder), the command
runs as root without a single capability instead: the same rights over its own processes as any
user (``/proc/PID/mem`` of a non-dumpable process and ptrace need ``CAP_SYS_PTRACE``). Run by any
other user, the command runs as that user, unchanged.

The unprivileged user cannot write this checkout's numba cache: :func:`seed_numba_cache` copies it
into a folder of its own (``NUMBA_CACHE_DIR``), so the command does not compile the engine again.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

#: The user attack tests run as when the tests run as root.
NOBODY = 65534
SETPRIV = "setpriv"


def _as_nobody() -> list[str]:
    return [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all"]


def _without_capabilities() -> list[str]:
    return [SETPRIV, "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"]


@functools.cache
def prefix() -> tuple[list[str], str]:
    """The words that run a command unprivileged here, and who it then runs as (in words)."""
    if os.geteuid() != 0:
        return [], f"uid {os.geteuid()} (the tests' own user)"
    if shutil.which(SETPRIV) is None:
        raise RuntimeError("the attack tests run as root need setpriv (util-linux) to drop privileges")
    probe = subprocess.run([*_as_nobody(), sys.executable, "-c", "pass"], capture_output=True, timeout=60)
    if probe.returncode == 0:
        return _as_nobody(), "nobody (uid 65534)"
    return _without_capabilities(), "root without capabilities (nobody cannot reach this checkout)"


def shared_folder(parent: str = "/tmp") -> Path:
    """A new folder under ``parent`` that the unprivileged user owns (remove it when done)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="ginenv-attack-", dir=parent))
    folder.chmod(0o755)
    if prefix()[0] and prefix()[0] == _as_nobody():
        os.chown(folder, NOBODY, NOBODY)
    return folder


def give(path: Path) -> None:
    """Make ``path`` (and what is under it) the unprivileged user's."""
    if not (prefix()[0] and prefix()[0] == _as_nobody()):
        return
    for item in [path, *(path.rglob("*") if path.is_dir() else [])]:
        os.chown(item, NOBODY, NOBODY)


def seed_numba_cache(dest: Path) -> None:
    """Copy the numba cache of ginenv's packages (``__pycache__/*.nbi, *.nbc``) into ``dest`` laid
    out as numba reads ``NUMBA_CACHE_DIR``: one folder per source folder, named by its last part and
    the SHA-1 of its path (numba's ``_CacheLocator.get_suitable_cache_subpath``). A missing or
    stale entry only costs a compilation."""
    import ginenv

    roots = {Path(ginenv.__file__).parent}
    for sub in ("agents", "experiments"):
        module = sys.modules.get(f"ginenv.{sub}") or __import__(f"ginenv.{sub}", fromlist=["_"])
        roots.add(Path(module.__file__).parent)
    for root in roots:
        for cache in root.rglob("__pycache__"):
            source = str(cache.parent.resolve())
            name = f"{os.path.basename(source)}_{hashlib.sha1(source.encode()).hexdigest()}"
            for entry in cache.iterdir():
                if entry.suffix in (".nbi", ".nbc"):
                    target = dest / name
                    target.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(entry, target / entry.name)
    give(dest)


def unprivileged_command(command: list[str]) -> list[str]:
    """``command`` run as the unprivileged user of this module (see its docstring)."""
    return [*prefix()[0], *command]
