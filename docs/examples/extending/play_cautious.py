"""Check an installed computer level and its compiled twin: the level ``cautious`` of the package
``gin_cautious`` (its ``pyproject.toml`` names both to ginenv through entry points).

    pip install -e docs/examples/extending     # in a checkout of ginenv: the package beside this file
    python docs/examples/extending/play_cautious.py --deals 20

It prints one JSON line: the level's games through the harness (named ``cautious`` like any
built-in level), how many decisions the compiled policy made exactly as the level does on the
batched engine, and the hands a learner played against ``opponent="cautious"``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from ginenv.agents import available, make
from ginenv.experiments.eval.harness import EvalConfig, evaluate
from ginenv.experiments.eval.report import summarise

from ginenv.plugins import installed
from ginenv.vector import OpponentVectorGinRummy, VectorGinRummy


def through_the_harness(deals: int, out: Path) -> dict[str, Any]:
    """``cautious`` against ``random`` on duplicate deals, as ``ginenv match cautious random`` would."""
    cfg = EvalConfig(agents=("cautious", "random"), deals=deals, seed=0)
    summary = summarise(evaluate(cfg, out, workers=1, progress=False), cfg.agents)
    (pair,) = summary["pairs"]
    sign = 1 if pair["a"] == "cautious" else -1
    return {"games": summary["games"], "points_per_hand": sign * pair["points_per_hand"]["mean"]}


def move_for_move(slots: int, steps: int) -> int:
    """Decisions at which the compiled ``cautious`` (by its entry point) and the level agree, over
    ``steps`` steps of ``slots`` hands where it plays both seats; raises at the first that differs."""
    venv = VectorGinRummy(slots, seed=1)
    obs, mask, _ = venv.reset()
    level = make("cautious")
    for step in range(steps):
        compiled = venv.policy_actions("cautious")
        for i in range(slots):
            mine = level.act({"observation": obs[i], "action_mask": mask[i]})
            if mine != compiled[i]:
                raise AssertionError(f"step {step}, slot {i}: the level plays {mine}, compiled {compiled[i]}")
        obs, mask, *_ = venv.step(compiled)
    return slots * steps


def against_the_compiled_opponent(slots: int, steps: int) -> dict[str, Any]:
    """A learner drawing legal actions at random against ``opponent="cautious"``."""
    rng = np.random.default_rng(0)
    venv = OpponentVectorGinRummy(slots, opponent="cautious", seed=2)
    _, mask = venv.reset()
    hands, points = 0, 0.0
    for _ in range(steps):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        _, mask, rewards, terminated, truncated, _ = venv.step(actions)
        hands += int((terminated | truncated).sum())
        points += float(rewards.sum())
    return {"hands": hands, "learner_points_per_hand": points / max(hands, 1)}


def main() -> None:
    """Run the three checks and print what they found as one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--deals", type=int, default=20, help="duplicate deals through the harness")
    args = parser.parse_args()
    found = {
        "agents": sorted(set(available()) & {"cautious"}),
        "compiled": sorted(set(installed("ginenv.compiled_policies")) & {"cautious"}),
    }
    with tempfile.TemporaryDirectory() as out:
        found["harness"] = through_the_harness(args.deals, Path(out) / "run")
    found["same_moves"] = move_for_move(slots=32, steps=100)
    found["batched"] = against_the_compiled_opponent(slots=32, steps=300)
    print(json.dumps(found))


if __name__ == "__main__":
    main()
