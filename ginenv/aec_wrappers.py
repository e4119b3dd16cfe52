"""The wrapper chain of ``gin_rummy_v0.env()``: PettingZoo's three standard wrappers, made fast.

``env()`` wraps :class:`ginenv.aec.raw_env` as PettingZoo's classic envs wrap theirs, and behaves as
PettingZoo's ``TerminateIllegalWrapper``, ``AssertOutOfBoundsWrapper`` and
``OrderEnforcingWrapper`` do (:func:`wrap`):

- :class:`TerminateIllegal`: an illegal action (one the last observed ``action_mask`` of the agent to
  move refuses) ends the episode for both agents, terminated and truncated, with ``illegal_reward``
  for the offender and 0 for the other, and logs PettingZoo's "Illegal move" warning;
- :class:`AssertOutOfBounds`: an action outside the action space (or ``None`` for an agent still
  playing) fails an assertion;
- :class:`OrderEnforcing`: reading the state, ``step``, ``observe``, ``state``, ``render`` and
  ``agent_iter`` before the first ``reset()`` raise as PettingZoo's do, ``agent_iter`` asserts a
  ``step`` per agent, and ``step`` or ``last`` after the episode raise
  :class:`ginenv.aec.EpisodeOverError`.

They are written here on PettingZoo's public ``BaseWrapper`` (its ``env``, ``unwrapped`` and
attribute forwarding) and ``AECEnv`` helpers rather than subclassing the three, for two reasons.
Speed: a PettingZoo wrapper finds ``agents``, ``agent_selection``, ``terminations``, ... through
``BaseWrapper.__getattr__``, one Python call per wrapper level, about 30 µs per decision (more than the
whole game); here each of those names is a property whose getter is a C-level
``attrgetter("_raw.<name>")`` reading the unwrapped env directly, and every method calls the next
level once. Stability: nothing here reads a PettingZoo wrapper's private state (``_has_reset``,
``_prev_obs``), and every ``BaseWrapper`` method that PettingZoo 1.24 and 1.27 write differently
(1.24's ``reset`` and ``step`` copy the state onto the wrapper) is overridden, so the chain behaves
alike under every PettingZoo the package allows (``tests/ginenv/test_env.py`` plays it against
PettingZoo's own wrappers).
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import attrgetter
from typing import Any, TypeAlias

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import BaseWrapper

from ginenv.actions import NUM_ACTIONS
from ginenv.aec import EpisodeOverError, raw_env
from ginenv.validation import finite_number

__all__ = ["AssertOutOfBounds", "OrderEnforcing", "TerminateIllegal", "wrap"]

# The unwrapped env's state, read through properties (see the module docstring).
_STATE = (
    "agents",
    "agent_selection",
    "rewards",
    "terminations",
    "truncations",
    "infos",
    "_cumulative_rewards",
)
# What OrderEnforcingWrapper refuses to read before reset.
_BEFORE_RESET = frozenset({*_STATE, "num_agents"})

GinEnv: TypeAlias = AECEnv[str, dict[str, np.ndarray], int]


def _last_of(raw: Any, agent: str, observation: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
    """``AECEnv.last``'s tuple for ``agent`` of the unwrapped env ``raw``, around ``observation``:
    its dicts read once, by the wrappers that answer ``last`` themselves."""
    return (
        observation,
        raw._cumulative_rewards[agent],
        raw.terminations[agent],
        raw.truncations[agent],
        raw.infos[agent],
    )


class _Forwarding(BaseWrapper[str, dict[str, np.ndarray], int]):  # type: ignore[misc]
    """A wrapper level that reads the unwrapped env's state directly and calls the next level once."""

    def __init__(self, env: GinEnv) -> None:
        # Set before BaseWrapper's __init__ (PettingZoo 1.24's copies attributes and reads state).
        self._raw: Any = env.unwrapped
        super().__init__(env)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Reset the wrapped env."""
        self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> None:
        """Step the wrapped env."""
        self.env.step(action)

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        """The wrapped env's observation of ``agent``."""
        return self.env.observe(agent)

    def state(self) -> np.ndarray:
        """The wrapped env's full state."""
        return self.env.state()

    def render(self) -> Any:
        """Render the wrapped env."""
        return self.env.render()

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last`` reading the unwrapped env's dicts once."""
        raw = self._raw
        agent = raw.agent_selection
        return _last_of(raw, agent, self.observe(agent) if observe else None)

    def __str__(self) -> str:
        """The env's name, as PettingZoo's standard wrappers show it: ``gin_rummy_v0``."""
        return str(self.env)


