"""Ratings on the points scale: points per hand against the field, from every pairing at once.

This module owns :func:`points_ratings`, the headline of the evaluation harness's reports: a
least-squares fit of "A minus B on a deal = rating A minus rating B" over every pairing, with
cluster-robust intervals that take the deal as the independent unit, the gaps between ranked
agents with their own intervals, and the two-stage fit on a core of agents (an agent far off the
core's scale, or a newcomer rated against a ladder, is placed on it without moving it). The
Bradley-Terry view over won and lost deals is :func:`ginenv.experiments.eval.stats.bradley_terry`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ginenv.experiments.eval.stats import check_confidence
from numpy.typing import NDArray
from scipy import stats
from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components

__all__ = ["PointsRatings", "points_ratings"]


def _t_quantile(confidence: float, df: int) -> float:
    """Two-sided Student-t quantile ``t_{(1+c)/2, df}``; ``nan`` when ``df < 1`` (nothing to say)."""
    return float(stats.t.ppf(0.5 + confidence / 2.0, df=df)) if df >= 1 else math.nan


@dataclass(frozen=True)
class PointsRatings:
    """Ratings on the points scale, fitted to duplicate-deal values of every pairing at once.

    Attributes:
        names: agents, in the order given to :func:`points_ratings` (or of first appearance).
        rating: points per hand (or per match) against the anchor agents' average: the model's
            expected value of "a minus b" on a deal is ``rating[a] - rating[b]``.
        low, high: two-sided Student-t interval per agent at ``confidence`` (``nan`` when there is
            a single distinct deal; ``low == high == 0`` for a lone anchor, fixed by definition).
        stderr: cluster-robust standard error per agent, deals as the clusters.
        covariance: cluster-robust covariance matrix of ``rating``, for intervals of differences.
        df: degrees of freedom of the t quantile: distinct deals minus one.
        confidence: coverage of ``low``/``high`` and of :meth:`difference_ci`.
        anchor: the agents whose mean rating is 0 (all agents by default).

    Model and fit: ``E[value(a, b)] = r_a - r_b``, fitted by least squares over every deal of
    every pairing, i.e. over the pairing means ``ȳ_p`` weighted by their deal counts ``n_p``
    (with as many deals in every pairing this is plain least squares on the means). The fitted
    gaps reproduce the pairing means only where those add up (``ȳ(a, c) = ȳ(a, b) + ȳ(b, c)``);
    otherwise the fit pools them, so a rating gap also uses the indirect comparisons. The
    estimate is linear in the means, ``r = L ȳ``, with ``L`` the weighted least-squares solution
    followed by the shift that makes the anchor agents' mean 0.

    Covariance: cluster-robust (sandwich) over deals. Deal ``k`` contributes
    ``u_k = Σ_p L[:, p] (y_pk - ȳ_p) / n_p`` over the pairings ``p`` that played it, and
    ``V = K / (K - 1) · Σ_k u_k u_kᵀ`` with ``K`` distinct deals. It follows from ``r = L ȳ``
    alone (not from the model being right), and it keeps the correlation of one deal's values
    across pairings, which a per-pairing variance would drop. With two agents and one pairing it
    is ``s² / n`` for the gap, the variance of a mean. A pairing with a single deal adds its
    value to the fit but no spread to ``V`` (one value has no spread to estimate), so its share
    of the uncertainty is understated; the harness plays many deals per pairing.

    Intervals: ``rating ± t_{(1+c)/2, K-1} · se``. Student t rather than normal, with the number
    of clusters minus one as degrees of freedom (the usual small-sample choice for clustered
    errors): for two agents it reproduces :func:`duplicate_points`'s interval exactly, and with
    hundreds of deals it differs from the normal one in the third digit. With a single distinct
    deal (``K = 1``) the covariance, standard errors and intervals are ``nan``.
    """

    names: tuple[str, ...]
    rating: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    stderr: tuple[float, ...]
    covariance: NDArray[np.float64] = field(repr=False, compare=False)
    df: int
    confidence: float
    anchor: tuple[str, ...]

    def index(self, name: str) -> int:
        """Position of ``name`` in :attr:`names` (``KeyError`` if unknown)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"unknown agent {name!r}; agents are {list(self.names)}") from None

    def rating_of(self, name: str) -> float:
        """Rating of ``name``."""
        return self.rating[self.index(name)]

    def difference_ci(self, a: str, b: str) -> tuple[float, float, float]:
        """``(rating_a - rating_b, low, high)``: the gap with its t interval at ``confidence``.

        Uses the full covariance: the ratings share deals and the fit, so they are correlated and
        the gap's interval is not what the two per-agent intervals suggest (it is usually
        narrower than their overlap implies). ``low``/``high`` are ``nan`` with a single deal.
        """
        i, j = self.index(a), self.index(b)
        d = self.rating[i] - self.rating[j]
        cov = self.covariance
        var = max(float(cov[i, i] + cov[j, j] - 2.0 * cov[i, j]), 0.0)
        half = _t_quantile(self.confidence, self.df) * math.sqrt(var)
        return d, d - half, d + half

    def ranked(self) -> list[dict[str, Any]]:
        """One row per agent, highest rating first, with the gap to the next-ranked agent.

        Each row: ``agent``, ``rating``, ``low``, ``high``, ``gap`` (rating minus the next
        agent's), ``gap_low``/``gap_high`` (its interval, from :meth:`difference_ci`) and
        ``separated`` (``gap_low > 0``: the two are told apart at ``confidence``). The last row's
        gap fields and ``separated`` are ``None``. Equal ratings keep the order of :attr:`names`.
        """
        order = sorted(range(len(self.names)), key=lambda i: -self.rating[i])
        rows: list[dict[str, Any]] = []
        for pos, i in enumerate(order):
            row: dict[str, Any] = {
                "agent": self.names[i],
                "rating": self.rating[i],
                "low": self.low[i],
                "high": self.high[i],
                "gap": None,
                "gap_low": None,
                "gap_high": None,
                "separated": None,
            }
            if pos + 1 < len(order):
                gap, low, high = self.difference_ci(self.names[i], self.names[order[pos + 1]])
                # A nan bound (one deal) is not evidence of separation.
                row.update(gap=gap, gap_low=low, gap_high=high, separated=bool(low > 0.0))
            rows.append(row)
        return rows


