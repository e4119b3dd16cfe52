"""Matches: hands to the target, bonuses of every preset, dealer rotation, per-hand history."""

from __future__ import annotations

import copy
import itertools
import random

import numpy as np
import pytest
from policies import cycle_the_pile, deck, knock_first, never_knock

from ginenv.actions import ACTION_NAMES, UnknownActionError, action_id
from ginenv.engine import IllegalActionError
from ginenv.match import DEFAULT_HAND_LIMIT, Match, match_bonuses
from ginenv.rules import PRESETS, Rules


def play_out(match: Match) -> Match:
    while not match.is_over:
        match.step(knock_first(match.hand))
    return match


def test_bonuses_off_by_default() -> None:
    r = match_bonuses(Rules(), [104, 37], [4, 2], 7)
    assert (r.winner, r.bonuses, r.totals, r.shutout, r.margin) == (0, (0, 0), (104, 37), False, 67)


def test_seed000_bonuses_game_and_line() -> None:
    r = match_bonuses(PRESETS["seed000"], [30, 112], [2, 5], 8)
    # Winner: game 100 + 5 lines of 25; loser keeps their own line bonus.
    assert r.winner == 1
    assert r.bonuses == (50, 225)
    assert r.totals == (80, 337)
    assert not r.shutout


def test_seed000_shutout_doubles_the_winners_bonuses() -> None:
    r = match_bonuses(PRESETS["seed000"], [101, 0], [3, 0], 5)
    assert r.shutout
    assert r.bonuses == ((100 + 3 * 25) * 2, 0)
    assert r.totals == (101 + 350, 0)


@pytest.mark.parametrize("name", list(PRESETS))
def test_match_runs_to_target_with_consistent_history(name: str) -> None:
    rules = PRESETS[name]
    match = play_out(Match(rules, dealer=1, rng=random.Random(7)))
    result = match.result
    assert result is not None
    totals = [0, 0]
    won = [0, 0]
    for i, record in enumerate(match.records):
        if record.result.winner is not None:
            totals[record.result.winner] += record.result.points
            won[record.result.winner] += 1
        assert record.scores_after == tuple(totals)
        # Nobody had reached the target before the last hand.
        assert max(totals) >= rules.target or i < len(match.records) - 1
        if i < len(match.records) - 1:
            assert max(totals) < rules.target
    assert list(result.points) == totals == match.scores
    assert list(result.hands_won) == won
    assert result.hands_played == len(match.records)
    assert result.totals[result.winner] > result.totals[1 - result.winner]


@pytest.mark.parametrize("rule", ["alternate", "winner", "loser"])
def test_dealer_rotation(rule: str) -> None:
    rules = Rules(next_dealer=rule, target=300)  # type: ignore[arg-type]
    match = play_out(Match(rules, dealer=0, rng=random.Random(3)))
    records = match.records
    assert records[0].dealer == 0
    assert len(records) > 3
    for prev, cur in itertools.pairwise(records):
        winner = prev.result.winner
        if rule == "alternate":
            expected = 1 - prev.dealer
        elif winner is None:
            expected = prev.dealer
        else:
            expected = winner if rule == "winner" else 1 - winner
        assert cur.dealer == expected


def test_stepping_a_finished_match_is_refused() -> None:
    match = play_out(Match(Rules(target=10), rng=random.Random(1)))
    assert match.legal_actions() == []
    with pytest.raises(ValueError, match="over"):
        match.step(0)


def test_decks_are_dealt_in_order() -> None:
    deck = list(range(52))
    match = Match(Rules(), dealer=1, decks=[deck])
    assert match.hand.deck == tuple(deck)
    assert match.hand.dealer == 1


# 2s3s4s5s and 6d7d8d9d melded, 9c Ah loose; drawing Kh and knocking with it leaves deadwood 10.
KNOCK_HAND = "2s 3s 4s 5s 6d 7d 8d 9d 9c Ah"
# No melds: deadwood 70.
OTHER_HAND = "Ks Qs Jc Tc 8h 7c 6h 4h 3c 2d"


def names(match: Match, *actions: str) -> None:
    for action in actions:
        match.step(action_id(action))


def test_a_truncated_hand_ends_the_match_without_a_result() -> None:
    knock_deal = deck(KNOCK_HAND, OTHER_HAND, "5h", "Kh")
    cycle_deal = deck(OTHER_HAND, KNOCK_HAND, "5h")
    match = Match(Rules(), dealer=1, decks=[knock_deal, cycle_deal, knock_deal], turn_limit=4)
    names(match, "pass", "pass", "draw_stock", "knock Kh")
    assert match.scores == [60, 0] and not match.is_over
    assert match.hand.dealer == 0  # the next hand was dealt
    while not match.is_over:
        match.step(cycle_the_pile(match.hand))
    assert match.truncated and match.is_over
    assert match.result is None
    assert match.scores == [60, 0]  # a truncated hand scores nothing
    assert match.hands_won == [1, 0]
    assert len(match.records) == 2
    last = match.records[-1].result
    assert (last.kind, last.winner, last.points) == ("truncated", None, 0)
    assert match.records[-1].scores_after == (60, 0)
    assert match.hand.draws == 4 and match.hand.result is last  # no hand was dealt after it
    assert match.legal_actions() == []
    with pytest.raises(IllegalActionError, match="turn limit of 4 draws") as info:
        match.step(action_id("draw_discard"))
    assert "truncated" in str(info.value)
    assert len(match.records) == 2


