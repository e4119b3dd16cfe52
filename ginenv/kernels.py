"""The compiled kernels: the one fast implementation of what a hand of cards is worth.

This module owns every numba-compiled rule primitive: card bit tricks (:func:`popcount`,
:func:`lowest_card`, :func:`highest_card`), card values (:func:`hand_value`), the exact least-deadwood
search (:func:`min_deadwood`), legal knocks and best discards (:func:`knock_discards`,
:func:`best_discards`), the knocker's arrangement at the showdown (:func:`showdown_melds`, with the
tie-break of :mod:`ginenv.melds`), the defender's joint melds and layoffs (:func:`layoff_deadwood`)
and the score of a knock (:func:`knock_outcome`). The readable engine's fast paths
(:mod:`ginenv.melds`), the batched engine (:mod:`ginenv.vector`) and the agents all call these; the
readable reference is :mod:`ginenv.melds` / :mod:`ginenv.scoring` in plain Python, and
``tests/ginenv/test_kernels.py`` proves the two equal on many random hands.

Hands are int64 bitmasks over card ids ``suit * 13 + rank`` (:mod:`ginenv.cards`). Every function is
``@njit(cache=True)``: compiled on first call, then cached on disk beside this file, so later
processes load machine code instead of compiling. With ``NUMBA_DISABLE_JIT=1`` the same source runs
as plain Python.

The search: cards that can be in no meld (no run of 3 through them, fewer than 3 of their rank) are
deadwood whatever happens and are peeled off first. Then the lowest remaining card (suit-major
order) is either deadwood, or starts a run (it is the lowest card of its suit, so a run through it
starts at it), or is in a set with other cards of its rank. Every arrangement is reached exactly
once, so the minimum is exact for any hand size.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ginenv.cards import CARD_VALUES, NUM_RANKS, RANK_VALUES

LANE = (1 << NUM_RANKS) - 1
#: Every card (52 low bits).
FULL_DECK = (1 << 52) - 1
# A run can start at ranks A..J (0..10) of each suit; masking with this keeps runs inside a suit.
_RUN_STARTS = sum(((1 << 11) - 1) << (NUM_RANKS * s) for s in range(4))
_LANE_VALUE = np.array(
    [sum(RANK_VALUES[r] for r in range(NUM_RANKS) if m >> r & 1) for m in range(1 << NUM_RANKS)],
    dtype=np.int64,
)
_LANE_LOWEST = np.array(
    [(m & -m).bit_length() - 1 if m else -1 for m in range(1 << NUM_RANKS)], dtype=np.int64
)
#: Deadwood value of each card id.
CARD_VALUE = np.array(CARD_VALUES, dtype=np.int64)
#: Bitmask of the four cards of each rank.
RANK_MASK = np.array([sum(1 << (r + 13 * s) for s in range(4)) for r in range(13)], dtype=np.int64)
#: Most least-deadwood arrangements the showdown's tie-break looks at (as ``melds.best_arrangements``).
MAX_ARRANGEMENTS = 256

#: Result kinds of :func:`knock_outcome` (the names of ``ginenv.scoring.KnockResult.kind``).
KNOCK, UNDERCUT, GIN, BIG_GIN = 0, 1, 2, 3
KNOCK_KINDS = ("knock", "undercut", "gin", "big_gin")


@njit(cache=True)
def popcount(x: int) -> int:
    """Number of cards in a mask."""
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit(cache=True)
def lowest_card(mask: int) -> int:
    """Id of the lowest card of a mask (-1 if empty)."""
    for base in (0, 13, 26, 39):
        lane = (mask >> base) & LANE
        if lane:
            return base + _LANE_LOWEST[lane]
    return -1


@njit(cache=True)
def highest_card(mask: int) -> int:
    """Id of the highest card of a mask (-1 if empty)."""
    c = 51
    while c >= 0 and not (mask >> c) & 1:
        c -= 1
    return c


@njit(cache=True)
def hand_value(mask: int) -> int:
    """Total deadwood value of the cards in ``mask``."""
    return (
        _LANE_VALUE[mask & LANE]
        + _LANE_VALUE[(mask >> 13) & LANE]
        + _LANE_VALUE[(mask >> 26) & LANE]
        + _LANE_VALUE[(mask >> 39) & LANE]
    )


@njit(cache=True)
def meldable(mask: int) -> int:
    """Cards of ``mask`` that belong to at least one meld made only of cards of ``mask``."""
    starts = mask & (mask >> 1) & (mask >> 2) & _RUN_STARTS
    in_runs = starts | (starts << 1) | (starts << 2)
    a = mask & LANE
    b = (mask >> 13) & LANE
    c = (mask >> 26) & LANE
    d = (mask >> 39) & LANE
    three = (a & b & c) | (a & b & d) | (a & c & d) | (b & c & d)
    in_sets = mask & (three | (three << 13) | (three << 26) | (three << 39))
    return in_runs | in_sets


@njit(cache=True)
def min_deadwood(mask: int) -> int:
    """Exact least deadwood of exactly the cards of ``mask`` (no discard), any number of cards."""
    if mask == 0:
        return 0
    free = mask & ~meldable(mask)
    if free:
        return hand_value(free) + min_deadwood(mask ^ free)
    card = lowest_card(mask)
    bit = 1 << card
    best = CARD_VALUE[card] + min_deadwood(mask ^ bit)
    # Runs starting at the lowest card, shortest first.
    rank = card % 13
    run = bit
    length = 1
    while best > 0 and rank + length < 13 and (mask >> (card + length)) & 1:
        run |= 1 << (card + length)
        length += 1
        if length >= 3:
            best = min(best, min_deadwood(mask ^ run))
    # Sets through the lowest card: the other cards of its rank all lie in higher suits.
    others = (mask & RANK_MASK[rank]) ^ bit
    if best > 0 and others:
        bits = np.empty(3, dtype=np.int64)
        n = 0
        rest = others
        while rest:
            low = rest & -rest
            bits[n] = low
            n += 1
            rest ^= low
        if n == 3:
            best = min(best, min_deadwood(mask ^ others ^ bit))
            for skip in range(3):
                best = min(best, min_deadwood(mask ^ bit ^ (others ^ bits[skip])))
        elif n == 2:
            best = min(best, min_deadwood(mask ^ bit ^ others))
    return best


@njit(cache=True)
def knock_discards(mask: int, limit: int) -> int:
    """Cards of an 11-card ``mask`` whose discard leaves deadwood at most ``limit``."""
    # Cards in no possible meld ("free") are deadwood whatever is discarded, and removing a card
    # never makes another card meldable: discarding a free card c leaves value(free) - value(c) plus
    # the least deadwood of the other cards, one search for all of them; discarding a meldable card
    # leaves at least value(free). Most random hands are settled by these bounds without a search.
    free = mask & ~meldable(mask)
    free_value = hand_value(free)
    core = -1
    out = 0
    rest = free
    while rest:
        low = rest & -rest
        rest ^= low
        left = free_value - CARD_VALUE[lowest_card(low)]
        if left <= limit:
            if core < 0:
                core = min_deadwood(mask ^ free)
            if left + core <= limit:
                out |= low
    if free_value > limit:
        return out
    rest = mask & ~free
    while rest:
        low = rest & -rest
        rest ^= low
        if min_deadwood(mask ^ low) <= limit:
            out |= low
    return out


@njit(cache=True)
def best_discards(mask: int) -> tuple[int, int]:
    """(least deadwood after one discard, bitmask of every discard reaching it)."""
    best = 1 << 30
    which = 0
    rest = mask
    while rest:
        low = rest & -rest
        rest ^= low
        value = min_deadwood(mask ^ low)
        if value < best:
            best, which = value, low
        elif value == best:
            which |= low
    return best, which


@njit(cache=True)
def best_discard_deadwood(mask: int) -> int:
    """Least deadwood over every single-card discard from ``mask``."""
    return best_discards(mask)[0]


@njit(cache=True)
def deadwood_many(masks: np.ndarray) -> np.ndarray:
    """:func:`min_deadwood` of each mask of an int64 array (the batched call)."""
    out = np.empty(masks.size, dtype=np.int64)
    for i in range(masks.size):
        out[i] = min_deadwood(masks[i])
    return out


# --------------------------------------------------------------------------- the showdown


@njit(cache=True)
def layoff_target_count(melds: np.ndarray, n: int, hand: int) -> int:
    """Cards not in ``hand`` that could be laid off directly on the first ``n`` melds (the fourth
    card of a 3-card set, the cards touching either end of a run): the showdown's tie-break."""
    targets = 0
    for i in range(n):
        meld = melds[i]
        lo = lowest_card(meld)
        rank_mask = RANK_MASK[lo % 13]
        if meld & ~rank_mask == 0:
            if popcount(meld) == 3:
                targets |= rank_mask & ~meld
        else:
            hi = highest_card(meld)
            if lo % 13 > 0:
                targets |= 1 << (lo - 1)
            if hi % 13 < 12:
                targets |= 1 << (hi + 1)
    return popcount(targets & ~hand)


