"""Statistics for the evaluation harness: intervals, significance tests and ratings.

This module owns the numbers the harness reports about agent comparisons, and nothing about
how games are played or how results are printed:

* :func:`mean_ci` -- Student-t confidence interval of a mean.
* :func:`duplicate_points` -- mean points per hand of A minus B from duplicate-deal pair sums.
* :func:`paired_significance` -- two-sided test that duplicate pair sums are centred on 0
  (one-sample t test, or Wilcoxon signed-rank).
* :func:`proportion_ci` -- Wilson score interval of a rate (win rate, gin rate, ...).
* :func:`points_ratings` -- ratings on the points scale (points per hand against the field's
  average) fitted by least squares to per-deal duplicate values of every pairing at once, with
  cluster-robust intervals that treat deals as the independent units.
* :func:`bradley_terry` -- maximum-likelihood Bradley-Terry ratings on the Elo scale from
  pairwise win counts, with intervals from the observed Fisher information.
* :func:`elo_from_winrate` / :func:`winrate_from_elo` -- the Elo <-> win-probability map.

Conventions for degenerate input: arguments that cannot be right (a confidence outside (0, 1),
non-finite samples, negative counts, a player paired with itself, no games at all) raise
``ValueError`` with a message saying what is wrong. Samples that are merely too small to say
anything (``n < 2`` for a t interval or a test, ``trials == 0`` for a rate) do *not* raise: they
give ``nan`` estimates and the widest honest interval, as each function's docstring spells out,
so a report over many pairings never crashes on one empty cell.

The computations are delegated to :mod:`scipy.stats` and :mod:`scipy.optimize`; this module only
chooses the methods, validates input and fixes the definitions.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, SupportsIndex

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special, stats
from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components

__all__ = [
    "ELO_PER_NAT",
    "MeanCI",
    "ProportionCI",
    "Ratings",
    "Significance",
    "bradley_terry",
    "duplicate_points",
    "elo_from_winrate",
    "mean_ci",
    "paired_significance",
    "proportion_ci",
    "winrate_from_elo",
]

#: Elo points per unit of log-strength (natural log): ``elo = ELO_PER_NAT * log_strength``.
ELO_PER_NAT: float = 400.0 / math.log(10.0)


def check_confidence(confidence: float) -> float:
    """``confidence`` as a float strictly between 0 and 1; anything else is a ValueError."""
    c = float(confidence)
    if not 0.0 < c < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    return c


def _sample(values: ArrayLike, what: str) -> NDArray[np.float64]:
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what} must all be finite (no nan or inf)")
    return x


# --------------------------------------------------------------------------------------------
# Means
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MeanCI:
    """A sample mean with a two-sided Student-t confidence interval.

    Attributes:
        mean: sample mean (``nan`` when ``n == 0``).
        low, high: interval bounds; ``(-inf, inf)`` when ``n == 1`` and ``(nan, nan)`` when
            ``n == 0``; ``low == high == mean`` when every value is equal (zero sample variance).
        n: number of values.
        stderr: standard error of the mean, ``s / sqrt(n)`` with the ``n - 1`` sample standard
            deviation ``s`` (``nan`` when ``n < 2``).
        confidence: the two-sided coverage the interval was built for.
    """

    mean: float
    low: float
    high: float
    n: int
    stderr: float
    confidence: float = 0.95

    @property
    def half_width(self) -> float:
        """Half the interval width (``inf`` when ``n == 1``, ``nan`` when ``n == 0``)."""
        return (self.high - self.low) / 2.0


def mean_ci(values: ArrayLike, confidence: float = 0.95) -> MeanCI:
    """Mean of ``values`` with the Student-t interval ``mean ± t_{(1+c)/2, n-1} · s/√n``.

    Small samples never raise: ``n == 0`` gives ``mean``, ``low``, ``high`` and ``stderr`` all
    ``nan``; ``n == 1`` gives the value as ``mean``, ``stderr = nan`` and the interval
    ``(-inf, inf)`` (one value says nothing about spread). Non-finite values or a confidence
    outside (0, 1) raise ``ValueError``.
    """
    c = check_confidence(confidence)
    x = _sample(values, "values")
    n = int(x.size)
    if n == 0:
        return MeanCI(math.nan, math.nan, math.nan, 0, math.nan, c)
    mean = float(np.mean(x))
    if n == 1:
        return MeanCI(mean, -math.inf, math.inf, 1, math.nan, c)
    se = float(stats.sem(x, ddof=1))
    half = float(stats.t.ppf(0.5 + c / 2.0, df=n - 1)) * se
    return MeanCI(mean, mean - half, mean + half, n, se, c)


def duplicate_points(pair_sums: ArrayLike, confidence: float = 0.95) -> MeanCI:
    """Mean points per hand of A minus B (A's net points per hand), from duplicate pair sums.

    Definition. Each duplicate deal is played twice with the seats swapped; its *pair sum*
    ``S`` is A's net points (won minus lost) in game 1 plus in game 2. Points are zero-sum per
    hand, so each hand moves points from one player to the other, and "A minus B per hand" is
    the points A takes from B per hand: ``S / 2`` for the deal's two hands. Example: deals with
    pair sums ``[30, -10, 10]`` give 15, -5 and 5 points per hand, mean 5.

    The interval treats *deals* as the independent units (the two games of a deal share cards
    and are not independent), so ``n`` is the number of deals, not of hands. Degenerate sizes
    behave as in :func:`mean_ci`.
    """
    return mean_ci(_sample(pair_sums, "pair_sums") / 2.0, confidence)


# --------------------------------------------------------------------------------------------
# Significance
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Significance:
    """Result of a two-sided test that duplicate pair sums are centred on zero.

    Attributes:
        test: ``"t"`` (one-sample Student t test of the mean) or ``"wilcoxon"`` (signed-rank
            test of symmetry about zero).
        statistic: the test statistic as scipy reports it (t, or the Wilcoxon rank sum).
        p_value: two-sided p value; ``nan`` when the test is undefined (see
            :func:`paired_significance`).
        n: number of pair sums (deals).
        significant_at_95: ``p_value < 0.05`` (``False`` when ``p_value`` is ``nan``).
    """

    test: str
    statistic: float
    p_value: float
    n: int
    significant_at_95: bool


def paired_significance(
    pair_sums: ArrayLike,
    test: Literal["t", "wilcoxon"] = "t",
    zero_method: Literal["zsplit", "pratt", "wilcox"] = "zsplit",
) -> Significance:
    """Two-sided test of ``H0: A and B are equally strong`` from duplicate pair sums.

    Args:
        pair_sums: one number per duplicate deal (A's points summed over both seatings).
        test: ``"t"`` runs :func:`scipy.stats.ttest_1samp` against a mean of 0; ``"wilcoxon"``
            runs :func:`scipy.stats.wilcoxon`, which is robust to the heavy tails gin scores have
            (a gin or undercut bonus swings a deal far more than a plain knock).
        zero_method: Wilcoxon only: how deals with pair sum exactly 0 are treated. The default
            ``"zsplit"`` splits their ranks between the two signs, so many drawn deals pull the
            result towards "no difference"; ``"wilcox"`` discards them (scipy's default), which
            can call a handful of non-zero deals significant even when most deals were even.

    Undefined cases give ``statistic = p_value = nan`` and ``significant_at_95 = False``
    rather than raising: fewer than two pair sums, and, for the t test, zero sample variance
    (all pair sums equal, where scipy would report ``t = ±inf, p = 0`` for a constant non-zero
    sample -- not evidence worth calling significant). Non-finite values or an unknown ``test``
    raise ``ValueError``.
    """
    x = _sample(pair_sums, "pair_sums")
    n = int(x.size)
    if test not in ("t", "wilcoxon"):
        raise ValueError(f"test must be 't' or 'wilcoxon', got {test!r}")
    undefined = Significance(test, math.nan, math.nan, n, False)
    if n < 2:
        return undefined
    if test == "t":
        if float(np.ptp(x)) == 0.0:
            return undefined
        res = stats.ttest_1samp(x, 0.0, alternative="two-sided")
    else:
        res = stats.wilcoxon(x, zero_method=zero_method, alternative="two-sided")
    statistic, p = float(res.statistic), float(res.pvalue)
    return Significance(test, statistic, p, n, bool(p < 0.05))


# --------------------------------------------------------------------------------------------
# Proportions
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProportionCI:
    """An observed rate with a Wilson score interval.

    Attributes:
        rate: ``successes / n`` (``nan`` when ``n == 0``).
        low, high: interval bounds, inside [0, 1]; ``(0, 1)`` when ``n == 0``.
        n: number of trials.
        successes: number of successes.
        confidence: the two-sided coverage the interval was built for.
    """

    rate: float
    low: float
    high: float
    n: int
    successes: int = 0
    confidence: float = 0.95


def _count(value: SupportsIndex, what: str) -> int:
    try:
        k = operator.index(value)
    except TypeError:
        raise ValueError(f"{what} must be an integer count, got {value!r}") from None
    if k < 0:
        raise ValueError(f"{what} must be non-negative, got {k}")
    return k


def proportion_ci(successes: SupportsIndex, trials: SupportsIndex, confidence: float = 0.95) -> ProportionCI:
    """Rate ``successes / trials`` with the Wilson score interval (no continuity correction).

    Uses ``scipy.stats.binomtest(successes, trials).proportion_ci(method="wilson")``. With
    ``trials == 0`` the rate is ``nan`` and the interval is the whole of ``[0, 1]``. Negative or
    non-integer counts, ``successes > trials`` or a confidence outside (0, 1) raise
    ``ValueError``.
    """
    c = check_confidence(confidence)
    k = _count(successes, "successes")
    n = _count(trials, "trials")
    if k > n:
        raise ValueError(f"successes ({k}) cannot exceed trials ({n})")
    if n == 0:
        return ProportionCI(math.nan, 0.0, 1.0, 0, 0, c)
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=c, method="wilson")
    return ProportionCI(k / n, float(ci.low), float(ci.high), n, k, c)


# --------------------------------------------------------------------------------------------
# Elo and Bradley-Terry
# --------------------------------------------------------------------------------------------


def elo_from_winrate(p: float) -> float:
    """Elo difference that gives expected score ``p``: ``400 · log10(p / (1 - p))``.

    ``p == 0`` gives ``-inf`` and ``p == 1`` gives ``inf``; ``p`` outside [0, 1] (or ``nan``)
    raises ``ValueError``.
    """
    q = float(p)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"win rate must lie in [0, 1], got {p!r}")
    if q == 0.0:
        return -math.inf
    if q == 1.0:
        return math.inf
    return float(ELO_PER_NAT * special.logit(q))


def winrate_from_elo(diff: float) -> float:
    """Expected score of a player rated ``diff`` Elo above the opponent: ``1/(1+10^(-diff/400))``.

    The inverse of :func:`elo_from_winrate`.
    """
    return float(special.expit(float(diff) / ELO_PER_NAT))


@dataclass(frozen=True)
class Ratings:
    """Bradley-Terry ratings on the Elo scale.

    Attributes:
        names: players, in order of first appearance in the ``wins`` mapping.
        elo: rating per player; centred so the mean is 0, or so that ``anchor`` is 0.
        low, high: two-sided normal-approximation interval per player at ``confidence``
            (for the anchor, if any, both are 0: its rating is fixed by definition).
        stderr: standard error per player, in Elo.
        anchor: the player pinned to 0, or ``None`` for mean-zero centring.
        confidence: coverage of ``low``/``high``.
        mle_exists: whether the unregularised maximum-likelihood estimate exists, i.e. the
            directed "beat" graph is strongly connected (every player can be linked to every
            other by a chain of wins). When ``False`` some player is, say, undefeated against
            its whole connected side; its rating is then set by the L2 regulariser and reads
            only as "far above/below", with an interval that is correspondingly huge.
        covariance: covariance matrix of ``elo`` (Elo²), for intervals of differences.
    """

    names: tuple[str, ...]
    elo: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    stderr: tuple[float, ...]
    anchor: str | None
    confidence: float
    mle_exists: bool
    covariance: NDArray[np.float64] = field(repr=False, compare=False)

    def index(self, name: str) -> int:
        """Position of ``name`` in :attr:`names` (``KeyError`` if unknown)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"unknown player {name!r}; players are {list(self.names)}") from None

    def rating(self, name: str) -> float:
        """Elo rating of ``name``."""
        return self.elo[self.index(name)]

    def win_probability(self, a: str, b: str) -> float:
        """Model probability that ``a`` beats ``b``: ``1 / (1 + 10^((elo_b - elo_a)/400))``.

        ``win_probability(a, b) + win_probability(b, a) == 1`` up to rounding.
        """
        return winrate_from_elo(self.rating(a) - self.rating(b))

    def difference_ci(self, a: str, b: str) -> tuple[float, float, float]:
        """``(elo_a - elo_b, low, high)``: the rating gap with its interval at ``confidence``.

        Uses the full covariance of the two ratings, so it is the right interval for "is a
        stronger than b", which combining the two per-player intervals is not.
        """
        i, j = self.index(a), self.index(b)
        d = self.elo[i] - self.elo[j]
        cov = self.covariance
        var = max(float(cov[i, i] + cov[j, j] - 2.0 * cov[i, j]), 0.0)
        half = float(stats.norm.ppf(0.5 + self.confidence / 2.0)) * math.sqrt(var)
        return d, d - half, d + half


def _win_matrix(wins: Mapping[tuple[str, str], float]) -> tuple[list[str], NDArray[np.float64]]:
    names: list[str] = []
    where: dict[str, int] = {}
    entries: list[tuple[int, int, float]] = []
    for key, count in wins.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise ValueError(f"wins keys must be (winner, loser) pairs, got {key!r}")
        a, b = key
        if a == b:
            raise ValueError(f"player {a!r} is paired with itself in wins")
        w = float(count)
        if not (math.isfinite(w) and w >= 0.0):
            raise ValueError(f"wins[{key!r}] must be a finite non-negative count, got {count!r}")
        for name in (a, b):
            if name not in where:
                where[name] = len(names)
                names.append(name)
        entries.append((where[a], where[b], w))
    if len(names) < 2:
        raise ValueError("bradley_terry needs games between at least two players; wins is empty")
    mat = np.zeros((len(names), len(names)))
    for i, j, w in entries:
        mat[i, j] += w
    return names, mat


def bradley_terry(
    wins: Mapping[tuple[str, str], float],
    confidence: float = 0.95,
    anchor: str | None = None,
    l2: float = 1e-4,
) -> Ratings:
    """Maximum-likelihood Bradley-Terry ratings, on the Elo scale, from pairwise win counts.

    Model: player ``i`` has log-strength ``θ_i`` and beats ``j`` with probability
    ``σ(θ_i - θ_j) = 1 / (1 + exp(θ_j - θ_i))``. ``wins[(i, j)]`` is the number of times ``i``
    beat ``j``; counts may be fractional, so a tie can be entered as half a win each way.
    Keys ``(i, j)`` and ``(j, i)`` are both read; a key with count 0 still registers its
    players.

    Fit: minimise ``-log L(θ) + (l2 / 2) · Σ θ_i²`` over ``θ`` with ``Σ θ_i = 0`` (the
    likelihood only sees differences), by :func:`scipy.optimize.minimize` (``trust-exact``, with
    analytic gradient and Hessian) on coordinates of an orthonormal basis of the sum-zero
    subspace. The tiny ridge term ``l2`` (default ``1e-4``, a prior worth far less than one
    game) keeps the optimum finite when the MLE does not exist -- a player undefeated, or
    winless, against its side -- and is negligible otherwise; ``l2 = 0`` is allowed only when
    the MLE exists (see :attr:`Ratings.mle_exists`).

    Intervals: the covariance of ``θ`` is the inverse of the Hessian of the penalised objective
    (observed Fisher information plus ``l2``) restricted to the sum-zero subspace; the
    interval is ``elo ± z_{(1+c)/2} · stderr`` (normal approximation). Ratings are reported as
    ``elo = 400 / ln 10 · θ``, centred to mean 0, or, given ``anchor``, shifted so that player is
    0 (its interval is then ``[0, 0]`` and the others' intervals are for the gap to it).

    Raises:
        ValueError: empty ``wins``, a player paired with itself, a negative or non-finite
            count, an unknown ``anchor``, a confidence outside (0, 1), negative ``l2``, players
            split into groups that never met (relative ratings would be undefined), or
            ``l2 == 0`` when the MLE does not exist.
        RuntimeError: the optimiser failed to converge.
    """
    c = check_confidence(confidence)
    reg = float(l2)
    if not (math.isfinite(reg) and reg >= 0.0):
        raise ValueError(f"l2 must be a finite non-negative number, got {l2!r}")
    names, w = _win_matrix(wins)
    if anchor is not None and anchor not in names:
        raise ValueError(f"anchor {anchor!r} is not a player; players are {names}")
    mle_exists = _mle_exists(names, w, reg)
    theta, cov_theta = _bt_fit(w, reg)
    return _bt_ratings(names, theta, cov_theta, anchor, c, mle_exists)


def _mle_exists(names: list[str], w: NDArray[np.float64], reg: float) -> bool:
    """Whether the unregularised estimate exists (the "beat" graph is strongly connected); raises
    when the players split into groups that never met, or when ``reg`` is 0 and it does not."""
    m = len(names)
    games = w + w.T
    n_groups, labels = connected_components(csr_array(games > 0), directed=False)
    if n_groups > 1:
        groups = [[names[i] for i in range(m) if labels[i] == g] for g in range(n_groups)]
        raise ValueError(f"players fall into groups that never played each other: {groups}")
    n_strong, _ = connected_components(csr_array(w > 0), directed=True, connection="strong")
    mle_exists = n_strong == 1
    if reg == 0.0 and not mle_exists:
        raise ValueError(
            "the maximum-likelihood estimate does not exist (some player is undefeated or "
            "winless against its side); use l2 > 0"
        )
    return bool(mle_exists)


def _bt_fit(w: NDArray[np.float64], reg: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The penalised maximum-likelihood ``θ`` (sum zero) of win matrix ``w`` and its covariance."""
    m = w.shape[0]
    games = w + w.T
    # Orthonormal basis of {θ : Σθ = 0}: the columns of an SVD basis orthogonal to 1.
    basis = np.linalg.svd(np.ones((1, m)))[2][1:].T  # shape (m, m - 1)

    def objective(phi: NDArray[np.float64]) -> float:
        theta = basis @ phi
        diff = theta[:, None] - theta[None, :]
        return float(-np.sum(w * special.log_expit(diff)) + 0.5 * reg * theta @ theta)

    def gradient(phi: NDArray[np.float64]) -> NDArray[np.float64]:
        theta = basis @ phi
        # d/dθ_i of -w_ij log σ(θ_i - θ_j) is -w_ij σ(θ_j - θ_i), and the opposite for θ_j.
        g = w * special.expit(theta[None, :] - theta[:, None])
        grad = -g.sum(axis=1) + g.sum(axis=0) + reg * theta
        return np.asarray(basis.T @ grad, dtype=np.float64)

    def hessian_theta(theta: NDArray[np.float64]) -> NDArray[np.float64]:
        p = special.expit(theta[:, None] - theta[None, :])
        v = games * p * (1.0 - p)
        return np.diag(v.sum(axis=1)) - v + reg * np.eye(m)

    def hessian(phi: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(basis.T @ hessian_theta(basis @ phi) @ basis, dtype=np.float64)

    res = optimize.minimize(
        objective,
        np.zeros(m - 1),
        jac=gradient,
        hess=hessian,
        method="trust-exact",
        options={"gtol": 1e-8, "maxiter": 1000},
    )
    # Near the optimum, trust-exact can stop with "bad approximation" because the predicted
    # decrease is below the rounding noise of an objective of size ~ total games; a gradient
    # that small relative to the number of games is converged for every practical purpose.
    if not res.success and float(np.max(np.abs(res.jac))) > 1e-7 * max(1.0, float(w.sum())):
        raise RuntimeError(f"Bradley-Terry fit did not converge: {res.message}")
    theta = basis @ res.x
    cov_theta = basis @ np.linalg.inv(hessian(res.x)) @ basis.T
    return theta, cov_theta


def _bt_ratings(
    names: list[str],
    theta: NDArray[np.float64],
    cov_theta: NDArray[np.float64],
    anchor: str | None,
    c: float,
    mle_exists: bool,
) -> Ratings:
    """``θ`` and its covariance on the Elo scale, centred on ``anchor`` (or sum zero), with intervals."""
    m = len(names)
    # Centre on the anchor (θ - θ_a) or keep the sum-zero centring; map to Elo.
    shift = np.eye(m)
    if anchor is not None:
        shift = shift - np.outer(np.ones(m), np.eye(m)[names.index(anchor)])
    elo = ELO_PER_NAT * (shift @ theta)
    cov = ELO_PER_NAT**2 * (shift @ cov_theta @ shift.T)
    cov = 0.5 * (cov + cov.T)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    if anchor is not None:
        se[names.index(anchor)] = 0.0
    z = float(stats.norm.ppf(0.5 + c / 2.0))
    return Ratings(
        names=tuple(names),
        elo=tuple(float(e) for e in elo),
        low=tuple(float(e) for e in elo - z * se),
        high=tuple(float(e) for e in elo + z * se),
        stderr=tuple(float(s) for s in se),
        anchor=anchor,
        confidence=c,
        mle_exists=bool(mle_exists),
        covariance=cov,
    )
