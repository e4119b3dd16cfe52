"""The sandbox of ``exec:`` agents (:mod:`ginenv.agents.sandbox`), and a spy that attacks it.

The spy (``spy_client.py``) is an ``exec:`` client that tries every route to a secret run's deal
key and deals: its parent's and every visible process's memory, command line and environment,
ptrace, its own environment, the run folder and the key file, and diaries of the cards it held left
for its later games. The attack tests run ``ginenv match`` with it as an unprivileged user
(``tests/support/unprivileged.py``), the harness and the spy alike: the case of an agent on the
machine of the person who rates it. Under ``--secret`` and ``--key-file`` (the strict sandbox) it
must find nothing; two controls show each route works where the protection is absent (a dumpable
dealer's memory; a basic sandbox's key file and diaries), so "found nothing" is a finding.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from extras import needs
from ginenv.agents import sandbox
from ginenv.agents.sandbox import Sandbox, SandboxError, choose, remove_scratch, start
from unprivileged import give, prefix, seed_numba_cache, shared_folder, unprivileged_command

from ginenv.secret_deals import DealKey

SPY = Path(__file__).with_name("spy_client.py")
PREFIX = b"ginenv-deal-key-v1".hex()  # the commitment's public prefix (ginenv.secret_deals)
REPORT = re.compile(r"SPY key=(\S+) procs=(\d+) memok=(\d+) looked=(\d+) diary=(\d+) wrote=(\d+)")


def _needs_strict() -> None:
    needs(
        "Linux unprivileged user namespaces (the strict sandbox)",
        "sysctl -w user.max_user_namespaces=10000",
        sandbox.strict_problem(),
    )


def _run(mode: str, code: str, hide: tuple[str, ...] = ()) -> tuple[int, str, str]:
    """Run ``python -c code`` as a client in ``mode``; its exit status, stdout and stderr."""
    proc, launch = start(
        [sys.executable, "-c", code],
        Sandbox(mode, hide=hide),  # type: ignore[arg-type]
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate(timeout=60)
    remove_scratch(launch)
    return proc.returncode, out, err


# ---------------------------------------------------------------------- the modes


def test_modes_and_auto() -> None:
    _needs_strict()
    assert choose("auto", secret=True) == ("strict", None)
    assert choose("auto", secret=False) == ("basic", None)
    assert choose("off", secret=True) == ("off", None)
    with pytest.raises(SandboxError, match="--sandbox must be one of auto, strict, basic, off, got 'loose'"):
        choose("loose", secret=False)
    with pytest.raises(SandboxError, match="sandbox mode must be one of strict, basic, off"):
        Sandbox("auto")  # type: ignore[arg-type]


def test_strict_falls_back_to_basic_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "strict_problem", lambda: "unshare (user namespaces) failed: EPERM")
    mode, note = choose("auto", secret=True)
    assert mode == "basic" and note is not None and "\n" not in note
    assert note.startswith("the strict sandbox is not available here: unshare (user namespaces) failed")
    assert "run in the basic one instead" in note and "can still read this user's files" in note


def test_basic_clears_the_environment_and_sets_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GINENV_TEST_SECRET", "in-the-parent-only")
    code = (
        "import os, resource, json; r = resource; print(json.dumps({'env': dict(os.environ), "
        "'cwd': os.getcwd(), 'limits': [r.getrlimit(getattr(r, n))[0] for n in "
        "('RLIMIT_NOFILE', 'RLIMIT_CORE', 'RLIMIT_DATA', 'RLIMIT_CPU', 'RLIMIT_FSIZE')]}))"
    )
    status, out, _ = _run("basic", code)
    seen = json.loads(out)
    assert status == 0
    assert "GINENV_TEST_SECRET" not in seen["env"]
    assert set(seen["env"]) <= {*sandbox.KEPT_ENV, "HOME", "TMPDIR", "PYTHONUNBUFFERED"}
    assert seen["env"]["HOME"] == seen["cwd"] != os.getcwd()
    assert not os.path.exists(seen["cwd"])  # removed with the client
    assert seen["limits"] == [
        sandbox.OPEN_FILES,
        0,
        sandbox.MEMORY_BYTES,
        sandbox.CPU_SECONDS,
        sandbox.FILE_BYTES,
    ]
    status, out, _ = _run("off", "import os; print(os.environ.get('GINENV_TEST_SECRET'))")
    assert out.strip() == "in-the-parent-only"


def test_relative_paths_of_a_command_still_name_their_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "client.py").write_text("print('from the client file')\n")
    monkeypatch.chdir(tmp_path)
    assert sandbox.absolute_command(["python3", "client.py", "--flag", "absent.txt"]) == [
        shutil.which("python3"),
        str(tmp_path / "client.py"),
        "--flag",
        "absent.txt",
    ]
    proc, launch = start(["python3", "client.py"], Sandbox("basic"), stdout=subprocess.PIPE, text=True)
    assert proc.communicate(timeout=60)[0] == "from the client file\n"
    remove_scratch(launch)


def test_a_file_that_is_no_program_is_refused_at_start(tmp_path: Path) -> None:
    garbage = tmp_path / "not_a_program"
    garbage.write_text("this is not a program\n")
    garbage.chmod(0o755)
    for mode in ("basic", "strict"):
        if mode == "strict":
            _needs_strict()
        with pytest.raises(SandboxError, match=r"could not start .*not_a_program: Exec format error"):
            start([str(garbage)], Sandbox(mode), stdout=subprocess.PIPE)  # type: ignore[arg-type]


def test_strict_has_no_network_no_other_process_and_a_read_only_machine(tmp_path: Path) -> None:
    _needs_strict()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    hidden = tmp_path / "run"
    hidden.mkdir()
    (hidden / "results.jsonl").write_text("finished deals\n")
    key_file = tmp_path / "key.txt"
    key_file.write_text(DealKey.new().hex())
    code = f"""
