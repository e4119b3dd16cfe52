"""The level ``cautious``: it never takes a discard, knocks (or goes big gin) as soon as it may, and
else throws its highest card (by points, then by card id).

An agent sees only its seat's observation: its legal actions are the mask's ones, and the action
ids say what each is (:mod:`ginenv.actions`: draws and pass first, then a discard per card, then a
knock per card).
"""

from __future__ import annotations

import numpy as np
from ginenv.agents import Agent, Observation

from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.cards import CARD_VALUES


class CautiousAgent(Agent):
    """Pass the upcard, draw from the stock, knock at once, throw the highest card."""

    def act(self, observation: Observation) -> int:
        """The action for this observation (a legal one: it picks among the mask's)."""
        legal = np.flatnonzero(observation["action_mask"])
        for move in (PASS, DRAW_STOCK, BIG_GIN):  # the upcard offer, a draw, an 11-card gin
            if move in legal:
                return int(move)
        knocks = legal[legal >= KNOCK_BASE]
        if knocks.size:
            return int(knocks[-1])  # the knock that throws the highest card id
        cards = legal[legal >= DISCARD_BASE] - DISCARD_BASE
        return DISCARD_BASE + max((int(c) for c in cards), key=lambda c: (CARD_VALUES[c], c))
