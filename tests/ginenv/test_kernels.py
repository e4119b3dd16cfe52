"""The compiled kernels (ginenv.kernels) against the brute-force reference and the readable scoring."""

from __future__ import annotations

import random

import numpy as np
import pytest
import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from test_melds import eleven_card_hands, meld_rich_hands, random_hands

from ginenv import kernels
from ginenv.cards import NUM_CARDS, cards_of, mask_of, parse_cards
from ginenv.melds import best_arrangement
from ginenv.rules import Rules
from ginenv.scoring import IllegalKnockError, score_knock

ten_card_hands = st.one_of(
    st.lists(st.integers(0, NUM_CARDS - 1), unique=True, min_size=10, max_size=10),
    meld_rich_hands(min_size=10, max_size=10),
)


def test_bit_helpers() -> None:
    hand = mask_of(parse_cards("As 7d Kh 2c"))
    assert kernels.popcount(hand) == 4
    assert cards_of(1 << kernels.lowest_card(hand)) == parse_cards("As")
    assert cards_of(1 << kernels.highest_card(hand)) == parse_cards("Kh")
    assert kernels.lowest_card(0) == kernels.highest_card(0) == -1
    assert kernels.hand_value(hand) == 1 + 7 + 10 + 2


@settings(max_examples=300, deadline=None)
@given(st.one_of(random_hands, meld_rich_hands()))
def test_min_deadwood_equals_reference(hand: list[int]) -> None:
    assert kernels.min_deadwood(mask_of(hand)) == ref.min_deadwood(hand)


@settings(max_examples=150, deadline=None)
@given(eleven_card_hands, st.integers(0, 12))
def test_knock_discards_and_best_discards_equal_reference(hand: list[int], limit: int) -> None:
    mask = mask_of(hand)
    assert set(cards_of(kernels.knock_discards(mask, limit))) == ref.knock_discards(hand, limit)
    best, which = kernels.best_discards(mask)
    assert best == ref.best_discard(hand) == kernels.best_discard_deadwood(mask)
    assert all(ref.min_deadwood([c for c in hand if c != d]) == best for d in cards_of(which))


def test_deadwood_many_is_the_batched_call() -> None:
    rng = np.random.default_rng(0)
    masks = np.array(
        [mask_of(rng.choice(52, 10, replace=False).tolist()) for _ in range(200)], dtype=np.int64
    )
    assert kernels.deadwood_many(masks).tolist() == [kernels.min_deadwood(int(m)) for m in masks]


@settings(max_examples=200, deadline=None)
@given(ten_card_hands)
def test_showdown_melds_are_the_readable_tie_break(hand: list[int]) -> None:
    mask = mask_of(hand)
    assert sorted(kernels.showdown_melds(mask).tolist()) == sorted(best_arrangement(mask).melds)


def test_showdown_melds_prefer_fewest_layoff_targets() -> None:
    # Gin two ways: 7777 + 8d9dTd (targets Jd) or 7s7c7h + 7d8d9dTd (targets 6d, Jd; the fourth seven
    # is the knocker's own). 2c3c4c adds Ac and 5c to both. The four sevens expose fewer targets.
    hand = mask_of(parse_cards("7s 7c 7d 7h 8d 9d Td 2c 3c 4c"))
    expected = sorted(mask_of(parse_cards(m)) for m in ("7s 7c 7d 7h", "8d 9d Td", "2c 3c 4c"))
    assert sorted(kernels.showdown_melds(hand).tolist()) == expected
    assert sorted(best_arrangement(hand).melds) == expected


@settings(max_examples=200, deadline=None)
@given(ten_card_hands, st.data())
def test_layoff_deadwood_equals_reference(knocker: list[int], data: st.DataObject) -> None:
    rest = [c for c in range(NUM_CARDS) if c not in knocker]
    defender = data.draw(st.lists(st.sampled_from(rest), unique=True, min_size=10, max_size=10))
    melds = kernels.showdown_melds(mask_of(knocker))
    expected = ref.defender_deadwood([cards_of(int(m)) for m in melds], defender)
    assert kernels.layoff_deadwood(melds, mask_of(defender)) == expected


