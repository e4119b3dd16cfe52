"""Scripted play shared by the level tests (``from levels.scripted_play import ...``).

Built on ``scenarios`` (decks and observations from card names): :func:`late_position`, a position
late in a hand with a random spread of discards; :func:`play_out`, a dealt hand played to its end by
a callback; :func:`play_hand`, one whole hand between freshly seeded agents, every move checked
against the mask; :func:`decision_kind`, what kind of decision a compiled level made in a hand
record row (the compiled-level tests count them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scenarios import position

from ginenv import agents, gin_rummy_v0
from ginenv.actions import BIG_GIN, DRAW_DISCARD, KNOCK_BASE, NUM_ACTIONS, action_name
from ginenv.cards import CARD_NAMES, parse_cards
from ginenv.engine import Phase
from ginenv.kernels import hand as H
from ginenv.observation import decode
from ginenv.rules import Rules


def late_position(
    hand: str, stock: int, seed: int = 5, top: str | None = None, taken: str = ""
) -> dict[str, np.ndarray]:
    """``hand`` (11 cards) to discard with ``stock`` cards left; the pile is a random spread of the
    other cards (``seed``), every other one discarded by the opponent.

    With ``top`` (a card name) and a 10-card ``hand``: the draw phase, that card on the pile.
    ``taken``: cards the opponent took from the pile and holds."""
    used = set(parse_cards(f"{hand} {taken}"))
    rng = np.random.default_rng(seed)
    rest = [int(c) for c in rng.permutation([c for c in range(52) if c not in used])]
    n = 31 - stock
    if top is None:
        top_card = rest[n - 1]
    else:
        top_card = parse_cards(top)[0]
        rest.remove(top_card)

    def names(cards: list[int]) -> str:
        return " ".join(CARD_NAMES[c] for c in cards)

    obs = position(
        hand,
        top=CARD_NAMES[top_card],
        pile=names(rest[: n - 1]),
        opp_taken=taken,
        opp_discarded=names(rest[:n:2]),
        phase=Phase.DISCARD if top is None else Phase.DRAW,
        stock=stock,
    )
    assert decode(obs["observation"]).stock_size == stock
    return obs


def play_out(env: Any, act: Callable[[str, dict], int | None]) -> dict:
    """Play the hand dealt in ``env`` to its end: ``act(agent_id, observation)`` gives each move
    (``None``: stop the hand there). Returns the hand's result (``{}`` when stopped)."""
    result: dict = {}
    for agent_id in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            result = info["result"]
            env.step(None)
            continue
        action = act(agent_id, obs)
        if action is None:
            return {}
        env.step(action)
    return result


def play_hand(
    names: tuple[str, str],
    seed: int,
    seeds: tuple[int, int],
    dealer: int,
    deck: list[int] | None = None,
    rules: Rules | None = None,
    watch: Callable[[Any, int, int], None] | None = None,
) -> tuple[list[int], dict]:
    """One hand (dealt from ``seed``, or ``deck``) between fresh agents ``names`` (player_0,
    player_1) reset with ``seeds``: every action, each checked against the mask, and the result.
    ``watch(env, seat, action)`` sees each move before it is played."""
    env = gin_rummy_v0.raw_env() if rules is None else gin_rummy_v0.raw_env(rules=rules)
    env.reset(seed=seed, options={"dealer": dealer} | ({"deck": deck} if deck else {}))
    players = [agents.make(n, seed=s, rules=rules) for n, s in zip(names, seeds, strict=True)]
    for agent, s in zip(players, seeds, strict=True):
        agent.reset(s)
    actions: list[int] = []

    def act(agent_id: str, obs: dict) -> int:
        seat = int(agent_id[-1])
        action = int(players[seat].act(obs))
        assert obs["action_mask"][action] == 1, f"{names[seat]} played an illegal {action_name(action)}"
        if watch is not None:
            watch(env, seat, action)
        actions.append(action)
        return action

    return actions, play_out(env, act)


def decision_kind(row: np.ndarray, mask: np.ndarray, action: int) -> str:
    """What kind of decision ``action`` is in the position ``row`` (a hand record row)."""
    phase = H.phase_of(row[None], 0)
    if phase in (H.Phase.UPCARD_NON_DEALER, H.Phase.UPCARD_DEALER):
        return "upcard take" if action == DRAW_DISCARD else "upcard pass"
    if phase == H.Phase.DRAW:
        if not H.may_take_top(row[None], 0):
            return "forced draw"
        return "take" if action == DRAW_DISCARD else "stock"
    if action == BIG_GIN:
        return "big gin"
    if action >= KNOCK_BASE:
        return "knock"
    if mask[KNOCK_BASE:NUM_ACTIONS].any():
        return "play on for gin"
    return "discard after a take" if H.just_taken(row[None], 0) >= 0 else "discard"
