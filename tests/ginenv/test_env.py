"""The PettingZoo env gin_rummy_v0: API conformance, seeding, scripted hands of every result kind,
the turn protocol, rewards and infos in both modes, illegal actions, deck options and rendering.

Hands are scripted by card names and action names; decks are built from named hands (cards 0-9 to
the non-dealer, 10-19 to the dealer, 20 the upcard, 21.. the stock with 21 drawn first).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, seed_test

from ginenv import gin_rummy_v0
from ginenv.actions import UnknownActionError
from ginenv.cards import CARD_NAMES, parse_cards
from ginenv.engine import DeckError, IllegalActionError
from ginenv.observation import KNOCK_LIMIT, OBS_SIZE, ORACLE_OBS_SIZE, decode, plane_slice
from ginenv.rules import Rules
from ginenv.settings import EnvKwargs, EnvSettings, RenderModeError


def make_deck(non_dealer: str, dealer: str, upcard: str, stock: str = "") -> list[str]:
    """A 52-card dealing order from named hands; the unnamed cards follow the named stock."""
    named = parse_cards(f"{non_dealer} {dealer} {upcard} {stock}")
    rest = [c for c in range(52) if c not in set(named)]
    return [CARD_NAMES[c] for c in named + rest]


def play(env, script: list[tuple[str, str]]) -> None:
    """Apply ``(agent, action name)`` pairs, checking that each agent is the one to move."""
    for agent, name in script:
        assert env.agent_selection == agent, f"expected {agent} to move before {name!r}"
        obs = env.observe(agent)
        action = env.unwrapped.action_id(name)
        assert obs["action_mask"][action] == 1, f"{name!r} should be legal for {agent}"
        env.step(action)


def legal_names(env, agent: str) -> set[str]:
    mask = env.observe(agent)["action_mask"]
    return {env.unwrapped.action_name(int(a)) for a in np.flatnonzero(mask)}


# Scenario hands. player_1 is the non-dealer when player_0 deals (dealer=0).
KNOCKER = "As 2s 3s 7c 7d 7h 4h 5h 6h Kc"  # deadwood Kc once the melds are counted
LAYOFF_DEFENDER = "3h 2h 7s 4s Qd Qs Kd 9c Td 5c"  # can lay off 2h 3h, 7s and 4s
KNOCK_DECK = make_deck(KNOCKER, LAYOFF_DEFENDER, "2d", "3d")
UNDERCUT_DECK = make_deck(KNOCKER, "9s 9c 9d Js Jc Jd 2c 3c 4c 5d", "8d")
# Run 8-9-T of spades, deadwood 49; its 3h would lay off on 4h-5h-6h after a plain knock.
GIN_DEFENDER = "8s 9s Ts 2c 5c 9c Jd Qh Kh 3h"
GIN_DECK = make_deck(KNOCKER, GIN_DEFENDER, "Qd", "7s")
BIG_GIN_DECK = make_deck("As 2s 3s 4s 7c 7d 7h Jd Qd Kd", "8s 9s Ts 2c 5c 9c Jh Qh 3h 5d", "Kh", "7s")


# ---------------------------------------------------------------------------- PettingZoo conformance


@pytest.mark.parametrize("mode", ["hand", "match"])
def test_api_test_wrapped_and_raw(mode: str) -> None:
    with warnings.catch_warnings():
        # api_test resets with options={"options": 1}: the env warns that it ignores the key.
        warnings.simplefilter("ignore")
        api_test(gin_rummy_v0.env(mode=mode), num_cycles=300)
        api_test(gin_rummy_v0.raw_env(mode=mode), num_cycles=300)


@pytest.mark.parametrize("mode", ["hand", "match"])
def test_seed_test(mode: str) -> None:
    seed_test(lambda: gin_rummy_v0.env(mode=mode, rules=Rules(target=40)), num_cycles=300)


def test_unknown_reset_option_warns() -> None:
    env = gin_rummy_v0.env()
    with pytest.warns(UserWarning, match="ignores unknown option"):
        env.reset(seed=0, options={"dealr": 1})


def test_spaces_and_names() -> None:
    env = gin_rummy_v0.env()
    env.reset(seed=0)
    assert env.possible_agents == ["player_0", "player_1"]
    assert env.action_space("player_0").n == gin_rummy_v0.NUM_ACTIONS == 108
    space = env.observation_space("player_1")
    assert space["observation"].shape == (OBS_SIZE,)
    assert space["action_mask"].dtype == np.int8
    u = env.unwrapped
    assert [u.action_id(u.action_name(a)) for a in range(108)] == list(range(108))
    assert u.action_name(np.int64(0)) == "draw_stock"
    assert u.action_name(gin_rummy_v0.DISCARD_BASE + parse_cards("7h")[0]) == "discard 7h"
    assert u.action_id("knock 10h") == u.action_id("knock Th") == gin_rummy_v0.KNOCK_BASE + 48
    assert u.action_id("big_gin") == gin_rummy_v0.BIG_GIN
    with pytest.raises(UnknownActionError):
        u.action_id("discard 1z")


def test_reset_seed_reproduces_the_deal_and_seeds_differ() -> None:
    env = gin_rummy_v0.env()
    env.reset(seed=11)
    first = (env.unwrapped.hand.deck, env.unwrapped.hand.dealer)
    obs = env.observe(env.agent_selection)["observation"]
    env.reset(seed=11)
    assert (env.unwrapped.hand.deck, env.unwrapped.hand.dealer) == first
    assert np.array_equal(env.observe(env.agent_selection)["observation"], obs)
    env.reset(seed=12)
    assert env.unwrapped.hand.deck != first[0]
    env.reset()  # no seed: the generator carries on
    assert env.unwrapped.hand.deck != first[0]


def test_configuration_survives_seeded_resets() -> None:
    rules = Rules(knock_limit=5, target=60)
    env = gin_rummy_v0.env(rules=rules, mode="match", reward_scale=0.5, oracle=True, dealer=1)
    for seed in (1, 2, None):
        env.reset(seed=seed)
        u = env.unwrapped
        assert (u.rules, u.mode, u.reward_scale, u.oracle) == (rules, "match", 0.5, True)
        assert u.hand.dealer == 1
        obs = env.observe(env.agent_selection)["observation"]
        assert obs.shape == (ORACLE_OBS_SIZE,)
        assert obs[KNOCK_LIMIT] == 5
        assert env.infos["player_0"]["scores"] == [0, 0]


# ---------------------------------------------------------------------------- settings


def test_settings_hold_the_defaults_and_normalise() -> None:
    s = EnvSettings()
    assert (s.rules, s.mode, s.render_mode, s.reward_scale, s.oracle, s.dealer) == (
        Rules(),
        "hand",
        None,
        1.0,
        False,
        None,
    )
    assert (s.turn_limit, s.hand_limit) == (gin_rummy_v0.DEFAULT_TURN_LIMIT, gin_rummy_v0.DEFAULT_HAND_LIMIT)
    s = EnvSettings(rules=None, reward_scale=np.float32(2), dealer="player_1", turn_limit=np.int64(30))
    assert s.rules == Rules() and s.dealer == 1 and s.turn_limit == 30
    assert type(s.reward_scale) is float and type(s.turn_limit) is int
    assert EnvSettings(dealer=np.int8(0)).dealer == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.mode = "match"  # type: ignore[misc]
    assert hash(s) == hash(dataclasses.replace(s)) and s == eval(
        repr(s), vars(gin_rummy_v0) | {"Rules": Rules}
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"rules": {"knock_limit": 5}}, TypeError, "rules must be a ginenv.rules.Rules"),
        ({"mode": "tournament"}, ValueError, "mode must be 'hand' or 'match'"),
        ({"render_mode": "rgb_array"}, RenderModeError, "render_mode must be None, 'ansi' or 'human'"),
        ({"reward_scale": float("inf")}, ValueError, "reward_scale must be a finite number"),
        ({"reward_scale": True}, TypeError, "reward_scale must be a finite number"),
        ({"oracle": 1}, TypeError, "oracle must be True or False"),
        ({"dealer": True}, ValueError, "dealer must be 0, 1, 'player_0' or 'player_1'"),
        ({"dealer": 2}, ValueError, "dealer must be 0, 1"),
        ({"turn_limit": 0}, ValueError, "turn_limit must be a positive integer"),
        ({"turn_limit": True}, ValueError, "turn_limit"),
        ({"hand_limit": 2.0}, ValueError, "hand_limit must be a positive integer"),
    ],
)
def test_every_face_refuses_a_bad_setting_alike(kwargs: dict, error: type, message: str) -> None:
    from ginenv.wrappers import SingleAgentEnv

    faces = [EnvSettings, gin_rummy_v0.env, gin_rummy_v0.raw_env, gin_rummy_v0.parallel_env]
    faces.append(lambda **kw: SingleAgentEnv(opponent="random", **kw))
    for face in faces:
        with pytest.raises(error, match=message):
            face(**kwargs)
    with pytest.raises(error, match=message):
        dataclasses.replace(EnvSettings(), **kwargs)


def test_settings_or_keywords_or_both_build_the_same_env() -> None:
    from ginenv.wrappers import SingleAgentEnv

    base = EnvSettings(rules=Rules(target=40), mode="match", dealer=1)
    assert gin_rummy_v0.env(settings=base).unwrapped.settings is base
    by_keywords = gin_rummy_v0.raw_env(rules=Rules(target=40), mode="match", dealer=1)
    assert by_keywords.settings == base
    assert (by_keywords.rules, by_keywords.mode, by_keywords.dealer) == (Rules(target=40), "match", 1)
    # Keywords replace those fields of the settings given, and are checked again.
    both = gin_rummy_v0.parallel_env(settings=base, render_mode="ansi", dealer="player_0")
    assert both.aec_env.settings == dataclasses.replace(base, render_mode="ansi", dealer=0)
    assert both.render_mode == "ansi"
    single = SingleAgentEnv(opponent="random", settings=base, reward_scale=0.5)
    assert single.env.settings == dataclasses.replace(base, reward_scale=0.5)
    assert base.mode == "match" and base.reward_scale == 1.0  # unchanged
    for face in (gin_rummy_v0.env, gin_rummy_v0.raw_env, gin_rummy_v0.parallel_env, SingleAgentEnv):
        with pytest.raises(TypeError, match=r"unknown env setting.*the settings are rules, mode"):
            face(turn_limt=10)
        with pytest.raises(TypeError, match=r"settings must be a ginenv\.settings\.EnvSettings"):
            face(settings={"mode": "match"})
    with pytest.raises(TypeError, match="illegal_reward"):
        gin_rummy_v0.raw_env(illegal_reward=-1.0)  # env() only


def test_the_keyword_types_name_every_setting() -> None:
    assert list(EnvKwargs.__annotations__) == [f.name for f in dataclasses.fields(EnvSettings)]


def test_dealer_is_drawn_from_the_seed_by_default() -> None:
    env = gin_rummy_v0.raw_env()
    dealers = set()
    for seed in range(20):
        env.reset(seed=seed)
        dealers.add(env.hand.dealer)
        # The non-dealer decides first.
        assert env.agent_selection == gin_rummy_v0.AGENTS[1 - env.hand.dealer]
    assert dealers == {0, 1}


# ---------------------------------------------------------------------------- deck options


def test_given_deck_is_dealt_in_order() -> None:
    env = gin_rummy_v0.env()
    env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    hand = env.unwrapped.hand
    assert hand.hands[1] == sum(1 << c for c in parse_cards(KNOCKER))
    assert hand.hands[0] == sum(1 << c for c in parse_cards(LAYOFF_DEFENDER))
    view = decode(env.observe("player_1")["observation"])
    assert view.top == parse_cards("2d")[0]
    assert view.stock_size == 31
    env.reset(options={"deck": KNOCK_DECK, "dealer": "player_1"})
    assert env.unwrapped.hand.hands[0] == sum(1 << c for c in parse_cards(KNOCKER))


@pytest.mark.parametrize(
    "deck, message",
    [
        (KNOCK_DECK[:51], "51 cards"),
        ([*KNOCK_DECK[:51], "As"], "appears twice"),
        ([*KNOCK_DECK[:51], "Xx"], "unknown card"),
        (" ".join(KNOCK_DECK), "list of 52"),
    ],
)
def test_malformed_deck_is_refused_and_changes_nothing(deck: object, message: str) -> None:
    env = gin_rummy_v0.env()
    env.reset(seed=5)
    before = env.observe(env.agent_selection)
    with pytest.raises(DeckError, match=message):
        env.reset(options={"deck": deck})
    after = env.observe(env.agent_selection)
    assert np.array_equal(before["observation"], after["observation"])


def test_bad_dealer_option_is_refused() -> None:
    env = gin_rummy_v0.env()
    with pytest.raises(ValueError, match="dealer must be"):
        env.reset(options={"dealer": 2})


# ---------------------------------------------------------------------------- turn protocol


def test_upcard_passed_by_both_forces_a_stock_draw() -> None:
    env = gin_rummy_v0.env()
    env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    assert legal_names(env, "player_1") == {"draw_discard", "pass"}
    assert not env.observe("player_0")["action_mask"].any()  # not its turn
    play(env, [("player_1", "pass")])
    assert legal_names(env, "player_0") == {"draw_discard", "pass"}
    play(env, [("player_0", "pass")])
    assert legal_names(env, "player_1") == {"draw_stock"}
    play(env, [("player_1", "draw_stock")])
    names = legal_names(env, "player_1")
    # Kc or 3d may go with a knock (deadwood 3 or 10); breaking the sevens may not (27).
    assert {"discard 3d", "knock Kc", "knock 3d", "discard 7c"} <= names and "knock 7c" not in names


def test_upcard_taken_cannot_be_discarded_then_turns_alternate() -> None:
    env = gin_rummy_v0.raw_env()
    env.reset(options={"deck": UNDERCUT_DECK, "dealer": 0})
    play(env, [("player_1", "draw_discard")])
    names = legal_names(env, "player_1")
    assert "discard 8d" not in names and "knock 8d" not in names
    assert {"discard Kc", "knock Kc"} <= names
    play(env, [("player_1", "discard Kc")])
    # The dealer now draws normally: stock or the Kc just thrown.
    assert legal_names(env, "player_0") == {"draw_stock", "draw_discard"}


def test_dealer_may_take_the_upcard_after_a_pass() -> None:
    env = gin_rummy_v0.raw_env()
    env.reset(options={"deck": UNDERCUT_DECK, "dealer": 0})
    play(env, [("player_1", "pass"), ("player_0", "draw_discard")])
    assert "discard 8d" not in legal_names(env, "player_0")
    play(env, [("player_0", "discard Jd")])
    assert env.agent_selection == "player_1"
    assert legal_names(env, "player_1") == {"draw_stock", "draw_discard"}


# ---------------------------------------------------------------------------- result kinds


def finished(env, agent: str = "player_0") -> dict:
    assert all(env.terminations.values())
    return env.infos[agent]["result"]


def test_knock_with_layoffs() -> None:
    env = gin_rummy_v0.env(render_mode="ansi")
    env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    play(
        env,
        [("player_1", "pass"), ("player_0", "pass"), ("player_1", "draw_stock"), ("player_1", "knock Kc")],
    )
    result = finished(env)
    # Knocker: [As 2s 3s] [7c 7d 7h] [4h 5h 6h], deadwood 3d = 3. The defender lays off 2h 3h on
    # the heart run, 7s on the sevens and 4s on the spade run, leaving Qd Qs Kd 9c Td 5c = 54.
    assert result["kind"] == "knock"
    assert (result["winner"], result["knocker"]) == ("player_1", "player_1")
    assert result["deadwood"] == [54, 3]
    assert result["points"] == 51
    assert result["layoffs"] == ["4s", "7s", "2h", "3h"]
    assert result["showdown"][1]["melds"] == [["As", "2s", "3s"], ["7c", "7d", "7h"], ["4h", "5h", "6h"]]
    assert result["showdown"][1]["deadwood_cards"] == ["3d"]
    assert env.rewards == {"player_0": -51.0, "player_1": 51.0}
    assert env.infos["player_1"]["result"] == result
    text = env.render()
    assert "showdown: player_1 knocks" in text
    assert "player_0 lays off 3h on [4h 5h 6h]" in text
    assert "player_0 lays off 7s on [7c 7d 7h]" in text
    assert "result: knock, player_1 scores 51" in text


def test_undercut() -> None:
    env = gin_rummy_v0.env()
    env.reset(options={"deck": UNDERCUT_DECK, "dealer": 0})
    play(env, [("player_1", "draw_discard"), ("player_1", "knock Kc")])
    result = finished(env, "player_1")
    # Knocker deadwood 8 (8d); the defender melds 999 JJJ 2-3-4c and keeps 5d: 8 - 5 + 25.
    assert (result["kind"], result["winner"], result["knocker"]) == ("undercut", "player_0", "player_1")
    assert result["deadwood"] == [5, 8]
    assert result["points"] == 28
    assert env.rewards == {"player_0": 28.0, "player_1": -28.0}


def test_gin_has_no_layoffs() -> None:
    env = gin_rummy_v0.env(reward_scale=0.01)
    env.reset(options={"deck": GIN_DECK, "dealer": 0})
    play(
        env,
        [("player_1", "pass"), ("player_0", "pass"), ("player_1", "draw_stock"), ("player_1", "knock Kc")],
    )
    result = finished(env)
    assert (result["kind"], result["winner"]) == ("gin", "player_1")
    assert result["deadwood"] == [49, 0]
    assert result["points"] == 25 + 49
    assert result["layoffs"] == []  # 3h stays deadwood: no layoffs against gin
    assert env.rewards == pytest.approx({"player_0": -0.74, "player_1": 0.74})


def test_big_gin_when_enabled() -> None:
    env = gin_rummy_v0.env(rules=Rules(big_gin_bonus=31))
    env.reset(options={"deck": BIG_GIN_DECK, "dealer": 0})
    play(env, [("player_1", "pass"), ("player_0", "pass"), ("player_1", "draw_stock")])
    assert "big_gin" in legal_names(env, "player_1")
    play(env, [("player_1", "big_gin")])
    result = finished(env)
    assert (result["kind"], result["winner"]) == ("big_gin", "player_1")
    assert result["deadwood"] == [44, 0]
    assert result["points"] == 31 + 44
    assert len(result["showdown"][1]["melds"]) == 3


def test_big_gin_is_not_offered_by_default() -> None:
    env = gin_rummy_v0.env()
    env.reset(options={"deck": BIG_GIN_DECK, "dealer": 0})
    play(env, [("player_1", "pass"), ("player_0", "pass"), ("player_1", "draw_stock")])
    names = legal_names(env, "player_1")
    assert "big_gin" not in names and "knock 4s" in names  # gin with 10 cards is still there


def test_dead_hand_when_the_stock_runs_down() -> None:
    deck = make_deck(KNOCKER, LAYOFF_DEFENDER, "2d")
    env = gin_rummy_v0.env(render_mode="ansi")
    env.reset(options={"deck": deck, "dealer": 0})
    play(env, [("player_1", "pass"), ("player_0", "pass")])
    agent = "player_1"
    # Each turn draws the next stock card and throws it straight back: 29 turns leave 2 cards.
    for i in range(29):
        card = deck[21 + i]
        assert not any(env.terminations.values())
        play(env, [(agent, "draw_stock"), (agent, f"discard {card}")])
        agent = "player_0" if agent == "player_1" else "player_1"
    result = finished(env)
    assert result["kind"] == "dead"
    assert (result["winner"], result["knocker"], result["points"], result["showdown"]) == (
        None,
        None,
        0,
        None,
    )
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0}
    assert env.unwrapped.hand.stock.__len__() == 2
    assert "dead hand" in env.render()


# ---------------------------------------------------------------------------- episode end, rewards, infos


def test_hand_mode_episode_ends_and_agents_leave() -> None:
    env = gin_rummy_v0.env()
    env.reset(options={"deck": UNDERCUT_DECK, "dealer": 0})
    assert env.infos["player_0"] == {"hand_index": 0, "dealer": 0}
    play(env, [("player_1", "draw_discard"), ("player_1", "knock Kc")])
    returns = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        assert term and not trunc
        assert not obs["action_mask"].any()
        assert info["result"]["kind"] == "undercut"
        returns[agent] = reward
        env.step(None)
    assert returns == {"player_0": 28.0, "player_1": -28.0}
    assert env.agents == []


def test_infos_do_not_change_during_a_hand() -> None:
    env = gin_rummy_v0.env()
    env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    before = {a: dict(i) for a, i in env.infos.items()}
    play(env, [("player_1", "pass"), ("player_0", "pass"), ("player_1", "draw_stock")])
    assert env.infos == before
    assert "result" not in env.infos["player_0"]


def test_match_mode_rewards_sum_to_the_final_margin() -> None:
    rules = Rules(target=100, game_bonus=100, line_bonus=25, shutout_multiplier=2)
    env = gin_rummy_v0.env(rules=rules, mode="match", render_mode="ansi")
    # Dealers alternate 0, 1, 0: player_1 knocks (51), then player_0 goes gin (74), then player_1 (74).
    env.reset(options={"decks": [KNOCK_DECK, GIN_DECK, GIN_DECK], "dealer": 0})
    returns = {"player_0": 0.0, "player_1": 0.0}

    def collect() -> None:
        for a in returns:
            returns[a] += env.rewards[a]

    play(
        env,
        [("player_1", "pass"), ("player_0", "pass"), ("player_1", "draw_stock"), ("player_1", "knock Kc")],
    )
    collect()
    info = env.infos["player_0"]
    assert info["result"]["kind"] == "knock" and info["result"]["hand_index"] == 0
    assert info["scores"] == [0, 51] and info["hand_index"] == 1 and info["dealer"] == 1
    assert not any(env.terminations.values())
    assert env.rewards == {"player_0": -51.0, "player_1": 51.0}
    # The next deal is shown under the finished hand's showdown.
    text = env.render()
    assert "showdown: player_1 knocks" in text and "hand 1 - player_0 0, player_1 51 (target 100)" in text
    view = decode(env.observe("player_0")["observation"])
    assert (view.own_score, view.opponent_score, view.target, view.stock_size) == (0, 51, 100, 31)
    assert view.opponent_discarded == 0 and view.own_passed == 0  # a fresh hand's record

    play(
        env,
        [("player_0", "pass"), ("player_1", "pass"), ("player_0", "draw_stock"), ("player_0", "knock Kc")],
    )
    collect()
    assert env.infos["player_1"]["result"]["kind"] == "gin"
    assert env.infos["player_1"]["scores"] == [74, 51]

    play(
        env,
        [("player_1", "pass"), ("player_0", "pass"), ("player_1", "draw_stock"), ("player_1", "knock Kc")],
    )
    collect()
    assert all(env.terminations.values())
    final = env.infos["player_0"]["result"]["match_result"]
    # player_1: 125 points, game 100 + 2 lines; player_0: 74 points + 1 line. No shutout.
    assert final["winner"] == "player_1"
    assert final["points"] == [74, 125]
    assert final["bonuses"] == [25, 150]
    assert final["totals"] == [99, 275]
    assert final["margin"] == 176
    assert env.rewards == {"player_0": -74.0 - 125.0, "player_1": 74.0 + 125.0}
    assert returns == {"player_0": -176.0, "player_1": 176.0}
    assert "match over: player_1 wins" in env.render()


def test_match_shutout_bonus_in_last_reward() -> None:
    rules = Rules(target=50, game_bonus=100, line_bonus=25, shutout_multiplier=2)
    env = gin_rummy_v0.env(rules=rules, mode="match")
    env.reset(options={"deck": GIN_DECK, "dealer": 0})
    play(
        env,
        [("player_1", "pass"), ("player_0", "pass"), ("player_1", "draw_stock"), ("player_1", "knock Kc")],
    )
    assert all(env.terminations.values())
    # 74 points, then (100 + 25) doubled by the shutout.
    assert env.rewards == {"player_0": -324.0, "player_1": 324.0}
    assert env.infos["player_1"]["result"]["match_result"]["shutout"] is True


# ---------------------------------------------------------------------------- illegal actions


def snapshot(env) -> tuple:
    u = env.unwrapped
    obs = [env.observe(a) for a in u.possible_agents]
    return (
        u.agent_selection,
        len(u.hand.history),
        dict(u.rewards),
        dict(u._cumulative_rewards),
        [o["observation"].tobytes() + o["action_mask"].tobytes() for o in obs],
    )


def test_raw_env_refuses_illegal_actions_and_changes_nothing() -> None:
    env = gin_rummy_v0.raw_env()
    env.reset(options={"deck": UNDERCUT_DECK, "dealer": 0})
    play(env, [("player_1", "draw_discard")])
    before = snapshot(env)
    with pytest.raises(
        IllegalActionError, match=r"player_1: 'discard 8d' \(id 37\) is not legal.*discard Kc"
    ):
        env.step(env.action_id("discard 8d"))
    with pytest.raises(IllegalActionError, match="draw_stock"):
        env.step(env.action_id("draw_stock"))
    with pytest.raises(UnknownActionError, match=r"0\.\.107"):
        env.step(108)
    with pytest.raises(UnknownActionError):
        env.step(None)
    with pytest.raises(UnknownActionError):
        env.step(3.0)  # type: ignore[arg-type]
    assert snapshot(env) == before
    env.step(np.int32(env.action_id("discard Kc")))  # numpy integers are fine
    assert env.agent_selection == "player_0"


def test_wrapped_env_ends_the_episode_on_an_illegal_action(caplog: pytest.LogCaptureFixture) -> None:
    env = gin_rummy_v0.env(illegal_reward=-5.0)
    env.reset(options={"deck": UNDERCUT_DECK, "dealer": 0})
    env.step(env.unwrapped.action_id("draw_stock"))  # not offered during the upcard offer
    assert "Illegal move" in caplog.text  # PettingZoo's logger, not an exception
    assert all(env.terminations.values()) and all(env.truncations.values())
    rewards = {}
    for agent in env.agent_iter():
        _, reward, term, trunc, _ = env.last()
        assert term and trunc
        rewards[agent] = reward
        env.step(None)
    assert rewards == {"player_0": 0.0, "player_1": -5.0}


def test_wrapped_env_asserts_out_of_range_actions() -> None:
    env = gin_rummy_v0.env()
    env.reset(seed=0)
    with pytest.raises(AssertionError, match="action space"):
        env.step(200)
    with pytest.raises(AssertionError):
        env.step(-1)


def test_wrapped_env_enforces_reset_first() -> None:
    env = gin_rummy_v0.env()
    with pytest.raises(AttributeError, match="before reset"):
        _ = env.agent_selection
    env.reset(seed=0)
    assert env.agent_selection in env.possible_agents


def test_wrapped_env_refuses_everything_but_reset_before_reset() -> None:
    env = gin_rummy_v0.env()
    assert str(env) == "gin_rummy_v0" and env.possible_agents == ["player_0", "player_1"]
    for name in (
        "agents",
        "num_agents",
        "rewards",
        "terminations",
        "truncations",
        "infos",
        "_cumulative_rewards",
    ):
        with pytest.raises(AttributeError, match=f"{name} cannot be accessed before reset"):
            getattr(env, name)
    with pytest.raises(AttributeError, match="before reset"):
        env.last()
    calls = {
        "step": lambda: env.step(0),
        "observe": lambda: env.observe("player_0"),
        "state": env.state,
        "render": env.render,
        "agent_iter": env.agent_iter,
    }
    for name, call in calls.items():
        with pytest.raises(AssertionError, match=f"reset\\(\\) needs to be called before {name}"):
            call()
    with pytest.raises(DeckError):
        env.reset(options={"deck": ["As"]})  # a failed first reset: still not reset
    with pytest.raises(AttributeError, match="before reset"):
        _ = env.agents
    env.reset(seed=0)
    assert env.num_agents == 2 and env.state().shape == (gin_rummy_v0.STATE_SIZE,)


def test_agent_iter_asserts_a_step_per_agent() -> None:
    env = gin_rummy_v0.env()
    env.reset(seed=0)
    agents = env.agent_iter()
    next(agents)
    with pytest.raises(AssertionError, match="need to call step"):
        next(agents)
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    assert next(agents) == env.agent_selection
    assert list(env.agent_iter(max_iter=0)) == []


def pettingzoo_chain(illegal_reward: float, **settings) -> object:
    """raw_env in PettingZoo's own three wrappers, as its classic envs build env()."""
    from pettingzoo.utils.wrappers import (
        AssertOutOfBoundsWrapper,
        OrderEnforcingWrapper,
        TerminateIllegalWrapper,
    )

    raw = gin_rummy_v0.raw_env(**settings)
    return OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(raw, illegal_reward)))


