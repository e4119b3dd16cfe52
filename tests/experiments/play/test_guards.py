"""The play server's guards (experiments/play/guards.py): slow and idle clients time out, connections
stay below the descriptor limit, a repeated fault is logged once with a count, only requests naming
this server are answered, private answers are not cached, and no error names a folder of the server.

The slow-client test runs ``ginenv play`` in a process of its own under ``ulimit -n 128`` (set in
the child before it starts) and holds more connections than that, each sending one header line at
a time, as the attack did; the restart test stops a server with a client connected (its end of the
connection then waits in TIME_WAIT) and starts another on the same port at once.
"""

from __future__ import annotations

import http.client
import json
import logging
import random
import re
import resource
import select
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from ginenv.experiments.play.guards import (
    STREAMS_PER_ADDRESS,
    PathScrubber,
    RepeatFilter,
    StreamGuard,
    address_key,
    allowed_hosts,
    check_host_name,
    connection_cap,
    failure_message,
    stream_cap,
)
from ginenv.experiments.play.server import create_app, serve_in_background
from play.moves import step

#: The descriptor limit the slow-client test's server runs under, and the connections it is sent.
NOFILE = 128
SLOW = 150
#: Seconds a request may take in those tests (the default is 10 s).
TIMEOUT_S = 1.0
#: A server's whole output under that flood: a few lines, never a traceback per fault.
LOG_BOUND = 4000


