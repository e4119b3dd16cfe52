"""The exact deadwood search and its arrangements against the brute-force reference (ginenv.melds)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st

from ginenv import melds
from ginenv.cards import NUM_CARDS, cards_of, mask_of, parse_cards
from ginenv.kernels import meld_search as kernels
from ginenv.melds import (
    best_arrangement,
    best_arrangements,
    best_discards,
    deadwood,
    deadwood_of_mask,
    is_meld,
    knock_discards,
    meld_kind,
)


def layoff_targets(melds: tuple[int, ...]) -> int:
    """Cards that could be laid off directly on these melds (a 3-card set's fourth card, the cards
    touching a run's ends): the showdown's tie-break, restated here independently of the kernel."""
    targets = 0
    for meld in melds:
        cards = [c for c in range(NUM_CARDS) if meld >> c & 1]
        if len({c % 13 for c in cards}) == 1:
            if len(cards) == 3:
                targets |= sum(1 << (cards[0] % 13 + 13 * suit) for suit in range(4)) & ~meld
        else:
            lo, hi = cards[0], cards[-1]
            if lo % 13 > 0:
                targets |= 1 << (lo - 1)
            if hi % 13 < 12:
                targets |= 1 << (hi + 1)
    return targets


random_hands = st.lists(st.integers(0, NUM_CARDS - 1), unique=True, max_size=11)


@st.composite
def meld_rich_hands(draw: st.DrawFn, min_size: int = 0, max_size: int = 11) -> list[int]:
    """Two or three random melds (overlaps merged) plus filler, biased to cards that touch them."""
    cards: set[int] = set()
    for meld in draw(st.lists(st.sampled_from(ref.ALL_MELDS), min_size=2, max_size=3)):
        if len(cards | meld) <= max_size:
            cards |= meld
    size = draw(st.integers(max(min_size, len(cards)), max_size))
    near = sorted(
        c
        for c in range(NUM_CARDS)
        if c not in cards
        and any(ref.rank(c) == ref.rank(x) or (ref.suit(c) == ref.suit(x) and abs(c - x) <= 2) for x in cards)
    )
    while len(cards) < size:
        prefer_near: bool = draw(st.booleans())
        pool = near if near and prefer_near else [c for c in range(NUM_CARDS) if c not in cards]
        card = draw(st.sampled_from(pool))
        cards.add(card)
        if card in near:
            near.remove(card)
    return draw(st.permutations(sorted(cards)))


eleven_card_hands = st.one_of(
    st.lists(st.integers(0, NUM_CARDS - 1), unique=True, min_size=11, max_size=11),
    meld_rich_hands(min_size=11),
)

DESIGN_EXAMPLE = "As 2s 3s 4s 3c 4c 3d 4d 5d 3h 4h"


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        ("", 0),
        ("Kh", 10),
        ("As 2s", 3),
        ("As 2s 3s", 0),
        ("As 2c 3d", 6),
        ("Qs Ks As", 21),  # no wrap-around: Q-K-A is not a run
        ("Js Qs Ks", 0),
        ("7s 7c 7d 7h", 0),
        ("7s 7c 7d 8d 9d", 14),  # the run 7-8-9 beats the set of sevens
        ("7s 7c 7d 7h 8d 9d", 0),  # a four-set gives up one seven to the run
        ("5h 6h 7h 8h 5c 5d", 0),
        ("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js", 0),
        ("Ts Js Qs Ks Tc Jc Qc Kc Td Jd", 10),  # two runs to K and the tens
        (DESIGN_EXAMPLE, 3),
    ],
)
def test_deadwood_of_known_hands(hand: str, expected: int) -> None:
    assert deadwood(hand) == expected
    assert ref.min_deadwood(parse_cards(hand)) == expected


def test_deadwood_accepts_names_ids_and_masks() -> None:
    cards = parse_cards("As 2s 3s 9h")
    assert deadwood(cards) == deadwood(["As", "2s", "3s", "9h"]) == deadwood("as,2s,3s,9H") == 9
    assert deadwood_of_mask(mask_of(cards)) == 9


@settings(max_examples=500, deadline=None)
@given(random_hands)
def test_deadwood_equals_reference_on_random_hands(hand: list[int]) -> None:
    assert deadwood(hand) == ref.min_deadwood(hand)


@settings(max_examples=400, deadline=None)
@given(meld_rich_hands())
def test_deadwood_equals_reference_on_meld_rich_hands(hand: list[int]) -> None:
    assert deadwood(hand) == ref.min_deadwood(hand)


@settings(max_examples=300, deadline=None)
@given(eleven_card_hands)
def test_best_discards_equal_reference(hand: list[int]) -> None:
    best, discards = best_discards(hand)
    assert best == ref.best_discard(hand)
    assert discards == sorted(c for c in hand if ref.min_deadwood(set(hand) - {c}) == best)


def test_design_example_best_discard_is_gin() -> None:
    # OpenSpiel's 11-card shortcut says 1 here; the truth is 0 (discard 5d).
    assert best_discards(DESIGN_EXAMPLE) == (0, parse_cards("5d"))
    assert deadwood("As 2s 3s 4s 3c 4c 3d 4d 3h 4h") == 0
    assert ref.best_discard(parse_cards(DESIGN_EXAMPLE)) == 0


def check_arrangement(hand: list[int], arrangement: melds.Arrangement) -> None:
    mask = mask_of(hand)
    used = 0
    for meld in arrangement.melds:
        assert ref.is_meld(cards_of(meld)), cards_of(meld)
        assert is_meld(meld)
        assert meld & ~mask == 0
        assert meld & used == 0
        used |= meld
    assert arrangement.deadwood_cards == mask & ~used
    assert arrangement.deadwood == ref.total(cards_of(arrangement.deadwood_cards))
    assert arrangement.deadwood == ref.min_deadwood(hand)


@settings(max_examples=300, deadline=None)
@given(st.one_of(random_hands, meld_rich_hands()))
def test_best_arrangement_is_valid_and_least(hand: list[int]) -> None:
    arrangement = best_arrangement(hand)
    check_arrangement(hand, arrangement)
    assert arrangement.deadwood == deadwood(hand)
    options = best_arrangements(hand)
    assert arrangement in options
    assert len(set(options)) == len(options)
    for option in options:
        check_arrangement(hand, option)
    # Tie-break: fewest cards the defender could lay off (the knocker's own cards are none of them).
    mask = mask_of(hand)
    fewest = min(bin(layoff_targets(a.melds) & ~mask).count("1") for a in options)
    assert bin(layoff_targets(arrangement.melds) & ~mask).count("1") == fewest


def test_best_arrangement_prefers_fewest_layoff_targets() -> None:
    # Four fours + 5s6s7s and 4s5s6s7s + 4c4d4h both meld everything; the first offers the defender
    # one layoff (8s), the second two (3s, 8s).
    hand = "4s 4c 4d 4h 5s 6s 7s"
    arrangement = best_arrangement(hand)
    assert arrangement.deadwood == 0
    assert len(best_arrangements(hand)) > 1
    assert sorted(bin(m).count("1") for m in arrangement.melds) == [3, 4]
    four = next(m for m in arrangement.melds if bin(m).count("1") == 4)
    assert meld_kind(four) == "set"
    assert str(arrangement).endswith("(deadwood 0)")


@pytest.mark.parametrize(
    ("hand", "melds"),
    [
        # TsTdTh + KcKdKh offers Tc and Ks; TsTdTh + JdQdKd offers Tc only (Td is the knocker's own).
        ("5s Ts Kc Td Jd Qd Kd 6h Th Kh", ["Ts Td Th", "Jd Qd Kd"]),
        # Ac2c3c + 3h..8h offers 4c, 2h, 9h; 3c3d3h + 4h..8h offers 3s, 9h (3h is held).
        ("Ac 2c 3c 3d 3h 4h 5h 6h 7h 8h", ["3c 3d 3h", "4h 5h 6h 7h 8h"]),
    ],
)
def test_the_knockers_own_cards_are_not_layoff_targets(hand: str, melds: list[str]) -> None:
    arrangement = best_arrangement(hand)
    assert sorted(arrangement.melds) == sorted(mask_of(parse_cards(m)) for m in melds)


@pytest.mark.parametrize(
    ("cards", "expected"),
    [("As 2s 3s", True), ("Qs Ks As", False), ("7s 7c 7d 7h", True), ("7s 7c", False), ("7s 8s 9c", False)],
)
def test_is_meld(cards: str, expected: bool) -> None:
    assert is_meld(mask_of(parse_cards(cards))) is expected
    assert ref.is_meld(parse_cards(cards)) is expected


@settings(max_examples=300, deadline=None)
@given(eleven_card_hands, st.integers(0, 12))
def test_knock_discards_equal_brute_force(hand: list[int], limit: int) -> None:
    assert set(cards_of(knock_discards(mask_of(hand), limit))) == ref.knock_discards(hand, limit)


@contextmanager
def pure_python_search() -> Iterator[None]:
    """Run the deadwood search as the plain Python of its source (what NUMBA_DISABLE_JIT=1 runs)."""
    names = ("popcount", "_runs_only", "min_deadwood")
    compiled = {name: getattr(kernels, name) for name in names}
    # Compile (or load from cache) before the module globals point at Python functions, or numba
    # would try to compile calls to them.
    compiled["min_deadwood"](mask_of(range(11)))
    try:
        for name, dispatcher in compiled.items():
            setattr(kernels, name, dispatcher.py_func)
        yield
    finally:
        for name, dispatcher in compiled.items():
            setattr(kernels, name, dispatcher)


@settings(max_examples=300, deadline=None)
@given(st.one_of(random_hands, meld_rich_hands()))
def test_fast_path_equals_readable_path(hand: list[int]) -> None:
    mask = mask_of(hand)
    compiled = kernels.min_deadwood(mask)
    with pure_python_search():
        # Its helpers are looked up as module globals, so it runs as Python all the way down.
        assert not hasattr(kernels.min_deadwood, "py_func")
        assert not hasattr(kernels._runs_only, "py_func")
        readable = kernels.min_deadwood(mask)
    assert readable == compiled == ref.min_deadwood(hand) == melds.deadwood_of_mask(mask)
