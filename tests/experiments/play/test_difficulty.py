"""``ginenv people``: the difficulty report of a play store (ginenv.experiments.play.difficulty).

Scripted stores whose answer is known: people's margins averaged over each person first (the person
is the unit), the share of people ahead of a level, the ladder's rating beside each; the CSV, the
plot and ``--json``; and one line, with nothing changed, for a missing, empty or older store.
"""

from __future__ import annotations

import csv
import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from ginenv.experiments.cli import main
from ginenv.experiments.eval.ladder_data import ladder_ratings
from ginenv.experiments.play.db import DB_FILE
from ginenv.experiments.play.people import Hand, forget, record_hands
from play.serving import small_store

# Person -> (level, points, luck) of each hand: margins (points - luck) chosen so that the answer is known.
PEOPLE = {
    "ann": [("easy", 20, 0.0), ("easy", 10, 0.0), ("hard", -5, 1.0)],  # easy +15, hard -6
    "bob": [("easy", -4, -1.0)],  # easy -3
    "cid": [
        ("easy", 6, 0.0),
        ("hard", 3, 1.0),
        ("hard", 1, -1.0),
        ("retired_bot", 7, 0.0),
    ],  # easy +6, hard +2
}


def _store(folder: Path, people: dict[str, list[tuple[str, int, float]]] = PEOPLE) -> Path:
    store = small_store(folder)
    with store.db.transaction() as db:
        for person, hands in people.items():
            record_hands(db, person, "standard", [Hand(*h) for h in hands], when=1.0)
    store.close()
    return folder / "tables"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_report_averages_each_person_first_and_sets_the_ladder_beside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = _store(tmp_path)
    before = _digest(state / DB_FILE)
    assert main(["people", "--state-dir", str(state), "--json", "--out", str(tmp_path / "out")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["people"], report["hands"], report["preset"]) == (3, 8, "standard")
    rows = {row["level"]: row for row in report["levels"]}
    ladder = ladder_ratings("standard")
    assert ladder is not None
    # easy: people's means +15, -3, +6 (ann's two hands count once, as one person).
    assert (rows["easy"]["people"], rows["easy"]["hands"]) == (3, 4)
    assert rows["easy"]["margin"] == pytest.approx(6.0)
    assert rows["easy"]["ahead"] == pytest.approx(2 / 3)
    assert rows["easy"]["low"] < 6.0 < rows["easy"]["high"]
    assert rows["easy"]["ladder_rating"] == ladder.levels["easy"].rating
    # hard: -6 and +2, two people, one ahead.
    assert rows["hard"]["margin"] == pytest.approx(-2.0) and rows["hard"]["ahead"] == 0.5
    # A level that is neither registered nor on the ladder stays, with why.
    assert rows["retired_bot"]["note"] == "no longer a registered agent; not on the ladder"
    assert rows["retired_bot"]["ladder_rating"] is None and rows["retired_bot"]["low"] is None
    # The ladder's levels come weakest first, the others before them.
    assert [row["level"] for row in report["levels"]] == ["retired_bot", "easy", "hard"]
    assert report["rated_people"] == 3 and report["levels"][0]["rating_sd"] > 0
    with (tmp_path / "out" / "people.csv").open() as fh:
        assert [row["level"] for row in csv.DictReader(fh)] == ["retired_bot", "easy", "hard"]
    assert (tmp_path / "out" / "people.png").read_bytes()[:4] == b"\x89PNG"
    assert _digest(state / DB_FILE) == before  # read only


def test_a_forgotten_person_leaves_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # DELETE /api/me runs forget(); the report read afterwards no longer counts that person anywhere.
    state = _store(tmp_path)
    store = small_store(tmp_path)
    with store.db.transaction() as db:
        assert forget(db, "ann")["hands"] == 3
    store.close()
    assert main(["people", "--state-dir", str(state), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["people"], report["hands"]) == (2, 5)
    rows = {row["level"]: row for row in report["levels"]}
    # easy: bob -3 and cid +6 are left; hard: cid's +2 alone, so no interval.
    assert (rows["easy"]["people"], rows["easy"]["margin"]) == (2, pytest.approx(1.5))
    assert (rows["hard"]["people"], rows["hard"]["margin"], rows["hard"]["low"]) == (
        1,
        pytest.approx(2.0),
        None,
    )


def test_the_table_names_each_level(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["people", "--state-dir", str(_store(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ginenv people: 3 people, 8 hands of the standard preset")
    assert "easy" in out and "+6.00" in out and "67%" in out and "(no longer a registered agent" in out


def test_bad_stores_are_one_line_each_and_stay_as_they_were(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["people", "--state-dir", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no play store in" in err and DB_FILE in err

    empty = _store(tmp_path / "empty", people={})
    before = _digest(empty / DB_FILE)
    assert main(["people", "--state-dir", str(empty)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds no finished hand of the standard preset yet" in err
    assert _digest(empty / DB_FILE) == before

    older = _store(tmp_path / "older")
    with sqlite3.connect(older / DB_FILE) as db:
        db.execute("PRAGMA user_version = 2")
    before = _digest(older / DB_FILE)
    assert main(["people", "--state-dir", str(older)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is of schema version 2" in err and "to upgrade it" in err
    assert _digest(older / DB_FILE) == before

    assert main(["people", "--state-dir", str(older), "--rules", "nonsense"]) == 2
    assert "--rules: unknown preset 'nonsense'" in capsys.readouterr().err
