"""The compiled master against the Python level: speed, agreement of moves, level, and each width.

Three measurements of :mod:`ginenv.agents.levels.master_compiled`, all on one core (one process,
numba and numpy on one thread), on hands dealt from ``--seed``:

1. **speed and agreement** (``--agree-hands`` hands, both seats master at ``--worlds``): at every
   decision the compiled :func:`master_action`, given a copy of the Python level's generator, and
   ``MasterAgent.act`` are timed on the same position; printed: decisions a second of each (the
   ratio is the figure to compare across machines), and the share of decisions where they chose the
   same move;
2. **level** (``--level-deals`` deals, each played twice with the seats swapped): the engine's
   compiled master (:func:`master_moves`, its generator seeded by the seat's view) against the
   Python ``MasterAgent`` at ``--worlds``; printed: the compiled side's points a hand with the 95%
   interval (level: the interval holds 0);
3. **widths** (``--width-deals`` duplicate deals per width): ``master@worlds=W`` against master at
   the shipped width, both compiled; printed in a table with the width's decisions a second.

Run (about 10 minutes on a shared 2-core machine)::

    python benchmarks/bench_master_compiled.py
    python benchmarks/bench_master_compiled.py --worlds 512 --level-deals 2000 --widths 16 64 128
"""

from __future__ import annotations

import argparse
import copy
import os
import time
from collections.abc import Callable

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np
from ginenv.agents.levels.master import MasterAgent
from ginenv.agents.levels.master_compiled import WORLDS, master_action, master_moves

from ginenv.rules import PRESETS
from ginenv.vector import VectorGinRummy

#: A side of a duplicate pairing: (venv, slots to move) -> their actions; None for the Python level.
Side = Callable[[VectorGinRummy, np.ndarray], np.ndarray]


def agreement(hands: int, worlds: int, seed: int, slots: int = 8) -> dict[str, float]:
    """Both seats master: the compiled and the Python level timed and compared at every decision."""
    venv = VectorGinRummy(slots, rules=PRESETS["standard"], seed=seed)
    obs, mask, player = venv.reset()
    made = iter(range(1 << 30))

    def fresh() -> list[MasterAgent]:
        return [
            MasterAgent(seed=seed * 100_000 + next(made), worlds=worlds, worlds_knock=worlds)
            for _ in range(2)
        ]

    players = [fresh() for _ in range(slots)]
    compiled_s = python_s = 0.0
    decisions = same = ended = 0
    master_action(venv.batch.state, 0, venv.rule_array, np.random.default_rng(0), worlds)  # compiled once
    while ended < hands:
        s = venv.batch.state
        actions = np.empty(slots, dtype=np.int64)
        for i in range(slots):
            agent = players[i][int(player[i])]
            rng = copy.deepcopy(agent.rng)
            t0 = time.perf_counter()
            compiled = master_action(s, i, venv.rule_array, rng, worlds)
            t1 = time.perf_counter()
            expected = agent.act({"observation": obs[i], "action_mask": mask[i]})
            t2 = time.perf_counter()
            compiled_s += t1 - t0
            python_s += t2 - t1
            decisions += 1
            same += int(compiled == expected)
            actions[i] = expected
        obs, mask, player, _, terminated, truncated = venv.step(actions)
        for i in np.flatnonzero(terminated | truncated):
            ended += 1
            players[i] = fresh()
    return {
        "decisions": decisions,
        "compiled_per_s": decisions / compiled_s,
        "python_per_s": decisions / python_s,
        "agreement": same / decisions,
    }


