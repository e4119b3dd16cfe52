"""The play table and its HTTP API (experiments/play/table.py, experiments/play/server.py), without a browser.

Whole hands are scripted by card names: the person's moves go through the API, the computer's come
from a scripted agent. The privacy test plays whole matches against real levels and checks that no
answer before a showdown names a card the person cannot know.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import random
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from fastapi.testclient import TestClient
from ginenv.agents.base import Agent, AgentForfeit
from ginenv.experiments.eval.harness import make_agent as harness_make_agent
from ginenv.experiments.play.frames import replay_frames
from ginenv.experiments.play.presets import PRESET_LABELS, RULE_WORDS, preset_help, rule_changes, rule_words
from ginenv.experiments.play.server import STATIC_DIR, create_app
from ginenv.experiments.play.table import Table, daily_key
from play.privacy import card_names
from play.serving import add_table, page_client, play_server, stop
from policies import deck

from ginenv.actions import action_id, action_name
from ginenv.cards import CARD_NAMES, cards_of, parse_cards
from ginenv.engine import HandState
from ginenv.replay import load_replay, play_replay
from ginenv.rules import PRESETS, Rules


class Scripted(Agent):
    """A computer player that plays the listed action names in order (and checks each is legal)."""

    name = "scripted"

    def __init__(self, moves: list[str]) -> None:
        super().__init__(0)
        self.moves = list(moves)

    def act(self, observation: Any) -> int:
        action = action_id(self.moves.pop(0))
        assert observation["action_mask"][action], f"scripted {action_name(action)} is illegal here"
        return action


class Raising(Agent):
    name = "raising"

    def act(self, observation: Any) -> int:
        raise RuntimeError("boom")


def make_client(tmp_path: Path, script: list[str] | None = None, **kwargs: Any) -> TestClient:
    def build(name: str, rules: Rules) -> Any:
        if script is not None:
            return Scripted(script)
        return harness_make_agent(name, rules=rules)

    app = create_app(replay_dir=tmp_path / "replays", pace_ms=0, make_agent=build, **kwargs)
    return TestClient(app)


def scripted_game(client: TestClient, decks: list[list[str]], script: list[str], dealer: int = 1) -> str:
    """A match on these deals (the person is player_0), the computer playing ``script``."""
    table = Table(
        "normal",
        "standard",
        allowed=["normal"],
        make_agent=lambda n, r: Scripted(script),
        seed=1,
        decks=decks,
        dealer=dealer,
    )
    return add_table(client.app, table)  # type: ignore[arg-type]


def move(client: TestClient, gid: str, action: str, status: int = 200) -> dict[str, Any]:
    r = client.post(f"/api/games/{gid}/action", json={"action": action})
    assert r.status_code == status, r.json()
    return r.json()


def advance(client: TestClient, gid: str) -> dict[str, Any]:
    r = client.post(f"/api/games/{gid}/advance")
    assert r.status_code == 200, r.json()
    return r.json()


# ---------------------------------------------------------------------------- whole hands by name


# The person (non-dealer) holds As-4s, three 5s and two 9s; the stock's first card, 9h, gives gin.
GIN_DEAL = deck(
    "As 2s 3s 4s 5c 5d 5h 9c 9d Kh",
    "7c 7d 7s 8s Ts Qc Qd 2c 3d Jh",
    "Kd",
    "9h 6c",
)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with make_client(tmp_path) as c:
        yield c


def test_a_scripted_gin_shows_both_hands_and_the_points(client: TestClient) -> None:
    gid = scripted_game(client, [GIN_DEAL], ["pass"])
    view = client.get(f"/api/games/{gid}").json()
    assert view["phase"] == "upcard" and view["turn"] == "you" and view["discard_pile"] == ["Kd"]
    assert view["hand"]["melds"] == [["As", "2s", "3s", "4s"], ["5c", "5d", "5h"]]
    assert view["hand"]["deadwood"] == 9 + 9 + 10
    view = move(client, gid, "pass")
    assert view["turn"] == "opponent"
    view = advance(client, gid)
    assert view["events"][-1]["text"] == "Normal (Medium) passed on the upcard Kd."
    assert "draw_discard" not in view["legal"] and view["legal"] == ["draw_stock"]
    view = move(client, gid, "draw_stock")
    assert view["drawn"] == "9h" and view["events"][-1]["text"] == "You drew 9h from the stock."
    assert view["discard_hints"]["Kh"] == 0
    assert "knock Kh" in view["legal"]
    view = move(client, gid, "knock Kh")
    assert view["stage"] == "showdown" and view["turn"] is None
    show = view["showdown"]
    assert show["kind"] == "gin" and show["winner"] == "you" and show["knocker"] == "you"
    # Gin: 25 plus the computer's deadwood (7c 7d 7s is a set, the rest is loose: 8+10+10+10+2+3+10 = 53).
    assert show["points"] == 25 + 53
    assert show["opponent"]["melds"] == [["7s", "7c", "7d"]] and show["opponent"]["deadwood"] == 53
    assert show["you"]["deadwood_cards"] == [] and show["title"].startswith("You go gin")
    assert view["scores"] == {"you": 78, "opponent": 0}
    view = client.post(f"/api/games/{gid}/next").json()
    assert view["stage"] == "play" and view["hand_index"] == 1 and view["events"] == []


def test_the_computer_knocks_and_the_game_lays_off_for_the_person(client: TestClient) -> None:
    # The computer (dealer) melds 777, 8-9-T of spades and 2-3-4 of clubs; it draws 5d and knocks
    # with Kd, deadwood 5. The person melds 7h 8h 9h and lays off Js and Ac on its runs.
    layoff_deal = deck(
        "Js 7h Kc Qc Qh 2d 6d Ac Jc 9h",
        "7c 7d 7s 8s 9s Ts 2c 3c 4c Kd",
        "Ks",
        "8h 5d",
    )
    gid = scripted_game(client, [layoff_deal], ["pass", "draw_stock", "knock Kd"])
    move(client, gid, "pass")
    advance(client, gid)
    move(client, gid, "draw_stock")
    view = move(client, gid, "discard Kc")
    assert view["turn"] == "opponent"
    advance(client, gid)  # draws 5d (its card is not named)
    assert client.get(f"/api/games/{gid}").json()["events"][-1]["card"] is None
    view = advance(client, gid)
    show = view["showdown"]
    assert show["knocker"] == "opponent" and show["kind"] == "knock"
    assert sorted(show["you"]["layoffs"]) == ["Ac", "Js"]
    assert show["opponent"]["layoffs"] == [] and show["opponent"]["deadwood"] == 5
    assert show["you"]["melds"] == [["7h", "8h", "9h"]]
    # The person keeps Qc Qh 2d 6d Jc: 10+10+2+6+10 = 38 after the layoffs.
    assert show["you"]["deadwood"] == 38 and show["points"] == 38 - 5 and show["winner"] == "opponent"


def test_the_card_just_taken_cannot_be_discarded_and_nothing_changes(client: TestClient) -> None:
    gid = scripted_game(client, [GIN_DEAL], [])
    view = move(client, gid, "draw_discard")  # takes the upcard Kd
    assert view["taken"] == "Kd" and "discard Kd" not in view["legal"]
    table = client.app.state.tables[gid].table  # type: ignore[attr-defined]
    before_state = table.env.state().copy()
    r = client.post(f"/api/games/{gid}/action", json={"action": "discard Kd"})
    assert r.status_code == 409
    assert "you just took it from the discard pile" in r.json()["error"]
    assert np.array_equal(table.env.state(), before_state)
    assert client.get(f"/api/games/{gid}").json() == view


@pytest.mark.parametrize(
    ("action", "status", "words"),
    [
        ("draw_stock", 409, "already drawn"),
        ("discard 6c", 409, "not in your hand"),
        ("knock 9c", 409, "above the knock limit 10"),
        ("fly away", 400, "unknown action"),
        ("discard Zz", 400, "unknown card"),
        ("big_gin", 409, "no big gin"),
    ],
)
def test_illegal_moves_are_explained_and_change_nothing(
    client: TestClient, action: str, status: int, words: str
) -> None:
    gid = scripted_game(client, [GIN_DEAL], [])
    move(client, gid, "draw_discard")
    table = client.app.state.tables[gid].table  # type: ignore[attr-defined]
    before = client.get(f"/api/games/{gid}").json()
    state = table.env.state().copy()
    r = client.post(f"/api/games/{gid}/action", json={"action": action})
    assert r.status_code == status and words in r.json()["error"], r.json()
    assert np.array_equal(table.env.state(), state)
    assert client.get(f"/api/games/{gid}").json() == before


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"{not json", "not valid JSON"),
        (b'{"action": 5}', "action: Input should be a valid string"),
        (b'{"action": "pass", "cheat": true}', "cheat: Extra inputs are not permitted"),
        (b"{}", "action: Field required"),
        (b"[]", "malformed request"),
    ],
)
def test_malformed_requests_get_400_and_change_nothing(client: TestClient, body: bytes, words: str) -> None:
    gid = client.post("/api/games", json={"opponent": "random", "seed": 5}).json()["id"]
    before = client.get(f"/api/games/{gid}").json()
    r = client.post(f"/api/games/{gid}/action", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400 and words in r.json()["error"], r.json()
    assert client.get(f"/api/games/{gid}").json() == before


def test_out_of_turn_and_wrong_stage_requests_are_refused(client: TestClient) -> None:
    gid = scripted_game(client, [GIN_DEAL], ["pass"])
    r = client.post(f"/api/games/{gid}/advance")
    assert r.status_code == 409 and "your turn" in r.json()["error"]
    r = client.post(f"/api/games/{gid}/next")
    assert r.status_code == 409 and "still being played" in r.json()["error"]
    move(client, gid, "pass")
    r = client.post(f"/api/games/{gid}/action", json={"action": "pass"})
    assert r.status_code == 409 and "Normal (Medium)'s turn" in r.json()["error"]
    assert client.get("/api/games/nope").status_code == 404
    assert "no game with id" in client.post("/api/games/nope/advance").json()["error"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"opponent": "grandmaster"}, "unknown opponent 'grandmaster'; choose one of: random"),
        ({"opponent": "checkpoint:/etc/passwd"}, "unknown opponent"),
        ({"preset": "vegas"}, "unknown rules preset 'vegas'; known presets: standard"),
        ({"seed": -1}, "seed must be a non-negative integer"),
        ({"daily": "yes"}, "daily: Input should be a valid boolean"),
    ],
)
def test_bad_new_game_requests_are_refused(client: TestClient, body: dict[str, Any], words: str) -> None:
    r = client.post("/api/games", json=body)
    assert r.status_code == 400 and words in r.json()["error"], r.json()
    assert not client.app.state.tables  # type: ignore[attr-defined]


def test_a_failing_computer_player_is_reported_and_the_game_is_unchanged(tmp_path: Path) -> None:
    app = create_app(replay_dir=tmp_path, pace_ms=0, make_agent=lambda n, r: Raising(0))
    with TestClient(app, raise_server_exceptions=False) as c:
        gid = c.post("/api/games", json={"opponent": "random", "seed": 2}).json()["id"]
        view = c.get(f"/api/games/{gid}").json()
        if view["turn"] == "you":
            view = move(c, gid, "pass")
        r = c.post(f"/api/games/{gid}/advance")
        assert r.status_code == 500
        assert c.get(f"/api/games/{gid}").json() == view


# ---------------------------------------------------------------------------- privacy


def _hidden_cards(table: Table) -> set[str]:
    """Cards the person cannot know now: the stock, and the computer's cards never shown face up."""
    state = table.env.hand
    shown = {state.upcard} | {c for _, a in state.history if (c := _discarded(a)) is not None}
    hidden = set(state.stock) | (set(cards_of(state.hands[1])) - shown)
    return {CARD_NAMES[c] for c in hidden}


