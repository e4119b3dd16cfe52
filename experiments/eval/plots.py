"""The evaluation plots: ratings.png and head_to_head.png, drawn from a report's summary.

This module owns the figures of :mod:`ginenv.experiments.eval.report` (which re-exports them) and
where a field splits into far-apart groups (:func:`split_outliers`, also used by the report's fit).
Every figure is a bare :class:`~matplotlib.figure.Figure` (no pyplot state, no backend switch,
nothing to close) on an Agg canvas, sized from the number of agents and the length of their names,
with constrained layout, and checked after layout: whatever text still lies outside the canvas
grows it (:func:`fit_to_canvas`), so titles, tick labels and the colour bar's label are never cut,
from 2 agents to 12 and beyond. Names longer than :data:`MAX_LABEL` characters are shortened in
the middle (:func:`short_label`); titles wrap to the figure's width.

Colour says significance: a head-to-head cell whose 95% interval holds 0 is drawn in the neutral
:data:`NEUTRAL_COLOUR`, named in a legend, whatever its mean; only a separated difference is red or
blue.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: Colour of a separated adjacent gap in ratings.png (grey for one that is not).
SEPARATED_COLOUR = "tab:green"
NOT_SEPARATED_COLOUR = "0.55"
#: Colour of a head-to-head cell whose 95% interval holds 0 (not significant), whatever its mean.
NEUTRAL_COLOUR = "0.86"
#: Longest agent name drawn whole; a longer one is shortened in the middle.
MAX_LABEL = 40
# Inches per character of 9-point text (a generous average: the layout check trims any excess).
_CHAR_IN = 0.072


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float, np.number)) and math.isfinite(float(x))


def _signed(x: float | None, digits: int = 1) -> str:
    return f"{x:+.{digits}f}" if _finite(x) else "n/a"


def short_label(name: str, most: int = MAX_LABEL) -> str:
    """``name`` whole when it has at most ``most`` characters, else its start and end around ``…``
    (a checkpoint's path keeps its folder's start and its file name)."""
    if len(name) <= most:
        return name
    head = (most - 1) // 2
    return name[:head] + "…" + name[len(name) - (most - 1 - head) :]


def wrap_title(text: str, width_in: float, fontsize: float) -> str:
    """``text`` wrapped into lines that fit ``width_in`` inches at ``fontsize`` points."""
    chars = max(20, int(width_in / (_CHAR_IN * fontsize / 9.0)))
    return "\n".join(textwrap.fill(part, chars) for part in text.split("\n"))


def fit_to_canvas(fig: Any, rounds: int = 6, pad_in: float = 0.06) -> Any:
    """Grow ``fig`` until everything it draws lies inside it; returns ``fig``.

    Constrained layout makes room for tick labels, titles and colour bars, but only within the
    figure's size: a figure too small for its labels still cuts them. So the figure is drawn, the
    box of all that is drawn (:meth:`~matplotlib.figure.Figure.get_tightbbox`) is compared with
    the canvas, and the canvas grows by the overflow, a few rounds at most.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    for _ in range(rounds):
        fig.canvas.draw()
        box = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
        width, height = fig.get_size_inches()
        over_x = max(0.0, -box.x0) + max(0.0, box.x1 - width)
        over_y = max(0.0, -box.y0) + max(0.0, box.y1 - height)
        if over_x <= 0.01 and over_y <= 0.01:
            break
        fig.set_size_inches(width + over_x + pad_in * (over_x > 0), height + over_y + pad_in * (over_y > 0))
    return fig


def split_outliers(ratings: Sequence[dict[str, Any]]) -> int | None:
    """Where the ranked ratings fall apart into two far-apart groups, or ``None``.

    Returns ``j`` such that rows ``0..j`` and ``j+1..`` are separated by more than 1.5 times the
    larger group's spread (interval ends included): random against the levels, 50 points below a
    ladder spread over 20. The plots break the rating axis there and scale the head-to-head colours
    by the cells within the groups, so the outlier does not squash the rest. Needs three agents.
    """
    m = len(ratings)
    if m < 3:
        return None
    r = np.array([row["rating"] for row in ratings], dtype=float)
    low = np.array([row["low"] if _finite(row["low"]) else row["rating"] for row in ratings], dtype=float)
    high = np.array([row["high"] if _finite(row["high"]) else row["rating"] for row in ratings], dtype=float)
    j = int(np.argmax(r[:-1] - r[1:]))
    top, bottom = slice(0, j + 1), slice(j + 1, m)
    spread = max(high[top].max() - low[top].min(), high[bottom].max() - low[bottom].min())
    distance = low[top].min() - high[bottom].max()
    return j if distance > 0 and distance > 1.5 * spread else None


