"""greedy: the simple baseline the harness is tested with before the computer levels exist.

Strategy: take the upcard (or the top discard) only when, after the best discard among the other
cards, it is in a meld and the deadwood is lower than before; otherwise pass or draw from the stock.
Discard the card that leaves the least deadwood, the highest-valued one on ties (the "highest useless
card"), then the lowest card id. Knock as soon as it is allowed; big gin when it can. Deterministic:
it never uses its random generator.

No cycling: a take must lower the deadwood, so taking a card only to throw an equal one (Ac for Ah)
never happens, and after a take its least-deadwood discard keeps the deadwood below what it was
before (:class:`ginenv.agents.levels.base.TakeGuard`; the card just taken is never thrown back, even
where ``Rules.discard_taken_card`` allows it). Two greedy players cannot pass the same cards back and
forth through the discard pile.

The choices are the compiled greedy policy's (:func:`ginenv.kernels.policies.greedy_takes` and
:func:`ginenv.kernels.policies.greedy_discard`), the same functions the batched engine's ``greedy``
opponent plays (:func:`ginenv.kernels.policies.greedy_action`), so the two play move for move alike;
this class only reads the seat's observation and its action mask around them.
"""

from __future__ import annotations

from ginenv.agents.base import Observation
from ginenv.agents.levels.base import HeuristicAgent
from ginenv.agents.levels.heuristics import legal_discards

from ginenv.actions import KNOCK_BASE
from ginenv.kernels.policies import greedy_discard, greedy_takes
from ginenv.observation import SeatView


class GreedyAgent(HeuristicAgent):
    """Meld-taking, deadwood-dumping, knock-at-once baseline (see the module docstring)."""

    name = "greedy"

    def wants_top(self, view: SeatView) -> bool:
        """Take the top card when it melds and lowers the deadwood (``greedy_takes``)."""
        assert view.top is not None
        return bool(greedy_takes(view.hand, view.top))

    def choose_discard(self, observation: Observation, view: SeatView) -> tuple[int, bool]:
        """The least-deadwood discard (``greedy_discard``; after a take, one that keeps the take
        useful); knock when the mask allows it with that card."""
        allowed = self.useful_only(view.hand, legal_discards(observation))
        card = int(greedy_discard(view.hand, allowed))
        return card, bool(observation["action_mask"][KNOCK_BASE + card])


__all__ = ["GreedyAgent"]
