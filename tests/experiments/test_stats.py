"""Statistics of the evaluation harness: intervals, tests, points and Bradley-Terry ratings, known inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ginenv.experiments.stats import (
    ELO_PER_NAT,
    MeanCI,
    bradley_terry,
    duplicate_points,
    elo_from_winrate,
    mean_ci,
    paired_significance,
    points_ratings,
    proportion_ci,
    winrate_from_elo,
)
from hypothesis import given
from hypothesis import strategies as st

# Two-sided 95% normal quantile and t_{0.975, 4}, from tables.
Z95 = 1.959963984540054
T95_DF4 = 2.7764451051977987


# ----------------------------------------------------------------------------- mean_ci


def test_mean_ci_matches_hand_computed_t_interval() -> None:
    # [1..5]: mean 3, sample variance 2.5, stderr sqrt(2.5 / 5) = sqrt(0.5).
    r = mean_ci([1, 2, 3, 4, 5])
    se = math.sqrt(0.5)
    assert r.n == 5
    assert r.mean == pytest.approx(3.0)
    assert r.stderr == pytest.approx(se)
    assert r.low == pytest.approx(3.0 - T95_DF4 * se)  # 1.036757...
    assert r.high == pytest.approx(3.0 + T95_DF4 * se)  # 4.963243...
    assert r.half_width == pytest.approx(T95_DF4 * se)


def test_mean_ci_wider_at_higher_confidence() -> None:
    x = [0.5, 1.5, -2.0, 4.0, 3.0, 0.0]
    assert mean_ci(x, 0.99).half_width > mean_ci(x, 0.95).half_width > mean_ci(x, 0.5).half_width


def test_mean_ci_small_samples_do_not_raise() -> None:
    empty = mean_ci([])
    assert empty.n == 0
    assert all(math.isnan(v) for v in (empty.mean, empty.low, empty.high, empty.stderr))
    one = mean_ci([7.0])
    assert (one.n, one.mean, one.low, one.high) == (1, 7.0, -math.inf, math.inf)
    assert math.isnan(one.stderr)


def test_mean_ci_constant_sample_has_zero_width() -> None:
    r = mean_ci([2.0, 2.0, 2.0])
    assert (r.mean, r.low, r.high, r.stderr) == (2.0, 2.0, 2.0, 0.0)


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.1, 95])
def test_mean_ci_rejects_bad_confidence(confidence: float) -> None:
    with pytest.raises(ValueError, match="confidence"):
        mean_ci([1.0, 2.0], confidence)


def test_mean_ci_rejects_non_finite_and_non_1d() -> None:
    with pytest.raises(ValueError, match="finite"):
        mean_ci([1.0, math.nan])
    with pytest.raises(ValueError, match="one-dimensional"):
        mean_ci([[1.0, 2.0], [3.0, 4.0]])


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=30))
def test_mean_ci_contains_mean(xs: list[float]) -> None:
    r = mean_ci(xs)
    assert r.low <= r.mean <= r.high


# ----------------------------------------------------------------------- duplicate_points


def test_duplicate_points_hand_computed() -> None:
    # Three deals; A's net points in (game 1, game 2) of each: (40, -10), (-25, 15), (0, 10).
    games = [(40, -10), (-25, 15), (0, 10)]
    pair_sums = [g1 + g2 for g1, g2 in games]  # [30, -10, 10]
    # Per hand A takes sum/2 from B: 15, -5, 5.
    r = duplicate_points(pair_sums)
    assert r.mean == pytest.approx(5.0)
    assert r.n == 3  # deals, not hands
    # Sample sd of [15, -5, 5] is 10, so the stderr is 10 / sqrt(3).
    assert r.stderr == pytest.approx(10 / math.sqrt(3))
    assert r == mean_ci([15, -5, 5])


def test_duplicate_points_degenerate() -> None:
    assert duplicate_points([]).n == 0
    assert duplicate_points([12]).high == math.inf


# ------------------------------------------------------------------- paired_significance


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_symmetric_pair_sums_are_not_significant(test: str) -> None:
    x = np.array([-30, -12, -7, -3, -1, 1, 3, 7, 12, 30] * 3, dtype=float)
    s = paired_significance(x, test=test)  # type: ignore[arg-type]
    assert s.test == test
    assert s.n == 30
    assert s.p_value > 0.5
    assert not s.significant_at_95


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_shifted_pair_sums_are_significant(test: str) -> None:
    x = np.random.default_rng(7).normal(5.0, 10.0, size=400)
    s = paired_significance(x, test=test)  # type: ignore[arg-type]
    assert s.p_value < 1e-6
    assert s.significant_at_95


def test_t_statistic_matches_hand_computation() -> None:
    # mean 3, stderr sqrt(0.5): t = 3 / sqrt(0.5).
    s = paired_significance([1, 2, 3, 4, 5])
    assert s.statistic == pytest.approx(3 / math.sqrt(0.5))
    assert 0.0 < s.p_value < 0.05


def test_wilcoxon_zero_method_zsplit_counts_even_deals() -> None:
    # Mostly even deals and a few wins for A: zsplit keeps the zeros and stays unconvinced,
    # while discarding them ("wilcox") leaves seven all-positive deals.
    x = [0.0] * 40 + [1, 2, 3, 4, 5, 6, 7]
    assert not paired_significance(x, test="wilcoxon").significant_at_95
    assert paired_significance(x, test="wilcoxon", zero_method="wilcox").significant_at_95


@pytest.mark.parametrize(
    ("values", "test"),
    [([], "t"), ([3.0], "t"), ([], "wilcoxon"), ([3.0], "wilcoxon"), ([4.0, 4.0, 4.0], "t"), ([0, 0], "t")],
)
def test_undefined_significance_is_nan(values: list[float], test: str) -> None:
    s = paired_significance(values, test=test)  # type: ignore[arg-type]
    assert math.isnan(s.p_value) and math.isnan(s.statistic)
    assert not s.significant_at_95
    assert s.n == len(values)


def test_unknown_test_name_raises() -> None:
    with pytest.raises(ValueError, match="'t' or 'wilcoxon'"):
        paired_significance([1.0, 2.0], test="sign")  # type: ignore[arg-type]


# ------------------------------------------------------------------------ proportion_ci


def wilson_by_hand(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_proportion_ci_matches_wilson_formula_7_of_10() -> None:
    r = proportion_ci(7, 10)
    low, high = wilson_by_hand(7, 10, Z95)
    assert (r.rate, r.n, r.successes) == (0.7, 10, 7)
    assert r.low == pytest.approx(low, abs=1e-9)  # 0.39678
    assert r.high == pytest.approx(high, abs=1e-9)  # 0.89221
    assert r.low == pytest.approx(0.3968, abs=1e-4) and r.high == pytest.approx(0.8922, abs=1e-4)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (1, 3), (480, 1000)])
def test_proportion_ci_matches_wilson_formula(k: int, n: int) -> None:
    r = proportion_ci(k, n)
    low, high = wilson_by_hand(k, n, Z95)
    assert r.low == pytest.approx(low, abs=1e-9)
    assert r.high == pytest.approx(high, abs=1e-9)
    assert 0.0 <= r.low <= r.rate <= r.high <= 1.0


def test_proportion_ci_no_trials() -> None:
    r = proportion_ci(0, 0)
    assert math.isnan(r.rate)
    assert (r.low, r.high, r.n) == (0.0, 1.0, 0)


def test_proportion_ci_accepts_numpy_counts() -> None:
    assert proportion_ci(np.int64(3), np.int64(4)).rate == 0.75


@pytest.mark.parametrize(
    ("k", "n", "message"),
    [(11, 10, "cannot exceed"), (-1, 10, "non-negative"), (1, -1, "non-negative"), (1.5, 3, "integer")],
)
def test_proportion_ci_rejects_bad_counts(k: int, n: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        proportion_ci(k, n)


# ---------------------------------------------------------------------------- Elo helpers


def test_elo_from_winrate_known_values() -> None:
    assert elo_from_winrate(0.5) == pytest.approx(0.0)
    assert elo_from_winrate(10 / 11) == pytest.approx(400.0)  # 10:1 odds is 400 Elo
    assert elo_from_winrate(1 / 11) == pytest.approx(-400.0)
    assert elo_from_winrate(1.0) == math.inf and elo_from_winrate(0.0) == -math.inf
    assert winrate_from_elo(400.0) == pytest.approx(10 / 11)
    assert math.isclose(ELO_PER_NAT, 400 / math.log(10))  # 173.7178 Elo per nat


@pytest.mark.parametrize("p", [-0.1, 1.1, math.nan])
def test_elo_from_winrate_rejects_out_of_range(p: float) -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        elo_from_winrate(p)


@given(st.floats(0.001, 0.999))
def test_elo_winrate_round_trip(p: float) -> None:
    assert winrate_from_elo(elo_from_winrate(p)) == pytest.approx(p, rel=1e-9)


# ------------------------------------------------------------------------- bradley_terry


def round_robin(true_elo: dict[str, float], games: int, seed: int) -> dict[tuple[str, str], float]:
    rng = np.random.default_rng(seed)
    names = list(true_elo)
    wins: dict[tuple[str, str], float] = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            k = int(rng.binomial(games, winrate_from_elo(true_elo[a] - true_elo[b])))
            wins[(a, b)] = k
            wins[(b, a)] = games - k
    return wins


TRUE = {"weak": 0.0, "mid": 200.0, "strong": 400.0}


def test_two_players_match_closed_form() -> None:
    # 30-10: the MLE gap is log(30/10) nats = 400 log10(3) Elo, and its variance is
    # 1 / (n p (1 - p)) = 1 / (40 * 0.75 * 0.25) nats^2; each centred rating carries half.
    r = bradley_terry({("a", "b"): 30, ("b", "a"): 10}, l2=0.0)
    gap = 400 * math.log10(3)
    assert r.names == ("a", "b")
    assert r.elo == pytest.approx((gap / 2, -gap / 2), abs=1e-6)
    se = 0.5 * ELO_PER_NAT * math.sqrt(1 / 7.5)
    assert r.stderr == pytest.approx((se, se), rel=1e-6)
    assert r.high[0] == pytest.approx(gap / 2 + Z95 * se, rel=1e-6)
    assert r.win_probability("a", "b") == pytest.approx(0.75)
    d, low, high = r.difference_ci("a", "b")
    assert d == pytest.approx(gap)
    assert high - d == pytest.approx(d - low) == pytest.approx(2 * Z95 * se, rel=1e-6)
    # The default tiny ridge hardly moves it.
    assert bradley_terry({("a", "b"): 30, ("b", "a"): 10}).elo[0] == pytest.approx(gap / 2, abs=0.01)


def test_round_robin_recovers_known_strengths() -> None:
    r = bradley_terry(round_robin(TRUE, games=2000, seed=2024))
    assert r.mle_exists
    assert r.rating("weak") < r.rating("mid") < r.rating("strong")
    assert sum(r.elo) == pytest.approx(0.0, abs=1e-6)
    centred = {k: v - 200.0 for k, v in TRUE.items()}
    for name in r.names:
        i = r.index(name)
        assert r.low[i] <= centred[name] <= r.high[i], (name, r)
        assert r.high[i] - r.low[i] < 60  # 2000 games a pair pins each rating to ~±25 Elo


def test_round_robin_anchor() -> None:
    r = bradley_terry(round_robin(TRUE, games=2000, seed=2024), anchor="weak")
    assert r.anchor == "weak"
    assert r.rating("weak") == 0.0
    i = r.index("weak")
    assert (r.low[i], r.high[i], r.stderr[i]) == (0.0, 0.0, 0.0)
    for name in ("mid", "strong"):
        j = r.index(name)
        assert r.low[j] <= TRUE[name] <= r.high[j]
    # Anchoring only shifts the ratings.
    centred = bradley_terry(round_robin(TRUE, games=2000, seed=2024))
    assert r.rating("strong") - r.rating("mid") == pytest.approx(
        centred.rating("strong") - centred.rating("mid"), abs=1e-6
    )


def test_interval_coverage_is_about_nominal() -> None:
    centred = np.array([-200.0, 0.0, 200.0])
    reps = 200
    covered = np.zeros(3)
    for seed in range(reps):
        r = bradley_terry(round_robin(TRUE, games=300, seed=seed))
        covered += (np.array(r.low) <= centred) & (centred <= np.array(r.high))
    assert np.all((covered / reps > 0.9) & (covered / reps < 0.99)), covered / reps


def test_undefeated_player_stays_finite() -> None:
    wins = {("champ", "a"): 10, ("a", "champ"): 0, ("champ", "b"): 8, ("a", "b"): 5, ("b", "a"): 5}
    r = bradley_terry(wins)
    assert not r.mle_exists
    assert all(math.isfinite(v) for v in (*r.elo, *r.low, *r.high))
    assert r.rating("champ") > r.rating("a") + 400
    assert r.win_probability("champ", "a") > 0.9
    with pytest.raises(ValueError, match="l2 > 0"):
        bradley_terry(wins, l2=0.0)


def test_win_probabilities_are_complementary() -> None:
    r = bradley_terry(round_robin(TRUE, games=50, seed=1))
    for a in r.names:
        assert r.win_probability(a, a) == 0.5
        for b in r.names:
            assert r.win_probability(a, b) + r.win_probability(b, a) == pytest.approx(1.0, abs=1e-15)
    assert r.win_probability("strong", "weak") > 0.5


def test_ties_as_half_wins() -> None:
    wins = {("a", "b"): 6.5, ("b", "a"): 6.5, ("b", "c"): 3, ("c", "b"): 1}
    exact = bradley_terry(wins, l2=0.0)
    assert exact.rating("a") == pytest.approx(exact.rating("b"), abs=1e-6)
    assert exact.rating("b") - exact.rating("c") == pytest.approx(elo_from_winrate(0.75), abs=1e-6)
    # The default ridge shrinks towards the mean by a negligible amount (~0.002 Elo here).
    r = bradley_terry(wins)
    assert r.rating("a") == pytest.approx(r.rating("b"), abs=0.01)


@pytest.mark.parametrize(
    ("wins", "message"),
    [
        ({}, "at least two players"),
        ({("a", "a"): 3}, "paired with itself"),
        ({("a", "b"): -1}, "non-negative"),
        ({("a", "b"): math.nan}, "non-negative"),
        ({("a", "b"): 0, ("b", "a"): 0}, "never played"),
        ({("a", "b"): 1, ("b", "a"): 1, ("c", "d"): 2, ("d", "c"): 1}, "never played"),
        ({("a", "b", "c"): 1}, "pairs"),
    ],
)
def test_bradley_terry_rejects_degenerate_input(wins: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bradley_terry(wins)


def test_bradley_terry_rejects_bad_options() -> None:
    wins = {("a", "b"): 3, ("b", "a"): 2}
    with pytest.raises(ValueError, match="anchor"):
        bradley_terry(wins, anchor="zed")
    with pytest.raises(ValueError, match="l2"):
        bradley_terry(wins, l2=-1.0)
    with pytest.raises(ValueError, match="confidence"):
        bradley_terry(wins, confidence=1.5)
    with pytest.raises(KeyError, match="unknown player"):
        bradley_terry(wins).win_probability("a", "zed")


def test_meanci_is_a_plain_value() -> None:
    assert MeanCI(1.0, 0.0, 2.0, 3, 0.5).confidence == 0.95


# ----------------------------------------------------------------------------- points ratings

LEVELS = {"strong": 6.0, "mid": 2.0, "weak": -1.0, "floor": -7.0}


def simulate_values(
    true: dict[str, float],
    deals: int,
    seed: int,
    noise: float = 12.0,
    deal_effect: float = 0.0,
    pairs: list[tuple[str, str]] | None = None,
) -> dict[tuple[str, str], dict[int, float]]:
    """Per-deal values of a round robin (or of ``pairs``): ``r_a - r_b + g_ka - g_kb + e``.

    ``g_ka`` is agent a's effect on deal k, shared by all of a's pairings on that deal: it makes
    one deal's values correlated across pairings, as common cards do in the harness.
    """
    rng = np.random.default_rng(seed)
    names = list(true)
    pairs = pairs or [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    g = {n: rng.normal(0.0, deal_effect, deals) for n in names}
    out = {}
    for a, b in pairs:
        v = true[a] - true[b] + g[a] - g[b] + rng.normal(0.0, noise, deals)
        out[(a, b)] = {k: float(v[k]) for k in range(deals)}
    return out


def independent_deals(values: dict[tuple[str, str], dict[int, float]]) -> dict[tuple[str, str], dict]:
    """The same values with every pairing's deals relabelled as distinct deals: the naive variance."""
    return {key: {(key, k): v for k, v in per.items()} for key, per in values.items()}


