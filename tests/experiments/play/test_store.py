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

import httpx
import pytest
from fastapi.testclient import TestClient
from ginenv.experiments.eval.harness import make_agent as harness_make_agent
from ginenv.experiments.play.presets import rules_line
from ginenv.experiments.play.db import DB_FILE
from ginenv.experiments.play.server import create_app, save_open_games
from ginenv.experiments.play.store import ABANDONED_AFTER, FINISHED_AFTER, RateLimit
from ginenv.experiments.play.table import PlayError, Table
from ginenv.experiments.play.words import excerpt, points
from play.moves import finish, step
from play.serving import play_server, stop

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
        # Leaving plays it: it cannot be started again, and its replay opens for me only.
        assert me.delete(f"/api/games/{view['id']}").json()["replay"] == name
        r = me.post("/api/games", json={"daily": True})
        assert (
            r.status_code == 409 and r.json()["error"] == "you played today's game; its replay is in Replays"
        )
        assert name in [x["name"] for x in me.get("/api/replays").json()["replays"]]
        frames = me.get(f"/api/replays/{name}").json()
        assert frames["hands"][0]["frames"]
        assert name not in [x["name"] for x in other.get("/api/replays").json()["replays"]]
        assert other.get(f"/api/replays/{name}").status_code == 404
    # The next day, it is a replay like any other.
    with TestClient(app_at(tmp_path, today=lambda: DAY + dt.timedelta(days=1))) as later:
        assert name in [x["name"] for x in later.get("/api/replays").json()["replays"]]


def test_a_finished_game_of_the_day_cannot_be_started_again(tmp_path: Path) -> None:
    fast = lambda name, rules: harness_make_agent("greedy", rules=rules)  # noqa: E731
    app = app_at(tmp_path, today=lambda: DAY, make_agent=fast)
    with TestClient(app) as c:
        view = finish(c, c.post("/api/games", json={"daily": True}).json(), random.Random(4))
        assert view["daily"] == "2026-12-01" and view["replay"]
        r = c.post("/api/games", json={"daily": True})
        assert r.status_code == 409 and "you played today's game" in r.json()["error"]
        assert view["replay"] in [x["name"] for x in c.get("/api/replays").json()["replays"]]
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
        api = httpx.Client(base_url=url, timeout=10)
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
        api = httpx.Client(base_url=url, timeout=30)
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
