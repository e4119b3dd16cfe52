"""greedy: the simple baseline the harness is tested with before the computer levels exist.

Strategy: take the upcard (or the top discard) only when, after the best discard among the other
cards, it is in a meld and the deadwood is lower than before; otherwise pass or draw from the stock.
Discard the card that leaves the least deadwood, the highest-valued one on ties (the "highest useless
card"), then the lowest card id. Knock as soon as it is allowed; big gin when it can. Deterministic:
it never uses its random generator.

No cycling: a take must lower the deadwood, so taking a card only to throw an equal one (Ac for Ah)
never happens, and after a take its least-deadwood discard keeps the deadwood below what it was
before (:class:`ginenv.agents.levels.level_base.TakeGuard`; the card just taken is never thrown back, even
where ``Rules.discard_taken_card`` allows it). Two greedy players cannot pass the same cards back and
forth through the discard pile.

The choices are compiled functions of this module (:func:`greedy_takes` and :func:`greedy_discard`),
the same ones the batched engine's ``greedy`` opponent plays (:func:`greedy_action`, a compiled
policy of :mod:`ginenv.kernels.policies`, registered by the package's entry point), so the two play
move for move alike; :class:`GreedyAgent` only reads the seat's observation and its action mask
around them.
"""

from __future__ import annotations

import numpy as np
from ginenv.agents.base import Observation
from ginenv.agents.levels.heuristics import legal_discards
from ginenv.agents.levels.heuristics_compiled import take_guarded
from ginenv.agents.levels.level_base import HeuristicAgent
from numba import njit

from ginenv import compiling
from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.kernels import hand as H
from ginenv.kernels.meld_search import CARD_VALUE, lowest_card, min_deadwood
from ginenv.observation import SeatView


class GreedyAgent(HeuristicAgent):
    """Meld-taking, deadwood-dumping, knock-at-once baseline (see the module docstring)."""

    name = "greedy"

    def wants_top(self, view: SeatView) -> bool:
        """Take the top card when it melds and lowers the deadwood (``greedy_takes``)."""
        assert view.top is not None
        return bool(greedy_takes(view.hand, view.top))

    def choose_discard(self, observation: Observation, view: SeatView) -> tuple[int, bool]:
        """The least-deadwood discard (``greedy_discard``; after a take, one that keeps the take
        useful); knock when the mask allows it with that card."""
        allowed = self.useful_only(view.hand, legal_discards(observation))
        card = int(greedy_discard(view.hand, allowed))
        return card, bool(observation["action_mask"][KNOCK_BASE + card])


@njit(cache=True)
def greedy_discard(hand: int, allowed: int) -> int:
    """The allowed card whose discard leaves the least deadwood, the highest-valued one on ties,
    then the lowest card id (``GreedyAgent``'s discard)."""
    best = -1
    best_dw = 1 << 30
    rest = allowed
    while rest:
        low = rest & -rest
        rest ^= low
        c = lowest_card(low)
        dw = min_deadwood(hand ^ low)
        if dw < best_dw or (dw == best_dw and CARD_VALUE[c] > CARD_VALUE[best]):
            best = c
            best_dw = dw
    return best


@njit(cache=True)
def greedy_takes(hand: int, card: int) -> bool:
    """``GreedyAgent``'s take: after taking ``card`` and the best discard among the other cards,
    ``card`` is in a meld and the deadwood is lower than before."""
    bit = 1 << card
    kept = hand | bit
    kept ^= 1 << greedy_discard(kept, hand)
    after = min_deadwood(kept)
    in_meld = after < min_deadwood(kept ^ bit) + CARD_VALUE[card]
    return in_meld and after < min_deadwood(hand)


@njit(cache=True)
def greedy_action(s: np.ndarray, i: int, cfg: np.ndarray) -> int:
    """The greedy level's action in row ``i`` (exactly :meth:`GreedyAgent.act`): the batched engine's
    ``greedy`` opponent, a compiled policy (:mod:`ginenv.kernels.policies`) named by the entry point
    ``greedy`` of ``ginenv.compiled_policies``."""
    phase = H.phase_of(s, i)
    hand = H.hand_of(s, i, H.mover(s, i))
    if phase != H.Phase.DISCARD:
        top = H.top_card(s, i)
        if H.may_take_top(s, i) and top >= 0 and greedy_takes(hand, top):
            return DRAW_DISCARD
        return PASS if phase != H.Phase.DRAW else DRAW_STOCK
    allowed, knocks, big = H.discard_options(s, i, cfg)
    if big:
        return BIG_GIN
    card = greedy_discard(hand, take_guarded(hand, H.just_taken(s, i), allowed))
    if knocks >> card & 1:
        return KNOCK_BASE + card
    return DISCARD_BASE + card


# The compiled entry points GreedyAgent calls (ginenv.compiling).
compiling.register(GreedyAgent, greedy_takes, greedy_discard)

__all__ = ["GreedyAgent", "greedy_action", "greedy_discard", "greedy_takes"]
