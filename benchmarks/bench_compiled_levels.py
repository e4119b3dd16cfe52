"""Decisions a second of each level compiled for the batched engine, on one core.

Every compiled policy of the engine's table that is a heuristic level (``easy``, ``normal``,
``hard``, ``expert``, ``master`` at ``--master-worlds``), with ``greedy`` as the anchor measured in
the same run: for each, ``--slots`` hands of the standard rules dealt from ``--seed`` are played by
the level in both seats (:meth:`ginenv.vector.VectorGinRummy.policy_actions`, one thread), and only
the policy's time is counted, for at least ``--seconds`` seconds and ``--decisions`` decisions.
Printed: decisions a second of each level, and how many times greedy's cost a decision is (the
figure to compare across machines, the machine's other jobs moving the absolute rates).

Run (about a minute)::

    python benchmarks/bench_compiled_levels.py
    python benchmarks/bench_compiled_levels.py --master-worlds 512 --seconds 5
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")


from ginenv.vector import VectorGinRummy

#: The anchor, then the levels in order of strength.
ANCHOR = "greedy"
LEVELS = ("easy", "normal", "hard", "expert")


def rate(name: str, slots: int, seed: int, seconds: float, decisions: int) -> float:
    """Decisions a second of the compiled policy ``name`` playing both seats of ``slots`` hands."""
    venv = VectorGinRummy(slots, seed=seed, threads=1)
    venv.reset()
    venv.policy_actions(name)  # compiled (or loaded from the cache) before the clock starts
    spent = 0.0
    made = 0
    while spent < seconds or made < decisions:
        start = time.perf_counter()
        actions = venv.policy_actions(name)
        spent += time.perf_counter() - start
        made += int((actions >= 0).sum())
        venv.step(actions)
    return made / spent


def main() -> None:
    """Measure and print the table (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=64, help="hands played at once (default 64)")
    parser.add_argument("--seed", type=int, default=0, help="deal seed (default 0)")
    parser.add_argument("--seconds", type=float, default=3.0, help="least policy time per level (default 3)")
    parser.add_argument("--decisions", type=int, default=200, help="least decisions per level (default 200)")
    parser.add_argument("--master-worlds", type=int, default=64, help="master's worlds (default 64)")
    args = parser.parse_args()
    names = (ANCHOR, *LEVELS, f"master@worlds={args.master_worlds}")
    rates = {n: rate(n, args.slots, args.seed, args.seconds, args.decisions) for n in names}
    print(f"{'level':<20} {'decisions/s':>12} {'cost / greedy':>14}")
    for name in names:
        print(f"{name:<20} {rates[name]:>12.0f} {rates[ANCHOR] / rates[name]:>14.1f}")


if __name__ == "__main__":
    main()
