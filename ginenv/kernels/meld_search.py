"""The compiled rule primitives: what a hand of cards is worth.

This module owns every numba-compiled rule primitive: card bit tricks (:func:`popcount`,
:func:`lowest_card`, :func:`highest_card`), card values (:func:`hand_value`), the cards each card can
meld with (:data:`MELD_PARTNERS`), the exact least-deadwood search (:func:`min_deadwood`), legal
knocks and best discards (:func:`knock_discards`, :func:`best_discards`), the knocker's arrangement
at the showdown (:func:`showdown_melds`, with the tie-break of :mod:`ginenv.melds`), the defender's
joint melds and layoffs (:func:`layoff_deadwood`) and the score of a knock (:func:`knock_outcome`).
The readable engine's fast paths (:mod:`ginenv.melds`), the batched engine (:mod:`ginenv.vector`)
and the agents all call these; the readable reference is :mod:`ginenv.melds` /
:mod:`ginenv.scoring` in plain Python, and ``tests/ginenv/test_kernels.py`` proves the two equal on
many random hands.

Hands are int64 bitmasks over card ids ``suit * 13 + rank`` (:mod:`ginenv.cards`). Every function is
``@njit(cache=True)``: compiled on first call, then cached on disk beside this file, so later
processes load machine code instead of compiling. numba checks a cached function against its own
file only: after editing a kernel that functions of other files call (``hand.encode`` inside
:mod:`ginenv.vector`'s step), delete the ``*.nbi`` and ``*.nbc`` files under ``__pycache__``, or
those callers keep the old machine code. With ``NUMBA_DISABLE_JIT=1`` the same source runs as plain
Python.

The search (:func:`min_deadwood`): choose the sets (each rank holding 3 or 4 cards: no set, all of
them, or each 3 of 4), then every suit's runs are independent and looked up in a table of the
least run-only deadwood of each 13-bit suit. Every arrangement is covered, so the minimum is exact
for any hand size (OpenSpiel's 11-card shortcut is only an upper bound on rare hands).
"""

from __future__ import annotations

import enum

import numpy as np
from numba import njit

from ginenv.cards import CARD_VALUES, FULL_DECK, NUM_CARDS, NUM_RANKS, RANK_VALUES

LANE = (1 << NUM_RANKS) - 1
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


def _run_deadwood_table() -> np.ndarray:
    # For every 13-bit set of ranks of one suit: the least value left over when runs (3 or more
    # consecutive ranks) are laid down, by the recursion on the lowest rank (left over, or the start
    # of a run of 3, 4, ... cards); each entry needs only smaller ones.
    table = [0] * (1 << NUM_RANKS)
    for m in range(1, 1 << NUM_RANKS):
        low = m & -m
        r = low.bit_length() - 1
        best = RANK_VALUES[r] + table[m ^ low]
        run, length = low, 1
        while r + length < NUM_RANKS and m >> (r + length) & 1:
            run |= 1 << (r + length)
            length += 1
            if length >= 3:
                best = min(best, table[m ^ run])
        table[m] = best
    return np.array(table, dtype=np.int64)


#: Least deadwood of one suit's cards (a 13-bit lane) with runs only.
RUN_DEADWOOD = _run_deadwood_table()
#: Bitmask of the four cards of each rank.
RANK_MASK = np.array([sum(1 << (r + 13 * s) for s in range(4)) for r in range(13)], dtype=np.int64)


def _partner_tables() -> tuple[np.ndarray, np.ndarray]:
    """The meld partners of each card, as masks: (the other cards of its rank, the cards of its suit
    within two ranks)."""
    sets = np.zeros(NUM_CARDS, dtype=np.int64)
    runs = np.zeros(NUM_CARDS, dtype=np.int64)
    for c in range(NUM_CARDS):
        r, s = c % NUM_RANKS, c // NUM_RANKS
        sets[c] = int(RANK_MASK[r]) ^ (1 << c)
        runs[c] = sum(1 << (s * NUM_RANKS + r + d) for d in (-2, -1, 1, 2) if 0 <= r + d < NUM_RANKS)
    return sets, runs


