"""Computer players for ginenv: the agent interface, the registry, agent specs and the levels.

``agents.make(spec, seed=None, rules=None, *, time_limit=None, **kwargs)`` builds any agent by the
one building protocol of :mod:`ginenv.agents.specs` (a registered name, ``checkpoint:PATH``,
``package.module:Name``, ``path/to/file.py:Name`` or ``exec:COMMAND``); ``agents.available()``
lists the registered names, installed packages' entry points (group ``ginenv.agents``) included.
Every agent sees only what the env's ``observe()`` returns for its seat.
"""

from typing import Any

from ginenv.agents.base import Agent, Observation
from ginenv.agents.baselines.greedy import GreedyAgent
from ginenv.agents.baselines.random_agent import RandomAgent
from ginenv.agents.levels.easy import EasyAgent
from ginenv.agents.levels.expert import ExpertAgent
from ginenv.agents.levels.hard import HardAgent
from ginenv.agents.levels.master import MasterAgent
from ginenv.agents.levels.normal import NormalAgent
from ginenv.agents.registry import UnknownAgentError, available, describe, register, register_builtin
from ginenv.agents.shipped import SHIPPED_CHECKPOINT
from ginenv.agents.specs import AgentSpecError, make

register_builtin("random", RandomAgent, "uniformly random legal actions")
register_builtin("greedy", GreedyAgent, "takes discards that meld, dumps deadwood, knocks at once")
register_builtin("easy", EasyAgent, "keeps melds and pairs, throws the highest useless card, knocks near gin")
register_builtin("normal", NormalAgent, "least deadwood, avoids feeding the opponent, knocks at once")
register_builtin(
    "hard", HardAgent, "outs, expected deadwood after the next draw, danger, knock or play for gin"
)
register_builtin(
    "expert", ExpertAgent, "Bayesian estimate of the opponent's hand, weighs discards and knocks on it"
)
register_builtin(
    "master", MasterAgent, "knocks or plays on by simulating hundreds of opponent hands drawn from it"
)


def _neural(seed: int | None = None, **kwargs: Any) -> Agent:
    # torch is imported when a neural agent is built, not when the registry is.
    from ginenv.agents.neural import shipped_agent

    return shipped_agent(seed=seed, **kwargs)


register_builtin(
    "neural",
    _neural,
    "shipped network: clones of expert and master improved by PPO against a league, level with master",
    weights=SHIPPED_CHECKPOINT,
)


def _master_net(seed: int | None = None, **kwargs: Any) -> Agent:
    from ginenv.agents.neural.search import NetMasterAgent

    return NetMasterAgent(seed=seed, **kwargs)


register_builtin(
    "master_net",
    _master_net,
    "master's search in worlds drawn from the shipped network's reading of the hand",
    weights=SHIPPED_CHECKPOINT,
)


def _master_prior(seed: int | None = None, **kwargs: Any) -> Agent:
    from ginenv.agents.neural.search import PriorMasterAgent

    return PriorMasterAgent(seed=seed, **kwargs)


register_builtin(
    "master_prior",
    _master_prior,
    "master's search choosing by its values plus the shipped network's log-probabilities",
    weights=SHIPPED_CHECKPOINT,
)

__all__ = [
    "SHIPPED_CHECKPOINT",
    "Agent",
    "AgentSpecError",
    "GreedyAgent",
    "Observation",
    "RandomAgent",
    "UnknownAgentError",
    "available",
    "describe",
    "make",
    "register",
]

# Published baselines (optional extra "baselines": open-spiel, rlcard): registered only where the
# package is installed ("openspiel_simple", "rlcard_novice"); each imports its package when built.
from ginenv.agents.baselines import register_available as _register_baselines  # noqa: E402

_register_baselines()