def _low_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def _server(
    tmp_path: Path, *options: str, port: int = 0, nofile: bool = False
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``ginenv play`` in a process (``nofile``: under ``ulimit -n 128``) with its port."""
    command = f"-m ginenv.experiments.cli play --no-browser --port {port}".split()
    folders = ["--state-dir", str(tmp_path / "tables"), "--replay-dir", str(tmp_path / "replays")]
    proc = subprocess.Popen(
        [sys.executable, *command, *folders, *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_low_limit if nofile else lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"http://[\w.]+:(\d+)", line)
        assert found, line + proc.stdout.read()
        yield proc, int(found.group(1))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _get(port: int, path: str = "/api/options", host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers={"Host": host} if host else {})
        answer = conn.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        conn.close()


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    return out


def _slowloris(port: int, seconds: float) -> dict[socket.socket, bytes]:
    """Open :data:`SLOW` connections that each send a request line, then a header line every 0.2 s;
    returns what each received before the server closed it (those it did not close: absent)."""
    socks = []
    for _ in range(SLOW):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(b"GET /api/options HTTP/1.1\r\n")
        socks.append(sock)
    got: dict[socket.socket, bytes] = {}
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and len(got) < len(socks):
            open_ = [s for s in socks if s not in got]
            ready, _, _ = select.select(open_, [], [], 0.2)
            for sock in ready:
                try:
                    got[sock] = sock.recv(4096)
                except OSError:
                    got[sock] = b""
            for sock in open_:
                if sock not in got:
                    try:
                        sock.sendall(b"X-Slow: 1\r\n")
                    except OSError:
                        got[sock] = b""
    finally:
        for sock in socks:
            sock.close()
    return got


def test_slow_clients_time_out_below_the_descriptor_limit_and_the_log_stays_small(tmp_path: Path) -> None:
    with _server(tmp_path, "--request-timeout", str(TIMEOUT_S), nofile=True) as (proc, port):
        start = time.monotonic()
        got = _slowloris(port, 4 * TIMEOUT_S + 2)
        # Every slow connection was closed by the server, within a few timeouts: those it held
        # with 408 once their time ran out, those beyond its cap with 503 at once.
        assert len(got) == SLOW, f"{SLOW - len(got)} slow connections were still open"
        assert time.monotonic() - start < 4 * TIMEOUT_S + 2
        status = Counter(answer[:12] for answer in got.values())
        assert status[b"HTTP/1.1 408"] >= connection_cap(NOFILE) // 2, status
        assert set(status) <= {b"HTTP/1.1 408", b"HTTP/1.1 503", b""}, status
        # A normal client is served at once afterwards.
        code, _, body = _get(port)
        assert code == 200 and json.loads(body)["opponents"]
        out = _stop(proc)
    assert len(out.encode()) < LOG_BOUND, out


def test_a_fault_repeated_thousands_of_times_is_logged_once_with_its_count(tmp_path: Path) -> None:
    # With no cap below the descriptor limit, accept() runs out of descriptors (EMFILE) over and
    # over while the slow connections are held: asyncio logs a traceback for each try.
    options = ("--request-timeout", str(TIMEOUT_S), "--max-connections", "100000")
    with _server(tmp_path, *options, nofile=True) as (proc, port):
        got = _slowloris(port, 4 * TIMEOUT_S + 2)
        assert len(got) == SLOW
        code, _, _ = _get(port)
        assert code == 200
        out = _stop(proc)
    assert len(out.encode()) < LOG_BOUND, out
    assert out.count("out of system resource") <= 3, out
    assert re.search(r"\d+ more like this .*not logged", out), out


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_restart_right_after_sigterm_listens_on_the_same_port(tmp_path: Path) -> None:
    port = _free_port()
    with _server(tmp_path, port=port) as (proc, _):
        # A keep-alive connection the server closes as it stops: its end waits in TIME_WAIT.
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/api/options")
        assert conn.getresponse().read()
        _stop(proc)
        conn.close()
    with _server(tmp_path, port=port) as (proc, started):
        assert started == port
        assert _get(port)[0] == 200
        _stop(proc)


def test_only_requests_naming_this_server_are_answered(tmp_path: Path) -> None:
    app = create_app(replay_dir=tmp_path / "replays", state_dir=tmp_path / "tables")
    server = serve_in_background(app, allow_hosts=["gin.example.org"])
    port = int(server.url.rsplit(":", 1)[1])
    try:
        for host in (
            f"localhost:{port}",
            f"127.0.0.1:{port}",
            f"[::1]:{port}",
            "gin.example.org",
            "LOCALHOST",
        ):
            assert _get(port, host=host)[0] == 200, host
        for host in ("rebind.attacker.example:80", f"127.0.0.2:{port}", "example.org"):
            code, headers, body = _get(port, host=host)
            assert code == 400 and headers["content-type"] == "application/json"
            message = json.loads(body)["error"]
            assert "\n" not in message and repr(host) in message
            assert "localhost, 127.0.0.1, [::1], gin.example.org" in message and "--allow-host" in message
    finally:
        server.stop()
    # "*" answers any name (behind a proxy that checks it).
    server = serve_in_background(app, allow_hosts=["*"])
    try:
        assert _get(int(server.url.rsplit(":", 1)[1]), host="anything.example")[0] == 200
    finally:
        server.stop()


def test_allowed_hosts_and_their_option() -> None:
    assert allowed_hosts("127.0.0.1") == ["localhost", "127.0.0.1", "::1"]
    assert allowed_hosts("0.0.0.0", ["192.168.1.20", "[fe80::1]"]) == [
        "localhost",
        "127.0.0.1",
        "::1",
        "192.168.1.20",
        "fe80::1",
    ]
    assert allowed_hosts("gin.local") == ["localhost", "127.0.0.1", "::1", "gin.local"]
    assert check_host_name("Gin.Example.org.") == "gin.example.org"
    assert check_host_name("[::1]") == "::1" and check_host_name("*") == "*"
    for bad in ("http://gin.example.org", "gin.example.org:8765", "a b", ""):
        with pytest.raises(ValueError, match="is not a host name or IP address"):
            check_host_name(bad)
    done = subprocess.run(
        [sys.executable, "-m", "ginenv.experiments.cli", "play", "--allow-host", "http://x/"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "--allow-host: 'http://x/' is not a host name or IP address" in done.stderr


def test_every_api_answer_is_no_store(tmp_path: Path) -> None:
    with TestClient(create_app(replay_dir=tmp_path / "replays", state_dir=tmp_path / "tables")) as c:
        answers = [
            c.get("/api/options"),
            c.get("/api/replays"),
            c.get("/api/replays/none.json"),
            c.get("/api/nowhere"),
            c.post("/api/replays/view", content=b"{}"),
            c.post("/api/games", content=b"x" * 20_000),  # refused by the body limit
            c.post("/api/games", json={}),
        ]
        for answer in answers:
            assert answer.headers["cache-control"] == "no-store", (answer.request.url, answer.status_code)
        assert "no-store" not in c.get("/").headers.get("cache-control", "")


def test_errors_name_no_folder_of_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state_dir = tmp_path / "tables"
    secret = state_dir / "agents" / "model.pt"

    class Failing:
        """A computer player whose file cannot be read: its error names the file."""

        def reset(self, *args: object, **kwargs: object) -> None:
            pass

        def act(self, *args: object, **kwargs: object) -> int:
            raise PermissionError(13, "Permission denied", str(secret))

    app = create_app(replay_dir=tmp_path / "replays", state_dir=state_dir, make_agent=lambda *_: Failing())
    with TestClient(app, raise_server_exceptions=False) as c:
        answers = [c.get("/api/replays/none.json")]
        view = c.post("/api/games", json={"seed": 3}).json()
        rng = random.Random(0)
        while view["turn"] != "opponent":
            view = step(c, view, rng)
        failed = c.post(f"/api/games/{view['id']}/advance")
        assert failed.status_code == 500 and "model.pt" in failed.json()["error"]
        answers.append(failed)

        # A failure the API does not expect (here the table store's disk) is one generic line.
        def broken(*_: object) -> None:
            raise OSError(5, "Input/output error", str(state_dir / "tables.sqlite3"))

        monkeypatch.setattr(app.state.store, "game", broken)
        unexpected = c.get(f"/api/games/{view['id']}")
        assert unexpected.status_code == 500 and unexpected.headers["cache-control"] == "no-store"
        assert unexpected.json() == {"error": failure_message(OSError(5, "Input/output error"))}
        answers.append(unexpected)
    for answer in answers:
        assert str(tmp_path) not in answer.text and str(Path.home()) not in answer.text, answer.text


def test_path_scrubber_names_files_and_folders_without_their_place(tmp_path: Path) -> None:
    scrub = PathScrubber([(tmp_path / "replays", "the replay folder"), (tmp_path, "the state folder")])
    assert scrub(f"no replay in {tmp_path / 'replays'}") == "no replay in the replay folder"
    assert scrub(f"cannot read '{tmp_path / 'replays' / 'a.json'}': bad") == "cannot read 'a.json': bad"
    assert scrub(f"{tmp_path}/t/x.json and {tmp_path}") == "x.json and the state folder"
    assert scrub("no such page or API route: /api/x") == "no such page or API route: /api/x"
    assert "/" not in failure_message(PermissionError(13, "Permission denied", "/srv/secret/x"))


def test_repeat_filter_counts_what_it_drops() -> None:
    now = [0.0]
    kept: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            kept.append(record.getMessage())

    log = logging.getLogger("ginenv.test_guards")
    log.propagate = False
    repeats = RepeatFilter(window=60, clock=lambda: now[0])
    log.addFilter(repeats)
    log.addHandler(Keep())
    try:
        for i in range(1000):
            log.error("accept() failed on fd %d", i)
        log.warning("another kind")
        now[0] = 61.0
        log.error("accept() failed on fd %d", 1000)
        log.error("accept() failed on fd %d", 1001)
        repeats.flush()
        repeats.flush()  # nothing left to report
    finally:
        log.removeFilter(repeats)
        log.handlers.clear()
    assert kept == [
        "accept() failed on fd 0",
        "another kind",
        "accept() failed on fd 1000 (999 more like this in the last 60 s were not logged)",
        "1 more like this were not logged: accept() failed on fd 1000",
    ]


def test_the_connection_cap_leaves_descriptors_free() -> None:
    assert connection_cap(128) == 96
    assert connection_cap(1024) == 960
    assert connection_cap(20) == 8
    assert connection_cap(resource.RLIM_INFINITY) < 1 << 20
    assert connection_cap() < resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def _answer(sock: socket.socket) -> bytes:
    """One whole HTTP answer read from ``sock`` (its head and ``Content-Length`` bytes of body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def test_an_idle_connection_is_closed_without_an_answer(tmp_path: Path) -> None:
    app = create_app(replay_dir=tmp_path / "replays", state_dir=tmp_path / "tables")
    server = serve_in_background(app, request_timeout=TIMEOUT_S)
    try:
        port = int(server.url.rsplit(":", 1)[1])
        idle = socket.create_connection(("127.0.0.1", port), timeout=5)
        started = time.monotonic()
        assert idle.recv(100) == b""  # closed, nothing said: no request was begun
        assert TIMEOUT_S * 0.8 < time.monotonic() - started < TIMEOUT_S + 3
        # A slow body is a slow request too.
        slow = socket.create_connection(("127.0.0.1", port), timeout=5)
        slow.sendall(
            b"POST /api/games HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\n"
            b"Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{"
        )
        assert slow.recv(100).startswith(b"HTTP/1.1 408")
        # A request in time is answered, and its connection kept idle for the next one longer than
        # a request may take (the keep-alive timer's to close); the next request's clock starts at
        # its first byte, and one trickled too slowly is 408 on that connection.
        kept = socket.create_connection(("127.0.0.1", port), timeout=5)
        request = b"GET /api/options HTTP/1.1\r\nHost: localhost\r\n\r\n"
        kept.sendall(request)
        assert _answer(kept).startswith(b"HTTP/1.1 200")
        time.sleep(1.5 * TIMEOUT_S)
        kept.sendall(request)
        assert _answer(kept).startswith(b"HTTP/1.1 200")
        kept.sendall(b"GET /api/options HTTP/1.1\r\n")
        started = time.monotonic()
        assert kept.recv(65536).startswith(b"HTTP/1.1 408")
        assert time.monotonic() - started < TIMEOUT_S + 3
    finally:
        server.stop()


# ---------------------------------------------------------------------- push streams and descriptors


def _send(port: int, method: str, path: str, source: str, body: Any = None) -> tuple[int, Any]:
    """One request from ``source`` (an address of 127/8) as the page sends it; status and JSON."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        headers = {"Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/json"}
        conn.request(method, path, body=json.dumps(body if body is not None else {}), headers=headers)
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read() or b"null")
    finally:
        conn.close()


def _friend_tables(port: int, count: int) -> list[dict[str, str]]:
    """``count`` friend tables, each created from an address of its own: their host seat and watch keys."""
    tables = []
    for i in range(count):
        status, made = _send(port, "POST", "/api/friends", f"127.0.3.{i + 1}", {"name": f"Host {i}"})
        assert status == 201, made
        tables.append({"seat": made["seat"], "watch": made["view"]["watch"].removeprefix("/#watch=")})
    return tables


def _open_stream(port: int, path: str, source: str) -> tuple[socket.socket, bytes]:
    """A push stream asked for from ``source``, held open: the socket and the answer's head (and,
    for a refusal, its whole body)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(65536)
        if not chunk:
            return sock, head
        head += chunk
    if head.startswith(b"HTTP/1.1 200"):
        return sock, head
    return sock, head[: head.index(b"\r\n\r\n")] + b"\r\n" + _answer_body(sock, head)


def _answer_body(sock: socket.socket, data: bytes) -> bytes:
    """The body of the answer whose first bytes are ``data`` (its ``Content-Length`` bytes)."""
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        body += sock.recv(65536)
    return body


def _still_open(sock: socket.socket) -> bool:
    """Whether the server has not closed ``sock`` (what it sent meanwhile is read and dropped)."""
    sock.setblocking(False)
    try:
        while True:
            if not sock.recv(65536):
                return False
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        sock.setblocking(True)


def test_streams_are_bounded_per_address_and_in_all_and_released_as_they_close(tmp_path: Path) -> None:
    app = create_app(replay_dir=tmp_path / "replays", state_dir=tmp_path / "tables", pace_ms=0)
    server = serve_in_background(app, max_connections=40)  # streams: at most 20
    port = int(server.url.rsplit(":", 1)[1])
    guard = server.server.config.app.app.app  # HostGuard -> OriginGuard -> StreamGuard
    assert isinstance(guard, StreamGuard) and guard.total == stream_cap(40) == 20
    held: list[socket.socket] = []
    try:
        a, b = _friend_tables(port, 2)
        # One address: 16 streams across two tables (12 spectators of one, 4 of the other), no more.
        for i in range(STREAMS_PER_ADDRESS):
            sock, head = _open_stream(port, f"/api/watch/{(a if i < 12 else b)['watch']}/stream", "127.0.4.1")
            assert head.startswith(b"HTTP/1.1 200"), head
            held.append(sock)
        sock, head = _open_stream(port, f"/api/seats/{b['seat']}/stream", "127.0.4.1")
        sock.close()
        assert head.startswith(b"HTTP/1.1 429"), head
        assert b"this address holds 16 push streams of this server open, its limit" in head
        # Other addresses: the server's share of streams is full at 20.
        for i in range(4):
            sock, head = _open_stream(port, f"/api/watch/{b['watch']}/stream", f"127.0.4.{i + 2}")
            assert head.startswith(b"HTTP/1.1 200"), head
            held.append(sock)
        sock, head = _open_stream(port, f"/api/seats/{b['seat']}/stream", "127.0.4.9")
        sock.close()
        assert head.startswith(b"HTTP/1.1 429") and b"the server holds 20 push streams, its limit" in head
        # A stream closed is counted closed: its address may open one again.
        held.pop(0).close()
        deadline = time.monotonic() + 5
        while guard.held.total() > 19:
            assert time.monotonic() < deadline, guard.held
            time.sleep(0.05)
        sock, head = _open_stream(port, f"/api/seats/{b['seat']}/stream", "127.0.4.1")
        assert head.startswith(b"HTTP/1.1 200"), head
        held.append(sock)
        assert all(_still_open(s) for s in held)
    finally:
        for sock in held:
            sock.close()
        server.stop()
    assert guard.held.total() == 0


def test_stream_keys_and_share() -> None:
    assert address_key("127.0.0.7") == "127.0.0.7"
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:10.0.0.1") == "10.0.0.1" and address_key("unknown") == "unknown"
    assert stream_cap(connection_cap(128)) == 48 and stream_cap(1) == 1


#: Streams and slow connections the descriptor test's attackers ask for, and the honest requests.
ATTACK_STREAMS = 120
ATTACK_SLOW = 100
HONEST = 20


def test_honest_requests_are_answered_while_streams_and_slow_clients_take_all_they_can(
    tmp_path: Path,
) -> None:
    with _server(tmp_path, nofile=True) as (proc, port):
        cap = connection_cap(NOFILE)
        tables = _friend_tables(port, 9)  # room for 108 spectators: more than the cap's 96
        held: list[socket.socket] = []
        slow: list[socket.socket] = []
        try:
            # Streams from ten addresses, twelve each (under the address limit): the share of the
            # connections they may take is full at half the cap, the rest are refused.
            refused = 0
            for i in range(ATTACK_STREAMS):
                path = f"/api/watch/{tables[i % len(tables)]['watch']}/stream"
                sock, head = _open_stream(port, path, f"127.0.5.{i % 10 + 1}")
                if head.startswith(b"HTTP/1.1 200"):
                    held.append(sock)
                else:
                    assert head.startswith(b"HTTP/1.1 429") and b"push streams, its limit" in head, head
                    refused += 1
                    sock.close()
            assert len(held) == stream_cap(cap) and refused == ATTACK_STREAMS - len(held)

            # Slow clients from twenty addresses: more connections than the cap leaves, each sending a
            # header line now and then; one closed by the server is opened again at once.
            def slow_one(i: int) -> socket.socket:
                sock = socket.create_connection(
                    ("127.0.0.1", port), timeout=10, source_address=(f"127.0.6.{i % 20 + 1}", 0)
                )
                sock.sendall(b"GET /api/options HTTP/1.1\r\n")
                return sock

            slow = [slow_one(i) for i in range(ATTACK_SLOW)]
            answered, reopened = [], 0
            for n in range(HONEST * 2):
                for i, sock in enumerate(slow):
                    try:
                        sock.sendall(b"X-Slow: 1\r\n")
                    except OSError:
                        sock.close()
                        slow[i] = slow_one(i)
                        reopened += 1
                if n % 2 == 0:
                    # An honest client: a new connection each time, answered at once.
                    code, _, body = _get(port)
                    answered.append(code)
                    assert code == 200 and json.loads(body)["opponents"], (n, code, body[:200])
                time.sleep(0.06)
            assert answered == [200] * HONEST
            assert reopened > 0  # the slow ones were made to give room, not left the connections
            # No stream was closed for them: streams are not waiting for a request.
            assert all(_still_open(sock) for sock in held)
        finally:
            for sock in held + slow:
                sock.close()
        out = _stop(proc)
    assert len(out.encode()) < LOG_BOUND, out
