"""Strength and decision time of master variants: duplicate hands through the harness.

A *variant* is ``master`` with some of its tuning constants (the class attributes of
:class:`ginenv.agents.levels.master.MasterAgent`) set, written ``master@key=value,key=value``; plain
``master`` is today's default (timed under the name ``master@default``). Each variant plays
``--deals`` duplicate deals (seats swapped, so ``2 * deals`` hands) against each opponent through
:func:`ginenv.experiments.eval.harness.evaluate`, exactly as ``ginenv match`` plays them (fresh agents
every game, the same fixed seed, so every variant meets the same deals). Printed per pairing:
points per hand A minus B with its 95% interval, and the median and 99th percentile of A's decision
time (every ``act`` call timed here; ``ginenv match --json`` reports only the mean).

Run (one worker: the timings are of one core)::

    python benchmarks/bench_master.py master@simulate_draws=1 --against master openspiel_simple
    python benchmarks/bench_master.py master@worlds=256,discard_candidates=3 --deals 500
    python benchmarks/bench_master.py master --against openspiel_simple --json /tmp/m.json
    python benchmarks/bench_master.py master_net --against master neural --deals 200

Any other agent spec (``master_net``, the search with the network's beliefs, or a file's class such
as ``research/priors.py:PriorN3``) is timed as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from ginenv.agents import specs
from ginenv.agents.levels.master import MasterAgent
from ginenv.experiments.eval.harness import EvalConfig, evaluate
from ginenv.experiments.eval.report import pair_summary, strict_json

from ginenv import agents

#: Decision times (seconds) of every timed agent, by name, in this process.
TIMES: dict[str, list[float]] = {}

#: The name plain ``master`` is timed under (``master`` itself is the registered level).
TIMED_DEFAULT = "master@default"


def parse_variant(name: str) -> dict[str, Any]:
    """The constants of ``master@key=value,...`` (``{}`` for plain ``master``); values are read as
    int, float, a tuple of ints (``a/b``) or a bool (``true``/``false``)."""
    if name in ("master", TIMED_DEFAULT):
        return {}
    head, _, spec = name.partition("@")
    if head != "master" or not spec:
        raise ValueError(f"a variant is master@key=value[,key=value...], got {name!r}")
    params: dict[str, Any] = {}
    for item in spec.split(","):
        key, sep, raw = item.partition("=")
        if not sep:
            raise ValueError(f"variant item {item!r} is not key=value")
        if not hasattr(MasterAgent, key) or key.startswith("_") or callable(getattr(MasterAgent, key)):
            raise ValueError(f"MasterAgent has no tuning constant {key!r}")
        default = getattr(MasterAgent, key)
        if isinstance(default, bool):
            params[key] = raw.lower() in ("1", "true", "yes")
        elif isinstance(default, tuple):
            params[key] = tuple(int(v) for v in raw.split("/"))
        elif isinstance(default, int):
            params[key] = int(raw)
        else:
            params[key] = float(raw)
    return params


class Timed:
    """Wraps an agent and records the wall time of each ``act`` in :data:`TIMES`."""

    def __init__(self, agent: Any, key: str) -> None:
        self.agent = agent
        self.key = key
        self.name = agent.name

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, observation: Any) -> int:
        t = time.perf_counter()
        action = self.agent.act(observation)
        TIMES.setdefault(self.key, []).append(time.perf_counter() - t)
        return int(action)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.agent, attr)


def timed_variant(name: str) -> str:
    """Register the timed variant ``name`` in this process (once); returns its registered name.

    The harness builds every agent by spec; a variant is a name registered here (workers=1, so no
    other process needs to rebuild it), built with the table's seed and rules like any agent.
    """
    if name != "master" and "@" not in name and specs.is_known(name):
        # Another searching agent (master_net, or a spec such as research/priors.py:PriorN3),
        # timed as it is. A registered name holds no ':'; the whole spec is kept otherwise, so that
        # two files' classes of one name are timed apart.
        registered = f"{name.replace(':', '#')}@timed"

        def build_other(seed: int | None = None, rules: Any = None) -> Timed:
            return Timed(agents.make(name, seed=seed, rules=rules), registered)

        if registered not in agents.available():
            agents.register(registered, build_other, f"{name}, timed")
        return registered
    registered = TIMED_DEFAULT if name == "master" else name
    params = parse_variant(registered)

    def build(seed: int | None = None, rules: Any = None) -> Timed:
        return Timed(MasterAgent(seed=seed, rules=rules, **params), registered)

    if registered not in agents.available():
        agents.register(registered, build, f"master with {params or 'its defaults'}, timed")
    return registered


def run_pair(a: str, b: str, deals: int, seed: int, out: Path) -> dict[str, Any]:
    """One pairing, A's point of view: the harness summary plus A's decision-time percentiles."""
    TIMES.pop(a, None)
    cfg = EvalConfig(agents=(a, b), deals=deals, seed=seed)
    records = evaluate(cfg, out, workers=1, progress=False)
    summary = pair_summary(a, b, records)
    times = np.array(TIMES.get(a, [np.nan])) * 1000
    summary["a_ms_median"] = float(np.median(times))
    summary["a_ms_p99"] = float(np.percentile(times, 99))
    summary["a_ms_max"] = float(times.max())
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "variants",
        nargs="+",
        help="master, master@key=value,... or another agent spec (e.g. master_net, file.py:Name)",
    )
    parser.add_argument("--against", nargs="+", default=["master", "openspiel_simple"])
    parser.add_argument("--deals", type=int, default=1000, help="duplicate deals per pairing (2 hands each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="where the run folders go (default: temp)")
    parser.add_argument("--json", type=Path, default=None, help="write every summary here")
    args = parser.parse_args(argv)
    root = args.out or Path(tempfile.mkdtemp(prefix="bench_master-"))
    rows = []
    for a in (timed_variant(v) for v in args.variants):
        for b in args.against:
            if a == b:
                continue
            t = time.time()
            safe = f"{a}-vs-{b}".translate(str.maketrans("/@,=#", "___-_"))
            folder = root / safe
            s = run_pair(a, b, args.deals, args.seed, folder)
            pts = s["points_per_hand"]
            print(
                f"{a} vs {b}: {pts['mean']:+.2f} [{pts['low']:+.2f}, {pts['high']:+.2f}] points/hand over "
                f"{s['hands']} hands; A ms/decision median {s['a_ms_median']:.1f} p99 {s['a_ms_p99']:.1f} "
                f"max {s['a_ms_max']:.0f}; {time.time() - t:.0f} s",
                flush=True,
            )
            rows.append(s)
    if args.json:
        args.json.write_text(json.dumps(strict_json(rows), indent=1, allow_nan=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
