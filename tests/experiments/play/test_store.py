"""Tables that are not lost (experiments/play/store.py and the server around it).

A reload, an idle spell, a memory limit or a restarted server returns to the same match; fast
creations are refused rather than dropping a live match; the game of the day is one match per
person and day whose deals stay hidden until it is over; request bodies are capped; and neither
tokens nor match ids reach the server's log.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import random
import sqlite3
import stat
import subprocess
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from ginenv.experiments.eval.harness import make_agent as harness_make_agent
from ginenv.experiments.play.db import DB_FILE
from ginenv.experiments.play.presets import rules_line
from ginenv.experiments.play.server import create_app, save_open_games, serve_in_background
from ginenv.experiments.play.store import (
    ABANDONED_AFTER,
    EMPTY_AFTER,
    FINISHED_AFTER,
    LIVE_FOR,
    RateLimit,
    TableStore,
    client_address,
)
from ginenv.experiments.play.table import PlayError, Table
from ginenv.experiments.play.words import excerpt, points
from play.moves import both_move, finish, step
from play.serving import friend_table, page_client, play_server, small_store, stop

from ginenv.rules import PRESETS

DAY = dt.date(2026, 12, 1)


def app_at(tmp_path: Path, **kwargs: Any) -> Any:
    kwargs.setdefault("pace_ms", 0)
    return create_app(replay_dir=tmp_path / "replays", state_dir=tmp_path / "tables", **kwargs)


# ---------------------------------------------------------------------------- memory and disk


def test_80_fast_creations_drop_no_live_match_and_are_rate_limited(tmp_path: Path) -> None:
    with TestClient(app_at(tmp_path)) as c:
        live = c.post("/api/games", json={"opponent": "random", "seed": 8}).json()
        live = step(c, live, random.Random(0))
        codes = [c.post("/api/games", json={"opponent": "random"}).status_code for _ in range(80)]
        assert codes.count(201) == 9 and codes.count(429) == 71
        r = c.post("/api/games", json={})
        assert r.status_code == 429 and "at most 10 in 60 s" in r.json()["error"]
        assert c.post("/api/friends", json={"name": "A"}).status_code == 429  # one limit for both kinds
        assert c.get(f"/api/games/{live['id']}").json() == live


def test_tables_beyond_the_memory_limit_wait_on_disk_and_come_back(tmp_path: Path) -> None:
    app = app_at(tmp_path, max_games=3, create_per_minute=1000)
    rng = random.Random(1)
    with TestClient(app) as c:
        views = []
        for seed in range(30):
            view = c.post("/api/games", json={"opponent": "random", "seed": seed}).json()
            for _ in range(seed % 5):
                view = step(c, view, rng)
            views.append(view)
        assert len(app.state.tables) <= 3 and len(app.state.store) == 30
        for view in views:
            assert c.get(f"/api/games/{view['id']}").json() == view
        # A table comes back where it was and goes on from there.
        again = step(c, c.get(f"/api/games/{views[0]['id']}").json(), rng)
        assert again["events"] != views[0]["events"] or again["stage"] != views[0]["stage"]
    assert _rows(tmp_path, "SELECT count(*) FROM tables") == [(30,)]
    assert stat.S_IMODE((tmp_path / "tables").stat().st_mode) == 0o700
    files = list((tmp_path / "tables").iterdir())
    assert {f.name for f in files} >= {DB_FILE, f"{DB_FILE}-wal"}
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)


def _rows(tmp_path: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """Rows of the state folder's database, read by another connection (as a restart would)."""
    with contextlib.closing(sqlite3.connect(tmp_path / "tables" / DB_FILE)) as db, db:
        return db.execute(sql, args).fetchall()


