"""The ``ginenv`` command on bad input: one line, exit status 2, never a traceback; Ctrl-C, strict
JSON, --seed random, and an agent's own exception reported as the agent's (exit status 1)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ginenv.agents import registry
from ginenv.experiments.cli import main

from ginenv.compiling import is_note


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    err = captured.err
    assert "Traceback" not in err and "Traceback" not in captured.out
    assert len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("agents: [random, greedy]\n1: 2\n", "setting names must be strings, got 1"),
        ("agents: [random, greedy]\nseed: 1.5\n", "seed must be a non-negative integer or 'random', got 1.5"),
        (
            "agents: [random, greedy]\nseed: null\n",
            "seed must be a non-negative integer or 'random', got None",
        ),
        ("agents: [random, greedy]\nseed: -3\n", "seed must be a non-negative integer"),
        ("agents: [random, greedy]\nrules: {1: 2}\n", "rule option names must be strings"),
        ("agents: [random, greedy]\nrules: 7\n", "rules must be a preset name or a mapping"),
        ("agents: [random, greedy]\ndeals: true\n", "deals must be a positive integer"),
        ("agents: [random, greedy]\ndeals: 1.0\n", "deals must be a positive integer"),
        ("agents: [random, greedy]\nturn_limit: 0\n", "turn_limit must be a positive integer"),
        ("agents: 5\n", "agents must be 'all' or a list of agent names"),
        ("agents: [random, 3]\n", "agents must be 'all' or a list of agent names"),
        ("agents: [random, greedy]\nunit: [hand]\n", "unit must be a string"),
        ("- 1\n- 2\n", "must be a mapping of settings"),
    ],
)
def test_bad_yaml_configs_get_one_line(
    text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text)
    assert main(["ladder", "--config", str(cfg), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    assert message in one_line_error(capsys)
    assert not (tmp_path / "run").exists()  # refused before anything was played


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["match", "greedy", "random", "--seed", "-1"],
            "--seed must be a non-negative integer or 'random', got '-1'",
        ),
        (["match", "greedy", "random", "--seed", "1.5"], "--seed must be a non-negative integer"),
        (["demo", "--seed", "-1"], "--seed must be a non-negative integer"),
        (["ladder", "--seed", "x"], "--seed must be a non-negative integer"),
        (["match", "greedy", "random", "--hands", "2000000000"], "--hands must be at most 2,000,000"),
        (["match", "greedy", "random", "--matches", "2000000000"], "--matches must be at most 2,000,000"),
        (["ladder", "--deals", "2000000000"], "--deals must be at most 1,000,000"),
        (["match", "greedy", "random", "--workers", "100000"], "--workers must be at most 1024"),
        (["match", "greedy", "random", "--workers", "-1"], "--workers must be >= 0"),
        (["match", "greedy", "random", "--turn-limit", "0"], "--turn-limit must be a positive integer"),
        (["match", "greedy", "random", "--hands", "many"], "argument --hands: invalid int value: 'many'"),
        (["demo", "--players", "greedy", "checkpoint:/nonexistent.pt"], "no checkpoint at /nonexistent.pt"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_arguments_get_one_line_naming_the_option(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with_exit = _run(argv)
    assert with_exit == 2
    assert message in one_line_error(capsys)


def _run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exit:  # argparse's own errors exit
        return int(exit.code or 0)


def test_out_naming_a_file_or_an_unusable_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    base = ["match", "greedy", "random", "--hands", "2", "--workers", "1", "--no-plots", "--quiet"]
    assert main([*base, "--out", str(a_file)]) == 2
    assert f"--out {a_file} is a file, not a folder" in one_line_error(capsys)
    assert main([*base, "--out", str(a_file / "run")]) == 2
    assert "cannot create the run folder" in one_line_error(capsys)
    assert a_file.read_text() == "x"


def test_out_in_a_folder_nobody_may_write_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # /proc refuses new files and folders even to root (CI runs as root, where chmod locks nothing).
    argv = ["match", "greedy", "random", "--hands", "2", "--workers", "1", "--quiet"]
    assert main([*argv, "--out", "/proc/ginenv-run/run"]) == 2
    assert "cannot create the run folder /proc/ginenv-run/run" in one_line_error(capsys)
    assert main([*argv, "--out", "/proc"]) == 2
    message = one_line_error(capsys)
    assert "is not writable" in message or "cannot write /proc/config.json" in message


def test_demo_save_into_a_missing_folder_is_refused_before_playing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "r.json"
    assert main(["demo", "--save", str(target)]) == 2
    captured = capsys.readouterr()
    assert "does not exist" in captured.err and "Traceback" not in captured.err
    assert captured.out == ""  # nothing was played
    assert main(["demo", "--save", str(tmp_path)]) == 2
    assert "is a folder" in one_line_error(capsys)


def test_demo_accepts_a_checkpoint_like_match(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch
    from ginenv.agents.neural import MaskedPolicy, save_checkpoint

    from ginenv.actions import NUM_ACTIONS
    from ginenv.observation import OBS_SIZE

    torch.manual_seed(0)
    ckpt = tmp_path / "net.pt"
    save_checkpoint(MaskedPolicy(OBS_SIZE, [8], NUM_ACTIONS), ckpt)
    assert main(["demo", "--players", f"checkpoint:{ckpt}", "greedy"]) == 0
    assert f"player_0 (checkpoint:{ckpt})" in capsys.readouterr().out


def test_match_json_on_one_deal_is_strict_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["match", "greedy", "random", "--hands", "2", "--json", "--workers", "1", "--no-plots"]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out

    def refuse(constant: str) -> None:
        raise AssertionError(f"non-standard JSON constant {constant}")

    doc = json.loads(out, parse_constant=refuse)
    pts = doc["points_per_hand_a_minus_b"]
    # One deal: the mean is defined, its interval and the p-value are not.
    assert isinstance(pts["mean"], float) and pts["low"] is None and pts["high"] is None
    assert doc["p_value"] is None and doc["deals"] == 1
    json.loads((tmp_path / "run" / "summary.json").read_text(), parse_constant=refuse)


def test_seed_random_is_drawn_recorded_and_reproducible(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["match", "greedy", "random", "--hands", "8", "--json", "--workers", "1", "--no-plots"]
    assert main([*argv, "--seed", "random", "--out", str(tmp_path / "a")]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    seed = doc["seed"]
    assert doc["seed_drawn"] is True and isinstance(seed, int) and seed >= 0
    assert f"seed drawn from the OS: {seed}" in captured.err
    stored = json.loads((tmp_path / "a" / "config.json").read_text())
    assert stored["config"]["seed"] == seed
    assert json.loads((tmp_path / "a" / "summary.json").read_text())["seed"] == seed
    # Given back, the recorded seed reproduces the run exactly, and resumes its folder.
    assert main([*argv, "--seed", str(seed), "--out", str(tmp_path / "b")]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["points_per_hand_a_minus_b"] == doc["points_per_hand_a_minus_b"]
    assert main([*argv, "--seed", str(seed), "--out", str(tmp_path / "a")]) == 0
    capsys.readouterr()
    assert main([*argv, "--seed", "random", "--out", str(tmp_path / "c")]) == 0
    assert json.loads(capsys.readouterr().out)["seed"] != seed  # 63 random bits


def test_ladder_config_seed_random(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("agents: [random, greedy]\ndeals: 2\nseed: random\nturn_limit: 50\n")
    out = tmp_path / "run"
    assert (
        main(["ladder", "--config", str(cfg), "--out", str(out), "--workers", "1", "--quiet", "--no-plots"])
        == 0
    )
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed_drawn"] is True and summary["config"]["seed"] == summary["seed"]
    assert summary["config"]["turn_limit"] == 50 and summary["truncated_games"] == 0
    assert "Truncated games" in capsys.readouterr().out
    cfg.write_text("agents: [random, greedy]\ndeals: 2\n")
    argv = ["ladder", "--config", str(cfg), "--seed", "random", "--workers", "1", "--quiet", "--no-plots"]
    assert main([*argv, "--out", str(tmp_path / "run2")]) == 0
    summary = json.loads((tmp_path / "run2" / "summary.json").read_text())
    assert summary["seed_drawn"] is True and f"--seed {summary['seed']}" in capsys.readouterr().err


class _Crasher:
    """A registered agent whose act() raises: the agent's bug, not the user's input."""

    name = "crasher"

    def __init__(self, seed: int | None = None) -> None:
        pass

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: object) -> int:
        raise ZeroDivisionError("the crasher divided by zero")


@pytest.fixture
def crasher(monkeypatch: pytest.MonkeyPatch) -> str:
    spec = registry.AgentSpec("crasher", _Crasher, "raises in act()")  # type: ignore[arg-type]
    monkeypatch.setitem(registry._REGISTRY, "crasher", spec)
    return "crasher"


def test_an_agent_raising_is_reported_as_the_agents_not_as_a_usage_error(
    crasher: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["match", crasher, "random", "--hands", "2", "--workers", "1", "--quiet", "--no-plots"]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and 'raise ZeroDivisionError("the crasher' in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(
        "ginenv: agent crasher raised ZeroDivisionError: the crasher divided by zero in act() (deal 0"
    )
    assert main(["demo", "--players", "greedy", crasher]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith(
        "ginenv: agent crasher raised ZeroDivisionError"
    )


def test_ctrl_c_exits_130_with_one_line_and_the_run_resumes(tmp_path: Path) -> None:
    # expert thinks for about half a millisecond a decision, so the 92 deals left after the 8th
    # take seconds: the interrupt lands long before the run could finish.
    args = [
        "match",
        "expert",
        "greedy",
        "--hands",
        "200",
        "--workers",
        "2",
        "--quiet",
        "--no-plots",
        "--json",
    ]
    out = tmp_path / "cut"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ginenv.experiments.cli", *args, "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # pytest-xdist workers ignore SIGINT, and an ignored signal stays ignored across exec (Python
        # then installs no KeyboardInterrupt handler): give the child a terminal's default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    results = out / "results.jsonl"
    deadline = time.time() + 90
    while time.time() < deadline and (not results.exists() or len(results.read_text().splitlines()) < 8):
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and stdout == ""
    # The note, where a kernel of the run compiles in this process (a stale cache), is not a stop line.
    assert [line for line in stderr.strip().splitlines() if not is_note(line)] == [
        f"ginenv: writing results to {out}{os.sep}",
        f"ginenv: interrupted; finished deals are kept in {out}: run the same command again to resume",
    ]
    done_before = len(results.read_text().splitlines())
    assert 8 <= done_before < 100
    assert main([*args, "--workers", "1", "--out", str(out)]) == 0
    assert main([*args, "--workers", "1", "--out", str(tmp_path / "full")]) == 0

    def totals(path: Path) -> list[tuple[int, int]]:
        records = [json.loads(x) for x in (path / "results.jsonl").read_text().splitlines()]
        return sorted((r["deal"], r["pair_sum"]) for r in records)

    assert totals(out) == totals(tmp_path / "full") and len(totals(out)) == 100


def test_a_closed_output_pipe_stops_quietly() -> None:
    # `ginenv demo | head -1` once head has left: the reading end of the pipe is closed.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "ginenv.experiments.cli", "demo"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)
    # Nothing on stderr but, in a fresh checkout, the note that the engine compiles once.
    said = [line for line in proc.stderr.splitlines() if not is_note(line)]
    assert proc.returncode == 141 and said == [], proc.stderr


def test_the_table_on_one_deal_says_undefined_not_nan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["match", "greedy", "random", "--hands", "2", "--workers", "1", "--no-plots", "--quiet"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "[n/a, n/a]" in out and "nan" not in out and "inf" not in out
