"""The agent registry: ``agents.make("expert", seed=0)`` and the list of known names."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agents.base import Agent


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
            f"unknown agent {name!r}; known agents: {', '.join(_REGISTRY) or 'none'}"
        ) from None


def make(name: str, seed: int | None = None, **kwargs: Any) -> Agent:
    """A new agent of the registered kind ``name``; unknown names list the known ones."""
    agent = _spec(name).factory(seed=seed, **kwargs)
    agent.name = name
    return agent
