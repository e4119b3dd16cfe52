"""Training throughput: env steps/s of PPO including learning, with the split, on a device.

Protocol: the shipped network's shape and recipe (the shipped config ``ppo``), ``--updates`` updates
of ``num_envs x num_steps`` env steps each after a separate, untimed warm-up run of one update
(compilation, allocation), no evaluation, nothing else running. It prints env steps/s and the share
of the env, the inference (learner, snapshots, teacher) and the update, for each ``--precision``
asked, as a table and (with ``--json``) as JSON; and what the update computes per second (its
forward and backward FLOPs, counted by torch's ``FlopCounterMode``, times the learner decisions it
trained on) against this machine's matmul rate measured in the same run (``of peak``). The short
GPU check is this script on a CUDA machine (figures: docs/reports/2026-12-04-gpu-training-throughput.md)::

    python benchmarks/bench_train.py --device cuda --precision fp32 bf16
    python benchmarks/bench_train.py --device cpu --threads 2        # this project's 2-core machine
    python benchmarks/bench_train.py --record    # CPU fp32 figures into docs/figures.json

``--device cuda`` where torch has no CUDA is refused in one line (exit 2), as ``ginenv train`` does.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def measure(
    device: str,
    precision: str,
    threads: int | str,
    updates: int,
    num_envs: int,
    num_steps: int | None = None,
    workers: int = 1,
    engine_threads: int = 1,
    overlap: bool = False,
    warm_up: bool = True,
) -> dict[str, float]:
    """One run of ``updates`` timed updates after a warm-up; its figures (``num_steps``: env steps
    per slot per update, the shipped config's by default; ``workers``: local rollout workers, whose
    env steps overlap when there are several; ``engine_threads``: each one's engine threads;
    ``threads``: torch's, ``auto`` or a number; ``warm_up``: False where this process has already
    run one, so the engine is compiled)."""
    from ginenv.experiments.eval.ladder_config import load_dataclass_yaml
    from ginenv.experiments.train.ppo import Args, train

    base = load_dataclass_yaml("ppo", Args)  # the shipped config, by name
    if num_steps is not None:
        base = dataclasses.replace(base, num_steps=num_steps)
    per_update = num_envs * base.num_steps
    with tempfile.TemporaryDirectory() as tmp:
        args = dataclasses.replace(
            base, device=device, precision=precision, threads=threads, num_envs=num_envs,
            total_steps=per_update, eval_every=0, checkpoint_every=0, workers=workers,
            engine_threads=engine_threads, overlap=overlap,
            runs_dir=tmp, progress=False, experiment="bench",
        )  # fmt: skip
        # The warm-up is a run of its own, untimed: the engine's first compilation, the device's
        # first allocations and kernels never count in the figures.
        if warm_up:
            train(args)
        args = dataclasses.replace(args, total_steps=updates * per_update)
        started = time.perf_counter()
        run_dir = train(args)
        wall = time.perf_counter() - started
        timing = (run_dir / "timing.txt").read_text()
        decisions = learner_decisions(run_dir)
    # timing.txt: "env steps S in W s (R/s); env a s (p%), inference ..., gather ..., update ..."
    shares = {name: float(rest.split("(")[1].rstrip("%)\n")) for name, rest in _parts(timing)}
    steps = updates * per_update
    seconds = {name: float(rest.split(" s (")[0]) for name, rest in _parts(timing)}
    flops = decisions * args.update_epochs * update_flops_per_decision(args)
    update_rate = flops / max(seconds["update"], 1e-9)
    import torch
    from ginenv.experiments.train.actor_critic import resolved_precision

    peak = matmul_peak(args.device, resolved_precision(precision, torch.device(args.device)))
    return {
        "steps_per_s": steps / wall,
        "wall_s": wall,
        **{f"{k}_share": v for k, v in shares.items()},
        "update_gflops": update_rate / 1e9,
        "matmul_peak_gflops": peak / 1e9,
        "update_of_peak": 100 * update_rate / peak,
    }


def _parts(timing: str) -> list[tuple[str, str]]:
    # timing.txt's parts after the ";", split at the name: ("env", "1.2 s (30%)"), ...
    return [
        (name, rest)
        for name, rest in (part.strip().split(" ", 1) for part in timing.split(";", 1)[1].split(","))
    ]


def learner_decisions(run_dir: Path) -> float:
    """The learner decisions the run's updates trained on (TensorBoard's
    ``charts/learner_decisions``, one value per update)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    events.Reload()
    return float(sum(e.value for e in events.Scalars("charts/learner_decisions")))


