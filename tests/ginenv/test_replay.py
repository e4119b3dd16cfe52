"""Replays: round trips to the identical result, and every kind of malformed file refused."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from policies import cycle_the_pile, deck, knock_first, never_knock

from ginenv.actions import action_id
from ginenv.engine import DEFAULT_TURN_LIMIT, HandState, IllegalActionError
from ginenv.match import Match
from ginenv.replay import (
    ReplayError,
    hand_replay,
    load_replay,
    match_replay,
    parse_replay,
    play_replay,
    save_replay,
)
from ginenv.rules import PRESETS, Rules


def finished_hand(seed: int) -> HandState:
    state = HandState(PRESETS["seed004"], dealer=seed % 2, rng=random.Random(seed))
    while not state.is_over:
        state.step(knock_first(state))
    return state


def finished_match(seed: int) -> Match:
    match = Match(PRESETS["seed000_short"], dealer=0, rng=random.Random(seed))
    while not match.is_over:
        match.step(knock_first(match.hand))
    return match


@pytest.mark.parametrize("seed", range(5))
def test_hand_round_trip(seed: int, tmp_path: Path) -> None:
    state = finished_hand(seed)
    path = tmp_path / "hand.json"
    save_replay(hand_replay(state), path)
    again = play_replay(load_replay(path))
    assert isinstance(again, HandState)
    assert again.result == state.result
    assert again.history == state.history


def test_match_round_trip(tmp_path: Path) -> None:
    match = finished_match(11)
    path = tmp_path / "match.json"
    save_replay(match_replay(match), path)
    again = play_replay(load_replay(path))
    assert isinstance(again, Match)
    assert again.result == match.result
    assert [r.result for r in again.records] == [r.result for r in match.records]


def test_unfinished_hand_replays_to_the_same_state() -> None:
    state = HandState(rng=random.Random(5))
    for _ in range(9):
        state.step(knock_first(state))
    again = play_replay(json.loads(json.dumps(hand_replay(state))))
    assert isinstance(again, HandState)
    assert again.hands == state.hands and again.phase == state.phase


def tampered(data: dict[str, Any], edit: Any) -> dict[str, Any]:
    data = copy.deepcopy(data)
    edit(data)
    return data


@pytest.fixture(scope="module")
def match_data() -> dict[str, Any]:
    return match_replay(finished_match(2))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(format="other"), "not a ginenv replay"),
        (lambda d: d.update(version=99), "unsupported replay version"),
        (lambda d: d.update(mode="tournament"), "'mode'"),
        (lambda d: d["rules"].update(colour="red"), "unknown rule option"),
        (lambda d: d["rules"].update(knock_limit=-1), "knock_limit"),
        (lambda d: d.update(hands=[]), "non-empty"),
        (lambda d: d["hands"][0]["deck"].pop(), "52"),
        (lambda d: d["hands"][0]["deck"].__setitem__(0, d["hands"][0]["deck"][1]), "twice"),
        (lambda d: d["hands"][0]["deck"].__setitem__(0, "Xx"), "unknown card"),
        (lambda d: d["hands"][0]["actions"].__setitem__(0, "fly"), "unknown action"),
        (lambda d: d["hands"][0]["actions"].__setitem__(0, "draw_stock"), "not legal"),
        (lambda d: d["hands"][0]["result"].update(points=999), "records result"),
        (lambda d: d["hands"][0]["actions"].pop(), "end before the hand does"),
        (lambda d: d["hands"][1].update(dealer=1 - d["hands"][1]["dealer"]), "dealer"),
        (lambda d: d["hands"].append(copy.deepcopy(d["hands"][-1])), "already over"),
        (lambda d: d["match_result"].update(winner=1 - d["match_result"]["winner"]), "match result"),
    ],
)
def test_malformed_replays_are_refused(match_data: dict[str, Any], edit: Any, message: str) -> None:
    with pytest.raises(ReplayError, match=message):
        play_replay(tampered(match_data, edit))


def test_unreadable_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match="cannot read"):
        load_replay(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ReplayError, match="not valid JSON"):
        load_replay(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(ReplayError, match="JSON object"):
        load_replay(bad)


# ---------------------------------------------------------------------------- the turn limit


def truncated_hand(turn_limit: int = 5) -> HandState:
    state = HandState(dealer=1, deck=deck(OTHER_HAND, KNOCK_HAND, "5h"), turn_limit=turn_limit)
    while not state.is_over:
        state.step(cycle_the_pile(state))
    return state


# 2s3s4s5s and 6d7d8d9d melded, 9c Ah loose; drawing Kh and knocking with it leaves deadwood 10.
KNOCK_HAND = "2s 3s 4s 5s 6d 7d 8d 9d 9c Ah"
OTHER_HAND = "Ks Qs Jc Tc 8h 7c 6h 4h 3c 2d"  # no melds


def test_replays_record_the_turn_limit() -> None:
    assert hand_replay(HandState(turn_limit=37))["turn_limit"] == 37
    assert match_replay(Match(turn_limit=41))["turn_limit"] == 41
    assert play_replay(hand_replay(HandState(turn_limit=37))).turn_limit == 37  # type: ignore[union-attr]


def test_a_truncated_hand_round_trips_and_is_checked(tmp_path: Path) -> None:
    state = truncated_hand()
    data = hand_replay(state)
    assert data["hands"][0]["result"]["kind"] == "truncated"
    path = tmp_path / "hand.json"
    save_replay(data, path)
    again = play_replay(load_replay(path))
    assert isinstance(again, HandState)
    assert again.result == state.result and again.draws == 5
    # Replayed under another limit, the same actions no longer give the recorded game.
    with pytest.raises(ReplayError, match=r"end before the hand does|not legal|records result"):
        play_replay(tampered(data, lambda d: d.update(turn_limit=4)))
    with pytest.raises(ReplayError, match="hand has not ended"):
        play_replay(tampered(data, lambda d: d.update(turn_limit=6)))
    with pytest.raises(ReplayError, match="records result"):
        play_replay(tampered(data, lambda d: d["hands"][0]["result"].update(kind="dead")))


def test_a_replay_without_a_turn_limit_uses_the_default() -> None:
    state = finished_hand(3)
    data = hand_replay(state)
    del data["turn_limit"]
    again = play_replay(data)
    assert again.turn_limit == DEFAULT_TURN_LIMIT  # type: ignore[union-attr]


def truncated_match() -> Match:
    knock_deal = deck(KNOCK_HAND, OTHER_HAND, "5h", "Kh")
    match = Match(Rules(), dealer=1, decks=[knock_deal, deck(OTHER_HAND, KNOCK_HAND, "5h")], turn_limit=3)
    for name in ("pass", "pass", "draw_stock", "knock Kh"):
        match.step(action_id(name))
    while not match.is_over:
        match.step(cycle_the_pile(match.hand))
    return match


def test_a_truncated_match_round_trips_and_is_checked() -> None:
    match = truncated_match()
    data = json.loads(json.dumps(match_replay(match)))
    assert [h["result"]["kind"] for h in data["hands"]] == ["knock", "truncated"]
    assert data["match_result"] is None
    again = play_replay(data)
    assert isinstance(again, Match)
    assert again.truncated and again.result is None and again.scores == [60, 0]
    with pytest.raises(ReplayError, match="was truncated"):
        play_replay(tampered(data, lambda d: d.update(match_result={"winner": 0})))
    with pytest.raises(ReplayError, match="records result"):
        play_replay(tampered(data, lambda d: d["hands"][1]["result"].update(kind="dead")))
    with pytest.raises(ReplayError, match="already over"):
        play_replay(tampered(data, lambda d: d["hands"].append(copy.deepcopy(d["hands"][0]))))


# ---------------------------------------------------------------------------- seed 004's re-discard


def rediscard_hand(rules: Rules) -> HandState:
    # The dealer takes the upcard 5h and throws it straight back: legal under seed 004 only.
    state = HandState(rules, dealer=1, deck=deck(KNOCK_HAND, OTHER_HAND, "5h", "Kh"))
    for name in ("pass", "draw_discard", "discard 5h", "draw_stock", "knock Kh"):
        state.step(action_id(name))
    return state


def test_replays_honour_discard_taken_card() -> None:
    state = rediscard_hand(PRESETS["seed004"])
    data = json.loads(json.dumps(hand_replay(state)))
    assert data["rules"]["discard_taken_card"] is True
    again = play_replay(data)
    assert isinstance(again, HandState) and again.result == state.result
    with pytest.raises(ReplayError, match=r"action 2 \('discard 5h'\).*not legal"):
        play_replay(tampered(data, lambda d: d["rules"].update(discard_taken_card=False)))
    with pytest.raises(IllegalActionError):
        rediscard_hand(PRESETS["standard"])


# ---------------------------------------------------------------------------- results and types


@pytest.fixture(scope="module")
def hand_data() -> dict[str, Any]:
    return hand_replay(finished_hand(1))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["hands"][0].pop("result"), "'result' is missing"),
        (lambda d: d["hands"][0].update(result=None), "records no result"),
        (lambda d: d["hands"][0].update(result="knock"), "'result' must be an object or null"),
        (
            lambda d: d["hands"][0]["result"].update(winner=bool(d["hands"][0]["result"]["winner"])),
            "'winner' must be 0, 1 or null",
        ),
        (
            lambda d: d["hands"][0]["result"].update(points=float(d["hands"][0]["result"]["points"])),
            "'points' must be an integer",
        ),
        (lambda d: d["hands"][0]["result"].update(knocker=1.0), "'knocker' must be 0, 1 or null"),
        (
            lambda d: d["hands"][0]["result"].update(deadwood=[1.0, 2]),
            "'deadwood' must be a list of two integers",
        ),
        (lambda d: d["hands"][0]["result"].update(kind="win"), "'kind' must be one of"),
        (lambda d: d["hands"][0]["result"].update(layoffs="7h"), "'layoffs' must be a list"),
        (lambda d: d["hands"][0]["result"].update(note="x"), "unknown key.*'note'"),
        (
            lambda d: d["hands"][0].update(dealer=float(d["hands"][0]["dealer"])),
            "'dealer' must be 0 or 1, got 1.0|got 0.0",
        ),
        (lambda d: d["hands"][0].update(dealer=True), "'dealer' must be 0 or 1, got True"),
        (lambda d: d["hands"][0].update(comment="x"), "hand 0: unknown key.*allowed keys: dealer, deck"),
        (lambda d: d.update(first_dealer=1.0), "'first_dealer' must be 0 or 1"),
        (lambda d: d.update(version=1.0), "unsupported replay version"),
        (lambda d: d.update(version=True), "unsupported replay version"),
        (lambda d: d.update(turn_limit=0), "turn_limit"),
        (lambda d: d.update(turn_limit=1.5), "turn_limit"),
        (lambda d: d.update(turn_limit=True), "turn_limit"),
        (lambda d: d.update(turn_limit="100"), "turn_limit"),
        (lambda d: d.update(extra=1), "replay: unknown key.*'extra'.*allowed keys"),
        (lambda d: d.pop("rules"), "'rules' is missing"),
        (lambda d: d.update(rules=[1]), "rules must be a mapping"),
        (lambda d: d.update(match_result={"winner": 0}), "hand replay has no match result"),
    ],
)
def test_missing_results_and_wrong_types_are_refused(
    hand_data: dict[str, Any], edit: Any, message: str
) -> None:
    play_replay(copy.deepcopy(hand_data))  # the untouched replay is fine
    with pytest.raises(ReplayError, match=message):
        play_replay(tampered(hand_data, edit))


def test_an_unfinished_hand_may_not_record_a_result(hand_data: dict[str, Any]) -> None:
    data = tampered(hand_data, lambda d: d["hands"][0]["actions"].pop())
    with pytest.raises(ReplayError, match="has not ended"):
        play_replay(data)
    data["hands"][0]["result"] = None
    assert not play_replay(data).is_over  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["hands"][0].pop("result"), "hand 0: 'result' is missing"),
        (lambda d: d["hands"][-1].update(result=None), "records no result"),
        (lambda d: d.pop("match_result"), "records no 'match_result'"),
        (lambda d: d.update(match_result=None), "records no 'match_result'"),
        (
            lambda d: d["match_result"].update(shutout=int(d["match_result"]["shutout"])),
            "'shutout' must be bool",
        ),
        (
            lambda d: d["match_result"].update(hands_played=float(d["match_result"]["hands_played"])),
            "'hands_played' must be int",
        ),
        (
            lambda d: d["match_result"].update(winner=bool(d["match_result"]["winner"])),
            "'winner' must be int",
        ),
        (lambda d: d["match_result"].update(totals=[1.0, 2.0]), "'totals' must be list"),
        (lambda d: d["match_result"].update(bonus=3), "match_result: unknown key"),
    ],
)
def test_match_results_missing_or_of_wrong_types_are_refused(
    match_data: dict[str, Any], edit: Any, message: str
) -> None:
    with pytest.raises(ReplayError, match=message):
        play_replay(tampered(match_data, edit))


# ---------------------------------------------------------------------------- deep nesting


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_deeply_nested_json_is_refused_without_a_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"format": "ginenv-replay", "hands": ' + nested(200_000) + "}")
    with pytest.raises(ReplayError, match="nested too deeply"):
        load_replay(path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d, v: d["hands"][0].update(dealer=v), "'dealer' must be 0 or 1"),
        (lambda d, v: d["rules"].update(knock_limit=v), "knock_limit"),
        (lambda d, v: d.update(version=v), "unsupported replay version"),
        (lambda d, v: d["hands"][0]["result"].update(winner=v), "'winner'"),
        (lambda d, v: d["hands"][0]["actions"].__setitem__(0, v), "action 0"),
        (lambda d, v: d["hands"][0]["deck"].__setitem__(0, v), "card"),
    ],
)
def test_deep_values_give_short_messages(hand_data: dict[str, Any], edit: Any, message: str) -> None:
    # As deep as the JSON decoder allows: every message shows a shortened value.
    value = json.loads(nested(900))
    with pytest.raises(ReplayError, match=message) as info:
        play_replay(tampered(hand_data, lambda d: edit(d, value)))
    assert len(str(info.value)) < 600


def test_a_match_truncated_at_its_hand_limit_round_trips() -> None:
    match = Match(Rules(), dealer=0, rng=random.Random(3), hand_limit=4)
    while not match.is_over:
        match.step(never_knock(match.hand))
    data = json.loads(json.dumps(match_replay(match)))
    assert data["hand_limit"] == 4 and len(data["hands"]) == 4 and data["match_result"] is None
    again = play_replay(data)
    assert isinstance(again, Match) and again.truncated and again.result is None
    # Under a larger limit the same record is a match still in progress, not a truncated one.
    longer = play_replay(tampered(data, lambda d: d.update(hand_limit=5)))
    assert isinstance(longer, Match) and not longer.is_over
    with pytest.raises(ReplayError, match="hand_limit"):
        play_replay(tampered(data, lambda d: d.update(hand_limit=0)))


def test_a_match_replay_may_name_its_players() -> None:
    match = Match(Rules(target=10), 0, rng=random.Random(2))
    while not match.is_over:
        match.step(match.hand.legal_actions()[0])
    data = match_replay(match, ["Ann", "Bob"])
    assert data["players"] == ["Ann", "Bob"]
    assert parse_replay(json.dumps(data))["players"] == ["Ann", "Bob"]
    play_replay(data)
    for bad in (["Ann"], ["Ann", ""], ["Ann", 3], ["Ann", "x" * 41], "Ann Bob"):
        with pytest.raises(ReplayError, match="'players' must be the two players' names"):
            play_replay({**data, "players": bad})
    assert "players" not in match_replay(match)
