"""The easy level on scripted positions: highest useless card, pairs kept, sets only, knocks late."""

from __future__ import annotations

from ginenv.agents.levels.heuristics import deadwood
from levels.scripted_play import play_hand
from scenarios import DEALER, decide, deck_with, play, start

from ginenv.cards import mask_of, parse_cards


def test_easy_throws_its_highest_useless_card_not_the_least_deadwood() -> None:
    hand = "As 2s 3s 7c 8c 9c Kh Kd 9h 5d"
    env = start(deck_with(hand, DEALER, "Qc", stock="2h"))
    assert decide("easy", play(env)) == "pass"  # Qc makes no set with its hand
    obs = play(env, "pass", "pass", "draw_stock")
    # Deadwood Kh Kd 9h 5d 2h: the kings are a pair, 9h is the highest card without a partner.
    assert decide("easy", obs) == "discard 9h"
    held = mask_of(parse_cards(hand + " 2h"))
    # A deadwood-minimiser would throw a king instead.
    assert deadwood(held ^ 1 << parse_cards("Kh")[0]) < deadwood(held ^ 1 << parse_cards("9h")[0])


def test_easy_does_not_knock_with_moderate_deadwood() -> None:
    env = start(deck_with("As 2s 3s 7c 8c 9c Jd Qd Kd 6h", DEALER, "Qc", stock="Th"))
    obs = play(env, "pass", "pass", "draw_stock")
    assert obs["action_mask"][env.unwrapped.action_id("knock Th")] == 1  # 6 points: a legal knock
    assert decide("easy", obs) == "discard Th"


def test_easy_knocks_with_very_little_deadwood() -> None:
    env = start(deck_with("As 2s 3s 7c 8c 9c Jd Qd Kd 2h", DEALER, "Qc", stock="Th"))
    obs = play(env, "pass", "pass", "draw_stock")
    assert decide("easy", obs) == "knock Th"


def test_easy_takes_a_discard_for_a_set_but_not_for_a_run() -> None:
    hand = "5s 5c 7h 8h As 2s 3s Jd Qd 9c"
    env = start(deck_with(hand, DEALER, "5d"))
    assert decide("easy", play(env)) == "draw_discard"
    env = start(deck_with(hand, DEALER, "9h"))
    obs = play(env)
    assert decide("easy", obs) == "pass"
    assert decide("normal", obs) == "draw_discard"  # the next level sees the run


def test_easy_breaks_ties_with_its_seeded_generator() -> None:
    # Kh and Qs are both useless tens: the choice between them is random, and reproducible.
    env = start(deck_with("As 2s 3s 7c 8c 9c Kh Qs 5d 2h", DEALER, "Qc", stock="7d"))
    obs = play(env, "pass", "pass", "draw_stock")
    picks = {seed: decide("easy", obs, seed) for seed in range(24)}
    assert set(picks.values()) == {"discard Kh", "discard Qs"}
    assert all(decide("easy", obs, seed) == pick for seed, pick in picks.items())


def test_easy_is_reproducible_over_whole_hands() -> None:
    def actions(seed: int) -> list[int]:
        return play_hand(("easy", "easy"), seed, (100 * seed, 100 * seed + 1), dealer=seed % 2)[0]

    for seed in range(4):
        first = actions(seed)
        assert len(first) > 4 and actions(seed) == first