def plot_summary(summary: dict[str, Any], out: Path) -> list[Path]:
    """ratings.png (points ratings, 95% intervals, adjacent gaps) and head_to_head.png (matrix)."""
    paths = [out / "ratings.png", out / "head_to_head.png"]
    for path, draw in zip(paths, (ratings_figure, head_to_head_figure), strict=True):
        draw(summary).savefig(path, dpi=120)
    return paths


def ratings_figure(summary: dict[str, Any]) -> Any:
    """The figure of ratings.png: ranked points ratings with 95% intervals and each adjacent gap.

    Best at the top; beside each pair of neighbours a bracket with the gap and its interval, green
    when separated and grey when not. Where :func:`split_outliers` finds a far-apart group the rating
    axis is broken there, so the intervals of the rest stay readable. Sized from the number of
    agents and their names' length, fitted to its canvas (:func:`fit_to_canvas`).
    """
    from matplotlib.figure import Figure

    rows = summary["ratings"]
    unit = summary["unit"]
    m = len(rows)
    y = np.arange(m)
    rating = np.array([r["rating"] for r in rows], dtype=float)
    low = np.array([r["low"] if _finite(r["low"]) else r["rating"] for r in rows], dtype=float)
    high = np.array([r["high"] if _finite(r["high"]) else r["rating"] for r in rows], dtype=float)
    groups, limits, lengths = _rating_panels(rows, low, high)
    data_width = 6.0
    labels = [short_label(r["agent"]) for r in rows]
    label_in = _CHAR_IN * max((len(x) for x in labels), default=1)
    fig = Figure(figsize=(data_width + 2.9 + label_in, 1.5 + 0.55 * m), layout="constrained")
    grid = fig.add_gridspec(1, len(groups) + 1, width_ratios=[*(data_width * lengths / lengths.sum()), 2.9])
    axes = [fig.add_subplot(grid[0, 0])]
    axes += [fig.add_subplot(grid[0, k], sharey=axes[0]) for k in range(1, len(groups))]
    gap_ax = fig.add_subplot(grid[0, len(groups)], sharey=axes[0])
    for k, (ax, g, (lo, hi)) in enumerate(zip(axes, groups, limits, strict=True)):
        err = np.vstack([rating[g] - low[g], high[g] - rating[g]])
        ax.errorbar(rating[g], y[g], xerr=err, fmt="o", color="tab:blue", capsize=4, ms=6, lw=1.6)
        for i in g:
            ax.annotate(
                f"{rating[i]:+.1f}",
                (rating[i], y[i]),
                xytext=(0, 6),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=8,
            )
        # About one tick per inch, so a narrow panel beside a break stays legible.
        _style_panel(ax, k, len(axes), (lo, hi), data_width * lengths[k] / lengths.sum())
    axes[0].set_yticks(y, labels)
    axes[0].set_ylim(m - 0.5, -0.7)  # best at the top
    zero = " (0, dashed)" if any(lo < 0 < hi for lo, hi in limits) else ""
    axes[int(np.argmax(lengths))].set_xlabel(f"points per {unit} against the field's average{zero}")
    _draw_gaps(gap_ax, rows)
    title = f"Ratings: points per {unit} against the field's average, 95% CI, deals as units"
    if summary.get("luck_adjusted"):
        title += " (luck-adjusted)"
    fig.suptitle(wrap_title(title, fig.get_size_inches()[0] - 0.3, 11), fontsize=11)
    return fit_to_canvas(fig)


def _rating_panels(
    rows: Sequence[dict[str, Any]], low: Any, high: Any
) -> tuple[list[Any], list[tuple[float, float]], Any]:
    """The panels of ratings.png: each one's agents (weaker group first, so the rating axis still
    increases to the right), its axis limits, and its share of the width."""
    m = len(rows)
    cut = split_outliers(rows)
    groups = [np.arange(m)] if cut is None else [np.arange(cut + 1, m), np.arange(cut + 1)]
    limits = []
    for g in groups:
        lo, hi = float(low[g].min()), float(high[g].max())
        pad = max(0.1 * (hi - lo), 0.6)
        limits.append((lo - pad, hi + pad))
    lengths = np.array([b - a for a, b in limits])
    lengths = np.maximum(lengths, 0.3 * lengths.max())  # a lone outlier still gets a readable panel
    return groups, limits, lengths


