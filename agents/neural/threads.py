"""torch's intra-op threads in this process: a number used as given, or ``auto``, sized to the free cores.

The one place that applies :mod:`ginenv.cores` to torch. The trainer, its rollout workers (a Ray
actor is a process of its own) and ``ginenv exploit`` set their threads through
:func:`use_threads` and re-check between rollouts and updates through :func:`recheck_threads`.

``auto`` (the training configs' default): as many threads as the cores this process may use
(``os.sched_getaffinity``) less the cores other processes keep busy, chosen after a 0.2 s look at
the machine and re-checked at each :func:`recheck_threads` (at least 0.5 s apart), with a margin
each way so that a load that comes and goes does not flap it; each change prints one line
(``torch threads 2 -> 1: another process is using a core``). On an idle 2-core machine that is two
threads; beside one busy process, one: torch's OpenMP threads spin-wait at every barrier, and two
of them beside a busy process ran a PPO run 15x slower than one thread did. A number is used as
given for the whole run (``0``: torch's own default, not set).

:func:`one_thread` runs a block on one thread and sets the count back after it: a network agent's
forward pass on one observation (:class:`~ginenv.agents.neural.NeuralAgent`) gains nothing from
more, and beside busy processes two threads took 15-42 ms a pass where one took 1.7-2.5 ms
(measured on this project's 2 cores with other work running), in whatever process the agent plays:
the harness's own when it plays in-process, a trainer's evaluation, a notebook.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import torch

from ginenv.cores import AdaptiveThreads

__all__ = ["AUTO", "check_threads_setting", "one_thread", "recheck_threads", "use_threads"]

#: The setting that adapts the threads to the free cores.
AUTO = "auto"

# This process's adaptive count while the setting is AUTO (torch's threads are the process's, so
# is this), else None.
_adaptive: AdaptiveThreads | None = None


def check_threads_setting(value: object) -> str | None:
    """What is wrong with ``value`` as a threads setting (``auto`` or an integer >= 0), or None."""
    if value == AUTO or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return None
    return f"auto or an integer >= 0 (0: torch's default), got {value!r}"


def use_threads(setting: int | str, fresh: bool = False) -> int:
    """Set torch's threads in this process as ``setting`` says (``auto``, a number, 0: leave
    torch's default) and return how many it runs. ``auto`` starts adapting (a 0.2 s look at the
    machine) unless this process already adapts, which goes on as it was; ``fresh``: look again
    even so (a run that starts: the last look may be long past, its load averaged over a while)."""
    global _adaptive
    problem = check_threads_setting(setting)
    if problem is not None:
        raise ValueError(f"threads: {problem}")
    if setting != AUTO:
        _adaptive = None
        if setting:
            torch.set_num_threads(int(setting))
        return torch.get_num_threads()
    if _adaptive is None or fresh:
        _adaptive = AdaptiveThreads()
        _adaptive.start()
    torch.set_num_threads(_adaptive.threads)
    return _adaptive.threads


def recheck_threads() -> int:
    """Where this process adapts its threads, re-read the machine and change them if the load says
    so (one line on stderr when they change); return torch's threads. Otherwise nothing changes."""
    if _adaptive is not None:
        change = _adaptive.check()
        if change is not None:
            print(f"torch threads {change}", file=sys.stderr, flush=True)
        if torch.get_num_threads() != _adaptive.threads:
            # set again also when something else set them meanwhile (an in-process evaluation
            # plays its games on one thread)
            torch.set_num_threads(_adaptive.threads)
    return torch.get_num_threads()


@contextmanager
def one_thread() -> Iterator[None]:
    """torch on one thread inside the block, and on as many as before after it (setting the count
    costs under a microsecond, a forward pass a millisecond)."""
    before = torch.get_num_threads()
    if before == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
