"""Load test of the play server (``ginenv play``) with Locust: many friend tables played at once.

    python benchmarks/bench_play_load.py            # 200 tables, 60 s measured (about 90 s in all)
    python benchmarks/bench_play_load.py --tables 10 --seconds 10 --moves-per-second 10 --json

It starts ``ginenv play --no-browser --port 0`` (the real uvicorn server, in its own process, with
temporary state and replay folders) on 127.0.0.1 and drives it headless with Locust used as a
library (``locust.env.Environment``, a local runner, gevent greenlets):

- **Friend tables.** One Locust user per table: the host creates it (``POST /api/friends``), the
  guest sits down through the invitation (``POST /api/friends/join``), each seat opens its event
  stream (``GET /api/seats/{seat}/stream``, two per table), and both seats move: before each move
  the user waits until both streams show the table as it is, and the seat whose stream offers
  legal moves plays one of them (``POST /api/seats/{seat}/action``; both press Next hand after a
  showdown). Each table moves every ``tables / moves-per-second`` seconds (Locust's
  ``constant_pacing``, from a random start within that period), so the tables together make
  ``--moves-per-second``. Each host and each
  guest connects from an address of its own (127.1.x.y and 127.2.x.y: Linux routes all of 127/8 to
  this machine), as separate people would, so the creation limit does not bound the tables.
- **A flood of creations** from one address (127.0.0.1), ``--flood-per-second`` requests through
  the measured window, each with a forged ``X-Forwarded-For``: at most :data:`CREATE_LIMIT` may be
  accepted in any minute, every other answer must be 429.
- **A latency probe.** ``--probe-tables`` of the tables (a twentieth by default) are played at the
  same pace by ``play_load_probe.py`` in a process of its own (plain threads): the latency held
  against the aim is its moves', since Locust's own timings carry the time its one process takes
  to send a request and read a stream among hundreds (both are reported).

It reports what the server held during the measured window (after every table is seated and both
its streams are open): tables, open streams, moves a second in all, the latency of a move (from
sending it until the OTHER seat's stream shows its version: p50, p99, max), the server's memory
(RSS from ``/proc/PID/status``: idle, at the start of the window, peak, and the kernel's high-water
mark) and CPU, the table creations accepted and refused; and, to tell the server's delays from
the machine's, this process's CPU, how late its greenlets wake, and the machine's load average
(other work on the same cores delays every hop of a move). And it checks (exit status 1 if one
fails): every move reached the other seat's stream; no stream closed early; no live match was lost
(every table still answers for both seats at the end, at the version its streams last showed); no
live match leaked (no view a stream carried during a hand in play names a card of the other hand
that the seat may not know; no replay of a live match is listed or served to a client without a
key); the flood was held to the limit. ``--json`` prints the figures as JSON instead of a table.

The test (``tests/experiments/play/test_load.py``) runs this script with a few tables for a few
seconds. What it checks and prints, apart from Locust, is in ``play_load_checks.py`` beside it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from play_load_checks import (
    AIM_MOVES_PER_S,
    AIM_TABLES,
    CREATE_LIMIT,
    CREATE_WINDOW_S,
    Seen,
    choose_move,
    cpu_seconds,
    guest_address,
    host_address,
    leaks,
    over_limit,
    percentile,
    print_table,
    problems,
    rounded,
    rss_mib,
    sched_seconds,
    seen_of,
)

#: The flood's address (the one a naive client on this machine has) and its header forged per request.
FLOOD_ADDRESS = "127.0.0.1"
#: Seconds a change may take to reach a stream before it counts as missed.
SEEN_TIMEOUT_S = 10.0
#: Tables seated a second while the load ramps up, and the longest the ramp may take (seconds).
RAMP_PER_S = 20.0
RAMP_MAX_S = 120.0
#: Seconds for the server to start answering, and to stop after SIGTERM.
START_DEADLINE_S = 60.0
STOP_DEADLINE_S = 60.0
#: A replay file of one of this test's tables (its players are named ``Host{i}`` and ``Guest{i}``).
OUR_REPLAY = re.compile(r"-host(\d+)-vs-guest(\d+)-")
MAX_ERRORS = 20


# ---------------------------------------------------------------------------- the run


@dataclass
class Run:
    """Everything the users count (one load generator process: greenlets, no locks needed)."""

    url: str
    tables: int
    pace_s: float
    flood_per_s: float
    counter: itertools.count = field(default_factory=itertools.count)
    seated: list[Any] = field(default_factory=list)
    hosts_accepted: int = 0
    hosts_refused: int = 0
    failed_tables: int = 0
    measuring: bool = False
    closing: bool = False
    moves: int = 0
    moves_by_seat: list[int] = field(default_factory=lambda: [0, 0])
    hands_dealt: int = 0
    matches_over: int = 0
    latencies: list[float] = field(default_factory=list)
    missed: int = 0
    move_refused: int = 0
    resent: int = 0
    streams_open: int = 0
    streams_dropped: int = 0
    stream_views: int = 0
    went_back: int = 0
    flood: list[tuple[float, int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def error(self, text: str) -> None:
        """Keep the first :data:`MAX_ERRORS` error lines."""
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(text)


def start_server(state_dir: Path, replay_dir: Path) -> tuple[subprocess.Popen[str], str, list[str]]:
    """``ginenv play --no-browser --port 0`` in its own process; returns it, its URL once it answers,
    and the list its printed lines are collected into (a greenlet reads them)."""
    import gevent
    import requests

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ginenv.experiments.cli",
            "play",
            "--no-browser",
            "--port",
            "0",
            "--state-dir",
            str(state_dir),
            "--replay-dir",
            str(replay_dir),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # Not the repository root: `-m` puts the working folder first on sys.path, where the root's
        # ginenv/ (without ginenv.experiments) would shadow an installed ginenv.
        cwd=state_dir.parent,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)", first)
    if not found:
        proc.kill()
        raise SystemExit(f"bench_play_load: ginenv play did not start: {first.strip() or proc.wait()}")
    url = f"http://127.0.0.1:{found.group(1)}"
    lines = [first.rstrip()]

    def drain() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip())

    gevent.spawn(drain)
    deadline = time.monotonic() + START_DEADLINE_S
    while True:
        try:
            requests.get(f"{url}/api/options", timeout=5).raise_for_status()
            return proc, url, lines
        except requests.RequestException:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise SystemExit(f"bench_play_load: no answer from {url} in {START_DEADLINE_S:g} s") from None
            gevent.sleep(0.1)


def user_classes(run: Run) -> list[type]:
    """The Locust users: one per friend table (two seats, two streams), and the flood."""
    import gevent
    from gevent.event import Event
    from locust import User, constant_pacing, constant_throughput, task
    from locust.clients import HttpSession
    from locust.exception import StopUser
    from urllib3 import PoolManager

    def session(user: User, address: str) -> HttpSession:
        """An HTTP session of ``user`` whose connections leave from ``address``."""
        pool = PoolManager(num_pools=2, maxsize=2, source_address=(address, 0))
        client = HttpSession(run.url, user.environment.events.request, user, pool_manager=pool)
        # As the page's own requests: the server takes changes only from its own page.
        client.headers["Origin"] = run.url
        # requests reads the proxy variables of the environment for every request otherwise: a
        # fifth of the load generator's CPU (py-spy), on the two cores the server also runs on.
        client.trust_env = False
        return client

    class Seat:
        """One seat of a table: its session, its key, and the views its stream showed."""

        def __init__(self, client: HttpSession) -> None:
            self.client = client
            self.token = ""
            self.version = -1
            self.view: dict[str, Any] = {}
            self.arrivals: list[tuple[int, float]] = []
            self.seen: dict[int, Seen] = {}
            self.changed = Event()
            self.open = False
            self.ended = False
            self.greenlet: Any = None

        def arrival(self, version: int, timeout: float) -> float | None:
            """When the stream first showed ``version`` or a later one (waits up to ``timeout``)."""
            deadline = time.perf_counter() + timeout
            while True:
                self.changed.clear()
                for v, at in self.arrivals:
                    if v >= version:
                        return at
                left = deadline - time.perf_counter()
                if left <= 0 or self.ended:
                    return None
                self.changed.wait(left)

    class FriendTable(User):
        """A friend table: the host creates it, the guest joins, both watch their streams and move."""

        host = run.url
        wait_time = constant_pacing(run.pace_s)

        def on_start(self) -> None:
            self.index = next(run.counter)
            self.rng = random.Random(self.index)
            self.version = 0
            self.ready = False
            self.over = False
            self.phased = False
            self.seats = (
                Seat(session(self, host_address(self.index))),
                Seat(session(self, guest_address(self.index))),
            )
            host, guest = self.seats
            r = host.client.post("/api/friends", json={"name": f"Host{self.index}"}, name="/api/friends")
            if r.status_code != 201:
                run.hosts_refused += 1
                run.failed_tables += 1
                run.error(f"table {self.index}: creation answered {r.status_code}: {r.text[:200]}")
                raise StopUser()
            run.hosts_accepted += 1
            made = r.json()
            host.token = made["seat"]
            invite = made["view"]["invite"].removeprefix("/#join=")
            r = guest.client.post(
                "/api/friends/join",
                json={"invite": invite, "name": f"Guest{self.index}"},
                name="/api/friends/join",
            )
            if r.status_code != 200:
                run.failed_tables += 1
                run.error(f"table {self.index}: join answered {r.status_code}: {r.text[:200]}")
                raise StopUser()
            guest.token = r.json()["seat"]
            self.version = r.json()["view"]["version"]
            for s, seat in enumerate(self.seats):
                seat.greenlet = gevent.spawn(self.read_stream, s)
            if any(seat.arrival(self.version, SEEN_TIMEOUT_S) is None for seat in self.seats):
                run.failed_tables += 1
                run.error(f"table {self.index}: a stream did not show the seated table")
                raise StopUser()
            self.ready = True
            run.seated.append(self)

        def read_stream(self, s: int) -> None:
            """Read seat ``s``'s event stream until it ends (a greenlet per stream)."""
            seat = self.seats[s]
            r = seat.client.get(
                f"/api/seats/{seat.token}/stream",
                stream=True,
                timeout=(10, None),
                name="/api/seats/[seat]/stream",
            )
            if r.status_code != 200:
                run.error(f"table {self.index} seat {s}: stream answered {r.status_code}")
                seat.ended = True
                seat.changed.set()
                return
            seat.open = True
            run.streams_open += 1
            buffer = b""
            try:
                for chunk in r.iter_content(chunk_size=None):
                    buffer += chunk
                    while (cut := buffer.find(b"\n\n")) >= 0:
                        message, buffer = buffer[:cut], buffer[cut + 2 :]
                        self.on_message(seat, message, time.perf_counter())
            except Exception as err:  # the stream broke (counted below unless the run is closing)
                if not run.closing:
                    run.error(f"table {self.index} seat {s}: stream failed: {type(err).__name__}: {err}")
            finally:
                seat.open, seat.ended = False, True
                run.streams_open -= 1
                if not run.closing:
                    run.streams_dropped += 1
                seat.changed.set()
                r.close()

        def on_message(self, seat: Seat, message: bytes, at: float) -> None:
            lines = message.decode("utf-8").split("\n")
            if "event: view" not in lines:
                return  # a keep-alive comment
            view = json.loads("".join(line[6:] for line in lines if line.startswith("data: ")))
            version = int(view["version"])
            if version < seat.version:
                run.went_back += 1
            seat.version, seat.view = version, view
            seat.arrivals = [*seat.arrivals[-15:], (version, at)]
            seat.seen[version] = seen_of(view)
            run.stream_views += 1
            seat.changed.set()

        def caught_up(self) -> bool:
            """Wait until both streams show the table at its latest known version."""
            for s, seat in enumerate(self.seats):
                if seat.arrival(self.version, SEEN_TIMEOUT_S) is None:
                    run.missed += run.measuring
                    run.error(f"table {self.index} seat {s}: version {self.version} never reached its stream")
                    return False
            return True

        @task
        def move(self) -> None:
            """One move of the seat to move (after a showdown, both press Next hand first)."""
            if not self.phased:
                # Tables are seated in bursts as the server answers; a random start within the pace
                # spreads their moves over it, as people's moves are, instead of in step.
                self.phased = True
                gevent.sleep(self.rng.uniform(0, run.pace_s))
            if not self.ready or self.over or not self.caught_up():
                return
            stage = self.seats[0].view["stage"]
            if stage == "over":
                self.over = True
                run.matches_over += 1
                ended = self.seats[0].view.get("match_result") or {}
                if ended.get("forfeit") or ended.get("truncated"):
                    run.error(f"table {self.index}: the match ended without a winner: {ended}")
                return
            if stage == "showdown":
                for s, seat in enumerate(self.seats):
                    r = seat.client.post(
                        f"/api/seats/{seat.token}/next", json={}, name="/api/seats/[seat]/next"
                    )
                    if r.status_code != 200:
                        run.error(
                            f"table {self.index} seat {s}: Next hand answered {r.status_code}: {r.text[:200]}"
                        )
                        return
                    self.version = max(self.version, r.json()["version"])
                run.hands_dealt += 1
                if not self.caught_up():
                    return
            views = [seat.view for seat in self.seats]
            mover = next((s for s in (0, 1) if views[s].get("legal")), None)
            if mover is None:
                run.error(f"table {self.index}: neither seat has a legal move at version {self.version}")
                return
            seat, other = self.seats[mover], self.seats[1 - mover]
            action = choose_move(views[mover], self.rng)
            sent = time.perf_counter()
            r = seat.client.post(
                f"/api/seats/{seat.token}/action", json={"action": action}, name="/api/seats/[seat]/action"
            )
            if r.status_code == 0:
                # No answer at all: the connection broke, most often a kept-alive one the server had
                # just closed (uvicorn closes a connection idle for 5 s) as the move went out. As a
                # browser would, look whether the move was made, and send it again if not.
                run.resent += 1
                why = getattr(r, "error", None)
                run.error(f"table {self.index} seat {mover}: {action!r} got no answer ({why!r}); resent")
                look = seat.client.get(f"/api/seats/{seat.token}", name="/api/seats/[seat]")
                if look.status_code == 200 and look.json()["version"] > self.version:
                    r = look
                else:
                    r = seat.client.post(
                        f"/api/seats/{seat.token}/action",
                        json={"action": action},
                        name="/api/seats/[seat]/action",
                    )
            if r.status_code != 200:
                run.move_refused += 1
                run.error(
                    f"table {self.index} seat {mover}: {action!r} answered {r.status_code}: {r.text[:200]}"
                )
                return
            self.version = r.json()["version"]
            shown = other.arrival(self.version, SEEN_TIMEOUT_S)
            if not run.measuring:
                return
            run.moves += 1
            run.moves_by_seat[mover] += 1
            if shown is None:
                run.missed += 1
                run.error(
                    f"table {self.index}: seat {1 - mover}'s stream never showed version {self.version}"
                )
            else:
                run.latencies.append(shown - sent)

    class Flood(User):
        """Table creations from one address, each with a forged ``X-Forwarded-For``."""

        host = run.url
        fixed_count = 1
        wait_time = constant_throughput(run.flood_per_s)

        def on_start(self) -> None:
            self.client = session(self, FLOOD_ADDRESS)
            self.sent = 0

        @task
        def create(self) -> None:
            if not run.measuring:
                return
            self.sent += 1
            forged = {"X-Forwarded-For": f"198.51.100.{self.sent % 250 + 1}"}
            with self.client.post(
                "/api/friends",
                json={"name": "Flood"},
                headers=forged,
                name="/api/friends (flood)",
                catch_response=True,
            ) as r:
                run.flood.append((time.monotonic(), r.status_code))
                if r.status_code == 429:
                    r.success()  # refused as it must be: not a failure of the server

    return [FriendTable, Flood]


