"""The scripted people (benchmarks/bench_people.py): their view of a seat, their checks, a quick run.

The observation a scripted person rebuilds from the server's view must be exactly what the env
gives that seat, at every decision of whole matches (else its player would not be the player the
ladder rated). The quick run plays the real server (``ginenv play`` in its own process) as the command line
does: two people, six hands each; the store, ``/api/me`` and ``ginenv people`` are asserted from what it
leaves in ``--out``. The report's checks are run on reports made to fail them.
"""

from __future__ import annotations

import copy
import json
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from ginenv.experiments.eval.harness import make_agent as harness_make_agent
from ginenv.experiments.eval.ladder_data import ladder_ratings
from ginenv.experiments.play.difficulty import read_hands
from ginenv.experiments.play.people import hands_of, standing
from ginenv.experiments.play.table import Table
from ginenv.experiments.play.views import PERSON

from ginenv import agents
from ginenv.actions import ACTION_NAMES
from ginenv.aec import AGENTS

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_people

        yield bench_people
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


@pytest.mark.parametrize(("preset", "player", "seed"), [("standard", "expert", 3), ("seed004", "hard", 7)])
def test_the_rebuilt_observation_is_the_seats_own_at_every_decision(
    bench: ModuleType, preset: str, player: str, seed: int
) -> None:
    table = Table("normal", preset, allowed=["normal"], make_agent=harness_make_agent, seed=seed)
    me = agents.make(player, rules=table.rules)
    decisions = hands = 0
    while table.stage != "over" and hands < 6:
        if table.stage == "showdown":
            table.next_hand()
            hands += 1
        elif table.turn_seat != PERSON:
            table.advance()
        else:
            obs, mask = bench.seat_observation(table.view(PERSON), table.rules)
            true = table.env.observe(AGENTS[PERSON])
            assert np.array_equal(obs, true["observation"]) and np.array_equal(mask, true["action_mask"])
            table.act(ACTION_NAMES[me.act(true)])
            decisions += 1
    assert decisions > 40


def test_a_view_that_does_not_replay_is_refused(bench: ModuleType) -> None:
    table = Table("normal", "standard", allowed=["normal"], make_agent=harness_make_agent, seed=1)
    while table.turn_seat != PERSON:
        table.advance()
    view = table.view(PERSON)
    wrong = dict(view, stock=view["stock"] - 1)
    with pytest.raises(bench.BenchError, match="do not replay"):
        bench.seat_observation(wrong, table.rules)
    fewer = dict(view, legal=view["legal"][:-1])
    with pytest.raises(bench.BenchError, match="differ from the view's"):
        bench.seat_observation(fewer, table.rules)


def test_stays_true_from_is_the_first_count_of_the_last_run_of_trues(bench: ModuleType) -> None:
    assert bench._stays_true_from([False, True, False, True, True]) == 4
    assert bench._stays_true_from([True, True]) == 1
    assert bench._stays_true_from([True, False]) is None
    assert bench._stays_true_from([]) is None


def _people(bench: ModuleType) -> tuple[list, dict, dict, dict]:
    """Two scripted people with known hands, their /api/me answers and the report ginenv people makes."""
    from ginenv.experiments.play.difficulty import difficulty

    ladder = ladder_ratings("standard")
    assert ladder is not None
    truth = {n: level.rating for n, level in ladder.levels.items()}
    stored = {
        "p1": [("normal", 10, 2.0), ("normal", -20, -1.0), ("hard", 5, 0.0)],
        "p2": [("normal", 3, 0.0), ("hard", -7, 1.5), ("hard", 15, 0.5)],
    }
    people = []
    for cookie, player in (("p1", "easy"), ("p2", "expert")):
        p = bench.Person(player, 0, len(people), cookie=cookie)
        p.hands = [(o, points) for o, points, _ in stored[cookie]]
        p.me = standing(hands_of(stored[cookie]), ladder)
        people.append(p)
    report = difficulty(stored, "standard", {"normal", "hard"})
    return people, stored, truth, report


def test_the_report_checks_pass_on_the_report_of_the_store_and_fail_on_a_changed_one(
    bench: ModuleType,
) -> None:
    people, stored, truth, report = _people(bench)
    checked = bench.report_checks(report, people, stored, truth)
    assert [row["agrees_with_api_me"] for row in checked["levels"]] == [True, True]
    # Two people a level: a t-interval over 1 degree of freedom, widened for two levels; the
    # predictions (the people's ladder ratings less the level's) fall inside.
    assert all(row["held"] for row in checked["levels"]) and checked["problems"] == []

    moved = copy.deepcopy(report)
    moved["levels"][0]["margin"] += 0.5
    assert any(
        "differ from /api/me's" in line
        for line in bench.report_checks(moved, people, stored, truth)["problems"]
    )
    far = copy.deepcopy(report)
    far["levels"][1].update(margin=500.0, low=499.0, high=501.0)
    assert any(
        "is not the predicted" in line for line in bench.report_checks(far, people, stored, truth)["problems"]
    )
    lost = {"p1": stored["p1"][:-1], "p2": stored["p2"]}
    assert any(
        "the store holds 2 hands" in line
        for line in bench.report_checks(report, people, lost, truth)["problems"]
    )


def test_a_quick_run_fills_the_store_and_ginenv_people_agrees(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    # In this process (its modules are loaded already); the server runs in its own, as always.
    assert bench.main(["--quick", "--json", "--out", str(out)]) == 0
    f = json.loads(capsys.readouterr().out)
    assert f["ok"] and f["problems"] == [] and f["server_exit"] == 0
    assert f["hands"] == 12 and f["decisions"] > 50 and f["hands_per_second"] > 0
    assert [(p["player"], p["hands"]) for p in f["people"]] == [("easy", 6), ("expert", 6)]
    # The store holds every hand, and /api/me's ratings (the figures' people) are standing() of them.
    stored = read_hands(out / "state", "standard")
    assert sorted(len(rows) for rows in stored.values()) == [6, 6]
    assert {rows[0][0] for rows in stored.values()} == {"normal"}
    ladder = ladder_ratings("standard")
    from_store = sorted(standing(hands_of(rows), ladder)["rating"] for rows in stored.values())
    assert from_store == pytest.approx(sorted(p["rating"] for p in f["people"]), abs=1e-9)
    # ginenv people on that store: one level, both people, their hands, and the spread of the ratings.
    (row,) = f["report"]["levels"]
    assert (row["level"], row["people"], row["hands"]) == ("normal", 2, 12)
    assert row["rating_sd"] == pytest.approx(statistics.stdev(p["rating"] for p in f["people"]))
    (check,) = f["report_check"]
    assert check["agrees_with_api_me"] and check["held"] is not None
    assert ladder is not None
    levels = ladder.levels
    predicted = statistics.fmean(levels[p].rating - levels["normal"].rating for p in ("easy", "expert"))
    assert check["predicted"] == pytest.approx(predicted)
    # The figures: coverage over the two people, the ordering of the run, the spread and hands needed.
    assert f["coverage"]["overall"]["people"] == 2 and 0 <= f["coverage"]["overall"]["low"] <= 1
    assert f["ordering"]["players"] == ["easy", "expert"] and f["ordering"]["runs"][0]["hands"] == 6
    assert f["ordering"]["pooled"]["hands"] == 6  # one run: the pooled person is the run's
    assert f["spread"]["sd"] > 0 and f["hands_needed"][0]["pair"] == "easy<expert"
    for name in ("bench_people.json", "bench_people.png", "people.csv", "people.png"):
        assert (out / name).stat().st_size > 0
