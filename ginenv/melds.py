"""Melds and deadwood: the readable API over the exact least-deadwood search, and arrangements.

This module owns what a hand of cards is worth, as people and the engine ask it: deadwood of a list
of cards or names, best discards, legal knocks, and the arrangements behind them (which melds, which
deadwood cards). Every answer comes from the compiled search of :mod:`ginenv.kernels`
(:func:`ginenv.kernels.min_deadwood`, :func:`ginenv.kernels.least_arrangements`,
:func:`ginenv.kernels.showdown_melds`): this module parses cards and names results, and computes
nothing of its own. The search is exact for any hand size (OpenSpiel's 11-card shortcut is only an
upper bound on rare hands); ``tests/ginenv/reference.py`` is the independent brute-force oracle.

Tie-break between arrangements of equal deadwood (used at the showdown): fewest *layoff targets*
(unseen-to-the-knocker cards that could be laid off on the melds: the fourth card of a 3-card set
and the cards touching either end of a run), then the first in search order (runs before sets,
longer runs first). It depends on the knocker's own cards only, never on the defender's.
"""

from __future__ import annotations

from collections.abc import Iterable
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


def _arrangement(mask: int, melds: Iterable[int]) -> Arrangement:
    kept = tuple(int(m) for m in melds if m)
    melded = 0
    for m in kept:
        melded |= m
    return Arrangement(kept, mask & ~melded)


def best_arrangements(cards: Iterable[int | str] | str | int, limit: int = 256) -> list[Arrangement]:
    """Every least-deadwood arrangement of exactly these cards (at most ``limit``), search order
    (:func:`ginenv.kernels.least_arrangements`)."""
    mask = _as_mask(cards)
    return [_arrangement(mask, row) for row in kernels.least_arrangements(mask, max(1, limit)).tolist()]


def best_arrangement(cards: Iterable[int | str] | str | int) -> Arrangement:
    """The least-deadwood arrangement, ties broken by fewest layoff targets (see module docstring;
    :func:`ginenv.kernels.showdown_melds`)."""
    mask = _as_mask(cards)
    return _arrangement(mask, kernels.showdown_melds(mask).tolist())