def hub_lag(lags: list[float], every: float = 0.02) -> None:
    """How late this process's greenlets wake (seconds late, every ``every`` s, until killed): a load
    generator too busy to read its streams on time would add its own delay to the latencies."""
    import gevent

    while True:
        asleep = time.perf_counter()
        gevent.sleep(every)
        lags.append(time.perf_counter() - asleep - every)


def start_probe(url: str, args: argparse.Namespace) -> subprocess.Popen[str]:
    """``play_load_probe.py`` in a process of its own: ``--probe-tables`` tables at the load's pace,
    timed for the measured window (it seats its tables first, in well under a second)."""
    return subprocess.Popen(
        [
            sys.executable,
            str(Path(__file__).resolve().parent / "play_load_probe.py"),
            url,
            "--tables",
            str(args.probe_tables),
            "--seconds",
            str(args.seconds),
            "--pace",
            str(args.tables / args.moves_per_second),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )


def finish_probe(prober: subprocess.Popen[str], args: argparse.Namespace) -> dict[str, Any]:
    """The probe's figures (``{"error": ...}`` if it failed), waiting for it cooperatively."""
    import gevent

    deadline = time.monotonic() + 2 * SEEN_TIMEOUT_S + args.tables / args.moves_per_second + 30
    while prober.poll() is None and time.monotonic() < deadline:
        gevent.sleep(0.2)  # the load's greenlets keep reading their streams meanwhile
    if prober.poll() is None:
        prober.kill()
        prober.wait()
        return {"error": "the probe did not finish in time"}
    out = prober.stdout.read() if prober.stdout else ""
    try:
        return dict(json.loads(out.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return {"error": f"the probe printed no figures: {out[-300:]!r}"}


def final_checks(run: Run) -> dict[str, Any]:
    """After the load: every table answers both seats at the version its streams showed last; no
    replay of a live match is listed or served to a client without a key; no stream leaked a card."""
    import requests

    plain = requests.Session()
    lost, leaked, live_replays = [], [], []
    compared = 0
    for table in run.seated:
        for s, seat in enumerate(table.seats):
            r = plain.get(f"{run.url}/api/seats/{seat.token}", timeout=30)
            if r.status_code != 200:
                lost.append(f"table {table.index} seat {s}: answered {r.status_code}")
            elif r.json()["version"] != seat.version:
                now = r.json()["version"]
                lost.append(
                    f"table {table.index} seat {s}: at version {now}, its stream showed {seat.version}"
                )
            elif seat.version not in seat.seen:
                lost.append(f"table {table.index} seat {s}: the stream never showed the last version")
        views = (table.seats[0].seen, table.seats[1].seen)
        compared += len(views[0].keys() & views[1].keys())
        for line in leaks(views):
            leaked.append(f"table {table.index}: {line}")
    live = {t.index for t in run.seated if not t.over}
    listed = requests.get(f"{run.url}/api/replays", timeout=30).json()["replays"]
    for item in listed:
        found = OUR_REPLAY.search(item["name"])
        if found and int(found.group(1)) in live:
            served = requests.get(f"{run.url}/api/replays/{item['name']}", timeout=30).status_code
            live_replays.append(f"{item['name']} listed (served: {served})")
    return {
        "lost": lost,
        "leaks": leaked,
        "leak_check_versions": compared,
        "live_replays": live_replays,
        "replays_listed": len(listed),
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Start the server, run the load, check the tables, stop the server; the figures."""
    import gevent
    import locust
    from locust.env import Environment

    with tempfile.TemporaryDirectory(prefix="ginenv-load-") as tmp:
        proc, url, lines = start_server(Path(tmp) / "tables", Path(tmp) / "replays")
        try:
            idle_rss = rss_mib(proc.pid)
            # The probe's tables are among the tables asked for, and move at the same pace.
            run = Run(
                url,
                args.tables - args.probe_tables,
                args.tables / args.moves_per_second,
                args.flood_per_second,
            )
            env = Environment(user_classes=user_classes(run), host=url)
            runner = env.create_local_runner()
            ramp_start = time.monotonic()
            runner.start(run.tables + 1, spawn_rate=RAMP_PER_S)
            deadline = ramp_start + min(RAMP_MAX_S, 30 + 2 * run.tables / RAMP_PER_S)
            while len(run.seated) + run.failed_tables < run.tables and time.monotonic() < deadline:
                gevent.sleep(0.2)
            ramp_s = time.monotonic() - ramp_start
            rss = [rss_mib(proc.pid) or 0.0]
            streams = [run.streams_open]
            cpu0, own0 = cpu_seconds(proc.pid) or 0.0, resource.getrusage(resource.RUSAGE_SELF)
            sched0 = sched_seconds(proc.pid)
            load_before = os.getloadavg()[0]
            prober = start_probe(url, args)
            start = time.monotonic()
            run.measuring = True
            lags: list[float] = []
            lagger = gevent.spawn(hub_lag, lags)
            while (left := start + args.seconds - time.monotonic()) > 0:
                gevent.sleep(min(1.0, left))
                rss.append(rss_mib(proc.pid) or 0.0)
                streams.append(run.streams_open)
            run.measuring = False
            lagger.kill()
            seconds = time.monotonic() - start
            load_after = os.getloadavg()[0]
            cpu1, own1 = cpu_seconds(proc.pid) or 0.0, resource.getrusage(resource.RUSAGE_SELF)
            sched1 = sched_seconds(proc.pid)
            probed = finish_probe(prober, args)  # its window began as the load's did, a moment later
            runner.quit()
            gevent.sleep(1.0)  # a move sent as the users stopped reaches its streams
            checks = final_checks(run)
            open_at_end = sum(seat.open for table in run.seated for seat in table.seats)
            peak_rss = rss_mib(proc.pid, "VmHWM")
            run.closing = True
            gevent.killall([seat.greenlet for table in run.seated for seat in table.seats if seat.greenlet])
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(timeout=STOP_DEADLINE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
            gevent.sleep(0.2)  # the reader takes the last lines
    own_cpu = (own1.ru_utime + own1.ru_stime) - (own0.ru_utime + own0.ru_stime)
    latencies_ms = sorted(1000 * x for x in run.latencies)
    refused = [t for t, status in run.flood if status == 429]
    accepted = [t for t, status in run.flood if status == 201]
    other = [status for _, status in run.flood if status not in (201, 429)]
    flood_span = run.flood[-1][0] - run.flood[0][0] if run.flood else 0.0
    action = env.stats.get("/api/seats/[seat]/action", "POST")
    probe_streams = 0 if probed.get("error") else 2 * args.probe_tables
    figures: dict[str, Any] = {
        "locust": locust.__version__,
        "cores": os.cpu_count(),
        # The machine's 1-minute load average as the window began and ended: other work competing
        # for the cores shows here (the server and this process together use well under one core).
        "load_average": [round(load_before, 2), round(load_after, 2)],
        "tables_asked": args.tables,
        "tables": len(run.seated) + args.probe_tables * (not probed.get("error")),
        "load_tables": len(run.seated),
        "ramp_s": round(ramp_s, 1),
        "seconds": round(seconds, 1),
        # The load's streams and the probe's (two a table, open through its window).
        "streams_open": {"min": min(streams) + probe_streams, "at_end": open_at_end + probe_streams},
        "load_streams_at_end": open_at_end,
        "moves": run.moves + probed.get("moves", 0),
        "moves_per_second": round((run.moves + probed.get("moves", 0)) / seconds, 1),
        "moves_asked_per_second": args.moves_per_second,
        "moves_by_seat": run.moves_by_seat,
        "hands_dealt": run.hands_dealt,
        "matches_over": run.matches_over,
        # The aim's figure: the probe's moves, timed by a client that waits only for the server.
        "probe": probed,
        # The load's own moves as Locust timed them: with its wait for its own process's turn.
        "latency_ms": {
            "p50": rounded(percentile(latencies_ms, 50)),
            "p99": rounded(percentile(latencies_ms, 99)),
            "max": rounded(max(latencies_ms, default=None)),
            "count": len(latencies_ms),
        },
        "move_answer_ms": {
            "p50": action.get_response_time_percentile(0.5) if action.num_requests else None,
            "p99": action.get_response_time_percentile(0.99) if action.num_requests else None,
        },
        "load_generator_lag_ms": {
            "p50": rounded(percentile(sorted(1000 * x for x in lags), 50)),
            "p99": rounded(percentile(sorted(1000 * x for x in lags), 99)),
        },
        "missed": run.missed,
        "moves_refused": run.move_refused,
        "moves_resent": run.resent,
        "stream_views": run.stream_views,
        "streams_dropped": run.streams_dropped,
        "streams_went_back": run.went_back,
        "server_rss_mib": {
            "idle": rounded(idle_rss),
            "start": rounded(rss[0]),
            "peak_sampled": rounded(max(rss)),
            "high_water": rounded(peak_rss),
        },
        "server_cpu_percent": round(100 * (cpu1 - cpu0) / seconds, 1),
        "load_generator_cpu_percent": round(100 * own_cpu / seconds, 1),
        # Over the window: seconds the server's threads ran, and waited runnable for a CPU that
        # other processes held (the kernel's run-queue accounting).
        "server_sched_s": {"ran": round(sched1[0] - sched0[0], 1), "waited": round(sched1[1] - sched0[1], 1)},
        "creations": {
            "hosts_accepted": run.hosts_accepted,
            "hosts_refused": run.hosts_refused,
            "flood_sent": len(run.flood),
            "flood_accepted": len(accepted),
            "flood_refused": len(refused),
            "flood_other": sorted(set(other)),
            "flood_over_limit": over_limit(accepted, CREATE_LIMIT, CREATE_WINDOW_S),
            "flood_allowed": CREATE_LIMIT * math.ceil(max(flood_span, 1e-9) / CREATE_WINDOW_S),
        },
        "requests": {"total": env.stats.total.num_requests, "failures": env.stats.total.num_failures},
        # Locust's own timings per route (ms, until the answer's headers for the streams).
        "routes": {
            f"{e.method} {e.name}": {
                "count": e.num_requests,
                "p50": e.get_response_time_percentile(0.5),
                "p99": e.get_response_time_percentile(0.99),
            }
            for e in env.stats.entries.values()
            if e.num_requests
        },
        **checks,
        "errors": run.errors,
        "server_exit": code,
        "server_last_line": lines[-1] if lines else "",
    }
    figures["ok"] = not problems(figures)
    figures["problems"] = problems(figures)
    return figures


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run the load test, print the figures; 1 if a check failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tables", type=int, default=AIM_TABLES, help=f"friend tables (default {AIM_TABLES})"
    )
    parser.add_argument(
        "--seconds", type=float, default=60.0, help="seconds measured once every table is seated (default 60)"
    )
    parser.add_argument(
        "--moves-per-second",
        type=float,
        default=AIM_MOVES_PER_S,
        help=f"moves a second, all tables together (default {AIM_MOVES_PER_S:g})",
    )
    parser.add_argument(
        "--flood-per-second",
        type=float,
        default=20.0,
        help="table creations a second from one address (default 20)",
    )
    parser.add_argument(
        "--probe-tables",
        type=int,
        help="of the tables, how many the latency probe plays (default a twentieth, at least 1)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    for name, low, high in (
        ("tables", 2, 2000),
        ("seconds", 1, 600),
        ("moves_per_second", 0.1, 1000),
        ("flood_per_second", 0.1, 200),
    ):
        if not low <= getattr(args, name) <= high:
            flag, value = name.replace("_", "-"), getattr(args, name)
            parser.error(f"--{flag} must be between {low:g} and {high:g}, got {value:g}")

    if args.probe_tables is None:
        args.probe_tables = max(1, args.tables // 20)
    if not 1 <= args.probe_tables <= args.tables - 1:
        parser.error(
            f"--probe-tables must be from 1 to --tables - 1 ({args.tables - 1}), got {args.probe_tables}"
        )
    # Addresses here are numeric: gevent's default resolver would hand each new connection's lookup
    # to a thread (the server closes a seat's idle connection after 5 s, so most moves connect anew).
    os.environ.setdefault("GEVENT_RESOLVER", "block")
    from gevent import monkey

    monkey.patch_all()
    from locust.log import setup_logging

    setup_logging("ERROR")
    figures = measure(args)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print_table(figures)
    return 0 if figures["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
