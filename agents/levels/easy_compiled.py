"""easy's strategy compiled over the hand record: the ``easy`` level as a batched engine's opponent.

The strategy is the one of :mod:`.easy`, whose docstring is its one statement; this module owns only
its compiled form. :func:`easy_choice` reads a row of the hand record (:mod:`ginenv.kernels.hand`) as
the seat to move sees it, through the core's accessors only, and returns the action
:class:`.easy.EasyAgent` (default parameters) would choose from that seat's observation; the card
evaluation is :mod:`.heuristics_compiled`'s (the deadwood cards, their partners, the completed meld)
and the take guard of :class:`.level_base.TakeGuard` reads the record's
:func:`ginenv.kernels.hand.just_taken`.

**Exact with the same generator.** The level draws a random number only to break a tie between
discards of equal value (Kh or Ks): ``rng.integers(n)`` over the tied cards in id order. Given a
:class:`numpy.random.Generator` in the state the level's ``rng`` is in, :func:`easy_choice` draws the
same integer (:func:`.compiled_base.draw_index`: numba's ``Generator.integers`` is numpy's, bit
for bit) at the same decisions, so it plays the level's move at every decision and leaves the
generator where the level leaves it (``tests/agents/levels/test_easy_compiled.py`` plays whole
hands of the standard, seed 004 and Oklahoma rules through both).

**As an engine opponent** (:func:`easy_action`, the compiled-policy table's ``easy``) a policy gets
no generator: it seeds numba's generator of the thread from the seat's view
(:func:`.compiled_base.view_seed`) where a tie needs it, as the compiled master does, so the
opponent is a fixed function of what its seat sees. :func:`easy_moves` plays it in given slots of
a :class:`ginenv.vector.VectorGinRummy` (a league opponent in training).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ginenv.agents.levels.compiled_base import (
    DISCARD,
    TAKE_OR_NOT,
    defaults,
    draw_index,
    engine_moves,
    level_turn,
    no_take,
    seed_by_view,
)
from ginenv.agents.levels.easy import EasyAgent
from ginenv.agents.levels.heuristics_compiled import (
    completes_meld,
    deadwood_cards,
    discard_deadwood,
    least_cards,
    partner_cards,
    take_guarded,
    top_cards,
)
from numba import njit

from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, KNOCK_BASE
from ginenv.kernels import hand as H
from ginenv.kernels.meld_search import CARD_VALUE, RANK_MASK, min_deadwood, popcount
from ginenv.kernels.policies import pick_bit

(KNOCK_DEADWOOD,) = defaults(EasyAgent, "knock_deadwood")


@njit(cache=True)
def easy_takes(s: np.ndarray, i: int, top: int) -> bool:
    """Whether the seat to move in row ``i`` takes ``top`` (``EasyAgent.wants_top``:
    :func:`.easy.makes_set`)."""
    hand = H.hand_of(s, i, H.mover(s, i))
    return popcount(hand & RANK_MASK[top % 13]) >= 2 and completes_meld(hand, top)


@njit(cache=True)
def easy_card(hand: int, allowed: int, rng: Any) -> int:
    """The card easy throws (``EasyAgent.pick_card``), a tie drawn from ``rng``."""
    dead = deadwood_cards(hand)
    loose = dead & allowed
    if loose:
        useless = loose & ~partner_cards(dead)
        pool = top_cards(CARD_VALUE, useless if useless else loose)
    else:
        # Everything melds: the cards that keep the least deadwood.
        pool = least_cards(discard_deadwood(hand, allowed), allowed)
    n = popcount(pool)
    return pick_bit(pool, 0 if n == 1 else draw_index(rng, n))


@njit(cache=True)
def easy_discard(s: np.ndarray, i: int, cfg: np.ndarray, rng: Any, allowed: int, knocks: int) -> int:
    """The discard phase's action in row ``i`` (``EasyAgent.choose_discard`` after
    :meth:`.level_base.TakeGuard.useful_only`), a tie drawn from ``rng``."""
    hand = H.hand_of(s, i, H.mover(s, i))
    card = easy_card(hand, take_guarded(hand, H.just_taken(s, i), allowed), rng)
    left = min_deadwood(hand ^ (1 << card))
    if (knocks >> card) & 1 and left <= min(KNOCK_DEADWOOD, H.knock_limit_of(s, i)):
        return KNOCK_BASE + card
    return DISCARD_BASE + card


@njit(cache=True)
def easy_choice(s: np.ndarray, i: int, cfg: np.ndarray, rng: Any) -> int:
    """The easy level's action for the seat to move in row ``i``, a tie drawn from ``rng`` (a numpy
    Generator: exactly ``EasyAgent.act`` with that generator; None: numba's generator of this
    thread); -1 for a row whose hand is over."""
    step, top, allowed, knocks = level_turn(s, i, cfg)
    if step == TAKE_OR_NOT:
        return DRAW_DISCARD if easy_takes(s, i, top) else no_take(s, i)
    return easy_discard(s, i, cfg, rng, allowed, knocks) if step == DISCARD else step


@njit(cache=True)
def easy_action(s: np.ndarray, i: int, cfg: np.ndarray) -> int:
    """The compiled-policy table's ``easy``: :func:`easy_choice` drawing from numba's generator
    seeded by :func:`.compiled_base.view_seed`."""
    seed_by_view(s, i)
    return easy_choice(s, i, cfg, None)


#: ``easy_moves(venv, slots)``: the compiled easy's action for the seat to move in each of the
#: ``slots`` (row indices) of ``venv``, an int64 array in their order (-1 where the hand is over).
easy_moves = engine_moves("easy")


__all__ = ["easy_action", "easy_card", "easy_choice", "easy_discard", "easy_moves", "easy_takes"]
