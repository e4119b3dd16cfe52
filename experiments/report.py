"""Evaluation outputs: per-pair summaries, ratings, the terminal table, JSON/CSV, plots, TensorBoard.

This module turns the harness's per-deal records (:mod:`ginenv.experiments.harness`) into numbers with
:mod:`ginenv.experiments.stats` and writes them out; it plays nothing. Ratings are Bradley-Terry over
duplicate deals: A beats B on a deal when A's pair sum is positive (a zero pair sum is half a win
each), so the luck of the cards is already cancelled in every comparison.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from ginenv.experiments.stats import bradley_terry, duplicate_points, paired_significance, proportion_ci

#: Hand result kinds, in report order; ``truncated``: the hand reached the turn limit (0 points).
KINDS = ("knock", "undercut", "gin", "big_gin", "dead", "truncated")


def pair_summary(a: str, b: str, records: Sequence[dict[str, Any]], unit: str = "hand") -> dict[str, Any]:
    """Everything reported for one pairing, A's point of view."""
    sums = np.array([r["pair_sum"] for r in records], dtype=float)
    games = [g for r in records for g in r["games"]]
    hands = sum(g["hands"] for g in games)
    a_won = sum(g["a_hands_won"] for g in games)
    b_won = sum(g["b_hands_won"] for g in games)
    kinds = {k: sum(g["kinds"].get(k, 0) for g in games) for k in KINDS}
    decisions = sum(g["decisions"] for g in games)
    # A truncated game counted 0 points in its pair sum; say how many there were.
    truncated = sum(bool(g.get("truncated")) for g in games)
    a_dec = sum(g["a_decisions"] for g in games)
    b_dec = sum(g["b_decisions"] for g in games)
    # In match units the pair sum is over two matches: per match, not per hand.
    points = duplicate_points(sums)
    sig = paired_significance(sums) if len(sums) >= 2 else None
    hand_rate = proportion_ci(a_won, a_won + b_won)
    out: dict[str, Any] = {
        "a": a,
        "b": b,
        "unit": unit,
        "deals": len(records),
        "games": len(games),
        "hands": hands,
        "points_per_" + unit: {"mean": points.mean, "low": points.low, "high": points.high},
        "p_value": None if sig is None else sig.p_value,
        "significant": bool(sig and sig.significant_at_95),
        "a_hand_win_rate": {"rate": hand_rate.rate, "low": hand_rate.low, "high": hand_rate.high},
        "rates": {k: (kinds[k] / hands if hands else float("nan")) for k in KINDS},
        "truncated_games": truncated,
        "decisions_per_hand": decisions / hands if hands else float("nan"),
        "a_ms_per_decision": 1000 * sum(g["a_think_s"] for g in games) / max(a_dec, 1),
        "b_ms_per_decision": 1000 * sum(g["b_think_s"] for g in games) / max(b_dec, 1),
    }
    if unit == "match":
        a_matches = sum(g["match_winner"] == "a" for g in games)
        m = proportion_ci(a_matches, len(games))
        out["a_match_win_rate"] = {"rate": m.rate, "low": m.low, "high": m.high}
    return out


def summarise(records: Sequence[dict[str, Any]], agents: Sequence[str], unit: str = "hand") -> dict[str, Any]:
    """Per-pair summaries and Bradley-Terry ratings of a whole run."""
    by_pair: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_pair[(r["a"], r["b"])].append(r)
    pairs = [pair_summary(a, b, recs, unit) for (a, b), recs in by_pair.items()]
    wins: dict[tuple[str, str], float] = defaultdict(float)
    for (a, b), recs in by_pair.items():
        for r in recs:
            s = r["pair_sum"]
            wins[(a, b)] += 1.0 if s > 0 else 0.5 if s == 0 else 0.0
            wins[(b, a)] += 1.0 if s < 0 else 0.5 if s == 0 else 0.0
    ratings: list[dict[str, Any]] = []
    if len({n for pair in by_pair for n in pair}) >= 2:
        anchor = rating_anchor(wins, agents)
        bt = bradley_terry(dict(wins), anchor=anchor)
        ratings = sorted(
            (
                {
                    "agent": n,
                    "elo": bt.elo[i],
                    "low": bt.low[i],
                    "high": bt.high[i],
                    "deals_won": sum(v for (a, _), v in wins.items() if a == n),
                    "deals_lost": sum(v for (_, b), v in wins.items() if b == n),
                }
                for i, n in enumerate(bt.names)
            ),
            key=lambda row: -row["elo"],
        )
    else:
        anchor = None
    return {
        "unit": unit,
        "agents": list(agents),
        "pairs": pairs,
        "ratings": ratings,
        "anchor": anchor,
        "games": sum(p["games"] for p in pairs),
        "truncated_games": sum(p["truncated_games"] for p in pairs),
    }


