"""The agent interface: what every computer player, neural agent and baseline adapter implements.

An agent acts on exactly what the env's ``observe()`` returns for its seat: a dict holding
``"observation"`` and ``"action_mask"`` (1-D int8 over the action ids of :mod:`ginenv.actions`).
It never receives the env or the engine state, only the rules of the table (:attr:`Agent.rules`:
public, like the bonuses a player is told before the game; ``agents.make(name, rules=...)`` sets
them). ``reset(seed)`` is called at the start of every hand;
an agent whose play is random must draw only from the generator seeded there, so that the same
hand with the same seed is played the same way (the harness relies on it for duplicate deals).
"""

from __future__ import annotations

import abc
from collections.abc import Mapping

import numpy as np

from ginenv.rules import Rules

Observation = Mapping[str, np.ndarray]


class AgentForfeit(Exception):
    """An agent in another process could not play on: it hung past its time limit, died, or answered
    something that is not a legal action. The arena (:mod:`ginenv.agents.arena`) scores the game as
    lost by that agent under the forfeit rule and the run goes on; ``reason`` says what happened.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Agent(abc.ABC):
    """Base class of every player: ``reset`` per hand, ``act`` per decision."""

    #: Registry name of the agent (set by :func:`ginenv.agents.registry.register`).
    name: str = "agent"
    #: The rules of the table (scoring, knock limit, options), which are public; levels that weigh
    #: knocks or simulate hands score them under these. Set by ``agents.make(name, rules=...)``.
    rules: Rules = Rules()

    def __init__(self, seed: int | None = None, rules: Rules | None = None) -> None:
        """Create the agent; ``seed`` seeds its random generator until the first ``reset``; ``rules``
        are the table's (default: the standard rules)."""
        self.rng = np.random.default_rng(seed)
        if rules is not None:
            self.rules = rules

    def reset(self, seed: int | None = None) -> None:
        """Start of a hand: forget per-hand memory and reseed (``None`` keeps the generator)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    @abc.abstractmethod
    def act(self, observation: Observation) -> int:
        """Choose a legal action id for this observation (its ``action_mask`` lists the legal ones)."""

    def legal_actions(self, observation: Observation) -> np.ndarray:
        """Legal action ids of an observation, ascending."""
        return np.flatnonzero(observation["action_mask"])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
