"""What keeps the play server answering when clients are slow, many, misdirected or its own code fails.

- :func:`guarded_protocol`: uvicorn's HTTP/1.1 protocol (h11) with a deadline for receiving each
  request whole and a cap on open connections, taken at accept (at the cap, the connection that
  has waited longest for a request makes room). uvicorn has no header timeout: its
  keep-alive timer is disarmed by any byte received, so a client that sends one header line every
  few seconds holds its connection (and a file descriptor) for ever, and ``limit_concurrency`` is
  only looked at once a request's headers are complete. Past the cap the connection waiting
  longest for a request is closed, or, when none is, the new one is answered 503 and closed at
  once, so the server never runs out of descriptors (``accept()`` failing with EMFILE).
- :class:`RepeatFilter`: a logging filter that lets the first of a kind of record through and counts
  the repeats, reported in one line later, so that a fault repeated a thousand times a second (the
  listener out of descriptors) is one line and not a flood.
- :class:`HostGuard`: only requests whose ``Host`` header names this server are answered (a page on
  another site whose name was re-pointed at 127.0.0.1, DNS rebinding, would otherwise read the API
  as the same origin).
- :class:`OriginGuard`: only this server's own page changes state. A page on any other site may
  send a browser to ``POST /api/games`` (a form, a ``no-cors`` fetch: no preflight, so the server
  is the only one that can say no); every request that changes state must name this server as its
  ``Origin`` (or, without one, its ``Referer``) and send JSON, which no form or ``no-cors`` fetch
  can.
- :class:`StreamGuard`: push streams are held for as long as a page is open, one descriptor each:
  one client address holds at most :data:`STREAMS_PER_ADDRESS` of them, and all of them together
  at most :data:`STREAM_SHARE` of the connection cap, so plain requests always find connections.
- :class:`NoStore`: every ``/api/`` answer is ``Cache-Control: no-store`` (they hold private views,
  keys and cookies: no cache, shared or the browser's, may keep one).
- :class:`PathScrubber` and :func:`failure_message`: error messages name no folder or file of the
  server; a failure the API does not expect is answered in one generic line, its traceback logged.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import json
import logging
import re
import resource
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Seconds a client has to send a whole request (headers and body), from its connection's start or,
#: on a kept-alive connection, from the request's first byte. A browser sends a request in
#: milliseconds; a client that trickles its headers is holding a connection, not making a request.
REQUEST_TIMEOUT = 10.0
#: Seconds an idle keep-alive connection stays open between two requests (uvicorn's own timer).
KEEP_ALIVE = 5
#: Descriptors kept free of connections: the listener, the state, replay and log files, an agent's
#: checkpoint, the event loop's own (at least this many, or a sixteenth of the limit if more).
FD_HEADROOM = 32
#: The names a request's ``Host`` may give unless told more: this machine's loopback ones.
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
#: Seconds a kind of log record is counted, not written, after its first.
REPEAT_WINDOW = 60.0
#: The request methods that change state: accepted only from this server's own page, as JSON.
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: Push streams one client address (an IPv6 client: its /64, one machine's usual share) may hold
#: open at once, across all tables: a few tabs of a few people behind one address.
STREAMS_PER_ADDRESS = 16
#: The share of the connection cap that push streams together may hold; the rest stays free for
#: requests (a move, a page), each answered in milliseconds.
STREAM_SHARE = 0.5

logger = logging.getLogger("ginenv.play")


def connection_cap(nofile: int | None = None) -> int:
    """The most connections the server holds open: the soft ``RLIMIT_NOFILE`` (``nofile``, or this
    process's) less :data:`FD_HEADROOM` or a sixteenth of it, whichever is larger; at least 8."""
    if nofile is None:
        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if nofile == resource.RLIM_INFINITY or nofile > 1 << 20:
        nofile = 1 << 20
    return max(8, nofile - max(FD_HEADROOM, nofile // 16))


def _raw_answer(status: int, reason: str, message: str) -> bytes:
    """A whole HTTP/1.1 answer that closes its connection: ``{"error": message}``."""
    body = json.dumps({"error": message}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body


@functools.cache
def _guarded_h11() -> type:
    """The protocol class of :func:`guarded_protocol` (built at first use: uvicorn and h11 are
    imported only by a process that serves)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class _GuardedH11(H11Protocol):
        """uvicorn's h11 protocol with a request deadline and a connection cap (:func:`guarded_protocol`)."""

        request_timeout: float = REQUEST_TIMEOUT
        max_connections: int = 1024
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            full = len(self.connections) > self.max_connections
            if full and not _close_longest_waiting(self, self.connections, self.max_connections):
                # Answered and closed at once: its descriptor is free again in microseconds.
                logger.warning(
                    "refused a connection: %d are open, the limit (ginenv play --max-connections)",
                    self.max_connections,
                )
                message = f"the server holds {self.max_connections} connections, its limit: try again shortly"
                transport.write(_raw_answer(503, "Service Unavailable", message))
                transport.close()
                return
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._deadline is None and self.conn.their_state is h11.IDLE:
                self._arm()  # the first bytes of a request on a kept-alive connection: its clock starts
            super().data_received(data)
            self._check()

        def on_response_complete(self) -> None:
            super().on_response_complete()  # may take a request that came meanwhile
            if self.transport.is_closing():
                return
            self._quiet_since = self.loop.time()
            self._disarm()
            self._check()

        def _check(self) -> None:
            """Disarm once a whole request is in (their side past IDLE and SEND_BODY); arm if part of
            one is (an idle kept-alive connection is uvicorn's keep-alive timer's to close)."""
            begun = self.conn.their_state is h11.SEND_BODY or bool(self.conn.trailing_data[0])
            if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
                self._disarm()
            elif begun and self._deadline is None:
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._quiet_since = self.loop.time()  # waiting for a request since (the cap's room)
            self._deadline = self.loop.call_later(self.request_timeout, self._expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expired(self) -> None:
            self._deadline = None
            if self.transport.is_closing():
                return
            begun = self.conn.their_state is h11.SEND_BODY or bool(self.conn.trailing_data[0])
            if begun and self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
                # Part of a request came and nothing was answered yet: say why the connection closes
                # (an idle connection just closes, as a keep-alive one does).
                message = f"the request was not received whole within {self.request_timeout:g} s"
                self.transport.write(_raw_answer(408, "Request Timeout", message))
            self.transport.close()

    return _GuardedH11


def _close_longest_waiting(new: Any, connections: Iterable[Any], cap: int) -> bool:
    """Close the connection (other than ``new``, of :func:`guarded_protocol`'s class) that has
    waited longest without a request being served on it (one still sending its request, 503 then,
    or idle between two), so that a new request is not turned away while slow or idle clients
    hold the connections; False if every other connection is serving a request or a stream."""
    import h11

    guarded: Any = _guarded_h11()
    waiting: list[Any] = [
        c
        for c in connections
        if c is not new
        and isinstance(c, guarded)
        and not c.transport.is_closing()
        and (c._deadline is not None or c.conn.their_state is h11.IDLE)
    ]
    if not waiting:
        return False
    oldest = min(waiting, key=lambda c: c._quiet_since)
    logger.warning(
        "closed the connection waiting longest for a request: %d are open, the limit "
        "(ginenv play --max-connections)",
        cap,
    )
    if oldest.conn.their_state is h11.SEND_BODY or oldest.conn.trailing_data[0]:
        message = (
            f"the server holds {cap} connections, its limit, and this one had waited longest for "
            "its request: send it again"
        )
        oldest.transport.write(_raw_answer(503, "Service Unavailable", message))
    oldest._disarm()
    oldest.transport.close()
    return True


def guarded_protocol(request_timeout: float = REQUEST_TIMEOUT, max_connections: int | None = None) -> type:
    """uvicorn's h11 protocol class (``uvicorn.Config(http=...)``) that closes a connection whose
    request is not received whole within ``request_timeout`` seconds of the connection's start, or
    of the request's first byte on a kept-alive connection (408 if it had begun one). A connection
    accepted beyond ``max_connections`` open (``None``: :func:`connection_cap` of this process's
    descriptor limit) makes room by closing the one that has waited longest for a request (still
    sending it, or idle between two; 503 if it had begun one), so that slow clients cannot keep a
    request out; when every other connection is serving a request or a stream, the new one is
    answered 503 and closed."""
    cap = connection_cap() if max_connections is None else max_connections
    return type(
        "GuardedH11Protocol", (_guarded_h11(),), {"request_timeout": request_timeout, "max_connections": cap}
    )


class RepeatFilter(logging.Filter):
    """Lets the first record of a kind (logger, level, first line of the message, exception type)
    through, then drops and counts that kind's records for ``window`` seconds; the first one after
    carries the count ("N more like this in the last W s were not logged"), and :meth:`flush`
    writes the counts still held (the server calls it as it stops)."""

    def __init__(self, window: float = REPEAT_WINDOW, clock: Any = time.monotonic) -> None:
        super().__init__()
        self.window = window
        self.clock = clock
        self._kinds: dict[tuple[Any, ...], list[Any]] = {}  # kind -> [since, dropped, first line]
        self._lock = threading.Lock()

    @staticmethod
    def _kind(record: logging.LogRecord) -> tuple[Any, ...]:
        first = str(record.msg).split("\n", 1)[0][:200]
        kind = record.exc_info[0].__name__ if record.exc_info and record.exc_info[0] else ""
        return (record.name, record.levelno, first, kind)

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether ``record`` is written (see the class)."""
        if getattr(record, "repeats_flushed", False):
            return True
        key, now = self._kind(record), self.clock()
        with self._lock:
            held = self._kinds.get(key)
            if held is not None and now - held[0] < self.window:
                held[1] += 1
                return False
            dropped = int(held[1]) if held is not None else 0
            self._kinds[key] = [now, 0, record.getMessage().split("\n", 1)[0][:200]]
        if dropped:
            note = f"{dropped} more like this in the last {self.window:g} s were not logged"
            record.msg = f"{record.getMessage()} ({note})"
            record.args = None
        return True

    def flush(self) -> None:
        """Write one line for each kind of record that has repeats not reported yet."""
        with self._lock:
            pending = [(key, held[1], held[2]) for key, held in self._kinds.items() if held[1]]
            for key, _, _ in pending:
                self._kinds[key][1] = 0
        for (name, level, _, _), count, first in pending:
            extra = {"repeats_flushed": True}
            logging.getLogger(name).log(
                level, "%d more like this were not logged: %s", count, first, extra=extra
            )


#: The filter every server of this process shares (:func:`quiet_repeats`).
REPEATS = RepeatFilter()
#: The loggers a fault can repeat on: asyncio's (``accept()`` out of descriptors), uvicorn's, ours.
NOISY_LOGGERS = ("asyncio", "uvicorn.error", "uvicorn", "ginenv.play")


def quiet_repeats() -> RepeatFilter:
    """Install :data:`REPEATS` on the :data:`NOISY_LOGGERS` (once) and return it."""
    for name in NOISY_LOGGERS:
        target = logging.getLogger(name)
        if REPEATS not in target.filters:
            target.addFilter(REPEATS)
    return REPEATS


def _host_name(value: str) -> str:
    """The name of a ``Host`` header without its port, lower case (``[::1]:8765`` -> ``::1``)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value  # a name, or a bare IPv6 address


def allowed_hosts(host: str, more: Iterable[str] = ()) -> list[str]:
    """The ``Host`` names a server listening on ``host`` answers to: :data:`LOOPBACK_HOSTS`,
    ``host`` itself unless it is every interface (``0.0.0.0``, ``::``), and ``more`` (``*``:
    any)."""
    names = list(LOOPBACK_HOSTS)
    for name in (host, *more):
        name = _host_name(name)
        if name and name not in ("0.0.0.0", "::") and name not in names:
            names.append(name)
    return names


def check_host_name(value: str, option: str = "--allow-host") -> str:
    """An ``--allow-host`` value: a host name or IP address (no port, no scheme), or ``*``."""
    name = value.strip()
    if name == "*":
        return name
    bare = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    try:
        ipaddress.ip_address(bare)
        return bare.lower()
    except ValueError:
        pass
    if not re.fullmatch(
        r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?",
        name,
    ):
        raise ValueError(
            f"{option}: {name[:60]!r} is not a host name or IP address; give the name clients put in "
            "the address bar, without scheme or port (e.g. gin.example.org, 192.168.1.20), or *"
        )
    return name.lower().rstrip(".")


def _json_refusal(status: int, message: str) -> Any:
    """A one-line ``{"error": message}`` answer that no cache keeps."""
    from starlette.responses import JSONResponse  # here: the CLI imports this module to start

    return JSONResponse({"error": message}, status, headers={"Cache-Control": "no-store"})


class HostGuard:
    """ASGI middleware: a request whose ``Host`` header is not one of ``hosts`` (names or addresses,
    without port; ``*`` among them: any) is answered 400 ``{"error": ...}`` before the app sees it."""

    def __init__(self, app: ASGIApp, hosts: Sequence[str]) -> None:
        self.app = app
        self.hosts = [_host_name(h) if h != "*" else h for h in hosts]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or "*" in self.hosts:
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
        if _host_name(given) in self.hosts:
            await self.app(scope, receive, send)
            return
        shown = "no Host header" if not given else f"Host {given[:60]!r}"
        names = ", ".join(f"[{h}]" if ":" in h else h for h in self.hosts)
        message = (
            f"this server does not answer to {shown}: it answers to {names} "
            "(ginenv play --allow-host NAME adds a name)"
        )
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await _json_refusal(400, message)(scope, receive, send)


#: The port a URL of each scheme names when it names none.
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(value: str) -> tuple[str, str, int] | None:
    """The scheme, host name and port of the origin of ``value`` (an ``Origin`` header or a URL);
    None if it names no web origin (``null``, a path, another scheme, a bad port)."""
    try:
        parts = urllib.parse.urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return parts.scheme, parts.hostname.rstrip("."), port or _DEFAULT_PORTS[parts.scheme]


def _host_port(value: str, scheme: str) -> tuple[str, int] | None:
    """The name and port a ``Host`` header gives (the scheme's default port when it names none)."""
    try:
        parts = urllib.parse.urlsplit("//" + value.strip())
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname or parts.path or parts.query or parts.username is not None:
        return None
    return parts.hostname.rstrip("."), port or _DEFAULT_PORTS.get(scheme, 80)


class OriginGuard:
    """ASGI middleware: a request that changes state (:data:`STATE_CHANGING`, on any path) is
    answered 403 ``{"error": ...}`` unless its ``Origin`` header, or without one its ``Referer``'s
    origin, is this server's own: ``http`` or ``https``, and the name and port of the request's
    ``Host`` header, a name of ``hosts`` (``*`` among them: any name). A request with neither
    header is refused too: browsers send ``Origin`` with every cross-site request and with every
    ``POST``, ``PUT``, ``PATCH`` and ``DELETE`` of a page's own ``fetch``, so only a client that is
    not a browser sends neither, and it can send the header. Then such a request must say
    ``Content-Type: application/json`` (415 otherwise), which no HTML form and no ``no-cors`` fetch
    can send, so none of them reaches a route even from a page the origin check would let by.
    ``GET``, ``HEAD`` and ``OPTIONS`` pass as they are (they change nothing)."""

    def __init__(self, app: ASGIApp, hosts: Sequence[str]) -> None:
        self.app = app
        self.hosts = [_host_name(h) if h != "*" else h for h in hosts]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in STATE_CHANGING:
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            await _json_refusal(*refusal)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """The status and message a state-changing request is refused with, or None: it passes."""
        headers = {name.lower(): value.decode("latin-1") for name, value in scope["headers"]}
        host = headers.get(b"host", "")
        origin = headers.get(b"origin")
        if origin is not None:
            got = f"Origin {origin[:60]!r}"
        elif b"referer" in headers:
            # The page's origin only: the rest of its address is no business of this check.
            try:
                parts = urllib.parse.urlsplit(headers[b"referer"].strip())
                origin = f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}" if parts.scheme else "null"
            except ValueError:
                origin = "null"
            got = f"a Referer from {origin[:60]!r}"
        else:
            got = "neither Origin nor Referer"
        if origin is None or not self.ours(origin, host):
            ours = f"{scope.get('scheme', 'http')}://{host}" if host else "this server's address"
            return (
                403,
                f"state changes are accepted only from this server's own page (Origin {ours}); got {got}",
            )
        media = headers.get(b"content-type", "").split(";", 1)[0].strip().lower()
        if media != "application/json":
            sent = headers.get(b"content-type")
            given = f"Content-Type {sent[:60]!r}" if sent is not None else "no Content-Type"
            return 415, (
                "a request that changes state must send JSON (Content-Type: application/json, "
                f"and {{}} when it has nothing to say); got {given}"
            )
        return None

    def ours(self, origin: str, host: str) -> bool:
        """Whether ``origin`` is the origin of this server as a request's ``Host`` header names it."""
        found = _origin(origin)
        if found is None:
            return False
        scheme, name, port = found
        named = _host_port(host, scheme)
        if named is None or named != (name, port):
            return False
        return "*" in self.hosts or name in self.hosts


def stream_cap(connections: int) -> int:
    """The push streams a server holding at most ``connections`` connections keeps open at once:
    :data:`STREAM_SHARE` of them, at least 1."""
    return max(1, int(connections * STREAM_SHARE))


def address_key(address: str) -> str:
    """The key a client address is counted under: an IPv4 address itself, an IPv6 one its /64
    (a machine's usual share of addresses; a v4-mapped one its IPv4 address)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class StreamGuard:
    """ASGI middleware: the ``GET`` requests whose path matches ``paths`` (the push streams) are
    counted while the application serves them, and one beyond ``per_address`` open streams of its
    client's address (:func:`address_key`) or beyond ``total`` open in all is answered 429
    ``{"error": ...}`` at once. Counted here, around the application's call, a stream is released
    however it ends (the page closed, the network lost, the server stopping), even before its
    first event. All of it runs on the event loop: no lock."""

    def __init__(
        self, app: ASGIApp, paths: re.Pattern[str], total: int, per_address: int = STREAMS_PER_ADDRESS
    ) -> None:
        self.app = app
        self.paths = paths
        self.total = total
        self.per_address = per_address
        self.held: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or not self.paths.fullmatch(scope["path"]):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        key = address_key(client[0] if client else "unknown")
        message = None
        if self.held[key] >= self.per_address:
            message = (
                f"this address holds {self.held[key]} push streams of this server open, its limit: "
                "close a page of it (a table's page reconnects by itself after a pause)"
            )
        elif self.held.total() >= self.total:
            message = (
                f"the server holds {self.held.total()} push streams, its limit (half its connections): "
                "try again shortly (a table's page reconnects by itself after a pause)"
            )
        if message is not None:
            await _json_refusal(429, message)(scope, receive, send)
            return
        self.held[key] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.held[key] -= 1
            if self.held[key] <= 0:
                del self.held[key]


class NoStore:
    """ASGI middleware: every answer under ``/api/`` carries ``Cache-Control: no-store`` unless the
    route set its own ``Cache-Control``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/api/"):
            await self.app(scope, receive, send)
            return

        async def send_no_store(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(name.lower() == b"cache-control" for name, _ in headers):
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_no_store)


class PathScrubber:
    """Rewrites error messages so that they name no folder of the server: a named folder (longest
    first) becomes its label (``the replay folder``), a file under it its own name."""

    def __init__(self, folders: Iterable[tuple[Path | str, str]]) -> None:
        spelled: dict[str, str] = {}
        for folder, label in folders:
            for form in {str(folder), str(Path(folder).expanduser().resolve())}:
                if len(form) > 1:
                    spelled.setdefault(form.rstrip("/"), label)
        self._folders = sorted(spelled.items(), key=lambda item: -len(item[0]))
        self._pattern = (
            re.compile("|".join(f"({re.escape(path)})(/[^\\s'\",;)]*)?" for path, _ in self._folders))
            if self._folders
            else None
        )

    def __call__(self, message: str) -> str:
        """``message`` without the server's folders."""
        if self._pattern is None:
            return message

        def label(found: re.Match[str]) -> str:
            groups = found.groups()
            for i, (_, name) in enumerate(self._folders):
                if groups[2 * i] is not None:
                    rest = groups[2 * i + 1]
                    return Path(rest).name if rest and rest.strip("/") else name
            return found.group(0)  # pragma: no cover - one alternative always matched

        return self._pattern.sub(label, message)


def failure_message(err: BaseException) -> str:
    """The one line a client gets for a failure the API did not expect: what failed, without the
    server's paths (an OSError's text names its file: only its reason is given)."""
    if isinstance(err, OSError):
        reason = err.strerror or type(err).__name__
        return f"the server could not read or write one of its files ({reason}); the details are in its log"
    return "the server failed on this request (an internal error); the details are in its log"
