"""Hands needed to separate each adjacent pair of the ladder, before and after the luck control variate.

For each adjacent pair of the default ladder (easy-random, normal-easy, hard-normal, neural-hard,
expert-neural, master-expert; the stronger agent is A) this plays ``--deals`` duplicate deals through
:func:`ginenv.experiments.eval.harness.evaluate` (one worker, replays on), on master seed ``--seed``
(default 0, the harness's standard deals; ``V`` was fitted on seed 101 and chosen on seed 102, see
:mod:`ginenv.experiments.eval.luck`). From every game's replay it recomputes A's luck with
:func:`~ginenv.experiments.eval.luck.hand_luck` (seat 0's luck in the first game minus seat 0's in the
second, where A sits in seat 1), and per deal takes

- the raw value ``pair_sum / 2`` (A's points per hand minus B's on that deal), and
- the corrected value ``(pair_sum - pair_luck) / 2``, whose mean is the same (the luck has mean 0).

Printed and written to ``results/bench_variance.json`` per pair: the mean points per hand A-B (raw
and corrected), the per-deal sd of each, the variance reduction ``1 - var_corrected / var_raw``
with a 95% bootstrap interval (deals resampled), and the hands needed to separate the pair with 95%
confidence before and after::

    hands = 2 * ceil((t * sd / |mean|) ** 2),   t = 1.96

Why: the estimate of the mean over ``K`` deals has standard error ``sd / sqrt(K)`` (``sd`` of the
per-deal value), so its two-sided 95% interval ``mean +- t * sd / sqrt(K)`` excludes 0 once
``K > (t * sd / |mean|) ** 2`` deals, and every deal is two hands. ``mean`` is the corrected mean
(the more precise estimate of the same number) in both, so the ratio of the hands after to before
is the variance ratio. It is the expected sample size at which a true difference of ``mean`` is
just significant (about 50% power); it scales with ``1 / mean ** 2``, so pairs close in strength
need many more hands.

The harness also stores its own ``pair_luck`` in each record; the JSON reports the largest
difference from the recomputed one (rounding only: both count every hand as it stands). The cost
of the luck is reported per hand: ``hand_luck`` (engine replay plus the kernel) and ``state_luck``
(the kernel alone, what the harness calls).

Run (one core; about 2 minutes for 300 deals a pair, master most of it)::

    python benchmarks/bench_variance.py --deals 100           # a quick look
    python benchmarks/bench_variance.py --deals 1000          # the measurement behind luck.py's docstring
    python benchmarks/bench_variance.py --value /tmp/other_luck_value.json --deals 300

What other ``V`` gave (variance reduction on seed 102, 1000 deals a pair, fitted on seed 101;
easy-random / normal-easy / hard-normal / neural-hard / expert-neural / master-expert):

- shipped (13 features x 5 stages x 2 tables, weights fitted for least variance):
  0.14 / 0.22 / 0.41 / 0.31 / 0.41 / 0.36
- the same features fitted as a value (regression of the final points, ``beta = 1``, AIVAT's
  choice): -1.60 / -0.32 / 0.41 / 0.25 / 0.19 / 0.03; with one ``beta`` fitted offline (0.35):
  0.00 / 0.10 / 0.26 / 0.19 / 0.24 / 0.21
- 26 features (adding each player's knock and gin outs in the stock, the mean and best deadwood
  after the next draw, the opponent's meld count), least-variance weights: 0.17 / 0.24 / 0.42 /
  0.33 / 0.42 / 0.37, at four times the cost
- a 2x32 tanh MLP on the 26 features trained for least variance: 0.10 / 0.25 / 0.35 / 0.32 /
  0.42 / 0.35 (no better than linear: the features, not the model, are the limit)
- a full-information greedy rollout (two playouts per candidate card), best offline scale:
  hard-normal 0.25, expert-neural 0.27, master-expert 0.19 (too noisy)

For scale: replaying deals with the stock reshuffled shows that some 90% of the variance of a pair
sum comes from the stock order, so a ``V`` that knew the agents' play could remove far more; an
agent-blind ``V`` of the position removes the part listed above.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from ginenv.experiments.eval.harness import EvalConfig, evaluate, replay_name, single_thread_torch
from ginenv.experiments.eval.luck import LuckValue, hand_luck, load_value, state_luck

from ginenv.actions import action_id
from ginenv.cards import parse_card
from ginenv.engine import HandState
from ginenv.replay import load_replay
from ginenv.rules import Rules

LADDER = ("random", "easy", "normal", "hard", "neural", "expert", "master")
T95 = 1.959963984540054  # two-sided 95% normal quantile


def hands_to_separate(sd: float, mean: float, t: float = T95) -> int | None:
    """Hands (2 per duplicate deal) for the 95% interval of the mean to exclude 0; None if mean is 0."""
    if mean == 0 or not math.isfinite(mean):
        return None
    return 2 * math.ceil((t * sd / abs(mean)) ** 2)


def replay_states(path: Path) -> list[HandState]:
    """The hands of a replay file as finished engine states (replayed, so validated)."""
    data = load_replay(path)
    rules = Rules.from_dict(data["rules"])
    turn_limit = data.get("turn_limit", 100)
    states = []
    for hand in data["hands"]:
        deck = [parse_card(c) for c in hand["deck"]]
        state = HandState(rules, dealer=hand["dealer"], deck=deck, turn_limit=turn_limit)
        for name in hand["actions"]:
            state.step(action_id(name))
        states.append(state)
    return states


def bootstrap_reduction(raw: np.ndarray, corrected: np.ndarray, reps: int, seed: int) -> tuple[float, float]:
    """95% percentile interval of ``1 - var(corrected) / var(raw)``, deals resampled."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(raw), size=(reps, len(raw)))
    r = 1 - corrected[idx].var(axis=1, ddof=1) / raw[idx].var(axis=1, ddof=1)
    lo, hi = np.percentile(r, [2.5, 97.5])
    return float(lo), float(hi)