@njit(cache=True)
def _branches(mask: int, melds: np.ndarray, leave: np.ndarray) -> int:
    # The choices for the lowest card of ``mask`` that keep the least deadwood, in the search order
    # of melds._enumerate_best: runs from it, longest first; the 4-card set; 3-card sets in
    # combination order; the card left out (``leave``). Returns how many were written.
    target = min_deadwood(mask)
    card = lowest_card(mask)
    bit = 1 << card
    rank = card % 13
    n = 0
    length = 1
    while rank + length < 13 and (mask >> (card + length)) & 1:
        length += 1
    for size in range(length, 2, -1):
        run = ((1 << size) - 1) << card
        if min_deadwood(mask ^ run) == target:
            melds[n] = run
            leave[n] = 0
            n += 1
    others = (mask & RANK_MASK[rank]) & ~bit
    o = np.zeros(3, dtype=np.int64)
    no = 0
    rest = others
    while rest:
        low = rest & -rest
        o[no] = low
        no += 1
        rest ^= low
    if no == 3 and min_deadwood(mask ^ bit ^ others) == target:
        melds[n] = bit | others
        leave[n] = 0
        n += 1
    for i in range(no):
        for j in range(i + 1, no):
            meld = bit | o[i] | o[j]
            if min_deadwood(mask ^ meld) == target:
                melds[n] = meld
                leave[n] = 0
                n += 1
    if CARD_VALUE[card] + min_deadwood(mask ^ bit) == target:
        melds[n] = bit
        leave[n] = 1
        n += 1
    return n


