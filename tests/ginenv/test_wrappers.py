"""The Gymnasium single-agent wrapper: Gymnasium's env checker, the opponent loop, rewards, action
masks, illegal actions, and a short MaskablePPO (sb3-contrib) training run."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from ginenv.cards import CARD_NAMES, parse_cards
from ginenv.engine import IllegalActionError
from ginenv.observation import OBS_SIZE, decode
from ginenv.rules import Rules
from ginenv.wrappers import RandomPolicy, SingleAgentEnv


def make_deck(non_dealer: str, dealer: str, upcard: str, stock: str = "") -> list[str]:
    """A 52-card dealing order from named hands; the unnamed cards follow the named stock."""
    named = parse_cards(f"{non_dealer} {dealer} {upcard} {stock}")
    rest = [c for c in range(52) if c not in set(named)]
    return [CARD_NAMES[c] for c in named + rest]


KNOCKER = "As 2s 3s 7c 7d 7h 4h 5h 6h Kc"
DEFENDER = "9s 9c 9d Js Jc Jd 2c 3c 4c 5d"  # undercuts a knock at 8 with deadwood 5
UNDERCUT_DECK = make_deck(KNOCKER, DEFENDER, "8d")


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"mode": "match", "rules": Rules(target=30), "seat": None}, {"oracle": True, "seat": 1}],
)
def test_gymnasium_check_env(kwargs: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "no spec to test alternative render modes"
        check_env(SingleAgentEnv(**kwargs), skip_render_check=True)


def test_reset_returns_the_learners_view_and_mask() -> None:
    env = SingleAgentEnv(seat=0)
    obs, info = env.reset(seed=3)
    assert obs.shape == (OBS_SIZE,) and obs.dtype == np.float32
    assert decode(obs).to_move
    assert np.array_equal(env.action_masks(), info["action_mask"].astype(bool))
    assert env.action_masks().dtype == bool and env.action_masks().any()
    obs2, _ = env.reset(seed=3)
    assert np.array_equal(obs, obs2)


def test_opponent_sees_only_its_observation_dict() -> None:
    calls = []

    def opponent(observation):
        calls.append(observation)
        if observation["action_mask"][2]:
            return 2  # pass on the upcard
        return RandomPolicy(len(calls))(observation)

    env = SingleAgentEnv(opponent=opponent, seat=0)
    env.reset(seed=1, options={"deck": UNDERCUT_DECK, "dealer": 0})  # the learner is the dealer
    assert len(calls) == 1  # the non-dealer passed on the upcard first
    assert set(calls[0]) == {"observation", "action_mask"}
    view = decode(calls[0]["observation"])
    assert view.hand == sum(1 << c for c in parse_cards(KNOCKER))  # its own hand, not the learner's
    assert view.to_move


def test_learner_knocks_and_is_undercut() -> None:
    def opponent(observation):
        raise AssertionError("the opponent never moves in this hand")

    # The learner is player_1, the non-dealer holding the knocker's hand.
    env = SingleAgentEnv(opponent=opponent, seat=1, dealer=0)
    env.reset(options={"deck": UNDERCUT_DECK})
    assert np.flatnonzero(env.action_masks()).tolist() == [1, 2]  # take the upcard or pass
    _, reward, terminated, truncated, _ = env.step(1)  # draw_discard: still the learner's turn
    assert (reward, terminated, truncated) == (0.0, False, False)
    _, reward, terminated, truncated, info = env.step(56 + parse_cards("Kc")[0])  # knock Kc
    assert terminated and not truncated
    assert info["result"]["kind"] == "undercut"
    assert reward == -28.0
    # The final observation's mask is the all-ones placeholder, never all zeros (a masked softmax
    # over it must stay finite), and step is refused until reset.
    assert env.action_masks().all() and info["action_mask"].all()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_match_mode_rewards_are_per_hand_and_sum_to_the_margin() -> None:
    env = SingleAgentEnv(mode="match", rules=Rules(target=25), seat=0, reward_scale=0.5)
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    total, steps, terminated = 0.0, 0, False
    while not terminated:
        legal = np.flatnonzero(env.action_masks())
        knocks = legal[legal >= 56]
        action = knocks[0] if knocks.size else rng.choice(legal)
        _, reward, terminated, _, info = env.step(action)
        total += reward
        steps += 1
    final = info["result"]["match_result"]
    margin = final["totals"][0] - final["totals"][1]
    assert total == pytest.approx(0.5 * margin)
    assert steps > 10


def test_illegal_action_ends_the_episode_or_raises() -> None:
    env = SingleAgentEnv(seat=1, dealer=0, illegal_reward=-3.0)
    env.reset(options={"deck": UNDERCUT_DECK})
    _, reward, terminated, _, info = env.step(0)  # draw_stock is not offered during the upcard offer
    assert (reward, terminated, info["illegal_action"]) == (-3.0, True, 0)
    strict = SingleAgentEnv(seat=1, dealer=0, illegal_reward=None)
    strict.reset(options={"deck": UNDERCUT_DECK})
    with pytest.raises(IllegalActionError, match="draw_stock"):
        strict.step(0)


def test_random_seat_covers_both_seats() -> None:
    env = SingleAgentEnv(seat=None)
    seats = set()
    for seed in range(12):
        env.reset(seed=seed)
        seats.add(env.agent)
    assert seats == {"player_0", "player_1"}


def test_bad_seat_is_refused() -> None:
    with pytest.raises(ValueError, match="seat"):
        SingleAgentEnv(seat=2)


def test_render_delegates_to_the_aec_env() -> None:
    env = SingleAgentEnv(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "stock: 31 cards" in text


def test_maskable_ppo_learns_a_few_hundred_steps() -> None:
    from sb3_contrib import MaskablePPO  # dev dependency

    env = SingleAgentEnv(reward_scale=0.01)
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=0, verbose=0, device="cpu"
    )
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    obs, _ = env.reset(seed=5)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]  # the masked policy only picks legal actions