def measure_pair(
    a: str, b: str, deals: int, seed: int, value: LuckValue, folder: Path, reps: int
) -> dict[str, Any]:
    """Play and measure one pairing (A = ``a``, the stronger)."""
    out = folder / f"{a}-{b}"
    t0 = time.perf_counter()
    records = evaluate(
        EvalConfig(agents=(a, b), deals=deals, seed=seed), out, workers=1, progress=False, replays=True
    )
    play_s = time.perf_counter() - t0
    pair_sum = np.array([r["pair_sum"] for r in records], dtype=np.float64)
    pair_luck = np.zeros(len(records))
    harness_luck = [r.get("pair_luck") for r in records]
    luck_s = 0.0
    replay_s = 0.0
    hands = 0
    truncated = 0
    for i, r in enumerate(records):
        k = r["deal"]
        for game, seats in enumerate(((a, b), (b, a))):
            states = replay_states(out / "replays" / replay_name(seats, k))
            t1 = time.perf_counter()
            luck = sum(state_luck(s, value) for s in states)
            t2 = time.perf_counter()
            again = sum(
                hand_luck(s.deck, s.dealer, [x for _, x in s.history], s.rules, s.turn_limit, value)
                for s in states
            )
            t3 = time.perf_counter()
            luck_s += t2 - t1
            replay_s += t3 - t2
            assert again == luck, (again, luck)
            hands += len(states)
            truncated += int(r["games"][game]["truncated"])
            # Seat 0's luck is A's in game 0; in game 1 A sits in seat 1: minus seat 0's.
            pair_luck[i] += luck if game == 0 else -luck
    raw = pair_sum / 2
    corrected = (pair_sum - pair_luck) / 2
    sd_raw = float(raw.std(ddof=1))
    sd_cor = float(corrected.std(ddof=1))
    mean = float(corrected.mean())
    lo, hi = bootstrap_reduction(raw, corrected, reps, seed=len(records))
    diffs = [abs(h - p) for h, p in zip(harness_luck, pair_luck, strict=True) if h is not None]
    return {
        "a": a,
        "b": b,
        "deals": len(records),
        "mean_raw": float(raw.mean()),
        "mean_corrected": mean,
        "se_raw": sd_raw / math.sqrt(len(raw)),
        "se_corrected": sd_cor / math.sqrt(len(raw)),
        "sd_raw": sd_raw,
        "sd_corrected": sd_cor,
        "variance_reduction": 1 - sd_cor**2 / sd_raw**2,
        "variance_reduction_95": [lo, hi],
        "hands_before": hands_to_separate(sd_raw, mean),
        "hands_after": hands_to_separate(sd_cor, mean),
        "truncated_games": truncated,
        "luck_us_per_hand": 1e6 * luck_s / max(hands, 1),
        "hand_luck_us_per_hand": 1e6 * replay_s / max(hands, 1),
        "play_ms_per_game": 1e3 * play_s / (2 * len(records)),
        "harness_pair_luck_max_diff": max(diffs) if diffs else None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=300, help="duplicate deals per pair (default 300)")
    ap.add_argument("--seed", type=int, default=0, help="master seed of the deals (default 0, the standard)")
    ap.add_argument("--pairs", nargs="*", default=None, help="only these pairs, e.g. hard-normal")
    ap.add_argument("--value", type=Path, default=None, help="a value file for V (default: the shipped one)")
    ap.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples (default 2000)")
    ap.add_argument("--json", type=Path, default=Path("results/bench_variance.json"), help="where to write")
    ap.add_argument("--keep", type=Path, default=None, help="keep the run folders here (default: a temp dir)")
    args = ap.parse_args(argv)
    if args.seed in (101, 102):
        print(f"warning: seed {args.seed} was used to fit or choose V; the measurement is optimistic")
    single_thread_torch()
    value = load_value(args.value)
    pairs = [(LADDER[i + 1], LADDER[i]) for i in range(len(LADDER) - 1)]
    if args.pairs:
        pairs = [p for p in pairs if f"{p[0]}-{p[1]}" in args.pairs]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        for a, b in pairs:
            row = measure_pair(a, b, args.deals, args.seed, value, folder, args.bootstrap)
            rows.append(row)
            print(
                f"{a}-{b}: mean {row['mean_corrected']:+.2f} (raw {row['mean_raw']:+.2f}), "
                f"sd {row['sd_raw']:.2f} -> {row['sd_corrected']:.2f}, "
                f"reduction {row['variance_reduction']:.2f}, luck {row['luck_us_per_hand']:.0f} us/hand",
                flush=True,
            )
    head = (
        f"{'pair':15s} {'deals':>5s} {'mean A-B':>9s} {'sd raw':>7s} {'sd corr':>7s} "
        f"{'reduction [95%]':>19s} {'hands before':>12s} {'hands after':>11s}"
    )
    print("\n" + head)
    for r in rows:
        lo, hi = r["variance_reduction_95"]
        print(
            f"{r['a'] + '-' + r['b']:15s} {r['deals']:5d} {r['mean_corrected']:+9.2f} {r['sd_raw']:7.2f} "
            f"{r['sd_corrected']:7.2f} {r['variance_reduction']:6.2f} [{lo:5.2f},{hi:5.2f}] "
            f"{r['hands_before'] or 0:12d} {r['hands_after'] or 0:11d}"
        )
    cost = float(np.mean([r["luck_us_per_hand"] for r in rows]))
    replay_cost = float(np.mean([r["hand_luck_us_per_hand"] for r in rows]))
    print(f"\nluck: {cost:.0f} us a hand by state_luck (the harness), {replay_cost:.0f} us by hand_luck")
    doc = {
        "seed": args.seed,
        "deals_per_pair": args.deals,
        "value": value.path,
        "value_fit": value.fit,
        "t": T95,
        "pairs": rows,
        "luck_us_per_hand": cost,
        "hand_luck_us_per_hand": replay_cost,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
