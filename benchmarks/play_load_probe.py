"""The latency probe of the play server's load test: a few friend tables played by plain threads.

    python benchmarks/play_load_probe.py URL --tables 10 --seconds 60 --pace 4

``bench_play_load.py`` starts this script in a process of its own beside the Locust load: each of
``--tables`` friend tables is created and joined from addresses of its own (127.3.0.x, 127.4.0.x),
both seats open their event streams (one thread each, ``http.client``), and the table moves every
``--pace`` seconds, as the load's tables do, through a new connection each time (a browser whose
idle connection the server closed). For ``--seconds`` it times each move from sending it until the
OTHER seat's stream shows its version, and until its answer, and prints one JSON object.

Why a second client: Locust runs every table of the load in one process (hundreds of greenlets
reading hundreds of streams), and its own timings carry the time its requests and readers wait
for that process's turn; a move the probe times waits only for the server. Both figures are
reported.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import sys
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from play_load_checks import choose_move, percentile, rounded

#: Seconds a move may take to reach the other seat's stream before it counts as missed.
SEEN_TIMEOUT_S = 10.0


class Seat:
    """One seat of a probe table: its key, its address, and what its stream showed when."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.token = ""
        self.view: dict[str, Any] = {}
        self.arrivals: dict[int, float] = {}


