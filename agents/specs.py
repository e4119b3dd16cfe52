"""Agent specs: the one way to name an agent and the one way to build it, in every process.

A spec is a string, accepted wherever an agent is named (``ginenv match``, ``ladder``, ``rate``,
``demo``, ``play``, YAML configs, :func:`ginenv.experiments.eval.harness.evaluate`, notebooks):

=========================  ===================================================================
``name``                   a registered agent: the built-in levels, :func:`agents.register` in
                           this process, or an installed package's entry point in the group
                           ``ginenv.agents`` (listed by :func:`agents.available` in every process)
``checkpoint:PATH``        a trained network from a pickle-free checkpoint file
``package.module:Name``    an :class:`~ginenv.agents.base.Agent` subclass or a factory in an
                           importable module (the current folder is searched first, as
                           ``python -m`` does)
``path/to/file.py:Name``   the same from a Python file anywhere on disk
``exec:COMMAND``           a process in any language speaking the JSON line protocol of
                           ``docs/PROTOCOL.md`` (:mod:`ginenv.agents.external`)
=========================  ===================================================================

**The building protocol** (:func:`make`): whoever builds an agent (the harness and its worker
processes, ``demo``, ``play``, the Gymnasium wrapper, notebooks) calls ``make(spec, seed=...,
rules=...)``. The factory (the class, or a function returning an agent) is called with ``seed=`` and,
when its signature names a ``rules`` parameter, ``rules=``; the agent's :attr:`~Agent.rules` is then
set to the table's rules whatever the factory did, and :attr:`~Agent.name` to the spec. ``reset(seed)``
follows at the start of every hand. So an agent written as ``class Mine(Agent)`` with no constructor
of its own is told the rules and its seed exactly as the built-in levels are.

**Every process rebuilds agents from their specs.** :func:`resolve` turns a spec into a
:class:`Spec` that holds everything another process needs: absolute file paths, the folder a module
was found from, and, for a name registered in this process only, where its factory is defined
(``module:Name`` or ``file.py:Name``). Worker processes (local or Ray) receive the :class:`Spec`, not
the agent. A factory defined where no other process can import it (a notebook cell, a lambda) is
refused for more than one worker with a message that says how to make it importable.

Importing a module or a file *runs its code*: a spec or a config that names one is trusted code, as
a pytest ``conftest.py`` is.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from ginenv.agents import registry
from ginenv.agents.base import Agent
from ginenv.agents.sandbox import Sandbox

from ginenv.rules import Rules

CHECKPOINT_PREFIX = "checkpoint:"
EXEC_PREFIX = "exec:"

SpecKind = Literal["registered", "checkpoint", "module", "file", "exec"]

#: What a spec may be, for error messages.
SPEC_FORMS = (
    f"a registered name, {CHECKPOINT_PREFIX}PATH, package.module:Name, path/to/file.py:Name "
    f"or {EXEC_PREFIX}COMMAND"
)


class AgentSpecError(registry.UnknownAgentError):
    """A spec that cannot be built: a missing file, module or name, not an agent, a constructor
    that raises. The message names the spec and the cause, on one line."""


@dataclass(frozen=True)
class Spec:
    """A resolved spec: what any process needs to build the agent.

    ``text`` is the spec as the user wrote it (the agent's name in every report); ``kind`` says how
    to build it; ``target`` is the registered name, the checkpoint path, the module or file path
    (absolute), or the command; ``attr`` the ``Name`` after the colon; ``search_path`` the folder
    put first on ``sys.path`` to import a module; ``origin`` (registered names only) where the
    factory is defined, as a module or file spec, for processes where the name is not registered.
    """

    text: str
    kind: SpecKind
    target: str
    attr: str | None = None
    search_path: str | None = None
    origin: str | None = None

    @property
    def portable(self) -> bool:
        """Whether another process can rebuild this agent (False: a name registered here only,
        whose factory cannot be imported elsewhere)."""
        if self.kind != "registered":
            return True
        return self.origin is not None or registry.is_builtin(self.target)


def is_known(spec: object) -> bool:
    """Whether ``spec`` has the form of a spec :func:`make` accepts (a registered name, or one of the
    prefixed forms); nothing is imported, so building it may still fail (see :func:`check`)."""
    if registry.is_registered(spec):
        return True
    try:
        resolve(spec)  # type: ignore[arg-type]
    except AgentSpecError:
        return False
    return True


def _looks_like_file(left: str) -> bool:
    return left.endswith(".py") or "/" in left or os.sep in left


def _is_dotted(left: str) -> bool:
    return bool(left) and all(part.isidentifier() for part in left.split("."))


def resolve(spec: str | Spec) -> Spec:
    """Parse ``spec`` into a :class:`Spec` (paths made absolute); nothing is imported or run.

    Raises :class:`AgentSpecError` for a string that is none of the forms, naming the forms.
    """
    if isinstance(spec, Spec):
        return spec
    if not isinstance(spec, str):
        raise AgentSpecError(
            f"an agent name must be a string, got {type(spec).__name__} {spec!r}; give {SPEC_FORMS}"
        )
    text = spec
    if not text.strip():
        raise AgentSpecError(f"an agent spec must not be empty; give {SPEC_FORMS}")
    if registry.is_registered(text):
        return Spec(text, "registered", text, origin=registry.origin(text))
    if text.startswith(CHECKPOINT_PREFIX):
        path = text[len(CHECKPOINT_PREFIX) :]
        if not path:
            raise AgentSpecError(
                f"agent spec {text!r}: give the checkpoint file, e.g. {CHECKPOINT_PREFIX}runs/x/latest.pt"
            )
        return Spec(text, "checkpoint", path)
    if text.startswith(EXEC_PREFIX):
        command = text[len(EXEC_PREFIX) :].strip()
        if not command:
            raise AgentSpecError(
                f"agent spec {text!r}: give the command, e.g. {EXEC_PREFIX}python my_client.py"
            )
        return Spec(text, "exec", command)
    left, colon, attr = text.rpartition(":")
    if colon and attr.isidentifier() and left:
        if _looks_like_file(left):
            return Spec(text, "file", str(Path(left).expanduser().resolve()), attr)
        if _is_dotted(left):
            return Spec(text, "module", left, attr, search_path=os.getcwd())
    known = ", ".join(registry.available()) or "none"
    raise AgentSpecError(f"unknown agent {text!r}; known agents: {known}; or {SPEC_FORMS.split(', ', 1)[1]}")


def _module_from_file(path: str) -> ModuleType:
    """The module of a Python file, loaded once per process under a name unique to its path.

    A file already loaded as a module (a spawned worker's ``__mp_main__``, the script itself) is
    reused rather than run a second time.
    """
    name = registry.USER_MODULE_PREFIX + hashlib.sha256(path.encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    for module in list(sys.modules.values()):
        found = getattr(module, "__file__", None)
        if found and os.path.abspath(found) == path:
            # Kept under this name too: every later game's agents find it without the scan.
            sys.modules[name] = module
            return module
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file {path}")
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise ImportError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(loader_spec)
    # Registered before running, so classes defined there pickle and import by this name.
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _import(spec: Spec) -> ModuleType:
    if spec.kind == "file":
        return _module_from_file(spec.target)
    if spec.search_path and spec.search_path not in sys.path:
        sys.path.insert(0, spec.search_path)
    return importlib.import_module(spec.target)


def factory_of(spec: str | Spec) -> Callable[..., Any]:
    """The factory a module, file or registered spec names (imported now); AgentSpecError if the
    module, file or name is missing, or the object is neither an Agent subclass nor callable."""
    s = resolve(spec)
    try:
        if s.kind == "registered":
            if registry.is_registered(s.target):
                return registry.factory(s.target)
            if s.origin is None:
                raise _not_portable(s)
            return factory_of(s.origin)
        if s.kind not in ("module", "file"):
            raise AgentSpecError(f"agent spec {s.text!r} has no factory to import")
        module = _import(s)
    except AgentSpecError:
        raise
    except Exception as err:
        raise AgentSpecError(
            f"agent spec {s.text!r}: cannot import it: {type(err).__name__}: {err}"
        ) from None
    assert s.attr is not None
    obj = module
    for part in s.attr.split("."):
        if not hasattr(obj, part):
            where = s.target if s.kind == "module" else os.path.relpath(s.target)
            raise AgentSpecError(f"agent spec {s.text!r}: {where} has no {s.attr!r}")
        obj = getattr(obj, part)
    if inspect.isclass(obj) and not issubclass(obj, Agent):
        if not callable(getattr(obj, "act", None)):
            raise AgentSpecError(
                f"agent spec {s.text!r}: {s.attr} is a class but not an agent (subclass ginenv.agents.Agent, "
                "or give a function that returns one)"
            )
    elif not callable(obj):
        raise AgentSpecError(
            f"agent spec {s.text!r}: {s.attr} is a {type(obj).__name__}, not an Agent subclass or a factory"
        )
    return obj  # type: ignore[no-any-return]


def _not_portable(s: Spec) -> AgentSpecError:
    return AgentSpecError(
        f"agent {s.text!r} is registered in the main process only (its factory is defined in a notebook, "
        "interactively or as a lambda), so worker processes cannot rebuild it: define it in a .py file "
        "and name it path/to/file.py:Name, or use one worker"
    )


def _accepts(factory: Callable[..., Any], name: str) -> bool:
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
    return name in params or (
        name == "seed" and any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    )


def make(
    spec: str | Spec,
    seed: int | None = None,
    rules: Rules | None = None,
    *,
    time_limit: float | None = None,
    sandbox: Sandbox | None = None,
    **kwargs: Any,
) -> Agent:
    """A new agent built from ``spec`` by the one building protocol (see the module docstring).

    ``seed`` seeds it until the first ``reset``; ``rules`` are the table's (default: the standard
    rules), set as :attr:`Agent.rules` whatever the factory does; ``time_limit`` is the per-decision
    limit in seconds of an ``exec:`` agent and ``sandbox`` where its process runs
    (:mod:`ginenv.agents.sandbox`; default the basic one), both ignored otherwise; ``kwargs`` go to
    the factory
    (``digest=SHA256`` for a checkpoint: refuse a file whose content changed).

    Raises :class:`~ginenv.agents.registry.UnknownAgentError` for an unknown name,
    :class:`AgentSpecError` for a module or file spec that cannot be imported or is not an agent,
    and lets a constructor's own exception through (the caller says whose it was).
    """
    if rules is not None and not isinstance(rules, Rules):
        raise TypeError(f"rules must be a ginenv.rules.Rules, got {type(rules).__name__}")
    s = resolve(spec)
    table = rules if rules is not None else Rules()
    agent: Any
    if s.kind == "checkpoint":
        from ginenv.agents.neural import NeuralAgent

        agent = NeuralAgent.from_checkpoint(s.target, seed=seed, **kwargs)
    elif s.kind == "exec":
        from ginenv.agents.external import DEFAULT_TIME_LIMIT, ExternalAgent

        limit = DEFAULT_TIME_LIMIT if time_limit is None else time_limit
        agent = ExternalAgent(s.target, seed=seed, rules=table, time_limit=limit, sandbox=sandbox, **kwargs)
    else:
        factory = factory_of(s)
        call: dict[str, Any] = dict(kwargs)
        if _accepts(factory, "seed"):
            call["seed"] = seed
        if _accepts(factory, "rules"):
            call["rules"] = table
        agent = factory(**call)
        if not (callable(getattr(agent, "act", None)) and callable(getattr(agent, "reset", None))):
            raise AgentSpecError(
                f"agent spec {s.text!r}: the factory returned {type(agent).__name__}, not an agent "
                "(an object with act(observation) and reset(seed), e.g. a ginenv.agents.Agent)"
            )
    agent.name = s.text
    agent.rules = table
    return agent  # type: ignore[no-any-return]


def check(spec: str | Spec, rules: Rules | None = None, workers: int = 1) -> Spec:
    """Resolve ``spec`` and build it once, so a bad spec fails before any game is played.

    Returns the resolved :class:`Spec` to hand to worker processes. Raises :class:`AgentSpecError`
    with one line naming the spec and the cause: a missing file, module, name or command, not an
    agent, a constructor that raises, an unreadable checkpoint, or (``workers > 1``) a factory that
    other processes cannot import.
    """
    s = resolve(spec)
    if workers > 1 and not s.portable:
        raise _not_portable(s)
    if s.kind == "exec":
        from ginenv.agents.external import check_command

        try:
            check_command(s.target)
        except ValueError as err:
            raise AgentSpecError(f"agent spec {s.text!r}: {err}") from None
        return s
    if s.kind == "checkpoint":
        from ginenv.agents.neural import CheckpointError

        try:
            make(s, seed=0, rules=rules)
        except CheckpointError as err:
            raise AgentSpecError(f"agent spec {s.text!r}: {err}") from None
        return s
    try:
        agent = make(s, seed=0, rules=rules)
    except registry.UnknownAgentError:  # AgentSpecError included: already one line
        raise
    except Exception as err:
        raise AgentSpecError(
            f"agent spec {s.text!r}: building it raised {type(err).__name__}: {err}"
        ) from None
    close = getattr(agent, "close", None)
    if callable(close):
        close()
    return s
