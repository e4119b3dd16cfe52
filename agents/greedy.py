"""greedy: the simple baseline the harness is tested with before the computer levels exist.

Strategy: take the upcard (or the top discard) only when it goes into a meld and lowers the
deadwood; otherwise pass or draw from the stock. Discard the card that leaves the least deadwood,
the highest-valued one on ties (the "highest useless card"). Knock as soon as it is allowed; big gin
when it can. Deterministic: it never uses its random generator.

No cycling: a take must lower the deadwood, so taking a card only to throw an equal one (Ac for Ah)
never happens, and after a take its least-deadwood discard keeps the deadwood below what it was
before (:class:`ginenv.agents.common.TakeGuard`; the card just taken is never thrown back, even
where ``Rules.discard_taken_card`` allows it). Two greedy players cannot pass the same cards back and
forth through the discard pile.
"""

from __future__ import annotations

from ginenv.agents.base import Agent, Observation
from ginenv.agents.common import TakeGuard

from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.cards import CARD_VALUES, cards_of
from ginenv.melds import deadwood_of_mask
from ginenv.observation import decode


def best_discard(hand: int, allowed: int) -> int:
    """The allowed card whose discard leaves the least deadwood (highest card on ties)."""
    return min(cards_of(allowed), key=lambda c: (deadwood_of_mask(hand ^ 1 << c), -CARD_VALUES[c]))


class GreedyAgent(TakeGuard, Agent):
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

    def act(self, observation: Observation) -> int:
        """Greedy choice for this observation."""
        mask = observation["action_mask"]
        view = decode(observation["observation"])
        hand = view.hand
        if mask[DRAW_DISCARD] and view.top is not None and self.melds_with(hand, view.top):
            return self.note_take(view.top)
        if mask[PASS]:
            return PASS
        if mask[DRAW_STOCK]:
            return DRAW_STOCK
        if mask[BIG_GIN]:
            return BIG_GIN
        allowed = 0
        for c in cards_of(hand):
            if mask[DISCARD_BASE + c]:
                allowed |= 1 << c
        card = best_discard(hand, self.useful_only(hand, allowed))
        if mask[KNOCK_BASE + card]:
            return KNOCK_BASE + card
        return DISCARD_BASE + card


__all__ = ["GreedyAgent", "best_discard"]
