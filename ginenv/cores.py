"""How many of this process's cores the rest of the machine leaves free, and a thread count sized to them.

A pool of threads that meet at a barrier (torch's OpenMP threads, which spin-wait for each other)
falls off a cliff when another process takes one of their cores: the barrier waits a whole
scheduler slice for the thread that was taken off its core. On this project's 2-core machine a PPO
run on two torch threads ran 15x slower beside one busy process than on an idle machine, while one
thread lost a third. This module owns the reading that tells the two cases apart, and the decision
it leads to (:class:`AdaptiveThreads`); it imports nothing but the standard library, and the layers
above apply it (:mod:`ginenv.agents.neural.threads` sets torch's threads from it).

The reading (:func:`read_cores`, :func:`other_load`): on Linux the busy time of the cores this
process may run on (``/proc/stat``'s per-core lines, the cores of ``os.sched_getaffinity``) less
this process's own CPU time over the same interval (``os.times``: every thread of it, its spinning
ones included), which leaves the cores' worth of work that other processes did. Elsewhere the
1-minute load average (``os.getloadavg``) less this process's own rate stands in; where neither
exists the machine reads as free. A container's CPU quota is not read.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CHECK_INTERVAL_S",
    "DROP_MARGIN",
    "RAISE_MARGIN",
    "SAMPLE_S",
    "AdaptiveThreads",
    "Change",
    "CoreReading",
    "busy_seconds",
    "other_load",
    "read_cores",
    "threads_for",
    "usable_cores",
]

#: How long :meth:`AdaptiveThreads.start` watches the machine before the first choice, seconds.
SAMPLE_S = 0.2
#: The shortest interval :meth:`AdaptiveThreads.check` decides on, seconds: a shorter one is left
#: to grow (``/proc/stat`` counts in 10 ms ticks, so a short interval reads coarsely).
CHECK_INTERVAL_S = 0.5
#: Fewer threads once the free cores fall this far below the threads (a busy process that shares
#: a core with one of two spinning threads gets half of it: 0.5 core, so 1.5 free of 2).
DROP_MARGIN = 0.35
#: More threads only once the free cores exceed the threads by this much: the band between the
#: two margins keeps a count from flapping on a load that comes and goes.
RAISE_MARGIN = 0.75

PROC_STAT = Path("/proc/stat")


def usable_cores() -> int:
    """The cores this process may run on (``os.sched_getaffinity`` where there is one, else
    ``os.cpu_count()``), at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class CoreReading:
    """One reading of the clocks :func:`other_load` compares: ``at`` (``time.monotonic``,
    seconds), ``busy`` (CPU seconds the process's cores have been busy since boot, every process's
    work; None where the system does not say) and ``own`` (this process's CPU seconds)."""

    at: float
    busy: float | None
    own: float


def busy_seconds(stat: str, cores: frozenset[int] | None) -> float | None:
    """The busy CPU seconds that ``/proc/stat``'s text ``stat`` gives the ``cores`` (None: every
    core), or None when it lists none of them."""
    # The "cpuN user nice system idle iowait irq softirq steal ..." lines, in clock ticks: busy is
    # all but idle and iowait (steal counts: a hypervisor's other guests took that time).
    ticks = 0
    seen = False
    for line in stat.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu":
            continue
        if cores is not None and int(name[3:]) not in cores:
            continue
        fields = [int(f) for f in rest.split()]
        ticks += sum(fields[:3]) + sum(fields[5:8])
        seen = True
    return ticks / os.sysconf("SC_CLK_TCK") if seen else None


def read_cores() -> CoreReading:
    """The clocks now (see :class:`CoreReading`)."""
    own = os.times()
    busy = None
    try:
        cores = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        busy = busy_seconds(PROC_STAT.read_text(), cores)
    except (OSError, ValueError):
        busy = None  # no /proc (macOS, Windows) or an odd one: the load average stands in
    return CoreReading(at=time.monotonic(), busy=busy, own=own.user + own.system)