def same_step_view(ours, theirs) -> None:
    assert ours.agents == theirs.agents
    if not theirs.agents:
        return
    assert ours.agent_selection == theirs.agent_selection
    for name in ("rewards", "terminations", "truncations", "infos"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.unwrapped._cumulative_rewards == theirs.unwrapped._cumulative_rewards
    (obs, *rest), (want, *want_rest) = ours.last(), theirs.last()
    assert rest == want_rest
    assert all(np.array_equal(obs[k], want[k]) for k in ("observation", "action_mask"))


@pytest.mark.skipif(
    tuple(int(p) for p in pettingzoo.__version__.split(".")[:3]) < (1, 24, 3),
    reason="PettingZoo before 1.24.3 keeps an illegal move's termination on its wrapper, not on the env, "
    "so the env's own observations and masks do not show it (env() follows 1.24.3 and later)",
)
@pytest.mark.parametrize("mode", ["hand", "match"])
def test_the_wrapper_chain_behaves_as_pettingzoos_own_wrappers(mode: str) -> None:
    # Random play with now and then an illegal action (ending the episode) or one out of range
    # (an assertion, nothing changes), through env() and through PettingZoo's own wrapper classes.
    rng = np.random.default_rng(5)
    illegal_ends = 0
    for episode in range(25):
        settings = {"mode": mode, "hand_limit": 2, "turn_limit": 40}
        ours, theirs = gin_rummy_v0.env(illegal_reward=-3.0, **settings), pettingzoo_chain(-3.0, **settings)
        for env in (ours, theirs):
            env.reset(seed=episode)
        same_step_view(ours, theirs)
        while theirs.agents:
            observation, _, term, trunc, _ = theirs.last()
            roll = rng.random()
            if term or trunc:
                action = None
            elif roll < 0.01:
                action = int(rng.choice([-1, 108, 200]))
                for env in (ours, theirs):
                    with pytest.raises(AssertionError, match="action space"):
                        env.step(action)
                same_step_view(ours, theirs)
                continue
            elif roll < 0.02:
                action = int(rng.integers(108))  # usually illegal
                illegal_ends += not observation["action_mask"][action]
            else:
                action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
                if roll > 0.9:
                    action = np.int64(action)
            for env in (ours, theirs):
                env.step(action)
            same_step_view(ours, theirs)
        assert ours.agents == [] and ours.unwrapped.state().tobytes() == theirs.unwrapped.state().tobytes()
    assert illegal_ends > 0


# ---------------------------------------------------------------------------- observation and oracle


def test_oracle_shows_the_opponent_hand_only_when_asked() -> None:
    plain = gin_rummy_v0.env()
    oracle = gin_rummy_v0.env(oracle=True)
    for env in (plain, oracle):
        env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    assert oracle.observation_space("player_0")["observation"].shape == (ORACLE_OBS_SIZE,)
    assert plain.observation_space("player_0")["observation"].shape == (OBS_SIZE,)
    seen = oracle.observe("player_1")["observation"][plane_slice("opponent_hand")]
    assert {CARD_NAMES[c] for c in np.flatnonzero(seen)} == set(LAYOFF_DEFENDER.split())
    base = oracle.observe("player_1")["observation"][:OBS_SIZE]
    assert np.array_equal(base, plain.observe("player_1")["observation"])
    assert decode(plain.observe("player_1")["observation"]).opponent_hand is None


# ---------------------------------------------------------------------------- rendering


def test_render_ansi_frames_melds_and_shows_the_table() -> None:
    env = gin_rummy_v0.env(render_mode="ansi")
    env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    play(env, [("player_1", "pass"), ("player_0", "pass"), ("player_1", "draw_stock")])
    text = env.render()
    assert "│ As 2s 3s │" in text and "│ 7c 7d 7h │" in text and "│ 4h 5h 6h │" in text
    assert "Kc 3d  deadwood 13; best discard Kc -> deadwood 3 (can knock)" in text
    assert "discard pile: top 2d" in text
    assert "stock: 30 cards" in text
    assert "last action: player_1 draw_stock" in text


def test_render_human_prints_each_step(capsys: pytest.CaptureFixture[str]) -> None:
    env = gin_rummy_v0.env(render_mode="human")
    env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    play(env, [("player_1", "pass")])
    out = capsys.readouterr().out
    assert "last action: player_1 pass" in out and "upcard offer to the dealer" in out


def test_render_without_mode_warns_and_returns_none() -> None:
    env = gin_rummy_v0.env()
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None


def test_bad_constructor_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="mode"):
        gin_rummy_v0.env(mode="tournament")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="render_mode"):
        gin_rummy_v0.env(render_mode="rgb_array")
    with pytest.raises(TypeError, match="rules"):
        gin_rummy_v0.env(rules={"knock_limit": 5})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        gin_rummy_v0.env(reward_scale=float("nan"))


