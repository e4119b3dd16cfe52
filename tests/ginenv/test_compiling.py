"""The "compiling once" note and the registry of compiled entry points.

The note is said by the process that compiles, on stderr, just before it compiles: tested in fresh
processes with an empty numba cache (``NUMBA_CACHE_DIR``), which is a fresh install's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ginenv.agents.baselines.greedy import GreedyAgent, greedy_discard, greedy_takes
from ginenv.agents.levels.base import TakeGuard

from ginenv import compiling, gin_rummy_v0
from ginenv.kernels import hand as H
from ginenv.kernels import melds

NOTE_START = compiling.NOTE.partition("{where}")[0]


def _run(cache: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, timeout=timeout, check=False
    )


def test_an_owner_runs_its_bases_and_the_owners_it_names() -> None:
    env = compiling.entry_points(gin_rummy_v0.raw_env)
    # The env's own view writer, and its hand's deal and step (HandState, an owner it names).
    assert {H.write_view, H.deal, H.step_view} <= set(env)
    greedy = compiling.entry_points(GreedyAgent)
    assert {greedy_takes, greedy_discard} <= set(greedy)
    assert set(compiling.entry_points(TakeGuard)) <= set(greedy)  # a base class's, each once
    assert len(greedy) == len(set(greedy))
    assert compiling.entry_points(object()) == []  # an owner nothing registered runs nothing


def test_a_kernel_compiled_in_this_process_is_not_pending() -> None:
    owner = object()
    compiling.register(owner, melds.popcount)
    melds.popcount(7)  # compiled here or loaded from the cache: either way nothing is left
    assert compiling.pending(owner) == []


def test_the_note_is_said_before_a_first_compilation_and_never_from_the_cache(tmp_path: Path) -> None:
    probe = (
        "from ginenv import compiling; compiling.note_once(); "
        "from ginenv.kernels import melds; melds.popcount(7); print(compiling.said())"
    )
    fresh = _run(tmp_path, "-c", probe)
    assert fresh.stdout.split() == ["True"], fresh.stderr
    # One line, naming where the compiled code goes (numba's folder for the kernels' package).
    (line,) = fresh.stderr.splitlines()
    assert line.startswith(NOTE_START + str(tmp_path)) and line.endswith(compiling.NOTE.partition("}")[2])
    again = _run(tmp_path, "-c", probe)
    assert again.stdout.split() == ["False"] and again.stderr == ""
