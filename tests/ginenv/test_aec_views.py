"""What the AEC env shows, pinned: a step writes only the mover's view (in the call that applies the
action) and the other seat's view is encoded when observed, and ``env()``'s wrapper steps the
unwrapped env past the checks it makes itself; none of it may change an observation, a mask, a
reward, an info, a termination or an error. The digests were taken with the code before (both seats
encoded at every step, the three wrapper levels called one by one)."""

from __future__ import annotations

import copy
import hashlib
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ginenv import gin_rummy_v0
from ginenv.observation import encode
from ginenv.rules import Rules


def _bytes(a: np.ndarray) -> bytes:
    return a.dtype.str.encode() + repr(a.shape).encode() + a.tobytes()


def play_digest(make: Callable[[], Any], episodes: int, seed: int) -> str:
    """Random play through ``make()``'s AEC API with now and then an illegal action, one out of
    range or not an int, a numpy int, the other seat observed, the mover observed twice, the state
    read; the first 16 hex digits of the sha256 of everything the env showed (errors included)."""
    h = hashlib.sha256()
    rng = random.Random(seed)
    env = make()
    for episode in range(episodes):
        env.reset(seed=seed * 1000 + episode if episode == 0 or episode % 3 else None)
        for agent in env.agent_iter(max_iter=2000):
            if rng.random() < 0.3:
                seen = env.observe("player_1" if agent == "player_0" else "player_0")
                h.update(_bytes(seen["observation"]) + _bytes(seen["action_mask"]))
            obs, reward, term, trunc, info = env.last()
            h.update(_bytes(obs["observation"]) + _bytes(obs["action_mask"]))
            h.update(repr((agent, reward, term, trunc, info, env.rewards, env.terminations)).encode())
            h.update(repr(env.truncations).encode())
            if rng.random() < 0.05:
                h.update(_bytes(env.state()))
            if rng.random() < 0.02:
                again = env.observe(agent)
                h.update(_bytes(again["observation"]) + _bytes(again["action_mask"]))
            roll = rng.random()
            if term or trunc:
                action: Any = None
            elif roll < 0.004:
                action = rng.choice([-1, 108, 3.0, "x"])
            elif roll < 0.01:
                action = rng.randrange(108)
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[int(rng.random() * len(legal))])
                if roll > 0.95:
                    action = np.int64(action)
            try:
                env.step(action)
            except Exception as err:
                h.update(repr((type(err).__name__, str(err))).encode())
        if rng.random() < 0.1:
            try:
                env.last()
            except Exception as err:
                h.update(repr((type(err).__name__, str(err))).encode())
    return h.hexdigest()[:16]


PINNED = {
    "env hand": (lambda: gin_rummy_v0.env(), 60, "f6f5e92edcb2ff6a"),
    "raw hand": (lambda: gin_rummy_v0.raw_env(), 40, "32afc495bd9c0116"),
    "env match": (lambda: gin_rummy_v0.env(mode="match", hand_limit=4), 15, "e0de887ff5f38c91"),
    "env oracle": (lambda: gin_rummy_v0.env(oracle=True), 30, "ac871a7bb1bb1d30"),
    "env match oracle": (
        lambda: gin_rummy_v0.env(mode="match", oracle=True, hand_limit=3, turn_limit=30),
        15,
        "17f7a23dfc9680a1",
    ),
    "env turn limit": (lambda: gin_rummy_v0.env(turn_limit=12), 40, "38bb231711e7f0a2"),
    "env oklahoma": (
        lambda: gin_rummy_v0.env(rules=Rules(oklahoma=True, discard_taken_card=True)),
        30,
        "4ffdffaa771697fb",
    ),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", list(PINNED))
def test_everything_the_env_shows_is_as_pinned(name: str) -> None:
    make, episodes, want = PINNED[name]
    assert play_digest(make, episodes, 7) == want


@pytest.mark.parametrize(("mode", "oracle"), [("hand", False), ("hand", True), ("match", False)])
def test_either_seat_observed_at_any_time_sees_its_encoding(mode: str, oracle: bool) -> None:
    # Each observation is the seat's encoding of the state as it is now, whichever seat is asked
    # and however often; an observation once returned is never written again.
    rng = random.Random(3)
    env = gin_rummy_v0.env(mode=mode, oracle=oracle, hand_limit=3)
    handed_out: list[tuple[np.ndarray, np.ndarray]] = []
    for episode in range(6):
        env.reset(seed=episode)
        for agent in env.agent_iter():
            raw = env.unwrapped
            scores, target = (None, 0) if raw.match is None else (raw.match.scores, raw.rules.target)
            for seat in rng.sample([0, 1], rng.randrange(3)) + [int(agent[-1])]:
                seen = env.observe(f"player_{seat}")
                want = encode(raw.hand, seat, scores, target, oracle)
                assert np.array_equal(seen["observation"], want)
                mask = np.zeros(108, dtype=np.int8)
                if f"player_{seat}" == agent and not (env.terminations[agent] or env.truncations[agent]):
                    mask[raw.hand.legal_actions()] = 1
                assert np.array_equal(seen["action_mask"], mask)
                if rng.random() < 0.05:
                    handed_out.append((seen["observation"], seen["observation"].copy()))
                    handed_out.append((seen["action_mask"], seen["action_mask"].copy()))
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert handed_out and all(np.array_equal(a, kept) for a, kept in handed_out)


def test_a_deep_copy_keeps_views_of_its_own() -> None:
    env = gin_rummy_v0.env()
    env.reset(seed=1)
    for _ in range(5):
        env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    twin = copy.deepcopy(env)
    # The copy's outer level checks with the copy's own inner level, not the original's.
    assert twin._illegal is twin.env.env and twin._illegal is not env._illegal
    before = {a: env.observe(a)["observation"] for a in ("player_0", "player_1")}
    for _ in range(4):
        twin.step(int(np.flatnonzero(twin.last()[0]["action_mask"])[-1]))
    for a in ("player_0", "player_1"):
        assert np.array_equal(env.observe(a)["observation"], before[a])
        want = encode(twin.unwrapped.hand, int(a[-1]))
        assert np.array_equal(twin.observe(a)["observation"], want)


def test_a_subclass_with_its_own_step_is_stepped_through_it() -> None:
    # env()'s wrapper steps raw_env past its checks only when step and observe are raw_env's own.
    from ginenv.aec_wrappers import wrap

    calls: list[int] = []

    class Counting(gin_rummy_v0.raw_env):
        def step(self, action: Any) -> None:
            calls.append(action)
            super().step(action)

    env = wrap(Counting())
    plain = gin_rummy_v0.env()
    for e in (env, plain):
        e.reset(seed=2)
    for _ in range(6):
        action = int(np.flatnonzero(env.last()[0]["action_mask"])[0])
        assert np.array_equal(plain.last()[0]["observation"], env.last()[0]["observation"])
        env.step(action)
        plain.step(action)
    assert len(calls) == 6
