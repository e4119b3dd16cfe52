"""A person's hands against the computer and their rating on the ladder's scale
(experiments/play/people.py, routes_people.py, the ``hands`` table of db.py).

The rating's arithmetic is checked without a server on cases whose answer is known; the server
records every finished hand of a computer table in the transaction of the move that ended it,
answers ``GET /api/me`` and forgets a person on ``DELETE /api/me``.
"""

from __future__ import annotations

import itertools
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from ginenv.experiments.eval.ladder_data import LadderRatings, LevelRating
from ginenv.experiments.eval.luck import state_luck
from ginenv.experiments.play import people
from ginenv.experiments.play.db import DB_FILE, SCHEMA_VERSION, Database
from ginenv.experiments.play.people import (
    HISTORY_POINTS,
    PRIOR_DF,
    Hand,
    history,
    history_counts,
    interval,
    standing,
)
from ginenv.experiments.play.server import create_app, serve_in_background
from play.moves import finish, step
from play.serving import page_client

#: t_{0.975} with PRIOR_DF = 2 degrees of freedom (one hand: the prior's alone).
T_2 = 4.302652729749462
COOKIE = {"ginenv_player": "person-" + "q" * 20}


def _ladder(sd: float = 10.0, **ratings: float) -> LadderRatings:
    """A ladder whose ratings are known exactly (intervals of width 0: no ladder uncertainty)."""
    levels = {name: LevelRating(r, r, r) for name, r in ratings.items()}
    return LadderRatings("standard", levels, sd, "2026-12-07", "test")


# ---------------------------------------------------------------------------- the arithmetic


def test_one_hand_gives_the_prior_interval_and_equal_hands_narrow_it() -> None:
    one = interval([7.0], prior_sd=10.0)
    assert (one.hands, one.mean) == (1, 7.0)
    assert one.high - 7.0 == pytest.approx(T_2 * 10.0) and 7.0 - one.low == pytest.approx(T_2 * 10.0)
    # Equal hands: no spread of their own, so only the prior's (pooled over PRIOR_DF + n - 1).
    four = interval([7.0] * 4, prior_sd=10.0)
    var = PRIOR_DF * 100.0 / (PRIOR_DF + 3)
    from scipy import stats

    assert four.high - 7.0 == pytest.approx(stats.t.ppf(0.975, PRIOR_DF + 3) * (var / 4) ** 0.5)
    assert four.high - four.low < one.high - one.low
    assert interval([], 10.0).mean is None


def test_a_person_who_plays_like_a_level_is_rated_at_that_level() -> None:
    """Against A (10) and C (20) the person always takes what B (-5) would: r_B - r_L a hand."""
    ladder = _ladder(A=10.0, B=-5.0, C=20.0)
    hands = [Hand("A", -15, 0.0)] * 3 + [Hand("C", -20, 5.0)] * 2  # -20 - 5 = r_B - r_C
    got = standing(hands, ladder)
    assert got["rating"] == pytest.approx(-5.0) and got["hands"] == 5
    assert got["between"] == ["B", "A"] and got["why"] is None
    assert got["levels"]["A"]["margin"] == pytest.approx(-15.0)
    assert got["levels"]["C"]["margin"] == pytest.approx(-25.0)
    assert got["low"] < -5.0 < got["high"]


def test_levels_count_by_their_hands_and_between_names_the_neighbours() -> None:
    ladder = _ladder(A=10.0, B=-5.0, C=20.0)
    hands = [Hand("A", 2, 0.0)] * 3 + [Hand("C", -1, 3.0)]  # estimates 12, 12, 12 and 16
    got = standing(hands, ladder)
    assert got["rating"] == pytest.approx(13.0)
    assert got["between"] == ["A", "C"]
    above = standing([Hand("C", 30, 0.0)], ladder)
    assert above["between"] == ["C", None]
    below = standing([Hand("B", -30, 0.0)], ladder)
    assert below["between"] == [None, "B"]