def duplicate(a: Side | None, b: Side | None, deals: int, seed: int, worlds: int) -> dict[str, float]:
    """``a`` against ``b`` on ``deals`` deals, each played twice with the seats swapped: a's points a
    hand (mean, 95% interval of the deals' means) and a's decisions a second (None: the Python level
    at ``worlds``)."""
    rng = np.random.default_rng(seed)
    batch = 16
    per_deal: list[float] = []
    a_time = 0.0
    a_decisions = 0
    made = iter(range(1 << 30))
    for start in range(0, deals, batch):
        n = min(batch, deals - start)
        decks = np.repeat(np.array([rng.permutation(52) for _ in range(n)]), 2, axis=0)
        dealers = np.repeat(rng.integers(0, 2, size=n), 2)
        venv = VectorGinRummy(2 * n, seed=seed + start)
        obs, mask, player = venv.reset(decks=decks, dealers=dealers)
        a_seat = np.tile([0, 1], n)
        agents = [
            [MasterAgent(seed=next(made), worlds=worlds, worlds_knock=worlds) for _ in range(2)]
            for _ in range(2 * n)
        ]
        points = np.zeros(2 * n)
        done = np.zeros(2 * n, dtype=bool)
        while not done.all():
            actions = venv.policy_actions("random")
            live = ~done
            for side, is_a in ((a, True), (b, False)):
                rows = np.flatnonzero(live & ((player == a_seat) == is_a))
                if not rows.size:
                    continue
                t0 = time.perf_counter()
                if side is None:
                    for i in rows:
                        agent = agents[i][int(player[i])]
                        actions[i] = agent.act({"observation": obs[i], "action_mask": mask[i]})
                else:
                    actions[rows] = side(venv, rows)
                if is_a:
                    a_time += time.perf_counter() - t0
                    a_decisions += rows.size
            obs, mask, player, _, terminated, truncated = venv.step(actions)
            res = venv.results
            for i in np.flatnonzero((terminated | truncated) & live):
                done[i] = True
                winner = int(res.winner[i])
                if winner >= 0:
                    points[i] = res.points[i] if winner == a_seat[i] else -res.points[i]
        per_deal += (points[0::2] + points[1::2]).tolist()
    x = np.array(per_deal) / 2.0
    half = 1.96 * x.std(ddof=1) / np.sqrt(x.size) if x.size > 1 else float("nan")
    return {
        "mean": float(x.mean()),
        "low": float(x.mean() - half),
        "high": float(x.mean() + half),
        "hands": 2 * x.size,
        "a_per_s": a_decisions / a_time,
    }


def compiled_side(worlds: int) -> Side:
    """The engine's compiled master at ``worlds`` (its generator seeded by the seat's view)."""
    return lambda venv, rows: master_moves(venv, rows, worlds)


def main() -> None:
    """Run the three measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=64, help="master's width in parts 1 and 2")
    parser.add_argument("--agree-hands", type=int, default=200)
    parser.add_argument("--level-deals", type=int, default=2000, help="duplicate deals of part 2")
    parser.add_argument("--widths", type=int, nargs="*", default=[16, 64, 128])
    parser.add_argument("--width-deals", type=int, default=300, help="duplicate deals per width of part 3")
    parser.add_argument("--seed", type=int, default=0)
    ns = parser.parse_args()
    started = time.perf_counter()

    got = agreement(ns.agree_hands, ns.worlds, ns.seed)
    print(
        f"speed and agreement, master@worlds={ns.worlds}, {got['decisions']} decisions "
        f"of {ns.agree_hands} hands: "
        f"compiled {got['compiled_per_s']:.0f} decisions/s, Python {got['python_per_s']:.0f} decisions/s "
        f"(x{got['compiled_per_s'] / got['python_per_s']:.1f}); same move at {100 * got['agreement']:.2f}%",
        flush=True,
    )
    if ns.level_deals:
        lv = duplicate(compiled_side(ns.worlds), None, ns.level_deals, ns.seed + 1, ns.worlds)
        print(
            f"level, compiled master@worlds={ns.worlds} vs MasterAgent(worlds={ns.worlds}), "
            f"{lv['hands']} hands: "
            f"{lv['mean']:+.3f} [{lv['low']:+.3f}, {lv['high']:+.3f}] points a hand",
            flush=True,
        )
    if ns.widths:
        print(f"| worlds | decisions/s (one core) | points a hand against master@worlds={WORLDS} (95%) |")
        print("|---:|---:|---|")
        for w in ns.widths:
            r = duplicate(compiled_side(w), compiled_side(WORLDS), ns.width_deals, ns.seed + 2, WORLDS)
            print(
                f"| {w} | {r['a_per_s']:.0f} | {r['mean']:+.2f} [{r['low']:+.2f}, {r['high']:+.2f}] |",
                flush=True,
            )
        # The shipped width's own speed, against itself.
        r = duplicate(
            compiled_side(WORLDS), compiled_side(WORLDS), max(1, ns.width_deals // 10), ns.seed + 3, WORLDS
        )
        print(f"| {WORLDS} | {r['a_per_s']:.0f} | 0 (itself) |", flush=True)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
