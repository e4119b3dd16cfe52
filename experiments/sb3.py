"""Stable-Baselines3 on the batched engine: a ``VecEnv`` over :class:`ginenv.vector.OpponentVectorGinRummy`.

Stable-Baselines3 trains on its own ``VecEnv`` interface, not on ``gymnasium.vector``; this module
owns the adapter, so that SB3 and sb3-contrib code (``MaskablePPO`` with its action masks) train on
thousands of hands stepped in compiled code instead of one Python env per hand::

    from sb3_contrib import MaskablePPO
    from ginenv.experiments.sb3 import GinRummyVecEnv

    model = MaskablePPO("MlpPolicy", GinRummyVecEnv(num_envs=256, opponent="greedy"), n_steps=64)
    model.learn(100_000)

Semantics are SB3's: ``step`` returns ``(obs, rewards, dones, infos)``; a slot whose hand ended is
dealt a new hand at once, the returned observation is the new hand's, and
``infos[i]["terminal_observation"]`` holds the ended hand's final view with
``infos[i]["TimeLimit.truncated"]`` set when the turn limit ended it (SB3 then bootstraps).
``env_method("action_masks")`` answers sb3-contrib's mask query. Stable-Baselines3 is imported only
here (the ``dev`` extra installs it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from ginenv.actions import NUM_ACTIONS
from ginenv.engine import DEFAULT_TURN_LIMIT
from ginenv.rules import Rules
from ginenv.vector import OpponentVectorGinRummy
from ginenv.vector_env import learner_observation_space


class GinRummyVecEnv(VecEnv):  # type: ignore[misc]
    """``num_envs`` learner slots against a compiled opponent, as a Stable-Baselines3 ``VecEnv``."""

    def __init__(
        self,
        num_envs: int = 8,
        opponent: str = "greedy",
        seat: int | None = None,
        rules: Rules | None = None,
        turn_limit: int = DEFAULT_TURN_LIMIT,
        reward_scale: float = 1.0,
        seed: int | None = None,
    ) -> None:
        """The slots of :class:`ginenv.vector.OpponentVectorGinRummy` (see it for each argument)."""
        self.vector = OpponentVectorGinRummy(num_envs, opponent, seat, rules, seed, turn_limit, reward_scale)
        super().__init__(
            self.vector.num_envs,
            learner_observation_space(rules or Rules()),
            spaces.Discrete(NUM_ACTIONS),
        )
        self._seed = seed
        self._actions: np.ndarray | None = None
        self._masks = np.zeros((self.num_envs, NUM_ACTIONS), dtype=np.int8)

    def reset(self) -> np.ndarray:
        """Deal every slot (with the seed given to :meth:`seed` or the constructor, once)."""
        obs, self._masks = self.vector.reset(seed=self._seed)
        self._seed = None
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Keep the learners' actions for :meth:`step_wait`."""
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Apply the actions, then the opponents' moves: SB3's ``(obs, rewards, dones, infos)``."""
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        obs, self._masks, rewards, terminated, truncated, final = self.vector.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            infos[i] = {"terminal_observation": final[i], "TimeLimit.truncated": bool(truncated[i])}
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, (num_envs, 108) bool."""
        return self._masks.astype(bool)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        """Only ``action_masks`` (what sb3-contrib asks every step): one mask per slot."""
        if method_name != "action_masks":
            raise AttributeError(f"GinRummyVecEnv has no per-slot method {method_name!r}; only action_masks")
        masks = self.action_masks()
        return [masks[i] for i in self._indices(indices)]

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """SB3 asks for ``render_mode``, sb3-contrib whether ``action_masks`` exists (the bound
        method, per slot); slots have no other per-env attributes."""
        if attr_name == "render_mode":
            return [None for _ in self._indices(indices)]
        if attr_name == "action_masks":
            return [self.action_masks for _ in self._indices(indices)]
        raise AttributeError(f"GinRummyVecEnv slots have no attribute {attr_name!r}")

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Slots have no settable attributes."""
        raise AttributeError(f"GinRummyVecEnv slots have no settable attribute {attr_name!r}")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """No slot is wrapped by a Gymnasium wrapper."""
        return [False for _ in self._indices(indices)]

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next :meth:`reset`."""
        self._seed = seed
        return [seed for _ in range(self.num_envs)]

    def close(self) -> None:
        """Nothing to release."""

    def _indices(self, indices: Any) -> Iterable[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices)


__all__ = ["GinRummyVecEnv"]
