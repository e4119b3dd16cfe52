"""Benchmark of the batched engine (ginenv.vector, ginenv.kernels) against OpenSpiel, one core.

Protocol (``shared/DESIGN.md``, "Performance protocol"): every figure comes from the same run on the
same machine, and only ratios are compared to targets. Every figure is one thread's but the
thread scaling's.

- **Decisions/s with observation and mask** (target: 50x OpenSpiel): ``VectorGinRummy(N).step`` on
  random legal actions, timing the env's own calls (the actions are drawn outside the timed part);
  every decision produces the 532-entry observation and the 108-entry mask of the seat to move.
  Anchor: OpenSpiel's ``gin_rummy`` from Python with ``observation_tensor()`` and
  ``legal_actions_mask()`` at every decision (chance nodes not counted as decisions).
- **Whole random hands/s without observations** (target: 100 k/s, twice a published JAX port's
  44 k games/s on an A100): ``play_random_hands`` in compiled code. Anchor: OpenSpiel random hands.
- **Exact deadwood on arrays of hands** (target: 100x OpenSpiel's ``min_deadwood`` per hand):
  ``kernels.deadwood_many`` on random 10-card hands; anchor ``GinRummyUtils.min_deadwood`` per call.
- **A learner against the compiled greedy opponent**: ``OpponentVectorGinRummy.step`` learner
  decisions/s, the opponent's moves included (information, no target), on 1 and 2 threads.
- **Thread scaling**: the first measurement again with ``VectorGinRummy(N, threads=k)`` for k from 1
  to the cores numba may use (target: 2 threads at least 1.8x one), in ``--rounds`` alternated pairs
  (one thread, then k) whose median ratio is the figure, printed with the lowest and highest: a
  slow spell of the machine falls on both of a pair, where a one-thread run at the start and a
  k-thread run a minute later each had their own. Every k gives the same results
  (``tests/ginenv/test_vector.py``). On a machine whose cores other work keeps busy, GNU OpenMP's
  threads spin-waiting at each loop's end lose to one thread (measured on 2026-12-06 on the 2-core
  machine under a load of 4: 2 threads 0.2x one; with ``OMP_WAIT_POLICY=passive`` 1.0-1.2x).
- **The cliff**: the first measurement at 1024, 2048 and 4096 slots, one thread, the same decisions
  in all (target: no slot count much slower per decision than another; the 532 float32 observation
  of 4096 slots, 8.7 MB a step, leaves the cache).
- **The bandwidth limit**: the bytes a step writes per decision (the observation, the mask and the
  mask's returned copy) against this machine's write bandwidth, measured here by filling new arrays
  of the 4096-slot observation's size (the best of 30): the decisions/s memory would allow, and the
  share of it the step reaches. Far below it, the step is bound by its computing, not by memory.
- **Compile time and caching**: the first call in a fresh process with an empty numba cache
  (``NUMBA_CACHE_DIR`` pointing at a new folder: everything compiles), then again with that cache
  filled (``cache=True``: machine code loaded from disk, nothing compiled).

    python benchmarks/bench_vector.py            # full run (about a minute)
    python benchmarks/bench_vector.py --quick    # a smoke run
    python benchmarks/bench_vector.py --equivalence 5000   # also the AEC-equivalence test at that size
    python benchmarks/bench_vector.py --record   # full run; its figures into docs/figures.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TARGET_DECISIONS = 50.0  # 25x until 2026-12-06
TARGET_HANDS_PER_S = 100_000
TARGET_DEADWOOD = 100.0
TARGET_TWO_THREADS = 1.8


def openspiel_decisions(seconds: float, seed: int) -> dict[str, float]:
    """OpenSpiel random play from Python, observation tensor and legal mask every decision (the
    same loop as ``bench_env.py``'s anchor)."""
    from bench_env import bench_openspiel

    figures = bench_openspiel(seconds, seed)
    return {"decisions_per_s": figures["decisions_per_s"], "hands_per_s": figures["episodes_per_s"]}


def openspiel_hands(seconds: float, seed: int) -> float:
    """OpenSpiel random hands/s without observations."""
    import pyspiel

    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(seed)
    hands = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            actions = state.legal_actions()
            state.apply_action(actions[int(rng.random() * len(actions))])
        hands += 1
    return hands / (time.perf_counter() - start)


def openspiel_deadwood(hands: list[list[int]]) -> float:
    """OpenSpiel's min_deadwood, one call per hand: hands/s."""
    import pyspiel

    utils = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
    call = utils.min_deadwood
    for h in hands[:1000]:
        call(h)
    start = time.perf_counter()
    for h in hands:
        call(h)
    return len(hands) / (time.perf_counter() - start)


def vector_decisions(
    num_envs: int, steps: int, seed: int, threads: int = 1, obs_dtype: str = "float32"
) -> dict[str, float]:
    """Random legal play through VectorGinRummy.step on ``threads`` threads, timing the env's calls
    (observations in ``obs_dtype``)."""
    from ginenv.vector import VectorGinRummy

    venv = VectorGinRummy(num_envs, seed=seed, threads=threads, obs_dtype=obs_dtype)
    rng = np.random.default_rng(seed)
    _, mask, _ = venv.reset()
    venv.step((rng.random(mask.shape, dtype=np.float32) * mask).argmax(axis=1))  # warm-up
    _, mask, _ = venv.reset()
    in_env = 0.0
    hands = 0
    for _ in range(steps):
        actions = (rng.random(mask.shape, dtype=np.float32) * mask).argmax(axis=1)
        t = time.perf_counter()
        _, mask, _, _, terminated, truncated = venv.step(actions)
        in_env += time.perf_counter() - t
        hands += int(terminated.sum() + truncated.sum())
    return {"decisions_per_s": num_envs * steps / in_env, "hands_per_s": hands / in_env}


def vector_random_hands(n: int, seed: int) -> float:
    from ginenv.vector import play_random_hands

    play_random_hands(100, seed=seed)  # warm-up
    start = time.perf_counter()
    play_random_hands(n, seed=seed)
    return n / (time.perf_counter() - start)


def vector_deadwood(masks: np.ndarray) -> float:
    from ginenv import kernels

    kernels.deadwood_many(masks[:100])
    best = float("inf")
    for _ in range(5):  # best of five: the batched call is short, background load is not
        start = time.perf_counter()
        kernels.deadwood_many(masks)
        best = min(best, time.perf_counter() - start)
    return len(masks) / best


def paired_scaling(measure: Callable[[int], float], cores: int, rounds: int) -> dict[int, dict[str, float]]:
    """Per thread count k from 2 to ``cores``: ``rounds`` pairs of ``measure(1)`` then ``measure(k)``
    (decisions/s); the median ratio and its lowest and highest, and the median rates."""
    out = {}
    for k in range(2, cores + 1):
        pairs = [(measure(1), measure(k)) for _ in range(rounds)]
        ratios = [many / one for one, many in pairs]
        out[k] = {
            "ratio": float(np.median(ratios)),
            "low": min(ratios),
            "high": max(ratios),
            "one_thread": float(np.median([one for one, _ in pairs])),
            "rate": float(np.median([many for _, many in pairs])),
        }
    return out


def write_bandwidth(num_envs: int) -> float:
    """Bytes/s this machine writes into a new array of ``num_envs`` float32 observations (the best of
    30 fills), as the step writes each step's observations into a new array."""
    from ginenv.observation import OBS_SIZE

    best = 0.0
    for _ in range(30):
        start = time.perf_counter()
        out = np.empty((num_envs, OBS_SIZE), dtype=np.float32)
        out.fill(1.0)
        best = max(best, out.nbytes / (time.perf_counter() - start))
    return best


def bytes_per_decision() -> int:
    """What a step writes per decision: the float32 observation, the int8 mask and its returned copy."""
    from ginenv.actions import NUM_ACTIONS
    from ginenv.observation import OBS_SIZE

    return OBS_SIZE * 4 + 2 * NUM_ACTIONS


def learner_steps(num_envs: int, steps: int, seed: int, threads: int = 1) -> float:
    from ginenv.vector import OpponentVectorGinRummy

    venv = OpponentVectorGinRummy(num_envs, opponent="greedy", seed=seed, threads=threads)
    rng = np.random.default_rng(seed)
    _, mask = venv.reset()
    in_env = 0.0
    for _ in range(steps):
        actions = (rng.random(mask.shape, dtype=np.float32) * mask).argmax(axis=1)
        t = time.perf_counter()
        _, mask, *_ = venv.step(actions)
        in_env += time.perf_counter() - t
    return num_envs * steps / in_env


_FIRST_CALL = """
import time
t = time.perf_counter()
import numpy as np
from ginenv.vector import VectorGinRummy, OpponentVectorGinRummy
v = VectorGinRummy(4, seed=0)
_, mask, _ = v.reset()
v.step(mask.argmax(axis=1))
o = OpponentVectorGinRummy(4, seed=0)
_, mask = o.reset()
o.step(mask.argmax(axis=1))
print(time.perf_counter() - t)
"""


def compile_times() -> dict[str, float]:
    """Seconds to the first vector step in a fresh process: empty numba cache, then filled cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        out = {}
        for label in ("cold_cache_s", "warm_cache_s"):
            # In the cache's folder: `-c` puts the working folder first on sys.path, and from the
            # repository root the root's ginenv/ (without ginenv.agents, whose compiled greedy the
            # opponent engine loads) would shadow an installed ginenv.
            run = subprocess.run(
                [sys.executable, "-c", _FIRST_CALL],
                env=env,
                cwd=cache,
                capture_output=True,
                text=True,
                check=True,
            )
            out[label] = float(run.stdout.strip().splitlines()[-1])
        return out


def print_scaling(scaling: dict[int, dict[str, float]]) -> None:
    """The lines of :func:`paired_scaling`'s figures."""
    for k, row in scaling.items():
        print(
            f"  {k} threads {row['rate']:12,.0f} decisions/s, {row['ratio']:5.2f}x one thread "
            f"(median of pairs; lowest {row['low']:.2f}x, highest {row['high']:.2f}x; one thread "
            f"{row['one_thread']:,.0f})"
        )


def doc_figures() -> Any:
    """``docs/_hooks/figures.py``, which reads and writes ``docs/figures.json`` (``bench_env.py``
    loads it)."""
    from bench_env import doc_figures as load_module

    return load_module()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a short smoke run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=5, help="alternated pairs per thread count (default 5)")
    p.add_argument("--num-envs", type=int, default=4096, help="slots of the vector env (default 4096)")
    p.add_argument("--equivalence", type=int, metavar="HANDS", help="also run the AEC-equivalence test")
    p.add_argument("--json", metavar="PATH", help="also write the figures to this JSON file")
    p.add_argument(
        "--record",
        action="store_true",
        help="write the headline figures into docs/figures.json (not --quick)",
    )
    a = p.parse_args(argv)
    if a.record and a.quick:
        p.error("--record keeps full runs only, not --quick")
    started_on = doc_figures().machine() if a.record else None
    seconds = 1.0 if a.quick else 4.0
    steps = 30 if a.quick else 300
    n_hands = 20_000 if a.quick else 300_000
    rng = np.random.default_rng(a.seed)
    deadwood_hands = [
        rng.choice(52, 10, replace=False).tolist() for _ in range(20_000 if a.quick else 200_000)
    ]
    masks = np.array([sum(1 << c for c in h) for h in deadwood_hands], dtype=np.int64)
    masks = np.tile(masks, 10)  # the batched call gets a large array

    print("bench_vector: ginenv.vector / ginenv.kernels vs OpenSpiel (pyspiel), ratios from this run")
    os_dw = openspiel_deadwood(deadwood_hands)
    vec_dw = vector_deadwood(masks)
    os_dec = openspiel_decisions(seconds, a.seed)
    vec = vector_decisions(a.num_envs, steps, a.seed)
    os_hands = openspiel_hands(seconds, a.seed)
    vec_hands = vector_random_hands(n_hands, a.seed)
    import numba

    from ginenv.vector import most_threads

    cores = most_threads()
    rounds = 1 if a.quick else a.rounds
    learner_threads = paired_scaling(
        lambda k: learner_steps(a.num_envs, max(steps // 3, 10), a.seed, threads=k), cores, rounds
    )
    learner = learner_steps(a.num_envs, max(steps // 3, 10), a.seed)
    # The cliff: one thread, the same number of decisions at each slot count.
    slots = {n: vector_decisions(n, steps * 4096 // n, a.seed)["decisions_per_s"] for n in (1024, 2048, 4096)}
    compact = vector_decisions(a.num_envs, steps, a.seed, obs_dtype="uint8")["decisions_per_s"]

    # Each thread count against one thread in alternated pairs on the same slots.
    scaling = paired_scaling(
        lambda k: vector_decisions(a.num_envs, steps, a.seed, threads=k)["decisions_per_s"], cores, rounds
    )
    compiled = compile_times()
    bandwidth = write_bandwidth(a.num_envs)
    memory_limit = bandwidth / bytes_per_decision()
    rows: list[tuple[str, float, float | None, str]] = [
        (
            "decisions/s, observation + mask each decision",
            vec["decisions_per_s"],
            os_dec["decisions_per_s"],
            f">= {TARGET_DECISIONS:.0f}x",
        ),
        ("random whole hands/s, no observations", vec_hands, os_hands, f">= {TARGET_HANDS_PER_S:,} hands/s"),
        ("exact deadwood, random 10-card hands/s", vec_dw, os_dw, f">= {TARGET_DEADWOOD:.0f}x"),
        ("learner decisions/s vs compiled greedy (opponent moves included)", learner, None, "-"),
    ]
    print(f"{'measurement':66} {'ginenv':>12} {'OpenSpiel':>12} {'ratio':>9}  target")
    for name, ours, theirs, target in rows:
        ratio = f"{ours / theirs:8.1f}x" if theirs else "        -"
        anchor = f"{theirs:12,.0f}" if theirs else f"{'-':>12}"
        print(f"{name:66} {ours:12,.0f} {anchor} {ratio}  {target}")
    print(
        f"first vector step in a fresh process: {compiled['cold_cache_s']:.1f} s with an empty numba cache "
        f"(compiling), {compiled['warm_cache_s']:.1f} s with the cache filled (cache=True, loaded from disk)"
    )
    print(
        f"threads, VectorGinRummy({a.num_envs}).step with observation + mask, {rounds} alternated pairs "
        f"(target: 2 threads >= {TARGET_TWO_THREADS}x one; layer "
        f"{numba.threading_layer() if scaling else '-'}, "
        f"OMP_WAIT_POLICY {os.environ.get('OMP_WAIT_POLICY', 'unset')}):"
    )
    print_scaling(scaling)
    print(f"threads, OpponentVectorGinRummy({a.num_envs}, 'greedy').step, learner decisions/s:")
    print_scaling(learner_threads)
    print("slots, VectorGinRummy(N).step with observation + mask, one thread (the cliff):")
    for n, rate in slots.items():
        print(
            f"  {n:5} slots {rate:12,.0f} decisions/s "
            f"{slots[2048] / rate:5.2f}x the time per decision at 2048"
        )
    print(
        f"uint8 observations (obs_dtype='uint8'), one thread: {compact:,.0f} decisions/s, "
        f"{compact / os_dec['decisions_per_s']:.1f}x OpenSpiel, "
        f"{compact / vec['decisions_per_s']:.2f}x float32"
    )
    print(
        f"bandwidth limit: {bytes_per_decision():,} bytes written per decision, {bandwidth / 1e9:.1f} GB/s "
        f"measured: {memory_limit:,.0f} decisions/s; the step reaches "
        f"{100 * vec['decisions_per_s'] / memory_limit:.0f}% of it"
    )
    verdicts = {
        "decisions": vec["decisions_per_s"] / os_dec["decisions_per_s"] >= TARGET_DECISIONS,
        "two_threads": 2 not in scaling or scaling[2]["ratio"] >= TARGET_TWO_THREADS,
        "hands": vec_hands >= TARGET_HANDS_PER_S,
        "deadwood": vec_dw / os_dw >= TARGET_DEADWOOD,
    }
    print("targets met: " + ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in verdicts.items()))
    figures: dict[str, Any] = {
        "vector": vec,
        "openspiel": os_dec,
        "random_hands_per_s": vec_hands,
        "openspiel_hands_per_s": os_hands,
        "deadwood_per_s": vec_dw,
        "openspiel_deadwood_per_s": os_dw,
        "learner_decisions_per_s": learner,
        "compile": compiled,
        "threads": scaling,
        "learner_threads": learner_threads,
        "slots": slots,
        "write_bandwidth": bandwidth,
        "memory_limit_decisions_per_s": memory_limit,
        "targets_met": verdicts,
    }
    if a.json:
        Path(a.json).write_text(json.dumps(figures, indent=2))
    if started_on is not None:
        command = "python benchmarks/bench_vector.py " + " ".join(argv if argv is not None else sys.argv[1:])
        doc_figures().record(
            {
                "vector.decisions_per_s": (vec["decisions_per_s"], "rate"),
                "vector.openspiel_decisions_per_s": (os_dec["decisions_per_s"], "rate"),
                "vector.decisions_ratio": (vec["decisions_per_s"] / os_dec["decisions_per_s"], "ratio"),
                "vector.hands_per_s": (vec_hands, "rate"),
                "vector.openspiel_hands_per_s": (os_hands, "rate"),
                "vector.hands_ratio": (vec_hands / os_hands, "ratio"),
                "vector.deadwood_per_s": (vec_dw, "rate"),
                "vector.openspiel_deadwood_per_s": (os_dw, "rate"),
                "vector.deadwood_ratio": (vec_dw / os_dw, "ratio"),
                "vector.learner_decisions_per_s": (learner, "rate"),
                "vector.compile_cold_s": (compiled["cold_cache_s"], "seconds"),
                "vector.compile_warm_s": (compiled["warm_cache_s"], "seconds"),
                "vector.memory_limit_decisions_per_s": (memory_limit, "rate"),
                "vector.of_memory_limit": (100 * vec["decisions_per_s"] / memory_limit, "percent"),
                **(
                    {
                        "vector.two_threads_ratio": (scaling[2]["ratio"], "ratio"),
                        "vector.two_threads_low": (scaling[2]["low"], "ratio"),
                        "vector.two_threads_high": (scaling[2]["high"], "ratio"),
                        "vector.learner_two_threads_ratio": (learner_threads[2]["ratio"], "ratio"),
                    }
                    if 2 in scaling
                    else {}
                ),
            },
            command.strip(),
            started_on,
        )
        print("figures recorded in docs/figures.json")
    if a.equivalence:
        env = {**os.environ, "GINENV_EQUIVALENCE_HANDS": str(a.equivalence)}
        test = ROOT / "tests" / "ginenv" / "test_vector.py"
        code = subprocess.call(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", str(test), "-k", "equals_aec"],
            cwd=ROOT,
            env=env,
        )
        print(f"AEC equivalence at {a.equivalence} hands per preset: {'passed' if code == 0 else 'FAILED'}")
        return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
