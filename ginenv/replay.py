"""Replays: a hand or a match written as JSON (rules, deals, actions) and played back exactly.

The format (``"format": "ginenv-replay"``, ``"version": 1``) names cards and actions, never raw
ids, so a replay reads like a score sheet::

    {"format": "ginenv-replay", "version": 1, "mode": "hand" | "match",
     "rules": {...every Rules field...}, "first_dealer": 0, "turn_limit": 100,
     "hands": [{"dealer": 0, "deck": ["As", ...52 names], "actions": ["pass", "draw_stock", ...],
                "result": {"kind": "knock", "winner": 1, "points": 12, "knocker": 0,
                           "deadwood": [9, 21], "layoffs": ["7h"]}}],
     "match_result": {...} | null, "players": ["Ann", "Bob"]}

``players`` (optional) names the two seats, ``player_0`` first.

``turn_limit`` is the engine's draws per hand (:data:`ginenv.engine.DEFAULT_TURN_LIMIT` when absent,
as in replays written before it was recorded); a hand that reached it records the result kind
``"truncated"`` and is checked like any other. A match replay also records ``hand_limit`` (hands
after which a match without a winner is truncated; :data:`ginenv.match.DEFAULT_HAND_LIMIT` when
absent).

:func:`play_replay` rebuilds the game from the deals and actions and checks every recorded result
against the one the engine computes. Every hand that ends must record its result (``null`` only for
a hand still in progress, the last one), and a match that ends with a winner must record its
``match_result``. Values must have their exact JSON types (``1``, not ``1.0`` or ``true``), and
unknown keys are refused, so a typo is never silently ignored. Anything malformed or inconsistent
raises :class:`ReplayError` saying what was wrong, what is allowed, and the hand and action where it
went wrong.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ginenv.actions import ACTION_NAMES, UnknownActionError, action_id
from ginenv.cards import CARD_NAMES, CardError
from ginenv.cards import short_repr as _show
from ginenv.engine import DEFAULT_TURN_LIMIT, HandState, IllegalActionError, check_turn_limit
from ginenv.kernels.hand import RESULT_KINDS
from ginenv.match import DEFAULT_HAND_LIMIT, Match, check_hand_limit
from ginenv.rules import Rules, RulesError
from ginenv.validation import is_int

FORMAT = "ginenv-replay"
VERSION = 1


class ReplayError(ValueError):
    """A replay file is malformed, or replaying it does not give what it records."""


# Keys of a replay, of one hand in it, of a hand's result and of a match result (in written order).
_TOP_KEYS = (
    "format",
    "version",
    "mode",
    "rules",
    "first_dealer",
    "turn_limit",
    "hand_limit",
    "hands",
    "match_result",
    "players",
)
#: The longest player name a replay records.
MAX_PLAYER_NAME = 40
_HAND_KEYS = ("dealer", "deck", "actions", "result")


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
        "turn_limit": state.turn_limit,
        "hands": [_hand_entry(state)],
        "match_result": None,
    }


def match_replay(match: Match, players: Sequence[str] | None = None) -> dict[str, Any]:
    """Replay data of a match: every finished hand, plus the hand in progress if any; ``players``:
    the two players' names (``player_0`` first), recorded when given.

    A truncated match records its hands (the last one's result kind is ``"truncated"``) and no
    match result.
    """
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
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "mode": "match",
        "rules": match.rules.to_dict(),
        "first_dealer": match.first_dealer,
        "turn_limit": match.turn_limit,
        "hand_limit": match.hand_limit,
        "hands": hands,
        "match_result": match.result.to_dict() if match.result else None,
    }
    if players is not None:
        data["players"] = list(players)
        _check_players(data["players"])
    return data


def save_replay(data: dict[str, Any], path: str | Path) -> None:
    """Write replay data as indented JSON."""
    Path(path).write_text(json.dumps(data, indent=1) + "\n")


#: Most digits of a number in a replay: card ids, seats, points and seeds all fit in 20.
MAX_DIGITS = 20


def _bounded_int(text: str) -> int:
    # Python refuses to convert integers of over 4300 digits with a bare ValueError; no replay
    # number has more than MAX_DIGITS, so anything longer is refused here, before converting.
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ReplayError(f"holds an integer of {len(text.lstrip('-'))} digits (at most {MAX_DIGITS})")
    return int(text)


def parse_replay(text: str | bytes, where: str = "the replay") -> dict[str, Any]:
    """Parse the JSON text of a replay; malformed JSON, integers longer than :data:`MAX_DIGITS`
    digits, deep nesting or a non-object raise :class:`ReplayError` naming ``where``."""
    try:
        data = json.loads(text, parse_int=_bounded_int)
    except ReplayError as err:
        raise ReplayError(f"{where} is not a ginenv replay: it {err}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ReplayError(f"{where} is not valid JSON: {err}") from None
    except RecursionError:
        # The JSON decoder recurses once per nesting level; no replay nests more than four deep.
        raise ReplayError(
            f"{where} is nested too deeply to be a replay (a replay nests at most 4 levels)"
        ) from None
    if not isinstance(data, dict):
        raise ReplayError(
            f"{where} must hold a JSON object (a replay is a JSON object), got {type(data).__name__}"
        )
    return data


def load_replay(path: str | Path) -> dict[str, Any]:
    """Read a replay file (JSON); unreadable or malformed files raise :class:`ReplayError`."""
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise ReplayError(f"cannot read replay {path}: {err.strerror or err}") from None
    return parse_replay(raw, f"replay {path}")


def _need(cond: bool, message: str) -> None:
    if not cond:
        raise ReplayError(message)


def _is_seat(value: object) -> bool:
    return is_int(value) and value in (0, 1)


def _check_players(players: object) -> None:
    _need(
        isinstance(players, list)
        and len(players) == 2
        and all(isinstance(p, str) and 0 < len(p) <= MAX_PLAYER_NAME for p in players),
        f"'players' must be the two players' names (strings of 1 to {MAX_PLAYER_NAME} characters), "
        f"got {_show(players)}",
    )


def _check_keys(where: str, data: dict[Any, Any], allowed: tuple[str, ...]) -> None:
    unknown = [k for k in data if k not in allowed]
    _need(
        not unknown,
        f"{where}: unknown key(s) {', '.join(_show(k) for k in unknown)}; allowed keys: {', '.join(allowed)}",
    )


def _check_header(data: Any) -> tuple[Rules, int, list[dict[str, Any]]]:
    _need(isinstance(data, dict), f"a replay must be a JSON object, got {type(data).__name__}")
    _need(data.get("format") == FORMAT, f"not a ginenv replay: 'format' must be {FORMAT!r}")
    version = data.get("version")
    _need(
        is_int(version) and version == VERSION,
        f"unsupported replay version {_show(version)}; this ginenv reads version {VERSION}",
    )
    _check_keys("replay", data, _TOP_KEYS)
    if "players" in data:
        _check_players(data["players"])
    _need(
        data.get("mode") in ("hand", "match"),
        f"'mode' must be 'hand' or 'match', got {_show(data.get('mode'))}",
    )
    _need("rules" in data, "'rules' is missing: a replay records the rule options it was played with")
    try:
        rules = Rules.from_dict(data["rules"])
    except RulesError as err:
        raise ReplayError(f"invalid rules in replay: {err}") from None
    try:
        turn_limit = check_turn_limit(data.get("turn_limit", DEFAULT_TURN_LIMIT))
    except ValueError as err:
        raise ReplayError(f"invalid 'turn_limit' in replay: {err}") from None
    hands = data.get("hands")
    _need(isinstance(hands, list) and len(hands) > 0, "'hands' must be a non-empty list")
    for i, hand in enumerate(hands):
        _need(
            isinstance(hand, dict),
            f"hand {i}: must be an object with {', '.join(_HAND_KEYS)}, got {type(hand).__name__}",
        )
        _check_keys(f"hand {i}", hand, _HAND_KEYS)
        _need(
            _is_seat(hand.get("dealer")),
            f"hand {i}: 'dealer' must be 0 or 1, got {_show(hand.get('dealer'))}",
        )
        _need(isinstance(hand.get("deck"), list), f"hand {i}: 'deck' must be a list of 52 card names")
        _need(isinstance(hand.get("actions"), list), f"hand {i}: 'actions' must be a list of action names")
        _need(
            "result" in hand,
            f"hand {i}: 'result' is missing; every hand records its result (null only for a hand "
            "still in progress)",
        )
    first = data.get("first_dealer", hands[0]["dealer"])
    _need(_is_seat(first), f"'first_dealer' must be 0 or 1, got {_show(first)}")
    _need(first == hands[0]["dealer"], "'first_dealer' differs from the first hand's dealer")
    if data["mode"] == "hand":
        _need(len(hands) == 1, f"a hand replay holds exactly one hand, got {len(hands)}")
        _need(
            data.get("match_result") is None, "a hand replay has no match result: 'match_result' must be null"
        )
    return rules, turn_limit, hands


def _check_pair(where: str, value: object, what: str) -> None:
    _need(
        isinstance(value, list) and len(value) == 2 and all(is_int(v) for v in value),
        f"{where} must be a list of two integers ({what}), got {_show(value)}",
    )


def _check_result_types(i: int, recorded: dict[Any, Any]) -> None:
    where = f"hand {i}: result"
    _check_keys(where, recorded, ("kind", "winner", "points", "knocker", "deadwood", "layoffs"))
    kind = recorded.get("kind")
    _need(kind in RESULT_KINDS, f"{where} 'kind' must be one of {', '.join(RESULT_KINDS)}, got {_show(kind)}")
    for key in ("winner", "knocker"):
        value = recorded.get(key)
        _need(value is None or _is_seat(value), f"{where} '{key}' must be 0, 1 or null, got {_show(value)}")
    points = recorded.get("points")
    _need(
        type(points) is int and points >= 0, f"{where} 'points' must be an integer >= 0, got {_show(points)}"
    )
    _check_pair(f"{where} 'deadwood'", recorded.get("deadwood"), "each player's deadwood")
    layoffs = recorded.get("layoffs")
    _need(
        isinstance(layoffs, list) and all(isinstance(c, str) for c in layoffs),
        f"{where} 'layoffs' must be a list of card names, got {_show(layoffs)}",
    )


def _check_result(i: int, recorded: Any, actual: dict[str, Any] | None) -> None:
    if actual is None:
        _need(
            recorded is None,
            f"hand {i}: the replay records result {_show(recorded)} but the hand has not ended after its "
            "actions",
        )
        return
    _need(
        recorded is not None,
        f"hand {i}: the hand ends ({actual['kind']}) but the replay records no result (null); every "
        "finished hand records its result",
    )
    _need(isinstance(recorded, dict), f"hand {i}: 'result' must be an object or null, got {_show(recorded)}")
    _check_result_types(i, recorded)
    _need(recorded == actual, f"hand {i}: the replay records result {recorded} but replaying gives {actual}")


def _check_match_result(recorded: Any, match: Match) -> None:
    actual = match.result.to_dict() if match.result else None
    if actual is None:
        state = "was truncated" if match.truncated else "has not ended"
        _need(
            recorded is None,
            f"the replay records match result {_show(recorded)} but the match {state}: "
            "'match_result' must be null",
        )
        return
    _need(
        recorded is not None,
        "the match ends with a winner but the replay records no 'match_result' (missing or null)",
    )
    _need(isinstance(recorded, dict), f"'match_result' must be an object, got {_show(recorded)}")
    _check_keys("match_result", recorded, tuple(actual))
    for key, value in actual.items():
        got = recorded.get(key)
        # The recorded value must have the computed value's exact JSON type (true is not 1).
        ok = (
            type(got) is type(value)
            if not isinstance(value, list)
            else isinstance(got, list) and len(got) == len(value) and all(is_int(v) for v in got)
        )
        _need(ok, f"match_result '{key}' must be {type(value).__name__} like {value!r}, got {_show(got)}")
    _need(recorded == actual, f"the replay records match result {recorded} but replaying gives {actual}")


def _apply_actions(i: int, step: Any, actions: list[Any]) -> None:
    for j, name in enumerate(actions):
        try:
            step(action_id(name))
        except (UnknownActionError, IllegalActionError, ValueError) as err:
            raise ReplayError(f"hand {i}, action {j} ({_show(name)}): {err}") from None


def play_replay(data: dict[str, Any]) -> HandState | Match:
    """Rebuild a hand or match from replay data, checking every recorded result."""
    rules, turn_limit, hands = _check_header(data)
    try:
        if data["mode"] == "hand":
            entry = hands[0]
            state = HandState(rules, entry["dealer"], deck=entry["deck"], turn_limit=turn_limit)
            _apply_actions(0, state.step, entry["actions"])
            _check_result(0, entry["result"], state.result.to_dict() if state.result else None)
            return state
        try:
            hand_limit = check_hand_limit(data.get("hand_limit", DEFAULT_HAND_LIMIT))
        except ValueError as err:
            raise ReplayError(f"invalid 'hand_limit' in replay: {err}") from None
        match = Match(
            rules,
            hands[0]["dealer"],
            decks=[h["deck"] for h in hands],
            turn_limit=turn_limit,
            hand_limit=hand_limit,
        )
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
        _check_result(i, entry["result"], hand.result.to_dict() if hand.result else None)
    _check_match_result(data.get("match_result"), match)
    return match
