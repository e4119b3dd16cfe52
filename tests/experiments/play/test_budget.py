"""The play server's table budget (experiments/play/budget.py and the store's use of it).

No client exhausts the tables: each address, block (/24, /56) and network (/16, /48) keeps its
share; a table is live only while both its seats move, so tables an adversary joins and leaves
open make room; the index is SQL on indexed columns, so 100,000 stored tables are counted right
without memory per table; an older database is upgraded as it opens.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from ginenv.experiments.play.budget import LIVE_FOR, client_shares
from ginenv.experiments.play.db import DB_FILE, SCHEMA_VERSION, table_row
from ginenv.experiments.play.server import create_app
from ginenv.experiments.play.store import TableStore
from ginenv.experiments.play.table import PlayError
from play.moves import both_move, step
from play.serving import friend_table, small_store

NOW = 1_000_000.0
# The tables table as version 1 of the schema made it (before networks and seats' last moves).
_SCHEMA_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE tables (
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, record TEXT NOT NULL, over INTEGER NOT NULL DEFAULT 0,
    joined INTEGER NOT NULL DEFAULT 1, moves INTEGER NOT NULL DEFAULT 0, replay TEXT, tag TEXT,
    person TEXT, daily TEXT, invite_used INTEGER NOT NULL DEFAULT 0, client TEXT, block TEXT,
    touched REAL NOT NULL, changed REAL NOT NULL DEFAULT 0
);
CREATE TABLE seats (
    token TEXT PRIMARY KEY, table_id TEXT NOT NULL REFERENCES tables(id) ON DELETE CASCADE,
    role TEXT NOT NULL
);
"""


def _move(store: TableStore, table_id: str, seats: set[int]) -> None:
    """The seats ``seats`` of a joined friend table each make a move (the other seat's too where
    the turn needs it: the caller asks for the seats that must have moved)."""
    moved: set[int] = set()
    while not seats <= moved:
        with store.use(table_id) as slot:
            seat = slot.table.env.hand.player
            if seat not in seats:
                return  # the other seat's turn: it does not move here
            slot.table.act(slot.table.view(seat, (True, True))["legal"][0], seat)
            moved.add(seat)


def _joined(store: TableStore, client: str | None = None) -> str:
    table_id = store.add(friend_table(), client=client).id
    with store.use(table_id) as slot:
        slot.table.join("Guest")
    return table_id


def _refused(store: TableStore, client: str) -> str:
    with pytest.raises(PlayError) as err:
        store.add(friend_table(), client=client)
    assert err.value.status == 429 and "\n" not in str(err.value)
    return str(err.value)


# ---------------------------------------------------------------------------- shares


def test_each_address_block_and_network_keeps_its_share(tmp_path: Path) -> None:
    store = small_store(tmp_path, per_address=2, per_block=4, per_network=6, clock=lambda: NOW)
    for host in ("10.1.0.1", "10.1.0.1", "10.1.0.2", "10.1.0.3"):
        store.add(friend_table(), client=host)
    assert _refused(store, "10.1.0.1").startswith("this address holds 2 tables, its limit")
    assert _refused(store, "10.1.0.4").startswith("the addresses of 10.1.0.0/24 hold 4 tables, their limit")
    store.add(friend_table(), client="10.1.1.1")
    store.add(friend_table(), client="10.1.2.1")
    message = _refused(store, "10.1.3.1")  # a fresh address and block, but the /16 is full
    assert message == (
        "the addresses of 10.1.0.0/16 hold 6 tables, their limit: finish or leave one, "
        "or wait until 1970-01-13 13:46 UTC (in 24 h) when their oldest expires"
    )
    store.add(friend_table(), client="10.2.0.1")  # another network
    # IPv6: a /56 is a block, a /48 a network.
    for host in ("2001:db8:0:100::1", "2001:db8:0:100::2", "2001:db8:0:100::3", "2001:db8:0:1ff::4"):
        store.add(friend_table(), client=host)
    assert _refused(store, "2001:db8:0:100::9").startswith("the addresses of 2001:db8:0:100::/56 hold 4")
    store.add(friend_table(), client="2001:db8:0:200::1")
    store.add(friend_table(), client="2001:db8:0:300::1")
    assert _refused(store, "2001:db8:0:400::1").startswith("the addresses of 2001:db8::/48 hold 6 tables")
    store.add(friend_table(), client="2001:db8:1::1")
    assert client_shares("::ffff:10.1.2.3") == ("10.1.2.3", "10.1.2.0/24", "10.1.0.0/16")
    assert client_shares("2001:db8:0:ff::1")[1:] == ("2001:db8::/56", "2001:db8::/48")
    assert client_shares("testclient") == (None, None, None)
    assert len(store) == 4 + 2 + 1 + 4 + 2 + 1