def _discarded(action: int) -> int | None:
    from ginenv.actions import action_card

    return action_card(action)


def _person_policy(view: dict[str, Any], rng: random.Random) -> str:
    legal = view["legal"]
    knocks = [a for a in legal if a.startswith("knock")]
    if knocks and rng.random() < 0.8:
        return rng.choice(knocks)
    return rng.choice([a for a in legal if not a.startswith("knock")] or legal)


@pytest.mark.parametrize("opponent", ["normal", "master", "neural"])
def test_no_answer_names_a_hidden_card_before_the_showdown(tmp_path: Path, opponent: str) -> None:
    rng = random.Random(opponent)
    with make_client(tmp_path) as c:
        view = c.post("/api/games", json={"opponent": opponent, "preset": "seed000_short", "seed": 7}).json()
        gid = view["id"]
        table: Table = c.app.state.tables[gid].table  # type: ignore[attr-defined]
        checked = 0
        for _ in range(600):
            if view["stage"] == "over":
                break
            if view["stage"] == "showdown":
                # The finished hand's stock is never shown, not even at its showdown, and the
                # computer's hand only when the showdown shows it (not after a dead hand).
                finished = table.finished_hand
                assert finished is not None
                names = card_names(view)
                assert not names & {CARD_NAMES[c] for c in finished.stock}
                if view["showdown"]["kind"] in ("dead", "truncated"):
                    assert view["showdown"]["opponent"] is None
                view = c.post(f"/api/games/{gid}/next").json()
                continue
            names = card_names(view)
            leaked = names & _hidden_cards(table)
            assert not leaked, f"the answer names hidden cards {leaked}: {json.dumps(view)[:400]}"
            checked += 1
            view = advance(c, gid) if view["turn"] == "opponent" else move(c, gid, _person_policy(view, rng))
        assert view["stage"] == "over" and checked > 20