#: The *meld partners* of card ``c``: the cards that make a meld of three with ``c`` and one more
#: card, so a pair or a run draw. ``SET_PARTNERS[c]``: the other cards of its rank (a set);
#: ``RUN_PARTNERS[c]``: the cards of its suit within two ranks (a run); ``MELD_PARTNERS[c]``: both.
#: The one statement of the relation the levels' danger, partner and interest figures are built on.
SET_PARTNERS, RUN_PARTNERS = _partner_tables()
MELD_PARTNERS = SET_PARTNERS | RUN_PARTNERS
#: Most least-deadwood arrangements the showdown's tie-break looks at (as ``melds.best_arrangements``).
MAX_ARRANGEMENTS = 256


class KnockKind(enum.IntEnum):
    """How a knock ends (:func:`knock_outcome`); ``KNOCK_KINDS[k]`` is ``KnockResult.kind``'s name."""

    KNOCK = 0
    UNDERCUT = 1
    GIN = 2
    BIG_GIN = 3


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
def _runs_only(mask: int) -> int:
    # Least deadwood of ``mask`` when only runs may be laid down: suits are independent.
    return (
        RUN_DEADWOOD[mask & LANE]
        + RUN_DEADWOOD[(mask >> 13) & LANE]
        + RUN_DEADWOOD[(mask >> 26) & LANE]
        + RUN_DEADWOOD[(mask >> 39) & LANE]
    )


@njit(cache=True)
def min_deadwood(mask: int) -> int:
    """Exact least deadwood of exactly the cards of ``mask`` (no discard), any number of cards.

    A meld is a set (3 or 4 cards of a rank) or a run (3+ consecutive cards of a suit). Once the
    sets are chosen, the runs of each suit are independent and :data:`RUN_DEADWOOD` holds the best
    of every suit's cards. So the search enumerates only the set choices: for each rank holding 3
    or 4 cards, no set, the set of all of them, or (with 4) each set of 3 leaving the fourth card
    to a run. A hand of 10 or 11 cards has at most 3 such ranks (at most 6 * 6 * 6 choices); most
    random hands have none and cost four table lookups.
    """
    a = mask & LANE
    b = (mask >> 13) & LANE
    c = (mask >> 26) & LANE
    d = (mask >> 39) & LANE
    set_ranks = (a & b & c) | (a & b & d) | (a & c & d) | (b & c & d)
    if set_ranks == 0:
        return _runs_only(mask)
    # A rank whose 3 or 4 cards lie in no possible run is always melded whole as a set.
    starts = mask & (mask >> 1) & (mask >> 2) & _RUN_STARTS
    in_runs = starts | (starts << 1) | (starts << 2)
    rest = set_ranks
    while rest:
        low = rest & -rest
        rest ^= low
        held = mask & RANK_MASK[_LANE_LOWEST[low]]
        if not held & in_runs:
            mask ^= held
            set_ranks ^= low
    best = _runs_only(mask)
    if set_ranks == 0 or best == 0:
        return best
    # Up to three ranks with 3+ cards (every hand of 11 cards or fewer): nested loops over their set
    # choices, no allocation. Choice 0 of a rank is "no set"; all zeros was counted above.
    rest = set_ranks
    low = rest & -rest
    rest ^= low
    h1 = mask & RANK_MASK[_LANE_LOWEST[low]]
    h2 = 0
    h3 = 0
    if rest:
        low = rest & -rest
        rest ^= low
        h2 = mask & RANK_MASK[_LANE_LOWEST[low]]
    if rest:
        low = rest & -rest
        rest ^= low
        h3 = mask & RANK_MASK[_LANE_LOWEST[low]]
    if rest:
        return _min_deadwood_many_sets(mask, set_ranks, best)
    for j1 in range(_set_choices(h1)):
        o1 = _set_choice(h1, j1)
        for j2 in range(_set_choices(h2)):
            o12 = o1 | _set_choice(h2, j2)
            for j3 in range(_set_choices(h3)):
                removed = o12 | _set_choice(h3, j3)
                if removed:
                    value = _runs_only(mask ^ removed)
                    if value < best:
                        best = value
                        if best == 0:
                            return 0
    return best


@njit(cache=True)
def _set_choices(held: int) -> int:
    # How many set choices the cards ``held`` of one rank give: none (no cards: 1), no set or the
    # set (3 cards: 2), no set, the four, or one of four sets of three (4 cards: 6).
    if held == 0:
        return 1
    return 6 if popcount(held) == 4 else 2


