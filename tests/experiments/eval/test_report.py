"""The evaluation report on hand-built records: points ratings, gaps, luck adjustment, files and plots."""

from __future__ import annotations

import csv
import json
import math
from itertools import combinations, pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ginenv.experiments.eval.rate import format_rate
from ginenv.experiments.eval.ratings import points_ratings
from ginenv.experiments.eval.report import (
    deal_values,
    format_table,
    head_to_head_figure,
    ratings_figure,
    split_outliers,
    summarise,
    write_outputs,
)
from ginenv.experiments.eval.stats import bradley_terry, duplicate_points

# Points per hand of each agent against an average opponent; "rand" plays like random.
STRENGTH = {"top": 6.0, "mid": 2.0, "low": 1.5, "bottom": -5.0}
WITH_RANDOM = {**STRENGTH, "rand": -60.0}


def game(a_seat: int, a_points: float, hands: int = 1) -> dict[str, Any]:
    """One game in the harness's shape (see harness.summarise_game)."""
    return {
        "a_seat": a_seat,
        "a_points": a_points,
        "a_hands_won": int(a_points > 0),
        "b_hands_won": int(a_points < 0),
        "hands": hands,
        "kinds": {"knock": hands},
        "truncated": False,
        "decisions": 20,
        "a_decisions": 10,
        "b_decisions": 10,
        "a_think_s": 0.01,
        "b_think_s": 0.02,
        "match_winner": "a" if a_points > 0 else "b",
    }


def record(a: str, b: str, deal: int, pair_sum: float, pair_luck: float | None = None) -> dict[str, Any]:
    first = math.floor(pair_sum / 2)
    out: dict[str, Any] = {
        "a": a,
        "b": b,
        "deal": deal,
        "games": [game(0, first), game(1, pair_sum - first)],
        "pair_sum": pair_sum,
        "truncated": 0,
    }
    if pair_luck is not None:
        out["pair_luck"] = pair_luck
    return out


def round_robin(
    strength: dict[str, float],
    deals: int = 50,
    sd: float = 8.0,
    seed: int = 0,
    luck: bool = False,
    exact: bool = True,
) -> list[dict[str, Any]]:
    """Records whose per-deal value ``pair_sum / 2`` is ``s_a - s_b`` plus noise.

    ``exact``: the noise of every pairing is centred, so each pairing's mean value is exactly
    ``s_a - s_b`` and the fitted ratings are exactly the centred strengths. With ``luck`` each
    record also carries a ``pair_luck`` explaining most of the noise: the adjusted value
    ``(pair_sum - pair_luck) / 2`` has a third of the spread.
    """
    rng = np.random.default_rng(seed)
    out = []
    for a, b in combinations(strength, 2):
        luck_part, rest = rng.normal(0, sd, deals), rng.normal(0, sd / 3, deals)
        if exact:
            luck_part, rest = luck_part - luck_part.mean(), rest - rest.mean()
        for k in range(deals):
            pair_sum = 2 * (strength[a] - strength[b] + luck_part[k] + rest[k])
            out.append(record(a, b, k, float(pair_sum), float(2 * luck_part[k]) if luck else None))
    return out


def centred(strength: dict[str, float]) -> dict[str, float]:
    mean = float(np.mean(list(strength.values())))
    return {k: v - mean for k, v in strength.items()}