def centred(true: dict[str, float]) -> np.ndarray:
    x = np.array(list(true.values()))
    return x - x.mean()


def test_points_ratings_two_agents_match_hand_computation() -> None:
    y = [3.0, -1.0, 8.0, 0.5, 4.5]
    r = points_ratings({("a", "b"): dict(enumerate(y))})
    mean, sd, n = float(np.mean(y)), float(np.std(y, ddof=1)), len(y)
    assert r.names == ("a", "b") and r.anchor == ("a", "b") and r.df == n - 1
    assert r.rating == pytest.approx((mean / 2, -mean / 2))
    gap, low, high = r.difference_ci("a", "b")
    assert gap == pytest.approx(mean)
    assert high - gap == pytest.approx(T95_DF4 * sd / math.sqrt(n))
    assert gap - low == pytest.approx(high - gap)
    # Each agent carries half the gap, and the two are perfectly anti-correlated.
    assert r.stderr == pytest.approx((sd / math.sqrt(n) / 2,) * 2)
    assert r.covariance[0, 1] == pytest.approx(-r.covariance[0, 0])
    # The same numbers as the per-pair interval of duplicate_points (which halves pair sums).
    dp = duplicate_points([2 * v for v in y])
    assert (gap, low, high) == pytest.approx((dp.mean, dp.low, dp.high))