@njit(cache=True)
def _set_choice(held: int, j: int) -> int:
    # The cards of choice ``j`` taken out as a set: 0 none, 1 all of them, 2.. all but one card.
    if j == 0:
        return 0
    if j == 1:
        return held
    rest = held
    for _ in range(j - 2):
        rest &= rest - 1
    return held ^ (rest & -rest)


@njit(cache=True)
def _min_deadwood_many_sets(mask: int, set_ranks: int, best: int) -> int:
    # The same search for hands with more than three ranks of 3+ cards (12 cards or more): an
    # odometer over every rank's set choices.
    ranks = np.empty(13, dtype=np.int64)
    n = 0
    rest = set_ranks
    while rest:
        low = rest & -rest
        rest ^= low
        ranks[n] = mask & RANK_MASK[_LANE_LOWEST[low]]
        n += 1
    choice = np.zeros(n, dtype=np.int64)
    while True:
        k = 0
        while k < n:
            choice[k] += 1
            if choice[k] < _set_choices(ranks[k]):
                break
            choice[k] = 0
            k += 1
        if k == n:
            return best
        removed = 0
        for k in range(n):
            removed |= _set_choice(ranks[k], choice[k])
        best = min(best, _runs_only(mask ^ removed))


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


@njit(cache=True)
def own_deadwood(mask: int) -> int:
    """A hand's deadwood as its holder counts it: of 10 cards, or after the best discard of 11."""
    return best_discard_deadwood(mask) if popcount(mask) >= 11 else min_deadwood(mask)


@njit(cache=True)
def own_deadwood_many(masks: np.ndarray) -> np.ndarray:
    """:func:`own_deadwood` of each mask of an int64 array (the batched call)."""
    out = np.empty(masks.size, dtype=np.int64)
    for i in range(masks.size):
        out[i] = own_deadwood(masks[i])
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
def least_arrangements(hand: int, limit: int) -> np.ndarray:
    """Every least-deadwood arrangement of ``hand`` (at most ``limit``), in search order: runs from
    the lowest card first, longest first, then its 4-card set, its 3-card sets, the card left out.
    Row ``k`` holds arrangement ``k``'s melds as masks, 0-padded to 6 (a hand of 11 has at most 3)."""
    # A depth-first walk with an explicit stack (numba's on-disk cache cannot hold recursive
    # functions that fill arrays): one frame per card decided.
    frames = 13
    f_mask = np.zeros(frames, dtype=np.int64)
    f_melds = np.zeros((frames, 16), dtype=np.int64)
    f_leave = np.zeros((frames, 16), dtype=np.int64)
    f_count = np.zeros(frames, dtype=np.int64)
    f_next = np.zeros(frames, dtype=np.int64)
    f_depth = np.zeros(frames, dtype=np.int64)
    stack = np.zeros(6, dtype=np.int64)
    out = np.zeros((max(1, limit), 6), dtype=np.int64)
    if hand == 0:
        return out[:1]
    f_mask[0] = hand
    f_count[0] = _branches(hand, f_melds[0], f_leave[0])
    seen = 0
    sp = 0
    while sp >= 0 and seen < limit:
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
            out[seen, :depth] = stack[:depth]
            seen += 1
            continue
        sp += 1
        f_mask[sp] = rest
        f_depth[sp] = depth
        f_next[sp] = 0
        f_count[sp] = _branches(rest, f_melds[sp], f_leave[sp])
    return out[:seen]


@njit(cache=True)
def showdown_melds(hand: int) -> np.ndarray:
    """The melds the knocker lays down: a least-deadwood arrangement of ``hand`` with the fewest
    layoff targets (cards it does not hold that could be laid off on them), first in search order
    on ties. The tie-break depends on the knocker's own cards only, never on the defender's."""
    options = least_arrangements(hand, MAX_ARRANGEMENTS)
    best = 0
    best_targets = 1 << 30
    for k in range(options.shape[0]):
        row = options[k]
        n = 0
        while n < 6 and row[n] != 0:
            n += 1
        targets = layoff_target_count(row, n, hand)
        if targets < best_targets:
            best_targets = targets
            best = k
    row = options[best]
    n = 0
    while n < 6 and row[n] != 0:
        n += 1
    return row[:n].copy()


