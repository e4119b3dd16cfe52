"""Two people at one table (experiments/play: friend tables, seats, spectators, push streams).

A whole match is played through the seat routes, each answer checked for cards its viewer cannot
know; seats are reached only through their own tokens; the push stream carries every change and
the presence of the other seat.
"""

from __future__ import annotations

import contextlib
import json
import random
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from ginenv.experiments.play.server import create_app, serve_in_background
from ginenv.experiments.play.table import Table
from play.privacy import card_names
from play.serving import page_client
from policies import deck

from ginenv.actions import action_card
from ginenv.cards import CARD_NAMES, cards_of
from ginenv.replay import load_replay, play_replay


def _hidden_from(table: Table, seat: int | None) -> set[str]:
    """Cards ``seat`` (None: a spectator) cannot know now: the stock, and the other hands' cards
    never shown face up."""
    state = table.env.hand
    shown = {state.upcard} | {c for _, a in state.history if (c := action_card(a)) is not None}
    others = (0, 1) if seat is None else (1 - seat,)
    held = set().union(*(set(cards_of(state.hands[o])) for o in others))
    return {CARD_NAMES[c] for c in set(state.stock) | (held - shown)}


def _policy(view: dict[str, Any], rng: random.Random) -> str:
    """Knock when it can, mostly keep the discard that leaves the least deadwood (a quick match)."""
    legal = view["legal"]
    knocks = [a for a in legal if a.startswith("knock")]
    if knocks and rng.random() < 0.8:
        return rng.choice(knocks)
    hints = view["discard_hints"]
    if hints and rng.random() < 0.7:
        best = min(hints, key=lambda card: hints[card])
        if f"discard {best}" in legal:
            return f"discard {best}"
    return rng.choice([a for a in legal if not a.startswith("knock")] or legal)


@pytest.fixture
def app(tmp_path: Path) -> Any:
    return create_app(replay_dir=tmp_path / "replays", state_dir=tmp_path / "tables", pace_ms=0)


@pytest.fixture
def client(app: Any) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