def test_the_ladders_own_uncertainty_widens_the_rating_only() -> None:
    sure = _ladder(A=10.0)
    unsure = LadderRatings("standard", {"A": LevelRating(10.0, 6.0, 14.0)}, 10.0, "d", "c")
    hands = [Hand("A", 1, 0.0), Hand("A", 3, 0.0)]
    a, b = standing(hands, sure), standing(hands, unsure)
    assert a["rating"] == b["rating"] == pytest.approx(12.0)
    assert b["high"] - b["low"] > a["high"] - a["low"]
    assert a["levels"] == b["levels"]


def test_no_ladder_run_gives_margins_only_and_says_why() -> None:
    got = standing([Hand("easy", 10, 4.0), Hand("easy", -2, -1.0)], None, "oklahoma")
    assert got["rating"] is None and got["between"] == [None, None]
    assert got["levels"]["easy"]["margin"] == pytest.approx(2.5)
    assert "no ladder run of the oklahoma preset" in got["why"]
    off = standing([Hand("greedy", 10, 0.0), Hand("A", 0, 0.0)], _ladder(A=3.0))
    assert off["rating"] == pytest.approx(3.0) and "greedy (not on the ladder)" in off["why"]
    assert off["levels"]["greedy"]["hands"] == 1


def test_the_shipped_ladder_rates_the_standard_preset_only() -> None:
    shipped = people.ladder_ratings("standard")
    assert shipped is not None and {"random", "easy", "normal", "master"} <= set(shipped.levels)
    assert shipped.levels["master"].rating > shipped.levels["random"].rating
    assert "ginenv ladder --config ladder" in shipped.command and shipped.hand_sd > 0
    assert people.ladder_ratings("oklahoma") is None


def test_the_history_is_the_standing_after_each_hand() -> None:
    ladder = _ladder(A=10.0, B=-5.0)
    hands = [Hand("A", 2, 0.0), Hand("B", 1, 3.0), Hand("A", 6, 0.0), Hand("A", 6, 0.0)]
    got = history(hands, ladder)
    assert [h["hands"] for h in got] == [1, 2, 3, 4]
    # After one hand: 10 + 2; after two: the mean of 12 and -5 + 1 - 3 = -7; after four: (12-7+16+16)/4.
    assert [h["rating"] for h in got] == pytest.approx([12.0, 2.5, 7.0, 9.25])
    assert got[0]["high"] - 12.0 == pytest.approx(T_2 * 10.0)
    for k, point in enumerate(got, 1):
        at = standing(hands[:k], ladder)
        assert (point["low"], point["high"]) == (at["low"], at["high"])
    # The interval tightens as hands come (these vary less than the prior's spread of 10).
    widths = [h["high"] - h["low"] for h in got]
    assert widths == sorted(widths, reverse=True) and widths[-1] < widths[0] / 3


def test_a_long_history_is_thinned_and_ends_at_the_rating() -> None:
    ladder = _ladder(A=0.0)
    rng = random.Random(4)
    hands = [Hand("A", rng.randint(-30, 30), rng.uniform(-5, 5)) for _ in range(250)]
    got = history(hands, ladder)
    counts = [h["hands"] for h in got]
    assert len(got) == HISTORY_POINTS and counts[0] == 1 and counts[-1] == 250
    assert all(0 < b - a <= 3 for a, b in itertools.pairwise(counts))  # 249 / 99 apart, about
    final = standing(hands, ladder)
    assert [got[-1][k] for k in ("rating", "low", "high")] == [final["rating"], final["low"], final["high"]]
    assert history_counts(3) == [1, 2, 3] and history_counts(0) == []
    assert history_counts(10, points=4) == [1, 4, 7, 10]
    with pytest.raises(ValueError, match="at least 2 points, got 1"):
        history_counts(10, points=1)


def test_the_history_leaves_out_counts_without_a_rating() -> None:
    ladder = _ladder(A=3.0)
    got = history([Hand("greedy", 5, 0.0), Hand("A", 1, 0.0), Hand("greedy", 2, 0.0)], ladder)
    assert [(h["hands"], h["rating"]) for h in got] == [(2, 4.0), (3, 4.0)]
    assert history([Hand("easy", 10, 4.0)], None, "oklahoma") == []
    assert history([], ladder) == []


# ---------------------------------------------------------------------------- the server