def test_points_ratings_recover_known_strengths() -> None:
    r = points_ratings(simulate_values(LEVELS, deals=400, seed=7, deal_effect=5.0))
    assert r.names == tuple(LEVELS)
    assert sum(r.rating) == pytest.approx(0.0, abs=1e-9)
    truth = centred(LEVELS)
    assert np.array(r.rating) == pytest.approx(truth, abs=1.5)
    assert np.all((np.array(r.low) <= truth) & (truth <= np.array(r.high))), (r, truth)
    assert [row["agent"] for row in r.ranked()] == ["strong", "mid", "weak", "floor"]


def test_points_ratings_weighted_least_squares_over_deals() -> None:
    # Unbalanced and inconsistent means: the fit must be least squares over every deal value.
    values = {
        ("a", "b"): {k: 2.0 + (-1) ** k for k in range(100)},
        ("b", "c"): {k: 2.0 + 0.5 * (-1) ** k for k in range(100)},
        ("a", "c"): {k: 10.0 + (-1) ** k for k in range(10)},
    }
    x, y = [], []
    for (a, b), per in values.items():
        row = [float(n == a) - float(n == b) for n in "abc"]
        x += [row] * len(per)
        y += list(per.values())
    x.append([1.0, 1.0, 1.0])  # the anchor constraint, mean 0, as an exact extra equation
    y.append(0.0)
    w = np.ones(len(y))
    w[-1] = 1e6
    ref = np.linalg.lstsq(np.array(x) * w[:, None] ** 0.5, np.array(y) * w**0.5, rcond=None)[0]
    r = points_ratings(values)
    assert r.rating == pytest.approx(ref, abs=1e-6)
    # By hand: minimise 100 (x - 2)² + 100 (y - 2)² + 10 (x + y - 10)² over the gaps x = a - b,
    # y = b - c: x = y = 2.5, so ten deals at +10 pull a - c from 4 to 5, not to 10 or to 7.
    assert r.rating_of("a") - r.rating_of("c") == pytest.approx(5.0)
    assert r.rating_of("a") - r.rating_of("b") == pytest.approx(2.5)


