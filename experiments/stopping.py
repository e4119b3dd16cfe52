"""How a long command stops: SIGTERM the way Ctrl-C does, and steps that finish before a stop.

This module owns the signals of the ``ginenv`` commands that run for long (``match``, ``ladder``,
``rate``, ``train``). :func:`stop_on_signals` makes SIGINT (Ctrl-C) and SIGTERM (``kill``, a job
scheduler, ``docker stop``) raise :class:`Stopped`, a :class:`KeyboardInterrupt`, so every
``except KeyboardInterrupt`` and ``finally`` that cleans up after Ctrl-C (the harness's worker pool,
training's rollout workers) runs for SIGTERM too: the run folder keeps every finished deal, no worker
is left writing to a parent that is gone. :func:`finish_first` holds both signals while a step that
must not be torn runs (a PPO update, writing a checkpoint) and raises the stop right after it.

Exit statuses follow the shell's convention, 128 plus the signal's number: 130 for Ctrl-C, 143 for
SIGTERM (:attr:`Stopped.status`).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType
from typing import Any

__all__ = ["Stopped", "finish_first", "stop_on_signals"]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopped(KeyboardInterrupt):
    """A command stopped by Ctrl-C or SIGTERM, raised where Python raises KeyboardInterrupt.

    ``signum`` is the signal; whoever saved something on the way out may fill in ``kept`` (one
    sentence: what was kept and how to go on) and ``resume`` (a checkpoint to continue from).
    """

    def __init__(self, signum: int = signal.SIGINT, kept: str | None = None) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)
        self.kept = kept
        self.resume: str | None = None

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
        """``err`` as a :class:`Stopped`: itself, or a plain KeyboardInterrupt (Ctrl-C) wrapped."""
        return err if isinstance(err, Stopped) else cls(signal.SIGINT)


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise Stopped(signum)


def _install(handler: Any) -> dict[int, Any]:
    """Set ``handler`` for SIGINT and SIGTERM; the handlers it replaced (none off the main thread,
    where Python refuses signal handlers)."""
    previous: dict[int, Any] = {}
    for sig in _SIGNALS:
        try:
            previous[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread: leave the signals as they are
            break
    return previous


def _restore(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        with contextlib.suppress(ValueError, TypeError):
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise :class:`Stopped` (the handlers are restored after).

    A process that ignored SIGINT (started in the background by a shell without job control) keeps
    ignoring it.
    """
    ignored_int = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    previous = _install(_raise_stopped)
    if ignored_int and signal.SIGINT in previous:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        _restore(previous)


@contextlib.contextmanager
def finish_first() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while the block runs; one that came is raised as :class:`Stopped` once
    the block has finished (not when it raised), so a stop never tears the step in two.

    Signals the process ignores stay ignored; off the main thread the block runs unguarded.
    """
    pending: list[int] = []
    ignored = {sig for sig in _SIGNALS if signal.getsignal(sig) == signal.SIG_IGN}

    def hold(signum: int, frame: FrameType | None) -> None:
        if signum not in ignored:
            pending.append(signum)

    previous = _install(hold)
    try:
        yield
    finally:
        _restore(previous)
    if pending:
        raise Stopped(pending[0])
