"""Evaluation outputs: per-pair summaries, ratings, the terminal table, JSON/CSV, plots, TensorBoard.

This module turns the harness's per-deal records (:mod:`ginenv.experiments.eval.harness`) into numbers with
:mod:`ginenv.experiments.eval.stats` and writes them out; it plays nothing.

Each record is one duplicate deal of a pairing (A, B): the deal played twice with the seats swapped,
``pair_sum`` A's points over the two games, so the luck of the cards largely cancels. Its *value* is
points per hand of A minus B on that deal: ``pair_sum / 2``, or ``(pair_sum - pair_luck) / 2`` when the
record carries ``pair_luck`` (a zero-mean control variate in points, A's view, over both games), which
removes more of the luck. The value drives the headline numbers:

* the **ratings** (:func:`ginenv.experiments.eval.ratings.points_ratings`): points per hand against
  the field's average, fitted to every pairing at once, with intervals that treat deals as the
  independent units, and for each agent the gap to the next-ranked one with its interval and
  whether it is separated;
* the **head-to-head** points per pairing (the raw ``pair_sum / 2`` figure is kept beside it).

The plots (ratings.png, head_to_head.png) are drawn by :mod:`ginenv.experiments.eval.plots`, whose
figures are re-exported here.

The Bradley-Terry rating over won/lost deals (A wins a deal when its pair sum is positive) is kept as a
second view (``bt_ratings``); it discards the margins, so its intervals are far wider.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

# The figures live in plots; notebooks and scripts have always found them here.
from ginenv.experiments.eval.plots import NOT_SEPARATED_COLOUR as NOT_SEPARATED_COLOUR
from ginenv.experiments.eval.plots import SEPARATED_COLOUR as SEPARATED_COLOUR
from ginenv.experiments.eval.plots import head_to_head_figure as head_to_head_figure
from ginenv.experiments.eval.plots import plot_summary, split_outliers
from ginenv.experiments.eval.plots import ratings_figure as ratings_figure
from ginenv.experiments.eval.ratings import points_ratings
from ginenv.experiments.eval.stats import bradley_terry, duplicate_points, paired_significance, proportion_ci

from ginenv.vector import RESULT_KINDS

#: Hand result kinds, in report order (the engine's codes); ``truncated``: the hand reached the turn
#: limit (0 points).
KINDS = RESULT_KINDS


def adjusted_pair_sum(record: dict[str, Any]) -> float:
    """The record's pair sum minus its ``pair_luck`` control variate when it has one (else the pair sum)."""
    luck = record.get("pair_luck")
    return float(record["pair_sum"]) - (0.0 if luck is None else float(luck))


def deal_value(record: dict[str, Any]) -> float:
    """Points per hand (or match) of A minus B on the record's deal: ``adjusted_pair_sum / 2``."""
    return adjusted_pair_sum(record) / 2.0


def deal_values(records: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[Any, float]]:
    """Per pairing ``(a, b)``, each deal's :func:`deal_value`: the input of
    :func:`~ginenv.experiments.eval.ratings.points_ratings`. A deal twice in one pairing is a ValueError."""
    values: dict[tuple[str, str], dict[Any, float]] = defaultdict(dict)
    for r in records:
        per_deal = values[(r["a"], r["b"])]
        if r["deal"] in per_deal:
            raise ValueError(f"deal {r['deal']} of pairing {(r['a'], r['b'])} appears twice in the records")
        per_deal[r["deal"]] = deal_value(r)
    return dict(values)


def ci_dict(ci: Any) -> dict[str, float]:
    """A :class:`~ginenv.experiments.eval.stats.MeanCI` as the reports' ``{mean, low, high}`` dict."""
    return {"mean": ci.mean, "low": ci.low, "high": ci.high}