def rating_anchor(wins: dict[tuple[str, str], float], agents: Sequence[str]) -> str | None:
    """The Elo 0 of the ratings: the first listed agent that has both won and lost deals.

    An agent that never wins (random against the levels) has no finite strength in the data, only
    a bound from the regulariser; anchoring there would give every other rating an interval
    thousands of Elo wide. Anchoring on an agent with wins and losses keeps the intervals honest.
    """
    for name in agents:
        won = sum(v for (a, _), v in wins.items() if a == name)
        lost = sum(v for (_, b), v in wins.items() if b == name)
        if won > 0 and lost > 0:
            return name
    return None


def _fmt_ci(d: dict[str, float]) -> str:
    def num(x: float | None) -> str:
        # An interval over one deal is undefined: say so rather than print inf or nan.
        return "n/a" if x is None or not np.isfinite(x) else f"{x:+.2f}"

    return f"{num(d['mean'])} [{num(d['low'])}, {num(d['high'])}]"


def _fmt_p(value: float | None) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.2g}"


def format_table(summary: dict[str, Any]) -> str:
    """The terminal report: ratings, then one line per pairing."""
    unit = summary["unit"]
    lines = []
    if summary["ratings"]:
        anchor = summary.get("anchor")
        note = f"; {anchor} = 0" if anchor else ""
        lines.append(f"Ratings (Bradley-Terry over duplicate deals, Elo scale, 95% CI{note})")
        lines.append(f"  {'rank':>4}  {'agent':<16} {'elo':>8}  {'95% CI':>20}")
        for i, r in enumerate(summary["ratings"], 1):
            if r.get("deals_won", 1) == 0 or r.get("deals_lost", 1) == 0:
                # Only a bound from the regulariser: no number to print.
                what = "won" if r.get("deals_won", 1) == 0 else "lost"
                lines.append(f"  {i:>4}  {r['agent']:<16} {'-':>8}  never {what} a deal: no finite rating")
                continue
            lines.append(
                f"  {i:>4}  {r['agent']:<16} {r['elo']:>8.0f}  [{r['low']:>7.0f}, {r['high']:>7.0f}]"
            )
        lines.append("")
    head = (
        f"  {'A':<12} {'B':<12} {'deals':>6} {'points/' + unit + ' A-B [95% CI]':>30} {'p':>8} "
        f"{'A hand win%':>12} {'knock%':>7} {'gin%':>6} {'under%':>7} {'dead%':>6} {'trunc':>5} "
        f"{'len':>6} {'ms A':>6} {'ms B':>6}"
    )
    lines.append("Head to head (A's view; each deal played twice, seats swapped)")
    lines.append(head)
    for p in summary["pairs"]:
        r = p["rates"]
        lines.append(
            f"  {p['a']:<12} {p['b']:<12} {p['deals']:>6} {_fmt_ci(p['points_per_' + unit]):>30} "
            f"{_fmt_p(p['p_value']):>8} "
            f"{100 * p['a_hand_win_rate']['rate']:>11.1f}% {100 * r['knock']:>6.1f}% {100 * r['gin']:>5.1f}% "
            f"{100 * r['undercut']:>6.1f}% {100 * r['dead']:>5.1f}% {p.get('truncated_games', 0):>5} "
            f"{p['decisions_per_hand']:>6.1f} "
            f"{p['a_ms_per_decision']:>6.3f} {p['b_ms_per_decision']:>6.3f}"
        )
        if "a_match_win_rate" in p:
            m = p["a_match_win_rate"]
            lines.append(
                f"  {'':<12} {'':<12} A match win rate {100 * m['rate']:.1f}% "
                f"[{100 * m['low']:.1f}, {100 * m['high']:.1f}]"
            )
    games = summary.get("games", sum(p["games"] for p in summary["pairs"]))
    truncated = summary.get("truncated_games", 0)
    lines.append(
        f"Truncated games (a hand reached the turn limit; counted as 0 points): {truncated} of {games}"
    )
    return "\n".join(lines)


