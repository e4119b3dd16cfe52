"""The heuristic levels' card evaluation compiled: the hot loops behind :mod:`.heuristics`.

numba functions (``cache=True``) over card bitmasks, built on the compiled rule primitives of
:mod:`ginenv.kernels` (the one home of the deadwood search and the showdown). The words they use
(after-draw deadwood, expected cost, danger, ...) are defined in the docstring of
:mod:`.heuristics`, whose typed functions wrap these; the levels call these directly only
inside their own numba code (:mod:`.expert`, :mod:`.belief`, :mod:`.master`). The take guard's
rule (:func:`useful_discards`, :func:`take_guarded`) is here too, compiled once for every level:
:class:`.level_base.TakeGuard`, the compiled ``hard`` and ``greedy`` read it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ginenv.cards import NUM_CARDS
from ginenv.kernels import (
    CARD_VALUE,
    MELD_PARTNERS,
    RUN_PARTNERS,
    SET_PARTNERS,
    best_discards,
    meldable,
    min_deadwood,
    popcount,
)

#: Danger weight of a meld window for each of its other cards the opponent took from the pile.
TAKEN_WEIGHT = 2.0
#: Factor applied to set (run) windows when the opponent discarded or passed a card of the same
#: rank (a same-suit card within two ranks): evidence that it is not collecting them.
AVOIDED_FACTOR = 0.5


@njit(cache=True)
def after_draw(hand: int, card: int, base: int, best_minus_one: int) -> int:
    """Least deadwood of ``hand + card`` after its best discard (the levels' shared kernel).

    ``base`` is ``dw(hand)`` and ``best_minus_one`` is ``min_x dw(hand - x)``: when ``card`` can be
    in no meld they settle the value without a search.
    """
    bit = 1 << card
    grown = hand | bit
    if meldable(grown) & bit:
        return best_discards(grown)[0]
    return min(base, CARD_VALUE[card] + best_minus_one)


@njit(cache=True)
def draw_table(hand: int, candidates: int) -> np.ndarray:
    """After-draw deadwood of ``hand`` for each card of ``candidates`` (-1 for other cards)."""
    out = np.full(NUM_CARDS, -1, dtype=np.int64)
    if hand == 0:
        base = 0
        best_minus_one = 0
    else:
        base = min_deadwood(hand)
        best_minus_one = best_discards(hand)[0]
    for c in range(NUM_CARDS):
        if (candidates >> c) & 1:
            out[c] = after_draw(hand, c, base, best_minus_one)
    return out


@njit(cache=True)
def max_deadwood_value(hand: int) -> int:
    """The highest value of a card that is deadwood in some least-deadwood arrangement of ``hand``
    (``dw(hand - c) + value(c) == dw(hand)``; 0 if none)."""
    base = min_deadwood(hand)
    best = 0
    for c in range(NUM_CARDS):
        if (hand >> c) & 1:
            value = CARD_VALUE[c]
            if value > best and min_deadwood(hand ^ (1 << c)) + value == base:
                best = value
    return best


@njit(cache=True)
def gin_outs(hand: int, candidates: int) -> int:
    """Candidate cards that give the 10-card ``hand`` deadwood 0 after the best discard (gin)."""
    table = draw_table(hand, candidates)
    out = 0
    for c in range(NUM_CARDS):
        if (candidates >> c) & 1 and table[c] == 0:
            out |= 1 << c
    return out


@njit(cache=True)
def deadwood_cards(hand: int) -> int:
    """Cards that are deadwood in at least one least-deadwood arrangement of ``hand``: the cards ``c``
    with ``dw(hand - c) + value(c) == dw(hand)``."""
    base = min_deadwood(hand)
    out = 0
    for c in range(NUM_CARDS):
        if (hand >> c) & 1 and min_deadwood(hand ^ (1 << c)) + CARD_VALUE[c] == base:
            out |= 1 << c
    return out


@njit(cache=True)
def partner_cards(cards: int) -> int:
    """Cards of ``cards`` with a meld partner among ``cards`` (same rank, or same suit within two
    ranks: a pair or a run draw)."""
    out = 0
    for c in range(NUM_CARDS):
        if (cards >> c) & 1 and cards & MELD_PARTNERS[c]:
            out |= 1 << c
    return out


@njit(cache=True)
def interest_cards(taken: int) -> int:
    """The meld partners of the cards of ``taken`` that are not in ``taken``."""
    out = 0
    for c in range(NUM_CARDS):
        if (taken >> c) & 1:
            out |= MELD_PARTNERS[c]
    return out & ~taken


#: What :func:`discard_deadwood` holds for the cards it does not weigh (above any deadwood).
NOT_WEIGHED = 1 << 30


@njit(cache=True)
def discard_deadwood(hand: int, allowed: int) -> np.ndarray:
    """``dw(hand - c)`` for each card ``c`` of ``allowed`` (:data:`NOT_WEIGHED` for other cards)."""
    out = np.full(NUM_CARDS, NOT_WEIGHED, dtype=np.int64)
    for c in range(NUM_CARDS):
        if (allowed >> c) & 1:
            out[c] = min_deadwood(hand ^ (1 << c))
    return out


@njit(cache=True)
def least_cards(values: np.ndarray, mask: int) -> int:
    """The cards of ``mask`` whose entry of ``values`` is the least among them."""
    out = 0
    best = values[0]
    for c in range(NUM_CARDS):
        if (mask >> c) & 1:
            if out == 0 or values[c] < best:
                best = values[c]
                out = 0
            if values[c] == best:
                out |= 1 << c
    return out


@njit(cache=True)
def top_cards(values: np.ndarray, mask: int) -> int:
    """The cards of ``mask`` whose entry of ``values`` is the greatest among them."""
    return least_cards(-values, mask)


@njit(cache=True)
def best_other_discard(hand: int, card: int) -> int:
    """The least deadwood of ``hand + card`` after discarding one of the cards of ``hand`` (the card
    just taken from the pile cannot be thrown back the same turn)."""
    return discard_deadwood(hand | (1 << card), hand).min()


@njit(cache=True)
def completes_meld(hand: int, card: int) -> bool:
    """Whether taking ``card`` into ``hand`` melds it and lowers the deadwood after the best discard
    of another card."""
    base = min_deadwood(hand)
    if not min_deadwood(hand | (1 << card)) < base + CARD_VALUE[card]:
        return False  # the card would be deadwood
    return best_other_discard(hand, card) < base


@njit(cache=True)
def expected_cost(hand: int, candidates: int, limit: int, miss: float) -> float:
    """Mean over the candidates of ``after-draw deadwood + miss * [after-draw deadwood > limit]``."""
    base = min_deadwood(hand)
    if candidates == 0:
        return base + (miss if base > limit else 0.0)
    best_minus_one = best_discards(hand)[0]
    total = 0.0
    n = 0
    for c in range(NUM_CARDS):
        if (candidates >> c) & 1:
            value = after_draw(hand, c, base, best_minus_one)
            total += value
            if value > limit:
                total += miss
            n += 1
    return total / n


@njit(cache=True)
def discard_cost_table(
    hand: int, candidates: int, allowed: int, penalty: np.ndarray, limit: int, miss: float
) -> np.ndarray:
    """``expected_cost(hand - d, candidates) + penalty[d]`` for each allowed ``d`` (inf elsewhere)."""
    out = np.full(NUM_CARDS, np.inf)
    for d in range(NUM_CARDS):
        if (allowed >> d) & 1:
            out[d] = expected_cost(hand ^ (1 << d), candidates, limit, miss) + penalty[d]
    return out


@njit(cache=True)
def sensible_discards(hand: int) -> int:
    """Cards whose discard does not break a meld: deadwood in some least-deadwood arrangement
    (``dw(hand - d) + value(d) == dw(hand)``) or a spare melded card (``dw(hand - d) == dw(hand)``)."""
    base = min_deadwood(hand)
    out = 0
    for d in range(NUM_CARDS):
        if (hand >> d) & 1:
            left = min_deadwood(hand ^ (1 << d))
            if left == base or left + CARD_VALUE[d] == base:
                out |= 1 << d
    return out


@njit(cache=True)
def stock_cost(hand: int, candidates: int, penalty: np.ndarray, limit: int, miss: float) -> float:
    """Mean over the candidate draws ``c`` of ``min_d [expected_deadwood(hand + c - d) + penalty[d]]``,
    the next draw's candidates being ``candidates - c``."""
    total = 0.0
    n = 0
    for c in range(NUM_CARDS):
        if (candidates >> c) & 1:
            bit = 1 << c
            grown = hand | bit
            rest = candidates ^ bit
            sensible = sensible_discards(grown) | bit
            best = np.inf
            for d in range(NUM_CARDS):
                if (sensible >> d) & 1:
                    value = expected_cost(grown ^ (1 << d), rest, limit, miss) + penalty[d]
                    if value < best:
                        best = value
            total += best
            n += 1
    if n == 0:
        return np.inf
    return total / n


@njit(cache=True)
def danger_table(live: int, taken: int, avoided: int) -> np.ndarray:
    """Danger of every card as a discard (see :func:`.heuristics.danger_scores`)."""
    out = np.zeros(NUM_CARDS)
    for card in range(NUM_CARDS):
        r = card % 13
        s = card // 13
        # Sets: three-card sets through ``card`` need two live cards of its rank (its set partners).
        same_rank = SET_PARTNERS[card]
        partners = popcount(live & same_rank)
        taken_partners = popcount(live & taken & same_rank)
        set_score = 0.0
        if partners >= 2:
            # Each pair of live partners is one window; taken partners weigh more.
            windows = partners * (partners - 1) / 2
            set_score = windows + TAKEN_WEIGHT * taken_partners * (partners - 1)
            if avoided & same_rank:
                set_score *= AVOIDED_FACTOR
        # Runs: the (up to) three three-card windows of the suit through ``card``.
        run_score = 0.0
        for lo in range(r - 2, r + 1):
            if lo < 0 or lo + 2 > 12:
                continue
            ok = True
            weight = 1.0
            for k in range(lo, lo + 3):
                if k == r:
                    continue
                other = s * 13 + k
                if not (live >> other) & 1:
                    ok = False
                    break
                if (taken >> other) & 1:
                    weight += TAKEN_WEIGHT
            if ok:
                run_score += weight
        if run_score > 0.0 and avoided & RUN_PARTNERS[card]:
            run_score *= AVOIDED_FACTOR
        out[card] = set_score + run_score
    return out


# ----------------------------------------------------------------- the take guard


@njit(cache=True)
def useful_discards(grown: int, taken: int) -> int:
    """After taking ``taken`` (``grown`` holds it): the other cards whose discard leaves less deadwood
    than the hand before the take. Only these may follow a take, so no level cycles cards through
    the pile (:class:`.level_base.TakeGuard`)."""
    before = min_deadwood(grown ^ (1 << taken))
    out = 0
    rest = grown & ~(1 << taken)
    while rest:
        low = rest & -rest
        rest ^= low
        if min_deadwood(grown ^ low) < before:
            out |= low
    return out


@njit(cache=True)
def take_guarded(hand: int, taken: int, allowed: int) -> int:
    """The discards allowed after a take of ``taken`` (-1: no take): the :func:`useful_discards`
    among ``allowed`` when there are some, else ``allowed`` (``TakeGuard.useful_only``)."""
    if taken >= 0:
        useful = useful_discards(hand, taken) & allowed
        if useful:
            return useful
    return allowed


__all__ = [
    "AVOIDED_FACTOR",
    "NOT_WEIGHED",
    "TAKEN_WEIGHT",
    "after_draw",
    "best_other_discard",
    "completes_meld",
    "danger_table",
    "deadwood_cards",
    "discard_cost_table",
    "discard_deadwood",
    "draw_table",
    "expected_cost",
    "gin_outs",
    "interest_cards",
    "least_cards",
    "max_deadwood_value",
    "partner_cards",
    "sensible_discards",
    "stock_cost",
    "take_guarded",
    "top_cards",
    "useful_discards",
]
