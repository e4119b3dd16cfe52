"""Sandboxes for ``exec:`` agents, and keeping a process that deals out of its agents' reach.

This module owns what an out-of-process player may reach of the machine it plays on. An
``exec:COMMAND`` client (:mod:`ginenv.agents.external`) runs in one of three modes (:data:`MODES`):

- ``strict``: ``basic``'s limits, inside new unprivileged Linux namespaces (user, mount, PID,
  network, IPC): no network; a ``/proc`` showing its own processes only, so no process of the
  harness exists for it to read; every file system read-only but its own working folder (a fresh
  private ``tmpfs``, as is ``/dev/shm``); the paths a run hides (its run folder, the file of its
  deal key) covered. Nothing it writes outlives it, so no game tells the next one what
  it saw. Needs Linux with unprivileged user namespaces (:func:`strict_problem` says when not).
- ``basic``: a fresh working folder that is not the run folder (removed when the client ends), a
  cleared environment (``PATH``, the locale, ``HOME`` and ``TMPDIR`` set to that folder), its own
  process group, resource limits (CPU seconds, memory, open files, file size, no core
  dumps) and no new privileges. It can still read what the user running the harness can read,
  write where that user can, and use the network.
- ``off``: the client as the command says, in the current folder with this process's environment.

Either sandbox starts the client through ``sandbox_launch.py`` (a standalone script of the
standard library, run by this interpreter with ``-I -S``), which sets the sandbox up and then
becomes the client. Relative paths in the command (the program, and any argument that names an
existing file or folder) are made absolute first, since the client no longer starts in the current
folder.

:func:`undumpable` is the other half: a process that holds a deal key marks itself non-dumpable
(``prctl(PR_SET_DUMPABLE, 0)``) before the key exists, so that no process of the same user, an
agent in ``basic`` or ``off`` mode included, can read its memory (``/proc/PID/mem``,
``/proc/PID/environ``) or attach to it with ptrace; only root can.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Mode = Literal["strict", "basic", "off"]
#: The sandbox modes, strictest first.
MODES: tuple[str, ...] = ("strict", "basic", "off")
#: What ``--sandbox`` takes: a mode, or ``auto`` (strict on secret deals, basic otherwise).
CHOICES: tuple[str, ...] = ("auto", *MODES)
#: The launcher script (run as a file: it imports nothing of ginenv).
LAUNCHER = Path(__file__).with_name("sandbox_launch.py")
#: Limits of one client process (one game): CPU seconds, memory, open files, file size. Memory is
#: ``RLIMIT_DATA`` (the private writable memory it maps), not the address space: a JVM, V8 or Go
#: reserve large unwritable ranges up front and would not start under an address-space limit.
CPU_SECONDS = 3600
MEMORY_BYTES = 4 << 30
OPEN_FILES = 256
FILE_BYTES = 256 << 20
#: Seconds the launcher may take to set a sandbox up and start its client.
STARTUP_SECONDS = 20.0
#: Variables of this process's environment a sandboxed client keeps (with HOME and TMPDIR its folder).
KEPT_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")

_PR_SET_DUMPABLE = 4
_PR_GET_DUMPABLE = 3


class SandboxError(ValueError):
    """A sandbox mode that does not exist, or a command that cannot be started in one."""


@dataclass(frozen=True)
class Launch:
    """How to start one client: the argv, environment and folder for :class:`subprocess.Popen`,
    and the folder to remove when it ends (a sandbox's working folder; None otherwise)."""

    argv: list[str]
    env: dict[str, str] | None
    cwd: str | None
    scratch: str | None = None


@dataclass(frozen=True)
class Sandbox:
    """The sandbox of an ``exec:`` client (see the module docstring); picklable, so a run's workers
    get it with their work. ``hide``: absolute paths a strict client must not see (a folder is
    shown empty, a file as ``/dev/null``)."""

    mode: Mode = "basic"
    hide: tuple[str, ...] = ()
    cpu_seconds: int = CPU_SECONDS
    memory_bytes: int = MEMORY_BYTES
    open_files: int = OPEN_FILES
    file_bytes: int = FILE_BYTES
    extra_env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise SandboxError(f"sandbox mode must be one of {', '.join(MODES)}, got {self.mode!r}")

    def hiding(self, *paths: str | Path) -> Sandbox:
        """This sandbox with ``paths`` (made absolute) hidden too."""
        more = tuple(str(Path(p).expanduser().resolve()) for p in paths)
        return dataclasses.replace(self, hide=tuple(dict.fromkeys((*self.hide, *more))))

    @property
    def launched(self) -> bool:
        """Whether a client starts through the launcher (a sandbox, on POSIX) or as it is."""
        return self.mode != "off" and os.name == "posix"

    def launch(self, argv: list[str], status_fd: int | None = None) -> Launch:
        """How to start the client ``argv`` in this sandbox (see :class:`Launch`); ``status_fd``:
        the write end of a pipe the launcher reports a failed start on (:func:`start` reads it)."""
        if not self.launched:
            env = dict(os.environ)
            env.update(self.extra_env)
            # A Python client that prints without flush would otherwise sit on its reply until
            # the time limit (pipes are block-buffered); other languages must flush themselves.
            env.setdefault("PYTHONUNBUFFERED", "1")
            return Launch(list(argv), env, None)
        argv = absolute_command(argv)
        # An empty folder of its own (strict mounts a private tmpfs on it), removed when it ends.
        scratch = cwd = tempfile.mkdtemp(prefix="ginenv-agent-")
        env = {name: os.environ[name] for name in KEPT_ENV if name in os.environ}
        env.update({"HOME": cwd, "TMPDIR": cwd, "PYTHONUNBUFFERED": "1", **self.extra_env})
        config = {
            "mode": self.mode,
            "argv": argv,
            "env": env,
            "cwd": cwd,
            "hide": list(self.hide),
            "status_fd": status_fd,
            "limits": {
                "cpu": self.cpu_seconds,
                "memory": self.memory_bytes,
                "files": self.open_files,
                "file_size": self.file_bytes,
            },
        }
        # -I -S: the launcher reads no PYTHON* variable, no user site and no site-packages.
        return Launch([sys.executable, "-I", "-S", str(LAUNCHER), json.dumps(config)], {}, None, scratch)


def start(argv: list[str], sandbox: Sandbox, **popen: Any) -> tuple[subprocess.Popen[str], Launch]:
    """Start the client ``argv`` in ``sandbox`` (``popen``: :class:`subprocess.Popen`'s other
    arguments) and return it with its :class:`Launch` once it runs: a client the launcher could not
    start (a sandbox that cannot be made, a file that is not a program) raises
    :class:`SandboxError` with the launcher's line, as Popen raises OSError for a missing program."""
    if not sandbox.launched:
        launch = sandbox.launch(argv)
        return subprocess.Popen(launch.argv, env=launch.env, cwd=launch.cwd, **popen), launch
    read, write = os.pipe()
    try:
        launch = sandbox.launch(argv, status_fd=write)
        try:
            proc = subprocess.Popen(launch.argv, env=launch.env, cwd=launch.cwd, pass_fds=(write,), **popen)
        except BaseException:
            remove_scratch(launch)
            raise
        os.close(write)
        write = -1
        said = _read_to_end(read, STARTUP_SECONDS)
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)
    if said:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5.0)
        remove_scratch(launch)
        raise SandboxError(said.strip().removeprefix("ginenv sandbox: "))
    return proc, launch