@pytest.mark.parametrize("opponent", ["normal", "master", "neural"])
def test_a_restarted_server_resumes_a_match_and_the_computer_answers_the_same(
    tmp_path: Path, opponent: str
) -> None:
    rng = random.Random(opponent)
    with TestClient(app_at(tmp_path)) as c:
        view = c.post("/api/games", json={"opponent": opponent, "preset": "seed000_short", "seed": 4}).json()
        computer_moves = 0
        while computer_moves < 25 and view["stage"] != "over":
            computer_moves += view["turn"] == "opponent"
            view = step(c, view, rng)
    app = app_at(tmp_path)  # a new server on the same state folder
    assert len(app.state.store) == 1 and not app.state.tables
    with TestClient(app) as c:
        assert c.get(f"/api/games/{view['id']}").json() == view
        table: Table = app.state.tables[view["id"]].table
        # The recorded moves are replayed, and the reseeded computer chose every one of them again.
        assert table.restore_mismatches == 0 and computer_moves >= 10
        finish(c, view, rng)


def test_a_restarted_server_resumes_a_friend_table_through_the_same_links(tmp_path: Path) -> None:
    with TestClient(app_at(tmp_path)) as c:
        host = c.post("/api/friends", json={"name": "Alice", "target": 40}).json()
        invite = host["view"]["invite"].removeprefix("/#join=")
        guest = c.post("/api/friends/join", json={"invite": invite, "name": "Bob"}).json()
        seats = [host["seat"], guest["seat"]]
        for _ in range(6):
            views = [c.get(f"/api/seats/{t}").json() for t in seats]
            mover = 0 if views[0]["turn"] == "you" else 1
            c.post(f"/api/seats/{seats[mover]}/action", json={"action": views[mover]["legal"][0]})
        before = [c.get(f"/api/seats/{t}").json() for t in seats]
    with TestClient(app_at(tmp_path)) as c:
        after = [c.get(f"/api/seats/{t}").json() for t in seats]
        presence = ("opponent", "players", "waiting_for", "version")
        for b, a in zip(before, after, strict=True):
            assert {k: v for k, v in a.items() if k not in presence} == {
                k: v for k, v in b.items() if k not in presence
            }
        assert all(a["version"] == b["version"] for a, b in zip(after, before, strict=True))
        r = c.post("/api/friends/join", json={"invite": invite, "name": "Eve"})
        assert r.status_code == 409  # the invitation stays used


def test_only_abandoned_tables_expire(tmp_path: Path) -> None:
    now = [1_000_000.0]
    app = app_at(tmp_path, clock=lambda: now[0], create_per_minute=100)
    rng = random.Random(2)
    with TestClient(app) as c:
        old = step(c, c.post("/api/games", json={"opponent": "random", "seed": 1}).json(), rng)
        done = finish(
            c, c.post("/api/games", json={"opponent": "greedy", "preset": "seed000_short"}).json(), rng
        )
        now[0] += FINISHED_AFTER + 60
        assert app.state.store.expire() == 1  # the finished match, a day on
        kept = c.post("/api/games", json={"opponent": "random", "seed": 2}).json()
        assert c.get(f"/api/games/{done['id']}").status_code == 404
        assert c.get(f"/api/games/{old['id']}").status_code == 200  # touched just now
        now[0] += ABANDONED_AFTER - 120
        assert c.get(f"/api/games/{kept['id']}").status_code == 200
        now[0] += 300
        assert app.state.store.expire() == 1  # `old`, untouched for 7 days
        assert c.get(f"/api/games/{old['id']}").status_code == 404
        assert c.get(f"/api/games/{kept['id']}").status_code == 200


def test_a_broken_table_is_answered_clearly(tmp_path: Path) -> None:
    with TestClient(app_at(tmp_path)) as c:
        gid = c.post("/api/games", json={"opponent": "random", "seed": 3}).json()["id"]
    ((text,),) = _rows(tmp_path, "SELECT record FROM tables WHERE id = ?", gid)
    data = json.loads(text)
    data["moves"] = [[0, "knock As"]]
    _rows(tmp_path, "UPDATE tables SET record = ? WHERE id = ?", json.dumps(data), gid)
    app = app_at(tmp_path)
    with TestClient(app) as c:
        r = c.get(f"/api/games/{gid}")
        assert r.status_code == 410 and "could not be resumed" in r.json()["error"]


