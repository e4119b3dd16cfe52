"""easy: the beginner level of the seeds ("Facile" / "Lihtne", seeds 001-003).

Strategy, precisely:

* **Melds and pairs.** The melds it has made are the cards melded in every least-deadwood
  arrangement of its hand; the others are its deadwood (:func:`.heuristics.deadwood_cards`). A
  deadwood card with a *partner* among the other deadwood cards (same rank, or same suit within two
  ranks: a pair or a run draw) is kept; a deadwood card without one is *useless*.
* **Draw.** A beginner sees pairs, not run draws: it takes the upcard or the top discard only when
  that card makes a set with a pair (or three) of its rank in the hand and the deadwood falls
  (:func:`makes_set`); otherwise it passes or draws from the stock. (Taking every discard that
  helps is the next level's skill.) It never takes a card only to throw an equal one: after a take
  its discard must leave less deadwood than before the take (:class:`.level_base.TakeGuard`),
  so it cannot cycle cards through the discard pile with its opponent.
* **Discard.** The highest-valued useless card; when every deadwood card has a partner, the highest
  deadwood card; with no deadwood at all (a full hand of melds and one extra card), the card whose
  discard leaves the least deadwood. Ties between equal values (Kh or Ks) are broken at random,
  from the generator seeded by ``reset``. It never looks at the opponent's history.
* **Knock.** Only with very little deadwood: at most :data:`EASY_KNOCK_DEADWOOD` (3) points, or
  gin; big gin whenever the rules allow it.
"""

from __future__ import annotations

from ginenv.agents.base import Observation
from ginenv.agents.levels.heuristics import (
    completes_meld,
    deadwood,
    deadwood_cards,
    legal_discards,
    partner_cards,
)
from ginenv.agents.levels.level_base import HeuristicAgent

from ginenv.actions import KNOCK_BASE
from ginenv.cards import CARD_VALUES, cards_of
from ginenv.observation import SeatView

#: Easy knocks only when the deadwood left is at most this many points (gin always).
EASY_KNOCK_DEADWOOD = 3


def makes_set(hand: int, card: int) -> bool:
    """Whether ``hand`` holds two or three cards of ``card``'s rank and taking ``card`` completes a
    meld that lowers the deadwood (:func:`.heuristics.completes_meld`)."""
    r = card % 13
    same_rank = sum(hand >> (s * 13 + r) & 1 for s in range(4))
    return same_rank >= 2 and completes_meld(hand, card)


class EasyAgent(HeuristicAgent):
    """Keeps melds and pairs, throws the highest useless card, knocks only near gin."""

    name = "easy"

    #: Knock only with at most this much deadwood (see :data:`EASY_KNOCK_DEADWOOD`).
    knock_deadwood: int = EASY_KNOCK_DEADWOOD

    def pick_card(self, hand: int, allowed: int) -> int:
        """The card to throw: the highest useless card (see the module docstring)."""
        loose = deadwood_cards(hand) & allowed
        if not loose:
            # Everything melds: throw the card that keeps the least deadwood.
            options = cards_of(allowed)
            best = min(deadwood(hand ^ 1 << c) for c in options)
            return self._pick([c for c in options if deadwood(hand ^ 1 << c) == best])
        useless = loose & ~partner_cards(deadwood_cards(hand))
        pool = cards_of(useless or loose)
        top = max(CARD_VALUES[c] for c in pool)
        return self._pick([c for c in pool if CARD_VALUES[c] == top])

    def _pick(self, cards: list[int]) -> int:
        """One of ``cards`` at random (from the seeded generator) when there is a choice."""
        if len(cards) == 1:
            return cards[0]
        return cards[int(self.rng.integers(len(cards)))]

    def wants_top(self, view: SeatView) -> bool:
        """Take the top card only to complete a set that lowers the deadwood (:func:`makes_set`)."""
        assert view.top is not None
        return makes_set(view.hand, view.top)

    def choose_discard(self, observation: Observation, view: SeatView) -> tuple[int, bool]:
        """The card of :meth:`pick_card`; knock only with at most :attr:`knock_deadwood` left."""
        hand = view.hand
        card = self.pick_card(hand, self.useful_only(hand, legal_discards(observation)))
        left = deadwood(hand ^ 1 << card)
        knock = bool(observation["action_mask"][KNOCK_BASE + card]) and left <= min(
            self.knock_deadwood, view.knock_limit
        )
        return card, knock


__all__ = ["EASY_KNOCK_DEADWOOD", "EasyAgent", "makes_set"]
