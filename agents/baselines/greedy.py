"""greedy: the simple baseline the harness is tested with before the computer levels exist.

Strategy: take the upcard (or the top discard) only when it goes into a meld and lowers the
deadwood; otherwise pass or draw from the stock. Discard the card that leaves the least deadwood,
the highest-valued one on ties (the "highest useless card"). Knock as soon as it is allowed; big gin
when it can. Deterministic: it never uses its random generator.

No cycling: a take must lower the deadwood, so taking a card only to throw an equal one (Ac for Ah)
never happens, and after a take its least-deadwood discard keeps the deadwood below what it was
before (:class:`ginenv.agents.levels.common.TakeGuard`; the card just taken is never thrown back, even
where ``Rules.discard_taken_card`` allows it). Two greedy players cannot pass the same cards back and
forth through the discard pile.
"""

from __future__ import annotations

from ginenv.agents.base import Observation
from ginenv.agents.levels.common import HeuristicAgent, legal_discards

from ginenv.actions import KNOCK_BASE
from ginenv.cards import CARD_VALUES, cards_of
from ginenv.melds import deadwood_of_mask
from ginenv.observation import SeatView


def best_discard(hand: int, allowed: int) -> int:
    """The allowed card whose discard leaves the least deadwood (highest card on ties)."""
    return min(cards_of(allowed), key=lambda c: (deadwood_of_mask(hand ^ 1 << c), -CARD_VALUES[c]))


class GreedyAgent(HeuristicAgent):
    """Meld-taking, deadwood-dumping, knock-at-once baseline (see the module docstring)."""

    name = "greedy"

    @staticmethod
    def melds_with(hand: int, card: int) -> bool:
        """Whether taking ``card`` (then the best discard) puts it in a meld and lowers the deadwood."""
        # The card taken cannot be thrown back this turn: the best discard is among the others.
        kept = hand | 1 << card
        kept ^= 1 << best_discard(kept, hand)
        after = deadwood_of_mask(kept)
        # ``card`` is melded iff leaving it out would save less than its own value.
        in_meld = after < deadwood_of_mask(kept ^ 1 << card) + CARD_VALUES[card]
        return in_meld and after < deadwood_of_mask(hand)

    def wants_top(self, view: SeatView) -> bool:
        """Take the top card when it melds and lowers the deadwood (:meth:`melds_with`)."""
        assert view.top is not None
        return self.melds_with(view.hand, view.top)

    def choose_discard(self, observation: Observation, view: SeatView) -> tuple[int, bool]:
        """The least-deadwood discard (after a take, one that keeps it useful); knock when allowed."""
        card = best_discard(view.hand, self.useful_only(view.hand, legal_discards(observation)))
        return card, bool(observation["action_mask"][KNOCK_BASE + card])


__all__ = ["GreedyAgent", "best_discard"]