def test_a_json_state_folder_is_imported_once_and_a_live_match_stays_unpublished(tmp_path: Path) -> None:
    rng = random.Random(5)
    fast = lambda name, rules: harness_make_agent("greedy", rules=rules)  # noqa: E731
    old = tmp_path / "old"
    with TestClient(app_at(old, make_agent=fast)) as c:
        done = finish(c, c.post("/api/games", json={"preset": "seed000_short", "seed": 1}).json(), rng)
        live = c.post("/api/games", json={"seed": 2}).json()
        for _ in range(4):
            live = step(c, live, rng)
        host = c.post("/api/friends", json={"name": "Alice"}).json()
        (stopped,) = save_open_games(c.app)  # type: ignore[attr-defined]
    # The same tables as the JSON store kept them: a file per table, daily.json, the replay files.
    state, replays = tmp_path / "tables", tmp_path / "replays"
    state.mkdir()
    replays.mkdir()
    rows = _rows(old, "SELECT id, record, invite_used, touched FROM tables")
    for table_id, record, used, touched in rows:
        tokens = dict(_rows(old, "SELECT role, token FROM seats WHERE table_id = ?", table_id))
        keys = {"tokens": tokens, "invite_used": bool(used), "person": None, "touched": touched}
        data = {"format": "ginenv-play-table", "table": json.loads(record), "store": keys}
        (state / f"{table_id}.json").write_text(json.dumps(data))
    today = dt.date.today().isoformat()
    daily = {"people": {"p" * 20: {today: {"table": live["id"], "finished": True}}}}
    (state / "daily.json").write_text(json.dumps(daily))
    (state / "garbage0123.json").write_text("{not json")
    for name in (done["replay"], stopped):
        (replays / name).write_bytes((old / "replays" / name).read_bytes())
    # A copy of the live match under another name (the crash of the issue left such files).
    tag = json.loads(dict((r[0], r[1]) for r in rows)[live["id"]])["tag"]
    (replays / f"2026-01-01T000000-you-vs-greedy-{tag}.json").write_bytes((replays / stopped).read_bytes())

    app = app_at(tmp_path, make_agent=fast)
    assert app.state.store.skipped == 1 and len(app.state.store) == 3
    with TestClient(app, cookies={"ginenv_player": "p" * 20}) as c:
        assert [r["name"] for r in c.get("/api/replays").json()["replays"]] == [done["replay"]]
        for name in [stopped, f"2026-01-01T000000-you-vs-greedy-{tag}.json"]:
            assert c.get(f"/api/replays/{name}").status_code == 404
        assert {**c.get(f"/api/games/{live['id']}").json(), "replay": None} == {**live, "replay": None}
        assert c.get(f"/api/seats/{host['seat']}").json()["you"]["name"] == "Alice"
        assert c.post("/api/games", json={"daily": True}).status_code == 409  # daily.json came along
    assert sorted(p.name for p in state.glob("*.json")) == ["garbage0123.json"]  # left where it was
    assert len(list((state / "imported-json").glob("*.json"))) == 4
    # Once: files put back later are not read again.
    (state / "imported-json" / f"{live['id']}.json").rename(state / f"{live['id']}.json")
    app_at(tmp_path, make_agent=fast).state.store.remove(live["id"])
    assert len(app_at(tmp_path, make_agent=fast).state.store) == 2


def test_the_server_secret_is_kept_and_differs_between_servers(tmp_path: Path) -> None:
    first = app_at(tmp_path).state.store.server_secret
    assert isinstance(first, bytes) and len(first) == 32
    assert app_at(tmp_path).state.store.server_secret == first
    assert app_at(tmp_path / "other").state.store.server_secret != first


# ---------------------------------------------------------------------------- fair shares


def seat_moves_in(store: TableStore, table_id: str) -> None:
    """Each seat of a joined friend table makes a move (straight through the store)."""
    moved: set[int] = set()
    while len(moved) < 2:
        with store.use(table_id) as slot:
            seat = slot.table.env.hand.player
            slot.table.act(slot.table.view(seat, (True, True))["legal"][0], seat)
            moved.add(seat)


