"""exec: agents, players that are processes in any language, spoken to in JSON lines.

This module owns the one door between ginenv and an out-of-process player: :class:`ExternalAgent`
starts the command of an ``exec:COMMAND`` agent spec, sends it what its seat observes and reads back
its moves, and :func:`check_command` refuses a command that cannot run before any game is played.
The protocol is specified for client authors in ``docs/PROTOCOL.md``; in brief, one JSON object per
line (UTF-8) on the client's stdin:

- ``{"type": "hand", "protocol": 1, "hand_number": 1, "seed": 123, "rules": {...}}`` at the start of
  every hand (``Agent.reset``); no reply.
- ``{"type": "act", "observation": {...}, "legal": ["draw_stock", "draw_discard"], "time_limit": 10.0}``
  at every decision; the client answers one line on its stdout, the action name (``discard 7h``) or
  ``{"action": "discard 7h"}``, within ``time_limit`` seconds.
- ``{"type": "end"}`` when the game is over (``close``); then stdin is closed and the process ended.

The observation sent is :func:`ginenv.observation.decode` of the seat's own observation vector with
the card planes as lists of card names (:func:`observation_message`): nothing from the env, the
engine or the other seat reaches the client but what that vector and its action mask hold.

A client that hangs past the time limit, dies, or answers something that is not a legal move makes
:meth:`ExternalAgent.act` raise :class:`~ginenv.agents.base.AgentForfeit`; the process is killed and
every later call raises the same forfeit at once. The arena scores the forfeit.

Processes: the command is split with :func:`shlex.split` and started without a shell at the first
``reset``, in a new session (its own process group) so that ``close`` and a forfeit kill the client
and any children it spawned, inside a sandbox (:mod:`ginenv.agents.sandbox`: basic by default, a
fresh folder, a cleared environment and limits; strict on a harness's secret deals). stderr is
drained by a thread (a chatty client never blocks on it) and its last lines explain a death.
Tested on Linux. Windows is untested: the time limit is written to work there (threads, no
``select``), but only the client itself is killed, not its children.
"""

from __future__ import annotations

import collections
import contextlib
import json
import math
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Iterable
from typing import Any, NoReturn

import numpy as np
from ginenv.agents.base import Agent, AgentForfeit, Observation
from ginenv.agents.sandbox import Launch, Sandbox, remove_scratch, start

from ginenv.actions import UnknownActionError, action_id, action_name
from ginenv.cards import CARD_NAMES, cards_of
from ginenv.observation import PLANES, decode
from ginenv.rules import Rules

#: Version of the protocol, sent in every ``hand`` message; bumped when a message changes meaning.
PROTOCOL_VERSION = 1
#: Seconds a client has for one decision, from the request sent to its reply line read.
DEFAULT_TIME_LIMIT = 10.0
#: Extra seconds for the first decision of a process: an interpreter, a JVM or a network loading
#: its weights starts up inside it (the process is started at the first ``reset``, read only then).
DEFAULT_STARTUP_TIME = 10.0
#: Seconds a client has to exit by itself after ``{"type": "end"}`` before its process group is killed.
CLOSE_GRACE = 1.0
#: Longest reply line read (characters); a longer one is a malformed answer.
MAX_REPLY_CHARS = 65536
#: Lines of stderr kept to explain a death.
STDERR_LINES = 20

#: Most lines, and characters, of a client's stderr quoted in a forfeit reason (its error and the
#: first frames of its stack: :func:`stderr_excerpt`).
EXCERPT_LINES = 5
EXCERPT_CHARS = 500

# A runtime's closing banner (not the client's words): Node.js prints its version after an error.
_BANNER = re.compile(r"^Node\.js v\d+(\.\d+)*$")
# The headline of an error: JavaScript/Python/Java exception names, Go and Rust panics.
_ERROR_HEADLINE = re.compile(
    r"^(Uncaught\s+)?([\w$]+[.:])*[\w$]*(Error|Exception)\b|^Exception in thread\b"
    r"|^panic:|^thread '.*' panicked\b|^(fatal )?error(\[\w+\])?:"
)
# Interpreters by extension, for the hint at a script that is not executable.
_INTERPRETERS = {
    ".js": ["node"], ".mjs": ["node"], ".cjs": ["node"], ".py": ["python"], ".rb": ["ruby"],
    ".pl": ["perl"], ".sh": ["sh"], ".bash": ["bash"], ".jl": ["julia"], ".r": ["Rscript"],
    ".lua": ["lua"], ".php": ["php"], ".jar": ["java", "-jar"],
}  # fmt: skip