for _name in _STATE:
    setattr(
        _Forwarding, _name, property(attrgetter(f"_raw.{_name}"), doc=f"The unwrapped env's ``{_name}``.")
    )


class TerminateIllegal(_Forwarding):
    """An illegal action ends the episode with ``illegal_reward`` for the offender (PettingZoo's
    ``TerminateIllegalWrapper``)."""

    def __init__(self, env: GinEnv, illegal_reward: float) -> None:
        """``illegal_reward``: a finite number (checked here, not at the first illegal action)."""
        super().__init__(env)
        self.illegal_reward = finite_number("illegal_reward", illegal_reward)
        self._mask: np.ndarray | None = None  # the action mask last observed for the agent to move
        self._terminated = False  # the episode was ended by an illegal action

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Reset the wrapped env and forget the last mask."""
        self._terminated = False
        self._mask = None
        self.env.reset(seed=seed, options=options)

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        """The wrapped env's observation; the mask of the agent to move is kept for ``step``."""
        observation = self.env.observe(agent)
        if agent == self._raw.agent_selection and observation is not None:
            self._mask = observation["action_mask"]
        return observation

    def step(self, action: Any) -> None:
        """Step the wrapped env, or end the episode if the action is illegal."""
        raw = self._raw
        agent = raw.agent_selection
        mask, self._mask = self._mask, None
        if raw.terminations[agent] or raw.truncations[agent]:
            if self._terminated:
                raw._was_dead_step(action)
            else:
                self.env.step(action)
            return
        if mask is None:
            observation = self.env.observe(agent)
            assert observation is not None
            mask = observation["action_mask"]
        if mask[action]:
            self.env.step(action)
            return
        EnvLogger.warn_on_illegal_move()
        raw._cumulative_rewards[agent] = 0
        raw.terminations = dict.fromkeys(raw.agents, True)
        raw.truncations = dict.fromkeys(raw.agents, True)
        raw.rewards = dict.fromkeys(raw.truncations, 0)
        raw.rewards[agent] = self.illegal_reward
        raw._accumulate_rewards()
        raw._deads_step_first()
        self._terminated = True


class AssertOutOfBounds(_Forwarding):
    """An action outside the action space fails an assertion (PettingZoo's
    ``AssertOutOfBoundsWrapper``); ``None`` is for agents whose episode has ended."""

    def step(self, action: Any) -> None:
        """Assert that ``action`` is in the action space (or ``None`` for a finished agent), then step."""
        if type(action) is int:
            # Same answer as Discrete(108).contains for a plain int, without its numpy round trip.
            assert 0 <= action < NUM_ACTIONS, "action is not in action space"
        else:
            raw = self._raw
            agent = raw.agent_selection
            assert (action is None and (raw.terminations[agent] or raw.truncations[agent])) or (
                self.action_space(agent).contains(action)
            ), "action is not in action space"
        self.env.step(action)