def _anchor_names(anchor: str | Sequence[str] | None, names: list[str]) -> tuple[str, ...]:
    if anchor is None:
        return tuple(names)
    chosen = (anchor,) if isinstance(anchor, str) else tuple(anchor)
    if not chosen:
        raise ValueError("anchor must name at least one agent (or be None for all agents)")
    for name in chosen:
        if name not in names:
            raise ValueError(f"anchor {name!r} is not an agent; agents are {names}")
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"anchor names an agent twice: {list(chosen)}")
    return chosen


def _least_squares(x_mat: NDArray[np.float64], counts: NDArray[np.float64]) -> NDArray[np.float64]:
    """``S`` with ratings ``= S @ means`` (up to a common shift): weighted least squares."""
    # Weighted normal equations M r = Xᵀ W ȳ. M is a graph Laplacian, singular along the all-ones
    # vector (only differences are seen); adding a multiple of 11ᵀ makes it invertible without
    # changing the differences, and the anchor shift then removes any component along 1.
    m = x_mat.shape[1]
    normal = x_mat.T @ (counts[:, None] * x_mat)
    ones = np.ones(m)
    scale = float(np.trace(normal)) / m
    return np.linalg.solve(normal + scale * np.outer(ones, ones) / m, x_mat.T * counts[None, :])  # type: ignore[no-any-return]


def _core_least_squares(
    x_mat: NDArray[np.float64],
    counts: NDArray[np.float64],
    pairings: list[tuple[int, int]],
    names: list[str],
    core: Sequence[str],
) -> NDArray[np.float64]:
    """``S`` of :func:`_least_squares` in two stages: the core from its own pairings, then the
    others from all their pairings with the core's ratings fixed. Still linear in the means."""
    for name in core:
        if name not in names:
            raise ValueError(f"core agent {name!r} is not an agent; agents are {names}")
    m, n_pairs = len(names), len(pairings)
    inner_set = {names.index(n) for n in core}
    c_idx = sorted(inner_set)
    o_idx = [i for i in range(m) if i not in inner_set]
    inner = [p for p, (i, j) in enumerate(pairings) if i in inner_set and j in inner_set]
    if len(c_idx) > 1:
        adjacency = np.zeros((len(c_idx), len(c_idx)), dtype=bool)
        for p in inner:
            i, j = (c_idx.index(k) for k in pairings[p])
            adjacency[i, j] = adjacency[j, i] = True
        if connected_components(csr_array(adjacency), directed=False)[0] > 1:
            raise ValueError(f"the core agents {list(core)} are not linked by pairings among themselves")
    solve = np.zeros((m, n_pairs))
    if len(c_idx) > 1:
        solve[np.ix_(c_idx, inner)] = _least_squares(x_mat[np.ix_(inner, c_idx)], counts[inner])
    if not o_idx:
        return solve
    outer = [p for p, (i, j) in enumerate(pairings) if i not in inner_set or j not in inner_set]
    x_o = x_mat[np.ix_(outer, o_idx)]
    # The known core part moves to the left: target = means[outer] - X_core @ r_core.
    target = np.zeros((len(outer), n_pairs))
    target[np.arange(len(outer)), outer] = 1.0
    target -= x_mat[np.ix_(outer, c_idx)] @ solve[c_idx]
    normal = x_o.T @ (counts[outer][:, None] * x_o)
    if np.linalg.matrix_rank(normal) < len(o_idx):
        raise ValueError("every agent outside the core must be linked to the core by its pairings")
    solve[o_idx] = np.linalg.solve(normal, x_o.T @ (counts[outer][:, None] * target))
    return solve