def test_points_ratings_cluster_variance_exceeds_naive_under_shared_deals() -> None:
    values = simulate_values(LEVELS, deals=300, seed=11, noise=6.0, deal_effect=8.0)
    clustered = points_ratings(values)
    naive = points_ratings(independent_deals(values))
    assert clustered.rating == pytest.approx(naive.rating)
    # Agent effects shared across an agent's pairings do not average out over its opponents:
    # theory for 4 agents gives var ratio (0.75 g² + 0.1875 e²) / (0.375 g² + 0.1875 e²) ≈ 1.7.
    ratio = np.array(clustered.stderr) ** 2 / np.array(naive.stderr) ** 2
    assert np.all(ratio > 1.3), ratio
    # Without a shared deal effect the two agree (values independent across pairings).
    plain = simulate_values(LEVELS, deals=300, seed=11, noise=6.0)
    naive_se = np.array(points_ratings(independent_deals(plain)).stderr)
    ratio0 = np.array(points_ratings(plain).stderr) / naive_se
    assert ratio0 == pytest.approx(np.ones(4), abs=0.15)


def test_points_ratings_interval_coverage_is_about_nominal() -> None:
    truth = centred(LEVELS)
    reps, covered, covered_naive, gap_covered = 300, np.zeros(4), np.zeros(4), 0
    for seed in range(reps):
        values = simulate_values(LEVELS, deals=40, seed=seed, noise=6.0, deal_effect=8.0)
        r = points_ratings(values)
        covered += (np.array(r.low) <= truth) & (truth <= np.array(r.high))
        _, low, high = r.difference_ci("mid", "weak")
        gap_covered += low <= 3.0 <= high
        n = points_ratings(independent_deals(values))
        covered_naive += (np.array(n.low) <= truth) & (truth <= np.array(n.high))
    rate = covered.sum() / (4 * reps)
    assert 0.925 < rate < 0.97, covered / reps
    assert 0.92 < gap_covered / reps < 0.98
    # Ignoring that deals are shared across pairings undercovers clearly.
    assert covered_naive.sum() / (4 * reps) < 0.9


