"""Benchmark of the PettingZoo env: random legal play through the AEC API, against the anchors.

Protocol (``shared/DESIGN.md``, "Performance protocol"): every figure comes from the same run on the
same machine, and only ratios are compared to targets.

- **ginenv** ``gin_rummy_v0.env()`` (the PettingZoo-wrapped env), hand mode: ``agent_iter`` /
  ``last`` / ``step``, the ``action_mask`` read at every decision and a uniform legal action drawn
  from it (``np.flatnonzero`` + Python's ``random``). Also shown: ``raw_env`` and match mode.
- **OpenSpiel** ``gin_rummy`` driven from Python: ``observation_tensor()`` and
  ``legal_actions_mask()`` at every decision; the action is drawn from ``legal_actions()`` (the
  cheapest correct choice, in OpenSpiel's favour); chance nodes (the deal, stock draws) are applied
  uniformly and not counted as decisions.
- **PettingZoo 1.26.1** ``gin_rummy_v4`` (removed in 1.27), run in its own venv (created on demand
  with ``pip install "pettingzoo[classic]==1.26.1"``) with the same loop as ginenv's.

Target: ginenv ``env()`` at least 5x OpenSpiel's decisions/s (1.5x until 2026-12-06). Each engine is
measured ``--repeats`` times, interleaved so that background load hits all of them alike, and the
best run is kept.

    python benchmarks/bench_env.py            # full: 3 s per measurement, 3 repeats
    python benchmarks/bench_env.py --quick    # a smoke run
    python benchmarks/bench_env.py --record   # full; its figures into docs/figures.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

TARGET_VS_OPENSPIEL = 5.0
DEFAULT_PZ126_VENV = Path("/tmp/pz126-venv")


def bench_ginenv(make: Callable[[], Any], seconds: float, seed: int = 0) -> dict[str, float]:
    """Random legal play through the AEC API of ``make()``; decisions/s and hands/s."""
    env = make()
    rng = random.Random(seed)
    env.reset(seed=seed)
    _play_ginenv(env, rng)  # warm-up: numba compilation and caches, outside the timed part
    decisions = episodes = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        env.reset()
        decisions += _play_ginenv(env, rng)
        episodes += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    return {"decisions_per_s": decisions / elapsed, "episodes_per_s": episodes / elapsed}


def _play_ginenv(env: Any, rng: random.Random) -> int:
    """One episode of uniform random legal play; the number of decisions."""
    decisions = 0
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[int(rng.random() * len(legal))]))
        decisions += 1
    return decisions


def bench_openspiel(seconds: float, seed: int = 0) -> dict[str, float]:
    """OpenSpiel's gin_rummy from Python, observation tensor and legal mask every decision."""
    import pyspiel

    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(seed)
    decisions = hands = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            actions = state.legal_actions()
            if not state.is_chance_node():
                state.observation_tensor()
                state.legal_actions_mask()
                decisions += 1
            state.apply_action(actions[int(rng.random() * len(actions))])
        hands += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    return {"decisions_per_s": decisions / elapsed, "episodes_per_s": hands / elapsed}


_PZ126_SCRIPT = textwrap.dedent(
    """
    import json, random, sys, time, warnings
    import numpy as np
    warnings.filterwarnings("ignore")
    import pettingzoo
    from pettingzoo.classic import gin_rummy_v4
    seconds, seed = float(sys.argv[1]), int(sys.argv[2])
    env = gin_rummy_v4.env()
    rng = random.Random(seed)
    env.reset(seed=seed)
    decisions = episodes = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        env.reset()
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(rng.random() * len(legal))]))
            decisions += 1
        episodes += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    print(json.dumps({"decisions_per_s": decisions / elapsed, "episodes_per_s": episodes / elapsed,
                      "version": pettingzoo.__version__}))
    """
)


def ensure_pz126(venv: Path, create: bool) -> tuple[Path | None, str]:
    """The venv's python with pettingzoo 1.26.1 installed (created if asked), or None and why not."""
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import pettingzoo, rlcard; assert pettingzoo.__version__ == '1.26.1'"]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return python, "found"
    if not create:
        return None, f"no PettingZoo 1.26.1 venv at {venv} (pass --create-pz126 or drop --no-create-pz126)"
    print(f"creating {venv} with pettingzoo[classic]==1.26.1 (one time, a minute or two) ...", flush=True)
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [str(python), "-m", "pip", "install", "-q", "pettingzoo[classic]==1.26.1"],
    ]
    for cmd in steps:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
            return None, f"'{' '.join(cmd)}' failed:\n      " + "\n      ".join(tail)
    if subprocess.run(check, capture_output=True).returncode != 0:
        return None, "pettingzoo 1.26.1 installed but cannot be imported"
    return python, "created"


