"""The ``ginenv`` command: demo and replay end to end, and clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from ginenv.experiments.cli import main


def test_demo_hand_prints_a_whole_hand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "ginenv demo: one hand, seed 0" in out
    assert "discard" in out
    assert "showdown:" in out


def test_demo_match_save_and_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.json"
    argv = ["demo", "--mode", "match", "--seed", "3", "--rules", "seed000_short", "--save", str(path)]
    assert main(argv) == 0
    assert "match over" in capsys.readouterr().out
    assert main(["replay", str(path)]) == 0
    assert "every recorded result matches" in capsys.readouterr().out


def test_bad_replay_and_preset_give_messages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "nope"}')
    assert main(["replay", str(bad)]) == 2
    assert "not a ginenv replay" in capsys.readouterr().err
    assert main(["demo", "--rules", "nope"]) == 2
    assert "known presets" in capsys.readouterr().err
    assert main(["demo", "--players", "greedy", "nobody"]) == 2
    assert "unknown agent 'nobody'" in capsys.readouterr().err


def test_console_script_runs() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "ginenv.experiments.cli",
            "demo",
            "--seed",
            "1",
            "--players",
            "random",
            "greedy",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "seed 1" in out and "player_0 (random)" in out


def test_demo_records_a_truncated_hand_and_replay_checks_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.json"
    assert main(["demo", "--turn-limit", "2", "--save", str(path)]) == 0
    assert "truncated" in capsys.readouterr().out
    data = json.loads(path.read_text())
    assert data["hands"][-1]["result"]["kind"] == "truncated"
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "'kind': 'truncated'" in out and "every recorded result matches" in out


def test_demo_match_truncates_as_a_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.json"
    assert main(["demo", "--mode", "match", "--turn-limit", "3", "--save", str(path)]) == 0
    capsys.readouterr()
    data = json.loads(path.read_text())
    assert data["hands"][-1]["result"]["kind"] == "truncated" and data["match_result"] is None
    assert main(["replay", str(path)]) == 0
    assert "every recorded result matches" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["hands"][0].pop("result"), "'result' is missing"),
        (lambda d: d["hands"][0].update(result=None), "records no result"),
        (lambda d: d["hands"][0]["result"].update(points=9.0), "'points' must be an integer"),
        (lambda d: d["hands"][0]["result"].update(winner=True), "winner"),
        (lambda d: d.update(first_dealer=1.0), "dealer"),
    ],
)
def test_replay_refuses_missing_results_and_wrong_types_in_one_line(
    change: object, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    assert main(["demo", "--seed", "2", "--save", str(path)]) == 0
    capsys.readouterr()
    data = json.loads(path.read_text())
    change(data)  # type: ignore[operator]
    path.write_text(json.dumps(data))
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_replay_of_deeply_nested_json_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_replay_with_a_5001_digit_integer_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Python refuses to convert it (4300 digits at most) with a bare ValueError: not a traceback here.
    path = tmp_path / "big.json"
    path.write_text('{"format": "ginenv-replay", "version": ' + "9" * 5001 + "}")
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"ginenv: replay {path} is not a ginenv replay: it holds an integer of 5001 digits (at most 20)\n"
    )


def test_train_refuses_bad_configs_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "ppo.yaml"
    cfg.write_text("num_envs: many\n")
    assert main(["train", "--config", str(cfg)]) == 2
    assert capsys.readouterr().err.strip() == f"ginenv: {cfg}: num_envs must be int, got 'many'"
    cfg.write_text("{1: 2}\n")
    assert main(["train", "--config", str(cfg)]) == 2
    assert "setting names must be strings" in capsys.readouterr().err
    assert main(["train", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read config" in capsys.readouterr().err
    assert main(["train", "--num-envs", "0"]) == 2
    assert "num_envs must be a positive integer, got 0" in capsys.readouterr().err
