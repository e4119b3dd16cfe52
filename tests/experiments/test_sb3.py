"""The Stable-Baselines3 VecEnv over the batched engine (ginenv.experiments.sb3)."""

from __future__ import annotations

import numpy as np
import pytest
from ginenv.experiments.sb3 import GinRummyVecEnv
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks

from ginenv.observation import PHASE_BASE


def test_sb3_semantics_terminal_observations_and_masks() -> None:
    env = GinRummyVecEnv(num_envs=8, opponent="random", turn_limit=5, seed=3)
    obs = env.reset()
    assert obs.shape == (8, 532) and env.observation_space.contains(obs[0])
    rng = np.random.default_rng(0)
    ended = truncated_seen = 0
    for _ in range(200):
        masks = get_action_masks(env)  # how MaskablePPO asks
        assert masks.shape == (8, 108) and masks.any(axis=1).all()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, infos = env.step(actions)
        assert rewards.shape == dones.shape == (8,)
        for i in np.flatnonzero(dones):
            ended += 1
            final = infos[i]["terminal_observation"]
            assert final[PHASE_BASE + 4] == 1 and obs[i][PHASE_BASE + 4] == 0
            truncated_seen += infos[i]["TimeLimit.truncated"]
        for i in np.flatnonzero(~dones):
            assert infos[i] == {}
    assert ended > 40 and truncated_seen > 0
    with pytest.raises(AttributeError, match="only action_masks"):
        env.env_method("render")


def test_maskable_ppo_learns_on_it() -> None:
    env = GinRummyVecEnv(num_envs=16, opponent="greedy", reward_scale=0.01, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64, n_epochs=1, seed=0, verbose=0)
    model.learn(total_timesteps=16 * 16 * 3)
    obs = env.reset()
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[np.arange(16), action].all()  # masked: only legal actions
