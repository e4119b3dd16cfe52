"""The "compiling once" note and the registry of compiled entry points.

The note is said by the process that compiles, on stderr, just before it compiles: tested in fresh
processes with an empty numba cache (``NUMBA_CACHE_DIR``), which is a fresh install's. What a
command says around it (its folder, the note, how long it took; nothing on a second run) is tested
on a real fresh install, by the installed wheel's test in ``tests/test_packaging.py``: compiling
what ``ginenv match greedy random`` runs takes a minute of CPU, paid there once for both.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ginenv.agents.baselines.greedy import GreedyAgent, greedy_discard, greedy_takes
from ginenv.agents.levels.level_base import TakeGuard

from ginenv import compiling, gin_rummy_v0
from ginenv.kernels import hand as H
from ginenv.kernels import meld_search

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
    compiling.register(owner, meld_search.popcount)
    meld_search.popcount(7)  # compiled here or loaded from the cache: either way nothing is left
    assert compiling.pending(owner) == []


def test_the_note_is_said_before_a_first_compilation_and_never_from_the_cache(tmp_path: Path) -> None:
    probe = (
        "from ginenv import compiling; compiling.note_once(); "
        "from ginenv.kernels import meld_search; meld_search.popcount(7); print(compiling.said())"
    )
    fresh = _run(tmp_path, "-c", probe)
    assert fresh.stdout.split() == ["True"], fresh.stderr
    # One line, naming where the compiled code goes (numba's folder for the kernels' package).
    (line,) = fresh.stderr.splitlines()
    assert line.startswith(NOTE_START + str(tmp_path)) and line.endswith(compiling.NOTE.partition("}")[2])
    again = _run(tmp_path, "-c", probe)
    assert again.stdout.split() == ["False"] and again.stderr == ""


def test_an_empty_cache_has_the_engines_the_agents_and_the_lucks_entry_points_pending(
    tmp_path: Path,
) -> None:
    # What `ginenv match greedy random` runs, as the harness asks before its bar (nothing compiles).
    probe = (
        "from ginenv import compiling; from ginenv.experiments.eval.harness import EvalConfig; "
        "from ginenv.experiments.eval.units import compiled_owners; "
        "cfg = EvalConfig(agents=('greedy', 'random'), format='round_robin', deals=1); "
        "print(' '.join(name for name, _ in compiling.pending(*compiled_owners(cfg))))"
    )
    out = _run(tmp_path, "-c", probe, timeout=120)
    names = set(out.stdout.split())
    assert {
        "ginenv.kernels.hand.deal",
        "ginenv.kernels.hand.write_view",
        "ginenv.agents.baselines.greedy.greedy_takes",
        "ginenv.experiments.eval.luck._replay",
    } <= names, out.stderr
    assert not list(tmp_path.rglob("*.nbi"))  # asking compiled nothing


def test_the_notes_are_told_from_other_lines() -> None:
    assert compiling.is_note(compiling.NOTE.format(where="/tmp/cache"))
    assert compiling.is_note("ginenv rate: " + compiling.COMPILED.format(seconds=41.6))
    assert not compiling.is_note("ginenv: writing results to results/match-1/")
    assert not compiling.is_note("ginenv: compiled in many s, once (later runs load it)")