def test_the_turn_limit_reaches_every_hand() -> None:
    # knock_first draws from the stock only: at most 29 draws a hand, under the limit of 30.
    match = Match(Rules(), rng=random.Random(4), turn_limit=30)
    limits = set()
    while not match.is_over:
        limits.add((len(match.records), match.hand.turn_limit))
        match.step(knock_first(match.hand))
    assert {limit for _, limit in limits} == {30} and len(limits) == len(match.records) > 1
    assert not match.truncated and match.result is not None
    assert Match().turn_limit == Match().hand.turn_limit == 100


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "x", None])
def test_bad_turn_limits_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="turn_limit must be a positive integer"):
        Match(turn_limit=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", [int, np.int8, np.int64, np.uint8, np.uint64])
def test_match_step_accepts_every_integer_type_on_a_knock(kind: type) -> None:
    match = Match(Rules(), dealer=1, decks=[deck(KNOCK_HAND, OTHER_HAND, "5h", "Kh")])
    for name in ("pass", "pass", "draw_stock", "knock Kh"):
        result = match.step(kind(action_id(name)))
    assert action_id("knock Kh") >= 63  # past a 64-bit mask: numpy shifts overflowed here
    assert result is not None and result.kind == "knock"
    assert [ACTION_NAMES[a] for a in match.records[0].actions] == ["pass", "pass", "draw_stock", "knock Kh"]
    assert all(type(a) is int for a in match.records[0].actions)


@pytest.mark.parametrize("bad", [1.0, "1", True, np.bool_(False)])
def test_match_step_refuses_non_integers_and_changes_nothing(bad: object) -> None:
    match = Match(Rules(), dealer=1, decks=[deck(KNOCK_HAND, OTHER_HAND, "5h", "Kh")])
    with pytest.raises(UnknownActionError, match="integer action id"):
        match.step(bad)  # type: ignore[arg-type]
    assert match.hand.history == [] and match.records == []


def snapshot(match: Match) -> tuple[object, ...]:
    hand = match.hand
    return (
        list(match.scores),
        list(match.hands_won),
        list(match.records),
        match.result,
        match.truncated,
        tuple(hand.hands),
        list(hand.stock),
        list(hand.discard_pile),
        list(hand.history),
        hand.draws,
    )


@pytest.mark.parametrize("with_decks", [False, True])
def test_clone_is_an_independent_copy_mid_match(with_decks: bool) -> None:
    rng = random.Random(21)
    decks = [random.Random(i).sample(range(52), 52) for i in range(40)] if with_decks else None
    match = Match(Rules(target=150), dealer=0, rng=rng, decks=decks)
    while len(match.records) < 2:
        match.step(knock_first(match.hand))
    for _ in range(5):  # mid-hand
        match.step(knock_first(match.hand))
    before = snapshot(match)
    copy = match.clone()
    assert snapshot(copy) == before
    assert copy.hand is not match.hand
    play_out(copy)
    assert copy.is_over
    assert snapshot(match) == before  # playing the copy out left the original untouched
    # The original, played on, deals the same hands and ends the same way as the copy did.
    play_out(match)
    assert match.result == copy.result
    assert [r.deck for r in match.records] == [r.deck for r in copy.records]
    assert [r.result for r in match.records] == [r.result for r in copy.records]


def test_clone_of_a_truncated_match_stays_over() -> None:
    match = Match(Rules(), dealer=1, decks=[deck(OTHER_HAND, KNOCK_HAND, "5h")], turn_limit=2)
    while not match.is_over:
        match.step(cycle_the_pile(match.hand))
    copy = match.clone()
    assert copy.truncated and copy.is_over and copy.result is None and copy.turn_limit == 2
    with pytest.raises(IllegalActionError, match="truncated"):
        copy.step(0)


@pytest.mark.parametrize("hand_first", [False, True])
def test_deepcopy_is_a_clone_that_keeps_the_hand_shared(hand_first: bool) -> None:
    # Decks from a generator: the default deepcopy cannot copy one.
    match = Match(
        Rules(), rng=random.Random(2), decks=(random.Random(i).sample(range(52), 52) for i in range(3))
    )
    for _ in range(4):
        match.step(knock_first(match.hand))
    holder = {"hand": match.hand, "match": match} if hand_first else {"match": match, "hand": match.hand}
    copied = copy.deepcopy(holder)
    assert copied["match"].hand is copied["hand"]
    assert copied["hand"] is not match.hand
    assert copied["hand"].history == match.hand.history
    play_out(copied["match"])
    assert len(match.hand.history) == 4 and not match.records


def test_a_match_of_dead_hands_is_truncated_at_the_hand_limit() -> None:
    # Players who never knock play dead hand after dead hand: before the hand limit such a match
    # never ended.
    match = Match(Rules(), dealer=0, rng=random.Random(5))
    steps = 0
    while not match.is_over and steps < 100_000:
        match.step(never_knock(match.hand))
        steps += 1
    assert match.truncated and match.result is None
    assert len(match.records) == DEFAULT_HAND_LIMIT == 200
    assert {r.result.kind for r in match.records} == {"dead"}
    assert match.scores == [0, 0] and match.legal_actions() == []
    with pytest.raises(IllegalActionError, match="200 hands without a winner"):
        match.step(action_id("pass"))


def test_hand_limit_is_an_option_and_checked() -> None:
    match = Match(Rules(), dealer=1, rng=random.Random(2), hand_limit=3)
    while not match.is_over:
        match.step(never_knock(match.hand))
    assert match.truncated and len(match.records) == 3
    assert match.clone().hand_limit == 3
    # A match won before the limit is a result, not a truncation.
    won = play_out(Match(Rules(target=10), dealer=0, rng=random.Random(4), hand_limit=3))
    assert won.result is not None and not won.truncated
    for bad in (0, -2, 1.5, True, "3", None):
        with pytest.raises(ValueError, match="hand_limit must be a positive integer"):
            Match(hand_limit=bad)  # type: ignore[arg-type]
