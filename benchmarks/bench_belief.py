"""Quality of the Bayesian opponent model (``agents.belief``) against the true opponent hands.

Hands are played through ``ginenv.gin_rummy_v0.raw_env()`` between two registered agents (default
``expert`` against ``expert``). At every decision of either seat an :class:`OpponentModel` fed with
that seat's observations (exactly what an agent sees) gives a probability for each card; the true
opponent hand is read from the env's engine state *here only, for scoring* (agents never see it).

Scored on the unseen cards of each decision (the known facts are right by construction and would
only dilute the figures): mean log-loss (natural log) and Brier score per card, by stage of the hand
(``early``: stock >= 24, ``mid``: 14..23, ``late``: <= 13), for the model and for the baseline that
spreads the opponent's unknown slots evenly over the unseen cards (the same facts, no likelihood).
A calibration table bins the model's probabilities and gives the observed frequency in each bin.
The deadwood of the sampled hands (with and without the hand-quality tilt) is compared with the
opponent's true deadwood by the opponent's turns played.

``--fit`` searches the likelihood factors (coordinate search on the log-loss of the recorded
decisions) and prints the best :class:`BeliefParams`; the defaults in ``agents/belief.py`` came
from such a fit.

Run::

    python benchmarks/bench_belief.py                        # 300 hands, expert vs expert
    python benchmarks/bench_belief.py --hands 100 --agents hard hard
    python benchmarks/bench_belief.py --json /tmp/belief.json
    python benchmarks/bench_belief.py --fit --hands 400 --agents greedy greedy
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

import agents
from agents.belief import BeliefParams, Event, OpponentModel
from ginenv import gin_rummy_v0
from ginenv.cards import cards_of
from ginenv.melds import deadwood_of_mask
from ginenv.observation import SeatView, decode

STAGES = ("early", "mid", "late")
BINS = np.linspace(0.0, 1.0, 11)
EPS = 1e-6


def stage_of(stock_size: int) -> str:
    """Stage of a hand by the stock size (31 at the deal)."""
    return "early" if stock_size >= 24 else "mid" if stock_size >= 14 else "late"


@dataclass
class Record:
    """One decision of one seat: what its model had read, and the truth."""

    view: SeatView
    events: list[Event]
    truth: int  # the opponent's hand
    opp_deadwood: int


def collect(names: tuple[str, str], hands: int, seed: int) -> list[Record]:
    """Play ``hands`` hands and record every decision of both seats."""
    env = gin_rummy_v0.raw_env()
    players = [agents.make(names[0], seed=seed), agents.make(names[1], seed=seed + 1)]
    records: list[Record] = []
    for h in range(hands):
        env.reset(seed=seed * 100_003 + h, options={"dealer": h % 2})
        for p, player in enumerate(players):
            player.reset(seed * 7919 + 2 * h + p)
        models = [OpponentModel(), OpponentModel()]
        for agent_id in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            p = int(agent_id[-1])
            view = decode(obs["observation"])
            models[p].update(view)
            truth = env.hand.hands[1 - p]  # scoring only: the agents never see this
            records.append(Record(view, list(models[p].events), truth, deadwood_of_mask(truth)))
            env.step(players[p].act(obs))
    return records


def model_of(rec: Record, params: BeliefParams) -> OpponentModel:
    """A model holding exactly this record's state, under ``params``."""
    m = OpponentModel(params)
    m.update(rec.view)
    m.events = list(rec.events)
    m._cache = {}
    return m


