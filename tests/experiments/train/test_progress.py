"""What ``ginenv train`` says: the banner's arithmetic, the closing line, the bar's phases and heartbeat."""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path

import pytest
from ginenv.experiments.train import progress
from ginenv.experiments.train.args import Args
from ginenv.experiments.train.progress import Phases, banner, throughput
from tqdm import tqdm


def test_the_banner_says_how_the_steps_round_up_to_whole_updates() -> None:
    args = Args(total_steps=200_000, num_envs=1024, num_steps=64, eval_every=10, eval_deals=50)
    text = banner(args, Path("runs/x"), "cpu", "bf16")
    assert text.splitlines()[0] == "ginenv train: run folder runs/x"
    # 200,000 is not a whole number of 65,536-step rollouts: 4 updates train 262,144.
    assert "200,000 env steps asked, 262,144 trained: 4 updates of 65,536" in text
    assert "PPO trains whole rollouts, so the steps round up" in text
    assert "device cpu, precision bf16 (auto)" in text
    assert "evaluation every 10 updates and after the last: 50 duplicate deals" in text
    whole = Args(total_steps=65_536 * 2, num_envs=1024, num_steps=64, eval_every=0)
    exact = banner(whole, Path("r"), "cuda", "fp32")
    assert "131,072 env steps: 2 updates of 65,536" in exact and "round up" not in exact
    assert "evaluation" not in exact and "precision fp32 (auto)" in exact
    assert "from update 3 of 306" in banner(Args(eval_every=0), Path("r"), "cpu", "fp32", start_update=3)


def test_the_closing_line_keeps_evaluation_apart_from_training() -> None:
    line = throughput(100_000, 10.0, 40.0, 2)
    assert "100,000 env steps in 10.0 s of training (10,000 steps/s)" in line
    assert line.endswith("evaluation 40.0 s (2 rounds)")
    assert "evaluation" not in throughput(5, 1.0, 0.0, 0)


class FakeBar:
    """What Phases uses of tqdm's bar, with a count of redraws."""

    def __init__(self) -> None:
        self.disable = False
        self.desc, self.postfix, self.n, self.redraws, self.closed = "", {}, 0, 0, False
        self.total, self.initial = 10, 0
        self.lock = threading.Lock()

    def reset(self, total: int) -> None:
        self.n, self.total = 0, total

    def set_description_str(self, text: str, refresh: bool = True) -> None:
        self.desc = text

    def set_postfix(self, postfix: dict[str, str], refresh: bool = True) -> None:
        self.postfix = postfix

    def update(self, n: int) -> None:
        self.n += n

    def refresh(self) -> None:
        with self.lock:
            self.redraws += 1

    def close(self) -> None:
        self.closed = True


def test_the_bar_names_its_phase_and_a_heartbeat_redraws_it_when_nothing_else_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(progress, "HEARTBEAT_S", 0.2)
    bar = FakeBar()
    phases = Phases(bar)
    try:
        phases.phase("evaluating 3/60 deals", redraw_s=0.0)
        assert bar.desc == "ppo [evaluating 3/60 deals]" and bar.redraws == 1
        # A long evaluation with no deal finished: the heartbeat redraws the bar (its clock moves).
        time.sleep(1.0)
        assert bar.redraws >= 3
        phases.step(kl="0.01")
        assert (bar.n, bar.desc, bar.postfix) == (1, "ppo", {"kl": "0.01"})
    finally:
        phases.close()
    assert bar.closed and phases.thread is None
    # A disabled bar (--quiet) gets no heartbeat and no redraws.
    quiet = FakeBar()
    quiet.disable = True
    idle = Phases(quiet)
    idle.phase("rollout 1/4", redraw_s=0.0)
    assert idle.thread is None and quiet.redraws == 0
    idle.close()


def test_the_first_update_restarts_the_bars_clock_so_its_rate_counts_updates_only() -> None:
    bar = tqdm(total=10, file=io.StringIO(), mininterval=0, smoothing=0)
    phases = Phases(bar)
    try:
        time.sleep(0.6)  # the first update: the workers' start and a first run's compilation
        phases.step()
        assert bar.n == 1 and bar.format_dict["elapsed"] < 0.3
        time.sleep(0.05)
        phases.step()
        shown = bar.format_dict
        # One update seen by the clock, in about 0.05 s: 20 a second, not 2 / 0.65 s.
        assert shown["n"] == 2 and shown["initial"] == 1
        assert (shown["n"] - shown["initial"]) / shown["elapsed"] > 5
    finally:
        phases.close()
