"""Ratings on the points scale (ginenv.experiments.eval.ratings): recovered strengths, cluster-robust
intervals with deals as units, gaps and separation, the core fit, and refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ginenv.experiments.eval.ratings import points_ratings
from ginenv.experiments.eval.stats import duplicate_points

# t_{0.975} with 4 degrees of freedom (scipy.stats.t.ppf(0.975, 4)).
T95_DF4 = 2.7764451051977987

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