class ProbeTable:
    """A friend table whose two seats are played by this process's threads."""

    def __init__(self, host: str, port: int, index: int, deadline_s: float) -> None:
        self.host, self.port, self.index = host, port, index
        self.seats = (Seat(f"127.3.0.{index + 1}"), Seat(f"127.4.0.{index + 1}"))
        self.cond = threading.Condition()
        self.version = 0
        self.rng = random.Random(index)
        self.deadline_s = deadline_s
        self.latencies: list[float] = []
        self.answers: list[float] = []
        self.missed = 0
        self.errors: list[str] = []

    def request(self, seat: Seat, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One request on a new connection from ``seat``'s address; the status and the JSON."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30, source_address=(seat.address, 0))
        try:
            # JSON with the page's Origin, as the page's own requests: the server takes no other.
            headers = {"Content-Type": "application/json", "Origin": f"http://{self.host}:{self.port}"}
            conn.request(method, path, body=json.dumps({} if body is None else body), headers=headers)
            answer = conn.getresponse()
            return answer.status, json.loads(answer.read() or b"null")
        finally:
            conn.close()

    def seat_down(self) -> None:
        """Create the table, join it, and open both streams (each read by a daemon thread)."""
        host, guest = self.seats
        status, made = self.request(host, "POST", "/api/friends", {"name": f"Probe{self.index}"})
        if status != 201:
            raise RuntimeError(f"probe table {self.index}: creation answered {status}: {made}")
        host.token = made["seat"]
        invite = made["view"]["invite"].removeprefix("/#join=")
        status, joined = self.request(
            guest, "POST", "/api/friends/join", {"invite": invite, "name": f"Probe{self.index}Guest"}
        )
        if status != 200:
            raise RuntimeError(f"probe table {self.index}: join answered {status}: {joined}")
        guest.token = joined["seat"]
        self.version = joined["view"]["version"]
        for seat in self.seats:
            threading.Thread(target=self.read_stream, args=(seat,), daemon=True).start()
        if not self.caught_up():
            raise RuntimeError(f"probe table {self.index}: a stream did not show the seated table")

    def read_stream(self, seat: Seat) -> None:
        """Read ``seat``'s event stream, noting when each version first arrived."""
        conn = http.client.HTTPConnection(self.host, self.port, source_address=(seat.address, 0))
        conn.request("GET", f"/api/seats/{seat.token}/stream")
        answer = conn.getresponse()
        buffer = b""
        while chunk := answer.read1(65536):
            buffer += chunk
            while (cut := buffer.find(b"\n\n")) >= 0:
                message, buffer = buffer[:cut], buffer[cut + 2 :]
                lines = message.decode("utf-8").split("\n")
                if "event: view" not in lines:
                    continue
                view = json.loads("".join(line[6:] for line in lines if line.startswith("data: ")))
                at = time.perf_counter()
                with self.cond:
                    seat.view = view
                    seat.arrivals.setdefault(int(view["version"]), at)
                    self.cond.notify_all()

    def shown(self, seat: Seat, version: int) -> float | None:
        """When ``seat``'s stream first showed ``version`` or a later one (waits for it)."""
        with self.cond:
            self.cond.wait_for(lambda: any(v >= version for v in seat.arrivals), SEEN_TIMEOUT_S)
            return min((at for v, at in seat.arrivals.items() if v >= version), default=None)

    def caught_up(self) -> bool:
        return all(self.shown(seat, self.version) is not None for seat in self.seats)

    def play(self, start: float, pace_s: float) -> None:
        """Move every ``pace_s`` seconds from a random start until the deadline."""
        due = start + self.rng.uniform(0, pace_s)
        while True:
            time.sleep(max(0.0, due - time.monotonic()))
            if time.monotonic() >= self.deadline_s:
                return
            due += pace_s
            try:
                self.move()
            except (OSError, http.client.HTTPException, RuntimeError) as err:
                self.errors.append(f"probe table {self.index}: {type(err).__name__}: {err}")
                return

    def move(self) -> None:
        """One move of the seat to move, timed (after a showdown, both press Next hand first)."""
        if not self.caught_up():
            self.missed += 1
            raise RuntimeError(f"version {self.version} never reached a stream")
        with self.cond:
            views = [dict(seat.view) for seat in self.seats]
        if views[0]["stage"] == "over":
            return
        if views[0]["stage"] == "showdown":
            for seat in self.seats:
                status, out = self.request(seat, "POST", f"/api/seats/{seat.token}/next")
                if status != 200:
                    raise RuntimeError(f"Next hand answered {status}: {out}")
                self.version = max(self.version, out["version"])
            return
        mover = next((s for s in (0, 1) if views[s].get("legal")), None)
        if mover is None:
            raise RuntimeError(f"neither seat has a legal move at version {self.version}")
        seat, other = self.seats[mover], self.seats[1 - mover]
        sent = time.perf_counter()
        status, out = self.request(
            seat, "POST", f"/api/seats/{seat.token}/action", {"action": choose_move(views[mover], self.rng)}
        )
        answered = time.perf_counter()
        if status != 200:
            raise RuntimeError(f"a legal move answered {status}: {out}")
        self.version = out["version"]
        shown = self.shown(other, self.version)
        if shown is None:
            self.missed += 1
            raise RuntimeError(f"version {self.version} never reached the other seat's stream")
        self.answers.append(1000 * (answered - sent))
        self.latencies.append(1000 * (shown - sent))


def probe(url: str, tables: int, seconds: float, pace_s: float) -> dict[str, Any]:
    """Seat ``tables`` probe tables on the server at ``url``, play them for ``seconds``; the figures."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    deadline = time.monotonic() + seconds + 30
    probes = [ProbeTable(host, port, i, deadline) for i in range(tables)]
    for table in probes:
        table.seat_down()
    start = time.monotonic()
    for table in probes:
        table.deadline_s = start + seconds
    players = [threading.Thread(target=t.play, args=(start, pace_s), daemon=True) for t in probes]
    for player in players:
        player.start()
    for player in players:
        player.join(seconds + 2 * SEEN_TIMEOUT_S + pace_s)
    latencies = sorted(x for t in probes for x in t.latencies)
    answers = sorted(x for t in probes for x in t.answers)
    return {
        "tables": tables,
        "seconds": round(time.monotonic() - start, 1),
        "moves": len(latencies),
        "latency_ms": {
            "p50": rounded(percentile(latencies, 50)),
            "p99": rounded(percentile(latencies, 99)),
            "max": rounded(max(latencies, default=None)),
        },
        "answer_ms": {"p50": rounded(percentile(answers, 50)), "p99": rounded(percentile(answers, 99))},
        "missed": sum(t.missed for t in probes),
        "errors": [e for t in probes for e in t.errors],
    }


def main(argv: list[str] | None = None) -> int:
    """Parse the options, probe, print the figures as one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="the server, e.g. http://127.0.0.1:8765")
    parser.add_argument("--tables", type=int, default=10, help="probe tables (default 10, at most 250)")
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds measured (default 60)")
    parser.add_argument("--pace", type=float, default=4.0, help="seconds between a table's moves (default 4)")
    args = parser.parse_args(argv)
    if not 1 <= args.tables <= 250:
        parser.error(f"--tables must be between 1 and 250, got {args.tables}")
    try:
        figures = probe(args.url, args.tables, args.seconds, args.pace)
    except (OSError, http.client.HTTPException, RuntimeError) as err:
        print(json.dumps({"error": f"{type(err).__name__}: {err}"}))
        return 1
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