# ---------------------------------------------------------------------------- truncation (turn limit)


def take_the_discard(env, agent: str) -> str:
    """Always take the upcard or top discard; otherwise throw the lowest card allowed (never knock)."""
    names = legal_names(env, agent)
    if "draw_discard" in names:
        return "draw_discard"
    discards = [n for n in names if n.startswith("discard ")]
    return min(discards, key=lambda n: parse_cards(n.split()[1])[0])


@pytest.mark.parametrize("mode", ["hand", "match"])
def test_players_who_always_take_the_discard_are_truncated(mode: str) -> None:
    # Two players cycling cards through the discard pile never empty the stock: before the turn
    # limit this episode never ended.
    env = gin_rummy_v0.env(mode=mode)
    env.reset(seed=0, options={"deck": KNOCK_DECK, "dealer": 0})
    steps, ended = 0, {}
    for agent in env.agent_iter(max_iter=10_000):
        _, reward, termination, truncation, info = env.last()
        if termination or truncation:
            ended[agent] = (termination, truncation, reward, info["result"])
            env.step(None)
            continue
        env.step(env.unwrapped.action_id(take_the_discard(env, agent)))
        steps += 1
    assert steps == 2 * gin_rummy_v0.DEFAULT_TURN_LIMIT  # a draw and a discard per turn
    assert env.agents == []
    for termination, truncation, reward, result in ended.values():
        assert (termination, truncation, reward) == (False, True, 0.0)
        assert (result["kind"], result["winner"], result["points"], result["showdown"]) == (
            "truncated",
            None,
            0,
            None,
        )
        assert "match_result" not in result
    assert set(ended) == {"player_0", "player_1"}
    assert env.unwrapped.hand.draws == gin_rummy_v0.DEFAULT_TURN_LIMIT
    if mode == "match":
        assert env.unwrapped.match.truncated and env.unwrapped.match.result is None


