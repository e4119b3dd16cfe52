"""``rlcard_novice``: RLCard's gin rummy novice rule agent as a ginenv agent (:class:`RLCardNoviceAgent`).

``rlcard.models.gin_rummy_rule_models.GinRummyNoviceRuleAgent`` reads ``state["obs"][0]`` (its
hand) and ``state["legal_actions"]`` (RLCard action ids). The adapter builds RLCard's whole
5 x 52 observation from the seat's own observation (hand, top discard, the cards under it, the
opponent's known cards, unknown cards; RLCard orders suits S H D C, ours s c d h) and the legal
actions from our mask as RLCard's judge lists them: gin alone when a gin knock is legal, else the
discards and knocks. Its strategy: gin if it can; else knock if it can (uniformly among the knock
cards); else discard uniformly among the cards whose discard leaves the least deadwood (RLCard's
own ``_get_best_discards``); draw decisions are uniformly random. The adapter runs the agent's
``step`` logic with the agent's own helper for the discards, but draws from the seeded generator
of :class:`ginenv.agents.base.Agent` instead of ``numpy``'s global one (so hands replay with the harness'
seeds); a test checks that it picks from the same candidates as RLCard's ``step``.

Rule differences: ginenv's standard rules (``docs/RULES.md``) against RLCard ``gin-rummy`` (default
settings: going_out_deadwood_count 10, stockpile_dead_card_count 2):

* RLCard has no upcard offer: the non-dealer is dealt 11 cards and discards first. The offer is shown
  to the agent as a draw decision (take: pick up the discard; pass: draw a card), which it decides
  at random like every draw.
* RLCard forbids discarding the card just picked up, as ours does, but lets a player knock with it;
  the agent is offered ours (the legal knocks of our mask).
* Gin is RLCard's ``GinAction`` (the game picks the discard): mapped to ``knock <card>`` with the
  lowest-id card that keeps gin; it never uses big gin.
* RLCard's dead hand: a player facing a stock of 2 may still pick up the discard or declare a dead
  hand; here the hand is dead as soon as a discard leaves 2 cards. RLCard also ends a hand after 200
  moves. RLCard's payoffs are not points (1 for gin, 0.2 for a knock, else minus deadwood / 100, no
  undercut); in ginenv the agent is scored by ginenv's rules.
* RLCard's knock test hard-codes 10 in one place (``judge._get_going_out_cards``); the adapter
  takes the knocks from our mask, so other knock limits (Oklahoma) are respected.
"""

from __future__ import annotations

import importlib.util
from collections import OrderedDict
from typing import Any

import numpy as np
from ginenv.agents.base import Agent, Observation
from ginenv.agents.baselines.history import ReconstructionError

from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.cards import CARD_NAMES, NUM_CARDS, cards_of
from ginenv.melds import deadwood_of_mask
from ginenv.observation import decode

__all__ = [
    "RL_DISCARD_BASE",
    "RL_DRAW_CARD",
    "RL_GIN",
    "RL_KNOCK_BASE",
    "RL_PICK_UP_DISCARD",
    "RLCardNoviceAgent",
    "rlcard_card_ids",
    "rlcard_installed",
]


def rlcard_installed() -> bool:
    """Whether ``rlcard`` can be found, without importing it (it imports torch: about 2 s)."""
    return importlib.util.find_spec("rlcard") is not None


# RLCard gin rummy action ids (rlcard/games/gin_rummy/utils/action_event.py).
RL_DRAW_CARD = 2
RL_PICK_UP_DISCARD = 3
RL_GIN = 5
RL_DISCARD_BASE = 6
RL_KNOCK_BASE = RL_DISCARD_BASE + NUM_CARDS


def rlcard_card_ids() -> tuple[int, ...]:
    """RLCard's card id of each of our card ids (RLCard: rank + 13 * suit, suits ``S H D C``)."""
    rl_suits = "SHDC"
    return tuple("A23456789TJQK".index(name[0]) + 13 * rl_suits.index(name[1].upper()) for name in CARD_NAMES)


_RL_ID = rlcard_card_ids()


