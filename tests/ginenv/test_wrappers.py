"""The Gymnasium single-agent wrapper: Gymnasium's env checker, the opponent loop, rewards, action
masks, illegal actions, and a short MaskablePPO (sb3-contrib) training run."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from extras import needs_extra
from gymnasium.utils.env_checker import check_env

from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, KNOCK_BASE, action_id
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
    for seat in (2, True, 1.0, "player_1"):
        with pytest.raises(ValueError, match="seat must be 0, 1 or None"):
            SingleAgentEnv(seat=seat)  # type: ignore[arg-type]
    env = SingleAgentEnv(opponent="random", seat=np.int64(1))  # type: ignore[arg-type]
    assert env.seat == 1 and type(env.seat) is int and env.agent == "player_1"


def test_render_delegates_to_the_aec_env() -> None:
    env = SingleAgentEnv(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "stock: 31 cards" in text


def test_maskable_ppo_learns_a_few_hundred_steps() -> None:
    needs_extra("sb3", "sb3_contrib")
    from sb3_contrib import MaskablePPO

    env = SingleAgentEnv(reward_scale=0.01)
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=0, verbose=0, device="cpu"
    )
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    obs, _ = env.reset(seed=5)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]  # the masked policy only picks legal actions


# ---------------------------------------------------------------------------- opponents


def test_default_opponent_is_the_normal_level() -> None:
    from ginenv.agents import UnknownAgentError
    from ginenv.agents.levels.normal import NormalAgent

    env = SingleAgentEnv()
    assert env.opponent == "normal"
    assert isinstance(env._act.__self__, NormalAgent)
    with pytest.raises(UnknownAgentError, match="known agents"):
        SingleAgentEnv(opponent="grandmaster")
    with pytest.raises(TypeError, match="registry name"):
        SingleAgentEnv(opponent=42)  # type: ignore[arg-type]


class RecordingAgent:
    """An agent object: plays uniformly at random, records its resets and the hands it saw."""

    def __init__(self) -> None:
        self.seeds: list[int | None] = []
        self.policy = RandomPolicy(0)

    def reset(self, seed: int | None = None) -> None:
        self.seeds.append(seed)
        self.policy.reset(seed)

    def act(self, observation) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        knocks = legal[legal >= KNOCK_BASE]
        return int(knocks[0]) if knocks.size else self.policy(observation)


def play_episode(env: SingleAgentEnv, seed: int) -> list[dict]:
    _, info = env.reset(seed=seed)
    infos = [info]
    rng = np.random.default_rng(seed)
    done = False
    while not done:
        legal = np.flatnonzero(env.action_masks())
        knocks = legal[legal >= KNOCK_BASE]
        action = knocks[0] if knocks.size else rng.choice(legal)
        _, _, terminated, truncated, info = env.step(action)
        infos.append(info)
        done = terminated or truncated
    return infos


def test_an_agent_object_opponent_is_reset_every_hand_of_a_match() -> None:
    opponent = RecordingAgent()
    env = SingleAgentEnv(opponent=opponent, mode="match", rules=Rules(target=40))
    infos = play_episode(env, seed=4)
    hands = infos[-1]["result"]["match_result"]["hands_played"]
    assert hands >= 2
    # One reset per hand the opponent played in, each with a fresh seed from the wrapper's generator.
    assert hands - 1 <= len(opponent.seeds) <= hands
    assert len(set(opponent.seeds)) == len(opponent.seeds) and None not in opponent.seeds
    first = list(opponent.seeds)
    opponent.seeds.clear()
    play_episode(env, seed=4)
    assert opponent.seeds == first  # reset(seed=...) reproduces the opponent's seeds too


def test_a_named_opponent_plays_whole_hands() -> None:
    env = SingleAgentEnv(opponent="easy", seat=None)
    kinds = {play_episode(env, seed)[-1]["result"]["kind"] for seed in range(6)}
    assert kinds <= {"knock", "undercut", "gin", "dead", "truncated"} and kinds


# ---------------------------------------------------------------------------- learner's actions


def test_step_refuses_non_integer_actions_and_accepts_any_integer_type() -> None:
    from ginenv.actions import UnknownActionError

    env = SingleAgentEnv(seat=1, dealer=0, opponent="random")
    env.reset(options={"deck": UNDERCUT_DECK})
    mask = env.action_masks().copy()
    for bad in (1.9, "1", True, np.float64(1.0), np.bool_(True)):
        with pytest.raises(UnknownActionError, match=r"integer action id 0\.\.107"):
            env.step(bad)
    assert np.array_equal(env.action_masks(), mask)  # nothing changed
    _, _, terminated, _, _ = env.step(np.array(DRAW_DISCARD, dtype=np.int64))  # a 0-d array
    assert not terminated
    _, _, terminated, _, info = env.step(np.int16(action_id("knock Kc")))
    assert terminated and info["result"]["kind"] == "undercut"


def test_illegal_reward_is_checked_when_built() -> None:
    with pytest.raises(TypeError, match="illegal_reward must be a finite number"):
        SingleAgentEnv(illegal_reward="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="illegal_reward"):
        SingleAgentEnv(illegal_reward=float("nan"))


# ---------------------------------------------------------------------------- truncation


class TakeTheDiscard:
    """Always takes the upcard or top discard, throws its lowest allowed card, never knocks."""

    def act(self, observation) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if DRAW_DISCARD in legal:
            return DRAW_DISCARD
        return int(legal[(legal >= DISCARD_BASE) & (legal < KNOCK_BASE)][0])


@pytest.mark.parametrize("mode", ["hand", "match"])
def test_a_hand_at_the_turn_limit_truncates_the_episode(mode: str) -> None:
    env = SingleAgentEnv(opponent=TakeTheDiscard(), mode=mode, turn_limit=30, seat=0)
    env.reset(seed=0)
    learner = TakeTheDiscard()
    steps, done = 0, False
    while not done:
        obs = {"action_mask": env.action_masks().astype(np.int8)}
        _, reward, terminated, truncated, info = env.step(learner.act(obs))
        done = terminated or truncated
        steps += 1
    assert (terminated, truncated, reward) == (False, True, 0.0)
    assert info["result"]["kind"] == "truncated"
    assert steps <= 31
    assert env.action_masks().all()  # the final placeholder mask


# ---------------------------------------------------------------------------- autoreset and masks


def real_mask(env: SingleAgentEnv) -> np.ndarray:
    return env.env.observe(env.agent)["action_mask"]


@pytest.mark.parametrize("autoreset", ["NEXT_STEP", "SAME_STEP"])
def test_gymnasium_vector_autoreset_gives_the_new_hands_mask(autoreset: str) -> None:
    from gymnasium.vector import AutoresetMode, SyncVectorEnv

    venv = SyncVectorEnv([lambda: SingleAgentEnv(opponent="random")], autoreset_mode=AutoresetMode[autoreset])
    _, info = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    ends, after_reset = 0, 0
    for _ in range(1500):
        mask = info["action_mask"][0]
        assert mask.any()  # never all zeros, even on a final observation
        inner = venv.envs[0]
        if not inner._done:
            assert np.array_equal(mask, real_mask(inner))  # the live hand's real mask
            after_reset += ends > 0
        _, _, terminated, truncated, info = venv.step(np.array([rng.choice(np.flatnonzero(mask))]))
        ends += bool(terminated[0] or truncated[0])
    assert ends >= 10 and after_reset > 0


def test_stable_baselines_autoreset_gives_the_new_hands_mask() -> None:
    needs_extra("sb3", "stable_baselines3")
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([lambda: SingleAgentEnv(opponent="random")])
    venv.seed(0)
    venv.reset()
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(1500):
        mask = venv.env_method("action_masks")[0]
        assert np.array_equal(mask, real_mask(venv.envs[0]).astype(bool)) and mask.any()
        _, _, dones, _ = venv.step(np.array([rng.choice(np.flatnonzero(mask))]))
        if dones[0]:
            ends += 1
            assert venv.reset_infos[0]["action_mask"].any()
    assert ends >= 10


# ---------------------------------------------------------------------------- gymnasium.make


def test_gymnasium_make_builds_the_wrapper() -> None:
    import gymnasium

    import ginenv

    env = gymnasium.make(ginenv.GYMNASIUM_ID, opponent="random", seat=1, reward_scale=0.01)
    assert isinstance(env.unwrapped, SingleAgentEnv) and env.unwrapped.seat == 1
    _, info = env.reset(seed=0)
    assert info["action_mask"].any()
    assert np.array_equal(env.get_wrapper_attr("action_masks")(), info["action_mask"].astype(bool))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped, skip_render_check=True)


def run_python(code: str) -> str:
    """``code`` in a fresh interpreter (nothing of ginenv or Gymnasium imported yet); its output."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_module_prefix_imports_ginenv_and_registers() -> None:
    # gymnasium.make("ginenv:...") imports ginenv, whose import registers the ids.
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('error')\n"
        "import gymnasium\n"
        "assert 'ginenv' not in sys.modules\n"
        "env = gymnasium.make('ginenv:ginenv/GinRummy-v0', opponent='random', seat=1)\n"
        "obs, info = env.reset(seed=1)\n"
        "assert info['action_mask'].any() and obs.shape == (532,) and env.unwrapped.seat == 1\n"
        "envs = gymnasium.make_vec('ginenv:ginenv/GinRummyBatched-v0', num_envs=2)\n"
        "print(type(env.unwrapped).__name__, type(envs).__name__)\n"
    )
    assert run_python(code) == "SingleAgentEnv GinRummyVectorEnv"