def test_turn_limit_is_an_option_that_survives_reset() -> None:
    env = gin_rummy_v0.env(turn_limit=3, render_mode="ansi", mode="match")
    for seed in (1, 2):
        env.reset(seed=seed, options={"deck": KNOCK_DECK, "dealer": 0})
        assert env.unwrapped.hand.turn_limit == 3
        # Upcard taken (draw 1), then two turns of taking the discard (draws 2 and 3).
        for _ in range(6):
            agent = env.agent_selection
            assert not env.truncations[agent]
            play(env, [(agent, take_the_discard(env, agent))])
        assert all(env.truncations.values()) and not any(env.terminations.values())
    text = env.render()
    assert "truncated at the turn limit (3 draws, limit 3); no showdown, no score" in text
    assert "match truncated" in text
    with pytest.raises(ValueError, match="turn_limit must be a positive integer"):
        gin_rummy_v0.env(turn_limit=0)
    with pytest.raises(ValueError, match="turn_limit"):
        gin_rummy_v0.raw_env(turn_limit=2.5)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- no hidden cards without a showdown


def test_a_dead_hand_shows_each_seat_only_its_own_deadwood() -> None:
    deck = make_deck(KNOCKER, LAYOFF_DEFENDER, "2d")
    env = gin_rummy_v0.env(render_mode="ansi")
    env.reset(options={"deck": deck, "dealer": 0})
    play(env, [("player_1", "pass"), ("player_0", "pass")])
    agent = "player_1"
    for i in range(29):
        play(env, [(agent, "draw_stock"), (agent, f"discard {deck[21 + i]}")])
        agent = "player_0" if agent == "player_1" else "player_1"
    hand = env.unwrapped.hand
    own = hand.result.deadwood
    assert env.infos["player_0"]["result"]["deadwood"] == [own[0], None]
    assert env.infos["player_1"]["result"]["deadwood"] == [None, own[1]]
    end_line = env.render().splitlines()[-1]
    assert end_line == "hand over: dead hand, the stock is down to 2 cards; no showdown, no score"


