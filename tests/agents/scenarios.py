"""Scripted positions for the agent tests: decks built from named hands, actions by name."""

from __future__ import annotations

from typing import Any

import numpy as np

from ginenv import agents, gin_rummy_v0
from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, NUM_ACTIONS, PASS, action_name
from ginenv.cards import CARD_NAMES, FULL_DECK, cards_of, mask_of, parse_cards
from ginenv.engine import Phase
from ginenv.melds import deadwood_of_mask
from ginenv.observation import KNOCK_LIMIT, OBS_SIZE, PHASE_BASE, STOCK_SIZE, TO_MOVE, plane_slice

#: A dealer's hand that melds with nothing the tests give the non-dealer.
DEALER = "6s Ts Js 3d 6d 8d 3h 4h Jh 2c"


def deck_with(non_dealer: str, dealer: str, upcard: str, stock: str = "") -> list[str]:
    """A full deck: the named cards in dealing order, then every other card."""
    used = parse_cards(f"{non_dealer} {dealer} {upcard} {stock}")
    return [CARD_NAMES[c] for c in used + [c for c in range(52) if c not in used]]


def start(deck: list[str]) -> Any:
    """An env dealt from ``deck`` with player_0 dealing (player_1 decides first)."""
    env = gin_rummy_v0.raw_env()
    env.reset(seed=0, options={"deck": deck, "dealer": 0})
    return env


def play(env: Any, *actions: str) -> dict:
    """Apply scripted actions; the observation of whoever is to move next."""
    for name in actions:
        env.step(env.unwrapped.action_id(name))
    return env.observe(env.agent_selection)


def decide(agent_name: str, obs: dict, seed: int = 0) -> str:
    """The name of the action a freshly seeded agent picks for ``obs``."""
    agent = agents.make(agent_name, seed=seed)
    agent.reset(seed)
    return action_name(agent.act(obs))


def cards(text: str) -> int:
    """The bitmask of the named cards (0 for an empty string)."""
    return mask_of(parse_cards(text)) if text.strip() else 0


def position(
    hand: str,
    top: str = "",
    pile: str = "",
    opp_taken: str = "",
    opp_discarded: str = "",
    opp_passed: str = "",
    phase: Phase = Phase.DRAW,
    banned: str = "",
    stock: int | None = None,
) -> dict[str, np.ndarray]:
    """A consistent observation of the seat to move, built from card names (what the env would show).

    ``phase``: ``Phase.DRAW`` (stock or top discard), an upcard offer (take it or pass) or
    ``Phase.DISCARD`` (``hand`` holds 11 cards;
    every card may be discarded, and knocked with when it leaves at most 10 points, except
    ``banned``: the card just taken from the pile under the default rules; leave it empty for
    ``Rules(discard_taken_card=True)``). ``stock``: the stock size (default: what the unseen cards
    leave once the opponent's 10 cards are accounted for).
    """
    h, t, p, taken = cards(hand), cards(top), cards(pile), cards(opp_taken)
    unseen = FULL_DECK & ~(h | t | p | taken)
    vec = np.zeros(OBS_SIZE, dtype=np.float32)
    vec[STOCK_SIZE] = unseen.bit_count() - (10 - taken.bit_count()) if stock is None else stock
    vec[KNOCK_LIMIT] = 10
    vec[PHASE_BASE + phase] = 1
    vec[TO_MOVE] = 1
    planes = {
        "hand": h,
        "top": t,
        "pile": p,
        "opponent_taken": taken,
        "opponent_discarded": cards(opp_discarded),
        "opponent_passed": cards(opp_passed),
        "unseen": unseen,
    }
    for name, mask in planes.items():
        vec[plane_slice(name)] = [(mask >> c) & 1 for c in range(52)]
    legal = np.zeros(NUM_ACTIONS, dtype=np.int8)
    if phase == Phase.DISCARD:
        for c in cards_of(h & ~cards(banned)):
            legal[DISCARD_BASE + c] = 1
            if deadwood_of_mask(h ^ 1 << c) <= 10:
                legal[KNOCK_BASE + c] = 1
    elif phase == Phase.DRAW:
        legal[[DRAW_STOCK, DRAW_DISCARD]] = 1
    else:  # the upcard offer
        legal[[DRAW_DISCARD, PASS]] = 1
    return {"observation": vec, "action_mask": legal}
