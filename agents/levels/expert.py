"""expert: the hard level's evaluation, weighed against the Bayesian estimate of the opponent's hand.

The seeds' "Expert" (000, 002): it keeps a record of the cards the opponent takes, passes over and
discards, turns it into a Bayesian estimate of the opponent's hand (:mod:`.belief`), and weighs
every discard and every knock against that estimate.

Strategy, precisely. Each decision first feeds the observation to the :class:`OpponentModel`, which
gives ``p(c)``, the probability that the opponent holds card ``c``, and from it ``q(c)``, the
probability that ``c`` is the next stock card (the unseen cards the opponent does not hold, evenly).

* ``E(h)``: the *expected deadwood after the next draw* of a 10-card hand ``h``, the mean over the
  next stock card ``c ~ q`` of the least deadwood of ``h + c`` after its best discard. Unlike the
  hard level's uniform mean over the unseen cards, the cards the opponent probably holds count less
  as outs.
* ``M(d)``: the probability that the opponent can meld the discard ``d``, from the marginals: the
  three-card windows through ``d`` (a pair of its rank, or two suit neighbours) with each window's
  probability the product of its cards' ``p`` (1 for cards it took, 0 for cards gone), combined as
  ``1 - prod(1 - P(window))``.
* The score of discarding ``d`` from an 11-card hand ``H`` is ``S(H, d) = E(H - d) + w * M(d)``,
  where ``w`` (deadwood points a fed meld costs) rises from :attr:`ExpertAgent.feed_early` to
  :attr:`ExpertAgent.feed_late` as the stock runs down.
* **Discard**: the allowed card with the least ``S`` (ties: the higher card).
* **Draw**: take the top discard ``t`` when ``min_d S(H + t, d)`` beats the value of a stock draw,
  the mean over ``c ~ q`` of ``min_d S(H + c, d)``, by more than :attr:`ExpertAgent.take_margin`;
  ``d`` ranges over the *useful* discards after the take, those leaving less deadwood than before it
  (:func:`.heuristics.useful_discards`; none: no take). After a take it discards by ``S``
  among those only (:class:`.level_base.TakeGuard`). Without the rule, taking an ace only
  to throw another ace (which the estimate said was safer to throw) scored best for both players on
  some deals, and they cycled Ah, Ac and Ad through the pile forever; now every take lowers the
  deadwood, so play cannot cycle.
* **Knock**: among the legal knocks, the discard leaving the least deadwood ``k`` (ties: lowest
  ``S``). Gin always knocks. With ``k <=`` :attr:`ExpertAgent.trap_deadwood` it plays on while the
  stock holds at least :attr:`ExpertAgent.trap_stock` cards: with so little deadwood an opponent's
  knock is usually undercut (25 bonus) and gin pays 25 more, so waiting risks little (seed 004).
  Otherwise :attr:`ExpertAgent.samples` opponent hands are drawn from the estimate
  (:meth:`OpponentModel.sample_hands`, with the hand-quality tilt) and the knock is scored against
  each with the engine's showdown (layoffs included, :class:`.belief.Knock`): it knocks when
  the mean points are positive and the undercut rate is at most :attr:`ExpertAgent.max_undercut`.
  When it does not knock it discards by ``S``.
* Big gin whenever the rules allow it.

Random only through the sampled hands, drawn from the generator ``reset(seed)`` seeds.
"""

from __future__ import annotations

import numpy as np
from ginenv.agents.base import Observation
from ginenv.agents.levels.belief import BeliefParams, Knock, OpponentModel
from ginenv.agents.levels.heuristics import legal_discards, legal_knocks, useful_discards
from ginenv.agents.levels.heuristics_compiled import after_draw
from ginenv.agents.levels.level_base import HeuristicAgent
from numba import njit

from ginenv import compiling
from ginenv.cards import CARD_VALUES, NUM_CARDS, cards_of
from ginenv.kernels import best_discards, min_deadwood
from ginenv.observation import MAX_STOCK, SeatView
from ginenv.rules import Rules

