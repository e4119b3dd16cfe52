"""``ginenv.cores``: the other processes' load read from fed clocks, the thread count it leads to, and
one real busy process read as a core taken."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from ginenv.cores import (
    CHECK_INTERVAL_S,
    AdaptiveThreads,
    Change,
    CoreReading,
    busy_seconds,
    other_load,
    read_cores,
    threads_for,
    usable_cores,
)

STAT = """cpu  300 0 100 1000 10 0 0 0 0 0
cpu0 100 5 50 500 5 2 3 1 0 0
cpu1 200 0 50 500 5 0 0 0 0 0
intr 12345
"""


def test_busy_time_is_every_field_but_idle_and_iowait_of_the_allowed_cores() -> None:
    tick = os.sysconf("SC_CLK_TCK")
    assert busy_seconds(STAT, None) == pytest.approx((161 + 250) / tick)
    assert busy_seconds(STAT, frozenset({1})) == pytest.approx(250 / tick)
    assert busy_seconds("intr 1\n", None) is None


def test_other_load_is_the_cores_busy_less_this_process() -> None:
    before = CoreReading(at=10.0, busy=100.0, own=5.0)
    # 2 s: the cores were busy 3 CPU seconds, 1 of them this process's own
    assert other_load(before, CoreReading(at=12.0, busy=103.0, own=6.0), cores=2) == pytest.approx(1.0)
    # never below 0 (ticks land unevenly) nor above the cores
    assert other_load(before, CoreReading(at=12.0, busy=100.0, own=6.0), cores=2) == 0.0
    assert other_load(before, CoreReading(at=11.0, busy=110.0, own=5.0), cores=2) == 2.0
    assert other_load(before, before, cores=2) == 0.0


@pytest.mark.parametrize(
    ("other", "current", "expected"),
    [
        (0.0, None, 2),  # an idle 2-core machine: both
        (0.3, None, 2),  # a little background work keeps both
        (0.5, None, 1),  # a busy process sharing a core with a spinning thread gets half of it
        (1.0, None, 1),
        (2.0, None, 1),  # never fewer than one
        (0.3, 2, 2),
        (0.7, 2, 1),
        (1.0, 1, 1),
        (0.3, 1, 1),  # inside the band: one stays one
        (0.2, 1, 2),  # the core is free again
    ],
)
def test_two_cores(other: float, current: int | None, expected: int) -> None:
    assert threads_for(other, 2, current) == expected


def test_many_cores_move_by_the_cores_taken_or_freed() -> None:
    assert threads_for(0.0, 16) == 16
    assert threads_for(4.0, 16) == 12
    assert threads_for(4.0, 16, current=12) == 12
    assert threads_for(3.9, 16, current=16) == 12
    assert threads_for(0.1, 16, current=4) == 16
    assert threads_for(13.0, 16, current=16) == 3


class FedClock:
    """Readings handed out in order, at a clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0
        self.busy = 0.0
        self.own = 0.0

    def run(self, seconds: float, own: float, others: float) -> None:
        # ``seconds`` pass with this process on ``own`` cores and other processes on ``others``
        self.now += seconds
        self.own += own * seconds
        self.busy += (own + others) * seconds

    def read(self) -> CoreReading:
        return CoreReading(at=self.now, busy=self.busy, own=self.own)


def test_adaptive_threads_follow_a_load_that_comes_and_goes() -> None:
    clock = FedClock()
    threads = AdaptiveThreads(cores=2, read=clock.read, sleep=lambda s: clock.run(s, own=0.0, others=0.0))
    assert threads.start() == 2
    clock.run(5.0, own=1.5, others=0.5)  # a busy process starts: it gets half a core of the two
    change = threads.check()
    assert change == Change(before=2, after=1, other=0.5, cores=2)
    assert str(change) == "2 -> 1: other processes are using 0.5 of 2 cores"
    clock.run(5.0, own=1.0, others=1.0)
    assert threads.check() is None and threads.threads == 1
    clock.run(0.1, own=1.0, others=0.0)  # too short an interval to read: left to grow
    assert threads.check() is None
    clock.run(CHECK_INTERVAL_S, own=1.0, others=0.0)
    change = threads.check()
    assert change is not None and (change.before, change.after) == (1, 2)
    assert str(change) == "1 -> 2: the cores are free again"
    assert str(Change(2, 1, 1.0, 2)) == "2 -> 1: another process is using a core"


def test_a_start_beside_a_busy_process_chooses_one() -> None:
    clock = FedClock()
    threads = AdaptiveThreads(cores=2, read=clock.read, sleep=lambda s: clock.run(s, own=0.0, others=1.0))
    assert threads.start() == 1


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="pinning a process needs Linux")
def test_a_real_busy_process_reads_as_a_core_taken() -> None:
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        pytest.skip("one core: there is no choice between one thread and more")
    loop = f"import os\nos.sched_setaffinity(0, {{{cores[-1]}}})\nwhile True:\n    pass\n"
    busy = subprocess.Popen([sys.executable, "-c", loop])
    try:
        time.sleep(0.3)  # the loop starts
        before = read_cores()
        time.sleep(0.5)
        load = other_load(before, read_cores())
        # the loop's whole core, whatever else the machine is doing besides
        assert 0.8 <= load <= usable_cores()
        assert AdaptiveThreads(cores=2).start(0.5) == 1
    finally:
        busy.kill()
        busy.wait()