def test_two_games_are_independent(client: TestClient) -> None:
    a = client.post("/api/games", json={"opponent": "random", "seed": 11}).json()
    b = client.post("/api/games", json={"opponent": "random", "seed": 11}).json()
    assert a["id"] != b["id"] and a["hand"] == b["hand"]
    while a["turn"] == "opponent":
        a = advance(client, a["id"])
    a2 = move(client, a["id"], a["legal"][0])
    assert a2["events"] != a["events"]
    assert client.get(f"/api/games/{b['id']}").json() == b


# ---------------------------------------------------------------------------- the rule presets


def test_the_options_carry_every_preset_with_its_label_help_and_rules(client: TestClient) -> None:
    presets = client.get("/api/options").json()["presets"]
    assert [p["name"] for p in presets] == list(PRESETS)
    for p in presets:
        assert p["label"] == PRESET_LABELS[p["name"]]
        assert p["help"] == preset_help(p["name"])
        assert Rules.from_dict(p["rules"]) == PRESETS[p["name"]]
    by_name = {p["name"]: p for p in presets}
    assert by_name["standard"]["help"] == (
        "The standard rules: knock with 10 or less, gin 25, undercut 25, match to 100."
    )
    assert by_name["seed000_short"]["help"] == (
        "Changes from the standard rules: big gin allowed (bonus 31); match to 50 points; game bonus 100; "
        "line bonus 25 per hand won; a shutout doubles the winner\u2019s bonuses."
    )
    assert by_name["seed004"]["help"] == (
        "Changes from the standard rules: undercut bonus 20; big gin allowed (bonus 31); the card just "
        "taken from the discard pile may be discarded again."
    )


