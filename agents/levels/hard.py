"""hard: the strong heuristic level of the seeds ("Difficile" / "Confirmé" / "Raske", seeds 000-002).

Strategy, precisely. Let ``U`` be the unseen cards (the stock and the opponent's unknown cards;
the next stock card is taken as uniform over them) and, for a 10-card hand ``h``, let ``C(h)`` be the
*expected cost after the next draw*: the mean over the cards ``c`` of ``U`` of ``x_c + m [x_c > L]``,
where ``x_c`` is the least deadwood of ``h + c`` after its best discard, ``L`` the knock limit and
``m`` = :attr:`HardAgent.miss` a surcharge for still being unable to knock. With ``m = 0`` this is
the expected deadwood after the next draw (:func:`.heuristics.expected_deadwood`); it rewards
hands with many live outs (the unseen cards that would help) and forgets dead draws (cards already
in the pile or in its hand). ``D(c)`` is the *danger* of discarding ``c``
(:func:`.heuristics.danger_scores`: the meld windows through ``c`` the opponent could still fill
with cards it may hold, weighted up by the cards it took from the pile, down by the ranks and suits
it discarded or passed), and ``w`` the danger weight, rising linearly from
:attr:`HardAgent.danger_early` to :attr:`HardAgent.danger_late` as the stock runs down (offence
first, defence later, seed 004). The score of discarding ``d`` from an 11-card hand ``H`` is
``S(H, d) = C(H - d) + w D(d)``; lower is better.

* **Discard.** The allowed card with the least ``S`` (ties: the higher card, then the lower id).
* **Draw.** Take the upcard or the top discard ``t`` when ``min_d S(H + t, d)`` is lower than the
  value of the stock, ``d`` ranging over the *useful* discards after the take (those leaving less
  deadwood than before it, :func:`.heuristics.useful_discards`; none: no take), and the
  stock's value being the mean over ``c`` in ``U`` of ``min_d S(H + c, d)``
  (:func:`.heuristics.stock_value`): both are the expected cost after the *following* draw, so
  the comparison is like for like. A card that could neither meld nor replace a higher deadwood
  card is never taken (no search needed). After a take it discards by ``S`` among the useful
  discards only (:class:`.level_base.TakeGuard`). Taking a card that lowers nothing only to
  throw an equal one (Ac for Ah) scored well when the equal card looked safer to throw, and two
  players doing it cycled the same cards through the pile forever; now every take lowers the
  deadwood, so play cannot cycle.
* **Knock now, or play on for gin.** With a legal knock it considers the discard leaving the least
  deadwood ``k`` (ties: the least dangerous, then the higher card). It knocks, except that it plays
  on while ``0 < k <=`` :attr:`HardAgent.gin_deadwood` (5), at least :attr:`HardAgent.gin_stock` (10)
  cards are left in the stock and at least :attr:`HardAgent.gin_outs` (1) unseen card would give
  gin. The reason (seed 004): with so little deadwood, playing on risks almost nothing, since a knock
  by the opponent is then usually undercut (25 bonus) and gin earns 25 more than a knock and no
  layoffs; late in the hand the stock may run out, so it takes the sure points. Playing on, it
  discards by ``S`` among the discards that keep a knockable hand (and, after a take, are useful).
  Gin (``k = 0``) always knocks; big gin whenever the rules allow it.

Measured against ``normal`` on duplicate deals (about +2 points per hand): normal's draw rule in
place of the stock-versus-discard comparison costs about 1.5 points of it, playing on only at
``k <= 1`` about 0.8; the danger term and the surcharge are within the noise against normal (whose
pick-ups are rare). Deterministic: it never uses its random generator.
"""

from __future__ import annotations

import numpy as np
from ginenv.agents.base import Observation
from ginenv.agents.levels import heuristics_compiled as K
from ginenv.agents.levels.heuristics import (
    danger_scores,
    deadwood,
    discard_scores,
    gin_outs,
    legal_discards,
    legal_knocks,
    live_cards,
    max_deadwood_value,
    meldable,
    stock_value,
    useful_discards,
)
from ginenv.agents.levels.level_base import HeuristicAgent

