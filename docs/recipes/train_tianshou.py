"""Train Tianshou's DQN on ginenv's PettingZoo env, then play the result against greedy.

Tianshou's own door: ``tianshou.env.PettingZooEnv`` wraps the AEC env ``gin_rummy_v0.env()``
(whose observation dict becomes ``obs.obs`` and ``obs.mask``), ``DummyVectorEnv`` runs a few copies,
and ``MultiAgentOffPolicyAlgorithm`` gives each seat its own algorithm: DQN on a ginenv
``MaskedPolicy`` for the learner, a computer level that never learns for the other. The network is
then written as a ginenv checkpoint and rated by ``ginenv match checkpoint:OUT/policy.pt greedy``.

    pip install ".[tianshou]"    # from a checkout of ginenv (or the wheel file with [tianshou])
    python train_tianshou.py --steps 4096 --hands 20 --out tianshou_run
"""

from __future__ import annotations

import argparse
import logging
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ginenv.agents import make
from ginenv.agents.neural.network import MaskedPolicy
from ginenv.agents.neural.policy_file import save_checkpoint
from ginenv.experiments.cli import main as ginenv_main
from tianshou.algorithm import DQN, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.algorithm_base import OffPolicyAlgorithm, Policy, TrainingStats
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Batch, Collector, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.utils.torch_utils import policy_within_training_step
from torch import nn

from ginenv import gin_rummy_v0

#: The seat that learns; the computer level plays the other. The dealer is drawn every hand, so
#: the learner moves first in some hands and second in the others.
LEARNER, LEVEL = gin_rummy_v0.AGENTS


def parse_args() -> argparse.Namespace:
    """The command line: how long to train, how many hands to rate on, where to write."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--steps", type=int, default=4096, help="learner decisions to train on")
    parser.add_argument("--envs", type=int, default=4, help="PettingZoo envs stepped side by side")
    parser.add_argument("--opponent", default="greedy", help="the level played while training")
    parser.add_argument("--hands", type=int, default=20, help="hands of the closing match")
    parser.add_argument("--seed", type=int, default=0, help="seed of the envs, the level and DQN")
    parser.add_argument("--out", type=Path, default=Path("tianshou_run"), help="folder for the outputs")
    return parser.parse_args()


class GinRummy(PettingZooEnv):
    """Tianshou's wrapper around ginenv's AEC env, whose reset infos name the env as well.

    ``DummyVectorEnv`` adds ``env_id`` to the infos of ``step`` only; the first move of a hand comes
    from ``reset``, and the level needs to know at every move which table it plays at.
    """

    def __init__(self, env_id: int) -> None:
        """The AEC env with numeric infos, which Tianshou stacks into arrays like the observations."""
        self.env_id = env_id  # set before the wrapper's __init__, which already resets
        super().__init__(gin_rummy_v0.env(infos="numeric", reward_scale=0.01))

    def reset(self, *args: Any, **kwargs: Any) -> tuple[dict, dict]:
        """The wrapper's reset, with ``env_id`` in the infos."""
        obs, info = super().reset(*args, **kwargs)
        return obs, {**info, "env_id": self.env_id}


class QNet(nn.Module):
    """A ginenv ``MaskedPolicy`` as Tianshou's Q-network: ``(obs, state, info) -> (values, state)``.

    The policy's logits are the Q-values. DQN's policy applies ``obs.mask`` itself, both to the greedy
    choice and to its random exploration moves, so the network takes no mask here.
    """

    def __init__(self, net: MaskedPolicy) -> None:
        """Wrap ``net``, the module the checkpoint is written from."""
        super().__init__()
        self.net = net

    def forward(self, obs: np.ndarray, state: Any = None, info: Any = None) -> tuple[torch.Tensor, Any]:
        """One value per action id for a batch of observation vectors."""
        return self.net(torch.as_tensor(obs, dtype=torch.float32)), state


class LevelPolicy(Policy):
    """A ginenv computer level as a Tianshou policy: one agent per env, asked for every move."""

    def __init__(self, spec: str, envs: int, seed: int, action_space: Any) -> None:
        """One agent of ``spec`` per env: levels remember things within a hand (the card they took)."""
        super().__init__(action_space=action_space)
        self.agents = [make(spec, seed=seed + i) for i in range(envs)]

    def forward(self, batch: Batch, state: Any = None, **kwargs: Any) -> Batch:
        """Each row's action, from the agent of the env the row comes from."""
        acts = [
            self.agents[env].act({"observation": obs, "action_mask": mask.astype(np.int8)})
            for env, obs, mask in zip(batch.info.env_id, batch.obs.obs, batch.obs.mask, strict=True)
        ]
        return Batch(act=np.asarray(acts, dtype=np.int64))

    def new_hand(self, env: int) -> None:
        """A hand ended in ``env``: its agent forgets the hand (its generator carries on)."""
        self.agents[env].reset()


