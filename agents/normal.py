"""normal: the middle level of the seeds ("Moyen" / "Normal" / "Tavaline", seeds 001-003).

Strategy, precisely:

* **Best meld arrangement.** Every choice is judged by the exact least deadwood of the hand it
  leaves (:func:`ginenv.melds.deadwood_of_mask`), never by a fixed meld grouping.
* **Draw.** It takes the upcard or the top discard when it helps: when the card is melded after
  taking it and the deadwood (after the best other discard) falls, or when taking it allows a knock
  this very turn, and in both cases only if the deadwood then falls (a take that lowers nothing is
  a wasted turn: :func:`ginenv.agents.common.take_is_useful`). Otherwise it passes or draws from
  the stock. After a take it throws only a card that keeps the deadwood below what it was before
  the take (:class:`ginenv.agents.common.TakeGuard`), so it cannot cycle cards through the pile.
* **Discard.** Among the discards leaving the least deadwood, in this order of preference:
  a card the opponent's visible history does not say is useful to it (it took no card of the same
  rank, nor of the same suit within two ranks: :func:`ginenv.agents.common.interest_cards` of the cards it
  picked up and still holds); a card of a rank the opponent already discarded or passed over; a card
  with no partner among its own deadwood (pairs and run draws are kept); the highest-valued card;
  the lowest card id. Deterministic.
* **Knock.** As soon as it can (the least deadwood after the discard is within the knock limit);
  gin when it can; big gin whenever the rules allow it.
"""

from __future__ import annotations

from ginenv.agents.base import Agent, Observation
from ginenv.agents.common import (
    TakeGuard,
    card_bits,
    completes_meld,
    deadwood,
    deadwood_cards,
    enables_knock,
    interest_cards,
    legal_discards,
    partner_cards,
    take_is_useful,
)

from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.cards import CARD_VALUES
from ginenv.observation import SeatView, decode


def rank_mask(card: int) -> int:
    """The four cards of ``card``'s rank."""
    r = card % 13
    return sum(1 << (s * 13 + r) for s in range(4))


class NormalAgent(TakeGuard, Agent):
    """Least-deadwood play that keeps pairs, avoids feeding the opponent and knocks at once."""

    name = "normal"

    @staticmethod
    def choose_discard(hand: int, allowed: int, view: SeatView) -> int:
        """The discard of the module docstring's order of preference."""
        options = card_bits(allowed)
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
                not (rank_mask(c) & shown),
                partners >> c & 1,
                -CARD_VALUES[c],
                c,
            ),
        )

    def act(self, observation: Observation) -> int:
        """Normal's choice for this observation."""
        mask = observation["action_mask"]
        view = decode(observation["observation"])
        hand = view.hand
        if mask[DRAW_DISCARD] and view.top is not None:
            top = view.top
            helps = completes_meld(hand, top) or enables_knock(hand, top, view.knock_limit)
            if helps and take_is_useful(hand, top):
                return self.note_take(top)
        if mask[PASS]:
            return PASS
        if mask[DRAW_STOCK]:
            return DRAW_STOCK
        if mask[BIG_GIN]:
            return BIG_GIN
        card = self.choose_discard(hand, self.useful_only(hand, legal_discards(observation)), view)
        if mask[KNOCK_BASE + card]:
            return KNOCK_BASE + card
        return DISCARD_BASE + card


__all__ = ["NormalAgent", "rank_mask"]
