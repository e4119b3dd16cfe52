"""A ``ginenv play`` server killed at any moment of its stop publishes no match in progress.

The real command runs in a process; tables are played, then the server gets SIGTERM and, after a
delay swept over the length of a stop, SIGKILL. Each restart must list and serve no replay of an
unfinished match, resume every table where its last answered move left it, and once the matches end
hold exactly one replay of each (in the list and in the replay folder).
"""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from play.moves import step
from play.serving import page_client, play_server

#: Milliseconds between SIGTERM and SIGKILL, one server run each: the stop reaches its exports some
#: 1.3 ms after SIGTERM and the process exits some 30 ms after. Eight runs, most inside the exports'
#: window (each run is a server start: some 3 CPU seconds).
DELAYS_MS = (0, 0.3, 0.6, 0.9, 1.2, 1.5, 2, 4)
COMPUTER_TABLES = 6
#: What a view may change across a restart: who is connected, and the replay named at the stop.
_PRESENCE = ("opponent", "players", "waiting_for", "replay")


def _same(view: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k not in _PRESENCE}


def _friend_move(api: httpx.Client, seats: list[str]) -> list[dict[str, Any]]:
    """The player to move at the friend table makes a move that is not a knock; both seats' views."""
    views = [api.get(f"/api/seats/{s}").json() for s in seats]
    mover = 0 if views[0]["turn"] == "you" else 1
    legal = [a for a in views[mover]["legal"] if not a.startswith("knock")]
    assert api.post(f"/api/seats/{seats[mover]}/action", json={"action": legal[0]}).status_code == 200
    return [api.get(f"/api/seats/{s}").json() for s in seats]


def _check(
    api: httpx.Client, games: dict[str, Any], seats: list[str], friends: list[Any], replay_dir: Path
) -> None:
    """What a restarted server must show: no unfinished match among the replays, every table as it was."""
    listed = {r["name"] for r in api.get("/api/replays").json()["replays"]}
    finished = set()
    for gid, before in games.items():
        view = api.get(f"/api/games/{gid}").json()
        assert _same(view) == _same(before), gid
        if view["stage"] == "over":
            finished.add(view["replay"])
    for token, before in zip(seats, friends, strict=True):
        assert _same(api.get(f"/api/seats/{token}").json()) == _same(before)
    assert listed <= finished, listed - finished
    for path in replay_dir.glob("*.json"):  # the stop's copies of matches in progress stay unserved
        if path.name not in finished:
            assert api.get(f"/api/replays/{path.name}").status_code == 404, path.name


@pytest.mark.long  # 9 server runs
def test_a_kill_at_any_moment_of_a_stop_publishes_no_match_in_progress(tmp_path: Path) -> None:
    replay_dir = tmp_path / "replays"
    options = ("--state-dir", str(tmp_path / "tables"), "--replay-dir", str(replay_dir))
    options += ("--opponent", "random", "--pace-ms", "0")
    rng = random.Random(11)
    games: dict[str, Any] = {}
    seats: list[str] = []
    friends: list[Any] = []
    killed = 0
    for delay in DELAYS_MS:
        with play_server(*options) as (proc, url):
            api = page_client(url, timeout=30)
            if not games:
                for seed in range(COMPUTER_TABLES):
                    view = api.post("/api/games", json={"seed": seed}).json()
                    games[view["id"]] = view
                host = api.post("/api/friends", json={"name": "Alice"}).json()
                invite = host["view"]["invite"].removeprefix("/#join=")
                guest = api.post("/api/friends/join", json={"invite": invite, "name": "Bob"}).json()
                seats = [host["seat"], guest["seat"]]
            else:
                _check(api, games, seats, friends, replay_dir)
            # Every table is in memory and a move further when the stop begins.
            for gid, view in games.items():
                games[gid] = view if view["stage"] == "over" else step(api, view, rng)
            friends = _friend_move(api, seats)
            proc.send_signal(signal.SIGTERM)
            time.sleep(delay / 1000)
            proc.send_signal(signal.SIGKILL)
            killed += proc.wait(timeout=30) == -signal.SIGKILL
    assert killed >= len(DELAYS_MS) // 2  # most runs died inside their stop, not after it
    with play_server(*options) as (proc, url):
        api = page_client(url, timeout=30)
        _check(api, games, seats, friends, replay_dir)
        # The matches end: one replay each, in the list and in the folder, and each opens.
        ended = [api.request("DELETE", f"/api/games/{gid}", json={}).json()["replay"] for gid in games]
        assert api.request("DELETE", f"/api/seats/{seats[1]}", json={}).json() == {"left": True}
        ended.append(api.get(f"/api/seats/{seats[0]}").json()["replay"])
        assert all(ended) and len(set(ended)) == len(ended)
        listed = [r["name"] for r in api.get("/api/replays").json()["replays"]]
        assert sorted(listed) == sorted(ended)
        assert sorted(p.name for p in replay_dir.glob("*.json")) == sorted(ended)
        for name in ended:
            assert api.get(f"/api/replays/{name}").json()["hands"][0]["frames"]
