"""A live match stays private under any load, and a forged header lifts no limit (experiments/play).

A flood of new tables pushes idle matches of every kind (friends, computer, the game of the day) out
of memory; a client with no token then reads every replay route and page, which must show no card of
either hand of a live match and nothing of its deck; the matches come back from their state files
where they were, and once they end each has exactly one replay. Through a real uvicorn server, a
different forged ``X-Forwarded-For`` on every request changes nothing unless the operator named
the proxy it came from (``ginenv play --forwarded-allow-ips``).
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from ginenv.experiments.play.server import (
    MAX_GAMES,
    STATIC_DIR,
    create_app,
    save_open_games,
    serve_in_background,
)
from play.moves import finish, step
from play.privacy import card_names
from play.serving import page_client, play_server, stop, table_slot

from ginenv.cards import CARD_NAMES, cards_of

DAY = dt.date(2026, 12, 1)
#: View fields that change with who is connected, not with the match.
PRESENCE = ("opponent", "players", "waiting_for", "version")


def _without_presence(view: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k not in PRESENCE}


def _secrets(app: Any, table_id: str) -> set[str]:
    """The cards no one without a seat may see at a table in memory: both hands and the stock."""
    state = table_slot(app, table_id).table.env.hand
    held = set(cards_of(state.hands[0])) | set(cards_of(state.hands[1])) | set(state.stock)
    return {CARD_NAMES[c] for c in held}


def _seat_move(c: TestClient, seats: list[str]) -> None:
    """The player to move at a friend table makes a move that is not a knock."""
    views = [c.get(f"/api/seats/{s}").json() for s in seats]
    mover = 0 if views[0]["turn"] == "you" else 1
    legal = [a for a in views[mover]["legal"] if not a.startswith("knock")]
    r = c.post(f"/api/seats/{seats[mover]}/action", json={"action": legal[0]})
    assert r.status_code == 200, r.json()


def _flood(c: TestClient, count: int) -> None:
    """``count`` new tables, friends' and computer ones in turn, no move made at any."""
    for i in range(count):
        if i % 2:
            r = c.post("/api/games", json={"opponent": "random"})
        else:
            r = c.post("/api/friends", json={"name": f"Flood {i}"})
        assert r.status_code == 201, r.json()


def _nothing_leaks(app: Any, replay_dir: Path, secret: set[str]) -> None:
    """A client with no token and no cookie reads every replay route and page: no card of ``secret``."""
    with TestClient(app) as stranger:
        listed = stranger.get("/api/replays")
        assert listed.status_code == 200
        assert not card_names(listed.json()) & secret
        names = {r["name"] for r in listed.json()["replays"]} | {p.name for p in replay_dir.glob("*")}
        for name in names:
            r = stranger.get(f"/api/replays/{name}")
            assert r.status_code == 404 or not card_names(r.json()) & secret, name
        page = stranger.get("/replay")  # the page itself carries no game: it asks the API above
        assert page.status_code == 200 and page.content == (STATIC_DIR / "replay.html").read_bytes()


