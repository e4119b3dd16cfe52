"""A match: hands played until a player's total reaches the target, with bonuses and dealer rotation.

:class:`Match` owns the running scores, the per-hand history (:class:`HandRecord`: deal, dealer,
actions, result) and the final :class:`MatchResult`. It steps the current :class:`HandState` and deals
the next hand itself when one ends (from ``decks`` if given, else shuffled with its ``rng``).

Match bonuses (``Rules.game_bonus``, ``line_bonus``, ``shutout_multiplier``) are added once at the
end: the game bonus to the winner, a line bonus per hand won to each player, and when the loser
scored nothing (a shutout) the winner's bonuses are multiplied. Who deals next follows
``Rules.next_dealer``: ``alternate``; or the ``winner`` / ``loser`` of the hand, the same dealer
dealing again after a dead hand.

Every match is finite: a hand that reaches the turn limit (``turn_limit``, see :mod:`ginenv.engine`)
ends the whole match as truncated, and so does reaching ``hand_limit`` hands (default
:data:`DEFAULT_HAND_LIMIT`) without a winner: players who never knock play dead hands forever.
:attr:`Match.truncated` is then set, :attr:`Match.result` stays ``None`` and nobody wins.
"""

from __future__ import annotations

import copy
import itertools
import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from ginenv.engine import (
    DEFAULT_TURN_LIMIT,
    HandResult,
    HandState,
    IllegalActionError,
    check_dealer,
    check_turn_limit,
)
from ginenv.rules import Rules
from ginenv.validation import as_int

#: Hands after which a match without a winner is truncated: far above any real match (a match to
#: 100 takes about 5 to 15 hands; even 1-point hands shared out reach the target within 199).
DEFAULT_HAND_LIMIT = 200


@dataclass(frozen=True)
class HandRecord:
    """One finished hand of a match: enough to replay it."""

    dealer: int
    deck: tuple[int, ...]
    actions: tuple[int, ...]
    result: HandResult
    scores_after: tuple[int, int]


@dataclass(frozen=True)
class MatchResult:
    """The end of a match: ``totals`` are points plus bonuses; ``margin`` is winner minus loser."""

    winner: int
    points: tuple[int, int]
    hands_won: tuple[int, int]
    bonuses: tuple[int, int]
    totals: tuple[int, int]
    shutout: bool
    hands_played: int

    @property
    def margin(self) -> int:
        """Winner's total minus loser's total."""
        return self.totals[self.winner] - self.totals[1 - self.winner]

    def to_dict(self) -> dict[str, object]:
        """Plain-data form."""
        return {
            "winner": self.winner,
            "points": list(self.points),
            "hands_won": list(self.hands_won),
            "bonuses": list(self.bonuses),
            "totals": list(self.totals),
            "shutout": self.shutout,
            "hands_played": self.hands_played,
            "margin": self.margin,
        }


def match_bonuses(
    rules: Rules, points: Sequence[int], hands_won: Sequence[int], hands_played: int
) -> MatchResult:
    """Final standings of a finished match from its points and hands won (the winner has more points)."""
    winner = 0 if points[0] >= points[1] else 1
    loser = 1 - winner
    bonuses = [rules.line_bonus * hands_won[0], rules.line_bonus * hands_won[1]]
    bonuses[winner] += rules.game_bonus
    shutout = points[loser] == 0
    if shutout:
        bonuses[winner] *= rules.shutout_multiplier
    totals = (points[0] + bonuses[0], points[1] + bonuses[1])
    return MatchResult(
        winner,
        (points[0], points[1]),
        (hands_won[0], hands_won[1]),
        (bonuses[0], bonuses[1]),
        totals,
        shutout,
        hands_played,
    )


def check_hand_limit(hand_limit: object) -> int:
    """``hand_limit`` as a positive int; anything else raises ``ValueError`` saying what is allowed."""
    limit = as_int(hand_limit)
    if limit is None or limit < 1:
        raise ValueError(
            f"hand_limit must be a positive integer (hands per match; default {DEFAULT_HAND_LIMIT}), "
            f"got {hand_limit!r}"
        )
    return limit