def bench_pz126(python: Path, seconds: float, seed: int = 0) -> dict[str, float]:
    """PettingZoo 1.26.1's gin_rummy_v4 measured in its own interpreter."""
    proc = subprocess.run(
        [str(python), "-c", _PZ126_SCRIPT, str(seconds), str(seed)],
        capture_output=True,
        text=True,
        timeout=seconds * 10 + 120,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def doc_figures() -> Any:
    """``docs/_hooks/figures.py``, the module that reads and writes ``docs/figures.json``."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "docs" / "_hooks" / "figures.py"
    spec = importlib.util.spec_from_file_location("ginenv_doc_figures", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table; exit status 0 even on a MISS (it is a report)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short smoke run (0.5 s, 1 repeat)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per engine; the best counts")
    parser.add_argument(
        "--pz126-venv", type=Path, default=DEFAULT_PZ126_VENV, help="venv for PettingZoo 1.26.1"
    )
    parser.add_argument("--no-pz126", action="store_true", help="skip PettingZoo 1.26.1's gin_rummy_v4")
    parser.add_argument(
        "--no-create-pz126", action="store_true", help="do not create the 1.26.1 venv when it is missing"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--record",
        action="store_true",
        help="write the headline figures into docs/figures.json (not --quick)",
    )
    args = parser.parse_args(argv)
    if args.record and args.quick:
        parser.error("--record keeps full runs only, not --quick")
    started_on = doc_figures().machine() if args.record else None
    seconds, repeats = (0.5, 1) if args.quick else (args.seconds, args.repeats)

    from ginenv import gin_rummy_v0

    print(f"bench_env: python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}")
    print(f"random legal play, {seconds:g} s per measurement, best of {repeats}\n")

    pz_python: Path | None = None
    if args.no_pz126:
        pz_note = "skipped (--no-pz126)"
    else:
        pz_python, pz_note = ensure_pz126(args.pz126_venv, create=not args.no_create_pz126)
        if pz_python is None:
            print(f"PettingZoo 1.26.1 unavailable: {pz_note}\n  continuing without it.\n")

    engines: dict[str, Callable[[], dict[str, float]]] = {
        "ginenv env() hand": lambda: bench_ginenv(gin_rummy_v0.env, seconds, args.seed),
        "openspiel gin_rummy": lambda: bench_openspiel(seconds, args.seed),
        "ginenv raw_env() hand": lambda: bench_ginenv(gin_rummy_v0.raw_env, seconds, args.seed),
        "ginenv env() match": lambda: bench_ginenv(
            lambda: gin_rummy_v0.env(mode="match"), seconds, args.seed
        ),
    }
    if pz_python is not None:
        python = pz_python
        engines["pettingzoo 1.26.1 gin_rummy_v4"] = lambda: bench_pz126(python, seconds, args.seed)
    best: dict[str, dict[str, float]] = {}
    errors: dict[str, str] = {}
    for _ in range(repeats):
        for name, run in engines.items():
            if name in errors:
                continue
            try:
                result = run()
            except Exception as err:  # a missing anchor is reported, not fatal
                errors[name] = f"{type(err).__name__}: {err}"
                continue
            if name not in best or result["decisions_per_s"] > best[name]["decisions_per_s"]:
                best[name] = result

    ours = best.get("ginenv env() hand", {}).get("decisions_per_s")
    print(f"{'engine':34} {'decisions/s':>12} {'episodes/s':>11} {'ginenv env() / this':>20}")
    for name in engines:
        if name in errors:
            print(f"{name:34} {'error':>12}   {errors[name]}")
            continue
        r = best[name]
        versus = f"{ours / r['decisions_per_s']:.2f}x" if ours else "-"
        print(f"{name:34} {r['decisions_per_s']:12,.0f} {r['episodes_per_s']:11,.1f} {versus:>20}")
    if pz_python is None and not args.no_pz126:
        print(f"{'pettingzoo 1.26.1 gin_rummy_v4':34} {'n/a':>12}   {pz_note.splitlines()[0]}")
    print()
    os_rate = best.get("openspiel gin_rummy", {}).get("decisions_per_s")
    if ours and os_rate:
        ratio = ours / os_rate
        verdict = "PASS" if ratio >= TARGET_VS_OPENSPIEL else "MISS"
        print(
            f"target: ginenv env() >= {TARGET_VS_OPENSPIEL}x OpenSpiel decisions/s: {ratio:.2f}x  {verdict}"
        )
    else:
        print(f"target: ginenv env() >= {TARGET_VS_OPENSPIEL}x OpenSpiel decisions/s: not measured")
    pz = best.get("pettingzoo 1.26.1 gin_rummy_v4", {}).get("decisions_per_s")
    if ours and pz:
        print(f"report: ginenv env() / PettingZoo 1.26.1 gin_rummy_v4 decisions/s: {ours / pz:.2f}x")
    if started_on is not None and ours and os_rate:
        names = {
            "ginenv env() hand": "env.env_hand_decisions_per_s",
            "ginenv raw_env() hand": "env.raw_env_hand_decisions_per_s",
            "ginenv env() match": "env.env_match_decisions_per_s",
            "openspiel gin_rummy": "env.openspiel_decisions_per_s",
            "pettingzoo 1.26.1 gin_rummy_v4": "env.pz126_decisions_per_s",
        }
        values = {names[k]: (v["decisions_per_s"], "rate") for k, v in best.items()}
        values["env.openspiel_ratio"] = (ours / os_rate, "ratio")
        if pz:
            values["env.pz126_ratio"] = (ours / pz, "ratio")
        argv_used = argv if argv is not None else sys.argv[1:]
        doc_figures().record(values, " ".join(["python benchmarks/bench_env.py", *argv_used]), started_on)
        print("figures recorded in docs/figures.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