def test_points_ratings_anchor() -> None:
    values = simulate_values(LEVELS, deals=100, seed=3)
    default = points_ratings(values)
    pinned = points_ratings(values, anchor="floor")
    assert pinned.anchor == ("floor",)
    i = pinned.index("floor")
    assert pinned.rating[i] == pytest.approx(0.0, abs=1e-12)
    assert (pinned.low[i], pinned.high[i], pinned.stderr[i]) == (0.0, 0.0, 0.0)
    # Anchoring shifts every rating by one constant and leaves differences and their intervals.
    shift = np.array(pinned.rating) - np.array(default.rating)
    assert shift == pytest.approx(np.full(4, shift[0]))
    assert shift[0] == pytest.approx(-default.rating_of("floor"))
    assert pinned.difference_ci("strong", "mid") == pytest.approx(default.difference_ci("strong", "mid"))
    pair = points_ratings(values, anchor=["mid", "weak"])
    assert pair.rating_of("mid") + pair.rating_of("weak") == pytest.approx(0.0, abs=1e-9)
    assert pair.rating_of("strong") > 0 > pair.rating_of("floor")


def test_points_ratings_gaps_and_separated_flags() -> None:
    # top is far above; mid and low are indistinguishable (same values against top).
    rng = np.random.default_rng(5)
    values = {
        ("top", "mid"): {k: 10.0 + rng.normal(0, 5) for k in range(60)},
        ("top", "low"): {k: 10.0 + rng.normal(0, 5) for k in range(60)},
        ("mid", "low"): {k: rng.normal(0, 5) for k in range(60)},
    }
    r = points_ratings(values, agents=["low", "mid", "top"])
    assert r.names == ("low", "mid", "top")
    rows = r.ranked()
    assert rows[0]["agent"] == "top"
    assert [row["rating"] for row in rows] == sorted(r.rating, reverse=True)
    first = rows[0]
    gap, low, high = r.difference_ci("top", rows[1]["agent"])
    assert (first["gap"], first["gap_low"], first["gap_high"]) == pytest.approx((gap, low, high))
    assert first["gap"] == pytest.approx(rows[0]["rating"] - rows[1]["rating"])
    assert first["separated"] is True and low > 0
    assert rows[1]["separated"] is False and rows[1]["gap_low"] <= 0
    assert {k: rows[2][k] for k in ("gap", "gap_low", "gap_high", "separated")} == dict.fromkeys(
        ("gap", "gap_low", "gap_high", "separated")
    )
    # The gap interval is much narrower than the overlap of the two rating intervals suggests.
    assert first["gap_high"] - first["gap_low"] < (first["high"] - first["low"]) + (
        rows[1]["high"] - rows[1]["low"]
    )


