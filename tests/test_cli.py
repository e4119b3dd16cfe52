"""The ``ginenv`` command: demo and replay end to end, and clear errors."""

from __future__ import annotations

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
    assert "unknown agent(s) nobody" in capsys.readouterr().err


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
