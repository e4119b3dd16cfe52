"""Computer players for ginenv: the agent interface, the registry and the levels.

``agents.make(name, seed=0)`` builds a registered agent; ``agents.available()`` lists the names.
Every agent sees only what the env's ``observe()`` returns for its seat.
"""

from agents.base import Agent, Observation
from agents.greedy import GreedyAgent
from agents.random_agent import RandomAgent
from agents.registry import UnknownAgentError, available, describe, make, register

register("random", RandomAgent, "uniformly random legal actions")
register("greedy", GreedyAgent, "takes discards that meld, dumps deadwood, knocks at once")

__all__ = [
    "Agent",
    "GreedyAgent",
    "Observation",
    "RandomAgent",
    "UnknownAgentError",
    "available",
    "describe",
    "make",
    "register",
]