def test_each_address_and_each_block_keeps_its_share_of_tables(tmp_path: Path) -> None:
    now = [1_000_000.0]
    store = small_store(tmp_path, per_address=3, per_block=5, clock=lambda: now[0])
    tables = [store.add(friend_table(), client="127.0.0.1") for _ in range(3)]
    with pytest.raises(PlayError) as err:
        store.add(friend_table(), client="::ffff:127.0.0.1")  # the same client through an IPv6 socket
    assert err.value.status == 429 and str(err.value) == (
        "this address holds 3 tables, its limit: finish or leave one, "
        "or wait until 1970-01-13 13:46 UTC (in 24 h) when its oldest expires"
    )
    store.add(friend_table(), client="127.0.0.2")
    store.add(friend_table(), client="127.0.0.3")
    with pytest.raises(PlayError) as err:
        store.add(friend_table(), client="127.0.0.4")
    assert str(err.value).startswith("the addresses of 127.0.0.0/24 hold 5 tables, their limit: finish")
    store.add(friend_table(), client="127.0.1.4")  # another block
    store.add(friend_table(), client="testclient")  # not an IP address: nobody's share
    store.remove(tables[0].id)  # leaving one frees its place
    store.add(friend_table(), client="127.0.0.1")
    assert client_address("2001:db8:0:ff::1")[1] == client_address("2001:db8::7")[1] == "2001:db8::/56"
    assert client_address("2001:db8:0:100::1")[1] == "2001:db8:0:100::/56"
    assert client_address("::ffff:10.1.2.3") == ("10.1.2.3", "10.1.2.0/24")


def test_a_flood_from_many_addresses_makes_room_from_idle_tables_never_from_live_ones(
    tmp_path: Path,
) -> None:
    now = [1_000_000.0]
    app = app_at(tmp_path, create_per_minute=10_000, today=lambda: DAY, clock=lambda: now[0])
    store = app.state.store
    store.max_tables = 30
    rng = random.Random(6)
    me = TestClient(app, client=("192.0.2.7", 5000))
    idle = me.post("/api/games", json={"opponent": "random", "seed": 1}).json()
    for _ in range(3):
        idle = step(me, idle, rng)
    now[0] += LIVE_FOR + 1  # a match nobody moved at for a while: idle, but it has moves
    live = step(me, me.post("/api/games", json={"opponent": "random", "seed": 2}).json(), rng)
    host = me.post("/api/friends", json={"name": "Alice"}).json()
    invite = host["view"]["invite"].removeprefix("/#join=")
    guest = me.post("/api/friends/join", json={"invite": invite, "name": "Bob"}).json()
    both_move(me, [host["seat"], guest["seat"]], rng)  # both seats play: a live match
    # The flood: many addresses of 127/8, each up to its share, far beyond the server's room.
    codes = []
    for i in range(12):
        flood = TestClient(app, client=(f"127.{i}.{i % 7}.{i % 5 + 1}", 40000))
        codes += [flood.post("/api/friends", json={"name": "F"}).status_code for _ in range(21)]
    assert codes.count(201) == 12 * 20 and codes.count(429) == 12 and len(store) == 30
    # Nothing of mine was dropped: the tables without a move went first.
    assert me.get(f"/api/games/{live['id']}").json()["events"] == live["events"]
    assert me.get(f"/api/games/{idle['id']}").status_code == 200
    assert me.get(f"/api/seats/{host['seat']}").status_code == 200
    # And creating still works, of every kind.
    assert me.post("/api/friends", json={"name": "Carol"}).status_code == 201
    assert me.post("/api/games", json={"opponent": "random"}).status_code == 201
    assert me.post("/api/games", json={"daily": True}).status_code == 201


def test_a_game_of_the_day_dropped_for_room_counts_as_played(tmp_path: Path) -> None:
    app = app_at(tmp_path, today=lambda: DAY)
    with TestClient(app) as me:
        view = step(me, me.post("/api/games", json={"daily": True}).json(), random.Random(8))
        app.state.store.remove(view["id"])  # as a full server drops an idle table
        assert me.post("/api/games", json={"daily": True}).status_code == 409
        assert me.get("/api/replays").json()["replays"] == []  # its day is not over
    with TestClient(app_at(tmp_path, today=lambda: DAY + dt.timedelta(days=1))) as later:
        listed = [r["name"] for r in later.get("/api/replays").json()["replays"]]
        assert len(listed) == 1 and "-you-vs-normal-daily-2026-12-01-" in listed[0]  # it ended, abandoned


