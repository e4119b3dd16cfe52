"""The deal keys never leave the play server (experiments/play/table.py, server.py, store.py).

Through a real uvicorn server, a friend table and a computer table are played for a few moves while
every answer a seat, a spectator or a stranger can get is collected: views, push-stream events,
errors (an illegal move, a move out of turn, a bad token, a malformed body), the options and the
replay list; and the server's log. None holds a table's key, the server's secret or the key of
the game of the day; the seed of a keyed table is not shown either.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from typing import Any

import httpx
import pytest
from ginenv.experiments.play.server import create_app, serve_in_background
from ginenv.experiments.play.table import daily_key
from play.serving import page_client, table_slot

DAY = dt.date(2026, 12, 6)


def _first_events(url: str, count: int = 1, timeout: float = 5.0) -> list[str]:
    """The first ``count`` ``data:`` lines of a push stream."""
    found: list[str] = []
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=httpx.Timeout(timeout)) as client, client.stream("GET", url) as response:
        for line in response.iter_lines():
            if line.startswith("data: "):
                found.append(line)
            if len(found) >= count or time.monotonic() > deadline:
                break
    return found


def test_no_key_leaves_the_server_in_views_streams_errors_or_logs(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    app = create_app(replay_dir=tmp_path / "r", state_dir=tmp_path / "t", pace_ms=0, today=lambda: DAY)
    srv = serve_in_background(app)
    answers: list[str] = []
    try:
        api = page_client(srv.url, timeout=10)

        def get(method: str, path: str, **kw: Any) -> dict[str, Any]:
            r = api.request(method, path, **kw)
            answers.append(r.text)
            answers.extend(f"{k}: {v}" for k, v in r.headers.items())
            return r.json()

        host = get("POST", "/api/friends", json={"name": "Ann", "target": 20})
        invite = host["view"]["invite"].removeprefix("/#join=")
        watch = host["view"]["watch"].removeprefix("/#watch=")
        guest = get("POST", "/api/friends/join", json={"invite": invite, "name": "Bob"})
        seats = [host["seat"], guest["seat"]]
        for _ in range(6):
            views = [get("GET", f"/api/seats/{s}") for s in seats]
            mover = 0 if views[0]["turn"] == "you" else 1
            waiting = seats[1 - mover]
            get("POST", f"/api/seats/{waiting}/action", json={"action": "draw_stock"})  # out of turn
            get("POST", f"/api/seats/{seats[mover]}/action", json={"action": "discard Zz"})  # unknown
            get("POST", f"/api/seats/{seats[mover]}/action", json={"action": "knock As"})  # illegal
            legal = [a for a in views[mover]["legal"] if not a.startswith("knock")]
            get("POST", f"/api/seats/{seats[mover]}/action", json={"action": legal[0]})
        get("GET", f"/api/watch/{watch}")
        get("GET", "/api/seats/not-a-token")
        get("POST", "/api/friends/join", json={"invite": invite, "name": "Eve"})  # used invitation
        computer = get("POST", "/api/games", json={"opponent": "random"})
        daily = get("POST", "/api/games", json={"daily": True})
        get("POST", f"/api/games/{computer['id']}/action", json={"action": 7})  # malformed
        get("GET", "/api/options")
        get("GET", "/api/replays")
        for path in [f"/api/seats/{s}/stream" for s in seats] + [f"/api/watch/{watch}/stream"]:
            answers.extend(_first_events(srv.url + path))

        store = app.state.store
        friend_table = table_slot(app, host["table"]).table
        keys = {
            friend_table.key.hex(),
            table_slot(app, computer["id"]).table.key.hex(),
            daily_key(store.server_secret, DAY).hex(),
            store.server_secret.hex(),
        }
        assert table_slot(app, daily["id"]).table.key.hex() in keys
        seed = str(friend_table.seed)
    finally:
        srv.stop()
    said = "\n".join(answers) + "\n" + caplog.text
    assert len(answers) > 40
    for secret in keys:
        assert secret not in said and secret.upper() not in said
    # The seed seeds only the computer's choices at a keyed table, but it is not shown either.
    assert not any(f'"seed": {seed}' in a or f'"seed":{seed}' in a for a in answers)
    assert "key" not in json.loads(answers[0])["view"]