@pytest.mark.parametrize(("memory", "flood"), [(None, MAX_GAMES + 6), (2, 8)])
def test_a_flood_of_tables_publishes_no_live_match_and_each_ends_in_one_replay(
    tmp_path: Path, memory: int | None, flood: int
) -> None:
    replay_dir = tmp_path / "replays"
    limits: dict[str, Any] = {} if memory is None else {"max_games": memory}
    day = [DAY]
    app = create_app(
        replay_dir=replay_dir,
        state_dir=tmp_path / "tables",
        pace_ms=0,
        today=lambda: day[0],
        create_per_minute=10_000,
        **limits,
    )
    rng = random.Random(42)
    with TestClient(app) as c, TestClient(app) as me:
        # Three idle matches, one of each kind, each with moves made.
        host = c.post("/api/friends", json={"name": "Alice", "preset": "seed000_short"}).json()
        invite = host["view"]["invite"].removeprefix("/#join=")
        watch = host["view"]["watch"].removeprefix("/#watch=")
        guest = c.post("/api/friends/join", json={"invite": invite, "name": "Bob"}).json()
        seats = [host["seat"], guest["seat"]]
        for _ in range(4):
            _seat_move(c, seats)
        secret = _secrets(app, host["table"])  # taken while each table is in memory
        computer = c.post("/api/games", json={"opponent": "random", "preset": "seed000_short", "seed": 5})
        game = computer.json()
        for _ in range(5):
            game = step(c, game, rng)
        secret |= _secrets(app, game["id"])
        daily = me.post("/api/games", json={"daily": True}).json()
        for _ in range(3):
            daily = step(me, daily, rng)
        secret |= _secrets(app, daily["id"])
        ids = [host["table"], game["id"], daily["id"]]
        before = {
            "seats": [c.get(f"/api/seats/{s}").json() for s in seats],
            "watch": c.get(f"/api/watch/{watch}").json(),
            "game": c.get(f"/api/games/{game['id']}").json(),
            "daily": me.get(f"/api/games/{daily['id']}").json(),
        }

        _flood(c, flood)
        assert len(app.state.tables) <= (memory or MAX_GAMES) and len(app.state.store) == 3 + flood
        assert not set(ids) & set(app.state.tables)  # all three left memory
        assert not list(replay_dir.glob("*"))  # stored as state, never published
        _nothing_leaks(app, replay_dir, secret)

        # Each comes back from its state file where it was, to a spectator and to each seat.
        assert _without_presence(c.get(f"/api/watch/{watch}").json()) == _without_presence(before["watch"])
        for token, seen in zip(seats, before["seats"], strict=True):
            assert _without_presence(c.get(f"/api/seats/{token}").json()) == _without_presence(seen)
        assert c.get(f"/api/games/{game['id']}").json() == before["game"]
        assert me.post("/api/games", json={"daily": True}).json() == before["daily"]

        # The server stops: the unfinished matches in memory are written, and stay unlisted while
        # their tables can resume; another flood makes no copy.
        stopped = save_open_games(app)
        assert 1 <= len(stopped) <= 3 and len(list(replay_dir.glob("*"))) == len(stopped)
        _flood(c, flood)
        assert sorted(p.name for p in replay_dir.glob("*")) == sorted(stopped)
        _nothing_leaks(app, replay_dir, secret)

        # The matches end: a friend leaves, the computer match is played out, the game of the day
        # is left. Exactly one replay each.
        _seat_move(c, seats)
        assert c.delete(f"/api/seats/{seats[1]}").json() == {"left": True}
        ended = [c.get(f"/api/seats/{seats[0]}").json()["replay"]]
        ended.append(finish(c, c.get(f"/api/games/{game['id']}").json(), rng)["replay"])
        ended.append(me.delete(f"/api/games/{daily['id']}").json()["replay"])
        assert all(ended) and sorted(p.name for p in replay_dir.glob("*")) == sorted(ended)
        assert set(stopped) <= set(ended)
        # Today's game of the day opens to nobody, not even who played it, before the day is over.
        with TestClient(app) as stranger:
            for client in (me, stranger):
                listed = [r["name"] for r in client.get("/api/replays").json()["replays"]]
                assert sorted(listed) == sorted(ended[:2])
                assert client.get(f"/api/replays/{ended[2]}").status_code == 404
            for name in ended[:2]:
                assert stranger.get(f"/api/replays/{name}").json()["hands"][0]["frames"]
            day[0] = DAY + dt.timedelta(days=1)
            listed = [r["name"] for r in stranger.get("/api/replays").json()["replays"]]
            assert sorted(listed) == sorted(ended)
            assert stranger.get(f"/api/replays/{ended[2]}").json()["hands"][0]["frames"]


# ---------------------------------------------------------------------------- forwarded headers


@contextmanager
def _served(tmp_path: Path, forwarded_allow_ips: str | None) -> Iterator[str]:
    app = create_app(
        replay_dir=tmp_path / "replays",
        state_dir=tmp_path / "tables",
        pace_ms=0,
        forwarded_allow_ips=forwarded_allow_ips,
    )
    server = serve_in_background(app)
    try:
        yield server.url
    finally:
        server.stop()


def _forged_flood(url: str, count: int) -> list[int]:
    """``count`` friend tables asked for from 127.0.0.1, each claiming another address."""
    with page_client(url, timeout=10) as api:
        return [
            api.post(
                "/api/friends",
                json={"name": "Mallory"},
                headers={"X-Forwarded-For": f"203.0.113.{i}"},
            ).status_code
            for i in range(count)
        ]


def test_a_forged_forwarded_header_from_an_unnamed_client_lifts_no_limit(tmp_path: Path) -> None:
    with _served(tmp_path, None) as url:
        assert _forged_flood(url, 14) == [201] * 10 + [429] * 4


def test_a_named_proxy_has_its_forwarded_header_honoured(tmp_path: Path) -> None:
    with _served(tmp_path, "127.0.0.1") as url:
        assert _forged_flood(url, 14) == [201] * 14  # each address its own 10 a minute
        with page_client(url, timeout=10) as api:
            same = {"X-Forwarded-For": "198.51.100.7"}
            codes = [
                api.post("/api/friends", json={"name": "Bo"}, headers=same).status_code for _ in range(11)
            ]
        assert codes == [201] * 10 + [429]


def test_the_play_command_ignores_forwarded_headers_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folders = ("--replay-dir", str(tmp_path / "replays"), "--state-dir", str(tmp_path / "tables"))
    with play_server(*folders) as (proc, url):
        assert _forged_flood(url, 12) == [201] * 10 + [429] * 2
        stop(proc)
    with play_server(*folders, "--forwarded-allow-ips", "127.0.0.1, ::1") as (proc, url):
        assert _forged_flood(url, 12) == [201] * 12
        stop(proc)
    from ginenv.experiments.cli import main

    bad = ["play", "--no-browser", "--port", "0", "--forwarded-allow-ips", "127.0.0.1,proxy.example"]
    assert main([*bad, *folders]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("ginenv: --forwarded-allow-ips: 'proxy.example' is not an IP address")
    assert len(error.splitlines()) == 1