@njit(cache=True)
def best_layoffs(melds: np.ndarray, defender: int) -> np.ndarray:
    """The defender's layoffs on the knocker's ``melds`` (masks) that leave the least deadwood, the
    defender's own melds and layoffs chosen together: the cards laid off on each meld (0: none).

    Every combination is tried (the fourth card of a 3-card set, chains extending a run at either
    end); ties go to fewer cards laid off, then to the first combination found, counting the last
    meld's options fastest. No layoff at all unless one lowers the deadwood."""
    nm = melds.size
    chosen = np.zeros(max(1, nm), dtype=np.int64)
    if nm == 0:
        return chosen[:0]
    best = min_deadwood(defender)
    best_count = 0
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
            count = popcount(used)
            if dw < best or (dw == best and best_count and count < best_count):
                best = dw
                best_count = count
                for m in range(nm):
                    chosen[m] = opts[m, idx[m]]
        # The next combination (mixed radix, the last meld fastest).
        m = nm - 1
        while m >= 0:
            idx[m] += 1
            if idx[m] < counts[m]:
                break
            idx[m] = 0
            m -= 1
        if m < 0:
            break
    return chosen


@njit(cache=True)
def layoff_deadwood(melds: np.ndarray, defender: int) -> int:
    """The defender's least deadwood after laying off on the knocker's ``melds`` (masks):
    :func:`best_layoffs`' choice."""
    laid = 0
    for part in best_layoffs(melds, defender):
        laid |= part
    return min_deadwood(defender & ~laid)


@njit(cache=True)
def defend_knock(
    melds: np.ndarray, knocker_deadwood: int, defender: int, gin_bonus: int, undercut_bonus: int
) -> tuple[int, int, int]:
    """Score a 10-card knock against one defender hand: ``(kind, points to the knocker, negative
    when undercut, defender deadwood after layoffs)``; ``kind`` is a :class:`KnockKind` value.

    The knocker's side comes in already arranged (its showdown ``melds``, :func:`showdown_melds`,
    and its deadwood), so a search that scores one knock against hundreds of sampled defenders
    arranges it once. :func:`knock_outcome` scores every knock of a game through this function.
    """
    if knocker_deadwood == 0:
        d_before = min_deadwood(defender)
        return KnockKind.GIN, gin_bonus + d_before, d_before
    d_dw = layoff_deadwood(melds, defender)
    if d_dw <= knocker_deadwood:
        return KnockKind.UNDERCUT, -(knocker_deadwood - d_dw + undercut_bonus), d_dw
    return KnockKind.KNOCK, d_dw - knocker_deadwood, d_dw


@njit(cache=True)
def knock_outcome(
    knocker: int, defender: int, gin_bonus: int, undercut_bonus: int, big_gin_bonus: int
) -> tuple[int, int, int, int]:
    """Score a legal knock: ``knocker`` holds the 10 cards kept (all 11 for big gin).

    Returns ``(kind, points to the knocker, negative when undercut, knocker deadwood, defender
    deadwood after layoffs)``; ``kind`` is a :class:`KnockKind` value. The same outcome as
    ``ginenv.scoring.score_knock`` (which also checks the knock is legal and lists the cards).
    """
    if popcount(knocker) == 11:
        d_before = min_deadwood(defender)
        return KnockKind.BIG_GIN, big_gin_bonus + d_before, 0, d_before
    k_dw = min_deadwood(knocker)
    # Gin lays off nothing, so its melds are not needed (nor searched for).
    melds = showdown_melds(knocker) if k_dw > 0 else np.zeros(0, dtype=np.int64)
    kind, points, d_dw = defend_knock(melds, k_dw, defender, gin_bonus, undercut_bonus)
    return kind, points, k_dw, d_dw


__all__ = [
    "CARD_VALUE",
    "FULL_DECK",
    "KNOCK_KINDS",
    "LANE",
    "MAX_ARRANGEMENTS",
    "MELD_PARTNERS",
    "RANK_MASK",
    "RUN_DEADWOOD",
    "RUN_PARTNERS",
    "SET_PARTNERS",
    "KnockKind",
    "best_discard_deadwood",
    "best_discards",
    "best_layoffs",
    "deadwood_many",
    "defend_knock",
    "hand_value",
    "highest_card",
    "knock_discards",
    "knock_outcome",
    "layoff_deadwood",
    "layoff_target_count",
    "least_arrangements",
    "lowest_card",
    "meldable",
    "min_deadwood",
    "own_deadwood",
    "own_deadwood_many",
    "popcount",
    "showdown_melds",
]