def pair_summary(a: str, b: str, records: Sequence[dict[str, Any]], unit: str = "hand") -> dict[str, Any]:
    """Everything reported for one pairing, A's point of view.

    ``points_per_<unit>`` is the headline: from the luck-adjusted pair sums when records carry
    ``pair_luck``, as are ``p_value`` and ``significant``; ``points_per_<unit>_raw`` is from the pair
    sums alone (equal to the headline when no record is adjusted). ``luck_adjusted_deals`` counts the
    records that carried ``pair_luck``.
    """
    raw_sums = np.array([r["pair_sum"] for r in records], dtype=float)
    sums = np.array([adjusted_pair_sum(r) for r in records], dtype=float)
    adjusted = sum(r.get("pair_luck") is not None for r in records)
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
        "points_per_" + unit: ci_dict(points),
        "points_per_" + unit + "_raw": ci_dict(duplicate_points(raw_sums)),
        "luck_adjusted_deals": adjusted,
        "p_value": None if sig is None else sig.p_value,
        "significant": bool(sig and sig.significant_at_95),
        "a_hand_win_rate": {"rate": hand_rate.rate, "low": hand_rate.low, "high": hand_rate.high},
        "rates": {k: (kinds[k] / hands if hands else float("nan")) for k in KINDS},
        "truncated_games": truncated,
        "decisions_per_hand": decisions / hands if hands else float("nan"),
        "a_ms_per_decision": 1000 * sum(g["a_think_s"] for g in games) / max(a_dec, 1),
        "b_ms_per_decision": 1000 * sum(g["b_think_s"] for g in games) / max(b_dec, 1),
    }
    # exec: agents that hung, died or answered an illegal move lost those games by the forfeit rule.
    out["forfeits"] = {
        a: sum(g.get("a_forfeits", 0) for g in games),
        b: sum(g.get("b_forfeits", 0) for g in games),
    }
    out["forfeit_reasons"] = list(
        dict.fromkeys(g["forfeit_reason"] for g in games if g.get("forfeit_reason"))
    )[:5]
    if unit == "match":
        a_matches = sum(g["match_winner"] == "a" for g in games)
        m = proportion_ci(a_matches, len(games))
        out["a_match_win_rate"] = {"rate": m.rate, "low": m.low, "high": m.high}
    return out


