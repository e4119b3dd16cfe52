"""normal: the middle level of the seeds ("Moyen" / "Normal" / "Tavaline", seeds 001-003).

Strategy, precisely:

* **Best meld arrangement.** Every choice is judged by the exact least deadwood of the hand it
  leaves (:func:`ginenv.melds.deadwood_of_mask`), never by a fixed meld grouping.
* **Draw.** It takes the upcard or the top discard when it helps: when the card is melded after
  taking it and the deadwood (after the best other discard) falls, or when taking it allows a knock
  this very turn, and in both cases only if the deadwood then falls (a take that lowers nothing is
  a wasted turn: :func:`.heuristics.take_is_useful`). Otherwise it passes or draws from
  the stock. After a take it throws only a card that keeps the deadwood below what it was before
  the take (:class:`.level_base.TakeGuard`), so it cannot cycle cards through the pile.
* **Discard.** Among the discards leaving the least deadwood, in this order of preference:
  a card the opponent's visible history does not say is useful to it (it took no card of the same
  rank, nor of the same suit within two ranks: :func:`.heuristics.interest_cards` of the cards it
  picked up and still holds); a card of a rank the opponent already discarded or passed over; a card
  with no partner among its own deadwood (pairs and run draws are kept); the highest-valued card;
  the lowest card id. Deterministic.
* **Knock.** As soon as it can (the least deadwood after the discard is within the knock limit);
  gin when it can; big gin whenever the rules allow it.
"""

from __future__ import annotations

from ginenv.agents.base import Observation
from ginenv.agents.levels.heuristics import (
    completes_meld,
    deadwood,
    deadwood_cards,
    enables_knock,
    interest_cards,
    legal_discards,
    partner_cards,
    take_is_useful,
)
from ginenv.agents.levels.level_base import HeuristicAgent

from ginenv.actions import KNOCK_BASE
from ginenv.cards import CARD_VALUES, cards_of
from ginenv.kernels import RANK_MASK
from ginenv.observation import SeatView


class NormalAgent(HeuristicAgent):
    """Least-deadwood play that keeps pairs, avoids feeding the opponent and knocks at once."""

    name = "normal"

    @staticmethod
    def pick_card(hand: int, allowed: int, view: SeatView) -> int:
        """The discard of the module docstring's order of preference."""
        options = cards_of(allowed)
        left = {c: deadwood(hand ^ 1 << c) for c in options}
        best = min(left.values())
        pool = [c for c in options if left[c] == best]
        wanted = interest_cards(view.opponent_taken)
        shown = view.opponent_discarded | view.opponent_passed
        partners = partner_cards(deadwood_cards(hand))
        return min(
            pool,
            key=lambda c: (
                wanted >> c & 1,
                not (int(RANK_MASK[c % 13]) & shown),
                partners >> c & 1,
                -CARD_VALUES[c],
                c,
            ),
        )

    def wants_top(self, view: SeatView) -> bool:
        """Take the top card when it melds or lets it knock, and the take lowers the deadwood."""
        hand, top = view.hand, view.top
        assert top is not None
        helps = completes_meld(hand, top) or enables_knock(hand, top, view.knock_limit)
        return helps and take_is_useful(hand, top)

    def choose_discard(self, observation: Observation, view: SeatView) -> tuple[int, bool]:
        """The card of :meth:`pick_card`; knock whenever that discard allows it."""
        card = self.pick_card(view.hand, self.useful_only(view.hand, legal_discards(observation)), view)
        return card, bool(observation["action_mask"][KNOCK_BASE + card])


__all__ = ["NormalAgent"]
