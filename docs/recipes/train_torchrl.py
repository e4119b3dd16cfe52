"""Train a masked PPO policy with TorchRL on ginenv's Parallel env, then play it against greedy.

TorchRL's own door: ``PettingZooWrapper`` wraps ``gin_rummy_v0.parallel_env(infos="numeric")``,
one tensordict group per seat. A ginenv ``MaskedPolicy`` plays ``player_0`` through a
``ProbabilisticActor`` with a ``MaskedCategorical`` reading the action mask, a computer level plays
``player_1``, ``env.rollout`` gathers the steps and ``ClipPPOLoss`` with ``GAE`` makes a few masked
PPO updates of the learner. The trained policy is then written as a ginenv checkpoint and rated by
``ginenv match checkpoint:OUT/policy.pt greedy``.

    pip install ".[torchrl]"    # from a checkout of ginenv (or the wheel file with [torchrl])
    python train_torchrl.py --steps 4096 --hands 20 --out torchrl_run
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from ginenv.agents import make
from ginenv.agents.base import Agent
from ginenv.agents.neural.network import MaskedPolicy
from ginenv.agents.neural.policy_file import save_checkpoint
from ginenv.experiments.cli import main as ginenv_main
from tensordict.nn import TensorDictModule, TensorDictSequential
from torch import nn
from torchrl.envs import InitTracker, TransformedEnv
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import ExplorationType, MarlGroupMapType, set_exploration_type
from torchrl.modules import MaskedCategorical, ProbabilisticActor
from torchrl.objectives import ClipPPOLoss, ValueEstimators

from ginenv import gin_rummy_v0

#: The seats: the learner plays player_0, the level player_1. The dealer is drawn at every reset,
#: so the learner still moves first in some hands and second in the others.
LEARNER, LEVEL = "player_0", "player_1"
#: Env steps (both seats' moves) per rollout, and the PPO passes over each rollout in minibatches.
FRAMES_PER_BATCH = 512
EPOCHS, MINIBATCH = 4, 128


def parse_args() -> argparse.Namespace:
    """The command line: how long to train, how many hands to rate on, where to write."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--steps", type=int, default=4096, help="env steps to train on (both seats' moves)")
    parser.add_argument("--opponent", default="greedy", help="the level played while training")
    parser.add_argument("--hands", type=int, default=20, help="hands of the closing match")
    parser.add_argument("--seed", type=int, default=0, help="seed of the env, the networks and the level")
    parser.add_argument("--out", type=Path, default=Path("torchrl_run"), help="folder for the outputs")
    return parser.parse_args()


def make_env(seed: int) -> TransformedEnv:
    """The Parallel env in TorchRL's PettingZooWrapper, one group per seat, with ``is_init`` flags."""
    with warnings.catch_warnings():
        # TorchRL warns that it tests PettingZoo 1.24.3 only; ginenv's tests cover the pairing.
        warnings.simplefilter("ignore", UserWarning)
        env = PettingZooWrapper(
            # Numeric infos become tensors; reward_scale turns points (tens per hand) into rewards
            # near 1, the scale PPO's defaults are tuned for.
            gin_rummy_v0.parallel_env(infos="numeric", reward_scale=0.01),
            # One group per seat, so the learner and the level read and write their own keys.
            group_map=MarlGroupMapType.ONE_GROUP_PER_AGENT,
            use_mask=True,
            categorical_actions=True,
            seed=seed,
        )
    # is_init marks the first step of every hand: the level is reset there, as the harness does.
    return TransformedEnv(env, InitTracker())


def level_module(agent: Agent) -> TensorDictModule:
    """The computer level as a tensordict module writing the action of ``LEVEL``."""

    seat_index = gin_rummy_v0.AGENTS.index(LEVEL)

    def act(
        is_init: torch.Tensor, observation: torch.Tensor, mask: torch.Tensor, active_seat: torch.Tensor
    ) -> torch.Tensor:
        if bool(is_init.any()):
            agent.reset()
        if int(active_seat[0]) != seat_index:
            # Not its turn: its mask holds the no-op only, the action the env ignores.
            return torch.tensor([gin_rummy_v0.NOOP], dtype=torch.int64)
        seat = {"observation": observation[0].numpy(), "action_mask": mask[0].numpy().astype(np.int8)}
        return torch.tensor([agent.act(seat)], dtype=torch.int64)

    keys = [
        "is_init",
        (LEVEL, "observation", "observation"),
        (LEVEL, "action_mask"),
        (LEVEL, "info", "active_seat"),
    ]
    return TensorDictModule(act, in_keys=keys, out_keys=[(LEVEL, "action")])