def summarise(records: Sequence[dict[str, Any]], agents: Sequence[str], unit: str = "hand") -> dict[str, Any]:
    """Per-pair summaries, points ratings and the Bradley-Terry view of a whole run.

    Keys: ``unit``, ``agents``, ``pairs`` (one :func:`pair_summary` each), ``ratings`` (rows of
    :meth:`~ginenv.experiments.eval.ratings.PointsRatings.ranked`: ``agent``, ``rating``, ``low``, ``high``,
    ``gap``, ``gap_low``, ``gap_high``, ``separated``; best first; anchored on the mean of every rated
    agent), ``rating_scale`` (what a rating means, in words), ``luck_adjusted`` (whether any record
    carried ``pair_luck``), ``bt_ratings`` (Bradley-Terry rows: ``agent``, ``elo``, ``low``, ``high``,
    ``deals_won``, ``deals_lost``), ``anchor`` (the Bradley-Terry Elo 0, see :func:`rating_anchor`),
    ``games`` and ``truncated_games``. With fewer than two agents in the records both rating lists are
    empty.
    """
    by_pair: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_pair[(r["a"], r["b"])].append(r)
    pairs = [pair_summary(a, b, recs, unit) for (a, b), recs in by_pair.items()]
    present = {n for pair in by_pair for n in pair}
    # Listed agents first, in their order; anything else the records hold after them.
    order = [n for n in dict.fromkeys(agents) if n in present]
    order += [n for n in dict.fromkeys(n for pair in by_pair for n in pair) if n not in order]
    luck_adjusted = any(r.get("pair_luck") is not None for r in records)

    ratings: list[dict[str, Any]] = []
    core: list[str] | None = None
    if len(present) >= 2:
        values = deal_values(records)
        core = rating_core(values, order)
        ratings = points_ratings(values, agents=order, core=core).ranked()
    scale = f"points per {unit} against the field's average (mean 0), 95% CI, deals as units"
    if core is not None:
        off = [n for n in order if n not in core]
        scale = (
            f"points per {unit} against the field's average (mean 0 over {', '.join(core)}; "
            f"{', '.join(off)}, far off that scale, placed from {'its' if len(off) == 1 else 'their'} "
            "games against it), 95% CI, deals as units"
        )
    if luck_adjusted:
        scale += ", luck-adjusted"

    wins: dict[tuple[str, str], float] = defaultdict(float)
    for (a, b), recs in by_pair.items():
        for r in recs:
            s = r["pair_sum"]
            wins[(a, b)] += 1.0 if s > 0 else 0.5 if s == 0 else 0.0
            wins[(b, a)] += 1.0 if s < 0 else 0.5 if s == 0 else 0.0
    bt_rows: list[dict[str, Any]] = []
    anchor = None
    if len(present) >= 2:
        anchor = rating_anchor(wins, agents)
        bt = bradley_terry(dict(wins), anchor=anchor)
        bt_rows = sorted(
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
    return {
        "unit": unit,
        "agents": list(agents),
        "pairs": pairs,
        "ratings": ratings,
        "rating_scale": scale,
        "rating_core": core,
        "luck_adjusted": luck_adjusted,
        "bt_ratings": bt_rows,
        "anchor": anchor,
        "games": sum(p["games"] for p in pairs),
        "truncated_games": sum(p["truncated_games"] for p in pairs),
        "forfeits": {n: sum(p["forfeits"].get(n, 0) for p in pairs) for n in order},
    }


def rating_anchor(wins: dict[tuple[str, str], float], agents: Sequence[str]) -> str | None:
    """The Bradley-Terry Elo 0: the first listed agent that has both won and lost deals.

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


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float, np.number)) and math.isfinite(float(x))


def signed(x: float | None, digits: int = 2) -> str:
    """``x`` with its sign (``+0.25``); ``n/a`` for a missing or non-finite figure."""
    # An interval over one deal is undefined: say so rather than print inf or nan.
    return f"{x:+.{digits}f}" if _finite(x) else "n/a"


def format_ci(d: dict[str, float]) -> str:
    """A ``{mean, low, high}`` dict as ``+0.25 [-0.10, +0.60]``."""
    return f"{signed(d['mean'])} [{signed(d['low'])}, {signed(d['high'])}]"


def format_p(value: float | None) -> str:
    """A p-value to two significant figures; ``n/a`` when undefined."""
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.2g}"


def separated_line(ratings: Sequence[dict[str, Any]]) -> str:
    """One line: how many adjacent gaps of the ranked ratings are separated, and which are not."""
    gaps = list(itertools.pairwise(ratings))
    n_sep = sum(upper["separated"] is True for upper, _ in gaps)
    line = f"Adjacent gaps separated (95% CI of the gap above 0): {n_sep} of {len(gaps)}"
    missing = [f"{u['agent']} > {v['agent']}" for u, v in gaps if u["separated"] is not True]
    return line + (f"; not separated: {', '.join(missing)}" if missing else "")


def format_table(summary: dict[str, Any]) -> str:
    """The terminal report: points ratings with gaps, head to head, truncation, then Bradley-Terry."""
    lines = _ratings_lines(summary)
    lines += _head_to_head_lines(summary)
    lines += _bradley_terry_lines(summary)
    return "\n".join(lines)


def _ratings_lines(summary: dict[str, Any]) -> list[str]:
    """The points ratings, ranked, each with its gap to the next; then a blank line (none if no ratings)."""
    unit = summary["unit"]
    lines = []
    ratings = summary["ratings"]
    if ratings:
        width = max(16, *(len(r["agent"]) for r in ratings))
        scale = summary.get("rating_scale") or f"points per {unit} against the field's average (mean 0)"
        lines.append(f"Ratings: {scale}")
        lines.append(
            f"  {'rank':>4}  {'agent':<{width}} {'rating':>8}  {'95% CI':>18}  "
            f"{'gap to next':>11}  {'95% CI':>18}  {'separated':>9}"
        )
        for i, r in enumerate(ratings, 1):
            line = (
                f"  {i:>4}  {r['agent']:<{width}} {signed(r['rating']):>8}  "
                f"[{signed(r['low']):>7}, {signed(r['high']):>7}]"
            )
            if r["gap"] is not None:
                mark = "yes" if r["separated"] else "no"
                line += (
                    f"  {signed(r['gap']):>11}  [{signed(r['gap_low']):>7}, {signed(r['gap_high']):>7}]"
                    f"  {mark:>9}"
                )
            lines.append(line)
        lines.append(separated_line(ratings))
        lines.append("")
    return lines


def _head_to_head_lines(summary: dict[str, Any]) -> list[str]:
    """One line a pairing (A's view), then the truncated games and the forfeits."""
    unit = summary["unit"]
    lines = []
    # Name columns as wide as the longest name (a checkpoint's path, an exec: command), never cut.
    wa = max(12, *(len(p["a"]) for p in summary["pairs"]), 0)
    wb = max(12, *(len(p["b"]) for p in summary["pairs"]), 0)
    head = (
        f"  {'A':<{wa}} {'B':<{wb}} {'deals':>6} {'points/' + unit + ' A-B [95% CI]':>30} {'p':>8} "
        f"{'A hand win%':>12} {'knock%':>7} {'gin%':>6} {'under%':>7} {'dead%':>6} {'trunc':>5} "
        f"{'len':>6} {'ms A':>6} {'ms B':>6}"
    )
    lines.append("Head to head (A's view; each deal played twice, seats swapped)")
    if summary.get("luck_adjusted"):
        lines.append(
            "  points are luck-adjusted (pair_sum - pair_luck); raw points in summary.json and pairs.csv"
        )
    lines.append(head)
    for p in summary["pairs"]:
        r = p["rates"]
        lines.append(
            f"  {p['a']:<{wa}} {p['b']:<{wb}} {p['deals']:>6} {format_ci(p['points_per_' + unit]):>30} "
            f"{format_p(p['p_value']):>8} "
            f"{100 * p['a_hand_win_rate']['rate']:>11.1f}% {100 * r['knock']:>6.1f}% {100 * r['gin']:>5.1f}% "
            f"{100 * r['undercut']:>6.1f}% {100 * r['dead']:>5.1f}% {p.get('truncated_games', 0):>5} "
            f"{p['decisions_per_hand']:>6.1f} "
            f"{p['a_ms_per_decision']:>6.3f} {p['b_ms_per_decision']:>6.3f}"
        )
        if "a_match_win_rate" in p:
            m = p["a_match_win_rate"]
            lines.append(
                f"  {'':<{wa}} {'':<{wb}} A match win rate {100 * m['rate']:.1f}% "
                f"[{100 * m['low']:.1f}, {100 * m['high']:.1f}]"
            )
    games = summary.get("games", sum(p["games"] for p in summary["pairs"]))
    truncated = summary.get("truncated_games", 0)
    lines.append(
        f"Truncated games (a hand reached the turn limit; counted as 0 points): {truncated} of {games}"
    )
    forfeits = {n: k for n, k in (summary.get("forfeits") or {}).items() if k}
    if forfeits:
        who = ", ".join(f"{n} {k}" for n, k in forfeits.items())
        reasons = "; ".join(r for p in summary["pairs"] for r in p.get("forfeit_reasons", []))[:800]
        lines.append(
            f"Forfeits (an exec: agent hung, died or answered an illegal move; it lost that game by the "
            f"forfeit rule of docs/PROTOCOL.md): {who} of {games} games; {reasons}"
        )
    return lines


def _bradley_terry_lines(summary: dict[str, Any]) -> list[str]:
    """The second view, Bradley-Terry over won and lost deals (none without its ratings)."""
    lines: list[str] = []
    bt = summary.get("bt_ratings") or []
    if bt:
        anchor = summary.get("anchor")
        note = f"; {anchor} = 0" if anchor else ""
        width = max(16, *(len(r["agent"]) for r in bt))
        lines.append("")
        lines.append(
            f"Second view: Bradley-Terry over won/lost deals (Elo scale, 95% CI{note}; "
            "ignores the margins, so far wider)"
        )
        for i, r in enumerate(bt, 1):
            won, lost = r.get("deals_won", 1), r.get("deals_lost", 1)
            record = f"won {won:g}, lost {lost:g}"
            if won == 0 or lost == 0:
                # Only a bound from the regulariser: no number to print.
                what = "won" if won == 0 else "lost"
                lines.append(f"  {i:>4}  {r['agent']:<{width}} {'-':>6}  never {what} a deal ({record})")
                continue
            lines.append(
                f"  {i:>4}  {r['agent']:<{width}} {r['elo']:>6.0f}  "
                f"[{r['low']:>6.0f}, {r['high']:>6.0f}]  {record}"
            )
    return lines


def _csv_number(x: Any) -> Any:
    """A CSV cell: empty for a missing or undefined number (None, nan, inf)."""
    return "" if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def write_outputs(
    summary: dict[str, Any], out: str | Path, plots: bool = True, tensorboard: bool = True
) -> list[Path]:
    """Write summary.json, pairs.csv, ratings.csv, ratings_bt.csv, PNG plots and TensorBoard scalars.

    ratings.csv is the points rating (``agent,rating,low,high,gap,gap_low,gap_high``; the last row's
    gap cells are empty, as is any undefined bound); ratings_bt.csv the Bradley-Terry view
    (``agent,elo,low,high``).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "summary.json", out / "pairs.csv", out / "ratings.csv", out / "ratings_bt.csv"]
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
                f"points_per_{unit}_raw",
                "raw_low",
                "raw_high",
            ]
        )
        for p in summary["pairs"]:
            pts = p[f"points_per_{unit}"]
            raw = p.get(f"points_per_{unit}_raw", pts)
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
                    raw["mean"],
                    raw["low"],
                    raw["high"],
                ]
            )
    with written[2].open("w", newline="") as fh:
        w = csv.writer(fh)
        columns = ["agent", "rating", "low", "high", "gap", "gap_low", "gap_high"]
        w.writerow(columns)
        for r in summary["ratings"]:
            w.writerow([_csv_number(r[c]) for c in columns])
    with written[3].open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["agent", "elo", "low", "high"])
        for r in summary.get("bt_ratings", []):
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


def rating_core(values: dict[tuple[str, str], dict[Any, float]], agents: Sequence[str]) -> list[str] | None:
    """The agents the points rating is fitted on, when some agents are far off their scale.

    A first fit on every pairing is split where :func:`split_outliers` finds two far-apart groups;
    the larger group is the core (None: no split, or two groups of one size). Why: random loses to
    every level by 50 to 66 points, by more to easy than to normal, so margins against it do not add
    up; fitted with the rest it would blur the levels' own differences (in the default ladder it
    hid normal over easy, +3.8 [1.9, 5.6] from the levels' games among themselves). Agents outside
    the core are then placed on the core's scale from their games against it, without moving it.
    """
    first = points_ratings(values, agents=agents).ranked()
    j = split_outliers(first)
    if j is None:
        return None
    top, bottom = [r["agent"] for r in first[: j + 1]], [r["agent"] for r in first[j + 1 :]]
    if len(top) == len(bottom):
        return None
    core = top if len(top) > len(bottom) else bottom
    if len(core) < 2 or not _linked(core, values):
        # A gauntlet's opponents never meet each other: no core to fit on its own games.
        return None
    return [a for a in agents if a in core]


def _linked(group: Sequence[str], values: dict[tuple[str, str], dict[Any, float]]) -> bool:
    """Whether the pairings among ``group`` link all of it."""
    reached, frontier = {group[0]}, [group[0]]
    while frontier:
        here = frontier.pop()
        for a, b in values:
            for x, y in ((a, b), (b, a)):
                if x == here and y in group and y not in reached:
                    reached.add(y)
                    frontier.append(y)
    return len(reached) == len(group)


def log_tensorboard(summary: dict[str, Any], logdir: Path) -> Path:
    """Ratings and per-pair points as TensorBoard scalars (``eval/...``).

    ``eval/rating/<agent>`` is the points rating, ``eval/elo/<agent>`` the Bradley-Terry view.
    """
    from torch.utils.tensorboard import SummaryWriter

    unit = summary["unit"]
    with SummaryWriter(str(logdir)) as writer:
        for r in summary["ratings"]:
            writer.add_scalar(f"eval/rating/{r['agent']}", r["rating"], 0)
        for r in summary.get("bt_ratings", []):
            writer.add_scalar(f"eval/elo/{r['agent']}", r["elo"], 0)
        for p in summary["pairs"]:
            tag = f"{p['a']}_vs_{p['b']}"
            writer.add_scalar(f"eval/points_per_{unit}/{tag}", p[f"points_per_{unit}"]["mean"], 0)
            writer.add_scalar(f"eval/hand_win_rate/{tag}", p["a_hand_win_rate"]["rate"], 0)
    return logdir
