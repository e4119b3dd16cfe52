"""The launcher of a sandboxed ``exec:`` agent: a standalone script, run as ``python -I -S THIS CONFIG``.

:mod:`ginenv.agents.sandbox` starts every sandboxed client through this file, which sets the
sandbox up around itself and then replaces itself with the client (``execve``), so the client
inherits the pipes of the protocol and nothing else. It imports the standard library only (it
runs before, and outside, anything of ginenv) and takes one argument, a JSON object:

``{"mode": "basic"|"strict", "argv": [...], "env": {...}, "cwd": PATH, "hide": [PATH, ...],
"limits": {"cpu": s, "memory": bytes, "files": n, "file_size": bytes}, "status_fd": n, "probe": bool}``

- **basic**: resource limits (CPU seconds, writable memory, open files, file size, no core dumps),
  no new privileges, then the client in ``cwd`` with exactly ``env``.
- **strict**: first new Linux namespaces, unprivileged (a user namespace, then mount, PID, network,
  IPC and UTS ones): no network but a loopback that is down; a fresh ``/proc`` that shows the
  client's own processes only, so no ``/proc/PID`` of the harness exists for it; every mount of the
  machine remounted read-only (``/tmp`` included: a client may live there); a fresh private
  ``tmpfs`` on ``/dev/shm`` and on its working folder ``cwd`` (an empty folder made for it), the
  one place it writes; each path of ``hide`` covered (a folder by an empty read-only tmpfs, a file
  by ``/dev/null``). The client runs as PID 1 of its namespace,
  a child of this launcher, which waits for it and exits as it did. A user id of 0 outside (a
  harness run as root) is mapped to an unprivileged one inside, so that the client holds no
  capability that could undo a mount.
- ``probe``: set up as asked, print ``ok`` and exit instead of starting a client (whether strict
  works on this machine).

Any failure prints one line to stderr (``ginenv sandbox: ...``), writes it to ``status_fd`` when
given, and exits with status 125. ``status_fd`` is closed on exec: whoever started the launcher
reads it to its end, and nothing there means the client was started (as :mod:`subprocess` does).
"""

import contextlib
import ctypes
import json
import os
import resource
import signal
import sys
from typing import Any, NoReturn

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_NOATIME = 0x400
MS_NODIRATIME = 0x800
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MS_RELATIME = 0x200000
MS_STRICTATIME = 0x1000000

PR_SET_NO_NEW_PRIVS = 38
PR_SET_DUMPABLE = 4

# Mount options that a remount inside a user namespace must keep as they were (the kernel locks
# them on mounts inherited from a more privileged namespace: changing one fails with EPERM).
_KEPT = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}
FAILED = 125
INNER_ID = 1000  # the id inside the namespace of a harness run as root (any id but 0)

_status = [-1]  # the status pipe's descriptor, once known
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]


def fail(message: str) -> NoReturn:
    """Say ``message`` on stderr and on the status pipe, and exit with :data:`FAILED`."""
    line = f"ginenv sandbox: {message}\n"
    sys.stderr.write(line)
    sys.stderr.flush()
    if _status[0] >= 0:
        with contextlib.suppress(OSError):
            os.write(_status[0], line.encode(errors="replace"))
    os._exit(FAILED)


def call(name: str, result: int) -> None:
    """Fail, naming ``name`` and the C error, unless a libc call's ``result`` is 0."""
    if result != 0:
        err = ctypes.get_errno()
        fail(f"{name} failed: {os.strerror(err)}")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> int:
    """libc ``mount(2)`` (0, or -1 with errno set)."""

    def enc(text: str | None) -> bytes | None:
        return None if text is None else text.encode()

    return _libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data))


def write(path: str, text: str) -> None:
    """Write ``text`` to the file ``path`` (a /proc control file)."""
    with open(path, "w") as fh:
        fh.write(text)


def mount_points() -> list[tuple[str, list[str]]]:
    """Every mount point of this namespace with its per-mount options, parents first."""
    found = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            fields = line.split()
            # Field 5 is the mount point (octal escapes for spaces), field 6 its per-mount options.
            point = fields[4].encode().decode("unicode_escape")
            found.append((point, fields[5].split(",")))
    return found


