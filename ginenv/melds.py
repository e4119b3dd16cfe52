"""Melds and deadwood: the readable API over the exact least-deadwood search, and arrangements.

This module owns what a hand of cards is worth, as people and the engine ask it: deadwood of a list
of cards or names, best discards, legal knocks, and the arrangements behind them (which melds, which
deadwood cards). The search itself is :func:`ginenv.kernels.min_deadwood`, one readable recursive
function compiled by numba (``cache=True``); with ``NUMBA_DISABLE_JIT=1`` the very same source runs
as plain Python, so there is no second implementation to keep in step. It is exact for any hand
size (OpenSpiel's 11-card shortcut is only an upper bound on rare hands).

Tie-break between arrangements of equal deadwood (used at the showdown): fewest *layoff targets*
(unseen-to-the-knocker cards that could be laid off on the melds: the fourth card of a 3-card set
and the cards touching either end of a run), then the first in search order (runs before sets,
longer runs first). It depends on the knocker's own cards only, never on the defender's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ginenv import kernels
from ginenv.cards import (
    CARD_NAMES,
    CardError,
    cards_of,
    mask_of,
    parse_cards,
)

# The compiled search lives in ginenv.kernels (the one fast implementation); these names are the
# readable API's handles on it.
_value = kernels.hand_value
_meldable = kernels.meldable
_min_deadwood = kernels.min_deadwood
_knock_discards = kernels.knock_discards
_best_discards = kernels.best_discards
_best_discard_deadwood = kernels.best_discard_deadwood
_CARD_VALUE = kernels.CARD_VALUE
_RANK_MASK = kernels.RANK_MASK


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
