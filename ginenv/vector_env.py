"""A Gymnasium ``VectorEnv`` over the batched engine: one learner seat per slot, compiled opponents.

:class:`GinRummyVectorEnv` owns the Gymnasium face of :class:`ginenv.vector.OpponentVectorGinRummy`,
for single-agent training code written against ``gymnasium.vector`` (CleanRL-style loops, TorchRL's
Gymnasium wrappers, or Stable-Baselines3 through a ``VecEnv`` adapter). Every slot is one hand: the
learner plays one seat (``seat=None``: drawn at random every hand), a compiled opponent the other
(``opponent="greedy"``: ``ginenv.agents.baselines.greedy`` move for move; ``"hard"``; ``"random"``;
any name of :func:`ginenv.vector.policy_names`), and the opponent's moves are stepped inside the env
so that every step is one learner decision. ``import ginenv``
registers it as the vector entry point of ``"ginenv/GinRummyBatched-v0"``, whose defaults
(:data:`DEFAULT_OPPONENT`, a random seat) are this class's for ``make_vec`` and ``make`` alike::

    envs = gymnasium.make_vec("ginenv/GinRummyBatched-v0", num_envs=256)

- **Observations**: the learner's observation vector (``Box(0, high, (532,), float32)`` per slot),
  exactly what ``gin_rummy_v0``'s ``observe()`` gives its seat.
- **Actions**: action ids (``Discrete(108)`` per slot, ``MultiDiscrete`` batched); the legal ones are
  ``infos["action_mask"]`` (N, 108) int8 and :meth:`GinRummyVectorEnv.action_masks` (bool, as
  sb3-contrib's ``MaskablePPO`` asks for). An illegal action raises ``ginenv.vector.VectorError``
  and changes nothing.
- **Rewards**: the learner's points times ``reward_scale`` when its hand ends, else 0.
- **Episodes** are hands: ``terminated`` at a knock, gin, big gin or dead hand; ``truncated`` at the
  turn limit (``turn_limit`` draws). Autoreset is ``SAME_STEP``: the slot is dealt a new hand in the
  same step, the returned observation is the new hand's, and the final observation of the ended hand
  is in ``infos["final_obs"]`` (rows where ``infos["_final_obs"]`` is True), for bootstrapping a
  truncated hand. A hand that ends before the learner's first decision is dealt again.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from ginenv.actions import NUM_ACTIONS
from ginenv.engine import DEFAULT_TURN_LIMIT
from ginenv.observation import observation_high
from ginenv.rules import Rules
from ginenv.vector import OpponentVectorGinRummy

#: The opponent when none is given (``"ginenv/GinRummyBatched-v0"``'s default too).
DEFAULT_OPPONENT = "greedy"


def learner_observation_space(rules: Rules) -> spaces.Box:
    """The space of one learner's observation vector in hand mode (``gin_rummy_v0``'s bounds)."""
    high = observation_high(max(rules.knock_limit, 10), 0, 0, False)
    return spaces.Box(low=0.0, high=high, dtype=np.float32)


class GinRummyVectorEnv(gymnasium.vector.VectorEnv):  # type: ignore[misc]
    """``num_envs`` learner slots against compiled opponents (see the module docstring)."""

    # VectorEnv declares metadata as an instance attribute; a class-level default is its convention.
    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}  # noqa: RUF012

    def __init__(
        self,
        num_envs: int = 8,
        opponent: str = DEFAULT_OPPONENT,
        seat: int | None = None,
        rules: Rules | None = None,
        turn_limit: int = DEFAULT_TURN_LIMIT,
        reward_scale: float = 1.0,
        seed: int | None = None,
        threads: int = 1,
        **unused: Any,
    ) -> None:
        """Build the slots (``threads``: the engine's, as :class:`~ginenv.vector.OpponentVectorGinRummy`
        takes them: the same results for every count); ``unused`` keyword arguments (the single-agent
        env's, passed on by ``make_vec``) are refused by name."""
        if unused:
            raise TypeError(
                f"GinRummyVectorEnv got unknown argument(s) {', '.join(sorted(unused))}; it takes num_envs, "
                "opponent (a compiled policy: 'greedy', 'hard', 'random'), seat, rules, turn_limit, "
                "reward_scale, seed, threads"
            )
        self._vec = OpponentVectorGinRummy(
            num_envs, opponent, seat, rules, seed, turn_limit, reward_scale, threads=threads
        )
        self.num_envs = self._vec.num_envs
        self.rules = rules or Rules()
        self.single_observation_space = learner_observation_space(self.rules)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._masks = np.zeros((self.num_envs, NUM_ACTIONS), dtype=np.int8)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every slot (``seed`` reseeds the generator); ``options`` are not used."""
        if seed is not None:
            self._np_random, _ = gymnasium.utils.seeding.np_random(seed)
        obs, self._masks = self._vec.reset(seed=seed)
        return obs, {"action_mask": self._masks.copy()}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One learner decision per slot, then the opponents' moves up to the next one."""
        obs, self._masks, rewards, terminated, truncated, final_obs = self._vec.step(np.asarray(actions))
        ended = terminated | truncated
        infos: dict[str, Any] = {"action_mask": self._masks.copy()}
        if ended.any():
            infos["final_obs"] = final_obs
            infos["_final_obs"] = ended
        return obs, rewards, terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, (num_envs, 108) bool."""
        return self._masks.astype(bool)

    @property
    def vector(self) -> OpponentVectorGinRummy:
        """The batched engine underneath (seats, results of the last step)."""
        return self._vec


__all__ = ["DEFAULT_OPPONENT", "GinRummyVectorEnv", "learner_observation_space"]