@njit(cache=True)
def showdown_melds(hand: int) -> np.ndarray:
    """The melds the knocker lays down: a least-deadwood arrangement of ``hand`` with the fewest
    layoff targets, first in search order on ties (exactly ``ginenv.melds.best_arrangement``)."""
    # A depth-first walk over the least-deadwood arrangements with an explicit stack (numba's
    # on-disk cache cannot hold recursive functions that fill arrays): one frame per card decided.
    frames = 13
    f_mask = np.zeros(frames, dtype=np.int64)
    f_melds = np.zeros((frames, 16), dtype=np.int64)
    f_leave = np.zeros((frames, 16), dtype=np.int64)
    f_count = np.zeros(frames, dtype=np.int64)
    f_next = np.zeros(frames, dtype=np.int64)
    f_depth = np.zeros(frames, dtype=np.int64)
    stack = np.zeros(6, dtype=np.int64)
    best = np.zeros(6, dtype=np.int64)
    best_targets = 1 << 30
    best_n = 0
    if hand == 0:
        return best[:0].copy()
    f_mask[0] = hand
    f_count[0] = _branches(hand, f_melds[0], f_leave[0])
    seen = 0
    sp = 0
    while sp >= 0 and seen < MAX_ARRANGEMENTS:
        b = f_next[sp]
        if b >= f_count[sp]:
            sp -= 1
            continue
        f_next[sp] = b + 1
        rest = f_mask[sp] ^ f_melds[sp, b]
        depth = f_depth[sp]
        if not f_leave[sp, b]:
            stack[depth] = f_melds[sp, b]
            depth += 1
        if rest == 0:
            seen += 1
            targets = layoff_target_count(stack, depth, hand)
            if targets < best_targets:
                best_targets = targets
                best_n = depth
                best[:depth] = stack[:depth]
            continue
        sp += 1
        f_mask[sp] = rest
        f_depth[sp] = depth
        f_next[sp] = 0
        f_count[sp] = _branches(rest, f_melds[sp], f_leave[sp])
    return best[:best_n].copy()


