"""expert's strategy compiled over the hand record: the ``expert`` level as a batched engine's opponent.

The strategy is the one of :mod:`.expert` (its docstring is its one statement; the opponent model's
is :mod:`.belief`'s); this module owns only its compiled form. :func:`expert_choice` reads a row of
the hand record (:mod:`ginenv.kernels.hand`) as the seat to move sees it, through the core's
accessors only, and returns the action :class:`.expert.ExpertAgent` (default parameters, the rules of
the rule array) would choose from that seat's observation: the opponent model is
:mod:`.belief_compiled`'s, rebuilt from the public record at each decision; the scores are
:mod:`.expert`'s own compiled functions (:func:`.expert.discard_values`, :func:`.expert.stock_value`,
:func:`.expert.meld_probability`); the take guard of :class:`.level_base.TakeGuard` reads the
record's :func:`ginenv.kernels.hand.just_taken`.

**Exact with the same generator, but for the last bits of the weights.** The level draws random
numbers only for a knock it judges by sampled opponent hands. Given a
:class:`numpy.random.Generator` in the state the level's ``rng`` is in, :func:`expert_choice` draws
the same uniforms in the same order (:func:`.belief_compiled.sample_hands`), so wherever its
opponent model equals the Python model bit for bit it plays the level's move and leaves the
generator where the level leaves it. The model's weights may part from the Python model's in their
last bits (:mod:`.belief_compiled` says why); a move changes only where that shifts a near tie
(two discards' scores equal to the last bit): ``tests/agents/levels/test_expert_compiled.py``
plays whole hands of the standard, seed 004 and Oklahoma rules through both, requires the same
move and generator wherever the models are equal, and counts the rest: of its 3198 decisions the
models differed in their last bits at 1912 and the moves at 1; over 300 more standard hands
(6394 decisions, 3872 of them with such models) the moves differed at 1 (2026-12-07).

**As an engine opponent** (:func:`expert_action`, the compiled-policy table's ``expert``) a policy
gets no generator: it seeds numba's own generator of the thread from the seat's view
(:func:`.compiled_base.view_seed`), as the compiled master does, so the opponent is a fixed
function of what its seat sees. :func:`expert_moves` plays it in given slots of a
:class:`ginenv.vector.VectorGinRummy` (a league opponent in training).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ginenv.agents.levels.belief import knock_points_many
from ginenv.agents.levels.belief_compiled import BELIEF_TRAP, holding_odds, model_of, sample_hands, stock_odds
from ginenv.agents.levels.compiled_base import (
    DISCARD,
    TAKE_OR_NOT,
    defaults,
    engine_moves,
    in_order,
    level_turn,
    no_take,
    seed_by_view,
)
from ginenv.agents.levels.expert import ExpertAgent, discard_values, meld_probability, stock_value
from ginenv.agents.levels.heuristics_compiled import (
    discard_deadwood,
    least_cards,
    take_guarded,
    useful_discards,
)
from numba import njit

from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, KNOCK_BASE
from ginenv.kernels import hand as H
from ginenv.kernels.meld_search import min_deadwood, showdown_melds
from ginenv.layout import MAX_STOCK

FEED_EARLY, FEED_LATE, TAKE_MARGIN, SAMPLES, MAX_UNDERCUT, TRAP_DEADWOOD, TRAP_STOCK = defaults(
    ExpertAgent,
    "feed_early",
    "feed_late",
    "take_margin",
    "samples",
    "max_undercut",
    "trap_deadwood",
    "trap_stock",
)


@njit(cache=True)
def feed_weight(s: np.ndarray, i: int) -> float:
    """``w``: what a discard the opponent melds costs at row ``i``'s stage (``ExpertAgent.feed_weight``)."""
    late = 1.0 - min(H.count_stock(s, i), MAX_STOCK) / MAX_STOCK
    return FEED_EARLY + (FEED_LATE - FEED_EARLY) * late