def test_points_ratings_small_samples_do_not_crash() -> None:
    one = points_ratings({("a", "b"): {0: 4.0}, ("b", "c"): {0: 2.0}})
    assert one.df == 0
    assert one.rating_of("a") - one.rating_of("c") == pytest.approx(6.0)
    assert all(math.isnan(v) for v in (*one.low, *one.high, *one.stderr))
    assert all(math.isnan(v) for v in one.difference_ci("a", "b")[1:])
    assert [row["separated"] for row in one.ranked()] == [False, False, None]
    # A pairing with a single deal still enters the fit; the spread comes from the other deals.
    values = simulate_values({"a": 1.0, "b": 0.0}, deals=30, seed=1)
    values[("b", "c")] = {0: 5.0}
    r = points_ratings(values)
    assert r.df == 29
    assert r.rating_of("b") - r.rating_of("c") == pytest.approx(5.0)
    assert all(math.isfinite(v) for v in (*r.low, *r.high))


@pytest.mark.parametrize(
    ("values", "kwargs", "message"),
    [
        ({}, {}, "values is empty"),
        ({("a", "a"): {0: 1.0}}, {}, "paired with itself"),
        ({("a", "b"): {0: math.nan}}, {}, "finite"),
        ({("a", "b"): {0: math.inf}}, {}, "finite"),
        ({("a", "b"): {}}, {}, "no deals"),
        ({("a", "b", "c"): {0: 1.0}}, {}, "pairs"),
        ({("a", "b"): [1.0, 2.0]}, {}, "map deal"),
        ({("a", "b"): {0: 1.0}, ("c", "d"): {0: 1.0}}, {}, "never played"),
        ({("a", "b"): {0: 1.0}}, {"agents": ["a", "b", "c"]}, "never played"),
        ({("a", "b"): {0: 1.0}}, {"agents": ["a"]}, "not in agents"),
        ({("a", "b"): {0: 1.0}}, {"agents": ["a", "b", "a"]}, "twice"),
        ({("a", "b"): {0: 1.0}}, {"anchor": "zed"}, "anchor 'zed' is not an agent"),
        ({("a", "b"): {0: 1.0}}, {"anchor": []}, "at least one agent"),
        ({("a", "b"): {0: 1.0}}, {"confidence": 1.0}, "confidence"),
    ],
)
def test_points_ratings_rejects_degenerate_input(values: dict, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        points_ratings(values, **kwargs)


def test_points_ratings_unknown_name_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="unknown agent"):
        points_ratings({("a", "b"): {0: 1.0, 1: 2.0}}).difference_ci("a", "zed")


