"""SIGTERM ends ``ginenv match``/``ladder``/``rate``/``train`` the way Ctrl-C does
(ginenv.experiments.stopping): one line, exit status 143 (130 for Ctrl-C), no worker traceback or
leaked-semaphore warning, no process left behind; finished deals are kept and the same command
resumes them; ``train`` writes a checkpoint of where it stopped and prints the command that resumes.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ginenv.agents.neural import read_checkpoint
from ginenv.experiments.cli import main
from ginenv.experiments.stopping import Stopped, finish_first, stop_on_signals

from ginenv.compiling import is_note

# What a stop must never print (seen before the fix: each pool worker's BrokenPipeError traceback,
# then the resource tracker's warning).
NEVER = ("Traceback", "BrokenPipeError", "leaked semaphore", "resource_tracker")


def stop_lines(stderr: str) -> list[str]:
    """A command's stderr lines, without the compiling note of a first run (a test process may be
    the first to run a kernel whose cache is stale)."""
    return [line for line in stderr.strip().splitlines() if not is_note(line)]


def start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    """``ginenv ARGS`` as a child in a session of its own (so its whole group can be signalled)."""
    return subprocess.Popen(
        [sys.executable, "-m", "ginenv.experiments.cli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # pytest-xdist workers ignore SIGINT, and an ignored signal stays ignored across exec.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def wait_for_lines(pattern: str, root: Path, lines: int, proc: subprocess.Popen[str]) -> Path:
    """The first file matching ``pattern`` under ``root`` once it holds ``lines`` lines."""
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline:
        for path in root.glob(pattern):
            if len(path.read_bytes().splitlines()) >= lines:
                return path
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    proc.kill()
    raise AssertionError(f"no {pattern} with {lines} lines under {root}: {proc.communicate()}")


def in_session(sid: int) -> list[int]:
    """Processes still alive in session ``sid`` (zombies left out)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] not in ("Z", "X"):
            found.append(int(stat.parent.name))
    return found


