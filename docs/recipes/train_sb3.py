"""Train sb3-contrib's MaskablePPO on ginenv's Gymnasium env, then play the result against greedy.

Stable-Baselines3's own door: ``make_vec_env`` builds the registered Gymnasium id
``ginenv/GinRummy-v0`` (one seat learns, a computer level plays the other), and ``MaskablePPO``
reads the legal actions from the env's ``action_masks()`` method. The trained policy is then
written as a ginenv checkpoint and rated by ``ginenv match checkpoint:OUT/policy.pt greedy``.

    pip install ".[sb3]"    # from a checkout of ginenv (or the wheel file with [sb3])
    python train_sb3.py --steps 4096 --hands 20 --out sb3_run
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
from ginenv.experiments.cli import main as ginenv_main
from ginenv.experiments.train.sb3 import export_maskable_ppo
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env

import ginenv  # noqa: F401  (the import registers ginenv/GinRummy-v0 with Gymnasium)


def parse_args() -> argparse.Namespace:
    """The command line: how long to train, how many hands to rate on, where to write."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--steps", type=int, default=4096, help="learner decisions to train on")
    parser.add_argument("--envs", type=int, default=4, help="Gymnasium envs stepped side by side")
    parser.add_argument("--opponent", default="greedy", help="the level played while training")
    parser.add_argument("--hands", type=int, default=20, help="hands of the closing match")
    parser.add_argument("--seed", type=int, default=0, help="seed of the envs and of PPO")
    parser.add_argument("--out", type=Path, default=Path("sb3_run"), help="folder for the outputs")
    return parser.parse_args()


def train(args: argparse.Namespace) -> MaskablePPO:
    """MaskablePPO against ``args.opponent`` on ``args.envs`` copies of the Gymnasium env."""
    envs = make_vec_env(
        "ginenv/GinRummy-v0",
        n_envs=args.envs,
        seed=args.seed,
        # seat=None deals the learner either seat, so it learns both the first and the second
        # move; reward_scale turns points (tens per hand) into rewards near 1, the scale PPO's
        # defaults are tuned for.
        env_kwargs={"opponent": args.opponent, "seat": None, "reward_scale": 0.01},
    )
    model = MaskablePPO(
        "MlpPolicy",
        envs,
        # Short rollouts so that even the default few thousand steps make several updates.
        n_steps=256,
        batch_size=256,
        seed=args.seed,
        verbose=0,
    )
    # No action_masks argument is needed: MaskablePPO asks every env for action_masks(), which
    # SingleAgentEnv answers with the learner's legal actions.
    model.learn(total_timesteps=args.steps)
    return model


def run() -> int:
    """Train, export, match; the exit status is the match's."""
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    # A small network on a few envs: torch's extra threads only contend with the envs for cores.
    # And on a shared machine (a laptop, a CI runner) one thread never waits for a core another
    # process holds: two spin-waiting threads beside one busy process ran PPO 15x slower than one.
    torch.set_num_threads(1)

    start = time.perf_counter()
    model = train(args)
    print(f"trained {model.num_timesteps} steps in {time.perf_counter() - start:.1f} s")

    # The SB3 save file, for SB3's own tools (`ginenv export-sb3 MODEL.zip OUT.pt` reads it too).
    model.save(args.out / "maskable_ppo.zip")
    # From the model in memory the export checks everything, and the checkpoint gives exactly
    # the SB3 policy's action logits.
    checkpoint = args.out / "policy.pt"
    export_maskable_ppo(model, checkpoint)
    print(f"wrote {checkpoint}")

    match = ["match", f"checkpoint:{checkpoint}", "greedy", "--hands", str(args.hands)]
    # The run folder goes under --out, not into results/ of the current folder.
    match += ["--out", str(args.out / "match"), "--no-plots", "--quiet"]
    print("ginenv " + " ".join(match), flush=True)
    return ginenv_main(match)


if __name__ == "__main__":
    raise SystemExit(run())
