"""Brute-force reference for melds, deadwood and layoffs, written without ginenv.melds.

Everything here enumerates: every meld in a hand, every collection of pairwise-disjoint melds, every
subset of defender cards that can be laid off. It is slow and meant to be obviously correct; the tests
compare the fast search against it. Cards are the ids of ``ginenv.cards`` (``suit * 13 + rank``, ace
rank 0); the only thing borrowed from the package is that numbering.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

Meld = frozenset[int]


def rank(card: int) -> int:
    return card % 13


def suit(card: int) -> int:
    return card // 13


def value(card: int) -> int:
    """Ace 1, 2..10 face value, J/Q/K 10."""
    return min(rank(card) + 1, 10)


def total(cards: Iterable[int]) -> int:
    return sum(value(c) for c in cards)


def is_meld(cards: Iterable[int]) -> bool:
    """A set (3 or 4 cards of one rank) or a run (3+ consecutive cards of one suit, ace low, no wrap)."""
    cs = sorted(set(cards))
    if len(cs) < 3:
        return False
    if len({rank(c) for c in cs}) == 1:
        return len(cs) <= 4
    if len({suit(c) for c in cs}) != 1:
        return False
    ranks = [rank(c) for c in cs]
    return ranks == list(range(ranks[0], ranks[0] + len(ranks)))


def all_melds(hand: Iterable[int]) -> list[Meld]:
    """Every meld made only of cards of ``hand``."""
    cards = set(hand)
    out: list[Meld] = []
    for r in range(13):
        same = [c for c in cards if rank(c) == r]
        for size in (3, 4):
            out.extend(frozenset(combo) for combo in itertools.combinations(same, size))
    for s in range(4):
        for start in range(13):
            for end in range(start + 3, 14):
                run = frozenset(s * 13 + r for r in range(start, end))
                if run <= cards:
                    out.append(run)
    return out


def disjoint_collections(melds: list[Meld], max_cards: int) -> Iterable[tuple[Meld, ...]]:
    """Every collection of pairwise-disjoint melds (the empty one included)."""
    for k in range(max_cards // 3 + 1):
        for combo in itertools.combinations(melds, k):
            if sum(len(m) for m in combo) == len(frozenset().union(*combo)):
                yield combo


def min_deadwood(hand: Iterable[int]) -> int:
    """Least value of the cards left out of melds, over every collection of disjoint melds."""
    cards = frozenset(hand)
    return min(
        total(cards - frozenset().union(*combo))
        for combo in disjoint_collections(all_melds(cards), len(cards))
    )


def best_discard(hand: Iterable[int]) -> int:
    """Least deadwood after discarding one card of an 11-card hand."""
    cards = frozenset(hand)
    return min(min_deadwood(cards - {c}) for c in cards)


def knock_discards(hand: Iterable[int], limit: int) -> set[int]:
    """Cards whose discard leaves deadwood at most ``limit``."""
    cards = frozenset(hand)
    return {c for c in cards if min_deadwood(cards - {c}) <= limit}


def can_lay_off(melds: Iterable[Iterable[int]], cards: Iterable[int]) -> bool:
    """Whether all of ``cards`` can be laid off on ``melds``, one card at a time.

    A card goes on a meld when the meld plus the card is still a meld (the fourth card of a set, a card
    at either end of a run); the meld grows, so chains such as 8 then 9 on 5-6-7 are found.
    """
    todo = frozenset(cards)
    if not todo:
        return True
    table = tuple(frozenset(m) for m in melds)
    for card in todo:
        for i, meld in enumerate(table):
            grown = meld | {card}
            if is_meld(grown):
                rest = table[:i] + (grown,) + table[i + 1 :]
                if can_lay_off(rest, todo - {card}):
                    return True
    return False


def _may_join(meld: Meld, card: int) -> bool:
    if len({rank(c) for c in meld}) == 1:
        return rank(card) == rank(next(iter(meld)))
    return suit(card) == suit(next(iter(meld)))


def defender_deadwood(knocker_melds: Iterable[Iterable[int]], defender: Iterable[int]) -> int:
    """Least defender deadwood over every subset of cards that can be laid off on the knocker's melds."""
    melds = [frozenset(m) for m in knocker_melds]
    cards = frozenset(defender)
    # A laid-off card ends in a set of its rank or a run of its suit: no other card can ever go.
    candidates = [c for c in sorted(cards) if any(_may_join(m, c) for m in melds)]
    best = min_deadwood(cards)
    for k in range(1, len(candidates) + 1):
        for laid in itertools.combinations(candidates, k):
            if can_lay_off(melds, laid):
                best = min(best, min_deadwood(cards - frozenset(laid)))
    return best


#: Every meld of the full deck (sets of 3 and 4, runs of 3 to 13).
ALL_MELDS: list[Meld] = all_melds(range(52))