def test_a_truncated_hand_shows_each_seat_only_its_own_deadwood() -> None:
    env = gin_rummy_v0.raw_env(turn_limit=1)
    env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    play(env, [("player_1", "draw_discard"), ("player_1", "discard Kc")])
    result = env.hand.result
    assert result.kind == "truncated"
    assert env.infos["player_1"]["result"]["deadwood"] == [None, result.deadwood[1]]
    assert env.infos["player_0"]["result"]["deadwood"] == [result.deadwood[0], None]


# ---------------------------------------------------------------------------- reset arguments


def test_reset_accepts_numpy_seeds_and_decks_of_numpy_ints() -> None:
    env = gin_rummy_v0.env()
    env.reset(seed=3)
    deck = env.unwrapped.hand.deck
    env.reset(seed=np.int64(3))
    assert env.unwrapped.hand.deck == deck
    ids = np.array(parse_cards(" ".join(KNOCK_DECK)), dtype=np.int64)
    for given in (ids, list(ids)):
        env.reset(options={"deck": given, "dealer": np.int8(0)})
        assert env.unwrapped.hand.hands[1] == sum(1 << c for c in parse_cards(KNOCKER))


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"options": "deck"}, TypeError, "options must be a dict with the keys 'deck'"),
        ({"options": ["deck"]}, TypeError, "options must be a dict"),
        ({"seed": 1.5}, TypeError, "seed must be None or an integer"),
        ({"seed": "3"}, TypeError, "seed must be None or an integer"),
        ({"seed": True}, TypeError, "seed must be None or an integer"),
    ],
)
def test_bad_reset_arguments_are_refused_and_change_nothing(kwargs: dict, error: type, message: str) -> None:
    env = gin_rummy_v0.env()
    env.reset(seed=5)
    before = snapshot(env)
    with pytest.raises(error, match=message):
        env.reset(**kwargs)
    assert snapshot(env) == before


