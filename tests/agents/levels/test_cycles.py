"""No computer player cycles cards through the discard pile (issue 8).

Taking a discard that does not lower the deadwood, only to throw an equal card (Ac for Ah, 3c for
3d), is a wasted turn; two players doing it pass the same cards back and forth forever. Every level
now takes only a discard that can lower its deadwood and then throws only a card that keeps it lower
than before the take (``ginenv.agents.levels.heuristics.useful_discards`` and
``ginenv.agents.levels.level_base.TakeGuard``). Each position below was found in real play of the previous
code, which took the bait (noted per test).
"""

from __future__ import annotations

from typing import Any

import pytest
from ginenv.agents.levels.heuristics import take_is_useful, useful_discards
from levels.scripted_play import play_hand
from scenarios import DEALER, cards, decide, deck_with, play, position, start

from ginenv import agents
from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, KNOCK_BASE, action_name
from ginenv.cards import CARD_NAMES, parse_cards
from ginenv.engine import Phase
from ginenv.melds import deadwood_of_mask
from ginenv.rules import PRESETS

LEVELS = ("greedy", "easy", "normal", "hard", "expert", "master")


def take_then_discard(level: str, seed: int = 0, banned: bool = True, **where: str) -> str:
    """What a freshly seeded ``level`` does with the top discard of ``where``: ``"draw_stock"``, or
    ``"draw_discard"`` followed by the discard it then makes (with the card taken in its hand;
    ``banned``: the default rule, the card just taken may not be thrown back)."""
    agent = agents.make(level, seed=seed)
    agent.reset(seed)
    first = action_name(agent.act(position(**where, phase=Phase.DRAW)))
    if first != "draw_discard":
        return first
    after = dict(where, hand=f"{where['hand']} {where['top']}", top="")
    obs = position(**after, phase=Phase.DISCARD, banned=where["top"] if banned else "")
    return f"{first} {action_name(agent.act(obs))}"


def kept_deadwood(hand: str, top: str, decision: str) -> int:
    """The deadwood of the 10 cards kept after taking ``top`` and making ``decision``'s discard."""
    card = decision.split()[-1]
    return deadwood_of_mask(cards(f"{hand} {top}") ^ cards(card))


# --------------------------------------------------------------------------- the rule itself


def test_useful_discards_are_those_that_leave_less_deadwood_than_before_the_take() -> None:
    # 2s 3s Ac 2c 5c | Tc Jc Qc | 3d 3h: deadwood 2s Ac 2c 5c = 10 (3s goes in the set of threes).
    hand = cards("2s 3s Ac 2c 5c Tc Jc Qc 3d 3h Ah")
    assert useful_discards(hand, parse_cards("Ah")[0]) == cards("2s 2c 5c")
    # Ac for Ah is an equal card: no gain, so not useful; nor is throwing Ah itself back.
    assert take_is_useful(cards("2s 3s Ac 2c 5c Tc Jc Qc 3d 3h"), parse_cards("Ah")[0])
    # A king cannot replace anything in a hand whose deadwood cards are all lower.
    assert not take_is_useful(cards("2s 3s Ac 2c 5c Tc Jc Qc 3d 3h"), parse_cards("Kh")[0])
    with pytest.raises(ValueError, match="not in the hand"):
        useful_discards(cards("2s 3s Ac"), parse_cards("Ah")[0])


# --------------------------------------------------------------------------- cycle bait, per level

# Master against expert, hand 29 of a 300-hand run: master took 3d only to throw 3c.
THREES = dict(
    hand="As Js Qs Ks Ac 2c 3c 2d Ah 2h",
    top="3d",
    pile="7s 5c 7c 8c 9c Jc 5d 6d 8d 9d Jd 3h 4h 5h 6h 7h 8h 9h Kh",
    opp_discarded="Ks 5c 8c Jc 3d 6d Jd 3h 5h 6h",
    opp_passed="7s 7c 9c 5d 8d 9d 4h 7h 8h 9h Kh",
)
# Master against expert, hand 14: it took 2h and threw As (deadwood 2 -> 3); hard threw 2c (2 -> 2).
TWOS = dict(
    hand="As 2s 3s 4s 2c 4d 5d 6d 7d 4h",
    top="2h",
    pile="6s 8s 9s Ts Js Qs Ks Ac 7c 8c 9c Tc Jc Qc Kc 9d Td Jd Qd Kd",
    opp_taken="Ad 9h Kh",
    opp_discarded="8s Ts Qs Ks Ac 8c 9c Kc Ad 5d Td Jd 2h",
    opp_passed="6s 9s Js 7c Tc Jc Qc 9d Qd Kd",
)
# The issue's deal, the expert's turn at the start of the cycle: it took Ah and threw Ac.
ACES = dict(
    hand="2s 3s Ac 2c 5c Tc Jc Qc 3d 3h",
    top="Ah",
    pile="Jh As 7s 8s 9s Ts Qs Ks Kc 5d 6d 7d 8d 9d Jd Qd Kd 6h 8h Th Qh",
    opp_discarded="2s 5d Ah Kc",
)
# Easy against easy, hand 112: easy took 5c for a set of fives and threw 2h (deadwood 9 -> 9).
FIVES = dict(
    hand="As 3s 4s 5s Ks Ac Kc 2h 5h Kh",
    top="5c",
    pile="9s Qs 7d Jd Jh",
    opp_taken="6d",
    opp_discarded="5c Kc 7d Jd",
    opp_passed="9s Qs Jh",
)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("bait", [THREES, TWOS, ACES, FIVES], ids=["threes", "twos", "aces", "fives"])
@pytest.mark.parametrize("banned", [True, False], ids=["default_rule", "discard_taken_card"])
def test_no_level_takes_a_discard_without_lowering_its_deadwood(level: str, bait: dict, banned: bool) -> None:
    for seed in (0, 1):
        decision = take_then_discard(level, seed, banned, **bait)
        if decision == "draw_stock":
            continue
        before = deadwood_of_mask(cards(bait["hand"]))
        assert kept_deadwood(bait["hand"], bait["top"], decision) < before, decision
        assert decision.split()[-1] != bait["top"], "threw the card just taken back"