class Match:
    """Hands until the target; ``step`` plays the current hand and deals the next one."""

    def __init__(
        self,
        rules: Rules | None = None,
        dealer: int = 0,
        rng: random.Random | None = None,
        decks: Iterable[Sequence[int | str]] | None = None,
        turn_limit: int = DEFAULT_TURN_LIMIT,
        hand_limit: int = DEFAULT_HAND_LIMIT,
    ) -> None:
        """Start a match; ``decks`` (52-card orders) are dealt in turn before falling back to ``rng``.

        ``turn_limit``: draws per hand after which the hand, and so the match, is truncated;
        ``hand_limit``: hands after which a match nobody has won is truncated.
        """
        dealer = check_dealer(dealer)
        self.turn_limit = check_turn_limit(turn_limit)
        self.hand_limit = check_hand_limit(hand_limit)
        #: True once a hand reached the turn limit: the match ended with no result.
        self.truncated = False
        self.rules = rules or Rules()
        self.rng = rng or random.Random()
        self._decks: Iterator[Sequence[int | str]] | None = iter(decks) if decks is not None else None
        self.first_dealer = dealer
        self.scores = [0, 0]
        self.hands_won = [0, 0]
        self.records: list[HandRecord] = []
        self.result: MatchResult | None = None
        self.hand = self._deal(dealer)

    def _deal(self, dealer: int) -> HandState:
        deck = next(self._decks, None) if self._decks is not None else None
        return HandState(self.rules, dealer, deck=deck, rng=self.rng, turn_limit=self.turn_limit)

    @property
    def is_over(self) -> bool:
        """True once a player has reached the target, or a hand was truncated."""
        return self.result is not None or self.truncated

    @property
    def player(self) -> int:
        """The player to move in the current hand."""
        return self.hand.player

    def legal_actions(self) -> list[int]:
        """Legal actions of the current hand (empty once the match is over)."""
        return [] if self.is_over else self.hand.legal_actions()

    def step(self, action: int) -> HandResult | None:
        """Apply an action (any integer type); returns the hand's result when this action ended a hand.

        Illegal actions and actions after the end raise :class:`~ginenv.engine.IllegalActionError`
        (non-integers :class:`~ginenv.actions.UnknownActionError`) and change nothing.
        """
        if self.is_over:
            raise IllegalActionError(f"the match is over ({self._why_over()}); no action is legal")
        hand = self.hand
        hand.step(action)
        if not hand.is_over:
            return None
        result = hand.result
        assert result is not None
        if result.winner is not None:
            self.scores[result.winner] += result.points
            self.hands_won[result.winner] += 1
        self.records.append(
            HandRecord(
                hand.dealer,
                hand.deck,
                tuple(a for _, a in hand.history),
                result,
                (self.scores[0], self.scores[1]),
            )
        )
        if result.truncated:
            self.truncated = True
        elif max(self.scores) >= self.rules.target:
            self.result = match_bonuses(self.rules, self.scores, self.hands_won, len(self.records))
        elif len(self.records) >= self.hand_limit:
            self.truncated = True
        else:
            self.hand = self._deal(self._next_dealer(hand.dealer, result))
        return result

    def _why_over(self) -> str:
        if self.result is not None:
            return f"player {self.result.winner} reached the target"
        if self.records[-1].result.truncated:
            return f"a hand reached the turn limit of {self.turn_limit} draws (truncated)"
        return f"truncated: {self.hand_limit} hands without a winner"

    def clone(self) -> Match:
        """An independent copy mid-match (for search): stepping either never changes the other.

        The copy deals its next hands as the original would: from the decks still to come, then from
        a copy of the random generator's state.
        """
        other = Match.__new__(Match)
        other.turn_limit = self.turn_limit
        other.hand_limit = self.hand_limit
        other.truncated = self.truncated
        other.rules = self.rules
        try:
            other.rng = copy.deepcopy(self.rng)
        except (NotImplementedError, TypeError):
            # A generator without a copyable state (random.SystemRandom) has nothing to reproduce.
            other.rng = self.rng
        if self._decks is not None:
            # Both copies must see the decks still to come; tee buffers them for the slower one.
            self._decks, other._decks = itertools.tee(self._decks)
        else:
            other._decks = None
        other.first_dealer = self.first_dealer
        other.scores = list(self.scores)
        other.hands_won = list(self.hands_won)
        other.records = list(self.records)  # HandRecords are frozen
        other.result = self.result
        other.hand = self.hand.clone()
        return other

    def __deepcopy__(self, memo: dict[int, object]) -> Match:
        """``copy.deepcopy`` is :meth:`clone` (decks given as a generator cannot be deep-copied).

        The current hand stays shared with whatever else in the copied object held it (an env that
        keeps ``match.hand`` beside the match gets one hand in its copy, not two).
        """
        other = self.clone()
        hand = memo.get(id(self.hand))
        if isinstance(hand, HandState):
            other.hand = hand
        else:
            memo[id(self.hand)] = other.hand
        memo[id(self)] = other
        return other

    def _next_dealer(self, dealer: int, result: HandResult) -> int:
        rule = self.rules.next_dealer
        if rule == "alternate":
            return 1 - dealer
        if result.winner is None:
            return dealer
        return result.winner if rule == "winner" else 1 - result.winner
