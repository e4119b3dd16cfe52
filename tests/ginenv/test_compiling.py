"""The "compiling once" note and the registry of compiled entry points.

The note is said by the process that compiles, on stderr, just before it compiles: tested in fresh
processes with an empty numba cache (``NUMBA_CACHE_DIR``), which is a fresh install's. The commands'
test shares one cache folder across its two runs (compiling what ``ginenv match greedy random``
runs takes a minute or more on 2 busy cores: once for the module).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
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


@pytest.fixture(scope="module")
def match_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One numba cache folder for the command's runs: empty when the first one starts."""
    return tmp_path_factory.mktemp("numba_cache")


def _match(cache: Path, out: Path) -> subprocess.CompletedProcess[str]:
    args = ["match", "greedy", "random", "--hands", "2", "--json", "--no-plots", "--out", str(out)]
    return _run(cache, "-m", "ginenv.experiments.cli", *args)


@pytest.mark.long  # compiles what a match runs, from an empty cache
def test_a_first_match_names_its_folder_then_says_the_note_and_a_second_says_none(
    match_cache: Path, tmp_path: Path
) -> None:
    first = _match(match_cache, tmp_path / "first")
    assert first.returncode == 0, first.stderr
    lines = first.stderr.splitlines()
    # The folder before any game, the note before the compilation that the first deal waits on,
    # then how long it took; --json's stdout holds the one JSON object only.
    assert lines[0] == f"ginenv: writing results to {tmp_path / 'first'}{os.sep}"
    assert lines[1].startswith(NOTE_START + str(match_cache)), first.stderr
    assert compiling.is_note(lines[2]) and len(lines) == 3, first.stderr
    assert json.loads(first.stdout)["results"] == str(tmp_path / "first")
    second = _match(match_cache, tmp_path / "second")
    assert second.returncode == 0, second.stderr
    assert second.stderr.splitlines() == [f"ginenv: writing results to {tmp_path / 'second'}{os.sep}"]
    assert json.loads(second.stdout)["hands_played"] == 2


def test_the_notes_are_told_from_other_lines() -> None:
    assert compiling.is_note(compiling.NOTE.format(where="/tmp/cache"))
    assert compiling.is_note("ginenv rate: " + compiling.COMPILED.format(seconds=41.6))
    assert not compiling.is_note("ginenv: writing results to results/match-1/")
    assert not compiling.is_note("ginenv: compiled in many s, once (later runs load it)")
