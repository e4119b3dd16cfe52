"""Replays: a hand or a match written as JSON (rules, deals, actions) and played back exactly.

The format (``"format": "ginenv-replay"``, ``"version": 1``) names cards and actions, never raw
ids, so a replay reads like a score sheet::

    {"format": "ginenv-replay", "version": 1, "mode": "hand" | "match",
     "rules": {...every Rules field...}, "first_dealer": 0,
     "hands": [{"dealer": 0, "deck": ["As", ...52 names], "actions": ["pass", "draw_stock", ...],
                "result": {"kind": "knock", "winner": 1, "points": 12, ...}}],
     "match_result": {...} | null}

:func:`play_replay` rebuilds the game from the deals and actions and checks every recorded result
against the one the engine computes; anything malformed or inconsistent raises :class:`ReplayError`
with the hand and action where it went wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ginenv.actions import ACTION_NAMES, UnknownActionError, action_id
from ginenv.cards import CARD_NAMES, CardError
from ginenv.engine import HandState, IllegalActionError
from ginenv.match import Match
from ginenv.rules import Rules, RulesError

FORMAT = "ginenv-replay"
VERSION = 1


class ReplayError(ValueError):
    """A replay file is malformed, or replaying it does not give what it records."""


def _hand_entry(state: HandState) -> dict[str, Any]:
    return {
        "dealer": state.dealer,
        "deck": [CARD_NAMES[c] for c in state.deck],
        "actions": [ACTION_NAMES[a] for _, a in state.history],
        "result": state.result.to_dict() if state.result else None,
    }


def hand_replay(state: HandState) -> dict[str, Any]:
    """Replay data of one hand (finished or not)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "mode": "hand",
        "rules": state.rules.to_dict(),
        "first_dealer": state.dealer,
        "hands": [_hand_entry(state)],
        "match_result": None,
    }


def match_replay(match: Match) -> dict[str, Any]:
    """Replay data of a match: every finished hand, plus the hand in progress if any."""
    hands = [
        {
            "dealer": r.dealer,
            "deck": [CARD_NAMES[c] for c in r.deck],
            "actions": [ACTION_NAMES[a] for a in r.actions],
            "result": r.result.to_dict(),
        }
        for r in match.records
    ]
    if not match.is_over and match.hand.history:
        hands.append(_hand_entry(match.hand))
    return {
        "format": FORMAT,
        "version": VERSION,
        "mode": "match",
        "rules": match.rules.to_dict(),
        "first_dealer": match.first_dealer,
        "hands": hands,
        "match_result": match.result.to_dict() if match.result else None,
    }


def save_replay(data: dict[str, Any], path: str | Path) -> None:
    """Write replay data as indented JSON."""
    Path(path).write_text(json.dumps(data, indent=1) + "\n")


def load_replay(path: str | Path) -> dict[str, Any]:
    """Read a replay file (JSON); unreadable or non-JSON files raise :class:`ReplayError`."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as err:
        raise ReplayError(f"cannot read replay {path}: {err.strerror or err}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ReplayError(f"replay {path} is not valid JSON: {err}") from None
    if not isinstance(data, dict):
        raise ReplayError(f"replay {path} must hold a JSON object, got {type(data).__name__}")
    return data


def _need(cond: bool, message: str) -> None:
    if not cond:
        raise ReplayError(message)


def _check_header(data: Any) -> tuple[Rules, list[dict[str, Any]]]:
    _need(isinstance(data, dict), "a replay must be a JSON object")
    _need(data.get("format") == FORMAT, f"not a ginenv replay: 'format' must be {FORMAT!r}")
    _need(
        data.get("version") == VERSION,
        f"unsupported replay version {data.get('version')!r}; this ginenv reads version {VERSION}",
    )
    _need(data.get("mode") in ("hand", "match"), "'mode' must be 'hand' or 'match'")
    try:
        rules = Rules.from_dict(data.get("rules", {}))
    except (RulesError, TypeError) as err:
        raise ReplayError(f"invalid rules in replay: {err}") from None
    hands = data.get("hands")
    _need(isinstance(hands, list) and len(hands) > 0, "'hands' must be a non-empty list")
    for i, hand in enumerate(hands):
        _need(isinstance(hand, dict), f"hand {i}: must be an object with dealer, deck, actions")
        _need(hand.get("dealer") in (0, 1), f"hand {i}: 'dealer' must be 0 or 1")
        _need(isinstance(hand.get("deck"), list), f"hand {i}: 'deck' must be a list of 52 card names")
        _need(isinstance(hand.get("actions"), list), f"hand {i}: 'actions' must be a list of names")
    if data["mode"] == "hand":
        _need(len(hands) == 1, f"a hand replay holds exactly one hand, got {len(hands)}")
    return rules, hands


def _apply_actions(i: int, step: Any, actions: list[Any]) -> None:
    for j, name in enumerate(actions):
        try:
            step(action_id(name))
        except (UnknownActionError, IllegalActionError, ValueError) as err:
            raise ReplayError(f"hand {i}, action {j} ({name!r}): {err}") from None


def _check_result(i: int, recorded: Any, actual: dict[str, Any] | None) -> None:
    if recorded is None:
        return
    if recorded != actual:
        raise ReplayError(f"hand {i}: the replay records result {recorded} but replaying gives {actual}")


def play_replay(data: dict[str, Any]) -> HandState | Match:
    """Rebuild a hand or match from replay data, checking every recorded result."""
    rules, hands = _check_header(data)
    try:
        if data["mode"] == "hand":
            entry = hands[0]
            state = HandState(rules, entry["dealer"], deck=entry["deck"])
            _apply_actions(0, state.step, entry["actions"])
            _check_result(0, entry.get("result"), state.result.to_dict() if state.result else None)
            return state
        first = data.get("first_dealer", hands[0]["dealer"])
        _need(first == hands[0]["dealer"], "'first_dealer' differs from the first hand's dealer")
        match = Match(rules, first, decks=[h["deck"] for h in hands])
    except CardError as err:
        raise ReplayError(f"invalid deck in replay: {err}") from None
    for i, entry in enumerate(hands):
        _need(not match.is_over, f"hand {i}: the match was already over after hand {i - 1}")
        _need(
            match.hand.dealer == entry["dealer"],
            f"hand {i}: records dealer {entry['dealer']} but the rules make player "
            f"{match.hand.dealer} the dealer",
        )
        hand = match.hand
        try:
            _apply_actions(i, match.step, entry["actions"])
        except CardError as err:
            raise ReplayError(f"invalid deck in replay: {err}") from None
        last = i == len(hands) - 1
        _need(hand.is_over or last, f"hand {i}: the actions end before the hand does")
        _check_result(i, entry.get("result"), hand.result.to_dict() if hand.result else None)
    recorded = data.get("match_result")
    if recorded is not None:
        actual = match.result.to_dict() if match.result else None
        _need(recorded == actual, f"the replay records match result {recorded} but replaying gives {actual}")
    return match
