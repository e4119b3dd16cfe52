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
import threading
import time
from pathlib import Path

import pytest
import torch
from ginenv.agents.neural import read_checkpoint
from ginenv.experiments.cli import main
from ginenv.experiments.stopping import Stopped, abandon_on_signal, finish_first, stop_on_signals

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
    # The lines before it are rate's own progress notes: where its two run folders are (and the
    # compiling note where this process is the first to run a kernel whose cache is stale).
    assert all(line.startswith("ginenv rate: ") for line in stop_lines(stderr)[:-1])
    kept = len(results.read_text().splitlines())
    monkeypatch.chdir(tmp_path)
    assert main([*args, "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "ginenv rate: reused the 60 finished deals in results/ladder-" in err
    assert f"resuming {folder}: {kept} of 120 deals already finished" in err


class Running:
    """``ginenv ARGS`` as a child in a session of its own, its output (stdout and stderr together)
    read as it comes and timed: to signal it in the phase its progress bar names, and to time what
    it says after."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ginenv.experiments.cli", *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as start() says
        )
        self.text = ""
        self.came: list[tuple[int, float]] = []  # (length of the text so far, when it came)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := os.read(self.proc.stdout.fileno(), 1 << 16):
            self.text += chunk.decode(errors="replace")
            self.came.append((len(self.text), time.monotonic()))

    def wait_for(self, words: str, timeout: float = 150) -> float:
        """When the output first held ``words`` (waiting for them)."""
        deadline = time.monotonic() + timeout
        while (at := self.text.find(words)) < 0:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.proc.kill()
                raise AssertionError(f"never said {words!r}: {self.text}")
            time.sleep(0.005)
        return next(t for length, t in self.came if length >= at + len(words))

    def send(self, sig: int) -> float:
        """Send ``sig`` to the child's whole process group, as a terminal's Ctrl-C does; when."""
        os.killpg(self.proc.pid, sig)
        return time.monotonic()

    def ended(self) -> float:
        """When the child exited (waiting for it); nothing of it is left running, nor a traceback."""
        self.proc.wait(timeout=90)
        at = time.monotonic()
        self.reader.join(timeout=10)
        assert in_session(self.proc.pid) == [], "the command left processes running"
        for word in NEVER:
            assert word not in self.text, self.text
        return at

    def stop_lines(self) -> list[str]:
        """What it said of the stop: its lines ``ginenv: ...`` (the progress bar's and the compiling
        note's left out)."""
        pieces = re.split(r"[\r\n]", self.text)
        return [line for line in pieces if line.startswith("ginenv: ") and not is_note(line)]


# A train as small as the others here: 32 slots, small networks, no evaluation, no periodic
# checkpoint (a stop writes the only one), the progress bar on (it names the phase to stop in).
TINY = [
    "train", "--num-envs", "32", "--set", "hidden=[16]", "--set", "card_hidden=8", "--set", "eval_every=0",
    "--set", "checkpoint_every=0", "--set", "threads=1",
]  # fmt: skip


def test_a_train_stopped_in_a_rollout_saves_its_last_update_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    # Long rollouts (32 x 256 env steps), short updates: the stop lands in rollout 2, at once.
    settings = [*TINY, "--set", "num_steps=256", "--set", "update_epochs=1", "--set", f"runs_dir={runs}"]
    run = Running([*settings, "--total-steps", "100000000"], tmp_path)
    run.wait_for("[rollout 2/")
    sent = run.send(signal.SIGTERM)  # `kill`, as a scheduler or `docker stop` sends it
    assert run.ended() - sent < 5.0
    assert run.proc.returncode == 143, run.text
    [line] = run.stop_lines()  # a rollout is dropped at once: nothing to announce first
    found = re.fullmatch(
        r"ginenv: stopped by SIGTERM; update 1 of \d+ saved in (\S+): resume with (.+)", line
    )
    assert found, line
    checkpoint = Path(found[1])
    assert checkpoint.name == "latest.pt" and checkpoint.parent.parent.parent == runs
    # The settings are the checkpoint's: the command names the checkpoint only.
    assert found[2] == shlex.join(["ginenv", "train", "--resume", str(checkpoint)])
    assert read_checkpoint(checkpoint).training["progress"]["update"] == 1
    # The printed command (with fewer steps, so that it ends) continues from there.
    assert main([*settings, "--quiet", "--total-steps", str(32 * 256 * 2), "--resume", str(checkpoint)]) == 0
    assert f"resuming {checkpoint.parent.parent} from update 1 " in capsys.readouterr().out
    assert read_checkpoint(checkpoint).training["progress"]["update"] == 2


def test_ctrl_c_in_an_update_abandons_it_at_once_and_saves_the_update_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two quick updates, then a run from their checkpoint whose updates never end (10^6 epochs).
    settings = [*TINY, "--set", "num_steps=16", "--set", f"runs_dir={tmp_path / 'before'}"]
    assert main([*settings, "--quiet", "--set", "update_epochs=1", "--total-steps", str(32 * 16 * 2)]) == 0
    [before] = (tmp_path / "before").glob("*/checkpoints/latest.pt")
    runs = tmp_path / "runs"
    endless = [*settings, "--set", "update_epochs=1000000", "--set", f"runs_dir={runs}"]
    run = Running([*endless, "--total-steps", "100000000", "--branch", str(before)], tmp_path)
    run.wait_for("[update 3/")
    time.sleep(0.5)  # well into the update (its bar is drawn just before it)
    os.kill(run.proc.pid, signal.SIGINT)
    sent = time.monotonic()
    said = run.wait_for("ginenv: Ctrl-C: abandoning update 3 in flight, saving update 2; ")
    assert said - sent < 1.0  # at once, though the update would never end
    assert run.ended() - sent < 5.0
    assert run.proc.returncode == 130, run.text
    first, last = run.stop_lines()
    assert first == (
        "ginenv: Ctrl-C: abandoning update 3 in flight, saving update 2; "
        "Ctrl-C again stops at once without saving"
    )
    found = re.fullmatch(r"ginenv: interrupted; update 2 of \d+ saved in (\S+): resume with .+", last)
    assert found, last
    # The checkpoint holds update 2 as it was before update 3 began: the networks and Adam's
    # moments as the run started from, not as the minibatches of update 3 left them.
    saved, source = read_checkpoint(found[1]), read_checkpoint(before)
    assert saved.training["progress"] == source.training["progress"]
    assert saved.training["progress"]["update"] == 2
    for name, tensor in source.policy.state_dict().items():
        assert torch.equal(saved.policy.state_dict()[name], tensor), name
    for part in ("critic", "aux"):
        for name, tensor in source.training[part].items():
            assert torch.equal(saved.training[part][name], tensor), (part, name)
    moments = saved.training["optimizer"]["state"]
    for index, state in source.training["optimizer"]["state"].items():
        for name in ("exp_avg", "exp_avg_sq", "step"):
            assert torch.equal(moments[index][name], state[name]), (index, name)


def test_a_second_ctrl_c_stops_at_once_without_saving(tmp_path: Path) -> None:
    # One minibatch an epoch of wide layers: a minibatch takes a second or more, so the second
    # Ctrl-C comes while the first waits for the end of it.
    slow = [
        *TINY, "--set", "num_steps=16", "--num-envs", "256", "--set", "hidden=[1024, 1024]",
        "--set", "num_minibatches=1", "--set", "update_epochs=1000000", "--set", "opponents={greedy: 1.0}",
        "--set", f"runs_dir={tmp_path / 'runs'}", "--total-steps", "100000000",
    ]  # fmt: skip
    run = Running(slow, tmp_path)
    run.wait_for("[update 1/")
    run.send(signal.SIGINT)  # at the start of the update's first minibatch: the longest wait
    run.wait_for("ginenv: Ctrl-C: abandoning update 1 in flight")
    again = run.send(signal.SIGINT)
    assert run.wait_for("ginenv: interrupted again; nothing saved") - again < 1.0
    assert run.ended() - again < 5.0
    assert run.proc.returncode == 130, run.text
    assert len(run.stop_lines()) == 2
    [folder] = (tmp_path / "runs").iterdir()
    assert list((folder / "checkpoints").iterdir()) == []  # nothing written, not even in part


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


def note(stop: Stopped) -> str:
    return f"abandoning the step ({stop.by})"


def test_a_signal_in_an_abandonable_step_is_said_at_once_and_raised_at_its_next_poll(
    capfd: pytest.CaptureFixture[str],
) -> None:
    before = signal.getsignal(signal.SIGTERM)
    steps = []
    with pytest.raises(Stopped) as err, stop_on_signals(), abandon_on_signal(note) as poll:
        poll()  # nothing yet
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        steps.append("said, not raised where it landed")
        assert capfd.readouterr().err == "abandoning the step (SIGTERM)\n"
        poll()
        steps.append("after the poll")
    assert steps == ["said, not raised where it landed"]
    assert err.value.status == 143 and not err.value.again
    assert signal.getsignal(signal.SIGTERM) == before
    # A signal after the step's last poll is raised as the step ends.
    with pytest.raises(Stopped), stop_on_signals():
        with abandon_on_signal(note):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            steps.append("finished")
        steps.append("after the step")
    assert steps[1:] == ["finished"]


def test_a_second_signal_stops_at_once_with_what_the_first_had_kept() -> None:
    # In the abandoned step, before its poll: at once, nothing kept yet.
    with pytest.raises(Stopped) as err, stop_on_signals(), abandon_on_signal(note):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    assert err.value.again and err.value.kept is None and err.value.status == 143
    # While the first stop is cleaned up after, once it has kept something: that, again.
    with pytest.raises(Stopped) as err, stop_on_signals():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        except Stopped as first:
            assert not first.again
            first.kept, first.resume = "update 2 saved", "latest.pt"
            # A save held by finish_first is not torn by it: the second comes after it.
            saved = []
            with pytest.raises(Stopped) as held, finish_first():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)
                saved.append("whole")
            assert saved == ["whole"] and held.value.again
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    assert err.value.again and (err.value.kept, err.value.resume) == ("update 2 saved", "latest.pt")
    # Once the block that watched the signals has ended, the stop is over: the next is a first.
    with pytest.raises(Stopped) as err, stop_on_signals():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    assert not err.value.again


def test_a_stopped_process_exits_without_the_last_collections_and_a_signal_then_ends_it_quietly() -> None:
    # An exit step that comes after exit_promptly's (atexit runs the last registered first) sees
    # the heap frozen, and its Ctrl-C ends the process by the signal instead of a traceback.
    code = (
        "import atexit, gc, os, signal, time\n"
        "from ginenv.experiments.stopping import exit_promptly\n"
        "atexit.register(lambda: (print(gc.get_freeze_count() > 0, flush=True), "
        "os.kill(os.getpid(), signal.SIGINT), time.sleep(5)))\n"
        "exit_promptly()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (-signal.SIGINT, "True\n", "")
