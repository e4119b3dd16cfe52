"""The Parallel face of the env: :class:`ParallelGinRummy`, :func:`parallel_env` and :data:`NOOP`,
the one legal action of a seat that cannot act.

Import them from ``ginenv.gin_rummy_v0`` (the env card documents them, "Parallel API").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.env_logger import EnvLogger

from ginenv.actions import NUM_ACTIONS, PASS
from ginenv.aec import AGENTS, EpisodeOverError, raw_env
from ginenv.validation import as_int, finite_number

if TYPE_CHECKING:
    from typing import Unpack

    from ginenv.settings import EnvKwargs, EnvSettings

__all__ = ["NOOP", "ParallelGinRummy", "parallel_env"]

#: The Parallel API's no-op: the one legal action in the mask of a seat that cannot act (the seat
#: not to move, and both seats once the episode has ended), as multi-agent libraries give a unit
#: that cannot act one (SMAC's no-op for dead units). An all-zero mask leaves a sampler nothing to
#: draw from (TorchRL's random and masked samplers fail on it). It reuses ``pass`` (id 2) rather
#: than a new id, so the action space, the mask's shape and a network's outputs stay those of
#: ``env()``; the env ignores the action of a seat that cannot act, this one or any other.
NOOP = PASS

#: What ``step`` returns, per agent: observations, rewards, terminations, truncations, infos.
StepResult: TypeAlias = tuple[
    dict[str, dict[str, np.ndarray]],
    dict[str, float],
    dict[str, bool],
    dict[str, bool],
    dict[str, dict[str, Any]],
]

# PettingZoo's aec_to_parallel needs agents that move in a fixed cycle; in gin rummy the same seat
# draws and then discards, so it refuses the game. The class below is the turn-based form instead.


class ParallelGinRummy(ParallelEnv[str, dict[str, np.ndarray], int]):
    """Gin rummy through PettingZoo's Parallel API: at each step only one agent is to move.

    ``step(actions)`` applies ``actions[agent]`` for the agent to move (``infos[a]["active_agent"]``
    names it, ``infos[a]["active_seat"]`` gives its seat) and ignores the other agent's entry, which
    may be anything or absent. The mover's ``action_mask`` holds its legal actions; the other
    seat's holds :data:`NOOP` only, as do both seats' once the episode has ended, so every mask has
    a legal action for a library's sampler to draw (``env()``'s masks are all zero there). Observation
    vectors are ``env()``'s (entry 10 says whether the seat decides now). An illegal action
    (an id in the action space that the mask refuses) ends the episode as ``env()`` does, following
    PettingZoo's convention: ``illegal_reward`` to the offender, 0 to the other, both terminated and
    truncated; with ``illegal_reward=None`` it raises :class:`ginenv.engine.IllegalActionError` and
    changes nothing (as ``raw_env``). Observations, rewards, terminations, truncations and infos are
    those of :class:`raw_env` after the step; once the episode has ended ``agents`` is empty.
    """

    metadata: ClassVar[dict[str, Any]] = {**raw_env.metadata, "is_parallelizable": True}

    def __init__(
        self,
        *,
        illegal_reward: float | None = -1.0,
        settings: EnvSettings | None = None,
        **kwargs: Unpack[EnvKwargs],
    ) -> None:
        """Build the AEC env underneath; ``illegal_reward`` as the class docstring says (a finite
        number or None), the other arguments :class:`raw_env`'s (its settings)."""
        self.illegal_reward = (
            None if illegal_reward is None else finite_number("illegal_reward", illegal_reward)
        )
        self.aec_env = raw_env(settings=settings, **kwargs)
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self._dealt = False  # reset() was called
        self.render_mode = self.aec_env.render_mode
        self.state_space = self.aec_env.state_space

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The observation space of ``agent`` (the AEC env's)."""
        return self.aec_env.observation_space(agent)

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """The action space of ``agent``: ``Discrete(108)``."""
        return self.aec_env.action_space(agent)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, Any]]]:
        """Deal a new episode (see :meth:`raw_env.reset`); both agents' observations and infos."""
        aec = self.aec_env
        aec.reset(seed=seed, options=options)
        self._dealt = True
        self.agents = list(aec.agents)
        return self._observe(ended=False), self._infos()

    def step(self, actions: Mapping[str, Any]) -> StepResult:
        """Apply the action of the agent to move; the other agent's entry is ignored."""
        aec = self.aec_env
        if not self.agents:
            if not self._dealt:
                raise RuntimeError("call reset() before step()")
            raise EpisodeOverError.after("step")
        mover = aec.agent_selection
        if not isinstance(actions, Mapping) or mover not in actions:
            raise ValueError(
                f"actions must be a dict holding the action of {mover!r}, the agent to move "
                f"(the other agent's entry is ignored), got {actions!r}"
            )
        action = actions[mover]
        if self.illegal_reward is not None and self._refused(action):
            return self._end_for_illegal(mover)
        aec.step(action)
        rewards = {a: float(aec.rewards[a]) for a in AGENTS}
        terminations = dict(aec.terminations)
        truncations = dict(aec.truncations)
        ended = all(terminations[a] or truncations[a] for a in AGENTS)
        observations = self._observe(ended)
        infos = self._infos()
        if ended:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _observe(self, ended: bool) -> dict[str, dict[str, np.ndarray]]:
        """Both agents' observations, with :data:`NOOP` the one legal action of a seat that cannot
        act: the seat not to move, or both seats once the episode has ``ended``."""
        aec = self.aec_env
        observations = {a: aec.observe(a) for a in AGENTS}
        for agent, obs in observations.items():
            if ended or agent != aec.agent_selection:
                mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
                mask[NOOP] = 1
                obs["action_mask"] = mask
        return observations

    def _refused(self, action: Any) -> bool:
        """Whether ``action`` is an id of the action space that the rules refuse now, the mover's
        mask being those rules (anything outside the space goes to ``raw_env``, which names what is
        allowed)."""
        index = as_int(action)
        return index is not None and 0 <= index < NUM_ACTIONS and not self.aec_env.hand.is_legal(index)

    def _end_for_illegal(self, mover: str) -> StepResult:
        """End the episode after ``mover``'s illegal action, as PettingZoo's TerminateIllegalWrapper
        ends an AEC episode: the offender gets ``illegal_reward``, the other 0, both are done."""
        EnvLogger.warn_on_illegal_move()
        observations = self._observe(ended=True)
        rewards = {a: (float(self.illegal_reward or 0.0) if a == mover else 0.0) for a in AGENTS}
        done = dict.fromkeys(AGENTS, True)
        infos = self._infos(ended=True)
        self.agents = []
        return observations, rewards, dict(done), dict(done), infos

    def _infos(self, ended: bool | None = None) -> dict[str, dict[str, Any]]:
        aec = self.aec_env
        infos = {a: dict(aec.infos[a]) for a in AGENTS}
        if ended is None:
            ended = aec.terminations[aec.agent_selection] or aec.truncations[aec.agent_selection]
        numeric = aec.settings.infos == "numeric"
        for info in infos.values():
            # Numeric infos carry the seat only (text does not become a tensor).
            if not numeric:
                info["active_agent"] = None if ended else aec.agent_selection
            info["active_seat"] = -1 if ended else AGENTS.index(aec.agent_selection)
        return infos

    def state(self) -> np.ndarray:
        """The full state (see :meth:`raw_env.state`)."""
        return self.aec_env.state()

    def render(self) -> str | None:
        """Render the AEC env (``ansi`` returns the text, ``human`` prints it)."""
        return self.aec_env.render()

    def close(self) -> None:
        """Close the AEC env."""
        self.aec_env.close()


def parallel_env(
    *, illegal_reward: float | None = -1.0, settings: EnvSettings | None = None, **kwargs: Unpack[EnvKwargs]
) -> ParallelGinRummy:
    """The env through PettingZoo's Parallel API (see :class:`ParallelGinRummy`); the arguments as
    ``env()``'s (``illegal_reward``, ``settings`` and/or its fields)."""
    return ParallelGinRummy(illegal_reward=illegal_reward, settings=settings, **kwargs)
