"""The evaluation harness: duplicate symmetry, resume after a kill, local vs Ray, the CLI's JSON."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from extras import needs_extra
from ginenv.experiments.cli import main
from ginenv.experiments.eval.harness import EvalConfig, HarnessError, evaluate, play_unit

from ginenv.rules import Rules


@pytest.mark.parametrize("agent", ["greedy", "random"])
@pytest.mark.parametrize("unit", ["hand", "match"])
def test_an_agent_against_itself_scores_zero_on_every_duplicate_pair(agent: str, unit: str) -> None:
    # Random is seeded per hand by role (dealer / non-dealer), so it mirrors itself exactly too.
    cfg = EvalConfig(
        agents=(agent, "other"),
        deals=6 if unit == "hand" else 2,
        unit=unit,  # type: ignore[arg-type]
        rules=Rules(target=50),
    )
    cache: dict = {}
    for deal in range(cfg.deals):
        record = play_unit((agent, agent), deal, cfg, cache)
        g0, g1 = record["games"]
        assert record["pair_sum"] == 0
        assert g0["a_points"] == -g1["a_points"]
        assert g0["hands"] == g1["hands"] >= 1


def test_seats_are_swapped_within_a_deal() -> None:
    cfg = EvalConfig(agents=("random", "greedy"), deals=3)
    cache: dict = {}
    sums = [play_unit(("random", "greedy"), k, cfg, cache)["pair_sum"] for k in range(3)]
    again = [play_unit(("random", "greedy"), k, cfg, {})["pair_sum"] for k in range(3)]
    assert sums == again  # deterministic for a seed
    record = play_unit(("random", "greedy"), 0, cfg, cache)
    assert [g["a_seat"] for g in record["games"]] == [0, 1]
    assert sum(sums) < 0  # greedy beats random


def by_deal(record: dict) -> int:
    return record["deal"]


def totals(records: list[dict]) -> list[tuple[str, str, int, int]]:
    return [(r["a"], r["b"], r["deal"], r["pair_sum"]) for r in records]


def test_resume_after_an_exception_gives_the_uninterrupted_totals(tmp_path: Path) -> None:
    cfg = EvalConfig(agents=("random", "greedy"), deals=12)
    full = evaluate(cfg, tmp_path / "full", workers=1, progress=False)

    class Stop(Exception):
        pass

    seen = []

    def stop_after_five(record: dict) -> None:
        seen.append(record)
        if len(seen) == 5:
            raise Stop

    with pytest.raises(Stop):
        evaluate(cfg, tmp_path / "cut", workers=1, progress=False, on_record=stop_after_five)
    # A torn last line, as a kill in the middle of a write leaves it.
    with (tmp_path / "cut" / "results.jsonl").open("a") as fh:
        fh.write('{"a": "random", "b": "gre')
    resumed = evaluate(cfg, tmp_path / "cut", workers=1, progress=False)
    assert totals(resumed) == totals(full)
    lines = (tmp_path / "cut" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 12 and all(json.loads(line) for line in lines)


def test_resume_with_other_settings_is_refused(tmp_path: Path) -> None:
    evaluate(EvalConfig(agents=("random", "greedy"), deals=1), tmp_path, workers=1, progress=False)
    with pytest.raises(HarnessError, match="other settings"):
        evaluate(EvalConfig(agents=("random", "greedy"), deals=2), tmp_path, workers=1, progress=False)


def test_a_killed_cli_run_resumes_to_the_same_totals(tmp_path: Path) -> None:
    args = [
        "match",
        "random",
        "greedy",
        "--hands",
        "120",
        "--workers",
        "1",
        "--quiet",
        "--no-plots",
        "--json",
    ]
    assert main([*args, "--out", str(tmp_path / "full")]) == 0
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ginenv.experiments.cli", *args, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    results = out / "results.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline and (not results.exists() or len(results.read_text().splitlines()) < 10):
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(results.read_text().splitlines())
    assert 10 <= done_before < 60
    assert main([*args, "--out", str(out)]) == 0
    full = [json.loads(x) for x in (tmp_path / "full" / "results.jsonl").read_text().splitlines()]
    resumed = [json.loads(x) for x in results.read_text().splitlines()]
    assert totals(sorted(resumed, key=by_deal)) == totals(sorted(full, key=by_deal))


def test_local_processes_and_ray_give_the_same_records(tmp_path: Path) -> None:
    needs_extra("ray", "ray")
    import ray

    cfg = EvalConfig(agents=("random", "greedy"), deals=4)
    local = evaluate(cfg, tmp_path / "local", backend="local", workers=2, progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = evaluate(cfg, tmp_path / "ray", backend="ray", progress=False)
    finally:
        ray.shutdown()

    def strip(records: list[dict]) -> list[dict]:
        # Decision times are wall-clock: everything else must match exactly.
        return [
            {**r, "games": [{k: v for k, v in g.items() if not k.endswith("think_s")} for g in r["games"]]}
            for r in records
        ]

    assert strip(local) == strip(remote)


def test_match_json_schema(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert (
        main(
            [
                "match",
                "greedy",
                "random",
                "--hands",
                "20",
                "--seed",
                "3",
                "--json",
                "--workers",
                "1",
                "--no-plots",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["agents"] == ["greedy", "random"]
    assert doc["hands_played"] == 20 and doc["deals"] == 10
    pts = doc["points_per_hand_a_minus_b"]
    assert pts["low"] <= pts["mean"] <= pts["high"] and pts["mean"] > 0
    assert 0.5 < doc["a_hand_win_rate"]["rate"] <= 1
    assert set(doc["rates"]) == {"knock", "undercut", "gin", "big_gin", "dead", "truncated"}
    assert doc["a_match_win_rate"] is None
    assert doc["truncated_games"] == 0 and doc["turn_limit"] == 100
    assert doc["seed"] == 3 and doc["seed_drawn"] is False


def test_match_mode_json_reports_match_win_rate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert (
        main(
            [
                "match",
                "greedy",
                "random",
                "--matches",
                "2",
                "--rules",
                "seed000_short",
                "--json",
                "--workers",
                "1",
                "--no-plots",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["unit"] == "match"
    assert doc["a_match_win_rate"]["rate"] == 1.0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["match", "greedy", "nobody"], "unknown agent 'nobody'"),
        (["match", "greedy", "random", "--hands", "0"], "--hands must be a positive integer"),
        (["match", "greedy", "random", "--rules", "fancy"], "unknown rules preset"),
        (["ladder", "--config", "/nonexistent.yaml"], "cannot read config"),
    ],
)
def test_bad_arguments_give_one_line_messages(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_bad_config_keys_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("agents: [random, greedy]\ndeals: 2\ncolour: red\n")
    assert main(["ladder", "--config", str(cfg)]) == 2
    assert "unknown setting(s)" in capsys.readouterr().err


def test_ladder_end_to_end_on_a_tiny_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(
        "agents: [random, greedy]\nformat: round_robin\nunit: hand\ndeals: 6\nrules: standard\nseed: 1\n"
    )
    out = tmp_path / "run"
    assert main(["ladder", "--config", str(cfg), "--out", str(out), "--workers", "2", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "Ratings" in text and "greedy" in text
    summary = json.loads((out / "summary.json").read_text())
    assert [r["agent"] for r in summary["ratings"]] == ["greedy", "random"]
    for name in ("pairs.csv", "ratings.csv", "ratings.png", "head_to_head.png"):
        assert (out / name).stat().st_size > 0
    assert any((out / "tensorboard").iterdir())


@pytest.mark.parametrize("unit", ["hand", "match"])
def test_replays_of_every_game_play_back_to_the_recorded_points(tmp_path: Path, unit: str) -> None:
    from ginenv.replay import load_replay, play_replay

    cfg = EvalConfig(agents=("greedy", "easy"), deals=2, unit=unit, rules=Rules(target=30))  # type: ignore[arg-type]
    records = evaluate(cfg, tmp_path, workers=1, progress=False, replays=True)
    for record in records:
        for game in record["games"]:
            seats = ("greedy", "easy") if game["a_seat"] == 0 else ("easy", "greedy")
            path = tmp_path / "replays" / f"deal{record['deal']:06d}-{seats[0]}-vs-{seats[1]}.json"
            played = play_replay(load_replay(path))
            # A's points are the sum of its seat's hand results (plus the match bonuses: none here).
            results = [played.result] if unit == "hand" else [r.result for r in played.records]  # type: ignore[union-attr]
            a_points = sum(r.score_deltas()[game["a_seat"]] for r in results if r is not None)
            assert a_points == game["a_points"]
    assert len(list((tmp_path / "replays").glob("*.json"))) == 4