def test_every_rule_option_has_words() -> None:
    assert set(RULE_WORDS) == {f.name for f in dataclasses.fields(Rules)}
    assert rule_words("oklahoma", False) == "no Oklahoma"
    assert rule_words("next_dealer", "winner") == "the hand\u2019s winner deals next"


def test_the_page_scripts_restate_no_preset() -> None:
    """The presets, labels and help text are served by /api/options; the page's scripts hold none."""
    scripts = "\n".join(p.read_text() for p in sorted(STATIC_DIR.glob("*.js")))
    for name in PRESETS:
        assert f"'{name}'" not in scripts and f'"{name}"' not in scripts, name
    for label in PRESET_LABELS.values():
        # A one-word label ("Oklahoma") is also a word of the help text: only a quoted one is a copy.
        assert all(f"{q}{label}{q}" not in scripts for q in "'\"`"), label
        assert " " not in label or label not in scripts, label
    for name, rules in PRESETS.items():
        for words in [*rule_changes(rules), preset_help(name)]:
            # The words as they stand, or as a template with the numbers left to fill in
            # (`match to ${value} points`).
            template = r"\$\{[^}]*\}".join(re.escape(part) for part in re.split(r"\d+", words))
            assert words not in scripts and not re.search(template, scripts), words
    assert "Changes from the standard rules" not in scripts


