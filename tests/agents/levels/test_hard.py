"""The hard level on scripted positions: danger of a discard, playing on for gin, knocking late."""

from __future__ import annotations

import numpy as np
import pytest
from ginenv.agents.levels.hard import HardAgent
from ginenv.agents.levels.heuristics import discard_scores
from levels.scripted_play import play_hand
from scenarios import DEALER, decide, deck_with, play, start

from ginenv import agents
from ginenv.actions import action_name
from ginenv.cards import CARD_NAMES, mask_of, parse_cards
from ginenv.observation import decode

HAND = "As 2s 3s Js Qs Ks Ad 3d 5d 8h"
OPPONENT = "Kh 5h 9s 9d Tc Qc 6d Ac 7s Jd"


def test_hard_avoids_a_discard_the_opponent_showed_interest_in() -> None:
    # The opponent (the dealer) takes the upcard 7c; hard then draws 8c. Its two lone eights are
    # worth exactly the same to its own hand (equal expected deadwood after the next draw), but
    # 8c would sit in 6c-7c-8c or 7c-8c-9c with the opponent's 7c.
    env = start(deck_with(HAND, OPPONENT, "7c", stock="8c"))
    obs = play(env, "pass", "draw_discard", "discard Kh", "draw_stock")
    view = decode(obs["observation"])
    eights = mask_of(parse_cards("8c 8h"))
    values = discard_scores(view.hand, view.unseen, eights, np.zeros(52))
    assert len(set(values.values())) == 1
    assert decide("hard", obs) == "discard 8h"
    blind = HardAgent(seed=0, danger_early=0.0, danger_late=0.0)
    assert action_name(blind.act(obs)) == "discard 8c"  # it is the danger term that decides
    # Counter-check: when both players passed the 7c, it is dead; 8c (tie-break: lower id) goes.
    env = start(deck_with(HAND, OPPONENT, "7c", stock="8c"))
    obs = play(env, "pass", "pass", "draw_stock")
    assert decide("hard", obs) == "discard 8c"


def test_hard_takes_a_discard_that_completes_a_meld_and_passes_a_useless_one() -> None:
    hand = "5s 5c 7h 8h As 2s 3s Jd Qd 9c"
    assert decide("hard", play(start(deck_with(hand, DEALER, "9h")))) == "draw_discard"
    assert decide("hard", play(start(deck_with(hand, DEALER, "Kc")))) == "pass"


GIN_HAND = "2s 3s 4s 4c 5c 6c 9d Td Jd Ah"


def test_hard_plays_on_for_gin_with_tiny_deadwood_early() -> None:
    # After drawing Qh it can knock with 1 point (Ah); the stock is full and many unseen cards
    # (As, 5s, 3c, 7c, 8d, Qd, ...) would give gin, so it throws Qh and plays on.
    env = start(deck_with(GIN_HAND, DEALER, "Kc", stock="Qh"))
    assert decide("hard", play(env)) == "pass"
    obs = play(env, "pass", "pass", "draw_stock")
    assert obs["action_mask"][env.unwrapped.action_id("knock Qh")] == 1
    assert decide("hard", obs) == "discard Qh"
    assert decide("normal", obs) == "knock Qh"


def test_hard_knocks_with_tiny_deadwood_late_in_the_hand() -> None:
    # 22 stock cards are drawn and thrown straight back; hard then draws Qh with 8 cards left.
    used = set(parse_cards(f"{GIN_HAND} {DEALER} Kc Qh"))
    junk = [CARD_NAMES[c] for c in range(52) if c not in used][:22]
    env = start(deck_with(GIN_HAND, DEALER, "Kc", stock=" ".join([*junk, "Qh"])))
    play(env, "pass", "pass")
    for card in junk:
        play(env, "draw_stock", f"discard {card}")
    obs = play(env, "draw_stock")
    view = decode(obs["observation"])
    assert view.stock_size == 8 and view.hand >> parse_cards("Qh")[0] & 1
    assert decide("hard", obs) == "knock Qh"


def test_hard_parameters_can_be_overridden_but_not_invented() -> None:
    agent = agents.make("hard", seed=0, gin_deadwood=0)
    assert isinstance(agent, HardAgent) and agent.gin_deadwood == 0
    env = start(deck_with(GIN_HAND, DEALER, "Kc", stock="Qh"))
    obs = play(env, "pass", "pass", "draw_stock")
    assert action_name(agent.act(obs)) == "knock Qh"  # no playing on with gin_deadwood=0
    with pytest.raises(TypeError, match="unknown HardAgent parameter"):
        HardAgent(seed=0, aggression=3)


def test_hard_is_deterministic_over_whole_hands() -> None:
    def actions(seed: int) -> list[int]:
        return play_hand(("hard", "normal"), seed, (seed, seed + 1), dealer=seed % 2)[0]

    for seed in range(3):
        first = actions(seed)
        assert len(first) > 4 and actions(seed) == first
