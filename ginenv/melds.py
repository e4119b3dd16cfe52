"""Melds and deadwood: the exact minimum-deadwood search and the arrangements behind it.

This module owns what a hand of cards is worth. The search is one readable recursive function,
:func:`_min_deadwood`, compiled by numba (``cache=True``) so that legal-knock masks and agents can
call it at C speed; with ``NUMBA_DISABLE_JIT=1`` the very same source runs as plain Python. There is
no second implementation to keep in step.

The search: cards that can be in no meld (no run of 3 through them, fewer than 3 of their rank) are
deadwood whatever happens and are peeled off first. Then the lowest remaining card (suit-major
order) is either deadwood, or starts a run (it is the lowest card of its suit, so a run through it
starts at it), or is in a set with other cards of its rank. Every arrangement is reached exactly
once, so the minimum is exact for any hand size (OpenSpiel's 11-card shortcut is only an upper
bound on rare hands).

Tie-break between arrangements of equal deadwood (used at the showdown): fewest *layoff targets*
(unseen-to-the-knocker cards that could be laid off on the melds: the fourth card of a 3-card set
and the cards touching either end of a run), then the first in search order (runs before sets,
longer runs first). It depends on the knocker's own cards only, never on the defender's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from numba import njit

from ginenv.cards import (
    CARD_NAMES,
    CARD_VALUES,
    NUM_RANKS,
    RANK_VALUES,
    CardError,
    cards_of,
    mask_of,
    parse_cards,
)

_LANE = (1 << NUM_RANKS) - 1
# A run can start at ranks A..J (0..10) of each suit; masking with this keeps runs inside a suit.
_RUN_STARTS = sum(((1 << 11) - 1) << (NUM_RANKS * s) for s in range(4))
_LANE_VALUE = np.array(
    [sum(RANK_VALUES[r] for r in range(NUM_RANKS) if m >> r & 1) for m in range(1 << NUM_RANKS)],
    dtype=np.int64,
)
_LANE_LOWEST = np.array(
    [(m & -m).bit_length() - 1 if m else -1 for m in range(1 << NUM_RANKS)], dtype=np.int64
)
_CARD_VALUE = np.array(CARD_VALUES, dtype=np.int64)
# Bitmask of the four cards of each rank.
_RANK_MASK = np.array([sum(1 << (r + 13 * s) for s in range(4)) for r in range(13)], dtype=np.int64)


@njit(cache=True)
def _value(mask: int) -> int:
    """Total deadwood value of the cards in ``mask``."""
    return (
        _LANE_VALUE[mask & _LANE]
        + _LANE_VALUE[(mask >> 13) & _LANE]
        + _LANE_VALUE[(mask >> 26) & _LANE]
        + _LANE_VALUE[(mask >> 39) & _LANE]
    )


@njit(cache=True)
def _lowest(mask: int) -> int:
    """Index of the lowest card in a non-empty mask."""
    for base in (0, 13, 26, 39):
        lane = (mask >> base) & _LANE
        if lane:
            return base + _LANE_LOWEST[lane]
    return -1


@njit(cache=True)
def _meldable(mask: int) -> int:
    """Cards of ``mask`` that belong to at least one meld made only of cards of ``mask``."""
    starts = mask & (mask >> 1) & (mask >> 2) & _RUN_STARTS
    in_runs = starts | (starts << 1) | (starts << 2)
    a = mask & _LANE
    b = (mask >> 13) & _LANE
    c = (mask >> 26) & _LANE
    d = (mask >> 39) & _LANE
    three = (a & b & c) | (a & b & d) | (a & c & d) | (b & c & d)
    in_sets = mask & (three | (three << 13) | (three << 26) | (three << 39))
    return in_runs | in_sets


@njit(cache=True)
def _min_deadwood(mask: int) -> int:
    """Exact least deadwood of exactly the cards of ``mask`` (no discard)."""
    if mask == 0:
        return 0
    free = mask & ~_meldable(mask)
    if free:
        return _value(free) + _min_deadwood(mask ^ free)
    card = _lowest(mask)
    bit = 1 << card
    best = _CARD_VALUE[card] + _min_deadwood(mask ^ bit)
    # Runs starting at the lowest card, shortest first.
    rank = card % 13
    run = bit
    length = 1
    while best > 0 and rank + length < 13 and (mask >> (card + length)) & 1:
        run |= 1 << (card + length)
        length += 1
        if length >= 3:
            best = min(best, _min_deadwood(mask ^ run))
    # Sets through the lowest card: the other cards of its rank all lie in higher suits.
    others = (mask & _RANK_MASK[rank]) ^ bit
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
            best = min(best, _min_deadwood(mask ^ others ^ bit))
            for skip in range(3):
                best = min(best, _min_deadwood(mask ^ bit ^ (others ^ bits[skip])))
        elif n == 2:
            best = min(best, _min_deadwood(mask ^ bit ^ others))
    return best


@njit(cache=True)
def _knock_discards(mask: int, limit: int) -> int:
    """Cards of an 11-card ``mask`` whose discard leaves deadwood at most ``limit``."""
    free = mask & ~_meldable(mask)
    # Removing a card never makes another card meldable, so the free cards other than the
    # discard stay deadwood: a cheap bound that settles most hands without a search.
    if free:
        top = 0
        rest = free
        while rest:
            low = rest & -rest
            top = max(top, _CARD_VALUE[_lowest(low)])
            rest ^= low
        if _value(free) - top > limit:
            return 0
    out = 0
    rest = mask
    while rest:
        low = rest & -rest
        rest ^= low
        if _min_deadwood(mask ^ low) <= limit:
            out |= low
    return out


@njit(cache=True)
def _best_discard_deadwood(mask: int) -> int:
    """Least deadwood over every single-card discard from ``mask``."""
    return _best_discards(mask)[0]


@njit(cache=True)
def _best_discards(mask: int) -> tuple[int, int]:
    """(least deadwood after one discard, bitmask of every discard reaching it)."""
    best = 1 << 30
    which = 0
    rest = mask
    while rest:
        low = rest & -rest
        rest ^= low
        value = _min_deadwood(mask ^ low)
        if value < best:
            best, which = value, low
        elif value == best:
            which |= low
    return best, which


_BIT = {c: 1 << c for c in range(52)}


def _as_mask(cards: Iterable[int | str] | str | int) -> int:
    if isinstance(cards, list):
        # Fast path for a list of card ids, the common call: one C-level pass. A value equal to a
        # card id (numpy ints too) is that card; anything else (names, duplicates, out of range)
        # takes the parsing path below, which gives the precise error.
        try:
            mask = sum(map(_BIT.__getitem__, cards))
            if mask.bit_count() == len(cards):
                return mask
        except (KeyError, TypeError):
            pass
    elif isinstance(cards, int):
        if isinstance(cards, bool):
            raise CardError(f"expected cards, got {cards!r}")
        return cards
    return mask_of(parse_cards(cards))


def deadwood(cards: Iterable[int | str] | str) -> int:
    """Least deadwood of exactly these cards (no discard), any hand size.

    ``cards`` is a list of card ids or names, or a string such as ``"As 2s 3s Kd"``.
    """
    # numba already returns a Python int: no int() round trip on the hot path.
    return _min_deadwood(_as_mask(cards))  # type: ignore[no-any-return]


def deadwood_of_mask(mask: int) -> int:
    """:func:`deadwood` for a bitmask, without parsing: the hot path for engines and agents."""
    return _min_deadwood(mask)  # type: ignore[no-any-return]


def knock_discards(mask: int, limit: int) -> int:
    """Bitmask of the cards whose discard leaves deadwood ``<= limit`` (for an 11-card mask)."""
    return _knock_discards(mask, limit)  # type: ignore[no-any-return]


def best_discard_deadwood(cards: Iterable[int | str] | str | int) -> int:
    """For an 11-card hand (list, string or mask): the least deadwood after one discard.

    The same quantity as OpenSpiel's ``min_deadwood`` on 11 cards, but exact.
    """
    return _best_discard_deadwood(_as_mask(cards))  # type: ignore[no-any-return]


def best_discards(cards: Iterable[int | str] | str) -> tuple[int, list[int]]:
    """For an 11-card hand: the least deadwood after one discard, and every discard reaching it."""
    best, which = _best_discards(_as_mask(cards))
    return int(best), cards_of(int(which))


# --------------------------------------------------------------------------- arrangements


def is_meld(mask: int) -> bool:
    """True if the cards of ``mask`` form one set (3-4 of a rank) or one run (3+ in suit)."""
    cards = cards_of(mask)
    if len(cards) < 3:
        return False
    ranks = {c % 13 for c in cards}
    suits = {c // 13 for c in cards}
    if len(ranks) == 1:
        return len(cards) <= 4
    if len(suits) == 1:
        lo = min(cards)
        return mask == ((1 << len(cards)) - 1) << lo
    return False


def meld_kind(mask: int) -> str:
    """``"set"`` or ``"run"`` for a meld mask."""
    cards = cards_of(mask)
    return "set" if len({c % 13 for c in cards}) == 1 else "run"


def _branches(mask: int) -> Iterator[tuple[int, bool]]:
    """(cards, is_meld) choices for the lowest card of ``mask``, in search order."""
    card = (mask & -mask).bit_length() - 1
    bit = 1 << card
    rank = card % 13
    run = bit
    length = 1
    runs = []
    while rank + length < 13 and mask >> (card + length) & 1:
        run |= 1 << (card + length)
        length += 1
        if length >= 3:
            runs.append(run)
    for r in reversed(runs):  # longer runs first
        yield r, True
    others = cards_of(mask & int(_RANK_MASK[rank]) & ~bit)
    if len(others) == 3:
        yield bit | mask_of(others), True
    for pair in itertools.combinations(others, 2):
        yield bit | mask_of(pair), True
    yield bit, False


def _enumerate_best(mask: int, limit: int) -> Iterator[list[int]]:
    """Every meld list whose leftover deadwood on ``mask`` is exactly ``_min_deadwood(mask)``."""
    if mask == 0:
        yield []
        return
    target = int(_min_deadwood(mask))
    for cards, is_a_meld in _branches(mask):
        cost = 0 if is_a_meld else int(_CARD_VALUE[(cards).bit_length() - 1])
        if cost + int(_min_deadwood(mask ^ cards)) != target:
            continue
        for tail in _enumerate_best(mask ^ cards, limit):
            yield ([cards] if is_a_meld else []) + tail
            limit -= 1
            if limit <= 0:
                return


def layoff_targets(melds: Iterable[int]) -> int:
    """Cards that could be laid off directly on these melds (the 4th card of a 3-card set, run ends)."""
    targets = 0
    for meld in melds:
        cards = cards_of(meld)
        if meld_kind(meld) == "set":
            if len(cards) == 3:
                targets |= int(_RANK_MASK[cards[0] % 13]) & ~meld
        else:
            lo, hi = cards[0], cards[-1]
            if lo % 13 > 0:
                targets |= 1 << (lo - 1)
            if hi % 13 < 12:
                targets |= 1 << (hi + 1)
    return targets


@dataclass(frozen=True)
class Arrangement:
    """A way to lay down a hand: its melds (bitmasks) and the deadwood cards left over."""

    melds: tuple[int, ...]
    deadwood_cards: int

    @property
    def deadwood(self) -> int:
        """Point total of the deadwood cards."""
        return int(_value(self.deadwood_cards))

    def __str__(self) -> str:
        parts = ["[" + " ".join(CARD_NAMES[c] for c in cards_of(m)) + "]" for m in self.melds]
        loose = " ".join(CARD_NAMES[c] for c in cards_of(self.deadwood_cards))
        return " ".join(parts + ([loose] if loose else [])) + f" (deadwood {self.deadwood})"


def best_arrangements(cards: Iterable[int | str] | str | int, limit: int = 256) -> list[Arrangement]:
    """Every least-deadwood arrangement of exactly these cards (at most ``limit``), search order."""
    mask = _as_mask(cards)
    out = []
    for melds in _enumerate_best(mask, limit):
        melded = 0
        for m in melds:
            melded |= m
        out.append(Arrangement(tuple(melds), mask & ~melded))
    return out


def best_arrangement(cards: Iterable[int | str] | str | int) -> Arrangement:
    """The least-deadwood arrangement, ties broken by fewest layoff targets (see module docstring)."""
    mask = _as_mask(cards)
    options = best_arrangements(mask)
    # Only cards the knocker does not hold can be laid off: its own cards are no targets.
    return min(options, key=lambda a: bin(layoff_targets(a.melds) & ~mask).count("1"))
