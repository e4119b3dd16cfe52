"""Statistics of the evaluation harness: intervals, tests, points and Bradley-Terry ratings, known inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ginenv.experiments.eval.stats import (
    ELO_PER_NAT,
    MeanCI,
    bradley_terry,
    duplicate_points,
    elo_from_winrate,
    mean_ci,
    paired_significance,
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
