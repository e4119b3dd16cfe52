"""random: a uniformly random legal action at every decision (the floor of the ladder).

The choice is :class:`ginenv.wrappers.RandomPolicy`'s (the one uniform choice over an observation's
action mask), drawn from this agent's own generator: :class:`ginenv.agents.base.Agent` seeds it at
construction and ``reset(seed)`` reseeds it, so the same hand with the same seed is played the same
way.
"""

from __future__ import annotations

from ginenv.agents.base import Agent, Observation

from ginenv.wrappers import RandomPolicy


class RandomAgent(Agent):
    """Picks uniformly among the legal actions of the mask, from its seeded generator."""

    name = "random"

    def act(self, observation: Observation) -> int:
        """A uniformly random legal action (``RandomPolicy`` over :attr:`rng`, the agent's generator)."""
        # Built per decision around the current generator, so a reset's new generator is always used.
        return RandomPolicy(self.rng)(observation)
