"""random: a uniformly random legal action at every decision (the floor of the ladder)."""

from __future__ import annotations

from ginenv.agents.base import Agent, Observation


class RandomAgent(Agent):
    """Picks uniformly among the legal actions of the mask, from its seeded generator."""

    name = "random"

    def act(self, observation: Observation) -> int:
        """A uniformly random legal action."""
        legal = self.legal_actions(observation)
        return int(legal[self.rng.integers(len(legal))])
