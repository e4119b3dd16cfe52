"""The agent registry: ``agents.make("expert", seed=0)`` and the list of known names.

Every :func:`make` call builds a new agent, so no game's agent remembers an earlier game (the
harness builds fresh agents for every game). ``checkpoint:PATH`` agents share the read-only network
weights of one file content (see :func:`ginenv.agents.neural.shared_policy`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ginenv.agents.base import Agent

from ginenv.rules import Rules


class UnknownAgentError(ValueError):
    """An agent name that is not registered."""


@dataclass(frozen=True)
class AgentSpec:
    """A registered agent: its factory and a one-line description."""

    name: str
    factory: Callable[..., Agent]
    description: str


_REGISTRY: dict[str, AgentSpec] = {}


def register(name: str, factory: Callable[..., Agent], description: str = "") -> None:
    """Register ``factory(seed=..., **kwargs) -> Agent`` under ``name`` (names are unique)."""
    if name in _REGISTRY:
        raise ValueError(f"an agent named {name!r} is already registered")
    _REGISTRY[name] = AgentSpec(name, factory, description)


def available() -> list[str]:
    """Registered agent names, in registration order (weakest first for the ladder)."""
    return list(_REGISTRY)


def describe(name: str) -> str:
    """The one-line description of a registered agent."""
    return _spec(name).description


def _spec(name: str) -> AgentSpec:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownAgentError(
            f"unknown agent {name!r}; known agents: {', '.join(_REGISTRY) or 'none'}, "
            f"or {CHECKPOINT_PREFIX}PATH for a trained network"
        ) from None


CHECKPOINT_PREFIX = "checkpoint:"


def is_known(name: str) -> bool:
    """Whether :func:`make` accepts ``name``: a registered name or ``checkpoint:PATH``."""
    return isinstance(name, str) and (name in _REGISTRY or name.startswith(CHECKPOINT_PREFIX))


def make(name: str, seed: int | None = None, rules: Rules | None = None, **kwargs: Any) -> Agent:
    """A new agent of the registered kind ``name``, or a neural agent from ``checkpoint:PATH``.

    ``rules``: the rules of the table the agent plays at (public; default the standard rules), set
    as :attr:`Agent.rules` whatever the level.

    Unknown names are refused with the list of known ones. A checkpoint agent is new too, but its
    network is loaded once per file content and shared; ``digest=SHA256`` (a keyword for
    checkpoints only) refuses a file whose content is no longer the one a run was keyed by.
    """
    if not isinstance(name, str):
        raise UnknownAgentError(
            f"an agent name must be a string, got {type(name).__name__} {name!r}; "
            f"known agents: {', '.join(_REGISTRY) or 'none'}, or {CHECKPOINT_PREFIX}PATH"
        )
    if rules is not None and not isinstance(rules, Rules):
        raise TypeError(f"rules must be a ginenv.rules.Rules, got {type(rules).__name__}")
    if name.startswith(CHECKPOINT_PREFIX):
        from ginenv.agents.neural import NeuralAgent

        agent: Agent = NeuralAgent.from_checkpoint(name[len(CHECKPOINT_PREFIX) :], seed=seed, **kwargs)
    else:
        agent = _spec(name).factory(seed=seed, **kwargs)
    agent.name = name
    if rules is not None:
        agent.rules = rules
    return agent