def test_master_and_expert_refuse_the_threes_bait() -> None:
    # Old code: "draw_discard discard 3c" for both; 3c is worth exactly what 3d is.
    assert take_then_discard("master", **THREES) == "draw_stock"
    assert take_then_discard("expert", **THREES) == "draw_stock"


def test_hard_refuses_the_twos_bait() -> None:
    # Old code: "draw_discard discard 2c", an equal card (deadwood 2 before and after).
    assert take_then_discard("hard", **TWOS) == "draw_stock"


def test_expert_takes_the_ace_but_throws_a_card_that_lowers_its_deadwood() -> None:
    # Old code threw Ac (an equal card) and, where the rules allow it, Ah itself straight back.
    assert take_then_discard("expert", **ACES) == "draw_discard discard 2s"
    assert take_then_discard("expert", banned=False, **ACES) == "draw_discard discard 2s"


def test_easy_throws_a_card_that_keeps_the_set_worth_taking() -> None:
    # Old code threw 2h, its highest useless card, leaving 9 points as before the take.
    decision = take_then_discard("easy", **FIVES)
    assert decision == "draw_discard discard 4s"
    assert kept_deadwood(FIVES["hand"], FIVES["top"], decision) == 7


def test_normal_does_not_take_an_upcard_that_lowers_nothing_just_because_it_can_knock() -> None:
    # Dealt 6 points; the upcard Kc melds nowhere. The old rule "take it if a knock is then possible"
    # took it and knocked with 10 points instead of 6 (the Kc could not be thrown back).
    hand = "As 2s 3s 7c 8c 9c Jd Qd Kd 6h"
    env = start(deck_with(hand, DEALER, "Kc", stock="Qh"))
    assert agents.make("normal").act(play(env)) != DRAW_DISCARD
    for level in LEVELS:
        assert decide(level, play(start(deck_with(hand, DEALER, "Kc")))) == "pass"


def test_greedy_never_takes_an_equal_card() -> None:
    # Greedy's rule (take only a card that melds and lowers the deadwood) already excluded it; kept
    # as a guard for the whole ladder.
    assert take_then_discard("greedy", **THREES) == "draw_stock"
    assert take_then_discard("greedy", **ACES) == "draw_stock"


# --------------------------------------------------------------------------- whole hands

ISSUE_DECK = parse_cards(
    "Jc 8c 2h Ad 7d 8s 4c 6c 9s 4s 3h 8d 3s 9d 7s 6d Qh Tc Ac Qc Th 7c Qd 3d 6h Kd Jd 2c 2s Qs Kc 8h "
    "Ah 4d Ts 5d 5c Ks As 3c Jh 2d Kh 7h Td 6s 4h 5s 9c Js 5h 9h"
)


def test_the_issue_deal_ends_without_truncation() -> None:
    """Master (player_0) against expert (player_1): the old code cycled Ah, Ac and Ad forever."""
    seeds = (4052347567088, 4052347567089)
    actions, result = play_hand(("master", "expert"), 2026173783544, seeds, dealer=1, deck=ISSUE_DECK)
    takes = actions.count(DRAW_DISCARD)
    assert result and result["kind"] != "truncated"
    assert takes < 10  # the old code took from the pile on every turn of the cycle


def play_checked_hand(rules_name: str, names: tuple[str, str], seed: int) -> dict:
    """One hand under a rule preset; every action is checked against the mask, and after every take
    from the discard pile the next discard must keep the deadwood below what it was before."""
    taken: dict[int, tuple[int, int]] = {}

    def watch(env: Any, seat: int, action: int) -> None:
        hand = env.unwrapped.hand.hands[seat]  # checking only; the agents never see the engine
        if action == DRAW_DISCARD:
            top = env.unwrapped.hand.discard_pile[-1]
            taken[seat] = (top, deadwood_of_mask(hand))
        elif DISCARD_BASE <= action < KNOCK_BASE and seat in taken:
            top, before = taken.pop(seat)
            card = action - DISCARD_BASE
            assert card != top, f"{names[seat]} threw back {CARD_NAMES[top]}"
            assert deadwood_of_mask(hand ^ 1 << card) < before
        else:
            taken.pop(seat, None)

    seeds = (seed * 2, seed * 2 + 1)
    return play_hand(names, seed, seeds, dealer=seed % 2, rules=PRESETS[rules_name], watch=watch)[1]


@pytest.mark.parametrize("rules_name", ["standard", "seed004"])
@pytest.mark.parametrize("level", LEVELS)
def test_levels_play_legal_useful_takes_under_both_discard_rules(rules_name: str, level: str) -> None:
    # seed004 lets the card just taken be thrown back (Rules.discard_taken_card): the levels act on
    # the mask, never throw it back (no gain), and every take still lowers the deadwood.
    assert PRESETS["seed004"].discard_taken_card
    for seed in range(3):
        result = play_checked_hand(rules_name, (level, "hard" if level != "hard" else "expert"), seed)
        assert result["kind"] != "truncated"