def update_flops_per_decision(args: Any) -> float:
    """Floating-point operations of one decision's forward and backward pass through the networks
    the run trains (policy with its card head, value, opponent-hand head), counted by torch's
    ``FlopCounterMode`` on a minibatch of 64: what an update epoch costs per decision, in matmuls."""
    import torch
    from ginenv.experiments.train.actor_critic import ActorCritic
    from torch.utils.flop_counter import FlopCounterMode

    from ginenv.features import input_size

    net = ActorCritic.for_args(args)
    x = torch.rand(64, input_size(args.inputs))
    with FlopCounterMode(display=False) as counter:
        logits, value, aux = net(x)
        (logits.sum() + value.sum() + aux.sum()).backward()
    return counter.get_total_flops() / 64


@functools.cache  # one measurement a process per device and precision (bench_gpu asks per row)
def matmul_peak(device: str, precision: str, n: int = 1024, seconds: float = 1.0) -> float:
    """This machine's measured matmul rate, FLOP/s: ``n x n`` products in the update's precision on
    the update's device and threads, for about ``seconds`` (the best of the timed batches)."""
    import torch

    dev = torch.device("cuda" if device == "cuda" else "cpu")
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    a, b = torch.rand(n, n, device=dev, dtype=dtype), torch.rand(n, n, device=dev, dtype=dtype)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    best = 0.0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        sync()
        start = time.perf_counter()
        for _ in range(4):
            a @ b
        sync()
        best = max(best, 4 * 2 * n**3 / (time.perf_counter() - start))
    return best


def doc_figures() -> Any:
    """``docs/_hooks/figures.py``, which reads and writes ``docs/figures.json`` (``bench_env.py``
    loads it)."""
    from bench_env import doc_figures as load_module

    return load_module()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda", "auto"))
    from ginenv.experiments.train.args import PRECISIONS

    p.add_argument(
        "--precision",
        nargs="+",
        default=["fp32"],
        choices=PRECISIONS,
        help="one timed run each (auto: bf16 where the device computes it natively, else fp32)",
    )
    p.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    p.add_argument("--updates", type=int, default=5, help="timed updates after the warm-up (default 5)")
    p.add_argument("--num-envs", type=int, default=1024)
    p.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1],
        help="local rollout workers, one timed run each (default 1)",
    )
    p.add_argument(
        "--overlap", action="store_true", help="runs of two or more workers interleave their env steps"
    )
    p.add_argument("--engine-threads", type=int, default=1, help="each worker's engine threads (default 1)")
    p.add_argument("--json", metavar="PATH", help="also write the figures to this JSON file")
    p.add_argument(
        "--record",
        action="store_true",
        help="write the steps/s and update share into docs/figures.json (CPU runs only)",
    )
    args = p.parse_args(argv)
    if args.record and args.device != "cpu":
        p.error("--record keeps the CPU figures the guides quote; GPU figures belong in a dated report")
    started_on = doc_figures().machine() if args.record else None
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print(
            f"bench_train: --device cuda, but this torch ({torch.__version__}) sees no CUDA device",
            file=sys.stderr,
        )
        return 2
    name = torch.cuda.get_device_name(0) if args.device != "cpu" and torch.cuda.is_available() else "cpu"
    print(f"bench_train: torch {torch.__version__}, device {args.device} ({name}), {args.threads} threads")
    print(
        f"{'precision':<10} {'workers':>7} {'env steps/s':>12} {'env':>6} {'infer':>6} {'gather':>7} "
        f"{'update':>7} {'update GFLOP/s':>15} {'matmul peak':>12} {'of peak':>8}"
    )
    results = {}
    for precision in args.precision:
        for workers in args.workers:
            fig = measure(
                args.device, precision, args.threads, args.updates, args.num_envs,
                workers=workers, engine_threads=args.engine_threads, overlap=args.overlap and workers > 1,
            )  # fmt: skip
            label = "" if workers == 1 else f"_workers{workers}" + ("_overlap" if args.overlap else "")
            results[precision + label] = fig
            print(
                f"{precision:<10} {workers:>7} {fig['steps_per_s']:>12,.0f} {fig['env_share']:>5.0f}% "
                f"{fig['inference_share']:>5.0f}% {fig['gather_share']:>6.0f}% {fig['update_share']:>6.0f}% "
                f"{fig['update_gflops']:>15.1f} {fig['matmul_peak_gflops']:>12.1f} "
                f"{fig['update_of_peak']:>7.0f}%"
            )
    if args.json:
        Path(args.json).write_text(json.dumps({"device": name, "results": results}, indent=1))
    if started_on is not None:
        values = {}
        for precision, fig in results.items():
            values[f"train.{precision}_steps_per_s"] = (fig["steps_per_s"], "rate")
            values[f"train.{precision}_update_share"] = (fig["update_share"], "percent")
            values[f"train.{precision}_update_of_peak"] = (fig["update_of_peak"], "percent")
        argv_used = argv if argv is not None else sys.argv[1:]
        doc_figures().record(values, " ".join(["python benchmarks/bench_train.py", *argv_used]), started_on)
        print("figures recorded in docs/figures.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