def test_ratings_are_points_against_the_field_with_gaps() -> None:
    summary = summarise(round_robin(STRENGTH), list(STRENGTH))
    rows = summary["ratings"]
    assert [r["agent"] for r in rows] == ["top", "mid", "low", "bottom"]
    assert set(rows[0]) == {"agent", "rating", "low", "high", "gap", "gap_low", "gap_high", "separated"}
    assert sum(r["rating"] for r in rows) == pytest.approx(0.0, abs=1e-9)
    truth = centred(STRENGTH)
    for r in rows:
        assert r["rating"] == pytest.approx(truth[r["agent"]])  # each pairing's mean is exact
        assert r["low"] < r["rating"] < r["high"], r
    for upper, lower in pairwise(rows):
        assert upper["gap"] == pytest.approx(upper["rating"] - lower["rating"])
        assert upper["gap_low"] < upper["gap"] < upper["gap_high"]
        assert upper["separated"] is (upper["gap_low"] > 0)
    # top - mid = 4 and low - bottom = 6.5 are clear over 50 deals; mid - low = 0.5 is not.
    assert [r["separated"] for r in rows] == [True, False, True, None]
    assert rows[-1]["gap"] is rows[-1]["gap_low"] is rows[-1]["gap_high"] is None
    assert "points per hand against the field's average" in summary["rating_scale"]
    assert summary["luck_adjusted"] is False
    # The Bradley-Terry view is still there, with its own keys and anchor.
    bt = summary["bt_ratings"]
    assert {r["agent"] for r in bt} == set(STRENGTH)
    assert {"elo", "low", "high", "deals_won", "deals_lost"} <= set(bt[0])
    assert summary["anchor"] in STRENGTH


def test_ratings_agree_with_points_ratings_on_the_deal_values() -> None:
    records = round_robin(STRENGTH, deals=30, seed=4)
    values: dict[tuple[str, str], dict[int, float]] = {}
    for r in records:
        values.setdefault((r["a"], r["b"]), {})[r["deal"]] = r["pair_sum"] / 2
    expected = points_ratings(values).ranked()
    got = summarise(records, list(STRENGTH))["ratings"]
    assert [r["agent"] for r in got] == [r["agent"] for r in expected]
    assert [r["separated"] for r in got] == [r["separated"] for r in expected]
    for mine, theirs in zip(got, expected, strict=True):
        for key in ("rating", "low", "high", "gap", "gap_low", "gap_high"):
            assert mine[key] == (None if theirs[key] is None else pytest.approx(theirs[key])), key


def test_pair_luck_drives_the_headline_and_raw_stays_raw() -> None:
    records = round_robin({"a": 3.0, "b": 0.0}, deals=60, luck=True, seed=9, exact=False)
    summary = summarise(records, ["a", "b"])
    pair = summary["pairs"][0]
    adjusted = duplicate_points([r["pair_sum"] - r["pair_luck"] for r in records])
    raw = duplicate_points([r["pair_sum"] for r in records])
    assert pair["points_per_hand"] == pytest.approx(
        {"mean": adjusted.mean, "low": adjusted.low, "high": adjusted.high}
    )
    assert pair["points_per_hand_raw"] == pytest.approx({"mean": raw.mean, "low": raw.low, "high": raw.high})
    assert pair["luck_adjusted_deals"] == 60 and summary["luck_adjusted"] is True
    assert adjusted.mean != pytest.approx(raw.mean)
    # The control variate removed most of the noise: the adjusted interval is much narrower.
    assert adjusted.high - adjusted.low < 0.6 * (raw.high - raw.low)
    # The rating gap of two agents is the adjusted per-pair figure.
    top = summary["ratings"][0]
    assert (top["agent"], top["gap"], top["gap_low"], top["gap_high"]) == pytest.approx(
        ("a", adjusted.mean, adjusted.low, adjusted.high)
    )
    assert "luck-adjusted" in summary["rating_scale"]
    assert "luck-adjusted" in format_table(summary)


def test_without_pair_luck_raw_equals_headline() -> None:
    pair = summarise(round_robin({"a": 3.0, "b": 0.0}, deals=10), ["a", "b"])["pairs"][0]
    assert pair["points_per_hand_raw"] == pair["points_per_hand"]
    assert pair["luck_adjusted_deals"] == 0


def test_format_table_leads_with_the_points_ratings() -> None:
    summary = summarise(round_robin(STRENGTH), list(STRENGTH))
    table = format_table(summary)
    lines = table.splitlines()
    assert lines[0].startswith("Ratings: points per hand against the field's average")
    assert lines[1].split() == [
        "rank",
        "agent",
        "rating",
        "95%",
        "CI",
        "gap",
        "to",
        "next",
        "95%",
        "CI",
        "separated",
    ]
    assert lines[2].split()[:3] == ["1", "top", f"{summary['ratings'][0]['rating']:+.2f}"]
    assert lines[2].split()[-1] == "yes" and lines[3].split()[-1] == "no"
    assert lines[5].split()[:2] == ["4", "bottom"] and lines[5].endswith("]")  # no gap below the last
    assert lines[6] == "Adjacent gaps separated (95% CI of the gap above 0): 2 of 3; not separated: mid > low"
    h2h, truncated = table.index("Head to head"), table.index("Truncated games")
    bt = table.index("Second view: Bradley-Terry")
    assert lines.index("Head to head (A's view; each deal played twice, seats swapped)") == 8
    assert 0 < h2h < truncated < bt
    assert "counted as 0 points): 0 of 600" in table