def points_ratings(
    values: Mapping[tuple[str, str], Mapping[Hashable, float]],
    agents: Sequence[str] | None = None,
    anchor: str | Sequence[str] | None = None,
    confidence: float = 0.95,
    core: Sequence[str] | None = None,
) -> PointsRatings:
    """Ratings in points per hand from per-deal duplicate values of all pairings, deals as units.

    Args:
        values: ``values[(a, b)][deal]`` is the value "points per hand of a minus b" on that
            deal (the harness passes ``pair_sum / 2``, or a luck-adjusted version of it). The
            same deal key in different pairings is the same deal (the harness deals deal ``k``
            identically in every pairing), so one deal's values are correlated across pairings.
        agents: the agents, in report order (default: order of first appearance in ``values``).
            Every agent must appear in some pairing.
        anchor: agent(s) whose mean rating is 0; default all agents, so a rating reads "points
            per hand against the field's average". A single name pins that agent to 0.
        confidence: two-sided coverage of the intervals.
        core: agents whose ratings are fitted from their pairings among themselves only; every
            other agent is then fitted from all of its pairings with the core's ratings held fixed
            (and ``anchor`` defaults to the core). For an agent far off the core's scale (random
            against the levels, which loses to each by 50 to 66 points with margins that do not
            add up) and for a newcomer rated against a ladder (``ginenv rate``): their games place
            them on the core's scale without moving it. Every other agent must be linked to the
            core by its pairings.

    The model, the fit, the covariance and the intervals are described in :class:`PointsRatings`.
    The steps: read the values (:func:`_read_values`), check every agent is linked to every other
    (:func:`_check_linked`), fit (:func:`_least_squares` or :func:`_core_least_squares`), shift to
    the anchor, and take the sandwich covariance over deals (:func:`_cluster_covariance`).

    Raises:
        ValueError: empty ``values``, a key that is not an ``(a, b)`` pair, an agent paired with
            itself, a pairing with no deals, a non-finite value, an agent of a pairing missing
            from ``agents`` (or one listed twice), agents in groups that never played each other
            (or an agent that played no one), an unknown anchor, a confidence outside (0, 1).
    """
    c = check_confidence(confidence)
    names, pairings, cells, n_deals = _read_values(values, agents)
    m = len(names)
    if m < 2:  # unreachable: a pairing has two distinct agents
        raise ValueError("points_ratings needs at least two agents")
    anchors = _anchor_names(anchor, names)
    _check_linked(names, pairings)

    x_mat, arrays, counts, means = _design(pairings, cells, m)
    if core is None:
        solve = _least_squares(x_mat, counts)
    else:
        solve = _core_least_squares(x_mat, counts, pairings, names, core)
        if anchor is None:
            anchors = tuple(core)
    ones = np.ones(m)
    weights = np.zeros(m)
    weights[[names.index(n) for n in anchors]] = 1.0 / len(anchors)
    shift = np.eye(m) - np.outer(ones, weights)
    lin = shift @ solve  # L: ratings = L @ means, shape (m, n_pairs)
    rating = lin @ means

    cov = _cluster_covariance(lin, arrays, means, counts, n_deals)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    if len(anchors) == 1 and n_deals > 1:
        se[names.index(anchors[0])] = 0.0  # pinned by definition; clears rounding residue
    df = n_deals - 1
    half = _t_quantile(c, df) * se
    return PointsRatings(
        names=tuple(names),
        rating=tuple(float(r) for r in rating),
        low=tuple(float(r) for r in rating - half),
        high=tuple(float(r) for r in rating + half),
        stderr=tuple(float(s) for s in se),
        covariance=cov,
        df=df,
        confidence=c,
        anchor=anchors,
    )