class FixedLevel(OffPolicyAlgorithm):
    """The level's seat in the policy manager: an algorithm whose update changes nothing."""

    def __init__(self, policy: LevelPolicy) -> None:
        """Hold the level's policy."""
        super().__init__(policy=policy)

    def _update_with_batch(self, batch: Batch) -> TrainingStats:
        """Nothing to learn."""
        return TrainingStats()


class Referee:
    """The collector's step hook: checks every action, counts the learner's, resets the level."""

    def __init__(self, level: LevelPolicy) -> None:
        """Watch the games the level plays in."""
        self.level = level
        self.learner_moves = 0

    def __call__(self, action_batch: Batch, rollout_batch: Batch) -> None:
        """Called by the collector after each step of the envs, before it is stored."""
        rows = np.arange(len(rollout_batch.act))
        # env() would not raise on an illegal action: it ends the hand with illegal_reward.
        if not rollout_batch.obs.mask[rows, rollout_batch.act].all():
            raise RuntimeError(f"an illegal action was played: {rollout_batch.act}")
        self.learner_moves += int(np.count_nonzero(rollout_batch.obs.agent_id == LEARNER))
        for env in rollout_batch.info.env_id[rollout_batch.done]:
            self.level.new_hand(int(env))


def train(args: argparse.Namespace) -> tuple[MaskedPolicy, Referee, int, float]:
    """DQN against ``args.opponent`` on ``args.envs`` copies of the PettingZoo env.

    Returns the trained network, the referee (its count of learner moves), the number of gradient
    updates and the last loss.
    """
    envs = DummyVectorEnv([lambda i=i: GinRummy(i) for i in range(args.envs)])
    envs.seed(args.seed)
    template = GinRummy(0)  # one more env, read only for its spaces and seat names
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # DQN's exploration draws from numpy's global generator

    net = MaskedPolicy(hidden=(256, 256), inputs="observation")
    learner = DQN(
        policy=DiscreteQLearningPolicy(model=QNet(net), action_space=template.action_space),
        optim=AdamOptimizerFactory(lr=1e-3),
        # The buffer holds both seats' moves in turn, and the n-step return walks it with the
        # learner's rewards (the manager's dispatcher swaps them in). With gamma 1 and a horizon
        # longer than any hand (some 200 moves at the turn limit), the target is the hand's result,
        # even when the level's knock ends it; a short horizon would stop at the level's position.
        gamma=1.0,
        n_step_return_horizon=256,
        # Targets that never bootstrap need no target network.
        target_update_freq=0,
    )
    level = LevelPolicy(args.opponent, args.envs, args.seed, template.action_space)
    # One algorithm per seat, in the env's order: LEARNER, then LEVEL.
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, FixedLevel(level)], env=template)

    referee = Referee(level)
    buffer = VectorReplayBuffer(total_size=20_000, buffer_num=args.envs)
    collector = Collector(algorithm, envs, buffer, exploration_noise=True, on_step_hook=referee)
    collector.reset()

    updates, loss = 0, math.nan
    # The manager's training flag does not reach the seats' policies; DQN explores only under its own.
    with policy_within_training_step(algorithm.policy), policy_within_training_step(learner.policy):
        while referee.learner_moves < args.steps:
            # 20% random moves, falling to 2% by mid-run. Few: the target is the hand's result under
            # the moves actually played, and much random play would make every choice look alike.
            learner.policy.set_eps_training(max(0.02, 0.2 * (1 - 2 * referee.learner_moves / args.steps)))
            collector.collect(n_step=16 * args.envs)
            for _ in range(2):
                stats = algorithm.update(buffer=buffer, sample_size=64)
                loss = stats.get_loss_stats_dict()[f"{LEARNER}/loss"]
                updates += 1
    envs.close()
    return net, referee, updates, loss


def run() -> int:
    """Train, export, match; the exit status is the match's."""
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    # A small network on a few envs: torch's extra threads only contend with the envs for cores.
    # And on a shared machine (a laptop, a CI runner) one thread never waits for a core another
    # process holds: two spin-waiting threads beside one busy process ran PPO 15x slower than one.
    torch.set_num_threads(1)
    # The collector summarises episode returns, two per hand here (one per seat), and warns at every
    # collect that it flattens them; that says nothing about the training.
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)

    start = time.perf_counter()
    net, referee, updates, loss = train(args)
    print(f"trained {referee.learner_moves} steps in {time.perf_counter() - start:.1f} s")
    print(f"{updates} gradient updates, last loss {loss:.4f}")

    checkpoint = args.out / "policy.pt"
    save_checkpoint(net, checkpoint, config={"library": "tianshou", "algorithm": "DQN", "steps": args.steps})
    print(f"wrote {checkpoint}")

    match = ["match", f"checkpoint:{checkpoint}", "greedy", "--hands", str(args.hands)]
    # The run folder goes under --out, not into results/ of the current folder.
    match += ["--out", str(args.out / "match"), "--no-plots", "--quiet"]
    print("ginenv " + " ".join(match), flush=True)
    return ginenv_main(match)


if __name__ == "__main__":
    raise SystemExit(run())