def test_match_unit_labels_points_per_match() -> None:
    summary = summarise(round_robin(STRENGTH, deals=10), list(STRENGTH), unit="match")
    assert summary["rating_scale"].startswith("points per match")
    assert "points_per_match_raw" in summary["pairs"][0]
    assert format_table(summary).startswith("Ratings: points per match against the field's average")


def test_written_files(tmp_path: Path) -> None:
    summary = summarise(round_robin(STRENGTH, luck=True), list(STRENGTH))
    written = write_outputs(summary, tmp_path, tensorboard=False)
    names = [p.name for p in written]
    assert names == [
        "summary.json",
        "pairs.csv",
        "ratings.csv",
        "ratings_bt.csv",
        "ratings.png",
        "head_to_head.png",
    ]
    for p in written:
        assert p.stat().st_size > 0, p

    with (tmp_path / "ratings.csv").open() as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["agent", "rating", "low", "high", "gap", "gap_low", "gap_high"]
    assert [r[0] for r in rows[1:]] == ["top", "mid", "low", "bottom"]
    assert all(cell != "" for r in rows[1:-1] for cell in r)
    assert rows[-1][4:] == ["", "", ""] and float(rows[-1][1]) == pytest.approx(
        summary["ratings"][-1]["rating"]
    )

    with (tmp_path / "ratings_bt.csv").open() as fh:
        bt = list(csv.DictReader(fh))
    assert list(bt[0]) == ["agent", "elo", "low", "high"]
    assert [r["agent"] for r in bt] == [r["agent"] for r in summary["bt_ratings"]]

    with (tmp_path / "pairs.csv").open() as fh:
        pairs = list(csv.DictReader(fh))
    header = list(pairs[0])
    assert header[-3:] == ["points_per_hand_raw", "raw_low", "raw_high"]
    assert header[4:7] == ["points_per_hand", "low", "high"]
    first = summary["pairs"][0]
    assert float(pairs[0]["points_per_hand_raw"]) == pytest.approx(first["points_per_hand_raw"]["mean"])
    assert float(pairs[0]["points_per_hand"]) == pytest.approx(first["points_per_hand"]["mean"])

    def refuse(name: str) -> None:
        raise AssertionError(f"non-standard JSON constant {name}")

    data = json.loads((tmp_path / "summary.json").read_text(), parse_constant=refuse)
    assert data["ratings"][-1]["gap"] is None and data["ratings"][0]["separated"] is True
    assert data["bt_ratings"] and data["rating_scale"] == summary["rating_scale"]


def test_a_random_like_agent_far_below() -> None:
    summary = summarise(round_robin(WITH_RANDOM, deals=40, sd=15.0, seed=2), list(WITH_RANDOM))
    rows = summary["ratings"]
    assert [r["agent"] for r in rows] == ["top", "mid", "low", "bottom", "rand"]
    assert rows[-2]["separated"] is True and rows[-2]["gap"] == pytest.approx(55.0)
    # It is an outlier group of its own: the plots break the axis and rescale the colours there.
    assert split_outliers(rows) == 3
    assert split_outliers(summarise(round_robin(STRENGTH), list(STRENGTH))["ratings"]) is None
    fig = head_to_head_figure(summary)
    image = fig.axes[0].images[0]
    within = max(
        abs(p["points_per_hand"]["mean"]) for p in summary["pairs"] if "rand" not in (p["a"], p["b"])
    )
    assert image.norm.vmax == pytest.approx(within) and image.norm.vmin == pytest.approx(-within)
    assert within < 15  # the levels' differences, not random's 60
    # Every played cell keeps its number, clipped or not, in rating order.
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert all(f"{p['points_per_hand']['mean']:+.1f}" in texts for p in summary["pairs"])
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [r["agent"] for r in rows]
    # Ratings: one panel for rand, one for the rest, one for the gaps.
    assert len(ratings_figure(summary).axes) == 3