def test_a_full_server_of_live_tables_refuses_and_says_when_to_come_back(tmp_path: Path) -> None:
    now = [1_000_000.0]
    store = small_store(tmp_path, max_tables=2, clock=lambda: now[0])
    for _ in range(2):
        entry = store.add(friend_table())
        with store.use(entry.id) as slot:
            slot.table.join("Guest")
        seat_moves_in(store, entry.id)  # both seats move: the table is live for LIVE_FOR
    with pytest.raises(PlayError) as err:
        store.add(friend_table())
    assert err.value.status == 503 and str(err.value) == (
        "this server holds 2 tables, its limit, and every one is in play (each person at it made a "
        "move in the last 10 min): try again at 1970-01-12 13:56 UTC (in 10 min)"
    )
    now[0] += LIVE_FOR + 1
    store.add(friend_table())  # one went idle and makes room
    assert len(store) == 2 and EMPTY_AFTER <= ABANDONED_AFTER


def test_spectators_never_keep_a_seat_from_its_own_stream(tmp_path: Path) -> None:
    store = small_store(tmp_path)
    table = store.add(friend_table()).id
    watching = [store.open_stream(table, None) for _ in range(12)]
    for _ in range(4):  # the 16 spectator streams: the last ones wait
        with pytest.raises(PlayError) as err:
            store.open_stream(table, None)
        assert err.value.status == 429 and "12 spectators, its limit" in str(err.value)
    seat0 = [store.open_stream(table, 0) for _ in range(4)]
    store.open_stream(table, 1)  # both seats see their table
    with pytest.raises(PlayError) as err:
        store.open_stream(table, 0)  # but one seat's reloads cannot grow for ever
    assert str(err.value) == "this seat has 4 pages open on its table, its limit: close one of them"
    store.close_stream(seat0[0], 0)
    store.close_stream(watching[0], None)
    store.open_stream(table, 0)
    store.open_stream(table, None)


def test_sixteen_spectator_streams_leave_both_seats_theirs(tmp_path: Path) -> None:
    srv = serve_in_background(app_at(tmp_path))
    try:
        with page_client(srv.url, timeout=10) as api, contextlib.ExitStack() as open_streams:
            host = api.post("/api/friends", json={"name": "Alice"}).json()
            invite = host["view"]["invite"].removeprefix("/#join=")
            guest = api.post("/api/friends/join", json={"invite": invite, "name": "Bob"}).json()
            watch = host["view"]["watch"].removeprefix("/#watch=")

            def stream(path: str) -> int:
                r = open_streams.enter_context(api.stream("GET", path))
                return r.status_code

            codes = [stream(f"/api/watch/{watch}/stream") for _ in range(16)]
            assert codes == [200] * 12 + [429] * 4
            for seat in (host["seat"], guest["seat"]):
                r = open_streams.enter_context(api.stream("GET", f"/api/seats/{seat}/stream"))
                assert r.status_code == 200 and next(r.iter_lines()).startswith("event: view")
    finally:
        srv.stop()


# ---------------------------------------------------------------------------- the game of the day