class RLCardNoviceAgent(Agent):
    """RLCard's ``GinRummyNoviceRuleAgent`` on RLCard's state rebuilt from this seat's observation.

    Memoryless: everything it reads is in the current observation. :attr:`last_state` is the RLCard
    state dict of the latest decision (``obs``: 5 x 52, ``legal_actions``: RLCard ids).
    """

    name = "rlcard_novice"

    def __init__(self, seed: int | None = None) -> None:
        """Import RLCard's agent (the first import of rlcard takes seconds: it loads torch)."""
        super().__init__(seed)
        from rlcard.games.gin_rummy.utils import action_event
        from rlcard.models.gin_rummy_rule_models import GinRummyNoviceRuleAgent

        self._rl_agent = GinRummyNoviceRuleAgent
        self._events = action_event
        self.last_state: dict[str, Any] | None = None

    @staticmethod
    def rlcard_plane(mask: int) -> np.ndarray:
        """A card bitmask as RLCard's 52-entry plane (RLCard card order)."""
        plane = np.zeros(NUM_CARDS, dtype=int)
        for c in cards_of(mask):
            plane[_RL_ID[c]] = 1
        return plane

    def rlcard_state(self, observation: Observation) -> tuple[dict[str, Any], dict[int, int]]:
        """RLCard's state dict for this observation and the map from its action ids to ours."""
        view = decode(observation["observation"])
        mask = observation["action_mask"]
        top = 1 << view.top if view.top is not None else 0
        obs = np.array(
            [
                self.rlcard_plane(view.hand),
                self.rlcard_plane(top),
                self.rlcard_plane(view.pile),
                self.rlcard_plane(view.opponent_taken),
                self.rlcard_plane(view.unseen),
            ]
        )
        ours: dict[int, int] = {}
        if mask[PASS]:
            # The upcard offer, shown as RLCard's draw decision.
            ours[RL_DRAW_CARD] = PASS
            ours[RL_PICK_UP_DISCARD] = DRAW_DISCARD
        elif mask[DRAW_STOCK] or mask[DRAW_DISCARD]:
            if mask[DRAW_STOCK]:
                ours[RL_DRAW_CARD] = DRAW_STOCK
            if mask[DRAW_DISCARD]:
                ours[RL_PICK_UP_DISCARD] = DRAW_DISCARD
        else:
            hand = view.hand
            knocks = [c for c in cards_of(hand) if mask[KNOCK_BASE + c]]
            gins = [c for c in knocks if deadwood_of_mask(hand & ~(1 << c)) == 0]
            if gins:
                # RLCard's judge offers gin alone; the game then picks the discard.
                ours[RL_GIN] = KNOCK_BASE + min(gins)
            else:
                for c in cards_of(hand):
                    if mask[DISCARD_BASE + c]:
                        ours[RL_DISCARD_BASE + _RL_ID[c]] = DISCARD_BASE + c
                for c in knocks:
                    ours[RL_KNOCK_BASE + _RL_ID[c]] = KNOCK_BASE + c
            if not ours and mask[BIG_GIN]:
                ours[RL_GIN] = BIG_GIN
        if not ours:
            raise ReconstructionError("no legal action to offer RLCard's agent")
        legal = sorted(ours)
        state = {
            "obs": obs,
            "legal_actions": OrderedDict((a, None) for a in legal),
            "raw_obs": obs,
            "raw_legal_actions": legal,
        }
        return state, ours

    def candidates(self, state: dict[str, Any]) -> list[int]:
        """The RLCard action ids the novice agent's ``step`` chooses among (uniformly) in ``state``.

        The same cases as ``GinRummyNoviceRuleAgent.step``: gin, else knocks, else the best discards
        (its own ``_get_best_discards``), else every legal action.
        """
        ev = self._events
        legal = list(state["legal_actions"])
        decoded = [ev.ActionEvent.decode_action(a) for a in legal]
        gins = [e.action_id for e in decoded if isinstance(e, ev.GinAction)]
        if gins:
            return gins
        knocks = [e.action_id for e in decoded if isinstance(e, ev.KnockAction)]
        if knocks:
            return knocks
        discards = [e for e in decoded if isinstance(e, ev.DiscardAction)]
        if discards:
            best = self._rl_agent._get_best_discards(discard_action_events=discards, state=state)
            if best:
                return [ev.DiscardAction(card=card).action_id for card in best]
        return legal

    def act(self, observation: Observation) -> int:
        """The novice agent's action for this observation, drawn from this agent's generator."""
        state, ours = self.rlcard_state(observation)
        self.last_state = state
        options = self.candidates(state)
        pick = options[int(self.rng.integers(len(options)))] if len(options) > 1 else options[0]
        return ours[int(pick)]
