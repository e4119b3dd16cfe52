"""The shared evaluation helpers of ginenv.agents.levels.heuristics (and their kernels) on
hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
from ginenv.agents.levels.heuristics import (
    after_draw_deadwood,
    completes_meld,
    danger_scores,
    deadwood,
    deadwood_cards,
    discard_scores,
    enables_knock,
    expected_deadwood,
    gin_outs,
    interest_cards,
    partner_cards,
    stock_value,
    take_is_useful,
    useful_discards,
)
from ginenv.agents.levels.heuristics_compiled import AVOIDED_FACTOR, TAKEN_WEIGHT

from ginenv.cards import FULL_DECK, mask_of, parse_cards
from ginenv.melds import deadwood_of_mask


def m(text: str) -> int:
    return mask_of(parse_cards(text))


def c(text: str) -> int:
    return parse_cards(text)[0]


# Melds A-2-3s, 4-5-6c, 9-T-Jd; Kh is the only deadwood (10 points).
HAND = m("As 2s 3s 4c 5c 6c 9d Td Jd Kh")
DRAWS = m("Qh Ah 4s 2h")


def test_after_draw_outs_and_expected_deadwood_by_hand() -> None:
    # Qh: throw Kh or Qh, 10 left. Ah, 2h: replace Kh, 1 or 2 left. 4s: A-4s, throw Kh, gin.
    assert after_draw_deadwood(HAND, DRAWS) == {c("Qh"): 10, c("Ah"): 1, c("4s"): 0, c("2h"): 2}
    assert gin_outs(HAND, DRAWS) == m("4s")
    assert expected_deadwood(HAND, DRAWS) == pytest.approx((10 + 1 + 0 + 2) / 4)
    assert expected_deadwood(HAND, 0) == deadwood(HAND) == 10


def test_outs_over_all_unseen_cards() -> None:
    unseen = FULL_DECK & ~HAND
    # Gin: a card extending one of the three runs, then Kh thrown (brute force from the definition).
    brute = 0
    for card in range(52):
        if unseen >> card & 1:
            grown = HAND | 1 << card
            best = min(deadwood(grown ^ 1 << x) for x in range(52) if grown >> x & 1)
            if best == 0:
                brute |= 1 << card
    assert gin_outs(HAND, unseen) == brute
    assert brute == m("4s 3c 7c 8d Qd")
    # Every card worth less than the king lowers the deadwood: 9 ranks x 4 suits, minus held ones.
    low = sum(1 << card for card in range(52) if card % 13 < 9 and unseen >> card & 1)
    lowered = sum(1 << card for card, left in after_draw_deadwood(HAND, unseen).items() if left < 10)
    assert lowered == low | brute


def test_deadwood_melded_and_partner_cards() -> None:
    hand = m("7h 8h Ks Kc Kd 2d 3d 4d As Qc")
    assert deadwood_cards(hand) == m("7h 8h As Qc")
    # 7h-8h is a run draw, As-Qc have no partner; 5d-7d is a draw with a gap.
    assert partner_cards(m("7h 8h As Qc 5d 7d 9s")) == m("7h 8h 5d 7d")
    assert interest_cards(m("7h")) == m("7s 7c 7d 5h 6h 8h 9h")


def test_completes_meld_and_enables_knock() -> None:
    hand = m("5s 5c 7h 8h As 2s 3s Jd Qd 9c")
    assert completes_meld(hand, c("9h")) and completes_meld(hand, c("5d"))
    assert not completes_meld(hand, c("Kc"))
    with_eight = (HAND & ~m("Kh")) | m("8s")  # 8 points of deadwood: any card but a ten helps
    assert enables_knock(with_eight, c("Ah"), 10)
    assert not enables_knock(m("As 2s 3s 4c 5c 6c 9d Td Kh Qh"), c("8s"), 10)


def danger(card: int, live: int, taken: int, avoided: int) -> float:
    return float(danger_scores(live, taken, avoided)[card])


def test_danger_scores_by_hand() -> None:
    ks = c("Ks")
    live = FULL_DECK & ~m("Ks")
    # Three set windows (pairs of Kc Kd Kh) and one run window (Js Qs): 4.
    assert danger(ks, live, 0, 0) == 4.0
    # The opponent took Kh: each of its two set windows gains TAKEN_WEIGHT.
    assert danger(ks, live, m("Kh"), 0) == 3 + 2 * TAKEN_WEIGHT + 1
    # ... and discarded Kc: set windows are discounted.
    assert danger(ks, live, m("Kh"), m("Kc")) == (3 + 2 * TAKEN_WEIGHT) * AVOIDED_FACTOR + 1
    # A dead card: no live pair of its rank, Qs gone.
    assert danger(ks, FULL_DECK & ~m("Ks Kd Kc Qs"), 0, 0) == 0.0
    # A seven with the opponent's 8s: windows 5-6-7 (1), 6-7-8 and 7-8-9 (1 + 2 each), three sets.
    assert danger(c("7s"), FULL_DECK & ~m("7s"), m("8s"), 0) == 1 + 2 * (1 + TAKEN_WEIGHT) + 3
    table = danger_scores(FULL_DECK, 0, 0)
    assert table.shape == (52,) and table[c("7h")] > table[c("Kh")] and table[c("Ah")] == table[c("Kh")]


def test_discard_scores_agree_with_expected_deadwood() -> None:
    hand = HAND | 1 << c("8s")
    unseen = FULL_DECK & ~hand
    exp = discard_scores(hand, unseen, m("Kh 8s 9d"), np.zeros(52))
    for card, value in exp.items():
        assert value == pytest.approx(expected_deadwood(hand ^ 1 << card, unseen))
    assert exp[c("Kh")] < exp[c("8s")] < exp[c("9d")]
    penalty = np.zeros(52)
    penalty[c("Kh")] = 100.0
    scores = discard_scores(hand, unseen, m("Kh 8s"), penalty)
    assert scores[c("Kh")] == pytest.approx(exp[c("Kh")] + 100.0)
    assert scores[c("8s")] == pytest.approx(exp[c("8s")])
    # The miss surcharge counts once per draw that leaves more than the knock limit.
    surcharged = discard_scores(hand, unseen, m("9d"), np.zeros(52), limit=10, miss=5.0)
    draws = after_draw_deadwood(hand ^ 1 << c("9d"), unseen)
    missing = sum(v > 10 for v in draws.values()) / len(draws)
    assert surcharged[c("9d")] == pytest.approx(exp[c("9d")] + 5.0 * missing)


def test_stock_value_is_the_mean_best_score_over_the_draws() -> None:
    penalty = np.zeros(52)
    # One possible draw and no later candidate: the best deadwood after drawing it.
    for card in ("Qh", "Ah", "4s"):
        expected = min(
            deadwood((HAND | 1 << c(card)) ^ 1 << x) for x in range(52) if (HAND | 1 << c(card)) >> x & 1
        )
        assert stock_value(HAND, m(card), penalty) == pytest.approx(expected)
    # Two draws: the mean of the best scores, each seeing the other card as the next candidate.
    two = m("Ah 4s")
    by_hand = np.mean(
        [
            min(discard_scores(HAND | 1 << c(a), m(b), HAND | 1 << c(a), penalty).values())
            for a, b in (("Ah", "4s"), ("4s", "Ah"))
        ]
    )
    assert stock_value(HAND, two, penalty) == pytest.approx(by_hand)


def test_useful_discards_follow_their_definition_on_random_hands() -> None:
    """``dw(hand - d) < dw(hand - taken)`` for ``d != taken``, checked card by card (the compiled
    :func:`ginenv.agents.levels.heuristics_compiled.useful_discards` loops over bits)."""
    rng = np.random.default_rng(3)
    for trial in range(300):
        # Half the hands from a few ranks of two suits, where melds and equal cards are common.
        pool = np.arange(52) if trial % 2 else np.array([s * 13 + r for s in (0, 1) for r in range(9)])
        chosen = [int(x) for x in rng.choice(pool, size=11, replace=False)]
        hand = mask_of(chosen)
        taken = chosen[0]
        before = deadwood_of_mask(hand ^ 1 << taken)
        expected = mask_of([d for d in chosen[1:] if deadwood_of_mask(hand ^ 1 << d) < before])
        assert useful_discards(hand, taken) == expected
        assert take_is_useful(hand ^ 1 << taken, taken) == (expected != 0)