def test_a_finished_or_left_table_frees_its_place_in_every_share(tmp_path: Path) -> None:
    store = small_store(tmp_path, per_address=5, per_block=5, per_network=2, clock=lambda: NOW)
    first = _joined(store, "10.9.0.1")
    store.add(friend_table(), client="10.9.0.2")
    _refused(store, "10.9.7.7")
    with store.use(first) as slot:
        slot.table.leave(0)  # over: no longer held
    store.add(friend_table(), client="10.9.7.7")


def test_a_network_share_is_refused_over_http_in_one_line(tmp_path: Path) -> None:
    app = create_app(replay_dir=tmp_path / "r", state_dir=tmp_path / "t", pace_ms=0, clock=lambda: NOW)
    app.state.store.budget.per_network = 3
    codes = []
    for i in range(4):
        c = TestClient(app, client=(f"172.16.{i}.9", 4000))
        codes.append(c.post("/api/friends", json={"name": "A"}, headers=_headers()))
    assert [r.status_code for r in codes] == [201, 201, 201, 429]
    assert codes[-1].json()["error"].startswith("the addresses of 172.16.0.0/16 hold 3 tables")
    other = TestClient(app, client=("172.17.0.9", 4000))
    assert other.post("/api/friends", json={"name": "A"}, headers=_headers()).status_code == 201


def _headers() -> dict[str, str]:
    return {"Origin": "http://testserver", "Content-Type": "application/json"}


# ---------------------------------------------------------------------------- live tables


def test_a_joined_table_with_a_page_open_makes_room_and_one_where_both_move_does_not(
    tmp_path: Path,
) -> None:
    now = [NOW]
    store = small_store(tmp_path, max_tables=3, clock=lambda: now[0])
    idle = _joined(store)
    store.open_stream(idle, 0)  # a page open on it, both seats seated: not live
    both = _joined(store)
    _move(store, both, {0, 1})
    one = _joined(store)
    now[0] += 1
    _move(store, one, {0})  # only one seat acts (its first move may be the other seat's turn)
    with store.db.transaction() as db:
        assert not store.budget.is_live(db, idle, now[0])
        assert store.budget.is_live(db, both, now[0])
    store.add(friend_table())  # the joined table without a move goes first, its page open or not
    assert store.entry(idle) is None and store.entry(both) is not None
    store.add(friend_table())  # then one not both seats play: `one`, or a new table without a move
    store.add(friend_table())
    assert store.entry(both) is not None and len(store) == 3
    store.max_tables = 1
    with pytest.raises(PlayError) as err:
        store.add(friend_table())  # the tables without a move make room, then none is left: 503
    assert err.value.status == 503 and len(store) == 1 and store.entry(both) is not None
    now[0] += LIVE_FOR + 1  # both seats quiet for a while: it makes room too
    store.add(friend_table())
    assert store.entry(both) is None and len(store) == 1


