"""The ladder's ratings kept as data (experiments/eval/ladder_data.py): read from a run folder,
written to the file, read back by preset."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from ginenv.experiments.eval.ladder_data import ladder_ratings, ratings_from_run, write_ladder_ratings

from ginenv.rules import PRESETS


def _run(folder: Path, rules: dict[str, object], unit: str = "hand") -> Path:
    """A finished run folder of two agents: ratings.csv as the report writes it, two deals."""
    folder.mkdir()
    config = {"agents": ["easy", "hard"], "deals": 2, "unit": unit, "rules": rules, "seed": 5}
    (folder / "config.json").write_text(json.dumps({"fingerprint": "x", "config": config}))
    (folder / "ratings.csv").write_text(
        "agent,rating,low,high,gap,gap_low,gap_high\nhard,2.5,1.25,3.75,5,4,6\neasy,-2.5,-3.75,-1.25,,,\n"
    )
    games = [{"a_points": p} for p in (10, -20)]
    lines = [{"a": "easy", "b": "hard", "deal": d, "games": games} for d in range(2)]
    (folder / "results.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return folder


def test_a_run_folder_becomes_the_files_entry_and_reads_back(tmp_path: Path) -> None:
    rules = dataclasses.asdict(PRESETS["oklahoma"])
    entry = ratings_from_run(_run(tmp_path / "run", rules))
    assert entry["preset"] == "oklahoma" and entry["deals"] == 2 and entry["seed"] == 5
    assert entry["levels"]["hard"] == {"rating": 2.5, "low": 1.25, "high": 3.75}
    # Points 10, -20, 10, -20: sample standard deviation 15 * 2 / sqrt(3).
    assert entry["hand_sd"] == pytest.approx(round(30 / 3**0.5, 3))
    path = tmp_path / "ladder_ratings.json"
    write_ladder_ratings(tmp_path / "run", path)
    read = ladder_ratings("oklahoma", path)
    assert (
        read is not None and read.levels["easy"].rating == -2.5 and read.command.startswith("ginenv ladder")
    )
    assert ladder_ratings("standard", path) is None


def test_a_run_that_is_not_a_presets_hands_is_refused(tmp_path: Path) -> None:
    rules = {**dataclasses.asdict(PRESETS["standard"]), "knock_limit": 7}
    with pytest.raises(ValueError, match="no preset's"):
        ratings_from_run(_run(tmp_path / "odd", rules))
    standard = dataclasses.asdict(PRESETS["standard"])
    with pytest.raises(ValueError, match="points a hand"):
        ratings_from_run(_run(tmp_path / "matches", standard, unit="match"))
    with pytest.raises(ValueError, match="not a finished ladder run folder"):
        ratings_from_run(tmp_path / "nothing")