# ------------------------------------------------------------------------ compiled functions


@njit(cache=True)
def expected_after_draw(hand: int, q: np.ndarray, skip: int) -> float:
    """``E(hand)``: the mean over the next card ``c ~ q`` (card ``skip`` left out, the rest
    renormalised; -1 for none) of the least deadwood of ``hand + c`` after its best discard."""
    base = min_deadwood(hand)
    best_minus_one = best_discards(hand)[0]
    total = 0.0
    mass = 0.0
    for c in range(NUM_CARDS):
        if c != skip and q[c] > 0.0:
            total += q[c] * after_draw(hand, c, base, best_minus_one)
            mass += q[c]
    if mass <= 0.0:
        return float(base)
    return total / mass


@njit(cache=True)
def discard_values(hand: int, allowed: int, q: np.ndarray, penalty: np.ndarray, skip: int) -> np.ndarray:
    """``S(hand, d) = E(hand - d) + penalty[d]`` for each allowed ``d`` (inf elsewhere)."""
    out = np.full(NUM_CARDS, np.inf)
    for d in range(NUM_CARDS):
        if (allowed >> d) & 1:
            out[d] = expected_after_draw(hand ^ (1 << d), q, skip) + penalty[d]
    return out


@njit(cache=True)
def stock_value(hand: int, q: np.ndarray, penalty: np.ndarray) -> float:
    """Mean over the stock card ``c ~ q`` of ``min_d S(hand + c, d)`` (``c`` left out of the next draw)."""
    total = 0.0
    mass = 0.0
    for c in range(NUM_CARDS):
        if q[c] > 0.0:
            grown = hand | (1 << c)
            best = np.inf
            for d in range(NUM_CARDS):
                if (grown >> d) & 1:
                    v = expected_after_draw(grown ^ (1 << d), q, c) + penalty[d]
                    if v < best:
                        best = v
            total += q[c] * best
            mass += q[c]
    return total / mass if mass > 0.0 else np.inf


@njit(cache=True)
def meld_probability(p: np.ndarray) -> np.ndarray:
    """``M(d)`` for every card: the chance the opponent holds two cards that meld with ``d``."""
    out = np.zeros(NUM_CARDS)
    for d in range(NUM_CARDS):
        r = d % 13
        s = d // 13
        miss = 1.0
        for a in range(4):
            for b in range(a + 1, 4):
                if a != s and b != s:
                    miss *= 1.0 - p[a * 13 + r] * p[b * 13 + r]
        for lo in range(r - 2, r + 1):
            if lo < 0 or lo + 2 > 12:
                continue
            w = 1.0
            for k in range(lo, lo + 3):
                if k != r:
                    w *= p[s * 13 + k]
            miss *= 1.0 - w
        out[d] = 1.0 - miss
    return out


# --------------------------------------------------------------------------- the agent


