"""The ``ginenv play`` command as the play tests run it: a server process on a free port, waited
for until it answers, and stopped with a signal that must let it save and exit cleanly; a client
that speaks as the server's own page does (its ``Origin`` on every request: the server takes
changes only from its own page); and, for an app in the test's own process, a table added to its
store or read from it (what no client can do, so the server has no route or function for it)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from ginenv.experiments.eval.harness import make_agent as harness_make_agent
from ginenv.experiments.play.store import Slot, TableStore
from ginenv.experiments.play.table import Table

#: Seconds a starting server gets to answer (a cold start compiles nothing, but CI may be loaded).
START_DEADLINE_S = 30


def page_client(url: str, **options: Any) -> httpx.Client:
    """An HTTP client of the server at ``url`` that sends the ``Origin`` its own page's requests
    carry (``options``: more of ``httpx.Client``'s, a timeout)."""
    return httpx.Client(base_url=url, headers={"Origin": url}, **options)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def play_server(*options: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``ginenv play --no-browser --port 0 OPTIONS...`` in a process, with its URL on this machine
    once ``/api/options`` answers; the process is killed on the way out if it still runs."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ginenv.experiments.cli", "play", "--no-browser", "--port", "0", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # A test run started in the background (nohup, `&`) ignores SIGINT, and the server would
        # inherit that: Ctrl-C is tested with SIGINT's default, as a terminal delivers it.
        preexec_fn=_default_sigint,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://[\w.]+:(\d+)", line)
        assert found, line
        url = f"http://127.0.0.1:{found.group(1)}"
        deadline = time.monotonic() + START_DEADLINE_S
        while True:
            try:
                httpx.get(f"{url}/api/options", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, f"no answer from {url} in {START_DEADLINE_S} s"
                time.sleep(0.1)
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def stop(proc: subprocess.Popen[str], sig: signal.Signals = signal.SIGTERM) -> str:
    """Stop the server with ``sig`` (SIGTERM, or SIGINT as Ctrl-C); asserts a clean exit and returns
    everything it printed after its first line."""
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    return out


def add_table(app: FastAPI, table: Table) -> str:
    """Serve an already dealt computer table under its id (tests script deals and moves this way)."""
    store: TableStore = app.state.store
    store.add(table)
    return table.id


def table_slot(app: FastAPI, table_id: str) -> Slot:
    """The in-memory slot of a table, with everything it holds (hands, stock, key)."""
    store: TableStore = app.state.store
    return store.loaded[table_id]


def small_store(tmp_path: Path, **kwargs: Any) -> TableStore:
    """A store in ``tmp_path`` whose tables rebuild with the harness's agents (``kwargs``: the
    store's budgets and clock), for tests that drive the store without a server."""

    def rebuild(record: dict[str, Any]) -> Table:
        build = lambda name, rules: harness_make_agent(name, rules=rules)  # noqa: E731
        return Table.from_record(record, allowed=["random"], make_agent=build, replay_dir=tmp_path / "r")

    return TableStore(tmp_path / "tables", rebuild, replay_dir=tmp_path / "r", **kwargs)


def friend_table() -> Table:
    """A new friend table of the standard rules whose guest has not sat down."""
    return Table(None, "standard", names=["Host", ""], replay_dir=Path("unused"))