def read_only_everything(keep: str) -> None:
    """Remount every mount read-only (keeping the locked options), except ``keep`` and under it."""
    for point, options in mount_points():
        if point == keep or point.startswith(keep.rstrip("/") + "/"):
            continue
        if not os.path.isdir(point) and not os.path.isfile(point):
            continue  # covered by a later mount
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for option in options:
            flags |= _KEPT.get(option, 0)
        if mount(None, point, None, flags) != 0:
            err = ctypes.get_errno()
            # A mount under /proc or /sys that refuses (a masked path of a container) is replaced
            # by the fresh /proc below or is the kernel's own read-only view; any other is a hole.
            if point.startswith(("/proc/", "/sys")) or point == "/proc":
                continue
            fail(f"could not make {point} read-only: {os.strerror(err)}")


def cover(path: str) -> None:
    """Hide ``path`` from the client: an empty read-only tmpfs over a folder, /dev/null over a file."""
    if os.path.isdir(path):
        empty = mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=0555")
        call(f"hiding {path}", empty)
    elif os.path.exists(path):
        call(f"hiding {path}", mount("/dev/null", path, None, MS_BIND))


def enter_namespaces() -> None:
    """New user, mount, PID, network, IPC and UTS namespaces; the caller's ids mapped to unprivileged ones."""
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    call("unshare (user namespaces)", _libc.unshare(flags))
    write("/proc/self/setgroups", "deny")
    write("/proc/self/uid_map", f"{uid or INNER_ID} {uid} 1")
    write("/proc/self/gid_map", f"{gid or INNER_ID} {gid} 1")


def set_up_strict(cwd: str, hide: list[str]) -> None:
    """The mounts of strict mode (run as PID 1 of the new namespaces)."""
    call("making mounts private", mount(None, "/", None, MS_REC | MS_PRIVATE))
    read_only_everything(keep="/proc")
    # A /proc of this PID namespace: the harness's processes have no entry in it.
    if mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC) != 0:
        call("hiding /proc", mount("tmpfs", "/proc", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k"))
    for scratch in ("/dev/shm", cwd):
        if os.path.isdir(scratch) and not os.path.islink(scratch):
            fresh = mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, "size=256m,mode=0700")
            call(f"a private {scratch}", fresh)
    for path in hide:
        cover(path)


def set_limits(limits: dict[str, int | None]) -> None:
    """Set the client's resource limits (none above the hard limits it was given)."""
    for name, value in (
        ("RLIMIT_CPU", limits.get("cpu")),
        ("RLIMIT_DATA", limits.get("memory")),
        ("RLIMIT_NOFILE", limits.get("files")),
        ("RLIMIT_FSIZE", limits.get("file_size")),
        ("RLIMIT_CORE", 0),
    ):
        if value is None:
            continue
        which = getattr(resource, name)
        hard = resource.getrlimit(which)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError) as err:
            fail(f"could not set {name}: {err}")


def run_client(config: dict[str, Any]) -> NoReturn:
    """Limits, no new privileges, the working folder, then the client (or ``ok`` for a probe)."""
    set_limits(config.get("limits", {}))
    call("no new privileges", _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
    os.chdir(config["cwd"])
    if config.get("probe"):
        print("ok", flush=True)
        os._exit(0)
    argv = config["argv"]
    try:
        os.execve(argv[0], argv, config["env"])
    except OSError as err:
        fail(f"could not start {argv[0]}: {err.strerror}")


def wait_for(child: int) -> NoReturn:
    """Relay the stop signals to the client, wait for it, and end as it ended."""
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, _frame: os.kill(child, signal.SIGKILL))
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except ChildProcessError:
            os._exit(FAILED)
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        killed_by = os.WTERMSIG(status)
        signal.signal(killed_by, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), killed_by)
    os._exit(os.waitstatus_to_exitcode(status) if not os.WIFSIGNALED(status) else FAILED)


def main() -> None:
    """Set the sandbox of ``sys.argv[1]``'s config up and become its client (see the module docstring)."""
    config = json.loads(sys.argv[1])
    if config.get("status_fd") is not None:
        _status[0] = int(config["status_fd"])
        os.set_inheritable(_status[0], False)  # closed by the client's exec: its end of file says "started"
    if config["mode"] == "basic":
        run_client(config)
    enter_namespaces()
    child = os.fork()
    if child:
        if _status[0] >= 0:
            os.close(_status[0])  # the client's copy alone tells how its start went
        wait_for(child)
    # PID 1 of the new PID namespace: the mounts, then the client.
    try:
        set_up_strict(config["cwd"], config.get("hide", []))
    except OSError as err:
        fail(f"setting up the sandbox: {err}")
    run_client(config)


if __name__ == "__main__":
    main()
