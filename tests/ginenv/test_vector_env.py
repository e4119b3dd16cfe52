"""The Gymnasium VectorEnv over the batched engine (ginenv.vector_env), with Gymnasium's checks that
apply to a vector env: spaces, seeding, data not reused between steps, SAME_STEP autoreset."""

from __future__ import annotations

import inspect

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import ginenv
from ginenv.observation import PHASE_BASE, TO_MOVE
from ginenv.vector import VectorError
from ginenv.vector_env import DEFAULT_OPPONENT, GinRummyVectorEnv


def masked_random(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


def rollout(envs: GinRummyVectorEnv, seed: int, steps: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    obs, info = envs.reset(seed=seed)
    out = [obs]
    for _ in range(steps):
        obs, rewards, terminated, truncated, info = envs.step(masked_random(info["action_mask"], rng))
        out += [obs, rewards, terminated, truncated]
    return out


def test_make_vec_builds_the_batched_env() -> None:
    assert ginenv.GYMNASIUM_BATCHED_ID == "ginenv/GinRummyBatched-v0"
    envs = gymnasium.make_vec(ginenv.GYMNASIUM_BATCHED_ID, num_envs=4)  # the vector entry point
    assert isinstance(envs, GinRummyVectorEnv)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = envs.reset(seed=0)
    assert obs.shape == (4, 532) and info["action_mask"].shape == (4, 108)


def test_each_id_has_one_default_opponent_for_make_and_make_vec() -> None:
    from gymnasium.envs.registration import registry

    from ginenv.wrappers import DEFAULT_OPPONENT as SINGLE_DEFAULT

    # ginenv/GinRummy-v0: "normal", the learner in seat 0, whether made or vectorised (copies).
    single = gymnasium.make(ginenv.GYMNASIUM_ID).unwrapped
    copies = gymnasium.make_vec(ginenv.GYMNASIUM_ID, num_envs=2)
    assert isinstance(copies, gymnasium.vector.SyncVectorEnv)
    made = [single, *(e.unwrapped for e in copies.envs)]
    assert {(e.opponent, e.seat_option) for e in made} == {(SINGLE_DEFAULT, 0)} and SINGLE_DEFAULT == "normal"
    with pytest.raises(gymnasium.error.Error, match="vector entry point"):
        gymnasium.make_vec(ginenv.GYMNASIUM_ID, num_envs=2, vectorization_mode="vector_entry_point")
    # ginenv/GinRummyBatched-v0: "greedy", a random seat, in the batched env and in one slot's game.
    single = gymnasium.make(ginenv.GYMNASIUM_BATCHED_ID).unwrapped
    batched = gymnasium.make_vec(ginenv.GYMNASIUM_BATCHED_ID, num_envs=2)
    assert (single.opponent, single.seat_option) == ("greedy", None)
    assert (batched.vector.opponent, batched.vector.seat) == ("greedy", None)
    # The id's defaults are GinRummyVectorEnv's own, so a direct build agrees too.
    defaults = inspect.signature(GinRummyVectorEnv).parameters
    assert registry[ginenv.GYMNASIUM_BATCHED_ID].kwargs == {
        "opponent": defaults["opponent"].default,
        "seat": defaults["seat"].default,
    }
    assert defaults["opponent"].default == DEFAULT_OPPONENT == "greedy"
    # Either id takes another opponent the same way through make and make_vec.
    assert gymnasium.make(ginenv.GYMNASIUM_BATCHED_ID, opponent="random").unwrapped.opponent == "random"
    assert (
        gymnasium.make_vec(ginenv.GYMNASIUM_BATCHED_ID, num_envs=2, opponent="random").vector.opponent
        == "random"
    )


def test_spaces_seeding_and_no_data_reuse() -> None:
    envs = GinRummyVectorEnv(num_envs=6, opponent="greedy")
    rng = np.random.default_rng(1)
    obs, info = envs.reset(seed=3)
    assert envs.observation_space.contains(obs)
    assert envs.single_observation_space.contains(obs[0])
    for _ in range(150):
        before = obs.copy()
        actions = masked_random(info["action_mask"], rng)
        assert envs.action_space.contains(actions)
        new_obs, rewards, terminated, truncated, info = envs.step(actions)
        assert envs.observation_space.contains(new_obs)
        assert rewards.shape == terminated.shape == truncated.shape == (6,)
        assert rewards.dtype == np.float32 and terminated.dtype == truncated.dtype == np.bool_
        # The arrays returned by the last step are not written again by this one.
        np.testing.assert_array_equal(obs, before)
        assert np.all(new_obs[:, TO_MOVE] == 1)
        assert np.array_equal(envs.action_masks(), info["action_mask"].astype(bool))
        obs = new_obs
    first, again = rollout(envs, 9, 60), rollout(envs, 9, 60)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not np.array_equal(rollout(envs, 10, 60)[0], first[0])


def test_same_step_autoreset_gives_the_final_observation() -> None:
    envs = GinRummyVectorEnv(num_envs=8, opponent="random", turn_limit=6)
    rng = np.random.default_rng(2)
    obs, info = envs.reset(seed=0)
    ended_seen = 0
    for _ in range(200):
        obs, _, terminated, truncated, info = envs.step(masked_random(info["action_mask"], rng))
        ended = terminated | truncated
        if not ended.any():
            assert "final_obs" not in info
            continue
        ended_seen += int(ended.sum())
        assert np.array_equal(info["_final_obs"], ended)
        final = info["final_obs"][ended]
        assert np.all(final[:, PHASE_BASE + 4] == 1)  # the ended hand's last view: phase over
        assert np.all(obs[ended][:, PHASE_BASE + 4] == 0)  # the new hand is live
    assert ended_seen > 50


def test_bad_arguments_and_actions_are_refused() -> None:
    with pytest.raises(TypeError, match="unknown argument"):
        GinRummyVectorEnv(num_envs=2, render_mode="human")
    with pytest.raises(VectorError, match="opponent must name a compiled policy"):
        GinRummyVectorEnv(num_envs=2, opponent="openspiel_simple")
    envs = GinRummyVectorEnv(num_envs=2)
    _, info = envs.reset(seed=0)
    illegal = np.array([np.flatnonzero(m == 0)[0] for m in info["action_mask"]])
    with pytest.raises(VectorError, match="illegal"):
        envs.step(illegal)
    np.testing.assert_array_equal(envs.action_masks(), info["action_mask"].astype(bool))


def test_threads_give_the_same_episodes() -> None:
    # make_vec passes threads on to the engine; every count plays the same hands.
    make = gymnasium.make_vec
    envs = [make(ginenv.GYMNASIUM_BATCHED_ID, num_envs=16, opponent="hard", threads=k) for k in (1, 2)]
    first = [env.reset(seed=4) for env in envs]
    np.testing.assert_array_equal(first[0][0], first[1][0])
    rng = np.random.default_rng(4)
    masks = first[0][1]["action_mask"]
    for _ in range(60):
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        (obs, rewards, terminated, truncated, infos), other = (env.step(actions) for env in envs)
        for mine, theirs in zip((obs, rewards, terminated, truncated), other[:4], strict=True):
            np.testing.assert_array_equal(mine, theirs)
        masks = infos["action_mask"]