def test_two_agents_and_tiny_runs(tmp_path: Path) -> None:
    summary = summarise(round_robin({"a": 30.0, "b": -30.0}, deals=5), ["a", "b"])
    assert [r["agent"] for r in summary["ratings"]] == ["a", "b"]
    assert split_outliers(summary["ratings"]) is None
    assert len(ratings_figure(summary).axes) == 2
    written = write_outputs(summary, tmp_path / "two", tensorboard=False)
    assert all(p.stat().st_size > 0 for p in written)
    # One deal: the ratings exist, their intervals are undefined, nothing crashes.
    one = summarise(round_robin(STRENGTH, deals=1), list(STRENGTH))
    assert all(math.isnan(r["low"]) for r in one["ratings"])
    assert all(r["separated"] is False for r in one["ratings"][:-1])
    assert "[    n/a,     n/a]" in format_table(one)
    write_outputs(one, tmp_path / "one", tensorboard=False)
    assert json.loads((tmp_path / "one" / "summary.json").read_text())["ratings"][0]["low"] is None
    # No records at all: empty ratings and a table that still prints.
    empty = summarise([], ["a", "b"])
    assert empty["ratings"] == empty["bt_ratings"] == [] and empty["anchor"] is None
    assert "Truncated games" in format_table(empty)


def test_a_deal_recorded_twice_is_refused() -> None:
    records = [record("a", "b", 0, 4.0), record("a", "b", 0, 2.0)]
    with pytest.raises(ValueError, match="deal 0 of pairing"):
        summarise(records, ["a", "b"])


def test_tensorboard_scalars(tmp_path: Path) -> None:
    from ginenv.experiments.eval.report import log_tensorboard
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    summary = summarise(round_robin(STRENGTH, deals=10), list(STRENGTH))
    events = EventAccumulator(str(log_tensorboard(summary, tmp_path / "tb")))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {f"eval/rating/{n}" for n in STRENGTH} | {f"eval/elo/{n}" for n in STRENGTH} <= tags
    assert "eval/points_per_hand/top_vs_mid" in tags and "eval/hand_win_rate/top_vs_mid" in tags
    top = summary["ratings"][0]
    assert events.Scalars(f"eval/rating/{top['agent']}")[0].value == pytest.approx(top["rating"], rel=1e-6)


def test_an_agent_off_the_scale_does_not_blur_the_core() -> None:
    # The default ladder's case: "rand" loses to every level by 50 to 66 points, by MORE to the
    # weaker "low" than to "mid" (margins that do not add up). Fitted with everyone, that would pull
    # low up to mid; the core (the levels) is fitted from its own games, rand placed on its scale.
    core = {"top": 6.0, "mid": 2.0, "low": -2.0}
    records = [r for r in round_robin(core, deals=60, sd=6.0, seed=4)]
    rng = np.random.default_rng(5)
    margins = {"top": 60.0, "mid": 50.0, "low": 62.0}
    for level, margin in margins.items():
        noise = rng.normal(0, 10, 60)
        noise -= noise.mean()
        records += [record(level, "rand", k, 2 * (margin + noise[k])) for k in range(60)]
    everyone = ["rand", "low", "mid", "top"]
    summary = summarise(records, everyone)
    assert summary["rating_core"] == ["low", "mid", "top"]
    assert "rand, far off that scale" in summary["rating_scale"]
    rows = {r["agent"]: r for r in summary["ratings"]}
    # The core's ratings are its own games' exactly (centred), and its gaps stay separated.
    for name, strength in centred(core).items():
        assert rows[name]["rating"] == pytest.approx(strength)
    assert rows["mid"]["separated"] and rows["low"]["separated"]
    # Fitted with everyone, low would sit level with mid: the blur the core avoids.
    blurred = points_ratings(deal_values(records), agents=everyone)
    assert abs(blurred.rating_of("mid") - blurred.rating_of("low")) < 1.0
    # rand is placed from its games: minus the mean of (margin - strength) over the core.
    expected = -np.mean([margins[n] - centred(core)[n] for n in core])
    assert rows["rand"]["rating"] == pytest.approx(expected)
    assert summary["ratings"][-1]["agent"] == "rand"