def app_at(tmp_path: Path, **kwargs: Any) -> Any:
    kwargs.setdefault("pace_ms", 0)
    return create_app(replay_dir=tmp_path / "replays", state_dir=tmp_path / "tables", **kwargs)


def _rows(app: Any) -> list[tuple[Any, ...]]:
    return app.state.store.db.read("SELECT person, opponent, preset, points, luck FROM hands ORDER BY rowid")


def _to_showdown(c: TestClient, view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    for _ in range(500):
        if view["stage"] != "play":
            return view
        view = step(c, view, rng)
    raise AssertionError("the hand did not end")


def test_every_finished_hand_is_recorded_with_its_move(tmp_path: Path, monkeypatch: Any) -> None:
    app = app_at(tmp_path)
    store = app.state.store
    with TestClient(app, cookies=COOKIE) as c:
        view = c.post("/api/games", json={"opponent": "random", "seed": 3}).json()
        done = finish(c, view, random.Random(1))
        table = store.loaded[view["id"]].table
        rows = _rows(app)
        assert len(rows) == len(table.match.records) >= 1
        assert {r[:3] for r in rows} == {(COOKIE["ginenv_player"], "random", "standard")}
        # The luck is the person's (seat 0) of each finished hand, as the harness computes it.
        lucks = [state_luck(state) for state in table.game.record.states]
        assert [r[4] for r in rows] == pytest.approx(lucks)
        # The points are the person's: + for a hand they won, - for one they lost, 0 for neither.
        signed = [
            0 if h.result.winner is None else h.result.points * (1 if h.result.winner == 0 else -1)
            for h in table.match.records
        ]
        assert done["stage"] == "over" and [r[3] for r in rows] == signed and any(signed)
        # A move whose hand could not be recorded is not saved either: one transaction.
        view = c.post("/api/games", json={"opponent": "random", "seed": 4}).json()

        def fail(*args: Any) -> int:
            raise sqlite3.OperationalError("disk I/O error")

        monkeypatch.setattr("ginenv.experiments.play.store.record_hands", fail)
        before = len(_rows(app))
        with pytest.raises(sqlite3.OperationalError):
            _to_showdown(c, view, random.Random(2))
        ((moves,),) = store.db.read("SELECT moves FROM tables WHERE id = ?", (view["id"],))
        slot_moves = sum(1 for m in store.loaded[view["id"]].table.log if m[0] in (0, 1))
        assert moves == slot_moves - 1 and len(_rows(app)) == before
    # A rebuilt table records none of the hands it replays again.
    again = app_at(tmp_path)
    with TestClient(again, cookies=COOKIE) as c:
        c.get(f"/api/games/{view['id']}")
        assert len(_rows(again)) == before


def test_a_game_without_a_cookie_records_under_the_cookie_it_sets(tmp_path: Path) -> None:
    app = app_at(tmp_path)
    with TestClient(app) as c:
        view = c.post("/api/games", json={"opponent": "random", "seed": 5}).json()
        assert _to_showdown(c, view, random.Random(0))["stage"] in ("showdown", "over")
        person = c.cookies.get("ginenv_player")
        assert person and [r[0] for r in _rows(app)] == [person]


def test_friend_tables_are_not_recorded(tmp_path: Path) -> None:
    app = app_at(tmp_path)
    with TestClient(app, cookies=COOKIE) as c:
        host = c.post("/api/friends", json={"name": "Alice"}).json()
        invite = host["view"]["invite"].split("=", 1)[1]
        guest = c.post("/api/friends/join", json={"invite": invite, "name": "Bob"}).json()
        seats = [host["seat"], guest["seat"]]
        for _ in range(500):
            views = [c.get(f"/api/seats/{s}").json() for s in seats]
            if views[0]["stage"] != "play":
                break
            mover = 0 if views[0]["turn"] == "you" else 1
            legal = views[mover]["legal"]
            knocks = [a for a in legal if a.startswith("knock")]
            hints = views[mover]["discard_hints"]
            action = knocks[0] if knocks else f"discard {min(hints, key=hints.get)}" if hints else legal[0]
            assert c.post(f"/api/seats/{seats[mover]}/action", json={"action": action}).status_code == 200
        assert views[0]["stage"] in ("showdown", "over")
    assert _rows(app) == []


def test_me_after_hands_against_two_levels_then_forget_me(tmp_path: Path, monkeypatch: Any) -> None:
    ladder = _ladder(sd=30.0, random=-40.0, easy=-10.0, normal=0.0)
    monkeypatch.setattr(people, "ladder_ratings", lambda preset: ladder if preset == "standard" else None)
    app = app_at(tmp_path)
    with TestClient(app, cookies=COOKIE) as c:
        assert c.get("/api/me").json()["hands"] == 0
        for opponent, seed in (("random", 6), ("easy", 7)):
            view = c.post("/api/games", json={"opponent": opponent, "seed": seed}).json()
            _to_showdown(c, view, random.Random(seed))
        me = c.get("/api/me").json()
        rows = _rows(app)
        assert me["hands"] == len(rows) == 2 and set(me["levels"]) == {"random", "easy"}
        expected = sum({"random": -40.0, "easy": -10.0}[o] + p - luck for _, o, _, p, luck in rows) / 2
        assert me["rating"] == pytest.approx(expected) and me["low"] < expected < me["high"]
        assert me["levels"]["easy"]["hands"] == 1
        # What the page's plot needs: the rating after each hand, and the ladder's levels.
        assert [h["hands"] for h in me["history"]] == [1, 2]
        first = sum({"random": -40.0}[o] + p - luck for _, o, _, p, luck in rows[:1])
        assert me["history"][0]["rating"] == pytest.approx(first)
        last = me["history"][1]
        assert [last["rating"], last["low"], last["high"]] == [me["rating"], me["low"], me["high"]]
        assert me["ladder"] == {"random": -40.0, "easy": -10.0, "normal": 0.0}
        other = c.get("/api/me", params={"preset": "oklahoma"}).json()
        assert other["hands"] == 0 and other["rating"] is None and "no ladder run" in other["why"]
        assert (other["history"], other["ladder"]) == ([], None)
        assert c.get("/api/me", params={"preset": "nope"}).status_code == 400
    # DELETE through the served app and its guards, as the page sends it.
    server = serve_in_background(app)
    try:
        with page_client(server.url, cookies=COOKIE) as api:
            foreign = api.request("DELETE", "/api/me", json={}, headers={"Origin": "https://evil.example"})
            assert foreign.status_code == 403 and len(_rows(app)) == 2
            r = api.request("DELETE", "/api/me", json={})
            assert r.status_code == 200, r.text
            assert r.json()["removed"] == {"hands": 2, "daily": 0, "tables": 2}
            assert 'ginenv_player=""' in r.headers["set-cookie"]  # cleared: the next game is a new person
            assert _rows(app) == [] and api.get("/api/replays").status_code == 200
            api.cookies.set("ginenv_player", COOKIE["ginenv_player"])
            me = api.get("/api/me").json()
            assert (me["hands"], me["rating"], me["levels"], me["history"]) == (0, None, {}, [])
    finally:
        server.stop()
    assert app.state.store.db.read("SELECT count(*) FROM tables WHERE person IS NOT NULL") == [(0,)]


def test_a_version_2_database_is_upgraded_to_record_hands(tmp_path: Path) -> None:
    folder = tmp_path / "tables"
    folder.mkdir(mode=0o700)
    Database(folder / DB_FILE).close()
    with sqlite3.connect(folder / DB_FILE) as db:  # the file as version 2 left it
        db.execute("DROP TABLE hands")
        db.execute("PRAGMA user_version = 2")
    app = app_at(tmp_path)
    ((version,),) = app.state.store.db.read("PRAGMA user_version")
    assert version == SCHEMA_VERSION == 3
    with TestClient(app, cookies=COOKIE) as c:
        view = c.post("/api/games", json={"opponent": "random", "seed": 9}).json()
        _to_showdown(c, view, random.Random(0))
    assert len(_rows(app)) == 1
    index = app.state.store.db.read(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'hands'"
    )
    assert index == [("hands_by_person",)]