def test_import_ginenv_registers_once_and_plainly() -> None:
    # Registration is plain (at import, no import hook) and idempotent: registering again, or
    # reloading the package, warns of no override and leaves the specs as they were.
    code = (
        "import importlib, sys, warnings\n"
        "warnings.simplefilter('error')\n"
        "import ginenv\n"
        "from gymnasium.envs.registration import registry\n"
        "specs = [registry[i] for i in (ginenv.GYMNASIUM_ID, ginenv.GYMNASIUM_BATCHED_ID)]\n"
        "ginenv.register_gymnasium()\n"
        "importlib.reload(ginenv)\n"
        "assert [registry[i] for i in (ginenv.GYMNASIUM_ID, ginenv.GYMNASIUM_BATCHED_ID)] == specs\n"
        "assert sorted(i for i in registry if i.startswith('ginenv/')) == "
        "['ginenv/GinRummy-v0', 'ginenv/GinRummyBatched-v0']\n"
        "assert not any(type(f).__module__.startswith('ginenv') for f in sys.meta_path)\n"
        "assert 'ginenv.wrappers' not in sys.modules and 'ginenv.vector_env' not in sys.modules\n"
        "print('ok')\n"
    )
    assert run_python(code) == "ok"


# ---------------------------------------------------------------------------- the mask in the observation