from ginenv import compiling
from ginenv.cards import CARD_VALUES, cards_of
from ginenv.observation import MAX_STOCK, SeatView


class HardAgent(HeuristicAgent):
    """Outs, expected deadwood after the next draw, danger of each discard, knock or play for gin."""

    name = "hard"

    #: Danger weight (deadwood points per unit of danger) at the start of the hand ...
    danger_early: float = 0.3
    #: ... and when the stock is empty (linear in between).
    danger_late: float = 1.0
    #: Surcharge of an after-draw deadwood still above the knock limit.
    miss: float = 5.0
    #: Play on for gin with a knockable deadwood of at most this many points ...
    gin_deadwood: int = 5
    #: ... while the stock holds at least this many cards ...
    gin_stock: int = 10
    #: ... and at least this many unseen cards would give gin.
    gin_outs: int = 1

    def __init__(self, seed: int | None = None, **params: float) -> None:
        """``params`` override the tuning constants above (for experiments), e.g. ``miss=0``."""
        super().__init__(seed)
        for key, value in params.items():
            default = getattr(type(self), key, None)
            if key.startswith("_") or not isinstance(default, int | float):
                raise TypeError(f"unknown HardAgent parameter {key!r}")
            setattr(self, key, type(default)(value))

    def penalty(self, view: SeatView) -> np.ndarray:
        """``w D(c)`` for every card ``c`` (see the module docstring)."""
        late = 1.0 - min(view.stock_size, MAX_STOCK) / MAX_STOCK
        weight = self.danger_early + (self.danger_late - self.danger_early) * late
        avoided = view.opponent_discarded | view.opponent_passed
        live = live_cards(view.unseen, view.opponent_taken)
        return weight * danger_scores(live, view.opponent_taken, avoided)

    def scores(self, hand: int, allowed: int, view: SeatView, penalty: np.ndarray) -> dict[int, float]:
        """``S(hand, d)`` for each allowed discard ``d``."""
        return discard_scores(hand, view.unseen, allowed, penalty, view.knock_limit, self.miss)

    def wants_top(self, view: SeatView) -> bool:
        """Whether taking the top discard beats drawing from the stock (module docstring)."""
        hand, top = view.hand, view.top
        assert top is not None
        grown = hand | 1 << top
        if not meldable(grown) >> top & 1 and CARD_VALUES[top] >= max_deadwood_value(hand):
            return False
        useful = useful_discards(grown, top)
        if not useful:
            return False  # a wasted turn, and the way two players cycle cards through the pile
        penalty = self.penalty(view)
        take = min(self.scores(grown, useful, view, penalty).values())
        return take < stock_value(hand, view.unseen, penalty, view.knock_limit, self.miss)

    def plays_for_gin(self, kept: int, left: int, view: SeatView) -> bool:
        """The play-on-for-gin rule of the module docstring, for the 10 cards ``kept``."""
        if not 0 < left <= self.gin_deadwood or view.stock_size < self.gin_stock:
            return False
        return gin_outs(kept, view.unseen).bit_count() >= self.gin_outs

    def choose_discard(self, observation: Observation, view: SeatView) -> tuple[int, bool]:
        """(card, knock?) for the discard phase."""
        hand = view.hand
        penalty = self.penalty(view)
        knocks = legal_knocks(observation)
        allowed = self.useful_only(hand, legal_discards(observation))
        if knocks:
            left = {c: deadwood(hand ^ 1 << c) for c in cards_of(knocks)}
            least = min(left.values())
            card = min((c for c in left if left[c] == least), key=lambda c: (penalty[c], -CARD_VALUES[c], c))
            if not self.plays_for_gin(hand ^ 1 << card, least, view):
                return card, True
            allowed = knocks & allowed or allowed
        scores = self.scores(hand, allowed, view, penalty)
        return min(scores, key=lambda c: (scores[c], -CARD_VALUES[c], c)), False


# The compiled entry points HardAgent calls through its heuristics (ginenv.compiling).
compiling.register(
    HardAgent, K.danger_table, K.discard_cost_table, K.stock_cost, K.max_deadwood_value, K.gin_outs
)

__all__ = ["HardAgent"]