def other_load(before: CoreReading, after: CoreReading, cores: int | None = None) -> float:
    """The cores' worth of work that other processes did on this process's cores between two
    readings, from 0 to ``cores`` (default :func:`usable_cores`)."""
    cores = usable_cores() if cores is None else cores
    wall = after.at - before.at
    if wall <= 0:
        return 0.0
    own = (after.own - before.own) / wall
    if before.busy is not None and after.busy is not None:
        others = (after.busy - before.busy) / wall - own
    elif hasattr(os, "getloadavg"):
        others = os.getloadavg()[0] - own  # runnable threads, a minute's average: a rough stand-in
    else:
        others = 0.0
    return min(float(cores), max(0.0, others))


def threads_for(other: float, cores: int, current: int | None = None) -> int:
    """How many threads to run beside ``other`` cores' worth of other processes' work on ``cores``
    cores, from 1 to ``cores``, having run ``current`` (None: a first choice, made as a drop from
    ``cores``). Fewer once the free cores are :data:`DROP_MARGIN` below the threads, more once they
    are :data:`RAISE_MARGIN` above them; in between, ``current`` stays."""
    free = cores - other
    now = cores if current is None else min(max(current, 1), cores)
    if free < now - DROP_MARGIN:
        # the most threads that the free cores carry: n with n < free + DROP_MARGIN
        return max(1, math.ceil(free + DROP_MARGIN) - 1)
    if free > now + RAISE_MARGIN:
        # the most threads with n - 1 + RAISE_MARGIN < free
        return min(cores, math.floor(free - RAISE_MARGIN) + 1)
    return now


@dataclass(frozen=True)
class Change:
    """A thread count changed by :meth:`AdaptiveThreads.check`: ``before``, ``after`` and the
    ``other`` load (cores' worth) of the ``cores`` that led to it; ``str()`` says why in words."""

    before: int
    after: int
    other: float
    cores: int

    def __str__(self) -> str:
        if self.after < self.before:
            if round(self.other) == 1:
                why = "another process is using a core"
            else:
                why = f"other processes are using {self.other:.1f} of {self.cores} cores"
        elif self.other < 0.5:
            why = "the cores are free again"
        else:
            why = f"{self.cores - self.other:.1f} of {self.cores} cores are free again"
        return f"{self.before} -> {self.after}: {why}"


class AdaptiveThreads:
    """A thread count that follows the cores free now: :meth:`start` chooses it from a short watch
    of the machine, each :meth:`check` re-reads the machine since the last one and changes it
    when the other processes' load has crossed a margin (:func:`threads_for`).

    ``cores``: the most threads (default :func:`usable_cores`); ``read``: where readings come from
    (:func:`read_cores`; tests feed their own); ``sleep``: how :meth:`start` waits.
    """

    def __init__(
        self,
        cores: int | None = None,
        read: Callable[[], CoreReading] = read_cores,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """An unstarted count (:attr:`threads` is ``cores`` until :meth:`start`)."""
        self.cores = usable_cores() if cores is None else max(1, int(cores))
        self.threads = self.cores
        self._read = read
        self._sleep = sleep
        self._last: CoreReading | None = None

    def start(self, sample_s: float = SAMPLE_S) -> int:
        """Watch the machine for ``sample_s`` seconds and choose the first count (returned)."""
        first = self._read()
        self._sleep(sample_s)
        self._last = self._read()
        self.threads = threads_for(other_load(first, self._last, self.cores), self.cores)
        return self.threads

    def check(self) -> Change | None:
        """Re-read the machine since the last reading (at least :data:`CHECK_INTERVAL_S` ago, else
        nothing is read) and change :attr:`threads` if the load says so: the change, or None."""
        now = self._read()
        if self._last is None:
            self._last = now  # not started: this reading is the first
            return None
        if now.at - self._last.at < CHECK_INTERVAL_S:
            return None
        other = other_load(self._last, now, self.cores)
        self._last = now
        before = self.threads
        self.threads = threads_for(other, self.cores, before)
        if self.threads == before:
            return None
        return Change(before, self.threads, other, self.cores)
