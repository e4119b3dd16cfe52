"""Replays: round trips to the identical result, and every kind of malformed file refused."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from policies import knock_first

from ginenv.engine import HandState
from ginenv.match import Match
from ginenv.replay import ReplayError, hand_replay, load_replay, match_replay, play_replay, save_replay
from ginenv.rules import PRESETS


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
