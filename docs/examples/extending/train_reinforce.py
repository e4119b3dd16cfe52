"""A training algorithm of your own on the batched engine: REINFORCE with a linear masked policy.

One readable script per algorithm, as CleanRL writes them: the settings in a dataclass, one loop.
The learner plays one seat of each of ``num_envs`` hands against a compiled opponent
(:class:`ginenv.vector.OpponentVectorGinRummy`, which plays the opponent's moves inside the engine,
so the loop sees only the learner's decisions); a hand's points, at its end, are the return of
every decision the learner made in it.

    python docs/examples/extending/train_reinforce.py --updates 50
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields

import numpy as np
import torch
from torch.distributions import Categorical

from ginenv.vector import OpponentVectorGinRummy


@dataclass
class Args:
    """The settings of a run."""

    num_envs: int = 64
    """hands stepped in lockstep"""
    updates: int = 20
    """gradient steps"""
    steps_per_update: int = 64
    """learner decisions per hand slot between two updates"""
    opponent: str = "greedy"
    """the compiled opponent (``ginenv.kernels.policies.policy_names()``)"""
    lr: float = 0.01
    """Adam's step size"""
    seed: int = 0
    """seed of the deals, the seats and the network"""


def train(args: Args) -> tuple[torch.nn.Module, list[float]]:
    """Train; returns the policy and the mean points per finished hand of each update."""
    torch.manual_seed(args.seed)
    venv = OpponentVectorGinRummy(args.num_envs, opponent=args.opponent, seed=args.seed)
    obs, mask = venv.reset()
    policy = torch.nn.Linear(obs.shape[1], mask.shape[1])
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.lr)
    history = []
    for _ in range(args.updates):
        running: list[list[torch.Tensor]] = [[] for _ in range(args.num_envs)]  # this hand's log-probs
        hands, returns = [], []
        for _ in range(args.steps_per_update):
            # torch.tensor copies: the engine rewrites its observation buffer in place at each step,
            # and the graph must keep the observations the actions were drawn from.
            logits = policy(torch.tensor(obs)).masked_fill(torch.tensor(mask) == 0, -1e9)
            dist = Categorical(logits=logits)
            actions = dist.sample()
            log_probs = dist.log_prob(actions)
            obs, mask, rewards, terminated, truncated, _ = venv.step(actions.numpy())
            for i in np.flatnonzero(terminated | truncated):
                hands.append(torch.stack([*running[i], log_probs[i]]).sum())
                returns.append(float(rewards[i]) / 100)  # points (tens a hand) to rewards near 1
                running[i] = []
            for i in np.flatnonzero(~(terminated | truncated)):
                running[i].append(log_probs[i])
        if hands:
            scale = torch.tensor(returns)
            advantage = scale - scale.mean()  # the mean return as the baseline
            loss = -(torch.stack(hands) * advantage).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            history.append(100 * float(scale.mean()))
    return policy, history


def main() -> None:
    """Parse the settings from the command line (``--num-envs``, ``--updates``, ...) and train."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    for field in fields(Args):
        parser.add_argument(
            f"--{field.name.replace('_', '-')}", type=type(field.default), default=field.default
        )
    _, history = train(Args(**vars(parser.parse_args())))
    print(f"points per hand, first and last update: {history[0]:.1f}, {history[-1]:.1f}")


if __name__ == "__main__":
    main()