@njit(cache=True)
def layoff_deadwood(melds: np.ndarray, defender: int) -> int:
    """The defender's least deadwood after laying off on the knocker's ``melds`` (masks), the
    defender's own melds and layoffs chosen together (``ginenv.scoring``'s best layoffs)."""
    nm = melds.size
    best = min_deadwood(defender)
    if nm == 0:
        return best
    opts = np.zeros((nm, 64), dtype=np.int64)
    counts = np.ones(nm, dtype=np.int64)
    lows = np.zeros(14, dtype=np.int64)
    highs = np.zeros(14, dtype=np.int64)
    for m in range(nm):
        meld = melds[m]
        lo = lowest_card(meld)
        rank_mask = RANK_MASK[lo % 13]
        if meld & ~rank_mask == 0:  # a set: only its fourth card
            fourth = rank_mask & ~meld
            if popcount(meld) == 3 and defender & fourth:
                opts[m, 1] = fourth
                counts[m] = 2
            continue
        # A run: chains of defender cards extending it below and above.
        hi = highest_card(meld)
        nl = 1
        chain = 0
        card = lo - 1
        while card >= 0 and card % 13 != 12 and (defender >> card) & 1:
            chain |= 1 << card
            lows[nl] = chain
            nl += 1
            card -= 1
        nh = 1
        chain = 0
        card = hi + 1
        while card % 13 != 0 and (defender >> card) & 1:
            chain |= 1 << card
            highs[nh] = chain
            nh += 1
            card += 1
        c = 0
        for a in range(nl):
            for b in range(nh):
                opts[m, c] = (lows[a] if a else 0) | (highs[b] if b else 0)
                c += 1
        counts[m] = c
    idx = np.zeros(nm, dtype=np.int64)
    while True:
        used = 0
        clash = False
        for m in range(nm):
            part = opts[m, idx[m]]
            if used & part:
                clash = True
                break
            used |= part
        if not clash and used:
            dw = min_deadwood(defender & ~used)
            if dw < best:
                best = dw
        # Next combination (mixed radix).
        m = 0
        while m < nm:
            idx[m] += 1
            if idx[m] < counts[m]:
                break
            idx[m] = 0
            m += 1
        if m == nm:
            break
    return best


@njit(cache=True)
def knock_outcome(
    knocker: int, defender: int, gin_bonus: int, undercut_bonus: int, big_gin_bonus: int
) -> tuple[int, int, int, int]:
    """Score a legal knock: ``knocker`` holds the 10 cards kept (all 11 for big gin).

    Returns ``(kind, points to the knocker, negative when undercut, knocker deadwood, defender
    deadwood after layoffs)``; ``kind`` is :data:`KNOCK`, :data:`UNDERCUT`, :data:`GIN` or
    :data:`BIG_GIN`. The same outcome as ``ginenv.scoring.score_knock`` (which also checks the knock
    is legal and lists the cards).
    """
    d_before = min_deadwood(defender)
    if popcount(knocker) == 11:
        return BIG_GIN, big_gin_bonus + d_before, 0, d_before
    k_dw = min_deadwood(knocker)
    if k_dw == 0:
        return GIN, gin_bonus + d_before, 0, d_before
    d_dw = layoff_deadwood(showdown_melds(knocker), defender)
    if d_dw <= k_dw:
        return UNDERCUT, -(k_dw - d_dw + undercut_bonus), k_dw, d_dw
    return KNOCK, d_dw - k_dw, k_dw, d_dw


__all__ = [
    "BIG_GIN",
    "CARD_VALUE",
    "FULL_DECK",
    "GIN",
    "KNOCK",
    "KNOCK_KINDS",
    "MAX_ARRANGEMENTS",
    "RANK_MASK",
    "UNDERCUT",
    "best_discard_deadwood",
    "best_discards",
    "deadwood_many",
    "hand_value",
    "highest_card",
    "knock_discards",
    "knock_outcome",
    "layoff_deadwood",
    "layoff_target_count",
    "lowest_card",
    "meldable",
    "min_deadwood",
    "popcount",
    "showdown_melds",
]
