"""The base class of the heuristic levels (greedy, easy, normal, hard, expert, master).

:class:`HeuristicAgent` owns the turn structure every level plays (take or pass, draw, big gin, the
discard and the knock), each level its strategy in two methods. :class:`TakeGuard` keeps every take
from the discard pile *useful* (the vocabulary of :mod:`.heuristics`), so that no level cycles cards
through the pile.
"""

from __future__ import annotations

import abc

from ginenv.agents.base import Agent, Observation
from ginenv.agents.levels.heuristics import useful_discards
from ginenv.agents.levels.heuristics_compiled import useful_discards as compiled_useful_discards

from ginenv import compiling
from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.kernels import min_deadwood
from ginenv.observation import SeatView, decode


class TakeGuard:
    """Mixin of the levels that keeps every take from the discard pile useful (no cycling).

    A level calls :meth:`note_take` when it returns ``draw_discard`` and filters its next plain
    discard through :meth:`useful_only`; the draw rule itself must ask
    :func:`.heuristics.take_is_useful` (or score only :func:`.heuristics.useful_discards`). The
    memory is one card id, cleared by ``reset`` and by the discard; it holds only what the level
    itself did, nothing of the opponent's cards.
    """

    _taken: int | None = None

    def reset(self, seed: int | None = None) -> None:
        """Start of a hand: forget the last take (then the base class's reset)."""
        self._taken = None
        super().reset(seed)  # type: ignore[misc]

    def note_take(self, top: int) -> int:
        """Remember that this level takes ``top`` from the discard pile; returns ``draw_discard``."""
        self._taken = top
        return DRAW_DISCARD

    def useful_only(self, hand: int, allowed: int) -> int:
        """``allowed`` cut down to the discards that keep the last take useful (all of ``allowed`` when
        the last draw was not a take, e.g. from the stock, or when none of them would, which the draw
        rule rules out). Forgets the take: call it once per discard phase."""
        taken, self._taken = self._taken, None
        if taken is None or not hand >> taken & 1 or hand.bit_count() != 11:
            return allowed
        return useful_discards(hand, taken) & allowed or allowed


class HeuristicAgent(TakeGuard, Agent):
    """Base of the rule-based levels: owns the turn structure of :meth:`act`, each level its strategy.

    Every level plays a turn the same way: take the upcard or the top discard when
    :meth:`wants_top` says so (remembered by :class:`TakeGuard`, so the next discard keeps the take
    useful); otherwise pass the upcard or draw from the stock, whichever the mask allows; big gin
    whenever the rules allow it; in the discard phase the card and the knock of
    :meth:`choose_discard`. A level overrides those two (and :meth:`see`, to read every view).
    """

    def see(self, view: SeatView) -> None:
        """Called with the view of every decision before anything else (default: nothing)."""

    @abc.abstractmethod
    def wants_top(self, view: SeatView) -> bool:
        """Whether to take the upcard or the top discard ``view.top`` (a legal take)."""

    @abc.abstractmethod
    def choose_discard(self, observation: Observation, view: SeatView) -> tuple[int, bool]:
        """(card, knock?) for the discard phase: a legal discard, a legal knock when ``True``."""

    def act(self, observation: Observation) -> int:
        """This level's choice for the observation (the dispatch of the class docstring)."""
        mask = observation["action_mask"]
        view = decode(observation["observation"])
        self.see(view)
        if mask[DRAW_DISCARD] and view.top is not None and self.wants_top(view):
            return self.note_take(view.top)
        if mask[PASS]:
            return PASS
        if mask[DRAW_STOCK]:
            return DRAW_STOCK
        if mask[BIG_GIN]:
            return BIG_GIN
        card, knock = self.choose_discard(observation, view)
        action = (KNOCK_BASE if knock else DISCARD_BASE) + card
        if not mask[action]:
            raise RuntimeError(f"{type(self).__name__} chose the illegal action {action}: a bug of the level")
        return action


# The compiled entry points every level calls (ginenv.compiling): the take guard's rule and the
# deadwood of its hand.
compiling.register(TakeGuard, compiled_useful_discards, min_deadwood)

__all__ = ["HeuristicAgent", "TakeGuard"]
