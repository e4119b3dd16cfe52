"""The "compiling once" note: said when numba's cache holds none of the engine, silent otherwise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ginenv import compiling

PROBE = "from ginenv.compiling import note_once; print(note_once(), note_once())"


def _probe(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120, check=True
    )


def test_an_empty_cache_gets_the_note_once_and_a_filled_one_none(tmp_path: Path) -> None:
    # NUMBA_CACHE_DIR moves numba's cache: an empty folder is a fresh install's cache.
    fresh = _probe({**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert fresh.stdout.split() == ["True", "False"]
    # One line, naming where the compiled engine goes (numba's folder for the kernels' package).
    (line,) = fresh.stderr.splitlines()
    before, _, after = compiling.NOTE.partition("{where}")
    assert line.startswith(before + str(tmp_path)) and line.endswith(after)
    # A kernel compiled and cached there: the engine is no longer new, nothing is said.
    subprocess.run(
        [sys.executable, "-c", "from ginenv.kernels import melds; melds.popcount(7)"],
        env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)},
        check=True,
        timeout=300,
    )
    again = _probe({**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert again.stdout.split() == ["False", "False"] and again.stderr == ""


def test_an_empty_cache_lacks_every_kernel_of_the_engine(tmp_path: Path) -> None:
    probe = (
        "from ginenv import compiling; names = [n for n, _ in compiling.uncached_kernels()]; "
        "print(len(names) == compiling.kernel_count() > 20, "
        "any(n.startswith('ginenv.vector.') for n in names), "
        "any(n.startswith('ginenv.kernels.melds.') for n in names))"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.split() == ["True", "True", "True"], out.stderr