# ---------------------------------------------------------------------------- daily game, replays


def test_the_game_of_the_day_is_the_same_for_everyone_on_one_server_and_other_cards_on_another(
    tmp_path: Path,
) -> None:
    day = dt.date(2026, 12, 1)
    with make_client(tmp_path, state_dir=tmp_path / "one", today=lambda: day) as c:
        a = c.post("/api/games", json={"daily": True, "opponent": "master", "preset": "oklahoma"}).json()
        c.cookies.clear()  # another person on the same server
        b = c.post("/api/games", json={"daily": True}).json()
        secret = c.app.state.store.server_secret  # type: ignore[attr-defined]
    assert a["id"] != b["id"]
    assert a["daily"] == "2026-12-01" and a["opponent"]["name"] == "normal" and a["preset"] == "standard"
    assert (a["hand"], a["dealer"], a["discard_pile"]) == (b["hand"], b["dealer"], b["discard_pile"])
    # The cards are the server key's for that date: the date alone (the old seed 20261201) deals others.
    dealt = HandState(dealer=0 if a["dealer"] == "you" else 1, deck=daily_key(secret, day).deck(0, 0))
    assert set(parse_cards(" ".join(a["hand"]["cards"]))) == set(cards_of(dealt.hands[0]))
    with make_client(tmp_path, state_dir=tmp_path / "two", today=lambda: day) as c:
        other_server = c.post("/api/games", json={"daily": True}).json()
        seeded = c.post("/api/games", json={"opponent": "normal", "seed": 20261201}).json()
    assert (other_server["hand"], other_server["discard_pile"]) != (a["hand"], a["discard_pile"])
    assert seeded["hand"] != a["hand"]
    build = lambda n, r: harness_make_agent(n, rules=r)  # noqa: E731
    next_day = dt.date(2026, 12, 2)
    key = daily_key(secret, next_day)
    other = Table(daily=next_day, key=key, allowed=["normal"], make_agent=build).view()
    assert (other["hand"], other["discard_pile"]) != (a["hand"], a["discard_pile"])
    with pytest.raises(ValueError, match="server's key"):
        Table(daily=next_day, allowed=["normal"], make_agent=build)


def test_a_table_deals_from_its_own_secret_key_kept_out_of_every_view(tmp_path: Path) -> None:
    """Two tables set up alike deal other cards; the key is in the stored record only, and a table
    rebuilt from it deals the same cards; a seed the person chose deals its public cards."""
    build = lambda n, r: harness_make_agent(n, rules=r)  # noqa: E731
    one, two = (Table("random", allowed=["random"], make_agent=build, seed=3) for _ in range(2))
    assert one.view()["hand"] == two.view()["hand"]  # a chosen seed: the same public deal
    one, two = (Table("random", allowed=["random"], make_agent=build) for _ in range(2))
    assert one.key is not None and two.key is not None and one.key != two.key
    assert [int(c) for c in one.env.hand.deck] == one.key.deck(0, 0)
    assert one.view()["hand"] != two.view()["hand"]
    record = one.to_record()
    assert record["key"] == one.key.hex() and record["version"] == 2
    for seat in (0, None):
        assert one.key.hex() not in json.dumps(one.view(seat))
    again = Table.from_record(record, allowed=["random"], make_agent=build)
    assert again.env.hand.deck == one.env.hand.deck
    friends = Table(None, names=["Ann", ""])
    assert friends.key is not None and friends.key.hex() not in json.dumps(friends.view(1))