# Longest piece of client text quoted in a forfeit reason (reasons are one line in a report).
_QUOTE_CHARS = 120
_STDERR_LINE_CHARS = 200
# First words of action names.
_VERBS = ("draw_stock", "draw_discard", "pass", "big_gin", "discard", "knock")


def _quote(text: str) -> str:
    """``repr`` of client text, cut to :data:`_QUOTE_CHARS` (a reason stays one short line)."""
    if len(text) > _QUOTE_CHARS:
        return repr(text[:_QUOTE_CHARS]) + "..."
    return repr(text)


def _split(command: str) -> list[str]:
    """The argument list of a command (POSIX shell words), or ValueError in one line."""
    if not isinstance(command, str):
        raise ValueError(f"a command is a string, got {type(command).__name__}")
    try:
        argv = shlex.split(command, posix=True)
    except ValueError as err:
        raise ValueError(f"cannot split the command {command!r} into words: {err}") from None
    if not argv:
        raise ValueError("the command is empty; give one, e.g. exec:python my_client.py")
    return argv


def _not_legal(reply: str, legal_names: list[str], hint: str = "") -> str:
    """The forfeit reason of a reply that names no legal action."""
    return (
        f"answered {_quote(reply)}, which is not a legal action here (legal: {', '.join(legal_names)}{hint})"
    )


def stderr_excerpt(
    lines: Iterable[str], most_lines: int = EXCERPT_LINES, most_chars: int = EXCERPT_CHARS
) -> str:
    """The meaningful end of a client's stderr, for a forfeit reason: at most ``most_lines`` lines,
    joined by `` | ``, cut to ``most_chars`` characters.

    Blank lines and a runtime's closing banner (Node.js prints its version, ``Node.js v20.20.2``,
    after an uncaught error) are left out. When an error's headline is there (``Error: ...``,
    ``ValueError: ...``, ``panic: ...``, ``Exception in thread ...``), the excerpt starts at the last
    one and takes what follows it (Node.js and Java print the stack below the error), else it ends
    with it (Python prints the error last, below its traceback).
    """
    kept = [line.strip() for line in lines if line.strip() and not _BANNER.match(line.strip())]
    heads = [i for i, line in enumerate(kept) if _ERROR_HEADLINE.match(line)]
    if heads:
        start = max(0, min(heads[-1], len(kept) - most_lines))
        kept = kept[start : start + most_lines]
    else:
        kept = kept[-most_lines:]
    text = " | ".join(kept)
    return text if len(text) <= most_chars else text[: most_chars - 3] + "..."


def interpreter_hint(path: str) -> str:
    """The ``exec:`` spec that runs the script ``path`` through its interpreter: from the file's
    ``#!`` line, else from its extension (``.js``: ``exec:node FILE``, ``.py``: ``exec:python FILE``);
    ``exec:INTERPRETER FILE`` when neither says."""
    interpreter: list[str] | None = None
    with contextlib.suppress(OSError, UnicodeDecodeError):
        with open(path, encoding="utf-8") as fh:
            first = fh.readline(256)
        if first.startswith("#!"):
            words = first[2:].split()
            if words and os.path.basename(words[0]) == "env":
                words = [w for w in words[1:] if not w.startswith("-")][:1]
            interpreter = [os.path.basename(words[0]), *words[1:]] if words else None
    if interpreter is None:
        interpreter = _INTERPRETERS.get(os.path.splitext(path)[1].lower(), ["INTERPRETER"])
    return "exec:" + shlex.join([*interpreter, path])


def check_command(command: str) -> None:
    """Refuse a command that cannot be started: raise ValueError with a one-line message if it is
    empty, cannot be split into words, or its executable is neither on PATH nor an executable file.

    It does not start the command (a client may be slow to start or have side effects).
    """
    exe = _split(command)[0]
    if shutil.which(exe) is not None:
        return
    if os.path.isfile(exe):
        # An existing file that is not executable would fail at every game with "permission denied".
        raise ValueError(
            f"{exe!r} is not executable: chmod +x it, or name its interpreter ({interpreter_hint(exe)})"
        )
    if os.path.isdir(exe):
        raise ValueError(f"{exe!r} is a folder, not an executable")
    where = "no such file" if os.sep in exe or (os.altsep and os.altsep in exe) else "not found on PATH"
    raise ValueError(f"executable {exe!r} of the command {command!r}: {where}")