def test_a_gauntlet_of_a_far_weaker_agent_has_no_core_to_split_off() -> None:
    # Notebook 04's case: a short-trained network plays a gauntlet and loses to everyone by far.
    # The others never meet, so their games cannot fit a core: one fit over every pairing.
    records = [
        record("net", other, k, -2 * margin + k)
        for other, margin in (("a", 50.0), ("b", 55.0), ("c", 60.0))
        for k in range(5)
    ]
    summary = summarise(records, ["net", "a", "b", "c"])
    assert summary["rating_core"] is None
    assert [r["agent"] for r in summary["ratings"]] == ["c", "b", "a", "net"]


# Tables: long agent names (a checkpoint's path, an exec: command) stay whole, the figures aligned.

LONG = "checkpoint:runs/league__7/checkpoints/u40.pt"  # 44 characters
NAMES = {LONG: 3.0, "exec:node agents/clients/random_client.js": -2.0, "greedy": 0.5}


def test_the_head_to_head_table_holds_long_names_whole_and_aligned() -> None:
    summary = summarise(round_robin(NAMES, deals=20), list(NAMES))
    table = format_table(summary).splitlines()
    start = table.index("Head to head (A's view; each deal played twice, seats swapped)")
    header, *rows = table[start + 1 : start + 1 + 1 + len(summary["pairs"])]
    assert header.lstrip().startswith("A ")
    for pair, row in zip(summary["pairs"], rows, strict=True):
        # Both names whole, then the deals column at the header's position.
        assert row.startswith(f"  {pair['a']} ") and f" {pair['b']} " in row
        end = header.index("deals") + len("deals")
        assert row[end - 6 : end] == "    20"
    # The ratings table too.
    assert any(line.lstrip().startswith(f"1  {LONG} ") for line in table)


def rate_result(names: list[str]) -> dict[str, Any]:
    """A hand-built result of ginenv.experiments.eval.rate.rate for ``names`` (the first is rated)."""
    ladder = [{"agent": n, "rating": 1.0 - k, "low": 0.5 - k, "high": 1.5 - k} for k, n in enumerate(names)]
    margins = [
        {"opponent": n, "points_per_hand": 2.0, "low": 1.0, "high": 3.0, "p_value": 0.01, "separated": True}
        for n in names[1:]
    ]
    return {
        "agent": names[0], "rating": 1.0, "low": 0.5, "high": 1.5, "core": names, "place": 1,
        "of": len(names), "above": names[1], "below": None, "ladder": ladder, "deals": 50,
        "margins": margins,
    }  # fmt: skip


def test_the_rate_table_holds_long_names_whole_and_aligned() -> None:
    names = list(NAMES)
    lines = format_rate(rate_result(names)).splitlines()
    ranked = [line for line in lines if line.lstrip()[:1].isdigit()]
    # Never cut at 22 characters: each name whole after its rank, then a space.
    assert [line[8 : 8 + len(name) + 1] for line, name in zip(ranked, names, strict=True)] == [
        name + " " for name in names
    ]
    assert len({line.index("[") for line in ranked}) == 1  # the intervals line up
    margins = lines[lines.index(next(x for x in lines if x.startswith("Margins:"))) + 2 :]
    assert [line[2 : 2 + len(name) + 1] for line, name in zip(margins, names[1:], strict=True)] == [
        name + " " for name in names[1:]
    ]
    assert len({line.index("[") for line in margins}) == 1


# Plots: every text drawn lies inside the canvas at any number of agents and name length, and
# colour says significance.