def test_a_stored_table_of_before_keyed_deals_goes_on_with_its_seeded_cards() -> None:
    build = lambda n, r: harness_make_agent(n, rules=r)  # noqa: E731
    table = Table("random", allowed=["random"], make_agent=build, seed=21)
    record = {**table.to_record(), "version": 1}
    del record["key"]
    record["key"] = None
    old = Table.from_record(record, allowed=["random"], make_agent=build)
    assert old.key is None and old.env.hand.deck == table.env.hand.deck


def _finish(c: TestClient, view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    gid = view["id"]
    for _ in range(2000):
        if view["stage"] == "over":
            return view
        if view["stage"] == "showdown":
            view = c.post(f"/api/games/{gid}/next").json()
        elif view["turn"] == "opponent":
            view = advance(c, gid)
        else:
            view = move(c, gid, _person_policy(view, rng))
    raise AssertionError("the match did not end")


def test_a_finished_match_is_saved_as_a_replay_that_plays_back(tmp_path: Path) -> None:
    with make_client(tmp_path) as c:
        view = c.post("/api/games", json={"opponent": "greedy", "preset": "seed000_short", "seed": 3}).json()
        view = _finish(c, view, random.Random(3))
        result = view["match_result"]
        assert result["winner"] in ("you", "opponent") and view["replay"]
        # seed000_short: game bonus 100 and line bonus 25 per hand won.
        winner = result["winner"]
        assert result["bonuses"][winner] >= 100 + 25 * result["hands_won"][winner]
        assert result["totals"][winner] == result["points"][winner] + result["bonuses"][winner]
        path = tmp_path / "replays" / view["replay"]
        match = play_replay(load_replay(path))
        assert match.result is not None and match.result.totals[0] == result["totals"]["you"]
        listed = c.get("/api/replays").json()["replays"]
        assert [r["name"] for r in listed] == [view["replay"]]
        frames = c.get(f"/api/replays/{view['replay']}").json()
        assert len(frames["hands"]) == result["hands_played"]
        last = frames["hands"][-1]["frames"][-1]
        assert "End of hand" in last["text"] and all(len(h["cards"]) >= 10 for h in last["hands"])


def test_an_abandoned_match_is_saved_and_can_be_viewed(client: TestClient, tmp_path: Path) -> None:
    view = client.post("/api/games", json={"opponent": "random", "seed": 4}).json()
    assert client.delete(f"/api/games/{view['id']}").json() == {"replay": None}  # no move: nothing saved
    view = client.post("/api/games", json={"opponent": "random", "seed": 4}).json()
    view = advance(client, view["id"]) if view["turn"] == "opponent" else move(client, view["id"], "pass")
    saved = client.delete(f"/api/games/{view['id']}").json()["replay"]
    assert saved and (tmp_path / "replays" / saved).is_file()
    assert client.get(f"/api/games/{view['id']}").status_code == 404
    frames = client.get(f"/api/replays/{saved}").json()
    assert frames["hands"][0]["result"] is None and len(frames["hands"][0]["frames"]) >= 2


def test_any_replay_file_is_shown_move_by_move(client: TestClient, tmp_path: Path) -> None:
    out = tmp_path / "demo.json"
    subprocess.run(
        [sys.executable, "-m", "ginenv.experiments.cli", "demo", "--save", str(out)],
        check=True,
        capture_output=True,
    )
    data = json.loads(out.read_text())
    frames = client.post("/api/replays/view", json=data).json()
    hand = frames["hands"][0]
    assert len(hand["frames"]) == len(data["hands"][0]["actions"]) + 1
    first = hand["frames"][0]
    # Frames show both hands: the deal's 20 cards, with the upcard on the pile.
    dealt = [c for h in first["hands"] for c in h["cards"]]
    assert sorted(dealt) == sorted(data["hands"][0]["deck"][:20]) and first["discard_pile"] == [
        data["hands"][0]["deck"][20]
    ]
    assert frames == replay_frames(data)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"{oops", "not valid JSON"),
        (b"[1, 2]", "a replay is a JSON object"),
        (b'{"format": "ginenv-replay", "version": 9}', "not a valid replay"),
        (b'{"format": "ginenv-replay", "version": ' + b"9" * 5001 + b"}", "an integer of 5001 digits"),
    ],
)
def test_malformed_replays_are_refused(client: TestClient, content: bytes, words: str) -> None:
    r = client.post("/api/replays/view", content=content)
    assert r.status_code == 400 and words in r.json()["error"], r.json()