def friend_table(c: TestClient, join: bool = True, **body: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A friend table (Alice hosts) and, with ``join``, Bob's seat at it."""
    r = c.post("/api/friends", json={"name": "Alice", **body})
    assert r.status_code == 201, r.json()
    host = r.json()
    if not join:
        return host, {}
    invite = host["view"]["invite"].removeprefix("/#join=")
    r = c.post("/api/friends/join", json={"invite": invite, "name": "Bob"})
    assert r.status_code == 200, r.json()
    return host, r.json()


def seat_get(c: TestClient, token: str) -> dict[str, Any]:
    r = c.get(f"/api/seats/{token}")
    assert r.status_code == 200, r.json()
    return r.json()


def test_the_host_gets_an_invitation_and_a_watch_link_and_waits(client: TestClient) -> None:
    host, _ = friend_table(client, join=False, preset="oklahoma", target=30)
    view = host["view"]
    assert host["table"] == view["id"] and host["seat"] not in json.dumps(view)
    assert view["kind"] == "friend" and view["you"] == {"name": "Alice", "seat": 0, "ready": False}
    assert view["invite"].startswith("/#join=") and view["watch"].startswith("/#watch=")
    assert view["waiting_for"] == "join" and view["opponent"]["joined"] is False
    assert view["opponent"]["kind"] == "person" and view["legal"] == [] and view["turn"] is None
    assert len(view["hand"]["cards"]) == 10  # the first hand is dealt; it starts once the guest sits down
    assert view["rules_line"].startswith("Oklahoma rules: the first upcard sets the knock limit")
    assert view["rules_line"].endswith("match to 30") and view["target"] == 30
    # Nobody moves before the guest sits down.
    r = client.post(f"/api/seats/{host['seat']}/action", json={"action": "pass"})
    assert r.status_code == 409 and "not joined yet" in r.json()["error"]
    tokens = {host["seat"], view["invite"].removeprefix("/#join="), view["watch"].removeprefix("/#watch=")}
    assert len(tokens) == 3 and all(len(t) >= 32 for t in tokens)


def test_an_invitation_works_once_and_the_guest_sees_their_own_seat(client: TestClient) -> None:
    host, guest = friend_table(client)
    invite = host["view"]["invite"].removeprefix("/#join=")
    again = client.post("/api/friends/join", json={"invite": invite, "name": "Eve"})
    assert again.status_code == 409 and "already used" in again.json()["error"]
    assert guest["table"] == host["table"] and guest["seat"] != host["seat"]
    g = guest["view"]
    assert g["you"] == {"name": "Bob", "seat": 1, "ready": False} and g["opponent"]["name"] == "Alice"
    assert g["invite"] is None and g["watch"] is None
    h = seat_get(client, host["seat"])
    assert h["invite"] is None and h["opponent"]["name"] == "Bob" and h["opponent"]["joined"]
    assert h["waiting_for"] is None
    # The two seats hold different cards and each sees its own.
    assert set(h["hand"]["cards"]).isdisjoint(g["hand"]["cards"]) and len(h["hand"]["cards"]) == 10
    assert {h["turn"], g["turn"]} == {"you", "opponent"}
    assert h["dealer"] != g["dealer"] and h["discard_pile"] == g["discard_pile"]
    for bad in ({"invite": invite}, {"invite": invite, "name": ""}, {"invite": invite, "name": "x" * 25}):
        r = client.post("/api/friends/join", json=bad)
        assert r.status_code in (400, 409), r.json()


def test_no_token_or_a_wrong_one_gives_no_seat_and_no_hand(client: TestClient) -> None:
    host, guest = friend_table(client)
    watch = host["view"]["watch"].removeprefix("/#watch=")
    invite = host["view"]["invite"].removeprefix("/#join=")
    wrong = [
        "/api/seats/nope",
        f"/api/seats/{host['seat'][:-1]}",
        f"/api/seats/{host['table']}",  # the public id opens nothing
        f"/api/seats/{watch}",  # a watch link is no seat
        f"/api/seats/{invite}",
        f"/api/games/{host['table']}",
        f"/api/watch/{host['seat']}",
        "/api/seats/",
    ]
    for path in wrong:
        r = client.get(path)
        assert r.status_code == 404, (path, r.json())
        assert set(r.json()) == {"error"}, path
    for path, method in [
        (f"/api/seats/{watch}/action", "post"),
        (f"/api/seats/{host['table']}/next", "post"),
        (f"/api/watch/{watch}/action", "post"),
        ("/api/seats/nope", "delete"),
    ]:
        r = client.request(method.upper(), path, json={"action": "pass"})
        assert r.status_code in (404, 405) and set(r.json()) == {"error"}, path
    # A spectator sees no hand and cannot move.
    view = client.get(f"/api/watch/{watch}").json()
    assert view["spectator"] and view["you"] is None and view["hand"]["cards"] == [] and view["legal"] == []
    assert [s["name"] for s in view["players"]] == ["Alice", "Bob"]
    assert view["invite"] is None and view["watch"] is None
    # The other seat's token never appears in an answer to a seat.
    assert guest["seat"] not in json.dumps(seat_get(client, host["seat"]))
    assert host["seat"] not in json.dumps(seat_get(client, guest["seat"]))


def test_two_people_play_a_whole_match_and_no_answer_names_a_card_its_viewer_cannot_know(
    app: Any, client: TestClient, tmp_path: Path
) -> None:
    table = Table(
        None, "seed000_short", target=60, seed=19, names=["Alice", ""], replay_dir=tmp_path / "replays"
    )
    entry = app.state.store.add(table)
    r = client.post("/api/friends/join", json={"invite": entry.tokens["invite"], "name": "Bob"})
    seats = [entry.tokens["seat0"], r.json()["seat"]]
    watch = entry.tokens["watch"]
    rng = random.Random(19)
    checked = hands = 0
    for _ in range(3000):
        views = [seat_get(client, t) for t in seats]
        spectator = client.get(f"/api/watch/{watch}").json()
        stage = views[0]["stage"]
        assert views[1]["stage"] == stage == spectator["stage"]
        if stage == "over":
            break
        if stage == "showdown":
            final = table.finished_hand
            assert final is not None
            stock = {CARD_NAMES[c] for c in final.stock}
            for v in [*views, spectator]:
                assert not card_names(v) & stock
            if views[0]["showdown"]["kind"] == "dead":
                assert views[0]["showdown"]["opponent"] is None and spectator["showdown"]["you"] is None
            # Next hand waits for both.
            first = client.post(f"/api/seats/{seats[0]}/next").json()
            assert first["stage"] == "showdown" and first["waiting_for"] == "next"
            assert seat_get(client, seats[1])["waiting_for"] is None
            assert client.post(f"/api/seats/{seats[1]}/next").json()["stage"] == "play"
            hands += 1
            continue
        for seat in (0, 1):
            leaked = card_names(views[seat]) & _hidden_from(table, seat)
            assert not leaked, f"seat {seat} is shown hidden cards {leaked}"
        leaked = card_names(spectator) & _hidden_from(table, None)
        assert not leaked, f"the spectator is shown hidden cards {leaked}"
        mover = 0 if views[0]["turn"] == "you" else 1
        assert views[1 - mover]["turn"] == "opponent" and views[1 - mover]["legal"] == []
        refused = client.post(f"/api/seats/{seats[1 - mover]}/action", json={"action": "draw_stock"})
        assert refused.status_code == 409 and "turn" in refused.json()["error"]
        r = client.post(f"/api/seats/{seats[mover]}/action", json={"action": _policy(views[mover], rng)})
        assert r.status_code == 200, r.json()
        # The move is on the other screen at once, named by the mover's name.
        other = seat_get(client, seats[1 - mover])
        assert (other["events"] and other["events"][-1]["who"] == "opponent") or other["stage"] != "play"
        checked += 1
    else:
        raise AssertionError("the match did not end")
    assert checked > 20 and hands >= 1, (checked, hands)
    ends = [seat_get(client, t) for t in seats]
    results = [v["match_result"] for v in ends]
    assert {results[0]["winner"], results[1]["winner"]} == {"you", "opponent"}
    assert results[0]["totals"]["you"] == results[1]["totals"]["opponent"]
    winner = "Alice" if results[0]["winner"] == "you" else "Bob"
    assert f"{winner} wins the match" in ends[1 - ["Alice", "Bob"].index(winner)]["prompt"]
    # Saved as a replay like the others, named by both players.
    name = ends[0]["replay"]
    assert name and "-alice-vs-bob-" in name
    match = play_replay(load_replay(tmp_path / "replays" / name))
    assert match.result is not None and len(match.records) == hands + 1  # type: ignore[union-attr]


# The host (non-dealer) holds As-4s, three 5s and two 9s; the stock's first card, 9h, gives gin.
GIN_DEAL = deck(
    "As 2s 3s 4s 5c 5d 5h 9c 9d Kh",
    "7c 7d 7s 8s Ts Qc Qd 2c 3d Jh",
    "Kd",
    "9h 6c",
)


def test_a_scripted_hand_reads_right_from_both_seats_and_next_waits_for_both(
    app: Any, client: TestClient
) -> None:
    table = Table(None, "standard", decks=[GIN_DEAL, GIN_DEAL], dealer=1, names=["Alice", ""], seed=3)
    entry = app.state.store.add(table)
    r = client.post("/api/friends/join", json={"invite": entry.tokens["invite"], "name": "Bob"})
    seats = [entry.tokens["seat0"], r.json()["seat"]]
    act = lambda seat, action: client.post(f"/api/seats/{seats[seat]}/action", json={"action": action}).json()  # noqa: E731
    act(0, "pass")
    act(1, "pass")
    mine = act(0, "draw_stock")
    watching = client.get(f"/api/watch/{entry.tokens['watch']}").json()
    assert watching["known"] == {"you": [], "opponent": []} and "9h" not in json.dumps(watching)
    theirs = seat_get(client, seats[1])
    assert mine["events"][-1]["text"] == "You drew 9h from the stock." and mine["drawn"] == "9h"
    assert (
        theirs["events"][-1]["text"] == "Alice drew from the stock." and theirs["events"][-1]["card"] is None
    )
    assert "9h" not in json.dumps(theirs) and theirs["opponent_cards"] == 11
    assert theirs["prompt"] == "Alice is thinking…"
    mine = act(0, "knock Kh")
    theirs = seat_get(client, seats[1])
    assert mine["showdown"]["title"] == "You go gin: You score 78 points."
    assert theirs["showdown"]["title"] == "Alice goes gin: Alice scores 78 points."
    assert theirs["showdown"]["knocker"] == "opponent" and theirs["showdown"]["winner"] == "opponent"
    assert theirs["showdown"]["opponent"]["melds"] == [
        ["As", "2s", "3s", "4s"],
        ["5c", "5d", "5h"],
        ["9c", "9d", "9h"],
    ]
    assert theirs["scores"] == {"you": 0, "opponent": 78} and mine["scores"] == {"you": 78, "opponent": 0}
    assert theirs["hand"]["cards"] and set(theirs["hand"]["cards"]).isdisjoint(mine["hand"]["cards"])
    assert not mine["you"]["ready"]
    pressed = client.post(f"/api/seats/{seats[0]}/next").json()
    assert pressed["stage"] == "showdown" and pressed["waiting_for"] == "next" and pressed["you"]["ready"]
    assert pressed["version"] > mine["version"]
    assert pressed["prompt"].endswith("Waiting for Bob to press Next hand.")
    theirs = seat_get(client, seats[1])
    assert theirs["waiting_for"] is None and theirs["prompt"].endswith("Press Next hand.")
    dealt = client.post(f"/api/seats/{seats[1]}/next").json()
    assert dealt["stage"] == "play" and dealt["hand_index"] == 1 and dealt["events"] == []
    assert seat_get(client, seats[0])["hand_index"] == 1


def test_leaving_ends_the_match_for_both_and_writes_the_replay(client: TestClient, tmp_path: Path) -> None:
    host, guest = friend_table(client)
    mover = host if seat_get(client, host["seat"])["turn"] == "you" else guest
    client.post(f"/api/seats/{mover['seat']}/action", json={"action": "pass"})
    assert client.delete(f"/api/seats/{guest['seat']}").json() == {"left": True}
    h = seat_get(client, host["seat"])
    assert h["stage"] == "over" and h["match_result"]["left"] == "opponent"
    assert h["match_result"]["winner"] is None and h["prompt"] == "Bob left the match."
    assert h["events"][-1]["text"] == "Bob left the match." and h["waiting_for"] is None
    g = seat_get(client, guest["seat"])  # the same link still shows how it ended
    assert g["match_result"]["left"] == "you" and g["events"][-1]["text"] == "You left the match."
    assert (tmp_path / "replays" / h["replay"]).is_file()
    r = client.post(f"/api/seats/{host['seat']}/action", json={"action": "draw_stock"})
    assert r.status_code == 409 and "the match is over" in r.json()["error"]


def test_the_other_person_is_seen_waiting_and_back(tmp_path: Path) -> None:
    now = [1000.0]
    app = create_app(replay_dir=tmp_path / "r", state_dir=tmp_path / "t", clock=lambda: now[0])
    with TestClient(app) as c:
        host, guest = friend_table(c)
        assert seat_get(c, host["seat"])["opponent"]["connected"]
        now[0] += 60  # Bob's phone went to sleep
        h = seat_get(c, host["seat"])
        assert h["waiting_for"] == "reconnect" and not h["opponent"]["connected"]
        g = seat_get(c, guest["seat"])  # the same link brings him back
        assert g["opponent"]["connected"] and g["waiting_for"] is None
        assert seat_get(c, host["seat"])["waiting_for"] is None


def test_a_reload_gets_the_same_position(client: TestClient) -> None:
    host, guest = friend_table(client)
    mover = host if seat_get(client, host["seat"])["turn"] == "you" else guest
    client.post(f"/api/seats/{mover['seat']}/action", json={"action": "pass"})
    first = seat_get(client, guest["seat"])
    assert seat_get(client, guest["seat"]) == first


def test_bad_friend_requests_are_refused_with_short_messages(client: TestClient) -> None:
    cases = [
        ({"name": ""}, "a name is 1 to 24"),
        ({"name": "\u0007bell"}, "printable"),
        ({"name": "A", "target": 0}, "target must be"),
        ({"name": "A", "target": 10**9}, "target must be"),
        ({"name": "A", "preset": "vegas"}, "unknown rules preset"),
        ({"name": "A", "cheat": True}, "Extra inputs"),
        ({"name": "x" * 10_000}, "a name is 1 to 24"),
        ({}, "name: Field required"),
    ]
    for body, words in cases:
        r = client.post("/api/friends", json=body)
        assert r.status_code == 400 and words in r.json()["error"], r.json()
        assert len(r.json()["error"]) < 200


# ---------------------------------------------------------------------------- the push stream


class Stream:
    """Reads ``event: view`` messages of one push stream in a thread."""

    def __init__(self, url: str) -> None:
        self.views: list[dict[str, Any]] = []
        self.comments = 0
        self._cursor = 0
        self._client = httpx.Client(timeout=httpx.Timeout(10, read=30))
        self._cm = self._client.stream("GET", url)
        self.response = self._cm.__enter__()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for line in self.response.iter_lines():
                if line.startswith("data: "):
                    self.views.append(json.loads(line[6:]))
                elif line.startswith(":"):
                    self.comments += 1
        except (httpx.HTTPError, RuntimeError, ValueError):
            pass

    def wait(self, check: Any, timeout: float = 10) -> dict[str, Any]:
        """The first view, after the one the last wait returned, that passes ``check``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            while self._cursor < len(self.views):
                view = self.views[self._cursor]
                self._cursor += 1
                if check(view):
                    return view
            time.sleep(0.02)
        raise AssertionError(f"no view of {len(self.views)} matched; last: {self.views[-1:]}")

    def close(self) -> None:
        """Close the page: the connection goes (the reading thread is woken by the shutdown)."""
        sock = self.response.extensions["network_stream"].get_extra_info("socket")
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=5)
        self._cm.__exit__(None, None, None)
        self._client.close()


def test_each_move_and_the_others_presence_reach_the_other_screen_at_once(tmp_path: Path) -> None:
    app = create_app(replay_dir=tmp_path / "r", state_dir=tmp_path / "t", pace_ms=0)
    app.state.store.grace = 0.5
    srv = serve_in_background(app)
    streams: list[Stream] = []
    try:
        api = page_client(srv.url, timeout=10)
        host = api.post("/api/friends", json={"name": "Alice", "target": 20}).json()
        hs = Stream(f"{srv.url}/api/seats/{host['seat']}/stream")
        streams.append(hs)
        assert hs.response.headers["content-type"].startswith("text/event-stream")
        hs.wait(lambda v: v["waiting_for"] == "join" and v["invite"])
        invite = host["view"]["invite"].removeprefix("/#join=")
        guest = api.post("/api/friends/join", json={"invite": invite, "name": "Bob"}).json()
        hs.wait(lambda v: v["opponent"]["name"] == "Bob" and v["invite"] is None)
        # Bob has no stream open: once his grace is over, Alice sees that he is away.
        hs.wait(lambda v: v["waiting_for"] == "reconnect")
        gs = Stream(f"{srv.url}/api/seats/{guest['seat']}/stream")
        streams.append(gs)
        hs.wait(lambda v: v["waiting_for"] is None and v["opponent"]["connected"])
        g = gs.wait(lambda v: v["you"]["name"] == "Bob")
        mover, watcher = (gs, hs) if g["turn"] == "you" else (hs, gs)
        token = guest["seat"] if mover is gs else host["seat"]
        before = len(watcher.views)
        assert api.post(f"/api/seats/{token}/action", json={"action": "pass"}).status_code == 200
        seen = watcher.wait(lambda v: v["events"] and v["events"][-1]["action"] == "pass")
        assert seen["events"][-1]["who"] == "opponent" and len(watcher.views) > before
        # A spectator's stream carries no hand.
        watch = host["view"]["watch"].removeprefix("/#watch=")
        ws = Stream(f"{srv.url}/api/watch/{watch}/stream")
        streams.append(ws)
        assert ws.wait(lambda v: v["spectator"])["hand"]["cards"] == []
        # Bob closes his page: after the grace Alice sees him waited for, and he comes back.
        gs.close()
        streams.remove(gs)
        hs.wait(lambda v: v["waiting_for"] == "reconnect", timeout=15)
        gs = Stream(f"{srv.url}/api/seats/{guest['seat']}/stream")
        streams.append(gs)
        hs.wait(lambda v: v["waiting_for"] is None and v["opponent"]["connected"])
        assert gs.wait(lambda v: True)["events"][-1]["action"] == "pass"
        bad = api.get("/api/seats/nope/stream")
        assert bad.status_code == 404 and set(bad.json()) == {"error"}
    finally:
        for s in streams:
            s.close()
        srv.stop()
