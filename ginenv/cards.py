"""Cards, hands and their names: the one table every other module reads.

A card is a small int ``suit * 13 + rank`` (0..51), with ranks ``A23456789TJQK`` (ace low, rank 0)
and suits ``s c d h`` (the order OpenSpiel uses, so card ids match ``pyspiel`` without a table).
A set of cards (a hand, the stock, a meld) is an int bitmask with bit ``card`` set; the ranks of
one suit are 13 consecutive bits, so runs are shifts and sets are ANDs across suit lanes.

``parse_card`` / ``card_name`` are the two directions of the same table, as in python-chess.
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterable

from ginenv.validation import as_int

RANKS = "A23456789TJQK"
SUITS = "scdh"
NUM_RANKS = 13
NUM_SUITS = 4
NUM_CARDS = 52
FULL_DECK = (1 << NUM_CARDS) - 1

#: Deadwood value of each rank: ace 1, 2..10 face value, J/Q/K 10.
RANK_VALUES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)
#: Deadwood value of each card id.
CARD_VALUES = tuple(RANK_VALUES[c % NUM_RANKS] for c in range(NUM_CARDS))
#: Canonical name of each card id ("As", "Td", "Kh").
CARD_NAMES = tuple(RANKS[c % NUM_RANKS] + SUITS[c // NUM_RANKS] for c in range(NUM_CARDS))

_CARD_BY_NAME = {name.lower(): c for c, name in enumerate(CARD_NAMES)}
_CARD_BY_NAME.update({"10" + SUITS[c // NUM_RANKS]: c for c in range(NUM_CARDS) if c % 13 == 9})


_SHORT = reprlib.Repr()
_SHORT.maxlevel = 3
_SHORT.maxstring = 60
_SHORT.maxother = 60


def short_repr(value: object) -> str:
    """``repr`` shortened for error messages: a huge or deeply nested value read from a file or a
    config shows its start, never thousands of characters (and never recurses deeply)."""
    return _SHORT.repr(value)


class CardError(ValueError):
    """A card or a list of cards could not be read."""


class UnknownCardError(CardError):
    """A token is not the name of a card."""


class DuplicateCardError(CardError):
    """The same card appears twice where every card must be distinct."""


def rank(card: int) -> int:
    """Rank index 0..12 (ace 0, king 12)."""
    return card % NUM_RANKS


def suit(card: int) -> int:
    """Suit index 0..3 in the order ``s c d h``."""
    return card // NUM_RANKS


def make_card(rank_index: int, suit_index: int) -> int:
    """Card id from a rank index (0..12) and a suit index (0..3)."""
    return suit_index * NUM_RANKS + rank_index


def card_name(card: int) -> str:
    """Canonical two-character name of a card id, e.g. ``"7h"``, ``"Td"``."""
    if not 0 <= card < NUM_CARDS:
        raise UnknownCardError(f"card id {short_repr(card)} is out of range; card ids are 0..51")
    return CARD_NAMES[card]


def parse_card(token: str | int) -> int:
    """Card id of a name such as ``"As"``, ``"td"``, ``"10h"`` (case-insensitive).

    Integer ids of any integer type (numpy's too) come back as plain ints; bools are refused.
    """
    # Numpy integers are admitted (a deck drawn from a numpy array); bools are not cards.
    card = as_int(token)
    if card is not None:
        if 0 <= card < NUM_CARDS:
            return card
        raise UnknownCardError(f"card id {card} is out of range; card ids are 0..51")
    if not isinstance(token, str):
        raise UnknownCardError(f"cannot read a card from {short_repr(token)}; give a name like 'As' or '10h'")
    card = _CARD_BY_NAME.get(token.strip().lower())
    if card is None:
        raise UnknownCardError(
            f"unknown card {short_repr(token)}: a card is a rank (A 2-9 T/10 J Q K) followed by a suit "
            "(s c d h), e.g. 'As', 'Td', '10h'"
        )
    return card


def parse_cards(text: str | Iterable[str | int]) -> list[int]:
    """Cards from ``"As Td 10h Kc"`` (spaces or commas) or an iterable of names or ids.

    Ids may be any integer type (a numpy array of ids is an iterable of them); plain ints come back.

    Refuses unknown names and duplicates with a :class:`CardError` naming the bad token.
    """
    tokens = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    cards: list[int] = []
    seen = 0
    for token in tokens:
        card = parse_card(token)
        if seen >> card & 1:
            raise DuplicateCardError(f"card {CARD_NAMES[card]} appears twice in {short_repr(text)}")
        seen |= 1 << card
        cards.append(card)
    return cards


def mask_of(cards: Iterable[int]) -> int:
    """Bitmask of a collection of card ids (duplicates collapse)."""
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def _bits_table() -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(i for i in range(NUM_RANKS) if m >> i & 1) for m in range(1 << NUM_RANKS))


# Set bits of every 13-bit lane value: turns a 52-bit mask into a card list with four lookups.
_LANE_BITS = _bits_table()
_LANE = (1 << NUM_RANKS) - 1


def cards_of(mask: int) -> list[int]:
    """Card ids of a bitmask, ascending (suit-major: all spades, then clubs, ...)."""
    out: list[int] = []
    for base in (0, 13, 26, 39):
        lane = mask >> base & _LANE
        if lane:
            out.extend([base + r for r in _LANE_BITS[lane]])
    return out


def names(cards: Iterable[int] | int) -> str:
    """Space-separated names of cards (a list of ids or a bitmask), in the given or ascending order."""
    seq = cards_of(cards) if isinstance(cards, int) else list(cards)
    return " ".join(CARD_NAMES[c] for c in seq)


def mask_value(mask: int) -> int:
    """Sum of the deadwood values of the cards in a bitmask."""
    return sum(CARD_VALUES[c] for c in cards_of(mask))