def test_replay_names_cannot_leave_the_replay_folder(client: TestClient, tmp_path: Path) -> None:
    (tmp_path / "secret.json").write_text("{}")
    for name in ("..%2Fsecret.json", "%2E%2E%2Fsecret.json", ".hidden.json", "secret.txt"):
        r = client.get(f"/api/replays/{name}")
        assert r.status_code in (400, 404) and "error" in r.json()


def test_an_oversized_replay_is_refused(client: TestClient) -> None:
    r = client.post("/api/replays/view", content=b" " * 5_000_001)
    assert r.status_code == 413 and "at most" in r.json()["error"]


# ---------------------------------------------------------------------------- the command


def test_play_command_refuses_bad_options(tmp_path: Path) -> None:
    from ginenv.experiments.cli import main

    state = ["--state-dir", str(tmp_path / "tables")]
    assert main(["play", "--no-browser", "--opponent", "grandmaster", *state]) == 2
    assert main(["play", "--no-browser", "--rules", "vegas", "--replay-dir", str(tmp_path), *state]) == 2
    assert main(["play", "--no-browser", "--port", "70000", *state]) == 2


def test_play_command_serves_the_page_on_localhost(tmp_path: Path) -> None:
    options = ("--replay-dir", str(tmp_path), "--opponent", "easy", "--rules", "seed004")
    with play_server(*options, "--state-dir", str(tmp_path / "tables")) as (proc, url):
        options_seen = httpx.get(f"{url}/api/options", timeout=5).json()
        assert options_seen["start"] == {
            "opponent": "easy",
            "preset": "seed004",
            "daily": False,
            "autostart": True,
        }
        assert "<html" in httpx.get(url + "/", timeout=5).text.lower()
        from ginenv.experiments.cli import main

        port = url.rsplit(":", 1)[1]
        again = ["--replay-dir", str(tmp_path), "--state-dir", str(tmp_path / "tables")]
        assert main(["play", "--no-browser", "--port", port, *again]) == 2
        # A match left unfinished is saved when the server is stopped with Ctrl-C.
        api = page_client(url, timeout=5)
        view = api.post("/api/games", json={}).json()
        assert view["opponent"]["name"] == "easy" and view["preset"] == "seed004"
        gid = view["id"]
        move = "pass" if view["turn"] == "you" else None
        r = api.post(f"/api/games/{gid}/" + ("action" if move else "advance"), json={"action": move})
        assert r.status_code == 200, r.text
        out = stop(proc, signal.SIGINT)
        assert "1 unfinished match(es) saved" in out
        (saved,) = tmp_path.glob("*-you-vs-easy-*.json")
        assert len(play_replay(load_replay(saved)).hand.history) == 1  # type: ignore[union-attr]


def test_a_checkpoint_named_on_the_command_line_is_a_playable_opponent(tmp_path: Path) -> None:
    path = Path(__file__).resolve().parents[3] / "agents" / "neural" / "data" / "neural.pt"
    name = f"checkpoint:{path}"
    with TestClient(create_app(replay_dir=tmp_path, pace_ms=0, opponent=name)) as c:
        listed = [o["name"] for o in c.get("/api/options").json()["opponents"]]
        assert name in listed and "master" in listed
        view = c.post("/api/games", json={}).json()
        assert view["opponent"] == {
            "name": name,
            "label": "Network neural.pt",
            "kind": "computer",
            "joined": True,
            "connected": True,
        }
        view = _finish(c, view, random.Random(1))
        assert view["match_result"]["winner"] in ("you", "opponent")
        # Only the checkpoint the command line named: the page cannot load other files.
        other = c.post("/api/games", json={"opponent": f"checkpoint:{tmp_path / 'x.pt'}"})
        assert other.status_code == 400 and "unknown opponent" in other.json()["error"]


