"""How a long command stops: SIGTERM the way Ctrl-C does, steps that finish before a stop, steps
abandoned at a stop, and a second signal that stops at once.

This module owns the signals of the ``ginenv`` commands that run for long (``match``, ``ladder``,
``rate``, ``train``, ``exploit``). :func:`stop_on_signals` makes SIGINT (Ctrl-C) and SIGTERM
(``kill``, a job scheduler, ``docker stop``) raise :class:`Stopped`, a :class:`KeyboardInterrupt`,
so every ``except KeyboardInterrupt`` and ``finally`` that cleans up after Ctrl-C (the harness's
worker pool, training's rollout workers) runs for SIGTERM too: the run folder keeps every finished
deal, no worker is left writing to a parent that is gone. :func:`finish_first` holds both signals
while a short step that must not be torn runs (writing a checkpoint) and raises the stop right
after it. :func:`abandon_on_signal` is for a long step that can be dropped instead (a PPO update of
many seconds, whose state before it was kept): the signal is acknowledged at once with a line on
standard error, and the step stops at the next point it polls.

The first signal begins a stop; every later one, while the first is being cleaned up after,
raises a :class:`Stopped` with ``again`` set at once (outside :func:`finish_first`), so that a
second Ctrl-C never waits for what the first one was saving beyond the short held steps. A stopped
command exits promptly (:func:`exit_promptly`), with the shell's status: 128 plus the signal's
number, 130 for Ctrl-C, 143 for SIGTERM (:attr:`Stopped.status`).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import signal
import sys
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

__all__ = ["Stopped", "abandon_on_signal", "exit_promptly", "finish_first", "stop_on_signals"]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopped(KeyboardInterrupt):
    """A command stopped by Ctrl-C or SIGTERM, raised where Python raises KeyboardInterrupt.

    ``signum`` is the signal; whoever saved something on the way out may fill in ``kept`` (one
    sentence: what was kept and how to go on), ``resume`` (a checkpoint to continue from) and
    ``rerun`` (False where running the same command again would not go on from what was kept).
    ``again``: a second signal, which stops at once while the first stop is still being cleaned up
    after; it starts with what the first stop had kept by then.
    """

    def __init__(self, signum: int = signal.SIGINT, kept: str | None = None, again: bool = False) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)
        self.kept = kept
        self.resume: str | None = None
        self.rerun = True
        self.again = again

    @property
    def status(self) -> int:
        """The exit status: 128 plus the signal's number (130 for Ctrl-C, 143 for SIGTERM)."""
        return 128 + self.signum

    @property
    def by(self) -> str:
        """What stopped the command, in words (``Ctrl-C`` or ``SIGTERM``)."""
        return "Ctrl-C" if self.signum == signal.SIGINT else signal.Signals(self.signum).name

    @classmethod
    def of(cls, err: BaseException) -> Stopped:
        """``err`` as a :class:`Stopped`: itself, or a plain KeyboardInterrupt (Ctrl-C) wrapped (a
        second one, ``again``, where a stop had begun)."""
        if isinstance(err, Stopped):
            return err
        return _begin(signal.SIGINT) if _watch.first is not None else cls(signal.SIGINT)


class _Watch:
    """The stop the first signal began, while a block of this module watches the signals (the
    outermost forgets it as it ends: a later signal begins another stop). Signal handlers run on
    the main thread only, one at a time."""

    first: Stopped | None = None
    depth = 0


_watch = _Watch()


@contextlib.contextmanager
def _watching() -> Iterator[None]:
    _watch.depth += 1
    try:
        yield
    finally:
        _watch.depth -= 1
        if not _watch.depth:
            _watch.first = None


def _begin(signum: int) -> Stopped:
    """The stop a signal raises: the first one begins the stop; a later one is ``again`` and
    starts with what the first had kept by then."""
    first = _watch.first
    if first is None:
        _watch.first = Stopped(signum)
        return _watch.first
    stop = Stopped(signum, kept=first.kept, again=True)
    stop.resume, stop.rerun = first.resume, first.rerun
    return stop


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise _begin(signum)


