"""Training on a shared machine: the default torch threads against 1 and 2, beside a busy process and not.

Protocol: the shipped config ``ppo`` timed as ``benchmarks/bench_train.py`` times it (its
:func:`~bench_train.measure`: ``--updates`` PPO updates of ``--num-envs x --num-steps`` env steps,
1024 x 64 by default as in the shipped config, no evaluation), after one untimed warm-up run in this
process. Two phases:

- **busy**: a competing process, a pure-Python busy loop pinned to one core (``--core``, by default
  the last this process may use), runs the whole phase; the rows ``threads`` auto (the default),
  1 and 2, in turn, ``--rounds`` times (each round in the reverse order of the one before, so
  that a drift of the machine falls on every row alike);
- **quiet**: no competitor; the rows auto and 2, in turn likewise.

It prints each row's env steps/s, the torch threads it ended on and the cores' worth of work
other processes did meanwhile (:func:`ginenv.cores.other_load`: the competitor's core, plus
whatever else the machine was doing), then the two ratios against their targets: **busy**: the
default over the better of 1 and 2 under the competitor (target >= 0.85); **quiet**: the default
over 2 without it (>= 0.90). A row's figure is the mean of its rounds. The competitor is killed at
the end whatever happens; it also ends itself once this process is gone (it watches its parent)::

    python benchmarks/bench_contention.py            # about 5 minutes on this project's 2 cores
    python benchmarks/bench_contention.py --record   # the ratios and rows into docs/figures.json

A machine with one core has no choice to make: refused in one line (exit 2).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: The targets of the two ratios (default threads over the best pinned count).
BUSY_TARGET = 0.85
QUIET_TARGET = 0.90
#: The rows of each phase, in the order of the first round.
BUSY_ROWS: tuple[int | str, ...] = ("auto", 1, 2)
QUIET_ROWS: tuple[int | str, ...] = ("auto", 2)
#: The last column: the other processes' work during the row, competitor included.
OTHERS = "others (cores)"

# The competitor: a pure-Python busy loop on one core that ends itself once its parent is gone.
BUSY_LOOP = """
import os, sys
core, parent = int(sys.argv[1]), int(sys.argv[2])
if core >= 0 and hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {core})
while os.getppid() == parent:
    for _ in range(200_000):
        pass
"""


@contextlib.contextmanager
def competitor(core: int) -> Iterator[subprocess.Popen[bytes]]:
    """A busy process pinned to ``core`` (-1: not pinned) while the block runs; killed after it."""
    proc = subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(core), str(os.getpid())])
    try:
        time.sleep(0.5)  # running before the first row looks at the machine
        yield proc
    finally:
        proc.kill()
        proc.wait()


def row_order(rows: tuple[int | str, ...], round_index: int) -> tuple[int | str, ...]:
    """The rows of round ``round_index``: the first round's order, reversed every other round."""
    return rows if round_index % 2 == 0 else tuple(reversed(rows))


def run_phase(
    phase: str, rows: tuple[int | str, ...], rounds: int, updates: int, num_envs: int, num_steps: int
) -> list[dict[str, Any]]:
    """Every row of a phase ``rounds`` times, printed as it ends: a dict per row run."""
    import torch
    from bench_train import measure

    from ginenv.cores import other_load, read_cores

    results = []
    for r in range(rounds):
        for threads in row_order(rows, r):
            before = read_cores()
            fig = measure("cpu", "fp32", threads, updates, num_envs, num_steps, warm_up=False)
            others = other_load(before, read_cores())
            row = {
                "phase": phase,
                "threads": threads,
                "round": r + 1,
                "steps_per_s": fig["steps_per_s"],
                "threads_at_end": torch.get_num_threads(),
                "other_load": others,
            }
            results.append(row)
            print(
                f"{phase:<6} {threads!s:>7} {r + 1:>5} {fig['steps_per_s']:>12,.0f} "
                f"{row['threads_at_end']:>14} {others:>14.2f}",
                flush=True,
            )
    return results


def rate(results: list[dict[str, Any]], phase: str, threads: int | str) -> float:
    """The mean env steps/s of a row over its rounds."""
    return statistics.mean(
        r["steps_per_s"] for r in results if r["phase"] == phase and r["threads"] == threads
    )


def ratios(results: list[dict[str, Any]]) -> dict[str, float]:
    """The two ratios: ``busy`` (auto over the better of 1 and 2 beside the competitor) and
    ``quiet`` (auto over 2 without it)."""
    best = max(rate(results, "busy", 1), rate(results, "busy", 2))
    return {
        "busy": rate(results, "busy", "auto") / best,
        "quiet": rate(results, "quiet", "auto") / rate(results, "quiet", 2),
    }