def stop(proc: subprocess.Popen[str], sig: int, group: bool) -> tuple[str, str]:
    """Send ``sig`` to the command (to its whole process group with ``group``, as a terminal's
    Ctrl-C or ``docker stop`` do); its stdout and stderr once it has ended, with nothing left running."""
    if group:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    out, err = proc.communicate(timeout=90)
    deadline = time.monotonic() + 10
    while in_session(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert in_session(proc.pid) == [], "the command left processes running"
    for word in NEVER:
        assert word not in err and word not in out, err
    return out, err


def test_sigterm_stops_a_match_in_one_line_and_the_run_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # expert thinks for about half a millisecond a decision: 100 deals take seconds, so the signal
    # lands long before the run could finish.
    args = ["match", "expert", "greedy", "--hands", "200", "--quiet", "--no-plots", "--json"]
    out = tmp_path / "cut"
    proc = start([*args, "--workers", "2", "--out", str(out)], tmp_path)
    results = wait_for_lines("cut/results.jsonl", tmp_path, 8, proc)
    stdout, stderr = stop(proc, signal.SIGTERM, group=False)  # `kill PID`: the parent alone
    assert proc.returncode == 143, stderr
    assert stdout == ""
    assert stop_lines(stderr) == [
        f"ginenv: writing results to {out}{os.sep}",
        f"ginenv: stopped by SIGTERM; finished deals are kept in {out}: run the same command again to resume",
    ]
    kept = len(results.read_text().splitlines())
    assert 8 <= kept < 100
    assert main([*args, "--workers", "1", "--out", str(out)]) == 0
    assert (
        f"resuming {out}: {kept} of 100 deals already finished, {100 - kept} to play"
        in capsys.readouterr().err
    )
    assert len(results.read_text().splitlines()) == 100


def test_sigterm_to_the_whole_group_stops_a_ladder_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "mini.yaml"
    config.write_text("agents: [expert, greedy]\ndeals: 100\nrules: standard\nseed: 3\n")
    args = ["ladder", "--config", str(config), "--quiet", "--no-plots"]
    out = tmp_path / "lad"
    proc = start([*args, "--workers", "2", "--out", str(out)], tmp_path)
    results = wait_for_lines("lad/results.jsonl", tmp_path, 8, proc)
    # A scheduler's stop signals every process of the job, the workers included.
    _, stderr = stop(proc, signal.SIGTERM, group=True)
    assert proc.returncode == 143, stderr
    assert stop_lines(stderr) == [
        f"ginenv: writing results to {out}{os.sep}",
        f"ginenv: stopped by SIGTERM; finished deals are kept in {out}: run the same command again to resume",
    ]
    kept = len(results.read_text().splitlines())
    assert main([*args, "--workers", "1", "--out", str(out)]) == 0
    assert f"resuming {out}: {kept} of 100 deals already finished" in capsys.readouterr().err


def test_sigterm_stops_a_rate_and_the_rate_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "mini.yaml"
    config.write_text("agents: [greedy, random]\ndeals: 60\nrules: standard\nseed: 5\n")
    args = ["rate", "expert", "--config", str(config), "--quiet", "--no-plots"]
    proc = start([*args, "--workers", "2"], tmp_path)
    results = wait_for_lines("results/rate-*/results.jsonl", tmp_path, 6, proc)
    _, stderr = stop(proc, signal.SIGTERM, group=False)
    assert proc.returncode == 143, stderr
    folder = results.parent.relative_to(tmp_path)
    assert stderr.strip().splitlines()[-1] == (
        f"ginenv: stopped by SIGTERM; finished deals are kept in {folder}: "
        "run the same command again to resume"
    )
    # The lines before it are rate's own progress notes: where its two run folders are.
    assert all(line.startswith("ginenv rate: ") for line in stderr.strip().splitlines()[:-1])
    kept = len(results.read_text().splitlines())
    monkeypatch.chdir(tmp_path)
    assert main([*args, "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "ginenv rate: reused the 60 finished deals in results/ladder-" in err
    assert f"resuming {folder}: {kept} of 120 deals already finished" in err


@pytest.mark.parametrize(
    ("sig", "status", "said"),
    [(signal.SIGTERM, 143, "stopped by SIGTERM"), (signal.SIGINT, 130, "interrupted")],
)
def test_a_stopped_train_saves_a_checkpoint_and_resumes_from_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sig: int, status: int, said: str
) -> None:
    runs = tmp_path / "runs"
    settings = [
        "train", "--num-envs", "32", "--set", "num_steps=16", "--set", "hidden=[16]",
        "--set", "card_hidden=8", "--set", "eval_every=0", "--set", "checkpoint_every=0",
        "--set", "threads=1", "--set", f"runs_dir={runs}", "--quiet",
    ]  # fmt: skip
    # Far more steps than it could train; no periodic checkpoint: the stop writes the only one.
    proc = start([*settings, "--total-steps", "100000000"], tmp_path)
    deadline = time.monotonic() + 150
    while not list(runs.glob("*/events.out.tfevents*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(3.0)  # a few updates
    assert not list(runs.glob("*/checkpoints/*.pt"))
    _, stderr = stop(proc, sig, group=sig == signal.SIGINT)
    assert proc.returncode == status, stderr
    [line] = stop_lines(stderr)
    found = re.fullmatch(rf"ginenv: {said}; update (\d+) of \d+ saved in (\S+): resume with (.+)", line)
    assert found, line
    update, checkpoint = int(found[1]), Path(found[2])
    assert checkpoint.name == "latest.pt" and checkpoint.parent.parent.parent == runs
    # The settings are the checkpoint's: the command names the checkpoint only.
    assert found[3] == shlex.join(["ginenv", "train", "--resume", str(checkpoint)])
    assert read_checkpoint(checkpoint).training["progress"]["update"] == update
    # The printed command (with fewer steps, so that it ends) continues from there.
    assert main([*settings, "--total-steps", str(32 * 16 * (update + 1)), "--resume", str(checkpoint)]) == 0
    assert f"resuming {checkpoint.parent.parent} from update {update} " in capsys.readouterr().out
    assert read_checkpoint(checkpoint).training["progress"]["update"] == update + 1


def test_finish_first_holds_a_signal_until_the_step_is_done() -> None:
    before = signal.getsignal(signal.SIGTERM)
    steps = []
    with pytest.raises(Stopped) as err, stop_on_signals():
        with finish_first():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            steps.append("finished")
        steps.append("after the block")
    assert steps == ["finished"] and err.value.status == 143 and err.value.by == "SIGTERM"
    assert signal.getsignal(signal.SIGTERM) == before  # the handlers from before are back
    # Without a held step, SIGTERM lands where it is, as Ctrl-C would.
    with pytest.raises(Stopped) as err, stop_on_signals():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    assert err.value.status == 143