def test_a_computer_table_is_live_while_its_person_moves(tmp_path: Path) -> None:
    now = [NOW]
    app = create_app(replay_dir=tmp_path / "r", state_dir=tmp_path / "t", pace_ms=0, clock=lambda: now[0])
    store = app.state.store
    rng = random.Random(3)
    with TestClient(app) as c:
        view = c.post("/api/games", json={"opponent": "random", "seed": 4}).json()
        with store.db.transaction() as db:
            assert not store.budget.is_live(db, view["id"], now[0])  # open, no move yet
        while not (view["stage"] == "play" and view["legal"]):
            view = step(c, view, rng)  # the computer's turn first, maybe
        step(c, view, rng)  # the person's move
        with store.db.transaction() as db:
            assert store.budget.is_live(db, view["id"], now[0])
        now[0] += LIVE_FOR + 1
        c.get(f"/api/games/{view['id']}")  # looking is not playing
        with store.db.transaction() as db:
            assert not store.budget.is_live(db, view["id"], now[0])


def test_a_friend_table_of_two_moving_seats_survives_a_flood_over_http(tmp_path: Path) -> None:
    now = [NOW]
    app = create_app(
        replay_dir=tmp_path / "r",
        state_dir=tmp_path / "t",
        pace_ms=0,
        clock=lambda: now[0],
        create_per_minute=100,
    )
    app.state.store.max_tables = 6
    me = TestClient(app, client=("192.0.2.7", 5000))
    host = me.post("/api/friends", json={"name": "Alice"}, headers=_headers()).json()
    invite = host["view"]["invite"].removeprefix("/#join=")
    guest = me.post("/api/friends/join", json={"invite": invite, "name": "Bob"}, headers=_headers()).json()
    both_move(me, [host["seat"], guest["seat"]], random.Random(1))
    flood = TestClient(app, client=("198.51.100.1", 5000))
    for _ in range(12):  # joined and looked at, never played
        made = flood.post("/api/friends", json={"name": "F"}, headers=_headers()).json()
        code = made["view"]["invite"].removeprefix("/#join=")
        flood.post("/api/friends/join", json={"invite": code, "name": "G"}, headers=_headers())
        flood.get(f"/api/seats/{made['seat']}")
    assert me.get(f"/api/seats/{host['seat']}").status_code == 200
    assert len(app.state.store) == 6


# ---------------------------------------------------------------------------- 100,000 tables


def _fill(path: Path, rows: list[tuple[Any, ...]]) -> None:
    """Stored tables written straight into the database (ids, kind, over, moves, client, block,
    network, touched): records are never read unless a table is asked for."""
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO tables (id, kind, record, over, moves, client, block, network, touched, changed) "
            "VALUES (?, ?, '{}', ?, ?, ?, ?, ?, ?, ?)",
            [(*r, r[-1]) for r in rows],
        )


