"""Train RLlib's PPO on ginenv's PettingZoo env, then play the result against greedy.

RLlib's own door: ``PettingZooEnv`` wraps the AEC env ``gin_rummy_v0.env()`` as a multi-agent env,
registered with ``register_env``. One seat is played by a learning RLModule that holds a ginenv
``MaskedPolicy`` and masks illegal actions; the other by a fixed RLModule that asks a computer level
(``--opponent``) for every move and is never trained. The learned network is then written as a
ginenv checkpoint and rated by ``ginenv match checkpoint:OUT/policy.pt greedy``.

    pip install ".[rllib]"    # from a checkout of ginenv (or the wheel file with [rllib])
    python train_rllib.py --iterations 2 --hands 20 --out rllib_run
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import ray
import torch
from ginenv.agents import make
from ginenv.agents.neural.network import MaskedPolicy
from ginenv.agents.neural.policy_file import save_checkpoint
from ginenv.experiments.cli import main as ginenv_main
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import ValueFunctionAPI
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule, MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.tune.registry import register_env
from torch import nn

from ginenv import gin_rummy_v0

#: The name the env is registered under with RLlib.
ENV = "ginenv_gin_rummy"
#: Rewards are points times this: a hand's points (tens) become rewards near 1, PPO's usual scale.
REWARD_SCALE = 0.01
#: The hidden layers of the learner's policy network.
HIDDEN = (128, 128)


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """The learner: a ginenv ``MaskedPolicy`` for the action logits, a small MLP for PPO's value.

    The env's observation is a dict; the policy reads its ``"observation"`` vector and the legal
    actions come from its ``"action_mask"``, so no renaming step is needed.
    """

    def setup(self) -> None:
        """Build the policy network (the part exported) and the value network (training only)."""
        hidden = tuple(self.model_config["hidden"])
        self.policy = MaskedPolicy(hidden=hidden, inputs="observation")
        width = hidden[0]
        self.value = nn.Sequential(nn.Linear(self.policy.obs_size, width), nn.ReLU(), nn.Linear(width, 1))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        # MaskedPolicy masks the illegal actions itself (-inf logits), as the exported checkpoint
        # does when it plays: what PPO samples and trains is what `ginenv match` will play.
        return {Columns.ACTION_DIST_INPUTS: self.policy(obs["observation"], obs["action_mask"])}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        """PPO's value estimate of each observation."""
        return self.value(batch[Columns.OBS]["observation"]).squeeze(-1)


