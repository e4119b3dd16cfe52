"""``ginenv compare NEW BASE``: two agents' runs against one opponent, paired on the deals they share."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ginenv.experiments.cli import main
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.compare import compare_runs, load_run
from scipy import stats

RULES = {"knock_limit": 10, "gin_bonus": 25}


def write_run(
    folder: Path, agents: list[str], records: list[tuple[str, str, int, float, float]], **config: object
) -> Path:
    """A run folder as the harness writes it: ``(a, b, deal, pair_sum, pair_luck)`` a record."""
    folder.mkdir(parents=True)
    cfg = {"agents": agents, "unit": "hand", "rules": RULES, "seed": 0, "turn_limit": 100, **config}
    (folder / "config.json").write_text(json.dumps({"fingerprint": "x", "config": cfg, "checkpoints": {}}))
    lines = [
        json.dumps({"a": a, "b": b, "deal": d, "pair_sum": s, "pair_luck": luck, "games": []})
        for a, b, d, s, luck in records
    ]
    (folder / "results.jsonl").write_text("".join(line + "\n" for line in lines))
    return folder


def test_the_difference_is_taken_deal_by_deal_from_each_subjects_own_view(tmp_path: Path) -> None:
    # new plays A against master; in base, master is named first, so base's points are minus A's.
    new = write_run(
        tmp_path / "new",
        ["new", "master"],
        [("new", "master", 0, 10, 2), ("new", "master", 1, -4, 0), ("new", "master", 2, 6, -2)],
    )
    base = write_run(
        tmp_path / "base",
        ["master", "old"],
        [("master", "old", 0, 2, 0), ("master", "old", 1, 0, 4), ("master", "old", 3, 8, 0)],
    )
    result = compare_runs([(load_run(new), load_run(base))])
    (row,) = result["pairs"]
    assert result["opponent"] == "master"
    assert (row["new_agent"], row["base_agent"], row["deals"]) == ("new", "old", 2)  # deals 0 and 1
    # new: (10-2)/2 = 4 and -2; old: -(2-0)/2 = -1 and -(0-4)/2 = +2.
    diffs = [4 - -1, -2 - 2]
    assert row["new_points"] == pytest.approx(1.0) and row["base_points"] == pytest.approx(0.5)
    assert row["difference"]["mean"] == pytest.approx(0.5)
    low, high = stats.t.interval(0.95, df=1, loc=0.5, scale=stats.sem(diffs))
    assert (row["difference"]["low"], row["difference"]["high"]) == pytest.approx((low, high))
    raw = compare_runs([(load_run(new), load_run(base))], raw=True)
    assert raw["pairs"][0]["difference"]["mean"] == pytest.approx(((5 - -1) + (-2 - 0)) / 2)


def test_pairs_of_runs_pool_their_deals_and_the_verdict_needs_the_interval_clear_of_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folders = []
    for seed in (0, 1):
        deals = range(40)
        folders.append(
            write_run(
                tmp_path / f"new{seed}",
                ["new", "master"],
                [("new", "master", d, 6 + d % 3, 0) for d in deals],
                seed=seed,
            )
        )
        folders.append(
            write_run(
                tmp_path / f"old{seed}",
                ["old", "master"],
                [("old", "master", d, d % 5 - 2, 0) for d in deals],
                seed=seed,
            )
        )
    assert main(["compare", *map(str, folders), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [r["seed"] for r in result["pairs"]] == [0, 1]
    assert result["pooled"]["deals"] == 80
    assert result["pooled"]["separated"] and result["pooled"]["difference"]["low"] > 0
    assert main(["compare", *map(str, folders)]) == 0
    assert "new is stronger than base with 95% confidence" in capsys.readouterr().out
    # The same runs the other way round: weaker, and still separated.
    swapped = [folders[1], folders[0], folders[3], folders[2]]
    assert main(["compare", *map(str, swapped)]) == 0
    assert "new is weaker than base with 95% confidence" in capsys.readouterr().out


def test_runs_on_other_deals_or_without_a_common_opponent_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = write_run(tmp_path / "new", ["new", "master"], [("new", "master", 0, 2, 0)])
    other_seed = write_run(tmp_path / "s1", ["old", "master"], [("old", "master", 0, 2, 0)], seed=1)
    other_rules = write_run(
        tmp_path / "r", ["old", "master"], [("old", "master", 0, 2, 0)], rules={"knock_limit": 5}
    )
    no_common = write_run(tmp_path / "nc", ["old", "expert"], [("old", "expert", 0, 2, 0)])
    two_common = write_run(tmp_path / "tc", ["new", "master"], [("new", "master", 0, 4, 0)])
    cases = {
        (new, other_seed): "played on different deals (seed 0 against 1)",
        (new, other_rules): "played on different deals (rules",
        (new, no_common): "share no agent",
        (new, two_common): "name the common opponent with --against",
        (new, new): "is given twice",
        (new, tmp_path / "missing"): "is not a run folder",
    }
    for (a, b), message in cases.items():
        assert main(["compare", str(a), str(b)]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
    assert main(["compare", str(new)]) == 2
    assert "in pairs, NEW BASE" in capsys.readouterr().err
    # With --against the two runs of one agent name compare fine (the same spec, two networks).
    assert main(["compare", str(new), str(two_common), "--against", "master", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"][0]["difference"]["mean"] == pytest.approx(-1.0)


def test_a_corrupt_line_is_refused_and_a_torn_last_line_left_out(tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "run", ["new", "master"], [("new", "master", 0, 2, 0), ("new", "master", 1, 4, 0)]
    )
    with (run / "results.jsonl").open("a") as fh:
        fh.write('{"a": "new", "b": "master", "deal": 2, "pair')  # killed mid-write
    before = (run / "results.jsonl").read_bytes()
    assert [r["deal"] for r in load_run(run).records] == [0, 1]
    assert (run / "results.jsonl").read_bytes() == before  # read-only: the torn line stays for a resume
    (run / "results.jsonl").write_text('{"a": "new"}\n')
    with pytest.raises(UsageError, match="line 1 is not a finished deal's record"):
        load_run(run)
    (run / "config.json").write_text("[1, 2]")
    with pytest.raises(UsageError, match=r"config\.json is corrupt"):
        load_run(run)


def test_a_run_pairing_the_opponent_with_several_agents_is_refused(tmp_path: Path) -> None:
    ladder = write_run(
        tmp_path / "ladder",
        ["a", "b", "master"],
        [("a", "master", 0, 2, 0), ("b", "master", 0, 4, 0)],
    )
    single = write_run(tmp_path / "one", ["c", "master"], [("c", "master", 0, 2, 0)])
    with pytest.raises(UsageError, match="pairs 'master' with several agents"):
        compare_runs([(load_run(ladder), load_run(single))], against="master")


def test_two_real_match_runs_compare_on_their_shared_deals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--hands", "8", "--seed", "3", "--workers", "1", "--quiet", "--no-plots", "--json"]
    assert main(["match", "greedy", "random", "--out", str(tmp_path / "g"), *common]) == 0
    greedy = json.loads(capsys.readouterr().out)["points_per_hand_a_minus_b"]["mean"]
    assert main(["match", "easy", "random", "--out", str(tmp_path / "e"), *common]) == 0
    easy = json.loads(capsys.readouterr().out)["points_per_hand_a_minus_b"]["mean"]
    assert main(["compare", str(tmp_path / "g"), str(tmp_path / "e"), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["pairs"]
    assert (row["new_agent"], row["base_agent"], row["deals"]) == ("greedy", "easy", 4)
    # Over the same deals the paired mean is the difference of the two runs' headline means.
    assert row["new_points"] == pytest.approx(greedy) and row["base_points"] == pytest.approx(easy)
    assert row["difference"]["mean"] == pytest.approx(greedy - easy)