def test_a_file_agent_named_on_the_command_line_plays_and_no_other_file_can_be_named(tmp_path: Path) -> None:
    # A spec is code that runs in the server: the page may name only the one the command line gave.
    mine = tmp_path / "mine.py"
    mine.write_text("from ginenv.agents import GreedyAgent\n\n\nclass Mine(GreedyAgent):\n    pass\n")
    (tmp_path / "other.py").write_text("raise SystemExit('must never be imported')\n")
    name = f"{mine}:Mine"
    with TestClient(create_app(replay_dir=tmp_path, pace_ms=0, opponent=name)) as c:
        view = c.post("/api/games", json={"preset": "seed000_short"}).json()
        assert view["opponent"]["name"] == name and view["opponent"]["label"] == "Mine"
        view = _finish(c, view, random.Random(2))
        assert view["match_result"]["winner"] in ("you", "opponent")
        for other in (f"{tmp_path / 'other.py'}:Mine", "exec:python -c 1", "os:system"):
            r = c.post("/api/games", json={"opponent": other})
            assert r.status_code == 400 and "unknown opponent" in r.json()["error"], other


class Hangs(Agent):
    """What an exec: opponent that stopped answering reports."""

    name = "hangs"

    def act(self, observation: Any) -> int:
        raise AgentForfeit("no answer within 10 s")


def test_a_computer_that_forfeits_ends_the_match_for_the_person(tmp_path: Path) -> None:
    app = create_app(replay_dir=tmp_path, pace_ms=0, make_agent=lambda n, r: Hangs(0))
    with TestClient(app) as c:
        gid = c.post("/api/games", json={"opponent": "random", "seed": 2}).json()["id"]
        view = c.get(f"/api/games/{gid}").json()
        if view["turn"] == "you":
            view = move(c, gid, "pass")
        view = c.post(f"/api/games/{gid}/advance").json()
        assert view["stage"] == "over" and view["turn"] is None
        assert view["match_result"]["winner"] == "you"
        assert view["match_result"]["forfeit"] == "no answer within 10 s"
        assert "forfeits the match: no answer within 10 s" in view["events"][-1]["text"]
        # Saved as a replay like any finished match once a move was made (none if it was the first).
        assert view["replay"] is None or (tmp_path / view["replay"]).is_file()
        r = c.post(f"/api/games/{gid}/advance")
        assert r.status_code == 409 and "the match is over" in r.json()["error"]


def test_card_names_skips_random_identifiers_but_not_cards() -> None:
    # A table id once read "GOuVvdNa88PaX-Qd": token_urlsafe can spell a card by chance.
    view = {"id": "GOuVvdNa88PaX-Qd", "invite": "/#join=x-7h", "hand": ["Qd", "Ts"], "events": [{"id": "As"}]}
    assert card_names(view) == {"Qd", "Ts"}
    assert card_names({"text": "takes the 7h"}) == {"7h"}


def test_an_exec_opponent_cannot_see_the_tables_or_the_replays(tmp_path: Path) -> None:
    from ginenv.agents.sandbox import strict_problem

    from ginenv.rules import Rules

    state, replays = tmp_path / "state", tmp_path / "replays"
    app = create_app(state_dir=state, replay_dir=replays, opponent="exec:python3 -c 1")
    agent = app.state.play.build("exec:python3 -c 1", Rules())
    # The strict sandbox where the machine has it (the server holds every table's key), the state
    # folder (the keys) and the replay folder (whole decks) hidden from the program either way.
    assert agent.sandbox.mode == ("strict" if strict_problem() is None else "basic")
    assert {str(state.resolve()), str(replays.resolve())} <= set(agent.sandbox.hide)
    app.state.store.close()