def observation_message(observation: Observation) -> dict[str, Any]:
    """The ``observation`` of an ``act`` message: :func:`~ginenv.observation.decode` of the seat's
    vector, scalars as ints, flags as bools, the phase by name and each card plane as a sorted list
    of card names (``top`` a name or ``None``); ``opponent_hand`` only in oracle mode."""
    view = decode(observation["observation"])
    message: dict[str, Any] = {
        "phase": view.phase.name.lower(),
        "stock_size": view.stock_size,
        "knock_limit": view.knock_limit,
        "own_score": view.own_score,
        "opponent_score": view.opponent_score,
        "target": view.target,
        "is_dealer": view.is_dealer,
        "to_move": view.to_move,
    }
    for plane in PLANES:
        if plane == "top":
            message["top"] = None if view.top is None else CARD_NAMES[view.top]
        else:
            message[plane] = [CARD_NAMES[c] for c in cards_of(getattr(view, plane))]
    if view.opponent_hand is not None:
        message["opponent_hand"] = [CARD_NAMES[c] for c in cards_of(view.opponent_hand)]
    return message


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the client's process group (the client and the children it spawned); on Windows
    the client only. Safe to call on a process that has already exited."""
    if os.name == "posix":
        # The client leads its own session (start_new_session), so its group id is its pid; the
        # pid stays reserved while the client is an unreaped zombie or any child lives in it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    else:
        with contextlib.suppress(OSError):
            proc.kill()


def _finalize(proc: subprocess.Popen[str]) -> None:
    # Garbage collection or interpreter exit without close(): leave no client running.
    _kill_group(proc)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=1.0)


class ExternalAgent(Agent):
    """A player that is a process speaking the JSON line protocol of ``docs/PROTOCOL.md``.

    The harness builds a fresh one for every game (a hand or a match) and calls :meth:`close` at its
    end, so a client never carries anything from one game (the first deal of a duplicate pair) into
    the next. Not thread-safe: one game drives it.
    """

    name = "exec"

    def __init__(
        self,
        command: str,
        seed: int | None = None,
        rules: Rules | None = None,
        time_limit: float = DEFAULT_TIME_LIMIT,
        startup_time: float = DEFAULT_STARTUP_TIME,
        sandbox: Sandbox | None = None,
    ) -> None:
        """``command``: the client's command line (POSIX shell words, run without a shell).
        ``seed`` seeds the hand seeds sent when ``reset`` gets none. ``time_limit``: seconds per
        decision; ``startup_time``: extra seconds for the process's first decision. ``sandbox``:
        where the client runs (:mod:`ginenv.agents.sandbox`; default the basic one: a fresh folder,
        a cleared environment, limits)."""
        super().__init__(seed=seed, rules=rules)
        self.argv = _split(command)
        self.sandbox = Sandbox() if sandbox is None else sandbox
        self._launch: Launch | None = None
        self.command = command
        if not (time_limit > 0 and math.isfinite(time_limit)):
            raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
        if not (startup_time >= 0 and math.isfinite(startup_time)):
            raise ValueError(f"startup_time must be >= 0 seconds, got {startup_time!r}")
        self.time_limit = float(time_limit)
        self.startup_time = float(startup_time)
        self.name = f"exec:{command}"
        #: The reason of the forfeit once the client forfeited, else ``None``.
        self.forfeit_reason: str | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[tuple[str, str]] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._threads: list[threading.Thread] = []
        self._finalizer: weakref.finalize | None = None
        self._hands = 0
        self._decisions = 0
        self._closed = False

    # ------------------------------------------------------------------ the agent interface

    @property
    def pid(self) -> int | None:
        """Process id of the client, ``None`` before the first ``reset``."""
        return None if self._proc is None else self._proc.pid

    @property
    def stderr_tail(self) -> list[str]:
        """The last lines the client wrote to its stderr (at most :data:`STDERR_LINES`)."""
        return list(self._stderr)

    def reset(self, seed: int | None = None) -> None:
        """Start of a hand: start the client at the first one, then send it a ``hand`` message.

        The message's seed is ``seed``, or one drawn from the agent's generator when ``None`` (so
        the client always gets an integer to seed its own generator with). Raises
        :class:`AgentForfeit` when the process cannot be started or no longer reads its stdin.
        """
        self._check_playing()
        super().reset(seed)
        hand_seed = int(seed) if seed is not None else int(self.rng.integers(2**32))
        if self._proc is None:
            self._start()
        self._hands += 1
        self._send(
            {
                "type": "hand",
                "protocol": PROTOCOL_VERSION,
                "hand_number": self._hands,
                "seed": hand_seed,
                "rules": self.rules.to_dict(),
            }
        )

    def act(self, observation: Observation) -> int:
        """Send the decision to the client and return the legal action id it answers; raise
        :class:`AgentForfeit` if it does not answer in time, died, or answered no legal action."""
        self._check_playing()
        if self._proc is None:
            # The harness resets before every hand; tolerate an agent driven without it.
            self.reset(None)
        mask = np.asarray(observation["action_mask"])
        legal = [int(a) for a in np.flatnonzero(mask)]
        legal_names = [action_name(a) for a in legal]
        limit = self.time_limit + (self.startup_time if self._decisions == 0 else 0.0)
        self._decisions += 1
        # A line already waiting was written when no decision was asked: a client that logs to
        # stdout, or answers twice. Taking it as this reply would play a move chosen for nothing.
        self._check_no_stray_line()
        started = time.monotonic()
        self._send(
            {
                "type": "act",
                "observation": observation_message(observation),
                "legal": legal_names,
                "time_limit": limit,
            }
        )
        reply = self._read_reply(started + limit, limit)
        action = self._parse(reply, legal_names)
        if action not in legal:
            self._forfeit(_not_legal(reply, legal_names))
        return action

    def close(self) -> None:
        """End of the game: send ``{"type": "end"}``, close stdin, give the client
        :data:`CLOSE_GRACE` seconds to exit, then kill its process group. Idempotent."""
        if self._closed:
            return
        self._closed = True
        proc = self._proc
        if proc is None or self.forfeit_reason is not None:
            return
        # A client that already exited cannot read the end message: nothing to say, still reap it.
        with contextlib.suppress(OSError, ValueError):
            self._write({"type": "end"})
        with contextlib.suppress(OSError, ValueError):
            assert proc.stdin is not None
            proc.stdin.close()
        self._exited(CLOSE_GRACE)
        self._stop()

    def __repr__(self) -> str:
        return f"ExternalAgent({self.command!r}, time_limit={self.time_limit})"

    # ------------------------------------------------------------------ the process

    def _start(self) -> None:
        kwargs: dict[str, Any] = {}
        if os.name == "posix":
            kwargs["start_new_session"] = True
        else:  # pragma: no cover - Windows
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
        try:
            proc, self._launch = start(
                self.argv,
                self.sandbox,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                # Bytes that are not UTF-8 become U+FFFD and then fail as an unknown action.
                errors="replace",
                bufsize=1,
                **kwargs,
            )
        except (OSError, ValueError) as err:
            self._forfeit(f"could not be started: {err}")
        self._proc = proc
        self._finalizer = weakref.finalize(self, _finalize, proc)
        for target, label in ((self._read_stdout, "stdout"), (self._read_stderr, "stderr")):
            thread = threading.Thread(
                target=target, args=(proc,), name=f"exec-{label}-{proc.pid}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def _read_stdout(self, proc: subprocess.Popen[str]) -> None:
        """Reader thread: every line of the client's stdout into the queue, then ``("eof", "")``."""
        assert proc.stdout is not None
        try:
            while True:
                line = proc.stdout.readline(MAX_REPLY_CHARS + 1)
                if not line:
                    break
                if not line.endswith("\n") and len(line) > MAX_REPLY_CHARS:
                    self._lines.put(("long", line[:_QUOTE_CHARS]))
                    return
                self._lines.put(("line", line.rstrip("\r\n")))
        except (OSError, ValueError):
            pass
        self._lines.put(("eof", ""))

    def _read_stderr(self, proc: subprocess.Popen[str]) -> None:
        """Drain thread: reads stderr as raw bytes in chunks (never a whole line at once, which a
        client writing megabytes without a newline would make huge) and keeps the last lines."""
        assert proc.stderr is not None
        fd = proc.stderr.fileno()
        partial = b""
        try:
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                *lines, partial = (partial + chunk).split(b"\n")
                for raw in lines[-STDERR_LINES:]:
                    self._stderr.append(raw[:_STDERR_LINE_CHARS].decode("utf-8", "replace").rstrip())
                # Keep the start of an endless line only: memory stays bounded.
                partial = partial[:_STDERR_LINE_CHARS]
        except OSError:
            pass
        if partial:
            self._stderr.append(partial.decode("utf-8", "replace").rstrip())

    def _exited(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the client to exit, without reaping it (its pid, the group
        id, must stay reserved until the group is killed); whether it exited."""
        proc = self._proc
        assert proc is not None
        deadline = time.monotonic() + timeout
        while True:
            if proc.returncode is not None:
                return True
            if hasattr(os, "waitid"):
                try:
                    if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                        return True
                except ChildProcessError:
                    return True
            elif proc.poll() is not None:  # pragma: no cover - Windows
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)

    def _stop(self) -> int | None:
        """Kill the process group, reap the client, let the reader threads finish; the client's
        exit status (negative: killed by that signal), ``None`` if it could not be reaped."""
        proc = self._proc
        assert proc is not None
        _kill_group(proc)
        try:
            status: int | None = proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            status = None
        if self._finalizer is not None:
            self._finalizer.detach()
        for thread, stream in zip(self._threads, (proc.stdout, proc.stderr), strict=False):
            # A grandchild that left the group may hold the pipe open: never close a stream a
            # thread still reads (that would block on its lock), leave it to the daemon thread.
            thread.join(timeout=1.0)
            if not thread.is_alive() and stream is not None:
                stream.close()
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        remove_scratch(self._launch)
        return status

    # ------------------------------------------------------------------ messages

    def _check_playing(self) -> None:
        if self.forfeit_reason is not None:
            raise AgentForfeit(self.forfeit_reason)
        if self._closed:
            raise AgentForfeit("the agent was closed: the harness builds a fresh one for every game")

    def _write(self, message: dict[str, Any]) -> None:
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        proc.stdin.write(json.dumps(message, separators=(",", ":")) + "\n")
        proc.stdin.flush()

    def _send(self, message: dict[str, Any]) -> None:
        """Write one message; a client that no longer reads (it died) forfeits."""
        try:
            self._write(message)
        except (OSError, ValueError):
            self._died("stopped reading its stdin")

    def _check_no_stray_line(self) -> None:
        try:
            kind, text = self._lines.get_nowait()
        except queue.Empty:
            return
        if kind == "eof":
            self._died("closed its stdout")
        self._forfeit(
            f"wrote {_quote(text)} to stdout when no decision was asked (stdout is the protocol "
            "channel: one reply line per act message, logs go to stderr)"
        )

    def _read_reply(self, deadline: float, limit: float) -> str:
        """The next non-blank reply line, read before ``deadline`` (a monotonic time)."""
        while True:
            try:
                kind, text = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                allowance = (
                    f" (time limit {self.time_limit:g} s plus {self.startup_time:g} s to start up)"
                    if limit > self.time_limit
                    else ""
                )
                self._forfeit(
                    f"no answer within {limit:g} s{allowance}; a reply is one line ending with a newline, "
                    "flushed" + self._last_stderr()
                )
            if kind == "eof":
                self._died("closed its stdout")
            if kind == "long":
                self._forfeit(f"answered a line longer than {MAX_REPLY_CHARS} characters: {_quote(text)}...")
            if text.strip():
                return text
            # Blank lines (a stray print(), CRLF leftovers) carry nothing: skip them.

    def _parse(self, reply: str, legal_names: list[str]) -> int:
        """The action id a reply names (legal or not); malformed replies forfeit."""
        text = reply.strip()
        name: object = text
        if text.startswith(("{", '"')):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as err:
                self._forfeit(f"answered malformed JSON {_quote(reply)} ({err})")
            if isinstance(value, dict):
                if "action" not in value:
                    self._forfeit(f"answered {_quote(reply)}, a JSON object without an 'action' key")
                name = value["action"]
            else:
                name = value
        if not isinstance(name, str):
            self._forfeit(
                f"answered {_quote(reply)}: an action is a name such as 'discard 7h', not "
                f"{type(name).__name__} (legal: {', '.join(legal_names)})"
            )
        try:
            return action_id(name)
        except UnknownActionError:
            # A reply that does not even start like an action is most likely a log line.
            hint = (
                ""
                if name.split(" ")[0].lower() in _VERBS
                else "; stdout is the protocol channel: logs go to stderr"
            )
            self._forfeit(_not_legal(reply, legal_names, hint))

    def _last_stderr(self) -> str:
        excerpt = stderr_excerpt(self._stderr)
        return f" (last stderr: {excerpt})" if excerpt else ""

    def _died(self, what: str) -> NoReturn:
        """The client stopped talking: say how it ended (exit status, signal) and forfeit."""
        exited = self._exited(CLOSE_GRACE)
        status = self._stop()
        if exited and status is not None and status >= 0:
            how = f"exited with status {status}"
        elif exited and status is not None:
            try:
                signame = signal.Signals(-status).name
            except ValueError:
                signame = f"signal {-status}"
            how = f"was killed by {signame}"
        else:
            how = what
        self._forfeit(how + (self._last_stderr() or " (no stderr output)"), stopped=True)

    def _forfeit(self, reason: str, stopped: bool = False) -> NoReturn:
        """Record the forfeit, kill the client, raise :class:`AgentForfeit` (never returns)."""
        self.forfeit_reason = " ".join(reason.split())
        if not stopped and self._proc is not None:
            self._stop()
        raise AgentForfeit(self.forfeit_reason)