class ExpertAgent(HeuristicAgent):
    """Expected deadwood and feeding risk under the opponent estimate; sampled knock risk."""

    name = "expert"

    #: Cost in deadwood points of a discard the opponent can meld, early in the hand ...
    feed_early: float = 3.0
    #: ... and with the stock empty (linear in between).
    feed_late: float = 12.0
    #: Take the top discard only if it beats the stock draw by more than this.
    take_margin: float = 0.0
    #: Opponent hands sampled to judge a knock.
    samples: int = 64
    #: Knock only when the sampled undercut rate is at most this.
    max_undercut: float = 0.25
    #: Play on (for gin, or to undercut the opponent's knock) with a knockable deadwood of at most
    #: this many points ...
    trap_deadwood: int = 8
    #: ... while the stock holds at least this many cards.
    trap_stock: int = 6

    def __init__(
        self,
        seed: int | None = None,
        rules: Rules | None = None,
        belief: BeliefParams | None = None,
        **params: float,
    ) -> None:
        """``rules``: the scoring the knock judgement assumes (bonuses are not in the observation);
        ``belief``: the opponent model's factors; ``params`` override the tuning constants above."""
        super().__init__(seed)
        self.rules = rules or Rules()
        self.model = OpponentModel(belief)
        for key, value in params.items():
            if not hasattr(type(self), key) or key.startswith("_") or callable(getattr(type(self), key)):
                raise TypeError(f"unknown {type(self).__name__} parameter {key!r}")
            setattr(self, key, value)

    def reset(self, seed: int | None = None) -> None:
        """New hand: forget the opponent record, reseed."""
        super().reset(seed)
        self.model.reset()

    def see(self, view: SeatView) -> None:
        """Every view feeds the opponent model (new opponent actions become its events)."""
        self.model.update(view)

    # ------------------------------------------------------------------ evaluation

    def feed_weight(self, view: SeatView) -> float:
        """``w``: what a discard the opponent melds costs, at this stage."""
        late = 1.0 - min(view.stock_size, MAX_STOCK) / MAX_STOCK
        return self.feed_early + (self.feed_late - self.feed_early) * late

    def penalty(self, view: SeatView) -> np.ndarray:
        """``w * M(d)`` for every card."""
        return self.feed_weight(view) * meld_probability(self.model.probabilities())

    def stock_odds(self) -> np.ndarray:
        """``q``: probability of each card being the next stock card."""
        return self.model.stock_probabilities()

    @staticmethod
    def _best(values: np.ndarray, allowed: int) -> int:
        return min(cards_of(allowed), key=lambda c: (values[c], -CARD_VALUES[c], c))

    def wants_top(self, view: SeatView) -> bool:
        """Whether taking the top discard beats drawing from the stock."""
        hand, top = view.hand, view.top
        assert top is not None
        q, penalty = self.stock_odds(), self.penalty(view)
        useful = useful_discards(hand | 1 << top, top)
        if not useful:
            return False  # a wasted turn, and the way two players cycle cards through the pile
        take = discard_values(hand | 1 << top, useful, q, penalty, -1).min()
        return bool(take < stock_value(hand, q, penalty) - self.take_margin)

    def knock_outcomes(self, kept: int, n: int) -> np.ndarray:
        """The knock's points against ``n`` opponent hands sampled from the estimate."""
        hands = self.model.sample_hands(n, self.rng)
        return Knock.of(kept).points(hands, self.rules)

    def knock_card(self, view: SeatView, knocks: int, values: np.ndarray) -> tuple[int, int]:
        """(discard, deadwood left) of the knock this level would make."""
        hand = view.hand
        left = {c: min_deadwood(hand ^ 1 << c) for c in cards_of(knocks)}
        least = min(left.values())
        card = min((c for c in left if left[c] == least), key=lambda c: (values[c], -CARD_VALUES[c], c))
        return card, least

    def should_knock(self, view: SeatView, kept: int, left: int) -> bool:
        """The knock rule of the module docstring, for the 10 cards ``kept``."""
        if left == 0:
            return True
        if left <= self.trap_deadwood and view.stock_size >= self.trap_stock:
            return False
        points = self.knock_outcomes(kept, self.samples)
        return bool(points.mean() > 0 and (points < 0).mean() <= self.max_undercut)

    def choose_discard(self, observation: Observation, view: SeatView) -> tuple[int, bool]:
        """(card, knock?) for the discard phase."""
        hand = view.hand
        knocks = legal_knocks(observation)
        allowed = self.useful_only(hand, legal_discards(observation))
        values = discard_values(hand, allowed | knocks, self.stock_odds(), self.penalty(view), -1)
        if knocks:
            card, left = self.knock_card(view, knocks, values)
            if self.should_knock(view, hand ^ 1 << card, left):
                return card, True
        return self._best(values, allowed), False


# The compiled entry points ExpertAgent calls (ginenv.compiling), its opponent model's included.
compiling.register(ExpertAgent, meld_probability, discard_values, stock_value, OpponentModel)

__all__ = ["ExpertAgent", "discard_values", "expected_after_draw", "meld_probability", "stock_value"]