def _style_panel(ax: Any, k: int, n_axes: int, limits: tuple[float, float], inches: float) -> None:
    """Panel ``k`` of ``n_axes``: the zero line, its limits and ticks (about one per inch of its
    width ``inches``), and the broken-axis marks where two panels meet."""
    from matplotlib.ticker import MaxNLocator

    lo, hi = limits
    if lo < 0 < hi:
        ax.axvline(0.0, color="0.5", ls="--", lw=0.8)
    ax.set_xlim(lo, hi)
    ax.grid(axis="x", alpha=0.3)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=max(2, int(inches * 1.1)), steps=[1, 2, 5, 10]))
    if k > 0:
        ax.tick_params(left=False, labelleft=False)
        ax.spines["left"].set_visible(False)
    if k < n_axes - 1:
        ax.spines["right"].set_visible(False)
    # Broken-axis marks where two panels meet.
    kw: dict[str, Any] = {
        "marker": [(-1, -1.5), (1, 1.5)],
        "ms": 10,
        "ls": "none",
        "color": "k",
        "mew": 1,
    }
    if k < n_axes - 1:
        ax.plot([1, 1], [0, 1], transform=ax.transAxes, clip_on=False, **kw)
    if k > 0:
        ax.plot([0, 0], [0, 1], transform=ax.transAxes, clip_on=False, **kw)


def _draw_gaps(gap_ax: Any, rows: Sequence[dict[str, Any]]) -> None:
    """The column beside the ratings: a bracket per adjacent gap, with its interval and verdict."""
    m = len(rows)
    gap_ax.set_axis_off()
    gap_ax.set_xlim(0.0, 1.0)
    gap_ax.text(0.0, -0.6, "gap to next, 95% CI", fontsize=9, va="bottom", fontweight="bold")
    for pos, r in enumerate(rows[:-1]):
        colour = SEPARATED_COLOUR if r["separated"] else NOT_SEPARATED_COLOUR
        # A bracket from this agent's row to the next one's, its open side towards the data.
        gap_ax.plot(
            [0.0, 0.05, 0.05, 0.0], [pos + 0.1, pos + 0.1, pos + 0.9, pos + 0.9], color=colour, lw=1.6
        )
        label = f"{_signed(r['gap'])}  [{_signed(r['gap_low'])}, {_signed(r['gap_high'])}]"
        gap_ax.text(
            0.09,
            pos + 0.5,
            label,
            color=colour,
            fontsize=9,
            va="bottom",
            fontweight="bold" if r["separated"] else "normal",
        )
        gap_ax.text(
            0.09,
            pos + 0.5,
            "separated" if r["separated"] else "not separated",
            color=colour,
            fontsize=7.5,
            va="top",
        )
    n_sep = sum(r["separated"] is True for r in rows[:-1])
    # Beside the last agent, which has no gap of its own (clear of the last bracket's tick).
    summary_line = f"{n_sep} of {m - 1} adjacent gaps separated"
    gap_ax.text(0.09, m - 1 + 0.1, summary_line, fontsize=8, va="top", color="0.3")


