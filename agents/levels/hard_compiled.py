"""hard's strategy compiled over the hand record: the ``hard`` level as a batched engine's opponent.

The strategy is the one of :mod:`.hard`, whose docstring is its one statement; this module owns only
its compiled form. :func:`hard_action` reads a row of the hand record (:mod:`ginenv.kernels.hand`)
as the seat to move sees it, the way :func:`ginenv.agents.baselines.greedy.greedy_action` does, and returns
the action :class:`.hard.HardAgent` (default parameters) would choose from that seat's observation,
move for move (``tests/agents/levels/test_hard_compiled.py`` plays whole hands through both). The
seat's view is the record's as :func:`ginenv.kernels.hand.encode` shows it, read through the core's
functions (the unseen cards: :func:`ginenv.kernels.hand.unseen`); the memory of
:class:`.level_base.TakeGuard` (the card just taken, up to the next discard) is the record's
(:func:`ginenv.kernels.hand.just_taken`), applied by
:func:`.heuristics_compiled.take_guarded` as greedy's compiled policy does. :func:`hard_actions`
fills a batch of rows and :func:`hard_moves` does it for the slots of a
:class:`ginenv.vector.VectorGinRummy` (a league opponent in training). The card evaluation is the
kernels' of :mod:`.heuristics_compiled` and :mod:`ginenv.kernels`, the turn
:func:`.compiled_base.level_turn`'s; the seat's danger weights and the decisions are here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ginenv.agents.levels.compiled_base import DISCARD, TAKE_OR_NOT, level_turn, no_take
from ginenv.agents.levels.hard import HardAgent
from ginenv.agents.levels.heuristics_compiled import (
    danger_table,
    discard_cost_table,
    gin_outs,
    max_deadwood_value,
    stock_cost,
    take_guarded,
    useful_discards,
)
from numba import njit

from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, KNOCK_BASE
from ginenv.cards import NUM_CARDS
from ginenv.kernels import hand as H
from ginenv.kernels.meld_search import CARD_VALUE, meldable, min_deadwood, popcount
from ginenv.kernels.policies import slot_rows
from ginenv.observation import MAX_STOCK
from ginenv.vector import VectorGinRummy

# HardAgent's default tuning constants, as the compiled code reads them (numba freezes a global when
# it compiles: after editing a default, delete this module's numba cache).
DANGER_EARLY = float(HardAgent.danger_early)
DANGER_LATE = float(HardAgent.danger_late)
MISS = float(HardAgent.miss)
GIN_DEADWOOD = int(HardAgent.gin_deadwood)
GIN_STOCK = int(HardAgent.gin_stock)
GIN_OUTS = int(HardAgent.gin_outs)


# --------------------------------------------------------------------------- the seat's view


@njit(cache=True)
def penalty(s: np.ndarray, i: int, seat: int, unseen: int) -> np.ndarray:
    """``w D(c)`` for every card ``c`` as ``seat`` of row ``i`` sees it (``HardAgent.penalty``)."""
    other = 1 - seat
    late = 1.0 - min(H.count_stock(s, i), MAX_STOCK) / MAX_STOCK
    weight = DANGER_EARLY + (DANGER_LATE - DANGER_EARLY) * late
    taken, discarded, passed = H.public_cards(s, i, other)
    return weight * danger_table(unseen | taken, taken, discarded | passed)


@njit(cache=True)
def least_score(table: np.ndarray, allowed: int) -> int:
    """The allowed card with the least score in ``table``; ties: the higher card, then the lower id."""
    best = -1
    best_score = np.inf
    for c in range(NUM_CARDS):
        if (allowed >> c) & 1:
            score = table[c]
            if best < 0 or score < best_score or (score == best_score and CARD_VALUE[c] > CARD_VALUE[best]):
                best = c
                best_score = score
    return best


# --------------------------------------------------------------------------- the decisions


@njit(cache=True)
def hard_takes(s: np.ndarray, i: int, top: int) -> bool:
    """Whether the seat to move in row ``i`` takes ``top`` (``HardAgent.wants_top``)."""
    p = H.mover(s, i)
    hand = H.hand_of(s, i, p)
    bit = 1 << top
    grown = hand | bit
    if not meldable(grown) & bit and CARD_VALUE[top] >= max_deadwood_value(hand):
        return False
    useful = useful_discards(grown, top)
    if not useful:
        return False
    unseen = H.unseen(s, i, p)
    pen = penalty(s, i, p, unseen)
    limit = H.knock_limit_of(s, i)
    # The table holds inf outside the useful discards, so its least entry is the best take.
    take = discard_cost_table(grown, unseen, useful, pen, limit, MISS).min()
    return take < stock_cost(hand, unseen, pen, limit, MISS)


@njit(cache=True)
def plays_for_gin(kept: int, left: int, stock: int, unseen: int) -> bool:
    """The play-on-for-gin rule for the 10 cards ``kept`` (``HardAgent.plays_for_gin``)."""
    if not 0 < left <= GIN_DEADWOOD or stock < GIN_STOCK:
        return False
    return popcount(gin_outs(kept, unseen)) >= GIN_OUTS


@njit(cache=True)
def hard_discard(s: np.ndarray, i: int, cfg: np.ndarray, rng: Any, allowed: int, knocks: int) -> int:
    """The discard phase's action in row ``i`` when big gin is not legal (``HardAgent.choose_discard``
    after :meth:`.level_base.TakeGuard.useful_only`; ``rng`` unused: the level is deterministic)."""
    p = H.mover(s, i)
    hand = H.hand_of(s, i, p)
    allowed = take_guarded(hand, H.just_taken(s, i), allowed)
    unseen = H.unseen(s, i, p)
    pen = penalty(s, i, p, unseen)
    if knocks:
        # The least deadwood left, then the least dangerous, the higher card, the lower id.
        card = -1
        least = 0
        for c in range(NUM_CARDS):
            if (knocks >> c) & 1:
                left = min_deadwood(hand ^ (1 << c))
                if (
                    card < 0
                    or left < least
                    or (
                        left == least
                        and (pen[c] < pen[card] or (pen[c] == pen[card] and CARD_VALUE[c] > CARD_VALUE[card]))
                    )
                ):
                    card = c
                    least = left
        if not plays_for_gin(hand ^ (1 << card), least, H.count_stock(s, i), unseen):
            return KNOCK_BASE + card
        if knocks & allowed:
            allowed &= knocks
    table = discard_cost_table(hand, unseen, allowed, pen, H.knock_limit_of(s, i), MISS)
    return DISCARD_BASE + least_score(table, allowed)


@njit(cache=True)
def hard_action(s: np.ndarray, i: int, cfg: np.ndarray) -> int:
    """The hard level's action for the seat to move in row ``i`` (exactly ``HardAgent().act``);
    -1 for a row whose hand is over."""
    step, top, allowed, knocks = level_turn(s, i, cfg)
    if step == TAKE_OR_NOT:
        return DRAW_DISCARD if hard_takes(s, i, top) else no_take(s, i)
    return hard_discard(s, i, cfg, None, allowed, knocks) if step == DISCARD else step


@njit(cache=True, nogil=True)
def hard_actions(s: np.ndarray, cfg: np.ndarray, slots: np.ndarray, out: np.ndarray) -> None:
    """``out[k] = hard_action(s, slots[k], cfg)`` for each row index of ``slots`` (int64)."""
    for k in range(slots.size):
        out[k] = hard_action(s, slots[k], cfg)


def hard_moves(venv: VectorGinRummy, slots: np.ndarray) -> np.ndarray:
    """The hard level's action for the seat to move in each of the ``slots`` (row indices) of
    ``venv``, as an int64 array in the order of ``slots`` (-1 where the hand is over)."""
    rows = slot_rows(slots, venv.num_envs)
    out = np.empty(rows.size, dtype=np.int64)
    hard_actions(venv.batch.state, venv.rule_array, rows, out)
    return out


__all__ = [
    "hard_action",
    "hard_actions",
    "hard_discard",
    "hard_moves",
    "hard_takes",
    "penalty",
    "plays_for_gin",
]