@njit(cache=True)
def expert_takes(s: np.ndarray, i: int, top: int) -> bool:
    """Whether the seat to move in row ``i`` takes ``top`` (``ExpertAgent.wants_top``)."""
    p = H.mover(s, i)
    hand = H.hand_of(s, i, p)
    grown = hand | (1 << top)
    useful = useful_discards(grown, top)
    if not useful:
        return False  # a wasted turn, and the way two players cycle cards through the pile
    ids, w, known, slots, _ = model_of(s, i, p)
    q = stock_odds(ids, w, known, slots)
    penalty = feed_weight(s, i) * meld_probability(holding_odds(ids, w, known, slots))
    take = discard_values(grown, useful, q, penalty, -1).min()
    return take < stock_value(hand, q, penalty) - TAKE_MARGIN


@njit(cache=True)
def expert_discard(s: np.ndarray, i: int, cfg: np.ndarray, rng: Any, allowed: int, knocks: int) -> int:
    """The discard phase's action in row ``i`` when big gin is not legal (``ExpertAgent.choose_discard``
    after :meth:`.level_base.TakeGuard.useful_only`), drawing from ``rng`` to judge a knock."""
    p = H.mover(s, i)
    hand = H.hand_of(s, i, p)
    allowed = take_guarded(hand, H.just_taken(s, i), allowed)
    ids, w, known, slots, turns = model_of(s, i, p)
    q = stock_odds(ids, w, known, slots)
    penalty = feed_weight(s, i) * meld_probability(holding_odds(ids, w, known, slots))
    values = discard_values(hand, allowed | knocks, q, penalty, -1)
    if knocks:
        # The least deadwood left, ties in the levels' order (ExpertAgent.knock_card).
        left = discard_deadwood(hand, knocks)
        card = in_order(values, least_cards(left, knocks))[0]
        least = left[card]
        if expert_knocks(s, i, cfg, rng, hand ^ (np.int64(1) << card), least, ids, w, known, slots, turns):
            return KNOCK_BASE + card
    return DISCARD_BASE + in_order(values, allowed)[0]


@njit(cache=True)
def expert_knocks(
    s: np.ndarray,
    i: int,
    cfg: np.ndarray,
    rng: Any,
    kept: int,
    left: int,
    ids: np.ndarray,
    w: np.ndarray,
    known: int,
    slots: int,
    turns: int,
) -> bool:
    """The knock rule for the 10 cards ``kept`` (``ExpertAgent.should_knock``): the model's sampled
    hands scored by the showdown with the rule array's bonuses."""
    if left == 0:
        return True
    if left <= TRAP_DEADWOOD and H.count_stock(s, i) >= TRAP_STOCK:
        return False
    hands = sample_hands(rng, SAMPLES, ids, w, known, slots, turns, H.knock_limit_of(s, i), BELIEF_TRAP)
    gin, undercut, _ = H.bonuses(cfg)
    points = knock_points_many(showdown_melds(kept), min_deadwood(kept), hands, gin, undercut)
    total = 0
    undercuts = 0
    for k in range(points.size):
        total += points[k]
        undercuts += points[k] < 0
    return total > 0 and undercuts / points.size <= MAX_UNDERCUT


@njit(cache=True)
def expert_choice(s: np.ndarray, i: int, cfg: np.ndarray, rng: Any) -> int:
    """The expert level's action for the seat to move in row ``i``, drawing from ``rng`` (a numpy
    Generator: exactly ``ExpertAgent.act`` with that generator; None: numba's generator of this
    thread); -1 for a row whose hand is over."""
    step, top, allowed, knocks = level_turn(s, i, cfg)
    if step == TAKE_OR_NOT:
        return DRAW_DISCARD if expert_takes(s, i, top) else no_take(s, i)
    return expert_discard(s, i, cfg, rng, allowed, knocks) if step == DISCARD else step


@njit(cache=True)
def expert_action(s: np.ndarray, i: int, cfg: np.ndarray) -> int:
    """The compiled-policy table's ``expert``: :func:`expert_choice` drawing from numba's generator
    seeded by :func:`.compiled_base.view_seed`."""
    seed_by_view(s, i)
    return expert_choice(s, i, cfg, None)


#: ``expert_moves(venv, slots)``: the compiled expert's action for the seat to move in each of the
#: ``slots`` (row indices) of ``venv``, an int64 array in their order (-1 where the hand is over).
expert_moves = engine_moves("expert")


__all__ = [
    "expert_action",
    "expert_choice",
    "expert_discard",
    "expert_knocks",
    "expert_moves",
    "expert_takes",
    "feed_weight",
]