def test_the_game_of_the_day_is_one_match_per_person_and_its_deals_stay_hidden(tmp_path: Path) -> None:
    app = app_at(tmp_path, today=lambda: DAY)
    with TestClient(app) as me, TestClient(app) as other:
        first = me.post("/api/games", json={"daily": True})
        assert first.status_code == 201 and "ginenv_player" in first.cookies
        assert "httponly" in first.headers["set-cookie"].lower()
        view = step(me, first.json(), random.Random(3))
        again = me.post("/api/games", json={"daily": True})
        assert again.status_code == 200 and again.json() == view  # coming back resumes it
        theirs = other.post("/api/games", json={"daily": True}).json()
        assert theirs["id"] != view["id"] and theirs["daily"] == "2026-12-01"
        assert (
            theirs["hand"] == first.json()["hand"] and theirs["discard_pile"] == first.json()["discard_pile"]
        )
        # The day's number as a seed deals other cards.
        seeded = me.post("/api/games", json={"seed": 20261201, "opponent": "normal"}).json()
        assert seeded["hand"] != theirs["hand"]
        # The server stops: the unfinished match's replay is written, and hidden while it goes on.
        saved = save_open_games(app)
        name = me.get(f"/api/games/{view['id']}").json()["replay"]
        assert name in saved and "-you-vs-normal-daily-2026-12-01-" in name
        listed = [r["name"] for r in me.get("/api/replays").json()["replays"]]
        assert name not in listed and me.get(f"/api/replays/{name}").status_code == 404
        # Leaving plays it: it cannot be started again, and its replay (the deck everyone is dealt
        # today) opens to nobody, its player included, before the day is over.
        assert me.delete(f"/api/games/{view['id']}").json()["replay"] == name
        r = me.post("/api/games", json={"daily": True})
        assert r.status_code == 409 and r.json()["error"] == (
            "you played today's game; its replay opens in Replays once the day is over "
            "(its deals are everyone's today)"
        )
        for client in (me, other):
            assert name not in [x["name"] for x in client.get("/api/replays").json()["replays"]]
            assert client.get(f"/api/replays/{name}").status_code == 404
    # The next day, it is a replay like any other.
    with TestClient(app_at(tmp_path, today=lambda: DAY + dt.timedelta(days=1))) as later:
        assert name in [x["name"] for x in later.get("/api/replays").json()["replays"]]
        assert later.get(f"/api/replays/{name}").json()["hands"][0]["frames"]


def test_a_finished_game_of_the_day_cannot_be_started_again(tmp_path: Path) -> None:
    fast = lambda name, rules: harness_make_agent("greedy", rules=rules)  # noqa: E731
    app = app_at(tmp_path, today=lambda: DAY, make_agent=fast)
    with TestClient(app) as c:
        view = finish(c, c.post("/api/games", json={"daily": True}).json(), random.Random(4))
        assert view["daily"] == "2026-12-01" and view["replay"]
        r = c.post("/api/games", json={"daily": True})
        assert r.status_code == 409 and "you played today's game" in r.json()["error"]
        assert view["replay"] not in [x["name"] for x in c.get("/api/replays").json()["replays"]]
        # Its export, like every file the server writes, is 0600 in a 0700 folder.
        assert stat.S_IMODE((tmp_path / "replays" / view["replay"]).stat().st_mode) == 0o600
        assert stat.S_IMODE((tmp_path / "replays").stat().st_mode) == 0o700
    # The server remembers it across a restart.
    with TestClient(app_at(tmp_path, today=lambda: DAY, make_agent=fast), cookies=app_cookie(app)) as c:
        assert c.post("/api/games", json={"daily": True}).status_code == 409


def app_cookie(app: Any) -> dict[str, str]:
    """The person of the only game of the day an app's store knows."""
    ((person,),) = app.state.store.db.read("SELECT person FROM daily")
    return {"ginenv_player": person}


# ---------------------------------------------------------------------------- limits and words


