"""The agent registry: names of agents, their factories and one-line descriptions.

Names come from three places, in this order: the built-in levels and baselines (registered by
:mod:`ginenv.agents`), :func:`register` calls in this process, and installed packages' entry points
in the group ``ginenv.agents`` (``[project.entry-points."ginenv.agents"] mine = "pkg.mod:Mine"``),
which every process sees, worker processes included. Entry points are read once, lazily, and their
objects imported only when that agent is built or described.

Building an agent from a name (or any other spec) is :func:`ginenv.agents.specs.make`, the one
building protocol; this module only keeps the table.
"""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ginenv.agents.base import Agent

#: The entry-point group through which installed packages contribute agents.
ENTRY_POINT_GROUP = "ginenv.agents"

#: Module names under which :mod:`ginenv.agents.specs` loads ``file.py:Name`` files: such a module is
#: found again by its file, not by its name.
USER_MODULE_PREFIX = "ginenv_user_"


class UnknownAgentError(ValueError):
    """An agent name that is not registered."""


@dataclass
class AgentSpec:
    """A registered agent: its factory (loaded lazily for entry points) and a one-line description."""

    name: str
    factory: Callable[..., Agent] | None
    description: str
    #: Where the factory is defined, as a ``module:Name`` or ``file.py:Name`` spec another process
    #: can import (None: it cannot, e.g. a lambda or a class defined in a notebook).
    origin: str | None = None
    #: ``builtin``, ``registered`` (this process) or ``entry point``.
    source: str = "registered"
    entry_point: Any = field(default=None, repr=False)
    #: A file whose content is part of what the agent is (a shipped network's weights), or None. The
    #: harness keys its run folders by this file's hash, so a new network never resumes an old run.
    weights: Path | None = None


_REGISTRY: dict[str, AgentSpec] = {}
_entry_points_read = False


def _origin_of(factory: Callable[..., Any]) -> str | None:
    """A spec of where ``factory`` is defined, importable from another process, or None."""
    module_name = getattr(factory, "__module__", None)
    qualname = getattr(factory, "__qualname__", None)
    if not module_name or not qualname or "<" in qualname:
        return None
    module = sys.modules.get(module_name)
    if module_name in ("__main__", "__mp_main__") or module_name.startswith(USER_MODULE_PREFIX):
        path = getattr(module, "__file__", None)
        return f"{path}:{qualname}" if path else None
    return f"{module_name}:{qualname}"


def register(
    name: str,
    factory: Callable[..., Agent],
    description: str = "",
    *,
    weights: Path | None = None,
    _source: str = "registered",
) -> None:
    """Register ``factory`` under ``name`` (names are unique).

    ``factory`` is an :class:`~ginenv.agents.base.Agent` subclass or a function returning an agent;
    it is called by :func:`ginenv.agents.specs.make` with ``seed=`` and, when it names a ``rules``
    parameter, ``rules=``. Worker processes rebuild it from where it is defined (its module, or the
    script's file), so define it at the top level of a module or file to use several workers.
    """
    if not isinstance(name, str) or not name or ":" in name:
        raise ValueError(f"an agent name is a non-empty string without ':', got {name!r}")
    if name in _REGISTRY:
        raise ValueError(f"an agent named {name!r} is already registered")
    if not callable(factory):
        raise TypeError(f"the factory of agent {name!r} must be an Agent subclass or a callable")
    _REGISTRY[name] = AgentSpec(name, factory, description, _origin_of(factory), _source, weights=weights)


def unregister(name: str) -> None:
    """Remove a name registered in this process (built-ins and entry points stay)."""
    entry = _entry(name)
    if entry.source != "registered":
        raise ValueError(f"agent {name!r} is a {entry.source} agent; only this process's own can be removed")
    del _REGISTRY[name]


def register_builtin(
    name: str, factory: Callable[..., Agent], description: str = "", weights: Path | None = None
) -> None:
    """:func:`register` for the package's own agents (every process registers them on import)."""
    register(name, factory, description, weights=weights, _source="builtin")


def weights_of(name: str) -> Path | None:
    """The weights file registered with agent ``name`` (None: none, or not a registered name)."""
    entry = _REGISTRY.get(name)
    return entry.weights if entry is not None else None


def _read_entry_points() -> None:
    global _entry_points_read
    if _entry_points_read:
        return
    _entry_points_read = True
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _REGISTRY or ":" in ep.name:
            continue  # a built-in or earlier name wins; a name with ':' would read as a spec
        _REGISTRY[ep.name] = AgentSpec(
            ep.name, None, "", origin=ep.value, source="entry point", entry_point=ep
        )


def _entry(name: str) -> AgentSpec:
    _read_entry_points()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownAgentError(
            f"unknown agent {name!r}; known agents: {', '.join(_REGISTRY) or 'none'}; or checkpoint:PATH, "
            "package.module:Name, path/to/file.py:Name or exec:COMMAND"
        ) from None


def available() -> list[str]:
    """Registered agent names: built-ins in registration order (weakest first for the ladder),
    then this process's registrations and installed entry points."""
    _read_entry_points()
    rank = {"builtin": 0, "registered": 1, "entry point": 2}
    return sorted(_REGISTRY, key=lambda n: rank[_REGISTRY[n].source])


def is_registered(name: object) -> bool:
    """Whether ``name`` is a registered agent name."""
    _read_entry_points()
    return isinstance(name, str) and name in _REGISTRY


def is_builtin(name: str) -> bool:
    """Whether ``name`` is registered by the package itself or by an installed entry point (so
    every process knows it)."""
    return is_registered(name) and _REGISTRY[name].source in ("builtin", "entry point")


def origin(name: str) -> str | None:
    """Where the factory of ``name`` is defined, as a spec another process can import, or None."""
    return _entry(name).origin


def factory(name: str) -> Callable[..., Agent]:
    """The factory of a registered name (an entry point's object is imported now)."""
    entry = _entry(name)
    if entry.factory is None:
        try:
            entry.factory = entry.entry_point.load()
        except Exception as err:
            raise UnknownAgentError(
                f"agent {name!r} (entry point {entry.origin} of group {ENTRY_POINT_GROUP}) cannot be "
                f"loaded: {type(err).__name__}: {err}"
            ) from None
    assert entry.factory is not None
    return entry.factory


def describe(name: str) -> str:
    """The one-line description of a registered agent (an entry point's: its docstring's first line)."""
    entry = _entry(name)
    if not entry.description and entry.source == "entry point":
        doc = (getattr(factory(name), "__doc__", None) or "").strip()
        entry.description = doc.splitlines()[0] if doc else f"from entry point {entry.origin}"
    return entry.description