def _read_values(
    values: Mapping[tuple[str, str], Mapping[Hashable, float]], agents: Sequence[str] | None
) -> tuple[list[str], list[tuple[int, int]], list[tuple[int, int, float]], int]:
    """The agents, the pairings (as agent indices), the cells ``(pairing, deal column, value)`` and
    the number of distinct deals of :func:`points_ratings`'s ``values``, checked."""
    if not values:
        raise ValueError("points_ratings needs at least one pairing; values is empty")
    names: list[str] = [] if agents is None else list(agents)
    if len(set(names)) != len(names):
        raise ValueError(f"agents lists an agent twice: {names}")
    where = {n: i for i, n in enumerate(names)}
    deal_col: dict[Hashable, int] = {}
    pairings: list[tuple[int, int]] = []
    cells: list[tuple[int, int, float]] = []  # (pairing, deal column, value)
    for key, per_deal in values.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise ValueError(f"values keys must be (a, b) pairs of agents, got {key!r}")
        a, b = key
        if a == b:
            raise ValueError(f"agent {a!r} is paired with itself in values")
        if not isinstance(per_deal, Mapping):
            raise ValueError(f"values[{key!r}] must map deal -> value, got {type(per_deal).__name__}")
        if not per_deal:
            raise ValueError(f"pairing {key!r} has no deals")
        for name in (a, b):
            if name not in where:
                if agents is not None:
                    raise ValueError(f"agent {name!r} of pairing {key!r} is not in agents {names}")
                where[name] = len(names)
                names.append(name)
        p = len(pairings)
        pairings.append((where[a], where[b]))
        for deal, v in per_deal.items():
            x = float(v)
            if not math.isfinite(x):
                raise ValueError(f"values[{key!r}][{deal!r}] must be finite, got {v!r}")
            cells.append((p, deal_col.setdefault(deal, len(deal_col)), x))
    return names, pairings, cells, len(deal_col)


def _design(
    pairings: list[tuple[int, int]], cells: list[tuple[int, int, float]], m: int
) -> tuple[
    NDArray[np.float64],
    tuple[NDArray[Any], NDArray[Any], NDArray[np.float64]],
    NDArray[np.float64],
    NDArray[np.float64],
]:
    """The design matrix (pairing ``p``'s mean estimates ``r_a - r_b``), the cells as arrays
    (pairing, deal column, value), and each pairing's deal count and mean value."""
    n_pairs = len(pairings)
    x_mat = np.zeros((n_pairs, m))
    for p, (i, j) in enumerate(pairings):
        x_mat[p, i], x_mat[p, j] = 1.0, -1.0
    p_idx, k_idx, v_arr = (np.array(col) for col in zip(*cells, strict=True))
    p_idx, k_idx = p_idx.astype(int), k_idx.astype(int)
    counts = np.bincount(p_idx, minlength=n_pairs).astype(np.float64)
    means = np.bincount(p_idx, weights=v_arr, minlength=n_pairs) / counts
    return x_mat, (p_idx, k_idx, v_arr), counts, means


def _check_linked(names: list[str], pairings: list[tuple[int, int]]) -> None:
    """Every agent is linked to every other by pairings (else only groups' ratings have a meaning)."""
    m = len(names)
    adjacency = np.zeros((m, m), dtype=bool)
    for i, j in pairings:
        adjacency[i, j] = adjacency[j, i] = True
    n_groups, labels = connected_components(csr_array(adjacency), directed=False)
    if n_groups > 1:
        groups = [[names[i] for i in range(m) if labels[i] == g] for g in range(n_groups)]
        raise ValueError(f"agents fall into groups that never played each other: {groups}")


def _cluster_covariance(
    lin: NDArray[np.float64],
    cells: tuple[NDArray[Any], NDArray[Any], NDArray[np.float64]],
    means: NDArray[np.float64],
    counts: NDArray[np.float64],
    n_deals: int,
) -> NDArray[np.float64]:
    """The sandwich covariance over deals of ``ratings = lin @ means`` (``nan`` with one deal);
    ``cells`` are the values' pairing and deal indices and the values, as arrays."""
    p_idx, k_idx, v_arr = cells
    m, n_pairs = lin.shape
    # Scatter each value's scaled deviation into its (pairing, deal) cell; column k of L @ dev is
    # then u_k.
    dev = np.zeros((n_pairs, n_deals))
    np.add.at(dev, (p_idx, k_idx), (v_arr - means[p_idx]) / counts[p_idx])
    u = lin @ dev
    if n_deals > 1:
        cov = n_deals / (n_deals - 1) * (u @ u.T)
        cov = 0.5 * (cov + cov.T)
    else:
        cov = np.full((m, m), math.nan)
    return cov  # type: ignore[no-any-return]
