"""Card names, parsing and bitmasks (ginenv.cards)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ginenv.cards import (
    CARD_NAMES,
    CARD_VALUES,
    NUM_CARDS,
    CardError,
    DuplicateCardError,
    UnknownCardError,
    card_name,
    cards_of,
    make_card,
    mask_of,
    mask_value,
    names,
    parse_card,
    parse_cards,
    rank,
    suit,
)


def test_parse_cards_reads_the_documented_example() -> None:
    cards = parse_cards("As Td 10h Kc")
    assert [card_name(c) for c in cards] == ["As", "Td", "Th", "Kc"]
    assert cards == [make_card(0, 0), make_card(9, 2), make_card(9, 3), make_card(12, 1)]


@pytest.mark.parametrize(
    "text",
    ["as td 10H kC", "AS,TD,10h,KC", "As, Td,10h ,Kc", "  As\tTd\n10h   Kc  ", "aS tD 10h kc"],
)
def test_parse_cards_is_case_insensitive_and_accepts_commas(text: str) -> None:
    assert parse_cards(text) == parse_cards("As Td 10h Kc")


def test_parse_cards_accepts_lists_of_names_and_ids() -> None:
    assert parse_cards(["As", "td", 40, "10h"]) == [0, 35, 40, 48]
    assert parse_cards(("2h",)) == [40]
    assert parse_cards("") == []


@pytest.mark.parametrize("bad", ["Xs", "1h", "11c", "A", "Ass", "Tx", "0s", "Ah2"])
def test_unknown_card_is_refused_naming_the_token(bad: str) -> None:
    with pytest.raises(UnknownCardError, match=f"'{bad}'") as info:
        parse_cards(f"As {bad} Kc")
    assert isinstance(info.value, CardError)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("bad", [-1, 52, 100])
def test_out_of_range_card_id_is_refused(bad: int) -> None:
    with pytest.raises(UnknownCardError, match=str(bad)):
        parse_card(bad)
    with pytest.raises(UnknownCardError, match=str(bad)):
        card_name(bad)


@pytest.mark.parametrize("bad", [None, 1.0, True])
def test_non_card_objects_are_refused(bad: object) -> None:
    with pytest.raises(UnknownCardError):
        parse_card(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "named"),
    [("As Kd as", "As"), ("Th 2c 10h", "Th"), ("Qh,qh", "Qh"), ("2s 3s 4s 2S", "2s")],
)
def test_duplicate_card_is_refused_naming_it(text: str, named: str) -> None:
    with pytest.raises(DuplicateCardError, match=named) as info:
        parse_cards(text)
    assert isinstance(info.value, CardError)
    assert not isinstance(info.value, UnknownCardError)


def test_duplicate_ids_in_a_list_are_refused() -> None:
    with pytest.raises(DuplicateCardError, match="7h"):
        parse_cards([parse_card("7h"), "7H"])


def test_name_and_parse_round_trip_over_the_deck() -> None:
    assert len(set(CARD_NAMES)) == NUM_CARDS
    for card in range(NUM_CARDS):
        name = card_name(card)
        assert len(name) == 2
        assert parse_card(name) == card
        assert parse_card(name.lower()) == card
        assert parse_card(name.upper()) == card
        assert make_card(rank(card), suit(card)) == card
    # 10 is a second spelling of T only.
    for s in "scdh":
        assert parse_card("10" + s) == parse_card("T" + s)


def test_card_values() -> None:
    assert [CARD_VALUES[parse_card(n)] for n in ("As", "2c", "9d", "Th", "Js", "Qc", "Kd")] == [
        1,
        2,
        9,
        10,
        10,
        10,
        10,
    ]
    assert sum(CARD_VALUES) == 4 * (sum(range(1, 11)) + 30)


def test_suit_major_ids_match_the_documented_layout() -> None:
    assert card_name(0) == "As"
    assert card_name(12) == "Ks"
    assert card_name(13) == "Ac"
    assert card_name(26) == "Ad"
    assert card_name(51) == "Kh"


@given(st.sets(st.integers(0, NUM_CARDS - 1)))
def test_mask_of_and_cards_of_are_inverse(cards: set[int]) -> None:
    mask = mask_of(cards)
    assert mask.bit_count() == len(cards)
    assert cards_of(mask) == sorted(cards)
    assert mask_of(cards_of(mask)) == mask
    assert mask_value(mask) == sum(CARD_VALUES[c] for c in cards)
    assert names(mask) == " ".join(CARD_NAMES[c] for c in sorted(cards))
    assert parse_cards(names(mask)) == sorted(cards)


def test_mask_of_collapses_duplicates() -> None:
    assert mask_of([3, 3, 5]) == (1 << 3) | (1 << 5)
    assert cards_of(0) == []
    assert cards_of((1 << NUM_CARDS) - 1) == list(range(NUM_CARDS))


@pytest.mark.parametrize("kind", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64, np.intp])
def test_numpy_integer_ids_are_plain_card_ids(kind: type) -> None:
    card = parse_card(kind(40))
    assert card == 40 and type(card) is int
    cards = parse_cards(np.array([0, 35, 40], dtype=kind))
    assert cards == parse_cards("As Td 2h")
    assert all(type(c) is int for c in cards)
    assert parse_cards([kind(0), "td", kind(40)]) == [0, 35, 40]


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), 1.0, np.float64(3), None])
def test_non_integer_non_name_tokens_are_refused(bad: object) -> None:
    with pytest.raises(UnknownCardError, match="cannot read a card"):
        parse_card(bad)  # type: ignore[arg-type]


def test_numpy_ids_out_of_range_and_duplicates_are_refused() -> None:
    with pytest.raises(UnknownCardError, match="52"):
        parse_card(np.int64(52))
    with pytest.raises(DuplicateCardError, match="As"):
        parse_cards(np.array([0, 0]))
