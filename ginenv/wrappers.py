"""A Gymnasium single-agent view of the env: one seat learns, an opponent policy plays the other.

:class:`SingleAgentEnv` owns the loop that lets the opponent move between the learner's decisions.
It is a ``gymnasium.Env`` whose observation is the seat's ``"observation"`` vector (a ``Box``) and
whose action is an action id (``Discrete(108)``); the legal actions are in ``info["action_mask"]``
and in :meth:`SingleAgentEnv.action_masks`, the method sb3-contrib's ``MaskablePPO`` calls.

The opponent is any callable ``policy(observation_dict) -> action id`` that receives exactly what
``observe()`` gives its seat (``{"observation", "action_mask"}``), nothing more; the default,
:class:`RandomPolicy`, plays uniformly among the legal actions with a generator seeded from
``reset(seed=...)``. Rewards are the learner's rewards of the AEC env (points times
``reward_scale``), summed over the opponent's moves that follow its action.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from ginenv.actions import NUM_ACTIONS
from ginenv.gin_rummy_v0 import AGENTS, Mode, raw_env
from ginenv.rules import Rules

#: An opponent: maps the observation dict of its seat to a legal action id.
Policy = Callable[[Mapping[str, np.ndarray]], int]


class RandomPolicy:
    """Uniform choice among the legal actions of an observation's ``action_mask``."""

    def __init__(self, rng: np.random.Generator | int | None = None) -> None:
        """``rng``: a generator, or a seed for a new one."""
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    def __call__(self, observation: Mapping[str, np.ndarray]) -> int:
        """A legal action id drawn uniformly."""
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("no legal action in this observation's action_mask")
        return int(legal[self.rng.integers(legal.size)])


class SingleAgentEnv(gymnasium.Env[np.ndarray, np.int64]):
    """One seat of ``gin_rummy_v0`` as a Gymnasium env, the other seat played by ``opponent``.

    ``seat`` is 0 or 1 (``player_0`` / ``player_1``), or ``None`` to draw it at every reset.
    ``illegal_reward``: an illegal action ends the episode with this reward (as PettingZoo's
    ``env()`` does); ``None`` raises :class:`ginenv.engine.IllegalActionError` instead. The remaining
    arguments configure the underlying :class:`ginenv.gin_rummy_v0.raw_env` and survive resets.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"]}  # noqa: RUF012 (as gymnasium.Env)

    def __init__(
        self,
        opponent: Policy | None = None,
        seat: int | None = 0,
        rules: Rules | None = None,
        mode: Mode = "hand",
        reward_scale: float = 1.0,
        oracle: bool = False,
        dealer: int | None = None,
        illegal_reward: float | None = -1.0,
        render_mode: str | None = None,
    ) -> None:
        """Build the AEC env underneath and the spaces; see the class docstring."""
        if seat not in (None, 0, 1) or isinstance(seat, bool):
            raise ValueError(f"seat must be 0, 1 or None (random at each reset), got {seat!r}")
        self.env = raw_env(
            rules=rules,
            mode=mode,
            render_mode=render_mode,
            reward_scale=reward_scale,
            oracle=oracle,
            dealer=dealer,
        )
        self.render_mode = render_mode
        self.seat_option = seat
        self.seat = 0 if seat is None else seat
        self.illegal_reward = illegal_reward
        self._default_opponent = opponent is None
        self.opponent: Policy = opponent if opponent is not None else RandomPolicy(0)
        inner = self.env.observation_space(AGENTS[0])
        assert isinstance(inner, spaces.Dict)
        self.observation_space = inner["observation"]
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._pending_reward = 0.0
        self._done = True

    @property
    def agent(self) -> str:
        """The learner's agent name in the AEC env."""
        return AGENTS[self.seat]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a new episode and play the opponent until the learner's first decision.

        ``options`` go to the AEC env's ``reset`` (``deck``, ``decks``, ``dealer``). In hand mode, a
        hand the opponent ends before the learner's first decision (taking the upcard and knocking
        at once) is dealt again, since the learner had no say in it; in match mode the points of such
        a hand are added to the reward of the learner's first step.
        """
        super().reset(seed=seed)
        # Every random choice below flows from self.np_random, so reset(seed=s) is reproducible.
        if self.seat_option is None:
            self.seat = int(self.np_random.integers(2))
        if self._default_opponent:
            self.opponent = RandomPolicy(self.np_random)
        for _ in range(100):
            self.env.reset(seed=int(self.np_random.integers(2**63)), options=options)
            self._pending_reward = self._play_opponent()
            if not self.env.terminations[self.agent]:
                break
            if options and (options.get("deck") is not None or options.get("decks") is not None):
                raise RuntimeError(
                    "the given deal ends before the learner's first decision; choose another deck"
                )
        else:  # pragma: no cover - needs 100 deals in a row ended by the opponent
            raise RuntimeError("the opponent ended 100 deals in a row before the learner could move")
        self._done = False
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Apply the learner's action, then the opponent's moves until the learner decides again."""
        if self._done:
            raise RuntimeError("the episode is over: call reset()")
        env = self.env
        action = int(action)
        reward = self._pending_reward
        self._pending_reward = 0.0
        if not (0 <= action < NUM_ACTIONS and self._mask[action]):
            penalty = self.illegal_reward
            if penalty is None:
                env.step(action)  # raises IllegalActionError (or UnknownActionError) naming the legal ones
                raise AssertionError("unreachable: the env accepted an action outside the mask")
            self._done = True
            info = self._info()
            info["illegal_action"] = action
            return self._observation(), reward + float(penalty), True, False, info
        env.step(action)
        reward += float(env.rewards[self.agent])
        reward += self._play_opponent()
        terminated = bool(env.terminations[self.agent])
        self._done = terminated
        return self._observation(), reward, terminated, False, self._info()

    def _play_opponent(self) -> float:
        """Let the opponent move until the learner's turn or the end; the learner's rewards meanwhile."""
        env = self.env
        me = self.agent
        reward = 0.0
        while not env.terminations[me] and env.agent_selection != me:
            env.step(self.opponent(env.observe(env.agent_selection)))
            reward += float(env.rewards[me])
        return reward

    def _observation(self) -> np.ndarray:
        obs = self.env.observe(self.agent)
        self._mask = obs["action_mask"]
        return obs["observation"]

    def _info(self) -> dict[str, Any]:
        info = dict(self.env.infos[self.agent])
        info["action_mask"] = self._mask.copy()
        return info

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions (what ``MaskablePPO`` asks for)."""
        return self._mask.astype(bool)

    def render(self) -> str | None:  # type: ignore[override]
        """Render the AEC env (``ansi`` returns the text, ``human`` prints it)."""
        return self.env.render()

    def close(self) -> None:
        """Close the AEC env."""
        self.env.close()
