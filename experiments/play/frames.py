"""Replays as the replay page steps through them: one frame per move, both hands shown.

:func:`replay_frames` turns any replay (a table's, ``ginenv demo --save``'s, the harness's; a hand's
or a match's) into frames; the game is over, so both hands are shown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ginenv.experiments.play.words import KIND_WORDS, card_names, hand_display

from ginenv import gin_rummy_v0
from ginenv.actions import (
    ACTION_NAMES,
    BIG_GIN,
    DRAW_DISCARD,
    DRAW_STOCK,
    KNOCK_BASE,
    PASS,
    action_card,
    action_id,
)
from ginenv.cards import CARD_NAMES
from ginenv.engine import HandState
from ginenv.match import Match
from ginenv.replay import ReplayError, play_replay
from ginenv.rules import Rules


def replay_frames(data: Any, name: str = "") -> dict[str, Any]:
    """A replay (checked by :func:`ginenv.replay.play_replay`) as frames, one per move, both hands shown.

    With ``kind_words``, the words of each result kind (:data:`~ginenv.experiments.play.words.KIND_WORDS`):
    the replay page names a hand's end with them.

    Raises :class:`ginenv.replay.ReplayError` for a malformed or inconsistent replay.
    """
    if not isinstance(data, dict):
        raise ReplayError(f"a replay is a JSON object (format 'ginenv-replay'), got {type(data).__name__}")
    play_replay(data)  # refuses anything malformed, before anything is shown
    rules = Rules.from_dict(data["rules"])
    turn_limit = data.get("turn_limit", gin_rummy_v0.DEFAULT_TURN_LIMIT)
    entries = data["hands"]
    hands_out: list[dict[str, Any]] = []
    scores = [0, 0]
    if data["mode"] == "hand":
        states = [HandState(rules, entries[0]["dealer"], deck=entries[0]["deck"], turn_limit=turn_limit)]
        steppers: list[Callable[[int], Any]] = [states[0].step]
        match: Match | None = None
    else:
        match = Match(
            rules,
            entries[0]["dealer"],
            decks=[h["deck"] for h in entries],
            turn_limit=turn_limit,
            hand_limit=data.get("hand_limit", 200),
        )
    for index, entry in enumerate(entries):
        state = states[0] if match is None else match.hand
        step = steppers[0] if match is None else match.step
        frames = [_frame(state, 0, None, None, f"Deal: player_{state.dealer} deals.", scores)]
        for n, action_text in enumerate(entry["actions"], start=1):
            action = action_id(action_text)
            actor = state.player
            top = state.discard_pile[-1] if state.discard_pile else None
            step(action)
            text = f"player_{actor}: " + _replay_text(action, top)
            if state.result is not None:
                if match is not None:
                    scores = list(match.scores)
                text += " " + _result_text(state.result.to_dict())
            frames.append(_frame(state, n, actor, ACTION_NAMES[action], text, scores))
        hands_out.append(
            {"index": index, "dealer": entry["dealer"], "result": entry["result"], "frames": frames}
        )
    return {
        "name": name,
        "mode": data["mode"],
        "rules": rules.to_dict(),
        "match_result": data.get("match_result"),
        "players": data.get("players"),
        "hands": hands_out,
        # The words of each result kind: the replay page keeps no list of its own.
        "kind_words": KIND_WORDS,
    }


def _frame(
    state: HandState, n: int, actor: int | None, action: str | None, text: str, scores: list[int]
) -> dict[str, Any]:
    return {
        "step": n,
        "actor": actor,
        "action": action,
        "text": text,
        "hands": [hand_display(state.hands[0]), hand_display(state.hands[1])],
        "discard_pile": card_names(list(state.discard_pile)),
        "stock": len(state.stock),
        "scores": list(scores),
    }


def _replay_text(action: int, top: int | None) -> str:
    card = action_card(action)
    if action == DRAW_STOCK:
        return "draws from the stock."
    if action == DRAW_DISCARD:
        return f"takes {CARD_NAMES[top] if top is not None else 'the top card'} from the discard pile."
    if action == PASS:
        return "passes on the upcard."
    if action == BIG_GIN:
        return "lays down big gin."
    assert card is not None
    return (
        f"knocks, discarding {CARD_NAMES[card]}." if action >= KNOCK_BASE else f"discards {CARD_NAMES[card]}."
    )


def _result_text(result: dict[str, Any]) -> str:
    kind = KIND_WORDS[result["kind"]]
    if result["winner"] is None:
        return f"End of hand: {kind}, no points."
    return f"End of hand: {kind}, player_{result['winner']} scores {result['points']}."


__all__ = ["replay_frames"]