def _read_to_end(fd: int, timeout: float) -> str:
    """What the launcher wrote on its status pipe before the pipe closed (within ``timeout`` s)."""
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while True:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return f"the sandbox did not start the client within {timeout:g} s"
        chunk = os.read(fd, 4096)
        if not chunk:
            return b"".join(chunks).decode(errors="replace")
        chunks.append(chunk)


def absolute_command(argv: list[str]) -> list[str]:
    """``argv`` with its program found on PATH (or made absolute) and every argument that names an
    existing file or folder relative to the current folder made absolute."""
    program = shutil.which(argv[0]) or argv[0]
    found = [os.path.abspath(program)]
    for word in argv[1:]:
        if not word.startswith("-") and not os.path.isabs(word) and os.path.exists(word):
            word = os.path.abspath(word)
        found.append(word)
    return found


def remove_scratch(launch: Launch | None) -> None:
    """Remove a basic client's working folder (what it wrote there is gone with it)."""
    if launch is not None and launch.scratch is not None:
        shutil.rmtree(launch.scratch, ignore_errors=True)


@functools.cache
def strict_problem() -> str | None:
    """Why ``strict`` cannot run on this machine (one line), or None when it can: the launcher is
    tried once, in strict mode, without a client."""
    if sys.platform != "linux":
        return f"it needs Linux namespaces and this is {sys.platform}"
    launch = Sandbox("strict").launch([sys.executable])
    config = json.loads(launch.argv[-1])
    config["probe"] = True
    try:
        done = subprocess.run(
            [*launch.argv[:-1], json.dumps(config)], capture_output=True, text=True, timeout=20, env={}
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"the sandbox could not be started ({err})"
    finally:
        remove_scratch(launch)
    if done.returncode == 0 and done.stdout.strip() == "ok":
        return None
    said = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return said.removeprefix("ginenv sandbox: ") + (
        " (unprivileged user namespaces are off: see sysctl user.max_user_namespaces, and "
        "kernel.unprivileged_userns_clone or kernel.apparmor_restrict_unprivileged_userns where "
        "the kernel has them)"
    )


def choose(requested: str, secret: bool) -> tuple[Mode, str | None]:
    """The mode a run uses for ``requested`` (one of :data:`CHOICES`; ``auto``: strict on secret
    deals, basic otherwise), and a one-line note when strict is not available and basic stands in."""
    if requested not in CHOICES:
        raise SandboxError(f"--sandbox must be one of {', '.join(CHOICES)}, got {requested!r}")
    mode = ("strict" if secret else "basic") if requested == "auto" else requested
    if mode == "strict":
        problem = strict_problem()
        if problem is not None:
            note = (
                f"the strict sandbox is not available here: {problem}; exec: agents run in the basic "
                "one instead (own folder, cleared environment, limits: they can still read this "
                "user's files and use the network)"
            )
            return "basic", note
    return mode, None  # type: ignore[return-value]


def undumpable() -> bool:
    """Mark this process non-dumpable (Linux ``prctl(PR_SET_DUMPABLE, 0)``): no process of the same
    user can read its memory or environment through ``/proc`` or attach to it with ptrace. Returns
    whether the process is non-dumpable now (False off Linux). Inherited by forked children, reset
    by ``exec`` (a started client is dumpable again: its memory is its own)."""
    if sys.platform != "linux":
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    return int(libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0)) == 0


__all__ = [
    "CHOICES",
    "MODES",
    "Launch",
    "Sandbox",
    "SandboxError",
    "absolute_command",
    "choose",
    "remove_scratch",
    "start",
    "strict_problem",
    "undumpable",
]