@pytest.mark.parametrize("seed", range(4))
def test_knock_outcome_equals_score_knock(seed: int) -> None:
    rng = random.Random(seed)
    rules = Rules(big_gin_bonus=31, undercut_bonus=20)
    checked = 0
    while checked < 400:
        deck = list(range(NUM_CARDS))
        rng.shuffle(deck)
        # Half the deals from a pool sorted by rank: sets and knocks become frequent.
        pool = deck[:22] if rng.random() < 0.5 else sorted(deck[:30], key=lambda c: c % 13)[:22]
        size = 11 if rng.random() < 0.1 else 10
        knocker, defender = mask_of(pool[:size]), mask_of(pool[11:21])
        try:
            expected = score_knock(knocker, defender, rules, knock_limit=100)
        except IllegalKnockError:
            continue
        checked += 1
        kind, points, k_dw, d_dw = kernels.knock_outcome(knocker, defender, 25, 20, 31)
        signed = expected.points if expected.winner == "knocker" else -expected.points
        assert (kernels.KNOCK_KINDS[kind], points, k_dw, d_dw) == (
            expected.kind,
            signed,
            expected.knocker_deadwood,
            expected.defender_deadwood,
        )


def test_a_position_written_in_mid_hand_plays_on_as_the_dealt_hand() -> None:
    """``hand.set_position`` (a search's made-up world: both hands, the stock, the top discard, the
    player to move and the knock limit, nothing of the past) plays on exactly as the dealt hand it
    was copied from: the same legal actions at every step and the same end, knocks and dead hands
    alike, Oklahoma's knock limits included."""
    from ginenv.agents.baselines.greedy import greedy_action

    from ginenv.actions import KNOCK_BASE
    from ginenv.engine import HandState, Phase
    from ginenv.kernels import hand as H
    from ginenv.kernels import policies as P

    ends = []
    for seed in range(60):
        rng = random.Random(seed)
        rules = Rules(oklahoma=seed % 3 == 0, discard_taken_card=seed % 2 == 0)
        state = HandState(rules, dealer=seed % 2, rng=rng)
        steps = rng.randrange(4, 24)
        # A draw, or a discard after a stock draw (a world has no card just taken).
        while (
            len(state.history) < steps
            or state.phase not in (Phase.DRAW, Phase.DISCARD)
            or state.record[0, H.JUST_TOOK] >= 0
        ):
            state.step(rng.choice([a for a in state.legal_actions() if a < KNOCK_BASE]))
        dealt = state.record.copy()
        row = dealt[0]
        world = np.full_like(dealt, 7)  # whatever the row held before
        stock = row[H.DECK + row[H.STOCK_POS] : H.DECK + NUM_CARDS].copy()
        top = H.top_card(dealt, 0)
        phase, player, limit = row[H.PHASE], row[H.PLAYER], row[H.KNOCK_LIMIT_COL]
        H.set_position(world, 0, row[H.HAND0], row[H.HAND1], stock, top, phase, player, limit)
        cfg = H.rules_array(rules, 1 << 40)  # the dealt row has counted its draws; the world has not
        while row[H.PHASE] != Phase.OVER:
            assert H.legal_parts(world, 0, cfg) == H.legal_parts(dealt, 0, cfg)
            action = (
                greedy_action(dealt, 0, cfg)
                if rng.random() < 0.8
                else P.random_legal(dealt, 0, cfg, np.random.default_rng(seed))
            )
            assert H.apply(world, 0, action, cfg) == H.apply(dealt, 0, action, cfg)
        columns = [H.HAND0, H.HAND1, H.RESULT, H.WINNER, H.POINTS, H.DEADWOOD0, H.DEADWOOD1, H.PHASE]
        assert world[0, columns].tolist() == dealt[0, columns].tolist()
        ends.append(H.RESULT_KINDS[row[H.RESULT]])
    assert {"knock", "dead"} <= set(ends)