def train(args: argparse.Namespace) -> tuple[MaskedPolicy, int]:
    """Masked PPO for ``LEARNER`` against ``args.opponent``; the policy and the steps collected."""
    torch.manual_seed(args.seed)
    env = make_env(args.seed)
    observation = (LEARNER, "observation", "observation")

    # The network is ginenv's MaskedPolicy exactly, so save_checkpoint writes it as it is. With
    # inputs="observation" its input is the observation vector itself, as the env gives it.
    policy = MaskedPolicy(hidden=(128, 128), inputs="observation")
    # The distribution reads the env's mask as it is. Only one seat moves per step; the other has
    # one legal action, the no-op the env ignores: a sure action has log-probability 0, so those
    # steps give the policy no gradient.
    actor = ProbabilisticActor(
        TensorDictModule(policy, in_keys=[observation], out_keys=[(LEARNER, "logits")]),
        in_keys={"logits": (LEARNER, "logits"), "mask": (LEARNER, "action_mask")},
        out_keys=[(LEARNER, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        # Named outright: where the log-probability goes by default differs between releases.
        log_prob_key=(LEARNER, "action_log_prob"),
    )
    value_net = nn.Sequential(nn.Linear(gin_rummy_v0.OBS_SIZE, 128), nn.Tanh(), nn.Linear(128, 1))
    critic = TensorDictModule(value_net, in_keys=[observation], out_keys=[(LEARNER, "state_value")])
    opponent = make(args.opponent, seed=args.seed)

    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01, normalize_advantage=True)
    # Every key of the loss lives in the learner's group; the level's group is left out of it.
    loss.set_keys(
        action=(LEARNER, "action"),
        sample_log_prob=(LEARNER, "action_log_prob"),
        value=(LEARNER, "state_value"),
        reward=(LEARNER, "reward"),
        done=(LEARNER, "done"),
        terminated=(LEARNER, "terminated"),
        advantage=(LEARNER, "advantage"),
        value_target=(LEARNER, "value_target"),
    )
    # gamma=1: a hand is short and only its end is rewarded. The advantages run over every step,
    # the level's moves included, so the points of a hand the level ends reach the learner's
    # last decision; the critic learns the value of the positions where the level is to move too.
    loss.make_value_estimator(ValueEstimators.GAE, gamma=1.0, lmbda=0.95)
    # Above the usual 3e-4: a run of a few thousand steps needs big steps to show any learning.
    optimizer = torch.optim.Adam(loss.parameters(), lr=1e-3)

    players = TensorDictSequential(actor, level_module(opponent))
    before = torch.nn.utils.parameters_to_vector(policy.parameters()).detach().clone()
    collected = updates = 0
    losses: list[float] = []
    while collected < args.steps:
        # Each rollout deals a fresh hand and plays on through the hands' ends (the env resets
        # itself); GAE bootstraps from the critic where the rollout cuts a hand short.
        with set_exploration_type(ExplorationType.RANDOM), torch.no_grad():
            batch = env.rollout(FRAMES_PER_BATCH, players, break_when_any_done=False)
        collected += batch.numel()
        with torch.no_grad():
            loss.value_estimator(
                batch, params=loss.critic_network_params, target_params=loss.target_critic_network_params
            )
        for _ in range(EPOCHS):
            for index in torch.randperm(batch.numel()).split(MINIBATCH):
                terms = loss(batch[index])
                total = terms["loss_objective"] + terms["loss_critic"] + terms["loss_entropy"]
                optimizer.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), 1.0)
                optimizer.step()
                updates += 1
                losses.append(total.item())
    env.close()
    moved = (torch.nn.utils.parameters_to_vector(policy.parameters()) - before).norm().item()
    # What the recipe's test checks: the updates ran, their losses were numbers, the weights moved.
    finite = all(np.isfinite(losses))
    print(
        f"ppo: {updates} updates, last loss {losses[-1]:.4f}, all finite: {finite}, weights moved {moved:.4f}"
    )
    return policy, collected


def run() -> int:
    """Train, save, match; the exit status is the match's."""
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    # A small network stepped one move at a time: torch's extra threads would only contend for cores.
    # And on a shared machine (a laptop, a CI runner) one thread never waits for a core another
    # process holds: two spin-waiting threads beside one busy process ran PPO 15x slower than one.
    torch.set_num_threads(1)

    start = time.perf_counter()
    policy, steps = train(args)
    print(f"trained {steps} steps in {time.perf_counter() - start:.1f} s")

    checkpoint = args.out / "policy.pt"
    save_checkpoint(policy, checkpoint)
    print(f"wrote {checkpoint}")

    match = ["match", f"checkpoint:{checkpoint}", "greedy", "--hands", str(args.hands)]
    # The run folder goes under --out, not into results/ of the current folder.
    match += ["--out", str(args.out / "match"), "--no-plots", "--quiet"]
    print("ginenv " + " ".join(match), flush=True)
    return ginenv_main(match)


if __name__ == "__main__":
    raise SystemExit(run())