def score(records: list[Record], params: BeliefParams) -> dict[str, Any]:
    """Log-loss, Brier by stage for the model and the uniform baseline; calibration counts."""
    acc = {s: {"n": 0, "decisions": 0, "ll": 0.0, "brier": 0.0, "ll_u": 0.0, "brier_u": 0.0} for s in STAGES}
    bins_n = np.zeros(len(BINS) - 1)
    bins_p = np.zeros(len(BINS) - 1)
    bins_y = np.zeros(len(BINS) - 1)
    for rec in records:
        m = model_of(rec, params)
        ids = cards_of(rec.view.unseen)
        if not ids or m.slots == 0:
            continue
        p = m.probabilities()[ids]
        u = m.uniform_probabilities()[ids]
        y = np.array([rec.truth >> c & 1 for c in ids], dtype=float)
        a = acc[stage_of(rec.view.stock_size)]
        a["n"] += len(ids)
        a["decisions"] += 1
        for key, q in (("", p), ("_u", u)):
            q = np.clip(q, EPS, 1 - EPS)
            a["ll" + key] += float(-(y * np.log(q) + (1 - y) * np.log(1 - q)).sum())
            a["brier" + key] += float(((q - y) ** 2).sum())
        b = np.clip(np.digitize(p, BINS) - 1, 0, len(BINS) - 2)
        np.add.at(bins_n, b, 1)
        np.add.at(bins_p, b, p)
        np.add.at(bins_y, b, y)
    out: dict[str, Any] = {"stages": {}, "calibration": []}
    tot = {k: 0.0 for k in ("n", "decisions", "ll", "brier", "ll_u", "brier_u")}
    for s in STAGES:
        a = acc[s]
        for k in tot:
            tot[k] += a[k]
        out["stages"][s] = summarise(a)
    out["stages"]["all"] = summarise(tot)
    for i in range(len(BINS) - 1):
        if bins_n[i]:
            out["calibration"].append(
                {
                    "bin": f"{BINS[i]:.1f}-{BINS[i + 1]:.1f}",
                    "cards": int(bins_n[i]),
                    "mean_p": bins_p[i] / bins_n[i],
                    "observed": bins_y[i] / bins_n[i],
                }
            )
    return out


def summarise(a: dict[str, float]) -> dict[str, float]:
    n = max(1.0, a["n"])
    return {
        "decisions": int(a["decisions"]),
        "cards": int(a["n"]),
        "log_loss": a["ll"] / n,
        "log_loss_uniform": a["ll_u"] / n,
        "brier": a["brier"] / n,
        "brier_uniform": a["brier_u"] / n,
        "log_loss_gain_pct": 100.0 * (1 - a["ll"] / a["ll_u"]) if a["ll_u"] else 0.0,
        "brier_gain_pct": 100.0 * (1 - a["brier"] / a["brier_u"]) if a["brier_u"] else 0.0,
    }


def tilt_check(records: list[Record], params: BeliefParams, samples: int, seed: int) -> list[dict[str, Any]]:
    """Mean and 20% quantile of the opponent's deadwood: truth vs sampled hands, by opponent turns."""
    rng = np.random.default_rng(seed)
    groups: dict[int, dict[str, list[float]]] = {}
    for rec in records[::3]:
        m = model_of(rec, params)
        if m.slots == 0:
            continue
        t = min(m.turns, 12)
        g = groups.setdefault(t, {"truth": [], "flat": [], "tilt": []})
        g["truth"].append(rec.opp_deadwood)
        for key, quality in (("flat", False), ("tilt", True)):
            hands = m.sample_hands(samples, rng, quality=quality)
            g[key].extend(deadwood_of_mask(int(x)) for x in hands)
    rows = []
    for t in sorted(groups):
        g = groups[t]
        row: dict[str, Any] = {"opp_turns": t, "decisions": len(g["truth"])}
        for key in ("truth", "flat", "tilt"):
            arr = np.array(g[key], dtype=float)
            row[f"{key}_mean"] = float(arr.mean())
            row[f"{key}_q20"] = float(np.quantile(arr, 0.2))
            row[f"{key}_le10"] = float((arr <= 10).mean())
        rows.append(row)
    return rows