def test_request_bodies_are_capped_and_errors_quote_only_an_excerpt(tmp_path: Path) -> None:
    with TestClient(app_at(tmp_path)) as c:
        huge = json.dumps({"opponent": "x" * 20_000_000}).encode()
        for path in ("/api/games", "/api/friends", "/api/friends/join", "/api/seats/abc/action"):
            r = c.post(path, content=huge, headers={"content-type": "application/json"})
            assert r.status_code == 413 and len(r.content) < 200, path
            assert r.json()["error"].startswith("a request body may hold at most 16384 bytes")

        def chunks() -> Any:  # no Content-Length: the body is cut off at the limit
            for _ in range(100):
                yield b"x" * 1000

        r = c.post("/api/games", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413
        big = "y" * 15_000
        for path, body in [
            ("/api/games", {"opponent": big}),
            ("/api/games", {"preset": big}),
            ("/api/games", {big: 1}),
            ("/api/friends", {"name": big}),
            ("/api/friends", {"name": "A", "preset": big}),
        ]:
            r = c.post(path, json=body)
            assert r.status_code == 400 and len(r.json()["error"]) < 300, (path, r.json()["error"][:100])
        gid = c.post("/api/games", json={"opponent": "random"}).json()["id"]
        r = c.post(f"/api/games/{gid}/action", json={"action": big})
        assert r.status_code == 400 and len(r.json()["error"]) < 300
        r = c.get("/api/" + "z" * 8000)
        assert r.status_code == 404 and len(r.json()["error"]) < 200
    assert excerpt("a" * 1000).endswith("…") and len(excerpt("a" * 1000)) <= 62


def test_the_rate_limit_counts_per_address_and_forgets() -> None:
    now = [0.0]
    limit = RateLimit(3, 60, clock=lambda: now[0])
    for _ in range(3):
        limit.check("a")
    with pytest.raises(PlayError) as err:
        limit.check("a")
    assert err.value.status == 429 and "try again in 60 s" in str(err.value)
    limit.check("b")
    now[0] = 60.5
    limit.check("a")


def test_the_table_carries_its_rules_in_words_and_points_are_counted_right() -> None:
    assert rules_line("standard", PRESETS["standard"]) == (
        "Standard rules: knock with 10 or less, gin 25, undercut 25, match to 100"
    )
    assert rules_line("seed004", PRESETS["seed004"]) == (
        "Online rules: knock with 10 or less, gin 25, undercut 20, big gin 31, "
        "the card just taken may be discarded again, match to 100"
    )
    assert points(1) == "1 point" and points(0) == "0 points" and points(25) == "25 points"


# ---------------------------------------------------------------------------- the command


def _server(tmp_path: Path) -> AbstractContextManager[tuple[subprocess.Popen[str], str]]:
    return play_server(
        *("--replay-dir", str(tmp_path / "replays"), "--state-dir", str(tmp_path / "tables")),
        *("--opponent", "random", "--pace-ms", "0"),
    )


def test_sigterm_saves_the_tables_a_restart_resumes_them_and_no_key_is_logged(tmp_path: Path) -> None:
    keys: list[str] = []
    with _server(tmp_path) as (proc, url):
        api = page_client(url, timeout=10)
        game = api.post("/api/games", json={"seed": 6}).json()
        move = "action" if game["turn"] == "you" else "advance"
        game = api.post(f"/api/games/{game['id']}/{move}", json={"action": "pass"}).json()
        host = api.post("/api/friends", json={"name": "Alice"}).json()
        invite = host["view"]["invite"].removeprefix("/#join=")
        watch = host["view"]["watch"].removeprefix("/#watch=")
        guest = api.post("/api/friends/join", json={"invite": invite, "name": "Bob"}).json()
        keys = [game["id"], host["seat"], guest["seat"], invite, watch]
        seat = api.get(f"/api/seats/{guest['seat']}").json()
        with api.stream("GET", f"/api/seats/{host['seat']}/stream") as s:
            assert next(s.iter_lines()).startswith("event: view")
        api.get(f"/api/seats/{host['seat']}/bogus")  # a 404 that names the key in its path
        api.post(f"/api/seats/{host['seat']}/action", json={"action": "nonsense"})
        api.get(f"/api/watch/{watch}")
        out = stop(proc)
    assert "1 unfinished match(es) saved" in out
    for key in keys:
        assert key not in out
    assert _rows(tmp_path, "SELECT count(*) FROM tables") == [(2,)]
    # A new server on the same folder resumes both tables.
    with _server(tmp_path) as (proc, url):
        assert "2 table(s) kept in" in (proc.stdout.readline() if proc.stdout else "")
        api = page_client(url, timeout=30)
        resumed = api.get(f"/api/games/{game['id']}").json()
        assert (
            resumed["replay"] and (tmp_path / "replays" / resumed["replay"]).is_file()
        )  # written at the stop
        assert {**resumed, "replay": None} == game
        assert api.get(f"/api/seats/{guest['seat']}").json()["hand"] == seat["hand"]
        out = stop(proc)
    for key in keys:
        assert key not in out


def test_listening_beyond_this_machine_warns_that_only_an_invitation_gives_a_seat(tmp_path: Path) -> None:
    options = ("--host", "0.0.0.0", "--replay-dir", str(tmp_path / "r"), "--state-dir", str(tmp_path / "t"))
    with play_server(*options) as (proc, _url):
        assert proc.stdout is not None
        warning = proc.stdout.readline()
        assert "warning: listening on 0.0.0.0: anyone on this network can reach the page" in warning
        assert "only an invitation link gives a seat" in warning
        stop(proc)
