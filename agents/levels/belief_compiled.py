"""The opponent model of :mod:`.belief` compiled over the hand record, for the compiled levels.

:mod:`.expert_compiled` and :mod:`.master_compiled` rebuild the model at each decision from the
public record the engine keeps (:func:`model_of`): what the opponent took from the pile and still
holds, discarded and passed over (:func:`ginenv.kernels.hand.public_cards`), and the unseen cards
(:func:`ginenv.kernels.hand.unseen`), read as the events of :class:`.belief.OpponentModel` (whose
docstring is the model's one statement): a take event for each held card taken (a take withdrawn
by a later discard of the card is left out, as the model does), a pass event for each card passed
over, a discard event for each card discarded. With the shipped ``BeliefParams.memory`` of 1 an
event's factor does not depend on when it was seen, so the sets say what the model knows but the
order it learnt it in (:data:`MEMORY` is checked at import).

**The last bits of the weights.** The Python model adds each event's log factor as the events
come; the record keeps sets, not the order (nor the rare second discard of a card the opponent took
back), so the sums here add the same terms in another order (passes, takes, discards, each by card)
and may part from the level's in their last bits. Everything after the sums is computed as the
Python model does, numpy's pairwise sums included (:func:`np_sum`), so wherever the weights are
equal the marginals (:func:`holding_odds`), the next stock card's odds (:func:`stock_odds`) and the
sampled hands (:func:`sample_hands`: the model's own kernels drawing the same uniforms in the same
order as :meth:`.belief.OpponentModel.sample_hands`) are equal bit for bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from ginenv.agents.levels.belief import RELATIONS, BeliefParams, sample_subsets, subset_marginals, tilt_chains
from ginenv.agents.levels.compiled_base import card_ids, uniforms
from numba import njit

from ginenv.cards import NUM_CARDS
from ginenv.kernels import hand as H
from ginenv.kernels.meld_search import popcount
from ginenv.layout import HAND_SIZE

# The opponent model's constants as the compiled code reads them (numba freezes a global when it
# compiles: after editing a default, delete the numba caches of the compiled levels).
_BELIEF = BeliefParams()
#: The belief's evidence memory; the compiled model needs 1 (every event counts in full).
MEMORY = float(_BELIEF.memory)
if MEMORY != 1.0:
    raise ImportError("the compiled levels read the opponent's events as sets: BeliefParams.memory must be 1")
TAKE_FACTORS = np.array([_BELIEF.take_rank, _BELIEF.take_adjacent, _BELIEF.take_gap])
PASS_FACTORS = np.array([_BELIEF.pass_rank, _BELIEF.pass_adjacent, _BELIEF.pass_gap])
DISCARD_FACTORS = np.array([_BELIEF.disc_rank, _BELIEF.disc_adjacent, _BELIEF.disc_gap, _BELIEF.disc_higher])
QUALITY = float(_BELIEF.quality)
QUALITY_TURNS = int(_BELIEF.quality_turns)
NO_KNOCK = float(_BELIEF.no_knock)
BELIEF_TRAP = int(_BELIEF.trap)
#: Metropolis sweeps of the tilt (``OpponentModel.sample_hands``'s default).
SWEEPS = 8


# --------------------------------------------------------------------------- the opponent model


@njit(cache=True)
def np_sum(a: np.ndarray) -> float:
    """``a.sum()`` as numpy computes it, bit for bit, for at most 128 entries (numba's sum adds in
    order; numpy adds in eight running sums, paired at the end): the Python model's sums, which
    the weights and the stock odds must equal to the last bit. A card array has at most 52."""
    n = a.size
    if n > 128:
        raise ValueError("np_sum adds at most 128 entries")
    res = 0.0
    if n < 8:
        for k in range(n):
            res += a[k]
        return res
    r = a[:8].copy()
    k = 8
    while k < n - n % 8:
        for j in range(8):
            r[j] += a[k + j]
        k += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while k < n:
        res += a[k]
        k += 1
    return 0.0 + res


@njit(cache=True)
def _add_events(logw: np.ndarray, cards: int, factors: np.ndarray) -> None:
    # One event per card of ``cards``: log(f) added to the cards in each relation to it.
    for c in range(NUM_CARDS):
        if (cards >> c) & 1:
            for r in range(factors.size):
                f = factors[r]
                if f != 1.0:
                    step = math.log1p(f - 1.0)
                    for x in range(NUM_CARDS):
                        if RELATIONS[r, c, x] != 0.0:
                            logw[x] += step


@njit(cache=True)
def model_of(s: np.ndarray, i: int, seat: int) -> tuple[np.ndarray, np.ndarray, int, int, int]:
    """``seat``'s opponent model in row ``i`` (``OpponentModel`` after the seat's observations):
    (unseen card ids ascending, their weights normalised to mean log 0, the cards the opponent
    certainly holds, how many of its cards are unknown, its completed turns)."""
    taken, discarded, passed = H.public_cards(s, i, 1 - seat)
    unknown = H.unseen(s, i, seat)
    logw = np.zeros(NUM_CARDS)
    _add_events(logw, passed, PASS_FACTORS)
    _add_events(logw, taken & ~discarded, TAKE_FACTORS)
    _add_events(logw, discarded, DISCARD_FACTORS)
    ids = card_ids(unknown)
    w = np.empty(ids.size)
    if ids.size:
        mean = np_sum(logw[ids]) / ids.size
        for j in range(ids.size):
            w[j] = math.exp(logw[ids[j]] - mean)
    slots = max(0, min(HAND_SIZE - popcount(taken), ids.size))
    return ids, w, taken, slots, popcount(discarded)


@njit(cache=True)
def holding_odds(ids: np.ndarray, w: np.ndarray, known: int, slots: int) -> np.ndarray:
    """``p``: each card's chance of being in the opponent's hand (``OpponentModel.probabilities``:
    1 for the cards it certainly holds, 0 for cards gone, the posterior marginals for the unseen)."""
    out = np.zeros(NUM_CARDS)
    for c in range(NUM_CARDS):
        if (known >> c) & 1:
            out[c] = 1.0
    if ids.size:
        p = subset_marginals(w, slots)
        for j in range(ids.size):
            out[ids[j]] = p[j]
    return out


@njit(cache=True)
def stock_odds(ids: np.ndarray, w: np.ndarray, known: int, slots: int) -> np.ndarray:
    """``q``: each card's chance of being the next stock card (``OpponentModel.stock_probabilities``)."""
    out = np.zeros(NUM_CARDS)
    if ids.size == 0:
        return out
    p = subset_marginals(w, slots)
    free = 1.0 - p
    total = np_sum(free)
    for j in range(ids.size):
        out[ids[j]] = free[j] / total if total > 0 else 1.0 / ids.size
    return out


@njit(cache=True)
def sample_hands(
    rng: Any,
    n: int,
    ids: np.ndarray,
    w: np.ndarray,
    known: int,
    slots: int,
    turns: int,
    limit: int,
    trap: int,
) -> np.ndarray:
    """``n`` opponent hands from the model, tilted (``OpponentModel.sample_hands(n, rng, trap=trap)``)."""
    u = uniforms(rng, (n, ids.size))
    hands = sample_subsets(w, slots, ids, u, known)
    beta = QUALITY * min(turns, QUALITY_TURNS) / max(1, QUALITY_TURNS)
    penalty = -math.log(NO_KNOCK) if turns > 0 else 0.0
    if (beta > 0.0 or penalty > 0.0) and 0 < slots < ids.size:
        r = uniforms(rng, (n, SWEEPS * slots, 3))
        tilt_chains(hands, ids, w, slots, known, beta, penalty, limit, trap, r)
    return hands


__all__ = [
    "BELIEF_TRAP",
    "MEMORY",
    "holding_odds",
    "model_of",
    "np_sum",
    "sample_hands",
    "stock_odds",
]