def test_100k_stored_tables_are_counted_by_index_and_make_room_in_order(tmp_path: Path) -> None:
    store = small_store(tmp_path, clock=lambda: NOW)
    store.close()
    rows = []
    for n in range(100_000):
        a, b = divmod(n, 200)  # 200 tables a /24 of 10.x.y.0: 10 an address
        ip = f"10.{a // 256}.{a % 256}.{b // 10 + 1}"
        rows.append(
            (f"t{n:07d}", "friend", 0, 0, ip, f"10.{a // 256}.{a % 256}.0/24", f"10.{a // 256}.0.0/16", NOW)
        )
    rows[77_777] = (*rows[77_777][:2], 1, 5, *rows[77_777][4:7], NOW + 5)  # one finished table
    _fill(tmp_path / "tables" / DB_FILE, rows)
    store = small_store(tmp_path, clock=lambda: NOW, max_tables=100_000, per_address=10, per_network=48_799)
    assert len(store) == 100_000
    # 10.0.0.1 holds 10 (its limit); its /24 200 (the block's); 10.1.0.0/16 48,799 (244 blocks,
    # one table over).
    assert _refused(store, "10.0.0.1").startswith("this address holds 10 tables")
    assert _refused(store, "10.0.0.99").startswith("the addresses of 10.0.0.0/24 hold 200 tables")
    assert _refused(store, "10.1.250.1").startswith("the addresses of 10.1.0.0/16 hold 48799 tables")
    # The finished table is the first to make room, then the least recently touched without a move.
    store.add(friend_table(), client="10.7.0.1")
    assert store.entry("t0077777") is None and len(store) == 100_000
    store.add(friend_table(), client="10.7.0.1")
    assert store.entry("t0000000") is None and store.entry("t0000001") is not None
    assert _refused(store, "10.1.199.99").startswith("the addresses of 10.1.199.0/24 hold 200")
    with store.db.transaction() as db:  # each question is a range of an index, not a scan
        for column in ("client", "block", "network"):
            plan = " ".join(
                str(r[-1])
                for r in db.execute(
                    f"EXPLAIN QUERY PLAN SELECT count(*) FROM tables WHERE {column} = ? AND over = 0", ("x",)
                )
            )
            assert f"COVERING INDEX tables_by_{column}" in plan, plan
        plan = " ".join(str(r[-1]) for r in db.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM tables ORDER BY "
            "(CASE WHEN over THEN 0 WHEN moves = 0 THEN 1 ELSE 2 END), touched LIMIT 1"
        ))  # fmt: skip
        assert "tables_by_room" in plan and "TEMP B-TREE" not in plan, plan


# ---------------------------------------------------------------------------- the database


def test_a_version_1_database_is_upgraded_as_it_opens_and_its_tables_resume(tmp_path: Path) -> None:
    folder = tmp_path / "tables"
    folder.mkdir(mode=0o700)
    table = friend_table()
    table.join("Guest")
    seat = table.env.hand.player
    table.act(table.view(seat, (True, True))["legal"][0], seat)
    row = table_row(table.to_record(), client="10.3.4.5", block="10.3.4.0/24", touched=NOW, changed=NOW - 5)
    with sqlite3.connect(folder / DB_FILE) as db:
        db.executescript(_SCHEMA_V1)
        db.execute(
            f"INSERT INTO tables ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
        )
        db.execute("INSERT INTO seats VALUES ('tok-seat0', ?, 'seat0')", (table.id,))
    store = small_store(tmp_path, clock=lambda: NOW)
    assert store.token("tok-seat0", "seat0") == (table.id, "seat0")
    with store.use(table.id) as slot:
        assert slot.table.moves == 1
    ((version,),) = store.db.read("PRAGMA user_version")
    ((network, acted0, acted1),) = store.db.read("SELECT network, acted0, acted1 FROM tables")
    assert (version, network, acted0, acted1) == (SCHEMA_VERSION, "10.3.0.0/16", NOW - 5, NOW - 5)
    store.budget.per_network = 1  # the upgraded row counts in its network's share
    assert _refused(store, "10.3.200.1").startswith("the addresses of 10.3.0.0/16 hold 1 tables")
    store.close()
    with sqlite3.connect(folder / DB_FILE) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(ValueError, match="schema is version 99, this ginenv reads up to 3"):
        small_store(tmp_path, clock=lambda: NOW)


def test_nothing_is_kept_in_memory_per_stored_table(tmp_path: Path) -> None:
    store = small_store(tmp_path, memory_limit=4, clock=lambda: NOW)
    ids = [_joined(store, f"10.5.{n}.1") for n in range(12)]
    assert len(store.loaded) == 4 and len(store) == 12
    kept = {k: v for k, v in vars(store).items() if isinstance(v, dict | set | list)}
    assert all(len(v) <= 4 for v in kept.values()), kept
    assert store.entry(ids[0]) is not None and store.entry(ids[0]).tokens.keys() == {
        "seat0",
        "seat1",
        "invite",
        "watch",
    }
    assert json.loads(store.db.read("SELECT record FROM tables WHERE id = ?", (ids[0],))[0][0])["joined"]