def test_the_mask_can_travel_inside_the_observation() -> None:
    env = SingleAgentEnv(opponent="greedy", mask_in_observation=True)
    assert isinstance(env.observation_space, gymnasium.spaces.Dict)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert np.array_equal(obs["action_mask"], info["action_mask"])
    assert np.array_equal(obs["action_mask"].astype(bool), env.action_masks())
    rng = np.random.default_rng(3)
    for _ in range(200):
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, _, terminated, truncated, info = env.step(action)
        assert np.array_equal(obs["action_mask"], info["action_mask"])
        if terminated or truncated:
            obs, info = env.reset()
    with pytest.raises(TypeError, match="mask_in_observation"):
        SingleAgentEnv(mask_in_observation=1)  # type: ignore[arg-type]


def test_torchrl_action_mask_plays_only_legal_actions() -> None:
    # TorchRL's GymEnv alone samples an illegal action and the episode ends after one step; with the
    # mask in the observation its ActionMask transform keeps every sampled action legal.
    needs_extra("torchrl", "torchrl")
    from torchrl.envs import GymWrapper, TransformedEnv
    from torchrl.envs.transforms import ActionMask

    base = SingleAgentEnv(opponent="greedy", seat=None, mask_in_observation=True, reward_scale=0.01)
    env = TransformedEnv(GymWrapper(base, categorical_action_encoding=True), ActionMask())
    env.set_seed(5)
    td = env.rollout(300, break_when_any_done=False)
    actions = td["action"].long().unsqueeze(-1)
    assert bool(td["action_mask"].gather(-1, actions).all())
    episodes = int(td["next", "done"].sum())
    assert 1 <= episodes < 300 / 5  # whole hands, not one-step episodes ended by an illegal move


def test_the_core_never_imports_the_layers_above_it() -> None:
    """Importing every core module loads nothing of ``ginenv.agents`` or ``ginenv.experiments``; an
    opponent named by a spec is still built, through the factory the package metadata names."""
    import subprocess
    import sys

    code = (
        "import pkgutil, sys, importlib, ginenv\n"
        "for m in pkgutil.walk_packages(ginenv.__path__, 'ginenv.'):\n"
        "    if m.name.split('.')[1] not in ('agents', 'experiments'):\n"
        "        importlib.import_module(m.name)\n"
        "above = sorted(n for n in sys.modules if n.startswith(('ginenv.agents', 'ginenv.experiments')))\n"
        "print(above)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    from ginenv.wrappers import agent_factory

    assert agent_factory().__module__ == "ginenv.agents.specs"
    _, info = SingleAgentEnv(opponent="greedy", seat=1).reset(seed=0)
    assert info["action_mask"].any()
