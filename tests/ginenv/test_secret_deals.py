"""Decks from a secret (ginenv.secret_deals): the written algorithm, its uniformity, the commitment,
derived keys, and that the key never shows in a repr."""

from __future__ import annotations

import hashlib
import pickle
import struct
from collections import Counter

import pytest
from scipy import stats

from ginenv.cards import NUM_CARDS
from ginenv.secret_deals import DealKey, DealKeyError, check_commitment

KEY = DealKey(bytes(range(32)))


def deck_as_written(key: bytes, *path: int) -> list[int]:
    """The module docstring's algorithm, written again from its words (an independent checker)."""
    prefix = b"".join(p.to_bytes(8, "big") for p in path)
    words: list[int] = []
    block = 0

    def word() -> int:
        nonlocal block
        if not words:
            digest = hashlib.blake2b(prefix + block.to_bytes(8, "big"), key=key, person=b"ginenv-deck-v1")
            words.extend(reversed(struct.unpack(">16I", digest.digest())))
            block += 1
        return words.pop()

    order = list(range(52))
    for i in range(51, 0, -1):
        limit = 2**32 - 2**32 % (i + 1)
        w = word()
        while w >= limit:
            w = word()
        j = w % (i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def test_deck_follows_the_documented_algorithm() -> None:
    for path in [(), (0,), (0, 0), (7, 3), (2**40, 199)]:
        assert KEY.deck(*path) == deck_as_written(bytes(range(32)), *path)


def test_deck_is_a_permutation_and_depends_on_key_and_path() -> None:
    deck = KEY.deck(0, 0)
    assert sorted(deck) == list(range(NUM_CARDS))
    assert KEY.deck(0, 0) == deck  # a pure function of key and path
    assert KEY.deck(0, 1) != deck
    assert KEY.deck(1, 0) != deck
    assert DealKey(bytes(range(1, 33))).deck(0, 0) != deck
    assert DealKey.new().deck(0, 0) != DealKey.new().deck(0, 0)


def test_decks_are_uniform() -> None:
    """Where each card lands over 4,000 decks: a chi-square test per position of a few cards."""
    decks = [KEY.deck(d) for d in range(4000)]
    for card in (0, 17, 51):
        counts = Counter(deck.index(card) for deck in decks)
        observed = [counts.get(pos, 0) for pos in range(NUM_CARDS)]
        assert stats.chisquare(observed).pvalue > 1e-4
    # The first card dealt, over all 52 values.
    first = Counter(deck[0] for deck in decks)
    assert stats.chisquare([first.get(c, 0) for c in range(NUM_CARDS)]).pvalue > 1e-4


def test_commitment_binds_the_key_without_showing_it() -> None:
    key = DealKey.new()
    commitment = key.commitment()
    assert len(commitment) == 64 and key.hex() not in commitment
    assert check_commitment(key.hex(), commitment)
    assert not check_commitment(DealKey.new().hex(), commitment)
    assert DealKey.from_hex(key.hex()) == key
    assert key.hex() not in repr(key) and key.hex() not in str(key)
    assert pickle.loads(pickle.dumps(key)) == key


def test_derived_keys_are_independent_and_stable() -> None:
    day1, day2 = KEY.derive("daily 2026-12-06"), KEY.derive("daily 2026-12-07")
    assert day1 == KEY.derive("daily 2026-12-06")
    assert day1 != day2 and day1 != KEY
    assert DealKey(bytes(range(1, 33))).derive("daily 2026-12-06") != day1
    assert day1.deck(0, 0) != day2.deck(0, 0)


@pytest.mark.parametrize(
    "bad, words",
    [(b"short", "16 to 64 bytes"), ("not bytes", "16 to 64 bytes"), (bytes(65), "got 65")],
)
def test_a_bad_key_is_refused(bad: object, words: str) -> None:
    with pytest.raises(DealKeyError, match=words):
        DealKey(bad)  # type: ignore[arg-type]


def test_bad_hex_and_paths_are_refused() -> None:
    with pytest.raises(DealKeyError, match="hex digits"):
        DealKey.from_hex("zz" * 16)
    with pytest.raises(DealKeyError, match="32 to 128 hex digits, got 16"):
        DealKey.from_hex("ab" * 8)
    with pytest.raises(DealKeyError, match="non-negative integers"):
        KEY.deck(-1)
    with pytest.raises(DealKeyError, match="non-negative integers"):
        KEY.deck("0")  # type: ignore[arg-type]
