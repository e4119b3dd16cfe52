"""The GPU rows of the speed page, in one run sized to fit five minutes of a lent GPU machine.

Three kinds of row, each measured in this run on this machine, written to one JSON file that
``docs/speed.md`` and ``benchmarks/plot_speed.py`` read:

``engine``
    ``VectorGinRummy(N, threads=k).step`` decisions/s (observation and mask included, random legal
    actions) for ``k`` = 1, 2, 4, ... up to the cores the process may use, at each ``--hands`` N:
    how far the batched engine feeds a GPU from the host's cores.
``train``
    PPO env steps/s, learning included (``bench_train.measure``: the shipped config ``ppo``, a
    warm-up update untimed), for each ``--hands`` (as ``num_envs``) and each ``--precision``; then
    at each ``--hands`` in the first precision the same with two local workers whose env steps
    overlap (``overlap``: one's engine steps while the other's network chooses) on
    ``--overlap-threads`` engine threads each (``workers``, ``overlap`` and ``engine_threads`` in
    every row).
``inference``
    The shipped network's shape choosing actions for N observations at once, forward passes/s:
    eager, captured in a CUDA graph (CUDA only) and ``torch.compile`` d (where torch can compile
    here; a failure is recorded as its one-line reason, not raised).

The GPU check, on a lent machine (about four minutes)::

    python benchmarks/bench_gpu.py --device cuda --out docs/gpu_figures.json

and the CPU run the tests make of it (seconds)::

    python benchmarks/bench_gpu.py --device cpu --hands 64 --threads 1 --updates 1 --num-steps 8 \
        --precision fp32 --no-compile --out /tmp/gpu.json

Every row carries the command that produced it; ``--budget`` seconds stops before a row that would
start after it (the rows done are written, the rest listed under ``skipped``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # bench_vector and bench_train, beside this script

from bench_train import measure  # noqa: E402
from bench_vector import vector_decisions  # noqa: E402


def thread_counts(limit: int) -> list[int]:
    """1, 2, 4, ... up to ``limit``, and ``limit`` itself (the doubling shows the scaling's shape;
    the last point is the whole machine)."""
    counts = []
    k = 1
    while k < limit:
        counts.append(k)
        k *= 2
    counts.append(limit)
    return counts


def usable_cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def timed(call: Callable[[], Any], device: str, seconds: float) -> float:
    """Calls per second of ``call`` over about ``seconds`` after three warm-up calls, synchronising
    the device so that queued GPU work is counted."""
    import torch

    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    for _ in range(3):
        call()
    sync()
    calls = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        call()
        calls += 1
        if calls % 16 == 0:
            sync()
    sync()
    return calls / (time.perf_counter() - start)


def inference_rows(device: str, hands: int, seconds: float, compile_too: bool) -> list[dict[str, Any]]:
    """Forward passes/s of the shipped config's policy on ``hands`` observations: eager, in a CUDA
    graph (CUDA only) and compiled (``compile_too``)."""
    import torch
    from ginenv.experiments.eval.ladder_config import load_dataclass_yaml
    from ginenv.experiments.train.actor_critic import ActorCritic
    from ginenv.experiments.train.ppo import Args

    from ginenv.vector import VectorGinRummy

    args = load_dataclass_yaml("ppo", Args)
    net = ActorCritic.for_args(args).to(device).eval()
    obs, mask, _ = VectorGinRummy(hands, seed=0).reset()
    x = net.actor.prepare(obs).to(device)
    m = torch.from_numpy(mask).to(device)

    def eager() -> torch.Tensor:
        with torch.no_grad():
            return net.actor(x, m)

    rows = [{"mode": "eager", "forward_per_s": timed(eager, device, seconds)}]
    if device == "cuda":
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # warm-up on a side stream, as capture requires
            for _ in range(3):
                eager()
        torch.cuda.current_stream().wait_stream(stream)
        with torch.cuda.graph(graph):
            eager()
        rows.append({"mode": "cuda_graph", "forward_per_s": timed(graph.replay, device, seconds)})
    if compile_too:
        try:
            compiled = torch.compile(net.actor, mode="reduce-overhead" if device == "cuda" else "default")

            def run_compiled() -> torch.Tensor:
                with torch.no_grad():
                    return compiled(x, m)

            rows.append({"mode": "compiled", "forward_per_s": timed(run_compiled, device, seconds)})
        except Exception as error:  # a machine without a working compiler: say why, go on
            reason = f"{type(error).__name__}: {error}".splitlines()[0][:200]
            rows.append({"mode": "compiled", "forward_per_s": None, "error": reason})
    for row in rows:
        row["hands"] = hands
        row["decisions_per_s"] = row["forward_per_s"] * hands if row["forward_per_s"] else None
    return rows


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda", choices=("cpu", "cuda"))
    p.add_argument("--hands", type=int, nargs="+", default=[4096, 16384], help="slots (default 4096 16384)")
    p.add_argument("--threads", type=int, default=0, help="most engine threads (default: the usable cores)")
    p.add_argument("--precision", nargs="+", default=["fp32", "bf16"], choices=("fp32", "bf16"))
    p.add_argument("--updates", type=int, default=3, help="timed PPO updates per train row (default 3)")
    p.add_argument(
        "--num-steps", type=int, default=0, help="env steps per slot per update (default: config's)"
    )
    p.add_argument(
        "--engine-steps", type=int, default=0, help="steps per engine row (default: ~4 M decisions)"
    )
    p.add_argument(
        "--overlap-threads",
        type=int,
        default=0,
        help="engine threads of each overlapped worker (default: a quarter of the usable cores, 1 at least)",
    )
    p.add_argument("--seconds", type=float, default=2.0, help="timing per inference row (default 2)")
    p.add_argument("--no-compile", action="store_true", help="skip the torch.compile inference row")
    p.add_argument("--budget", type=float, default=270.0, help="start no row after this many seconds")
    p.add_argument("--out", default="docs/gpu_figures.json", help="the JSON file written")
    args = p.parse_args(argv)
    for name in ("hands", "updates", "seconds", "budget"):
        values = getattr(args, name)
        if min(values if isinstance(values, list) else [values]) <= 0:
            p.error(f"--{name} must be positive, got {values}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print(
            f"bench_gpu: --device cuda, but this torch ({torch.__version__}) sees no CUDA device",
            file=sys.stderr,
        )
        return 2
    started = time.perf_counter()
    command = " ".join(
        ["python benchmarks/bench_gpu.py", *map(shlex.quote, argv if argv is not None else sys.argv[1:])]
    )
    cores = usable_cores()
    name = torch.cuda.get_device_name(0) if args.device == "cuda" else platform.processor() or "cpu"
    report: dict[str, Any] = {
        "date": dt.date.today().isoformat(),
        "device": name,
        "cores": cores,
        "torch": torch.__version__,
        "command": command,
        "engine": [],
        "train": [],
        "inference": [],
        "skipped": [],
    }
    out = Path(args.out)

    def due(row: str) -> bool:
        """Whether a row may start; one that may not is listed as skipped."""
        if time.perf_counter() - started < args.budget:
            return True
        report["skipped"].append(row)
        return False

    def save() -> None:
        report["wall_s"] = round(time.perf_counter() - started, 1)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")

    for hands in args.hands:
        steps = args.engine_steps or max(20, 4_000_000 // hands)
        for k in thread_counts(args.threads or cores):
            if due(f"engine {hands} hands {k} threads"):
                fig = vector_decisions(hands, steps, seed=0, threads=k)
                report["engine"].append({"hands": hands, "threads": k, **fig})
                print(f"engine  {hands:>6} hands {k:>3} threads {fig['decisions_per_s']:>14,.0f} decisions/s")
        save()
    for hands in args.hands:
        for row in (
            inference_rows(args.device, hands, args.seconds, not args.no_compile)
            if due(f"inference {hands}")
            else []
        ):
            report["inference"].append(row)
            rate = (
                f"{row['decisions_per_s']:>14,.0f} decisions/s"
                if row["forward_per_s"]
                else row.get("error", "")
            )
            print(f"infer   {hands:>6} hands {row['mode']:>10} {rate}")
        save()
    overlap_threads = args.overlap_threads or max(1, cores // 4)
    train_rows = [(hands, precision, False) for hands in args.hands for precision in args.precision]
    train_rows += [(hands, args.precision[0], True) for hands in args.hands]
    for hands, precision, overlap in train_rows:
        name = f"train {hands} hands {precision}" + (" overlapped" if overlap else "")
        if due(name):
            workers, engine_threads = (2, overlap_threads) if overlap else (1, 1)
            fig = measure(
                args.device, precision, 2, args.updates, hands, num_steps=args.num_steps or None,
                workers=workers, engine_threads=engine_threads, overlap=overlap,
            )  # fmt: skip
            report["train"].append(
                {"hands": hands, "precision": precision, "workers": workers, "overlap": overlap,
                 "engine_threads": engine_threads, **fig}
            )  # fmt: skip
            label = "overlapped" if overlap else precision
            print(f"train   {hands:>6} hands {label:>10} {fig['steps_per_s']:>14,.0f} env steps/s")
        save()
    save()
    print(f"bench_gpu: {len(report['skipped'])} rows skipped, {report['wall_s']} s; figures in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