def fit(records: list[Record], start: BeliefParams, rounds: int = 3) -> BeliefParams:
    """Coordinate search of the likelihood factors on the total log-loss."""

    def loss(p: BeliefParams) -> float:
        s = score(records, p)["stages"]["all"]
        return float(s["log_loss"])

    best = start
    best_loss = loss(best)
    names = [f.name for f in dataclasses.fields(BeliefParams) if f.name not in ("quality", "quality_turns")]
    for r in range(rounds):
        step = 1.5 / (r + 1)
        for name in names:
            value = getattr(best, name)
            for cand in (value * (1 + 0.25 * step), value / (1 + 0.25 * step)):
                if name == "memory":
                    cand = min(cand, 1.0)
                trial = dataclasses.replace(best, **{name: cand})
                lt = loss(trial)
                if lt < best_loss - 1e-6:
                    best, best_loss = trial, lt
        print(f"fit round {r}: log-loss {best_loss:.5f} {best}", file=sys.stderr)
    return best


def print_report(result: dict[str, Any]) -> None:
    print(f"agents {result['agents']}, {result['hands']} hands, {result['decisions']} decisions")
    print("\nper unseen card          log-loss            Brier")
    cols = ("model", "uniform", "gain")
    print(f"{'stage':8} {'decisions':>9} " + " ".join(f"{c:>8}" for c in cols * 2))
    for s, a in result["quality"]["stages"].items():
        print(
            f"{s:8} {a['decisions']:9d} {a['log_loss']:8.4f} {a['log_loss_uniform']:8.4f} "
            f"{a['log_loss_gain_pct']:7.1f}% {a['brier']:8.4f} {a['brier_uniform']:8.4f} "
            f"{a['brier_gain_pct']:7.1f}%"
        )
    print("\ncalibration (model probability bins)")
    print(f"{'bin':10} {'cards':>8} {'mean p':>8} {'observed':>9}")
    for row in result["quality"]["calibration"]:
        print(f"{row['bin']:10} {row['cards']:8d} {row['mean_p']:8.3f} {row['observed']:9.3f}")
    if result.get("deadwood"):
        print("\nopponent deadwood: truth vs sampled hands (flat = no quality tilt)")
        print(f"{'turns':>5} {'n':>5} {'truth':>6} {'flat':>6} {'tilt':>6}   P(dw<=10) truth/flat/tilt")
        for r in result["deadwood"]:
            print(
                f"{r['opp_turns']:5d} {r['decisions']:5d} {r['truth_mean']:6.1f} {r['flat_mean']:6.1f} "
                f"{r['tilt_mean']:6.1f}   {r['truth_le10']:.2f} / {r['flat_le10']:.2f} / {r['tilt_le10']:.2f}"
            )
    print(f"\ntime: play {result['seconds_play']:.1f} s, scoring {result['seconds_score']:.1f} s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", nargs=2, default=["expert", "expert"], help="the two registered agents")
    ap.add_argument("--hands", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--samples", type=int, default=64, help="sampled hands per decision (deadwood check)")
    ap.add_argument("--no-deadwood", action="store_true", help="skip the sampled-deadwood check")
    ap.add_argument("--fit", action="store_true", help="fit the likelihood factors, report with the fit")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    records = collect((args.agents[0], args.agents[1]), args.hands, args.seed)
    t1 = time.perf_counter()
    params = BeliefParams()
    if args.fit:
        params = fit(records, params)
        print(f"fitted: {params}")
    result: dict[str, Any] = {
        "agents": list(args.agents),
        "hands": args.hands,
        "seed": args.seed,
        "decisions": len(records),
        "params": dataclasses.asdict(params),
        "quality": score(records, params),
    }
    if not args.no_deadwood:
        result["deadwood"] = tilt_check(records, params, args.samples, args.seed)
    result["seconds_play"] = t1 - t0
    result["seconds_score"] = time.perf_counter() - t1
    print_report(result)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1, default=float)
        print(f"written: {args.json}")
    return 0 if all(math.isfinite(v["log_loss"]) for v in result["quality"]["stages"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
