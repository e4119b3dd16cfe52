"""``ginenv rate`` keeps the ladder's scale: every agent of the ladder, random included (placed off
the core), prints exactly the rating, interval and place the ladder gave it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ginenv.experiments.cli import main
from ginenv.experiments.eval.rate import placement_values
from ginenv.experiments.eval.report import summarise

LADDER = "agents: [random, easy, normal, greedy]\nformat: round_robin\nunit: hand\ndeals: 16\nseed: 0\n"


def test_rate_prints_the_ladders_own_ratings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "ladder.yaml").write_text(LADDER)
    monkeypatch.chdir(tmp_path)
    assert main(["ladder", "--config", "ladder.yaml", "--quiet", "--no-plots", "--workers", "1"]) == 0
    capsys.readouterr()
    (folder,) = (tmp_path / "results").glob("ladder-*")
    records = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    ladder = summarise(records, ("random", "easy", "normal", "greedy"))
    assert "random" not in ladder["rating_core"]  # random is placed off the core, the case that moved

    assert main(["rate", "hard", "--config", "ladder.yaml", "--json", "--workers", "1"]) == 0
    result = json.loads(capsys.readouterr().out)
    rated = {row["agent"]: row for row in result["ladder"]}
    for row in ladder["ratings"]:
        for key in ("rating", "low", "high"):
            assert rated[row["agent"]][key] == pytest.approx(row[key], abs=1e-12), (row["agent"], key)
    order = [row["agent"] for row in result["ladder"] if row["agent"] != "hard"]
    assert order == [row["agent"] for row in ladder["ratings"]]


def test_placement_values_drop_only_the_newcomers_games_off_the_core() -> None:
    values = {
        ("easy", "greedy"): {0: 1.0},
        ("random", "easy"): {0: -50.0},
        ("new", "easy"): {0: 2.0},
        ("random", "new"): {0: -60.0},
    }
    kept = placement_values(values, "new", ["easy", "greedy"])
    assert set(kept) == {("easy", "greedy"), ("random", "easy"), ("new", "easy")}