def _install(handler: Any) -> dict[int, Any]:
    """Set ``handler`` for SIGINT and SIGTERM, leaving a signal the process ignores ignored (a
    process started in the background by a shell without job control ignores SIGINT); the handlers
    it replaced (none off the main thread, where Python refuses signal handlers)."""
    previous: dict[int, Any] = {}
    for sig in _SIGNALS:
        try:
            now = signal.getsignal(sig)
            previous[sig] = signal.signal(sig, signal.SIG_IGN if now == signal.SIG_IGN else handler)
        except ValueError:  # not the main thread: leave the signals as they are
            break
    return previous


def _restore(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        with contextlib.suppress(ValueError, TypeError):
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


def _say(line: str) -> None:
    """Write ``line`` to standard error from a signal handler: straight to the file descriptor, since
    the handler may have interrupted a write to ``sys.stderr`` (the progress bar's), which Python
    refuses to re-enter."""
    data = f"{line}\n".encode()
    try:
        os.write(sys.stderr.fileno(), data)
    except (AttributeError, ValueError, OSError):  # a replaced stderr (tests capturing it)
        with contextlib.suppress(RuntimeError, ValueError, OSError):
            sys.stderr.write(line + "\n")


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise :class:`Stopped` (the handlers are restored after);
    a signal after the first raises one with ``again`` set.

    A process that ignored SIGINT (started in the background by a shell without job control) keeps
    ignoring it.
    """
    with _watching():
        previous = _install(_raise_stopped)
        try:
            yield
        finally:
            _restore(previous)


@contextlib.contextmanager
def finish_first() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while the block runs; one that came is raised as :class:`Stopped` once
    the block has finished (not when it raised), so a stop never tears the step in two. Keep the
    block short: nothing acknowledges the signal before it ends.

    Signals the process ignores stay ignored; off the main thread the block runs unguarded.
    """
    pending: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        pending.append(signum)

    with _watching():
        previous = _install(hold)
        try:
            yield
        finally:
            _restore(previous)
        if pending:
            raise _begin(pending[0])


@contextlib.contextmanager
def abandon_on_signal(note: Callable[[Stopped], str]) -> Iterator[Callable[[], None]]:
    """Let a long step be abandoned at a point of its choosing: the block gets a ``poll`` to call
    wherever stopping leaves nothing the caller cannot undo (between two minibatches of an update).

    The first SIGINT or SIGTERM within the block is acknowledged at once, ``note(stop)`` written to
    standard error as one line (what is abandoned, what is kept, that the signal again stops at
    once), and the block's next ``poll()`` raises that :class:`Stopped`; if the block ends first,
    the stop is raised as it ends. A second signal raises a :class:`Stopped` with ``again`` set
    wherever it lands. The caller undoes the abandoned step (it kept the state from before it).

    Signals the process ignores stay ignored; off the main thread the block runs unguarded and
    ``poll`` does nothing.
    """
    pending: list[Stopped] = []

    def acknowledge(signum: int, frame: FrameType | None) -> None:
        stop = _begin(signum)
        if stop.again:
            raise stop
        pending.append(stop)
        _say(note(stop))

    def poll() -> None:
        if pending:
            raise pending[0]

    with _watching():
        previous = _install(acknowledge)
        try:
            yield poll
        finally:
            _restore(previous)
        poll()


def exit_promptly() -> None:
    """Let the process, once stopped, exit at once: at exit, without Python's last garbage
    collections, and with SIGINT and SIGTERM back to their default action, so that a signal then
    ends it without a word (where Python would print a traceback from whatever exit code it landed in).

    At exit the interpreter collects the whole heap more than once while it tears the modules
    down, and torch's objects make that slow: a stopped ``ginenv train`` had printed its last line
    at once and then took 6 s to exit on a busy 2-core machine, 1 s with this (2026-12-07). Call it
    once everything the stop keeps is written and closed: objects in reference cycles are then
    freed by the operating system, without their finalizers. It runs at exit (:mod:`atexit`), so
    in a process that goes on (a test calling the command's ``main``) it changes nothing until then.
    """
    atexit.unregister(_exiting)  # once, however many stops a process has seen
    atexit.register(_exiting)


def _exiting() -> None:
    _restore({sig: signal.SIG_DFL for sig in _SIGNALS if signal.getsignal(sig) != signal.SIG_IGN})
    gc.freeze()
