"""The env through other libraries' own doors: PettingZoo's whole test suite on both APIs and both
forms of infos, the numeric infos (numbers and arrays, the same keys at every step, decoded back to
the full ones), TorchRL's PettingZooWrapper rolling out whole hands with its own random sampler and
making masked PPO updates on both APIs, RLlib's PettingZooEnv and ParallelPettingZooEnv playing
whole hands from the masks, a scripted knock's points included, and Tianshou's masked random policy
playing whole hands on both APIs (the Parallel one through PettingZoo's parallel_to_aec). On the
Parallel API each library samples the seat that cannot act from its mask: the no-op.

The recipes (tests/recipes/) train through TorchRL, RLlib, Stable-Baselines3 and Tianshou.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from extras import needs_extra
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test, seed_test
from test_env import KNOCK_DECK

from ginenv import gin_rummy_v0
from ginenv.aec import RESULT_KINDS
from ginenv.layout import TO_MOVE

FORMS = ("full", "numeric")
NUMERIC_KEYS = {"hand_index", "dealer", "scores", "result_kind", "result_winner", "result_points"}


@pytest.mark.parametrize("infos", FORMS)
@pytest.mark.parametrize("mode", ["hand", "match"])
def test_pettingzoos_own_suite_passes_on_both_apis(infos: str, mode: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the suite resets with options the env does not know
        api_test(gin_rummy_v0.env(infos=infos, mode=mode), num_cycles=500)
        # The suite samples every live seat from its mask: the seat not to move draws the no-op.
        parallel_api_test(gin_rummy_v0.parallel_env(infos=infos, mode=mode), num_cycles=500)
        seed_test(lambda **kw: gin_rummy_v0.env(infos=infos, mode=mode, **kw), num_cycles=100)
        parallel_seed_test(
            lambda **kw: gin_rummy_v0.parallel_env(infos=infos, mode=mode, **kw), num_cycles=100
        )
        render_test(lambda render_mode=None: gin_rummy_v0.env(render_mode=render_mode, infos=infos))


def _is_numeric(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) or (
        isinstance(value, np.ndarray) and value.dtype.kind in "iuf"
    )


@pytest.mark.parametrize("mode", ["hand", "match"])
def test_numeric_infos_are_numbers_with_fixed_keys_and_decode_to_the_full_ones(mode: str) -> None:
    env = gin_rummy_v0.env(infos="numeric", mode=mode)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    ended = 0
    for _agent in env.agent_iter(5000):
        obs, _, term, trunc, _ = env.last()
        for a in env.agents:  # (an agent done and stepped leaves infos)
            info, full = env.infos[a], env.unwrapped.full_infos[a]
            assert set(info) == NUMERIC_KEYS and all(_is_numeric(v) for v in info.values()), info
            assert (info["hand_index"], info["dealer"]) == (full["hand_index"], full["dealer"])
            assert list(info["scores"]) == full.get("scores", [0, 0])
            result = full.get("result")
            if result is None:
                assert (info["result_kind"], info["result_winner"], info["result_points"]) == (-1, -1, 0)
            else:
                assert RESULT_KINDS[info["result_kind"]] == result["kind"]
                winner = -1 if result["winner"] is None else env.possible_agents.index(result["winner"])
                assert (info["result_winner"], info["result_points"]) == (winner, result["points"])
                ended += 1
        action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
    assert ended > 0


def test_the_full_infos_keep_the_public_contract() -> None:
    # The default form is unchanged: env.infos[agent]["result"] as the contract writes it.
    env = gin_rummy_v0.env()
    env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    aid = gin_rummy_v0.raw_env.action_id
    for name in ("pass", "pass", "draw_stock", "knock Kc"):
        env.step(aid(name))
    result = env.infos["player_1"]["result"]
    assert (result["kind"], result["winner"], result["points"]) == ("knock", "player_1", 51)
    assert env.unwrapped.full_infos["player_1"]["result"] == result
    with pytest.raises(ValueError, match="infos must be 'full' or 'numeric'"):
        gin_rummy_v0.env(infos="tensors")


@pytest.mark.parametrize("face", ["env", "parallel_env"])
def test_torchrls_plain_rollout_samples_legal_actions_through_whole_hands(face: str) -> None:
    # No policy: TorchRL's own random sampler, drawing from each seat's action mask at every step.
    # On the Parallel API the seat not to move has the no-op as its one legal action (an all-zero
    # mask failed here: "invalid multinomial distribution"); on the AEC API TorchRL itself gives that
    # seat an all-ones mask and does not send its action.
    needs_extra("torchrl", "torchrl", "tensordict")
    import torch
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL's note on the PettingZoo version it tests with
        env = PettingZooWrapper(getattr(gin_rummy_v0, face)(infos="numeric"), use_mask=True, seed=0)
    td = env.rollout(300, break_when_any_done=False)
    # TorchRL's default groups: one per seat on the AEC API, both seats in "player" on the Parallel
    # one. The seats side by side, (steps, seats, ...):
    groups = list(env.group_map)
    actions, masks, views = (
        torch.cat([td.get((group, *key)) for group in groups], dim=1)
        for key in (("action",), ("action_mask",), ("observation", "observation"))
    )
    moving = views[..., TO_MOVE] == 1
    assert bool((moving.sum(-1) == 1).all())  # one seat to move at every step
    # Every action drawn is legal in its mask: the mover's a legal move, the idle seat's the no-op.
    assert bool(masks.gather(-1, actions.unsqueeze(-1)).all())
    if face == "parallel_env":
        assert bool((actions[~moving] == gin_rummy_v0.NOOP).all())
        assert bool((masks[~moving].sum(-1) == 1).all())
    # Whole hands: several ended within the rollout, each with a result.
    ended = td.get(("next", "done")).squeeze(-1)
    assert int(ended.sum()) >= 2
    for group in groups:
        assert bool((td.get(("next", group, "info", "result_kind"))[ended] >= 0).all())


@pytest.mark.parametrize("face", ["env", "parallel_env"])
def test_rllib_wraps_both_apis_and_plays_whole_hands_from_the_masks(face: str) -> None:
    # RLlib's two PettingZoo doors: PettingZooEnv asks the agent to move only; ParallelPettingZooEnv
    # observes both seats at every step, the idle one with the no-op as its one legal action. Every
    # seat observed draws its action from its own mask, as a masked random policy does.
    needs_extra("rllib", "ray.rllib")
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv, PettingZooEnv

    door = PettingZooEnv if face == "env" else ParallelPettingZooEnv
    env = door(getattr(gin_rummy_v0, face)(infos="numeric"))
    aid = gin_rummy_v0.raw_env.action_id
    rng = np.random.default_rng(5)

    def sample(mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    def play(obs: dict, choose: Any) -> tuple[dict[str, float], dict]:
        totals = dict.fromkeys(gin_rummy_v0.AGENTS, 0.0)
        for _ in range(500):
            movers = [a for a, o in obs.items() if o["observation"][TO_MOVE] == 1]
            assert len(movers) == 1 and len(obs) == (1 if face == "env" else 2)
            actions = {a: sample(o["action_mask"]) for a, o in obs.items()}
            for idle in set(obs) - set(movers):
                assert actions[idle] == gin_rummy_v0.NOOP and obs[idle]["action_mask"].sum() == 1
            actions[movers[0]] = choose(obs[movers[0]]["action_mask"])
            obs, rewards, terminated, truncated, infos = env.step(actions)
            for a, r in rewards.items():
                totals[a] += r
            if terminated["__all__"] or truncated["__all__"]:
                return totals, infos
        raise AssertionError("a hand did not end in 500 steps")

    # A scripted knock: player_1 knocks with Kc for 51 points, through the library's wrapper.
    obs, _ = env.reset(options={"deck": KNOCK_DECK, "dealer": 0})
    script = iter(["pass", "pass", "draw_stock", "knock Kc"])
    totals, infos = play(obs, lambda mask: aid(next(script)))
    assert totals == {"player_0": -51.0, "player_1": 51.0}
    assert {int(i["result_kind"]) for i in infos.values()} == {RESULT_KINDS.index("knock")}
    # Random legal play to the end of a hand, from a seed.
    obs, _ = env.reset(seed=5)
    totals, infos = play(obs, sample)
    assert totals["player_0"] == -totals["player_1"]
    assert all(int(i["result_kind"]) >= 0 for i in infos.values())


@pytest.mark.parametrize("face", ["env", "parallel_env"])
def test_tianshous_masked_random_policy_plays_whole_hands_on_both_apis(face: str) -> None:
    # Tianshou's door is its PettingZooEnv, which wraps an AEC env only; the Parallel API goes in
    # through PettingZoo's own parallel_to_aec, which asks both seats in turn at every step, the
    # idle one with the no-op as its one legal action. Both seats play Tianshou's masked random
    # policy through its multi-agent manager and collector.
    needs_extra("tianshou", "tianshou")
    from pettingzoo.utils.conversions import parallel_to_aec
    from tianshou.algorithm import MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm as Random
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    def make() -> PettingZooEnv:
        env = getattr(gin_rummy_v0, face)(infos="numeric")
        return PettingZooEnv(env if face == "env" else parallel_to_aec(env))

    template = make()
    seats = [Random(template.action_space) for _ in gin_rummy_v0.AGENTS]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=seats, env=template)
    envs = DummyVectorEnv([make])
    envs.seed(5)
    np.random.seed(5)  # the random policy draws from numpy's global generator
    buffer = VectorReplayBuffer(total_size=5000, buffer_num=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its note on the shape of the episode returns it summarises
        stats = Collector(algorithm, envs, buffer).collect(n_episode=2, reset_before_collect=True)
    assert stats.n_collected_episodes == 2
    batch, _ = buffer.sample(0)
    rows = np.arange(len(batch.act))
    assert bool(batch.obs.mask[rows, batch.act].all())  # every action legal in its mask
    moving = batch.obs.obs[:, TO_MOVE] == 1
    if face == "parallel_env":  # both seats asked at every step, the idle one answering the no-op
        assert moving.sum() * 2 == len(rows) and (batch.act[~moving] == gin_rummy_v0.NOOP).all()
    else:
        assert moving.all()
    assert (batch.info.result_kind[batch.done] >= 0).all()


@pytest.mark.parametrize("face", ["env", "parallel_env"])
def test_torchrl_masked_ppo_updates_on_both_apis(face: str) -> None:
    # One network for both seats (both in one group, "player"), sampled through MaskedCategorical,
    # and a few ClipPPOLoss updates on a rollout of each API.
    needs_extra("torchrl", "torchrl", "tensordict")
    import torch
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType
    from torchrl.modules import MaskedCategorical, ProbabilisticActor
    from torchrl.objectives import ClipPPOLoss, ValueEstimators

    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = PettingZooWrapper(
            getattr(gin_rummy_v0, face)(infos="numeric", reward_scale=0.01),
            group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
            use_mask=True,
            categorical_actions=True,
            seed=0,
        )
    (group,) = env.group_map
    obs = (group, "observation", "observation")

    net = nn.Sequential(nn.Linear(gin_rummy_v0.OBS_SIZE, 64), nn.Tanh(), nn.Linear(64, 108))
    # The env's masks as they are: the seat that cannot act has the no-op (Parallel API), or
    # TorchRL's all-ones mask (AEC API), never an all-zero row.
    actor = ProbabilisticActor(
        TensorDictModule(net, in_keys=[obs], out_keys=[(group, "logits")]),
        in_keys={"logits": (group, "logits"), "mask": (group, "action_mask")},
        out_keys=[(group, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=(group, "action_log_prob"),
    )
    critic = TensorDictModule(
        nn.Linear(gin_rummy_v0.OBS_SIZE, 1), in_keys=[obs], out_keys=[(group, "state_value")]
    )
    loss = ClipPPOLoss(actor, critic)
    loss.set_keys(
        action=(group, "action"),
        sample_log_prob=(group, "action_log_prob"),
        value=(group, "state_value"),
        reward=(group, "reward"),
        done=(group, "done"),
        terminated=(group, "terminated"),
        advantage=(group, "advantage"),
        value_target=(group, "value_target"),
    )
    loss.make_value_estimator(ValueEstimators.GAE, gamma=1.0, lmbda=0.95)
    optimizer = torch.optim.Adam(loss.parameters(), lr=1e-3)
    before = nn.utils.parameters_to_vector(net.parameters()).detach().clone()

    with torch.no_grad():
        batch = env.rollout(256, actor, break_when_any_done=False)
    actions, masks = batch.get((group, "action")), batch.get((group, "action_mask"))
    moving = masks.any(-1)
    assert bool(masks.gather(-1, actions.unsqueeze(-1)).squeeze(-1)[moving].all())  # legal only
    assert bool(batch.get(("next", group, "done")).any())  # hands ended within the rollout
    with torch.no_grad():
        loss.value_estimator(
            batch, params=loss.critic_network_params, target_params=loss.target_critic_network_params
        )
    for _ in range(3):
        terms = loss(batch)
        total = terms["loss_objective"] + terms["loss_critic"] + terms["loss_entropy"]
        assert bool(torch.isfinite(total))
        optimizer.zero_grad()
        total.backward()
        optimizer.step()
    assert not torch.equal(before, nn.utils.parameters_to_vector(net.parameters()))
