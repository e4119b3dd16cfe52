"""Matches: hands to the target, bonuses of every preset, dealer rotation, per-hand history."""

from __future__ import annotations

import itertools
import random

import pytest
from policies import knock_first

from ginenv.match import Match, match_bonuses
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
