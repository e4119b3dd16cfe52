"""gin_rummy_v0.parallel_env(): PettingZoo's Parallel API test, a scripted hand (only the agent to
move acts), truncation, state() and the errors after the episode and for a missing action."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test
from test_env import KNOCK_DECK, make_deck, take_the_discard

from ginenv import gin_rummy_v0
from ginenv.engine import IllegalActionError


@pytest.mark.parametrize("mode", ["hand", "match"])
def test_parallel_api_test(mode: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # parallel_api_test resets with an unknown option
        parallel_api_test(gin_rummy_v0.parallel_env(mode=mode), num_cycles=2000)


def names(obs: dict) -> set[str]:
    return {gin_rummy_v0.ACTION_NAMES[a] for a in np.flatnonzero(obs["action_mask"])}


def test_a_scripted_hand_where_only_the_agent_to_move_acts() -> None:
    env = gin_rummy_v0.parallel_env()
    obs, infos = env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    assert env.agents == ["player_0", "player_1"]
    assert infos["player_0"]["active_agent"] == "player_1"
    assert names(obs["player_1"]) == {"draw_discard", "pass"} and names(obs["player_0"]) == set()
    aid = gin_rummy_v0.raw_env.action_id
    script = [
        ("player_1", "pass"),
        ("player_0", "pass"),
        ("player_1", "draw_stock"),
        ("player_1", "knock Kc"),
    ]
    for mover, name in script:
        other = "player_0" if mover == "player_1" else "player_1"
        # The other agent's entry is ignored, whatever it holds.
        obs, rewards, terms, truncs, infos = env.step({mover: aid(name), other: aid("draw_stock")})
    assert rewards == {"player_0": -51.0, "player_1": 51.0}
    assert terms == {"player_0": True, "player_1": True} and not any(truncs.values())
    assert infos["player_0"]["result"]["kind"] == "knock" and infos["player_0"]["active_agent"] is None
    assert env.agents == []
    with pytest.raises(gin_rummy_v0.EpisodeOverError, match="call reset"):
        env.step({"player_0": 0})


def test_a_missing_action_is_refused_and_an_illegal_one_raises_without_illegal_reward() -> None:
    env = gin_rummy_v0.parallel_env(illegal_reward=None)
    env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    before = env.state()
    with pytest.raises(ValueError, match="'player_1', the agent to move"):
        env.step({"player_0": gin_rummy_v0.PASS})
    with pytest.raises(IllegalActionError, match="draw_stock"):
        env.step({"player_1": gin_rummy_v0.DRAW_STOCK})
    assert np.array_equal(env.state(), before)


def test_an_illegal_action_ends_the_episode_with_illegal_reward_as_env_does(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The upcard offer: player_1 may only take the upcard or pass; drawing from the stock is illegal.
    env = gin_rummy_v0.parallel_env(illegal_reward=-3.5)
    env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    obs, rewards, terms, truncs, infos = env.step({"player_1": gin_rummy_v0.DRAW_STOCK})
    assert "Illegal move" in caplog.text  # PettingZoo's own warning, as env() gives it
    assert rewards == {"player_0": 0.0, "player_1": -3.5}
    assert terms == truncs == {"player_0": True, "player_1": True}
    assert env.agents == [] and set(obs) == {"player_0", "player_1"}
    assert infos["player_0"]["active_agent"] is None and infos["player_1"]["active_seat"] == -1
    with pytest.raises(gin_rummy_v0.EpisodeOverError, match="call reset"):
        env.step({"player_1": gin_rummy_v0.PASS})
    # The AEC face ends the same episode the same way.
    aec = gin_rummy_v0.env(illegal_reward=-3.5)
    aec.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    aec.step(gin_rummy_v0.DRAW_STOCK)
    assert aec.rewards == rewards and aec.terminations == terms and aec.truncations == truncs
    # An id outside the action space is not a move at all: refused, naming what is allowed.
    env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    with pytest.raises(gin_rummy_v0.UnknownActionError):
        env.step({"player_1": 999})
    with pytest.raises(ValueError, match="illegal_reward"):
        gin_rummy_v0.parallel_env(illegal_reward=float("nan"))


def test_always_taking_the_discard_truncates_through_the_parallel_api() -> None:
    env = gin_rummy_v0.parallel_env(mode="match", turn_limit=20)
    _, infos = env.reset(options={"deck": make_deck("As 2s 3s 7c 7d 7h 4h 5h 6h Kc", "", "2d")})
    steps = 0
    while env.agents:
        mover = infos["player_0"]["active_agent"]
        action = gin_rummy_v0.raw_env.action_id(take_the_discard(env.aec_env, mover))
        _, rewards, terms, truncs, infos = env.step({mover: action})
        steps += 1
        assert steps <= 40
    assert truncs == {"player_0": True, "player_1": True} and not any(terms.values())
    assert rewards == {"player_0": 0.0, "player_1": 0.0}
    assert infos["player_1"]["result"]["kind"] == "truncated"
    assert env.state_space.contains(env.state())
    assert env.state()[5] == 20  # draws


def test_step_before_reset_says_to_reset() -> None:
    env = gin_rummy_v0.parallel_env(settings=gin_rummy_v0.EnvSettings(mode="match"))
    assert env.aec_env.mode == "match" and env.metadata["is_parallelizable"]
    with pytest.raises(RuntimeError, match=r"call reset\(\) before step\(\)"):
        env.step({"player_0": 0})