# ---------------------------------------------------------------------------- after the episode


@pytest.mark.parametrize("make", [gin_rummy_v0.env, gin_rummy_v0.raw_env])
def test_step_and_last_after_the_episode_say_to_reset(make) -> None:
    env = make()
    env.reset(options={"deck": UNDERCUT_DECK, "dealer": 0})
    play(env, [("player_1", "draw_discard"), ("player_1", "knock Kc")])
    for _ in env.agent_iter():
        env.step(None)
    assert env.agents == []
    with pytest.raises(gin_rummy_v0.EpisodeOverError, match="call reset"):
        env.step(0)
    with pytest.raises(gin_rummy_v0.EpisodeOverError, match="call reset"):
        env.last()
    env.reset(seed=0)
    assert env.last()[0]["action_mask"].any()


def test_illegal_reward_is_checked_when_the_env_is_built() -> None:
    with pytest.raises(TypeError, match="illegal_reward must be a finite number"):
        gin_rummy_v0.env(illegal_reward="x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="illegal_reward"):
        gin_rummy_v0.env(illegal_reward=True)
    with pytest.raises(ValueError, match="illegal_reward must be a finite number"):
        gin_rummy_v0.env(illegal_reward=float("-inf"))
    gin_rummy_v0.env(illegal_reward=np.float32(-2.0))


# ---------------------------------------------------------------------------- state()


def cards_in(vector: np.ndarray) -> set[str]:
    return {CARD_NAMES[c] for c in np.flatnonzero(vector)}


def test_state_holds_the_full_state() -> None:
    from ginenv.observation import STATE_PLAYER_BASE, state_slice

    env = gin_rummy_v0.env()
    env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    state = env.unwrapped.state()
    assert state.shape == (gin_rummy_v0.STATE_SIZE,) and state.dtype == np.float32
    assert env.unwrapped.state_space.contains(state)
    # Both hands, by absolute seat: player_0 deals, player_1 holds the knocker's hand.
    assert cards_in(state[state_slice("hand_0")]) == set(LAYOFF_DEFENDER.split())
    assert cards_in(state[state_slice("hand_1")]) == set(KNOCKER.split())
    stock_order = state[state_slice("stock_order")]
    assert stock_order[parse_cards("3d")[0]] == 1  # the next card drawn
    assert stock_order[parse_cards(KNOCK_DECK[22])[0]] == 2
    assert stock_order[parse_cards(KNOCK_DECK[51])[0]] == 31
    assert cards_in(state[state_slice("top")]) == {"2d"}
    play(env, [("player_1", "draw_discard")])  # takes the 2d upcard
    state = env.unwrapped.state()
    assert "2d" in cards_in(state[state_slice("hand_1")])
    assert cards_in(state[state_slice("banned")]) == {"2d"}
    assert cards_in(state[state_slice("taken_1")]) == {"2d"}
    assert state[5] == 1  # draws
    play(env, [("player_1", "discard Kc"), ("player_0", "draw_stock"), ("player_0", "discard 3d")])
    state = env.unwrapped.state()
    pile_order = state[state_slice("pile_order")]
    assert pile_order[parse_cards("Kc")[0]] == 1 and pile_order[parse_cards("3d")[0]] == 2
    assert cards_in(state[state_slice("discarded_0")]) == {"3d"}
    assert list(state[STATE_PLAYER_BASE : STATE_PLAYER_BASE + 2]) == [0.0, 1.0]  # player_1 to move
    assert env.unwrapped.state_space.contains(state)


# ---------------------------------------------------------------------------- copies for search


def test_deepcopy_mid_hand_is_independent_and_both_play_on() -> None:
    import copy

    env = gin_rummy_v0.env(render_mode="ansi")
    env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    play(env, [("player_1", "pass")])
    before = snapshot(env)
    twin = copy.deepcopy(env)
    assert snapshot(twin) == before
    script = [("player_0", "pass"), ("player_1", "draw_stock"), ("player_1", "knock Kc")]
    play(twin, script)
    assert finished(twin)["points"] == 51
    assert snapshot(env) == before  # the copy's moves left the original as it was
    assert not any(env.terminations.values())
    # The original plays on along another line: the dealer takes the upcard instead of passing.
    play(env, [("player_0", "draw_discard"), ("player_0", "discard Qd")])
    assert env.agent_selection == "player_1"
    assert legal_names(env, "player_1") == {"draw_stock", "draw_discard"}
    assert [env.unwrapped.action_name(a) for _, a in env.unwrapped.hand.history] == [
        "pass",
        "draw_discard",
        "discard Qd",
    ]
    assert twin.unwrapped.hand.result.kind == "knock"


def test_deepcopy_of_a_match_deals_the_same_next_hands() -> None:
    import copy

    env = gin_rummy_v0.raw_env(mode="match", rules=Rules(target=200))
    env.reset(seed=7, options={"deck": KNOCK_DECK, "dealer": 0})
    play(env, [("player_1", "pass")])
    twin = copy.deepcopy(env)
    script = [("player_0", "pass"), ("player_1", "draw_stock"), ("player_1", "knock Kc")]
    play(env, script)
    assert twin.hand.history == [(1, gin_rummy_v0.PASS)] and twin.match.scores == [0, 0]
    play(twin, script)
    assert twin.match.scores == env.match.scores == [0, 51]
    assert twin.match is not env.match and twin.hand is not env.hand
    assert twin.hand.deck == env.hand.deck  # the copied generator deals the same next hand
    assert np.array_equal(twin.state(), env.state())


def test_a_match_of_dead_hands_truncates_at_the_hand_limit() -> None:
    # Players who never knock: every hand dies, and before the hand limit the match never ended.
    env = gin_rummy_v0.env(mode="match", hand_limit=5)
    env.reset(seed=3)
    hands = set()
    for agent in env.agent_iter(max_iter=100_000):
        _, reward, termination, truncation, info = env.last()
        if termination or truncation:
            assert (termination, truncation, reward) == (False, True, 0.0)
            env.step(None)
            continue
        hands.add(info["hand_index"])
        names = [env.unwrapped.action_name(a) for a in np.flatnonzero(env.observe(agent)["action_mask"])]
        choice = next((n for n in ("pass", "draw_stock") if n in names), None)
        env.step(env.unwrapped.action_id(choice or min(n for n in names if n.startswith("discard "))))
    assert env.agents == [] and hands == set(range(5))
    match = env.unwrapped.match
    assert match.truncated and match.result is None and len(match.records) == 5
    with pytest.raises(ValueError, match="hand_limit"):
        gin_rummy_v0.env(mode="match", hand_limit=0)


@pytest.mark.parametrize("make", [gin_rummy_v0.env, gin_rummy_v0.raw_env, gin_rummy_v0.parallel_env])
def test_pickle_rebuilds_a_fresh_env_from_its_settings(make) -> None:
    import pickle

    env = make(mode="match", rules=Rules(target=40), dealer=1, render_mode="ansi", hand_limit=7)
    env.reset(seed=3)
    twin = pickle.loads(pickle.dumps(env))
    aec, twin_aec = (getattr(e, "aec_env", e).unwrapped for e in (env, twin))
    assert twin_aec.settings == aec.settings and twin_aec is not aec
    for e in (env, twin):
        e.reset(seed=4)
    assert np.array_equal(twin.state(), env.state())
