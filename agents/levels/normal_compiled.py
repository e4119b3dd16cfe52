"""normal's strategy compiled over the hand record: the ``normal`` level as a batched engine's opponent.

The strategy is the one of :mod:`.normal`, whose docstring is its one statement; this module owns
only its compiled form. :func:`normal_action` reads a row of the hand record
(:mod:`ginenv.kernels.hand`) as the seat to move sees it, through the core's accessors only (the
opponent's taken, discarded and passed cards: :func:`ginenv.kernels.hand.public_cards`), and returns
the action :class:`.normal.NormalAgent` would choose from that seat's observation, move for move
(``tests/agents/levels/test_normal_compiled.py`` plays whole hands through both). The level is
deterministic, so the two agree at every decision. The card evaluation is
:mod:`.heuristics_compiled`'s; the take guard of :class:`.level_base.TakeGuard` reads the record's
:func:`ginenv.kernels.hand.just_taken`. :func:`normal_moves` plays it in given slots of a
:class:`ginenv.vector.VectorGinRummy` (a league opponent in training).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ginenv.agents.levels.compiled_base import DISCARD, TAKE_OR_NOT, engine_moves, level_turn, no_take
from ginenv.agents.levels.heuristics_compiled import (
    best_other_discard,
    completes_meld,
    deadwood_cards,
    discard_deadwood,
    interest_cards,
    least_cards,
    partner_cards,
    take_guarded,
    useful_discards,
)
from numba import njit

from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, KNOCK_BASE
from ginenv.cards import NUM_CARDS
from ginenv.kernels import hand as H
from ginenv.kernels.meld_search import CARD_VALUE, RANK_MASK, lowest_card


@njit(cache=True)
def normal_takes(s: np.ndarray, i: int, top: int) -> bool:
    """Whether the seat to move in row ``i`` takes ``top`` (``NormalAgent.wants_top``)."""
    hand = H.hand_of(s, i, H.mover(s, i))
    helps = completes_meld(hand, top) or best_other_discard(hand, top) <= H.knock_limit_of(s, i)
    return helps and useful_discards(hand | (1 << top), top) != 0


@njit(cache=True)
def preferences(s: np.ndarray, i: int, hand: int) -> np.ndarray:
    """``NormalAgent.pick_card``'s order among the discards leaving the least deadwood, as one
    integer a card, lower first: not wanted by the opponent, of a rank it discarded or passed, with
    no partner, the higher value, the lower id (ids < 64, values < 16)."""
    taken, discarded, passed = H.public_cards(s, i, 1 - H.mover(s, i))
    wanted = interest_cards(taken)
    shown = discarded | passed
    partners = partner_cards(deadwood_cards(hand))
    out = np.empty(NUM_CARDS, dtype=np.int64)
    for c in range(NUM_CARDS):
        out[c] = (
            ((wanted >> c) & 1) << 13
            | (0 if RANK_MASK[c % 13] & shown else 1) << 12
            | ((partners >> c) & 1) << 11
            | (15 - CARD_VALUE[c]) << 6
            | c
        )
    return out


@njit(cache=True)
def normal_discard(s: np.ndarray, i: int, cfg: np.ndarray, rng: Any, allowed: int, knocks: int) -> int:
    """The discard phase's action in row ``i`` (``NormalAgent.choose_discard`` after
    :meth:`.level_base.TakeGuard.useful_only`; ``rng`` unused: the level is deterministic)."""
    hand = H.hand_of(s, i, H.mover(s, i))
    allowed = take_guarded(hand, H.just_taken(s, i), allowed)
    pool = least_cards(discard_deadwood(hand, allowed), allowed)
    card = lowest_card(least_cards(preferences(s, i, hand), pool))
    return (KNOCK_BASE if (knocks >> card) & 1 else DISCARD_BASE) + card


@njit(cache=True)
def normal_action(s: np.ndarray, i: int, cfg: np.ndarray) -> int:
    """The normal level's action for the seat to move in row ``i`` (exactly ``NormalAgent().act``);
    -1 for a row whose hand is over."""
    step, top, allowed, knocks = level_turn(s, i, cfg)
    if step == TAKE_OR_NOT:
        return DRAW_DISCARD if normal_takes(s, i, top) else no_take(s, i)
    return normal_discard(s, i, cfg, None, allowed, knocks) if step == DISCARD else step


#: ``normal_moves(venv, slots)``: the compiled normal's action for the seat to move in each of the
#: ``slots`` (row indices) of ``venv``, an int64 array in their order (-1 where the hand is over).
normal_moves = engine_moves("normal")


__all__ = ["normal_action", "normal_discard", "normal_moves", "normal_takes", "preferences"]