class AgentModule(RLModule):
    """A fixed opponent: the ginenv agent ``model_config["spec"]`` chooses every action.

    It returns actions, not logits, so RLlib samples nothing for it; it has no weights and must not be
    in ``policies_to_train``.
    """

    def setup(self) -> None:
        """Build the agent once; the episode callback resets it for every hand."""
        self.agent = make(self.model_config["spec"], seed=self.model_config["seed"])

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = {key: np.asarray(value) for key, value in batch[Columns.OBS].items()}
        actions = [
            self.agent.act({"observation": obs["observation"][i], "action_mask": obs["action_mask"][i]})
            for i in range(len(obs["observation"]))
        ]
        return {Columns.ACTIONS: np.array(actions)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError("the opponent module is not trained")


def reset_opponent(*, rl_module: MultiRLModule, **kwargs: Any) -> None:
    """At every new hand the opponent forgets the last one, as ``Agent.reset`` requires."""
    rl_module["opponent"].agent.reset()


def parse_args() -> argparse.Namespace:
    """The command line: how long to train, how many hands to rate on, where to write."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--iterations", type=int, default=2, help="PPO training iterations")
    parser.add_argument("--batch", type=int, default=1000, help="env steps sampled per iteration")
    parser.add_argument("--opponent", default="greedy", help="the level played while training")
    parser.add_argument("--hands", type=int, default=20, help="hands of the closing match")
    parser.add_argument("--seed", type=int, default=0, help="seed of the env and of PPO")
    parser.add_argument("--out", type=Path, default=Path("rllib_run"), help="folder for the outputs")
    return parser.parse_args()


def train(args: argparse.Namespace) -> tuple[MaskedPolicy, int]:
    """PPO for the ``learner`` seat against ``args.opponent``; the trained policy and the env steps."""
    # infos="numeric": the same keys at every step, numbers and arrays only, which is what code
    # that batches the infos RLlib keeps with its episodes expects (the full infos nest strings).
    register_env(ENV, lambda _: PettingZooEnv(gin_rummy_v0.env(infos="numeric", reward_scale=REWARD_SCALE)))
    config = (
        PPOConfig()
        # RLlib's env check steps an action sampled without the mask; the env would answer it with
        # its illegal-move warning and end the hand, which proves nothing about the env.
        .environment(ENV, disable_env_checking=True)
        # Sampling in this process: one env, no remote env runners, no remote learner.
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
        .learners(num_learners=0)
        .multi_agent(
            policies={"learner", "opponent"},
            # The dealer is drawn for every hand, so player_0 moves first in some hands and second
            # in others: a fixed seat still teaches both.
            policy_mapping_fn=lambda agent_id, episode, **kwargs: (
                "learner" if agent_id == "player_0" else "opponent"
            ),
            policies_to_train=["learner"],
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "learner": RLModuleSpec(module_class=MaskedPPOModule, model_config={"hidden": HIDDEN}),
                    "opponent": RLModuleSpec(
                        module_class=AgentModule, model_config={"spec": args.opponent, "seed": args.seed}
                    ),
                }
            )
        )
        .training(train_batch_size_per_learner=args.batch, minibatch_size=250, num_epochs=4, lr=3e-4)
        .callbacks(on_episode_start=reset_opponent)
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    try:
        initial = {k: v.clone() for k, v in algo.get_module("learner").policy.state_dict().items()}
        for i in range(1, args.iterations + 1):
            result = algo.train()
            loss = result["learners"]["learner"]["policy_loss"]
            # The learner's mean return over the last (at most 100) hands, back in points.
            points = result["env_runners"]["module_episode_returns_mean"]["learner"] / REWARD_SCALE
            print(f"iteration {i}: policy loss {loss:+.4f}, points per hand {points:+.1f}", flush=True)
        steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
        # The local env runner's copy, which the algorithm syncs from the learner after every update.
        policy = algo.get_module("learner").policy
        changed = any(not torch.equal(initial[k], v) for k, v in policy.state_dict().items())
        if not changed:
            raise RuntimeError("training left the policy's weights as they were")
    finally:
        algo.stop()
    return policy, steps


def run() -> int:
    """Train, export, match; the exit status is the match's."""
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    # A small network on a 2-core machine: torch's extra threads only contend with Ray for cores.
    # And on a shared machine (a laptop, a CI runner) one thread never waits for a core another
    # process holds: two spin-waiting threads beside one busy process ran PPO 15x slower than one.
    torch.set_num_threads(1)

    ray.init(num_cpus=2, include_dashboard=False)
    try:
        start = time.perf_counter()
        policy, steps = train(args)
        print(f"trained {steps} steps in {time.perf_counter() - start:.1f} s")
    finally:
        ray.shutdown()

    checkpoint = args.out / "policy.pt"
    save_checkpoint(policy, checkpoint, config={"trainer": "rllib-ppo", "opponent": args.opponent})
    print(f"wrote {checkpoint}")

    match = ["match", f"checkpoint:{checkpoint}", "greedy", "--hands", str(args.hands)]
    # The run folder goes under --out, not into results/ of the current folder.
    match += ["--out", str(args.out / "match"), "--no-plots", "--quiet"]
    print("ginenv " + " ".join(match), flush=True)
    return ginenv_main(match)


if __name__ == "__main__":
    raise SystemExit(run())
