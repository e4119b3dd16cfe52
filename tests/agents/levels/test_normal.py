"""The normal level on scripted positions: takes discards that help, knocks at once, avoids feeding."""

from __future__ import annotations

from levels.scripted_play import play_hand
from scenarios import DEALER, decide, deck_with, play, start


def test_normal_takes_a_discard_that_completes_a_meld_and_passes_otherwise() -> None:
    hand = "5s 5c 7h 8h As 2s 3s Jd Qd 9c"
    for upcard in ("9h", "6h", "5d"):  # two runs and a set
        assert decide("normal", play(start(deck_with(hand, DEALER, upcard)))) == "draw_discard"
    assert decide("normal", play(start(deck_with(hand, DEALER, "Kc")))) == "pass"


def test_normal_takes_a_discard_that_lets_it_knock() -> None:
    # 8c melds nothing, but with it the hand can throw Kh and knock with 9 points.
    hand = "As 2s 3s 4c 5c 6c 9d Td Jd Kh"
    obs = play(start(deck_with(hand, DEALER, "8c")))
    assert decide("normal", obs) == "draw_discard"
    assert decide("easy", obs) == "pass"


def test_normal_knocks_as_soon_as_it_can() -> None:
    env = start(deck_with("As 2s 3s 7c 8c 9c Jd Qd 5h 9h", DEALER, "Kh", stock="Kd"))
    assert decide("normal", play(env)) == "pass"
    obs = play(env, "pass", "pass", "draw_stock")
    # Jd Qd Kd melds: throwing 9h leaves 5 points.
    assert decide("normal", obs) == "knock 9h"
    assert decide("easy", obs) == "discard 9h"  # easy waits for 3 points or fewer


def test_normal_avoids_a_discard_next_to_a_card_the_opponent_took() -> None:
    hand = "As 2s 3s Js Qs Ks Ad 3d 5d 8h"
    opponent = "Kh 5h 9s 9d Tc Qc 6d Ac 7s Jd"
    # The opponent (the dealer) takes the upcard 7c: 8c would help it, 8h would not.
    env = start(deck_with(hand, opponent, "7c", stock="8c"))
    obs = play(env, "pass", "draw_discard", "discard Kh", "draw_stock")
    assert decide("normal", obs) == "discard 8h"
    # The same hand when nobody took the 7c: the two eights are equal and 8c (lower id) goes.
    env = start(deck_with(hand, opponent, "7c", stock="8c"))
    obs = play(env, "pass", "pass", "draw_stock")
    assert decide("normal", obs) == "discard 8c"


def test_normal_is_deterministic_over_whole_hands() -> None:
    def actions(seed: int, agent_seed: int) -> list[int]:
        return play_hand(("normal", "random"), seed, (agent_seed, agent_seed + 1), dealer=seed % 2)[0]

    for seed in range(3):
        first = actions(seed, 7)
        assert len(first) > 4 and actions(seed, 7) == first
