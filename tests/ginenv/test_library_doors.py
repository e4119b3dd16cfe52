"""The env through other libraries' own doors: PettingZoo's whole test suite on both APIs and both
forms of infos, the numeric infos (numbers and arrays, the same keys at every step, decoded back to
the full ones), TorchRL's PettingZooWrapper building, rolling out and making masked PPO updates on
both APIs, and RLlib's PettingZooEnv and ParallelPettingZooEnv playing whole hands, a scripted
knock's points included.

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

FORMS = ("full", "numeric")
NUMERIC_KEYS = {"hand_index", "dealer", "scores", "result_kind", "result_winner", "result_points"}


@pytest.mark.parametrize("infos", FORMS)
@pytest.mark.parametrize("mode", ["hand", "match"])
def test_pettingzoos_own_suite_passes_on_both_apis(infos: str, mode: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the suite resets with options the env does not know
        api_test(gin_rummy_v0.env(infos=infos, mode=mode), num_cycles=500)
        # Unmasked samples included: an illegal action ends the episode, as on the AEC API.
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


def _legal_or_idle(mask: Any) -> Any:
    """A random legal action per row; a row whose mask is all zero (the seat not to move on the
    parallel API, whose action the env ignores) gets action 0."""
    import torch

    weights = mask.float().clone()
    idle = weights.sum(-1) == 0
    weights[idle] = 1.0
    actions = torch.multinomial(weights.reshape(-1, weights.shape[-1]), 1).reshape(weights.shape[:-1])
    return actions


@pytest.mark.parametrize("face", ["env", "parallel_env"])
def test_torchrl_wraps_both_apis_and_rolls_out_only_legal_actions(face: str) -> None:
    needs_extra("torchrl", "torchrl", "tensordict")
    from tensordict import TensorDictBase
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL's note on the PettingZoo version it tests with
        env = PettingZooWrapper(
            getattr(gin_rummy_v0, face)(infos="numeric"),
            use_mask=True,
            categorical_actions=True,
            return_state=False,
            group_map=None,
        )
    groups = list(env.group_map)

    def policy(td: TensorDictBase) -> TensorDictBase:
        for group in groups:
            td.set((group, "action"), _legal_or_idle(td.get((group, "action_mask"))))
        return td

    td = env.rollout(600, policy=policy, break_when_any_done=True)
    assert td.batch_size[0] > 10
    for group in groups:
        actions, masks = td.get((group, "action")), td.get((group, "action_mask"))
        # Every seat with a legal action took one of them; the hand ended with a result.
        moving = masks.any(-1)
        taken = masks.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
        assert bool(moving.any()) and bool(taken[moving].all())
        final = td.get(("next", group, "info", "result_kind"))[-1]
        assert bool((final >= 0).all())
    assert bool(td.get(("next", "done"))[-1].all())


@pytest.mark.parametrize("face", ["env", "parallel_env"])
def test_rllib_wraps_both_apis_and_plays_whole_hands(face: str) -> None:
    # RLlib's two PettingZoo doors: PettingZooEnv asks the agent to move only; ParallelPettingZooEnv
    # observes both seats at every step, the idle one with an all-zero mask and its action ignored.
    needs_extra("rllib", "ray.rllib")
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv, PettingZooEnv

    door = PettingZooEnv if face == "env" else ParallelPettingZooEnv
    env = door(getattr(gin_rummy_v0, face)(infos="numeric"))
    aid = gin_rummy_v0.raw_env.action_id

    def play(obs: dict, choose: Any) -> tuple[dict[str, float], dict]:
        totals = dict.fromkeys(gin_rummy_v0.AGENTS, 0.0)
        for _ in range(500):
            movers = [a for a, o in obs.items() if o["action_mask"].any()]
            assert len(movers) == 1  # one seat to move, on both doors
            actions = {a: 0 for a in obs} | {movers[0]: choose(obs[movers[0]]["action_mask"])}
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
    rng = np.random.default_rng(5)
    obs, _ = env.reset(seed=5)
    totals, infos = play(obs, lambda mask: int(rng.choice(np.flatnonzero(mask))))
    assert totals["player_0"] == -totals["player_1"]
    assert all(int(i["result_kind"]) >= 0 for i in infos.values())


@pytest.mark.parametrize("face", ["env", "parallel_env"])
def test_torchrl_masked_ppo_updates_on_both_apis(face: str) -> None:
    # One network for both seats (both in one group, "player"), sampled through MaskedCategorical,
    # and a few ClipPPOLoss updates on a rollout of each API.
    needs_extra("torchrl", "torchrl", "tensordict")
    import torch
    from tensordict.nn import TensorDictModule, TensorDictSequential
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

    def legal_or_first(mask: torch.Tensor) -> torch.Tensor:
        # The seat not to move has an all-zero mask and its action is ignored: give it action 0.
        first = torch.zeros_like(mask)
        first[..., 0] = True
        return mask | (first & ~mask.any(-1, keepdim=True))

    net = nn.Sequential(nn.Linear(gin_rummy_v0.OBS_SIZE, 64), nn.Tanh(), nn.Linear(64, 108))
    actor = ProbabilisticActor(
        TensorDictSequential(
            TensorDictModule(net, in_keys=[obs], out_keys=[(group, "logits")]),
            TensorDictModule(legal_or_first, in_keys=[(group, "action_mask")], out_keys=[(group, "legal")]),
        ),
        in_keys={"logits": (group, "logits"), "mask": (group, "legal")},
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
