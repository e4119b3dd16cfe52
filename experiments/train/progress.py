"""What ``ginenv train`` says while it runs: the banner, the progress bar's phases and heartbeat,
the running tally of its time and figures, and the closing throughput line (training apart from
evaluation).

A first run compiles the engine (about 30 s), collects its first rollout and runs periodic
evaluations of minutes: the banner comes before any of it, the bar names the phase it is in
(``rollout 12/64``, ``update 5/64``, ``evaluating``) and a heartbeat redraws it (its clock moves)
whenever nothing else did for a few seconds, so the screen never sits still for long.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ginenv.agents.neural.threads import AUTO
from ginenv.experiments.train.args import Args

#: Seconds without a redraw after which the heartbeat redraws the bar.
HEARTBEAT_S = 4.0


def banner(args: Args, run_dir: Path, device: str, precision: str, start_update: int = 0) -> str:
    """The lines ``train`` prints before any work: the run folder, the env steps asked and trained
    (PPO trains whole rollouts: ``total_steps`` rounded up to whole updates), the device, the
    arithmetic ``precision`` came to, the threads and workers, and the evaluation to come."""
    per_update = args.batch_envs_steps
    updates = max(1, -(-args.total_steps // per_update))
    trained = updates * per_update
    plural = "s" if updates != 1 else ""
    rollout = f"{args.num_envs:,} envs x {args.num_steps} steps per rollout"
    if trained == args.total_steps:
        steps = f"{trained:,} env steps: {updates:,} update{plural} of {per_update:,} ({rollout})"
    else:
        steps = (
            f"{args.total_steps:,} env steps asked, {trained:,} trained: {updates:,} update{plural} of "
            f"{per_update:,} ({rollout}); PPO trains whole rollouts, so the steps round up"
        )
    threads = f"{args.threads} torch threads" if args.threads else "torch's default threads"
    if args.threads == AUTO:
        import torch

        threads = f"torch threads auto ({torch.get_num_threads()} now, as the free cores change)"
    workers = f"{args.workers} rollout worker{'s' if args.workers > 1 else ''} ({args.backend})"
    lines = [
        f"ginenv train: run folder {run_dir}",
        f"  {steps}",
        f"  device {device}, precision {precision}"
        + (f" ({args.precision})" if args.precision != precision else "")
        + f", {threads}, {workers}",
    ]
    if start_update:
        lines.append(f"  from update {start_update} of {updates}")
    if args.eval_every:
        lines.append(
            f"  evaluation every {args.eval_every} updates and after the last: {args.eval_deals} "
            f"duplicate deals against each of {', '.join(args.eval_levels)}"
        )
    return "\n".join(lines)


def throughput(steps: int, train_s: float, eval_s: float, evaluations: int) -> str:
    """The closing line: env steps per second of training alone, and the evaluation's own time."""
    rate = steps / max(train_s, 1e-9)
    line = f"ginenv train: {steps:,} env steps in {train_s:.1f} s of training ({rate:,.0f} steps/s)"
    if evaluations:
        line += f"; evaluation {eval_s:.1f} s ({evaluations} round{'s' if evaluations > 1 else ''})"
    return line


class Phases:
    """The training bar's phase (its description) and a heartbeat that redraws it when nothing else
    did for :data:`HEARTBEAT_S` seconds; a disabled bar is left alone. :meth:`close` stops the
    heartbeat (and closes the bar)."""

    def __init__(self, bar: Any, name: str = "ppo") -> None:
        self.bar, self.name = bar, name
        self.first = True  # no update done yet in this process (see step)
        self.lock = threading.Lock()
        self.last = time.monotonic()
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        if not getattr(bar, "disable", True):
            self.thread = threading.Thread(target=self._beat, name="train-heartbeat", daemon=True)
            self.thread.start()

    def phase(self, text: str, redraw_s: float = 0.5) -> None:
        """Name the phase (``rollout 3/64``); the bar redraws when it last did ``redraw_s`` ago."""
        if self.thread is None:
            return
        with self.lock:
            self.bar.set_description_str(f"{self.name} [{text}]", refresh=False)
            if time.monotonic() - self.last >= redraw_s:
                self.bar.refresh()
                self.last = time.monotonic()

    def step(self, **postfix: str) -> None:
        """One update done: the bar moves one and shows ``postfix``. The first update of a process
        restarts the bar's clock from its end: it carried the workers' start and, in a first run,
        numba's compilation (a minute, against seconds an update), which would make the rate and
        the time left wrong for many updates; from the second on they count updates only."""
        with self.lock:
            self.bar.set_description_str(self.name, refresh=False)
            self.bar.set_postfix(postfix, refresh=False)
            if self.first:
                self.first = False
                done = self.bar.n + 1
                self.bar.reset(total=self.bar.total)  # the clock and the rate's average start anew
                self.bar.initial = self.bar.n = done  # what this clock has not seen: no rate yet
                self.bar.refresh()
            else:
                self.bar.update(1)
            self.last = time.monotonic()

    def _beat(self) -> None:
        while not self.stop.wait(HEARTBEAT_S / 4):
            with self.lock:
                if time.monotonic() - self.last >= HEARTBEAT_S:
                    self.bar.refresh()
                    self.last = time.monotonic()

    def close(self) -> None:
        """Stop the heartbeat and close the bar."""
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
            self.thread = None
        self.bar.close()


@dataclass
class Tally:
    """A run's running figures: its seconds per phase, its evaluations' time, and the figures the
    bar shows (the latest of each)."""

    steps_at_start: int  # the env steps trained before this process (a resumed run's)
    started: float = field(default_factory=time.perf_counter)
    #: Worker seconds per parallel lane (env, inference); gather: the rest of collecting (shipping
    #: weights and batches, waiting for the slowest worker); update: advantages and the PPO update.
    timing: dict[str, float] = field(
        default_factory=lambda: {"env": 0.0, "inference": 0.0, "gather": 0.0, "update": 0.0}
    )
    eval_seconds: float = 0.0
    evaluations: int = 0
    figures: dict[str, float] = field(default_factory=dict)

    def collected(self, env_seconds: float, inference_seconds: float, since: float, parallel: int) -> None:
        """A rollout begun at ``since`` (``time.perf_counter``) came back: its workers' seconds,
        summed, over ``parallel`` workers collecting at the same time."""
        self.timing["env"] += env_seconds / parallel
        self.timing["inference"] += inference_seconds / parallel
        lanes = (env_seconds + inference_seconds) / parallel
        self.timing["gather"] += max(0.0, time.perf_counter() - since - lanes)

    def elapsed(self) -> float:
        """Seconds since the run's first rollout began in this process."""
        return time.perf_counter() - self.started

    def steps_per_second(self, global_step: int, elapsed: float) -> float:
        """Env steps per second of training alone, ``elapsed`` seconds in: the evaluations are timed
        apart (the closing line says both)."""
        return (global_step - self.steps_at_start) / max(elapsed - self.eval_seconds, 1e-9)

    def split(self) -> str:
        """The time per phase, in seconds and shares: ``env 1.2 s (30%), ...``."""
        total = sum(self.timing.values()) or 1.0
        return ", ".join(f"{k} {v:.1f} s ({100 * v / total:.0f}%)" for k, v in self.timing.items())