def write_outputs(
    summary: dict[str, Any], out: str | Path, plots: bool = True, tensorboard: bool = True
) -> list[Path]:
    """Write summary.json, pairs.csv, ratings.csv, PNG plots and TensorBoard scalars into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "summary.json", out / "pairs.csv", out / "ratings.csv"]
    # Strict JSON: an undefined figure (an interval over one deal) is null, never NaN or Infinity.
    written[0].write_text(json.dumps(strict_json(summary), indent=1, allow_nan=False) + "\n")
    unit = summary["unit"]
    with written[1].open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "a",
                "b",
                "deals",
                "hands",
                f"points_per_{unit}",
                "low",
                "high",
                "p_value",
                "a_hand_win_rate",
                *[f"{k}_rate" for k in KINDS],
                "truncated_games",
                "decisions_per_hand",
                "a_ms_per_decision",
                "b_ms_per_decision",
            ]
        )
        for p in summary["pairs"]:
            pts = p[f"points_per_{unit}"]
            w.writerow(
                [
                    p["a"],
                    p["b"],
                    p["deals"],
                    p["hands"],
                    pts["mean"],
                    pts["low"],
                    pts["high"],
                    p["p_value"],
                    p["a_hand_win_rate"]["rate"],
                    *[p["rates"][k] for k in KINDS],
                    p["truncated_games"],
                    p["decisions_per_hand"],
                    p["a_ms_per_decision"],
                    p["b_ms_per_decision"],
                ]
            )
    with written[2].open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["agent", "elo", "low", "high"])
        for r in summary["ratings"]:
            w.writerow([r["agent"], r["elo"], r["low"], r["high"]])
    if plots and summary["ratings"]:
        written += plot_summary(summary, out)
    if tensorboard:
        written.append(log_tensorboard(summary, out / "tensorboard"))
    return written


def strict_json(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, infinities) as ``None`` and numpy scalars as Python.

    The result passes ``json.dumps(..., allow_nan=False)``: an undefined figure (a confidence
    interval over one deal) is ``null``, never the non-standard ``NaN`` or ``-Infinity``.
    """
    if isinstance(value, dict):
        return {str(k): strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def plot_summary(summary: dict[str, Any], out: Path) -> list[Path]:
    """ratings.png (Elo with 95% intervals) and head_to_head.png (points per hand matrix)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Agents that never won (or never lost) a deal have no finite rating to draw.
    ratings = [r for r in summary["ratings"] if r.get("deals_won", 1) and r.get("deals_lost", 1)][::-1]
    if not ratings:
        ratings = summary["ratings"][::-1]
    fig, ax = plt.subplots(figsize=(6, 0.5 + 0.45 * len(ratings)))
    y = np.arange(len(ratings))
    elo = np.array([r["elo"] for r in ratings])
    err = np.array([[r["elo"] - r["low"] for r in ratings], [r["high"] - r["elo"] for r in ratings]])
    ax.errorbar(elo, y, xerr=np.clip(err, 0, 5000), fmt="o", capsize=4)
    ax.set_yticks(y, [r["agent"] for r in ratings])
    ax.set_xlabel("Elo (Bradley-Terry over duplicate deals), 95% CI")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    paths = [out / "ratings.png", out / "head_to_head.png"]
    fig.savefig(paths[0], dpi=120)
    plt.close(fig)

    names = [r["agent"] for r in summary["ratings"]]
    idx = {n: i for i, n in enumerate(names)}
    mat = np.full((len(names), len(names)), np.nan)
    unit = summary["unit"]
    for p in summary["pairs"]:
        v = p[f"points_per_{unit}"]["mean"]
        mat[idx[p["a"]], idx[p["b"]]] = v
        mat[idx[p["b"]], idx[p["a"]]] = -v
    fig, ax = plt.subplots(figsize=(1.2 + 0.8 * len(names), 1 + 0.7 * len(names)))
    lim = np.nanmax(np.abs(mat)) if np.isfinite(mat).any() else 1.0
    im = ax.imshow(mat, cmap="RdBu", vmin=-lim, vmax=lim)
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)), names)
    for i in range(len(names)):
        for j in range(len(names)):
            if np.isfinite(mat[i, j]):
                ax.text(j, i, f"{mat[i, j]:+.1f}", ha="center", va="center", fontsize=8)
    fig.colorbar(im, ax=ax, label=f"row minus column, points per {unit}")
    ax.set_title("Head to head")
    fig.tight_layout()
    fig.savefig(paths[1], dpi=120)
    plt.close(fig)
    return paths


def log_tensorboard(summary: dict[str, Any], logdir: Path) -> Path:
    """Ratings and per-pair points as TensorBoard scalars (``eval/...``)."""
    from torch.utils.tensorboard import SummaryWriter

    unit = summary["unit"]
    with SummaryWriter(str(logdir)) as writer:
        for r in summary["ratings"]:
            writer.add_scalar(f"eval/elo/{r['agent']}", r["elo"], 0)
        for p in summary["pairs"]:
            tag = f"{p['a']}_vs_{p['b']}"
            writer.add_scalar(f"eval/points_per_{unit}/{tag}", p[f"points_per_{unit}"]["mean"], 0)
            writer.add_scalar(f"eval/hand_win_rate/{tag}", p["a_hand_win_rate"]["rate"], 0)
    return logdir