def verdict(value: float, target: float) -> str:
    """``ok`` or ``BELOW`` the target."""
    return "ok" if value >= target else "BELOW"


def summary(results: list[dict[str, Any]]) -> list[str]:
    """The ratio lines under the table."""
    got = ratios(results)
    busy_best = max((1, 2), key=lambda t: rate(results, "busy", t))
    return [
        f"busy:  default {rate(results, 'busy', 'auto'):,.0f} / threads={busy_best} "
        f"{rate(results, 'busy', busy_best):,.0f} (the better pinned) = {got['busy']:.2f} "
        f"(target >= {BUSY_TARGET:.2f}) {verdict(got['busy'], BUSY_TARGET)}",
        f"quiet: default {rate(results, 'quiet', 'auto'):,.0f} / threads=2 {rate(results, 'quiet', 2):,.0f} "
        f"= {got['quiet']:.2f} (target >= {QUIET_TARGET:.2f}) {verdict(got['quiet'], QUIET_TARGET)}",
    ]


def figures(results: list[dict[str, Any]]) -> dict[str, tuple[float, str]]:
    """What ``--record`` writes into docs/figures.json: the ratios and each row's steps/s."""
    got = ratios(results)
    values = {
        "contention.busy_ratio": (got["busy"], "ratio"),
        "contention.quiet_ratio": (got["quiet"], "ratio"),
    }
    for phase, rows in (("busy", BUSY_ROWS), ("quiet", QUIET_ROWS)):
        for threads in rows:
            values[f"contention.{phase}_threads_{threads}_steps_per_s"] = (
                rate(results, phase, threads),
                "rate",
            )
    return values


def main(argv: list[str] | None = None) -> int:
    """Run both phases and print the table and the ratios; exit 0 even below a target (a report)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--updates", type=int, default=2, help="timed PPO updates a row (default 2)")
    p.add_argument(
        "--num-envs",
        type=int,
        default=1024,
        help="slots, 64 env steps each an update (default 1024, the shipped config's)",
    )
    p.add_argument(
        "--num-steps", type=int, default=64, help="env steps a slot an update (default 64, the config's)"
    )
    p.add_argument("--rounds", type=int, default=2, help="runs of every row, alternated (default 2)")
    p.add_argument("--core", type=int, help="the competitor's core (default: the last this process may use)")
    p.add_argument("--json", metavar="PATH", help="also write the rows and ratios to this JSON file")
    p.add_argument("--record", action="store_true", help="write the ratios and rows into docs/figures.json")
    args = p.parse_args(argv)
    for name in ("updates", "num_envs", "num_steps", "rounds"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be a positive integer, got {getattr(args, name)}")
    from ginenv.cores import usable_cores

    cores = (
        sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(usable_cores()))
    )
    if len(cores) < 2:
        print(
            "bench_contention: this process may use one core only: no thread count to choose", file=sys.stderr
        )
        return 2
    core = cores[-1] if args.core is None else args.core
    if args.core is not None and args.core not in cores:
        p.error(f"--core must be one of this process's cores {cores}, got {args.core}")
    from bench_train import doc_figures, measure

    started_on = doc_figures().machine() if args.record else None
    import torch

    print(
        f"bench_contention: torch {torch.__version__}, cores {cores}, competitor on core {core}, "
        f"{args.num_envs} envs x {args.num_steps} steps, {args.updates} update(s) a row, "
        f"{args.rounds} round(s)",
        flush=True,
    )
    # The warm-up (compilation, allocations; untimed) on auto threads: two would spin on a busy machine
    measure("cpu", "fp32", "auto", 1, args.num_envs, args.num_steps)
    print(f"{'phase':<6} {'threads':>7} {'round':>5} {'env steps/s':>12} {'threads at end':>14} {OTHERS:>14}")
    with competitor(core):
        results = run_phase("busy", BUSY_ROWS, args.rounds, args.updates, args.num_envs, args.num_steps)
    results += run_phase("quiet", QUIET_ROWS, args.rounds, args.updates, args.num_envs, args.num_steps)
    lines = summary(results)
    print("\n".join(lines))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": results, "ratios": ratios(results)}, indent=1))
    if started_on is not None:
        argv_used = argv if argv is not None else sys.argv[1:]
        command = " ".join(["python benchmarks/bench_contention.py", *argv_used])
        doc_figures().record(figures(results), command, started_on)
        print("figures recorded in docs/figures.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