def drawn_text_boxes(fig: Any, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Each text the figure actually draws (tick labels out of view are not drawn) with its box."""
    from matplotlib.text import Text

    drawn: list[Any] = []
    original = Text.draw

    def spy(self: Any, renderer: Any) -> None:
        original(self, renderer)
        if self.get_visible() and self.get_text():
            drawn.append(self)

    with monkeypatch.context() as patch:
        patch.setattr(Text, "draw", spy)
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [(t.get_text(), t.get_window_extent(renderer)) for t in drawn]


def long_names(n: int) -> list[str]:
    """``n`` distinct agent names of exactly 40 characters."""
    return [f"checkpoint:runs/league_{i:02d}/checkpoints/".ljust(40, "x") for i in range(n)]


@pytest.mark.parametrize("n", [2, 12])
@pytest.mark.parametrize("long", [False, True], ids=["short-names", "40-char-names"])
def test_plots_fit_their_canvas(n: int, long: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    names = long_names(n) if long else [f"a{i}" for i in range(n)]
    strength = dict(zip(names, np.linspace(3.0, -3.0, n), strict=True))
    summary = summarise(round_robin(strength, deals=30, luck=True, exact=False), names)
    for figure in (ratings_figure, head_to_head_figure):
        fig = figure(summary)
        boxes = drawn_text_boxes(fig, monkeypatch)
        width, height = fig.bbox.width, fig.bbox.height
        outside = [
            text for text, b in boxes if b.x0 < -1 or b.y0 < -1 or b.x1 > width + 1 or b.y1 > height + 1
        ]
        assert outside == [], f"{figure.__name__}: {outside}"
        # The names are drawn whole, the title and the colour bar's label are there.
        texts = [text for text, _ in boxes]
        assert all(name in texts for name in names)
        assert any(text.startswith(("Ratings:", "Head to head:")) for text in texts)
        if figure is head_to_head_figure:
            assert "row minus column, points per hand" in texts


def test_a_difference_that_is_not_significant_is_drawn_neutral(monkeypatch: pytest.MonkeyPatch) -> None:
    from ginenv.experiments.eval.plots import NEUTRAL_COLOUR
    from matplotlib.colors import to_rgba

    # Two agents 0.4 points apart over 30 deals of spread 8: the interval holds 0.
    names = long_names(2)
    summary = summarise(round_robin(dict(zip(names, [0.2, -0.2], strict=True)), deals=30), names)
    pair = summary["pairs"][0]["points_per_hand"]
    assert pair["low"] < 0 < pair["high"] and pair["mean"] == pytest.approx(0.4)
    fig = head_to_head_figure(summary)
    image = fig.axes[0].images[0]
    colours = image.to_rgba(image.get_array())
    assert tuple(colours[0, 1]) == pytest.approx(to_rgba(NEUTRAL_COLOUR))
    assert tuple(colours[1, 0]) == pytest.approx(to_rgba(NEUTRAL_COLOUR))
    assert "95% CI holds 0: not significant" in [text for text, _ in drawn_text_boxes(fig, monkeypatch)]
    # A separated difference keeps its colour: blue where the row won, red where it lost.
    strong = summarise(round_robin(dict(zip(names, [3.0, -3.0], strict=True)), deals=30), names)
    assert strong["pairs"][0]["points_per_hand"]["low"] > 0
    image = head_to_head_figure(strong).axes[0].images[0]
    colours = image.to_rgba(image.get_array())
    assert colours[0, 1][2] > colours[0, 1][0] and colours[1, 0][0] > colours[1, 0][2]
    assert tuple(colours[0, 1]) != pytest.approx(to_rgba(NEUTRAL_COLOUR))


# ---------------------------------------------------------------- pinned outputs
# The points ratings, Bradley-Terry, the terminal table and the two figures were split into named
# steps; these values were taken before the split and must not move on one seeded field (a change
# of behaviour fails here, not only a change of shape).

HERE = Path(__file__).parent
RATING = (4.3885779522547645, 1.6201362223797084, 1.0457059255359353, -7.054420100170407, -60.77381659288281)
LOW = (3.6597848563566657, 0.7833695872011841, 0.27847280976704336, -7.650102600470873, -61.4891666160924)
HIGH = (5.117371048152863, 2.456902857558233, 1.8129390413048272, -6.4587375998699414, -60.05846656967322)
ELO = (148.6543482052782, 0.0, -40.147050865634924)
ELO_LOW = (-48.208306563188245, 0.0, -233.61988607604022)
ELO_HIGH = (345.51700297374464, 0.0, 153.32578434477037)
RATINGS_FIGURE = [
    [["-60.8"], [-62.089167, -59.458467]],
    [["+4.4", "+1.6", "+1.0", "-7.1"], [-8.92685, 6.394118]],
    [
        [
            "gap to next, 95% CI",
            "+2.8  [+1.4, +4.2]",
            "separated",
            "+0.6  [-0.8, +1.9]",
            "not separated",
            "+8.1  [+6.9, +9.3]",
            "separated",
            "+53.7  [+52.5, +55.0]",
            "separated",
            "3 of 4 adjacent gaps separated",
        ],
        [0.0, 1.0],
    ],
]
HEAD_TO_HEAD_FIGURE = [
    [
        [
            "+3.0",
            "[+1.3, +4.6]",
            "+3.0",
            "[+0.9, +5.0]",
            "+11.6",
            "[+10.5, +12.7]",
            "+64.7",
            "[+63.0, +66.4]",
            "-3.0",
            "[-4.6, -1.3]",
            "+0.8",
            "[-0.9, +2.4]",
            "+8.7",
            "[+7.3, +10.1]",
            "+61.2",
            "[+59.9, +62.5]",
            "-3.0",
            "[-5.0, -0.9]",
            "-0.8",
            "[-2.4, +0.9]",
            "+7.9",
            "[+5.6, +10.2]",
            "+63.1",
            "[+61.4, +64.8]",
            "-11.6",
            "[-12.7, -10.5]",
            "-8.7",
            "[-10.1, -7.3]",
            "-7.9",
            "[-10.2, -5.6]",
            "+54.1",
            "[+52.2, +56.0]",
            "-64.7",
            "[-66.4, -63.0]",
            "-61.2",
            "[-62.5, -59.9]",
            "-63.1",
            "[-64.8, -61.4]",
            "-54.1",
            "[-56.0, -52.2]",
        ],
        [-0.5, 4.5],
    ],
    [[], [0.0, 1.0]],
]


def _field() -> list[dict]:
    return round_robin(WITH_RANDOM, deals=12, sd=9.0, seed=5, luck=True, exact=False)


def _sketch(fig: object) -> list[list[list]]:
    """Each axes' texts and x limits: what the figure says and where."""
    return [
        [[t.get_text() for t in ax.texts], [round(float(x), 6) for x in ax.get_xlim()]] for ax in fig.axes
    ]  # type: ignore[attr-defined]


def test_points_ratings_are_pinned() -> None:
    r = points_ratings(deal_values(_field()), core=["top", "mid", "low", "bottom"])
    assert r.rating == pytest.approx(RATING, rel=1e-12, abs=1e-12)
    assert r.low == pytest.approx(LOW, rel=1e-12, abs=1e-12)
    assert r.high == pytest.approx(HIGH, rel=1e-12, abs=1e-12)


def test_bradley_terry_is_pinned() -> None:
    wins = {("a", "b"): 7, ("b", "a"): 3, ("b", "c"): 5, ("c", "b"): 4, ("c", "a"): 2, ("a", "c"): 6}
    b = bradley_terry(wins, anchor="b")
    # The optimiser stops within its tolerance: pinned to well below a rating point.
    assert b.elo == pytest.approx(ELO, abs=1e-6)
    assert b.low == pytest.approx(ELO_LOW, abs=1e-6)
    assert b.high == pytest.approx(ELO_HIGH, abs=1e-6)


def test_the_table_and_figures_are_pinned() -> None:
    summary = summarise(_field(), list(WITH_RANDOM))
    assert format_table(summary) == (HERE / "pinned_report_table.txt").read_text(encoding="utf-8").rstrip(
        "\n"
    )
    assert _sketch(ratings_figure(summary)) == RATINGS_FIGURE
    assert _sketch(head_to_head_figure(summary)) == HEAD_TO_HEAD_FIGURE