def test_points_ratings_with_a_core_holds_the_core_on_its_own_games() -> None:
    # Core a, b, c from their games; x (and y, linked only through x) placed with the core fixed.
    values = {
        ("a", "b"): {0: 2.0, 1: 4.0},
        ("b", "c"): {0: 1.0, 1: 3.0},
        ("a", "c"): {0: 6.0, 1: 4.0},
        ("a", "x"): {0: 50.0, 1: 52.0},
        ("c", "x"): {0: 60.0, 1: 62.0},
        ("x", "y"): {0: 1.0, 1: 1.0},
    }
    r = points_ratings(values, agents=["a", "b", "c", "x", "y"], core=["a", "b", "c"])
    alone = points_ratings({k: v for k, v in values.items() if "x" not in k and "y" not in k})
    for name in "abc":
        assert r.rating_of(name) == pytest.approx(alone.rating_of(name))
    assert sum(r.rating_of(n) for n in "abc") == pytest.approx(0.0)  # the anchor defaults to the core
    # x: least squares of its two pairings with a and c fixed.
    expected_x = np.mean([r.rating_of("a") - 51.0, r.rating_of("c") - 61.0])
    assert r.rating_of("x") == pytest.approx(expected_x)
    assert r.rating_of("y") == pytest.approx(expected_x - 1.0)
    with pytest.raises(ValueError, match="not linked by pairings among themselves"):
        points_ratings(values, core=["b", "x"])
    with pytest.raises(ValueError, match="core agent 'z' is not an agent"):
        points_ratings(values, core=["a", "z"])