class OrderEnforcing(_Forwarding):
    """Calls in a disallowed order raise (PettingZoo's ``OrderEnforcingWrapper``): nothing but
    ``reset`` before the first reset, and no ``step`` or ``last`` once the episode has ended."""

    def __init__(self, env: GinEnv) -> None:
        """Wrap ``env``; its state cannot be read until the first ``reset()``."""
        super().__init__(env)
        self._after_reset = self._raw
        self._raw = None  # the properties read nothing until reset()
        self._updated = False  # a step or reset since agent_iter's last agent
        # Over wrap()'s chain, step and last make the two inner levels' checks themselves for the
        # usual case (the mover's mask observed, an int action it allows) and call the unwrapped env
        # directly: the levels' calls cost more than the checks. Anything else goes down the chain.
        raw, inner = self._after_reset, env.env if type(env) is AssertOutOfBounds else None
        fused = type(inner) is TerminateIllegal and inner.env is raw and _plain(raw)
        self._illegal: TerminateIllegal | None = inner if fused else None

    def __getattr__(self, name: str) -> Any:
        """Refuse the state before the first reset, as PettingZoo does; forward anything else."""
        if name in _BEFORE_RESET and self._raw is None:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return super().__getattr__(name)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Reset the env; from now on its state can be read."""
        self.env.reset(seed=seed, options=options)
        self._raw = self._after_reset
        self._updated = True

    def step(self, action: Any) -> None:
        """Step the wrapped env; after the episode has ended, raise :class:`EpisodeOverError`."""
        raw = self._raw
        if raw is None:
            EnvLogger.error_step_before_reset()
        if not raw.agents:
            raise EpisodeOverError.after("step")
        self._updated = True
        illegal = self._illegal
        if illegal is not None and type(action) is int and 0 <= action < NUM_ACTIONS:
            # AssertOutOfBounds passes it; TerminateIllegal passes it on when the mask allows it.
            mask = illegal._mask
            agent = raw.agent_selection
            if mask is not None and mask[action] and not (raw.terminations[agent] or raw.truncations[agent]):
                illegal._mask = None
                raw._play(agent, action)  # raw_env.step past the checks just made
                return
        self.env.step(action)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last``; after the episode has ended, raise :class:`EpisodeOverError`."""
        raw = self._raw
        if raw is None:
            raise AttributeError("agent_selection cannot be accessed before reset")
        if not raw.agents:
            raise EpisodeOverError.after("last")
        return super().last(observe)

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        """The observation of ``agent`` (an error before reset)."""
        raw = self._raw
        if raw is None:
            EnvLogger.error_observe_before_reset()
        illegal = self._illegal
        if illegal is None:
            return self.env.observe(agent)
        # TerminateIllegal.observe, over the unwrapped env (see __init__).
        observation = raw.observe(agent)
        if agent == raw.agent_selection:
            illegal._mask = observation["action_mask"]
        return observation

    def state(self) -> np.ndarray:
        """The full state (an error before reset)."""
        if self._raw is None:
            EnvLogger.error_state_before_reset()
        return self.env.state()

    def render(self) -> Any:
        """Render the env (an error before reset)."""
        if self._raw is None:
            EnvLogger.error_render_before_reset()
        return self.env.render()

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:  # type: ignore[override]
        """The agent to move until the episode ends; each must be stepped (or the env reset) before
        the next is given."""
        if self._raw is None:
            EnvLogger.error_agent_iter_before_reset()
        return _OrderedAgents(self, max_iter)


class _OrderedAgents(Iterator[str]):
    """``agent_iter``'s iterator: PettingZoo's, asserting a step or reset between two agents."""

    def __init__(self, env: OrderEnforcing, max_iter: int) -> None:
        self._env = env
        self._left = max_iter

    def __next__(self) -> str:
        env = self._env
        raw = env._raw
        if not raw.agents or self._left <= 0:
            raise StopIteration
        self._left -= 1
        assert env._updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._updated = False
        agent: str = raw.agent_selection
        return agent


def _plain(env: object) -> bool:
    """Whether ``env`` is a :class:`ginenv.aec.raw_env` whose ``step`` and ``observe`` are its own, so
    that :class:`OrderEnforcing` may step it past the checks it has made (``raw_env._play``)."""
    cls = type(env)
    return issubclass(cls, raw_env) and cls.step is raw_env.step and cls.observe is raw_env.observe


def wrap(env: GinEnv, illegal_reward: float = -1.0) -> GinEnv:
    """``env`` in the chain of ``gin_rummy_v0.env()``: ``OrderEnforcing(AssertOutOfBounds(
    TerminateIllegal(env, illegal_reward)))``."""
    return OrderEnforcing(AssertOutOfBounds(TerminateIllegal(env, illegal_reward)))