import json, os, socket
seen = {{"ppid": os.getppid(), "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}}
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2); seen["net"] = "connected"
except OSError as err:
    seen["net"] = type(err).__name__
for path in ({str(tmp_path / "written.txt")!r}, "here.txt"):
    try:
        open(path, "w").write("x"); seen[path] = "written"
    except OSError as err:
        seen[path] = err.strerror
seen["run"] = os.listdir({str(hidden)!r})
seen["key"] = open({str(key_file)!r}).read()
print(json.dumps(seen))
"""
    try:
        status, out, err = _run("strict", code, hide=(str(hidden), str(key_file)))
    finally:
        listener.close()
    seen = json.loads(out)
    assert status == 0, err
    assert seen["ppid"] == 0 and seen["pids"] == [1]  # no process of the harness exists for it
    assert seen["net"] in ("OSError", "ConnectionRefusedError") and seen["net"] != "connected"
    assert seen[str(tmp_path / "written.txt")] == "Read-only file system"
    assert seen["here.txt"] == "written"  # its own folder
    assert seen["run"] == [] and seen["key"] == ""
    assert not (tmp_path / "written.txt").exists()


# ---------------------------------------------------------------------- the spy


@pytest.fixture(scope="module")
def room() -> Iterator[Path]:
    """A folder of the unprivileged user: its home, its numba cache, a drop folder anyone writes."""
    folder = shared_folder()
    seed_numba_cache(folder / "numba")
    (folder / "home").mkdir()
    (folder / "drop").mkdir()
    give(folder)
    (folder / "drop").chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
    for place in ("/tmp", "/var/tmp", "/dev/shm"):  # the diaries basic spies left where they could
        for diary in Path(place).glob("spy-diary-*"):
            diary.unlink(missing_ok=True)


def _environment(room: Path) -> dict[str, str]:
    return {
        "HOME": str(room / "home"),
        "NUMBA_CACHE_DIR": str(room / "numba"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
    }


def _spy_match(room: Path, name: str, *options: str, commitment: str | None = None) -> list[dict[str, Any]]:
    """``ginenv match SPY random`` (4 games) as the unprivileged user; each game's spy report.

    Without ``commitment`` (a ``--secret`` run) the commitment the run prints as it starts is
    written to a file the spy waits for: the public value a spy would copy from the screen."""
    out = room / name
    told = room / "drop" / f"{name}-commitment.txt"
    given = f"--commitment {commitment}" if commitment else f"--commitment-file {told}"
    spy = (
        f"exec:{sys.executable} {SPY} {given} --prefix {PREFIX} --look {out} --look {room / 'key.txt'} "
        f"--drop {room / 'drop'}"
    )
    command = [sys.executable, "-m", "ginenv.experiments.cli", "match", spy, "random", "--hands", "4"]
    command += ["--workers", "1", "--quiet", "--no-plots", "--out", str(out), *options]
    proc = subprocess.Popen(
        unprivileged_command(command),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_environment(room),
        cwd=str(room),
    )
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        found = re.search(r"secret deals, commitment ([0-9a-f]{64})", line)
        if found and commitment is None:
            told.write_text(found.group(1))
            told.chmod(0o644)
    proc.wait(timeout=300)
    assert proc.returncode == 0, "".join(lines)
    games = [
        g for row in map(json.loads, (out / "results.jsonl").read_text().splitlines()) for g in row["games"]
    ]
    reports = []
    for game in games:
        said = REPORT.search(game["forfeit_reason"] or "")
        assert said is not None, game["forfeit_reason"]
        routes, *counts = said.groups()
        names = ("procs", "memok", "looked", "diary", "wrote")
        reports.append({"key": routes.split(","), **dict(zip(names, map(int, counts), strict=True))})
    assert len(reports) == 4
    return reports


def _key_file(room: Path) -> DealKey:
    key = DealKey.new()
    (room / "key.txt").write_text(key.hex() + "\n")
    give(room / "key.txt")
    (room / "key.txt").chmod(0o600)
    return key


def test_a_spy_under_secret_finds_no_key_and_no_deal(room: Path) -> None:
    _needs_strict()
    (room / "key.txt").unlink(missing_ok=True)  # looked at by the spy: here only the run folder is
    for report in _spy_match(room, "secret", "--secret"):
        # Every route tried, none yielding: no process to read or attach to, nothing of the run
        # folder or the key file to read, no diary of an earlier game.
        assert report["key"] == ["none"]
        assert report["procs"] == 0 and report["memok"] == 0 and report["looked"] == 0
        assert report["diary"] == 0 and report["wrote"] >= 1


def test_a_spy_finds_no_key_given_in_a_file(room: Path) -> None:
    _needs_strict()
    key = _key_file(room)
    for report in _spy_match(
        room, "key-file", "--key-file", str(room / "key.txt"), commitment=key.commitment()
    ):
        assert report["key"] == ["none"] and report["looked"] == 0 and report["diary"] == 0


def test_in_the_basic_sandbox_memory_is_out_of_reach_but_files_are_not(room: Path) -> None:
    # The control of the routes that read files: the basic sandbox hides no file, so the spy reads
    # the key file and finds the diaries of earlier games. The harness's memory stays out of reach
    # (non-dumpable), as do its command line and environment.
    key = _key_file(room)
    reports = _spy_match(
        room, "basic", "--key-file", str(room / "key.txt"), "--sandbox", "basic", commitment=key.commitment()
    )
    assert all(r["key"] == ["look"] and r["memok"] == 0 and r["procs"] > 0 for r in reports)
    assert reports[-1]["diary"] >= 3


VICTIM = """
import sys
from ginenv import gin_rummy_v0
from ginenv.agents.base import AgentForfeit
from ginenv.agents.external import ExternalAgent
from ginenv.agents.sandbox import Sandbox, undumpable
from ginenv.secret_deals import DealKey
if sys.argv[1] == "undumpable":
    undumpable()
key = DealKey.new()
spy = ExternalAgent(
    f"{sys.executable} {sys.argv[2]} --commitment {key.commitment()} --prefix {sys.argv[3]}",
    sandbox=Sandbox("off"),
)
env = gin_rummy_v0.env()
env.reset(seed=1)
spy.reset(1)
try:
    spy.act(env.observe(env.agent_selection))
except AgentForfeit as err:
    print(err)
"""


@pytest.mark.parametrize("dealer", ["dumpable", "undumpable"])
def test_only_a_non_dumpable_dealer_keeps_its_memory(room: Path, dealer: str) -> None:
    # The control of the memory route: a dealer that did not call undumpable() is read by its own
    # exec: agent, outside any sandbox; one that did is not.
    command = [sys.executable, "-c", VICTIM, dealer, str(SPY), PREFIX]
    done = subprocess.run(
        unprivileged_command(command), capture_output=True, text=True, env=_environment(room), timeout=300
    )
    said = REPORT.search(done.stdout)
    assert said is not None, done.stdout + done.stderr
    routes = said.group(1).split(",")
    if dealer == "dumpable":
        assert "mem" in routes and "ptrace" in routes, prefix()[1]
    else:
        assert routes == ["none"]
