"""gin_rummy_v0.parallel_env(): PettingZoo's Parallel API test, a scripted hand (only the agent to
move acts), the no-op of the seat that cannot act (its one legal action, and its entry ignored
whatever it holds), truncation, state() and the errors after the episode and for a missing action."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test
from test_env import KNOCK_DECK, make_deck, take_the_discard

from ginenv import gin_rummy_v0
from ginenv.engine import IllegalActionError
from ginenv.layout import TO_MOVE

#: The mask of a seat that cannot act on the Parallel API: the no-op only.
NOOP_MASK = np.eye(gin_rummy_v0.NUM_ACTIONS, dtype=np.int8)[gin_rummy_v0.NOOP]


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
    assert names(obs["player_1"]) == {"draw_discard", "pass"} and names(obs["player_0"]) == {"pass"}
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
    assert all(np.array_equal(o["action_mask"], NOOP_MASK) for o in obs.values())  # both idle now
    with pytest.raises(gin_rummy_v0.EpisodeOverError, match="call reset"):
        env.step({"player_0": 0})


@pytest.mark.parametrize("mode", ["hand", "match"])
def test_a_seat_that_cannot_act_has_the_noop_only_and_all_else_is_the_aec_envs(mode: str) -> None:
    # Random legal play on both APIs side by side from one seed: the mover sees exactly what env()
    # shows it, the other seat the same observation vector with the no-op as its one legal action
    # where env()'s mask is all zero; once the episode is over both seats have the no-op only.
    # Random play deals dead hand after dead hand: a match of three hands at most.
    par = gin_rummy_v0.parallel_env(mode=mode, hand_limit=3)
    aec = gin_rummy_v0.raw_env(mode=mode, hand_limit=3)
    obs, infos = par.reset(seed=11)
    aec.reset(seed=11)
    rng = np.random.default_rng(11)
    steps = 0
    while par.agents:
        mover = aec.agent_selection
        assert infos[mover]["active_seat"] == gin_rummy_v0.AGENTS.index(mover)
        for agent in gin_rummy_v0.AGENTS:
            seen = aec.observe(agent)
            assert np.array_equal(obs[agent]["observation"], seen["observation"])
            if agent == mover:
                assert np.array_equal(obs[agent]["action_mask"], seen["action_mask"])
                assert obs[agent]["observation"][TO_MOVE] == 1
            else:
                assert np.array_equal(obs[agent]["action_mask"], NOOP_MASK) and not seen["action_mask"].any()
                assert obs[agent]["observation"][TO_MOVE] == 0
            assert par.observation_space(agent).contains(obs[agent])
        # Each seat draws from its own mask, as a library's sampler does: the idle one the no-op.
        actions = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in obs}
        assert actions[gin_rummy_v0.AGENTS[1 - gin_rummy_v0.AGENTS.index(mover)]] == gin_rummy_v0.NOOP
        obs, rewards, terms, truncs, infos = par.step(actions)
        aec.step(actions[mover])
        assert rewards == aec.rewards and terms == aec.terminations and truncs == aec.truncations
        steps += 1
    assert steps > 20 and all(np.array_equal(o["action_mask"], NOOP_MASK) for o in obs.values())
    assert all(not aec.observe(a)["action_mask"].any() for a in gin_rummy_v0.AGENTS)  # env() as before


@pytest.mark.parametrize("illegal_reward", [-1.0, None])
def test_the_idle_seats_entry_is_ignored_whatever_it_holds(illegal_reward: float | None) -> None:
    # The upcard offer to player_1: draw_discard and pass are legal for it, and ignored as
    # player_0's entry, as are an id the rules refuse, an id outside the space, None and no entry:
    # each gives the step the no-op gives, and none ends the episode or raises as an illegal action.
    aid = gin_rummy_v0.raw_env.action_id
    results = []
    entries = [gin_rummy_v0.NOOP, aid("draw_discard"), aid("knock Kc"), aid("draw_stock"), 999, None]
    for idle in [{"player_0": entry} for entry in entries] + [{}]:
        env = gin_rummy_v0.parallel_env(illegal_reward=illegal_reward)
        env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
        obs, rewards, terms, truncs, _ = env.step({"player_1": aid("draw_discard")} | idle)
        assert not any(terms.values()) and not any(truncs.values())
        assert env.agents == list(gin_rummy_v0.AGENTS)
        results.append((env.state(), {a: o["action_mask"] for a, o in obs.items()}, rewards))
    for state, masks, rewards in results[1:]:
        assert np.array_equal(state, results[0][0]) and rewards == results[0][2]
        assert all(np.array_equal(masks[a], results[0][1][a]) for a in masks)
    # player_1 took the upcard and discards next: player_0 is still idle.
    assert np.array_equal(results[0][1]["player_0"], NOOP_MASK)


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
    assert all(np.array_equal(o["action_mask"], NOOP_MASK) for o in obs.values())  # nobody acts now
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