def head_to_head_figure(summary: dict[str, Any]) -> Any:
    """The figure of head_to_head.png: row minus column points per pairing, ordered by rating.

    Every played cell shows its mean and 95% interval. Colour says significance: a cell whose
    interval holds 0 is :data:`NEUTRAL_COLOUR` (named in the legend), only a separated difference
    is red (the row lost) or blue (it won), as deep as its size. The colour limit is the largest
    |value| among cells within the groups of :func:`split_outliers` (all cells when there is no
    split); cells beyond it (the outlier's) are drawn at the end colour, hatched, with their exact
    numbers. Cells of pairs not played stay white. Sized from the number of agents and their
    names' length, fitted to its canvas (:func:`fit_to_canvas`).
    """
    from matplotlib import colormaps
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    rows = summary["ratings"]
    unit = summary["unit"]
    names = [r["agent"] for r in rows]  # by rating, best first
    labels = [short_label(name) for name in names]
    n = len(names)
    mat, low, high = _head_to_head_cells(summary, names)
    finite = np.isfinite(mat)
    # Separated: the whole interval on one side of 0 (an undefined interval, one deal, is not).
    with np.errstate(invalid="ignore"):
        significant = finite & ((low > 0) | (high < 0))
    lim = _colour_limit(rows, mat, finite)
    clipped = finite & (np.abs(mat) > lim * (1 + 1e-9))

    # A cell that is not significant is masked: the colour map's "bad" colour, the neutral one.
    cmap = colormaps["RdBu"].with_extremes(bad=NEUTRAL_COLOUR)
    cell = 0.85
    label_in = _CHAR_IN * max((len(x) for x in labels), default=1)
    width = max(5.2, label_in + cell * n + 2.0)
    height = max(4.2, 0.707 * label_in + cell * n + 1.9)
    fig = Figure(figsize=(width, height), layout="constrained")
    ax = fig.add_subplot()
    im = ax.imshow(np.ma.masked_where(~significant, mat), cmap=cmap, vmin=-lim, vmax=lim)
    ax.set_xticks(range(n), labels, rotation=45, ha="right", rotation_mode="anchor", fontsize=9)
    ax.set_yticks(range(n), labels, fontsize=9)
    ax.tick_params(length=0)
    _draw_cells(ax, (mat, low, high), finite, significant, clipped, lim)
    fig.colorbar(
        im,
        ax=ax,
        extend="both" if clipped.any() else "neither",
        shrink=min(0.85, max(0.5, 2.2 / max(cell * n, 1e-9))),
        label=f"row minus column, points per {unit}",
    )
    if (finite & ~significant).any():
        fig.legend(
            handles=[
                Patch(facecolor=NEUTRAL_COLOUR, edgecolor="0.6", label="95% CI holds 0: not significant")
            ],
            loc="outside lower center",
            fontsize=8,
            frameon=False,
        )
    title = f"Head to head: row minus column, points per {unit}, 95% CI"
    if summary.get("luck_adjusted"):
        title += " (luck-adjusted)"
    if clipped.any():
        title += f"\ncolour clipped at ±{lim:.1f}; hatched cells lie beyond (their numbers are exact)"
    fig.suptitle(wrap_title(title, width - 0.3, 10), fontsize=10)
    return fit_to_canvas(fig)


def _head_to_head_cells(summary: dict[str, Any], names: Sequence[str]) -> tuple[Any, Any, Any]:
    """Row minus column mean, low and high of every pairing played (``nan`` where not)."""
    unit = summary["unit"]
    idx = {n: i for i, n in enumerate(names)}
    n = len(names)
    mat, low, high = (np.full((n, n), np.nan) for _ in range(3))
    for p in summary["pairs"]:
        if p["a"] not in idx or p["b"] not in idx:
            continue
        v = p[f"points_per_{unit}"]
        i, j = idx[p["a"]], idx[p["b"]]
        mat[i, j], low[i, j], high[i, j] = v["mean"], v["low"], v["high"]
        mat[j, i], low[j, i], high[j, i] = -v["mean"], -v["high"], -v["low"]
    return mat, low, high


def _colour_limit(rows: Sequence[dict[str, Any]], mat: Any, finite: Any) -> float:
    """The colour scale's limit: the largest |value| among the cells within each group of
    :func:`split_outliers`; an agent 60 points below the rest would otherwise wash out every
    difference between the others (±2 to ±13)."""
    n = len(rows)
    cut = split_outliers(rows)
    group = np.array([0 if cut is None or i <= cut else 1 for i in range(n)])
    within = finite & (group[:, None] == group[None, :])
    pool = np.abs(mat[within]) if within.any() else np.abs(mat[finite])
    return float(pool.max()) if pool.size and pool.max() > 0 else 1.0


def _draw_cells(
    ax: Any, cells: tuple[Any, Any, Any], finite: Any, significant: Any, clipped: Any, lim: float
) -> None:
    """Each cell's mean and interval (white where not played, hatched where beyond the colour limit)."""
    from matplotlib.patches import Rectangle

    mat, low, high = cells
    n = mat.shape[0]
    for i in range(n):
        for j in range(n):
            if not finite[i, j]:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, color="white", lw=0))
                continue
            deep = significant[i, j] and min(abs(mat[i, j]) / lim, 1.0) > 0.6
            colour = "white" if deep else "black"
            if clipped[i, j]:
                ax.add_patch(
                    Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", ec=(1, 1, 1, 0.3), lw=0)
                )
            bold = "bold" if clipped[i, j] else "normal"
            ax.text(
                j,
                i - 0.12,
                f"{mat[i, j]:+.1f}",
                ha="center",
                va="center",
                fontsize=9,
                color=colour,
                fontweight=bold,
            )
            if np.isfinite(low[i, j]) and np.isfinite(high[i, j]):
                ax.text(
                    j,
                    i + 0.22,
                    f"[{low[i, j]:+.1f}, {high[i, j]:+.1f}]",
                    ha="center",
                    va="center",
                    fontsize=6.5,
                    color=colour,
                )
