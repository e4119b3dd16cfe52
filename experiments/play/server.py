"""The play server of ``ginenv play``: a web page where people play matches against an agent or each other.

:func:`create_app` builds the FastAPI application (served by uvicorn): the play page at ``/``, the
replay page at ``/replay``, their files at ``/static/`` and a JSON API. The routes are grouped by
concern, one ``APIRouter`` a module (:data:`ROUTERS`): ``routes_pages`` (the pages and
``/api/options``), ``routes_games`` (matches against the computer, the game of the day among them),
``routes_friends`` (tables for two people, seats, spectators), ``routes_streams`` (push streams),
``routes_replays`` and ``routes_people`` (where the person at the page stands); what they share
(the store, the settings) is the app's :class:`~ginenv.experiments.play.context.PlayContext`,
reached through a FastAPI dependency. This module owns the application's assembly, its error
answers, the request body cap and the server thread. Every table lives in a
:class:`~ginenv.experiments.play.store.TableStore`: in memory, and in the state folder's SQLite
database, one transaction per change, so a reload, an idle spell, a restart or a crash of the
server returns to the same match. A lock per table serialises its requests.

API (JSON; every error is a non-2xx answer ``{"error": "what was wrong and what is allowed"}``, and
then nothing has changed; an error quotes at most a short excerpt of what the request sent):

====================================  ===============================================================
``GET /api/options``                  opponents, rule presets (name, label, help text, options:
                                      :func:`~ginenv.experiments.play.presets.preset_options`),
                                      the computer's pace, the game of the day, ``share_base``
``POST /api/games``                   ``{"opponent", "preset", "daily", "seed"}`` (all optional): 201
                                      and the view of a new match against the computer; ``daily``:
                                      this person's game of the day (the same table all day: 200)
``GET /api/games/{id}``               the view (:meth:`Table.view`: only what the person may see)
``POST /api/games/{id}/action``       ``{"action": "draw_stock" | "draw_discard" | "pass" |
                                      "discard 7h" | "knock 7h" | "big_gin"}``: the person's move
``POST /api/games/{id}/advance``      the computer makes one decision (the page paces these)
``POST /api/games/{id}/next``         from a hand's showdown to the next hand
``DELETE /api/games/{id}``            abandon the match; its replay is written if a move was made
``POST /api/friends``                 ``{"preset", "target", "name"}``: 201 ``{"table", "seat",
                                      "view"}``, a table for two people (the host is seat 0; the
                                      view carries the invitation and watch links)
``POST /api/friends/join``            ``{"invite", "name"}``: the guest's ``{"table", "seat",
                                      "view"}`` (an invitation works once: 409 after)
``GET /api/seats/{seat}``             that seat's view (``seat``: the seat's own token)
``POST /api/seats/{seat}/action``     that seat's move (as ``/api/games/{id}/action``)
``POST /api/seats/{seat}/next``       Next hand (the next hand starts once both pressed it)
``DELETE /api/seats/{seat}``          leave: the match ends, the other player sees it
``GET /api/seats/{seat}/stream``      server-sent events: ``event: view`` with the view at once
                                      and after every change; a comment line every 15 s
``GET /api/watch/{watch}[/stream]``   a spectator's view (no hand), and its stream
``GET /api/replays``                  the replays of finished matches, newest first
``GET /api/replays/{name}``           one of them as move-by-move frames
``POST /api/replays/view``            any replay file's JSON (also ``ginenv demo --save``'s) as frames
``GET /api/me``                       where the cookie's person stands (``?preset=``, default
                                      ``standard``): their hands against the computer, margins
                                      per level and rating on the ladder's scale
``DELETE /api/me``                    remove every record of the cookie's person (replays stay)
====================================  ===============================================================

Status codes: 400 a malformed request (bad JSON, unknown fields or values, an unknown action name),
404 an unknown game, seat, link or replay, 409 a move the game does not allow now (an illegal move,
out of turn, an invitation already used, today's game already played), 410 a stored table that
cannot be rebuilt, 413 a request body over 16 KiB (a replay over 5 MB), 429 too many new tables
from one address (10 a minute; or its share of stored tables, 20 an address, 200 a /24 or /56
block and 1000 a /16 or /48 network, taken) or too many streams (4 a seat, 12 spectators a table),
500 the computer player failed, 503 a server full of tables all in play (the answer says why and
when to come back).

A replay holds both hands at every step, so the store writes one only in the transaction that ends
its match: finished, left (*Leave*, ``DELETE``), forfeited by the computer, or abandoned (expired,
or dropped for room, after moves); ``/api/replays`` lists and serves those rows, never the replay
folder, which receives a copy of each once committed. As the server stops, the replay of each
unfinished match is copied there too, for the operator, but neither listed nor served: its table
resumes at the next start. Nor is a replay of a game of the day opened to anyone before its day is
over: its deals are everybody's that day (from the server's secret and the date,
:func:`~ginenv.experiments.play.table.daily_key`). The person is a random id in the
``ginenv_player`` cookie.

The server listens on 127.0.0.1 unless told otherwise. The address a client is counted as (10
new tables a minute, its share of stored tables) is its connection's: ``X-Forwarded-For`` is
believed only from the reverse proxies the operator names (``ginenv play --forwarded-allow-ips
127.0.0.1`` behind a proxy on this machine; uvicorn then takes the nearest address in the header
that is not one of them), so a forged header from anyone else changes nothing. The keys in links
(seat, invitation, watch, a computer match's id) are never logged: uvicorn's access log is off.
:func:`serve_in_background` runs the server on a free port in a thread (the browser tests use it).

Served by :func:`serve_in_background` (as ``ginenv play`` is), the server answers only requests
whose ``Host`` names it: ``localhost``, ``127.0.0.1``, ``[::1]``, the ``--host`` it listens on and
each ``--allow-host`` (any other is 400, so that a page whose name was re-pointed at this machine,
DNS rebinding, cannot read it). A client has 10 s to send a whole request (``--request-timeout``;
else 408 and the connection closes), an idle keep-alive connection closes after 5 s, and
connections beyond a cap below the process's descriptor limit (``--max-connections``) are answered
503 at once, or, when some connection is waiting for a request, that one waiting longest is
closed to make room, so slow or many clients cannot take every descriptor; push streams take at
most half of those connections, and one client address at most 16 streams (429 beyond); a log
line repeated (a fault over and over) is written once a minute with a count. A request that
changes state (``POST``, ``PUT``, ``PATCH``, ``DELETE``) is answered only if it comes from this
server's own page, its ``Origin`` (or ``Referer``) this server's (else 403), and says
``Content-Type: application/json`` (else 415), so a page on another site can change nothing here,
not even with a form or a ``no-cors`` fetch. Every ``/api/`` answer is
``Cache-Control: no-store``; an error names no folder of the server, and a failure the API does not
expect is a generic 500 line (its traceback goes to the log).
"""

from __future__ import annotations

import datetime as dt
import functools
import ipaddress
import json
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from ginenv.agents import specs
from ginenv.experiments.play import (
    guards,
    routes_friends,
    routes_games,
    routes_pages,
    routes_people,
    routes_replays,
    routes_streams,
)
from ginenv.experiments.play.checks import PlayError
from ginenv.experiments.play.context import PlayContext
from ginenv.experiments.play.routes_pages import STATIC_DIR as STATIC_DIR
from ginenv.experiments.play.routes_replays import MAX_REPLAY_BYTES
from ginenv.experiments.play.routes_streams import Wakers
from ginenv.experiments.play.store import RateLimit, TableStore
from ginenv.experiments.play.table import Table
from ginenv.experiments.play.words import clip, excerpt
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from ginenv.rules import PRESETS, Rules

#: Where ``ginenv play`` writes replays unless ``--replay-dir`` says otherwise.
DEFAULT_REPLAY_DIR = Path.home() / ".ginenv" / "replays"
#: Where ``ginenv play`` keeps its tables unless ``--state-dir`` says otherwise.
DEFAULT_STATE_DIR = Path.home() / ".ginenv" / "tables"
#: Milliseconds the page waits before each computer decision (a readable pace).
DEFAULT_PACE_MS = 800
#: Tables kept in memory; beyond it idle ones wait on disk (a match in progress is never dropped).
MAX_GAMES = 64
#: Tables one client address may create per minute.
CREATE_PER_MINUTE = 10
#: The largest request body of the game routes (the replay page's upload has its own,
#: :data:`~ginenv.experiments.play.routes_replays.MAX_REPLAY_BYTES`).
MAX_BODY_BYTES = 16 * 1024
_MAX_ERROR = 600
#: The API's routes, grouped by concern: pages and options, matches against the computer (the game
#: of the day among them), friend tables and seats, push streams, replays.
ROUTERS = (routes_pages, routes_games, routes_friends, routes_streams, routes_replays, routes_people)


def _error(status: int, message: str) -> JSONResponse:
    if len(message) > _MAX_ERROR:
        message = message[:_MAX_ERROR] + "…"
    return JSONResponse({"error": message}, status_code=status, headers={"Cache-Control": "no-store"})


def _validation_message(err: RequestValidationError) -> str:
    parts = []
    for e in err.errors():
        if e.get("type") == "json_invalid":
            detail = e.get("ctx", {}).get("error", "parse error")
            return f"malformed request: the body is not valid JSON ({clip(str(detail))})"
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
        parts.append(f"{clip(where)}: {clip(str(e.get('msg', 'invalid')), 120)}")
    return "malformed request: " + "; ".join(parts[:5])


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes (``large``: other limits by path) is
    answered 413 before the application reads it; the body is read at most once, up to the limit."""

    def __init__(self, app: ASGIApp, limit: int, large: dict[str, int] | None = None) -> None:
        self.app = app
        self.limit = limit
        self.large = large or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.large.get(scope["path"], self.limit)
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            await self._refuse(send, limit, length.decode("latin-1")[:20])
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self._refuse(send, limit, None)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body, replayed = b"".join(chunks), False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    @staticmethod
    async def _refuse(send: Send, limit: int, length: str | None) -> None:
        got = f", got {length}" if length else ""
        text = json.dumps({"error": f"a request body may hold at most {limit} bytes{got}"}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(text)).encode()),
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": text})


def trusted_proxies(text: str | None) -> str | None:
    """The proxies whose ``X-Forwarded-For`` is believed, from ``--forwarded-allow-ips``: addresses
    or networks separated by commas (``127.0.0.1``, ``10.0.0.0/8``, ``::1``) or ``*`` (any client:
    only behind a proxy that every request passes); ``None`` or blank: none. Returns the list
    normalised, or None; anything else raises :class:`PlayError` naming the bad item."""
    if text is None or not text.strip():
        return None
    items = [item.strip() for item in text.split(",")]
    if items == ["*"]:
        return "*"
    for item in items:
        try:  # as uvicorn reads them: an item with a "/" is a network (no host bits set)
            ipaddress.ip_network(item) if "/" in item else ipaddress.ip_address(item)
        except ValueError:
            raise PlayError(
                f"--forwarded-allow-ips: {excerpt(item)} is not an IP address or network; give the "
                "addresses of your reverse proxies separated by commas (e.g. 127.0.0.1,::1), or *",
                400,
            ) from None
    return ",".join(items)


def create_app(
    *,
    replay_dir: Path = DEFAULT_REPLAY_DIR,
    state_dir: Path | None = None,
    pace_ms: int = DEFAULT_PACE_MS,
    opponent: str = "normal",
    preset: str = "standard",
    daily: bool = False,
    autostart: bool = False,
    today: Callable[[], dt.date] = dt.date.today,
    make_agent: Callable[[str, Rules], Any] | None = None,
    max_games: int = MAX_GAMES,
    create_per_minute: int = CREATE_PER_MINUTE,
    clock: Callable[[], float] = time.time,
    share_base: str | None = None,
    forwarded_allow_ips: str | None = None,
) -> FastAPI:
    """The play server's application.

    ``opponent``/``preset``/``daily`` preselect the page's choices (``autostart``: start that match
    at once, as ``ginenv play`` does); ``opponent`` may be any agent spec (``checkpoint:PATH``,
    ``file.py:Name``, ``exec:COMMAND``...), which is then the only such spec the page may ask for.
    ``state_dir`` is the folder of the tables (``None``: a temporary folder, gone with the app);
    tables found there resume. ``max_games`` tables stay in memory; ``create_per_minute`` bounds
    the tables one address creates. ``today`` gives the date of the game of the day, ``clock`` the
    time (the tables' expiry); ``make_agent(name, rules)`` builds computer players (the harness's
    factory by default); ``share_base`` (``http://HOST:PORT``) is the address the page puts in
    invitation links when it is not the one the host's browser opened. ``forwarded_allow_ips``
    names the reverse proxies whose ``X-Forwarded-For`` gives the client's address, the one the
    creation limit counts (:func:`trusted_proxies`; ``None``: no proxy, the header is ignored);
    :func:`serve_in_background` hands it to uvicorn.

    The routes (the modules of :data:`ROUTERS`) reach what they share through
    ``app.state.play``, a :class:`~ginenv.experiments.play.context.PlayContext`.
    """
    allowed = _allowed_opponents(opponent, preset)
    trusted = trusted_proxies(forwarded_allow_ips)
    app = FastAPI(title="ginenv play", docs_url=None, redoc_url=None, openapi_url="/api/openapi.json")
    if state_dir is None:
        app.state.scratch = tempfile.TemporaryDirectory(prefix="ginenv-tables-")
        state_dir = Path(app.state.scratch.name)
    # An exec: opponent sees neither the tables (their keys) nor the replays (whole decks).
    build = make_agent or functools.partial(_harness_agent, hide=(state_dir, replay_dir))
    rebuild = functools.partial(Table.from_record, allowed=allowed, make_agent=build, replay_dir=replay_dir)
    store = TableStore(state_dir, rebuild, replay_dir=replay_dir, memory_limit=max_games, clock=clock)
    app.state.wakers = Wakers()
    store.on_change = app.state.wakers.notify
    app.state.store = store
    # The address invitation links name (``ginenv play --host 0.0.0.0`` sets it once it listens).
    app.state.share_base = share_base
    app.state.forwarded_allow_ips = trusted
    # The tables in memory by id, for tests and tools in this process (never sent: they hold the
    # hidden cards).
    app.state.tables = store.loaded
    app.state.play = PlayContext(
        allowed=allowed,
        build=build,
        store=store,
        creations=RateLimit(create_per_minute, 60.0),
        replay_dir=replay_dir,
        pace_ms=pace_ms,
        opponent=opponent,
        preset=preset,
        daily=daily,
        autostart=autostart,
        today=today,
    )
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES, large={"/api/replays/view": MAX_REPLAY_BYTES})
    app.add_middleware(guards.NoStore)  # outermost: BodyLimit's own refusals are private answers too
    # An error message names no folder of the server (an OSError's text, a replay's location).
    folders = {replay_dir: "the replay folder", state_dir: "the state folder", Path.home(): "~"}
    app.state.scrub = guards.PathScrubber(
        [*folders.items(), (Path(tempfile.gettempdir()), "a temporary folder")]
    )
    _answer_errors(app)
    app.include_router(routes_pages.router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    for module in ROUTERS[1:]:
        app.include_router(module.router)
    return app


def _allowed_opponents(opponent: str, preset: str) -> list[str]:
    """The opponents the page may ask for: the registered names and the one spec given on the
    command line, never another file, module or program (a spec is code that runs here)."""
    from ginenv import agents

    allowed: list[str] = list(agents.available())
    if opponent not in allowed:
        if not specs.is_known(opponent):
            raise PlayError(f"unknown opponent {excerpt(opponent)}; choose one of: {', '.join(allowed)}", 400)
        allowed.append(opponent)
    if preset not in PRESETS:
        raise PlayError(f"unknown rules preset {excerpt(preset)}; known presets: {', '.join(PRESETS)}", 400)
    return allowed


def _harness_agent(name: str, rules: Rules, hide: tuple[Path, ...] = ()) -> Any:
    """The computer player ``name`` for ``rules``, as the evaluation harness builds it; an ``exec:``
    one in the strict sandbox where the machine has it (the server holds every table's deal key),
    with the folders ``hide`` hidden from it."""
    from ginenv.agents.sandbox import Sandbox, choose
    from ginenv.experiments.eval.harness import make_agent

    sandbox = Sandbox(choose("auto", secret=True)[0]).hiding(*hide)
    return make_agent(name, rules=rules, sandbox=sandbox)


def _answer_errors(app: FastAPI) -> None:
    """Every error is a JSON ``{"error": ...}`` answer naming no folder of the server."""
    app.add_exception_handler(PlayError, _play_error)
    app.add_exception_handler(RequestValidationError, _bad_request)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _server_failure)


async def _play_error(request: Request, err: Exception) -> JSONResponse:
    assert isinstance(err, PlayError)
    return _error(err.status, request.app.state.scrub(str(err)))


async def _bad_request(_: Request, err: Exception) -> JSONResponse:
    assert isinstance(err, RequestValidationError)
    return _error(400, _validation_message(err))


async def _http_error(request: Request, err: Exception) -> JSONResponse:
    assert isinstance(err, HTTPException)
    if err.status_code == 404:
        return _error(404, f"no such page or API route: {excerpt(request.url.path)}")
    if err.status_code == 405:
        return _error(405, f"{request.method} is not allowed on {excerpt(request.url.path)}")
    return _error(err.status_code, request.app.state.scrub(clip(str(err.detail), 200)))


async def _server_failure(_: Request, err: Exception) -> JSONResponse:
    # Starlette raises the exception again once this answer is sent: uvicorn logs its traceback.
    return _error(500, guards.failure_message(err))


def save_open_games(app: FastAPI) -> list[str]:
    """As ``ginenv play`` stops: every table is in the store already; the replay of each unfinished
    match in memory is exported to the replay folder for the operator (never listed nor served: its
    table resumes at the next start, :meth:`TableStore.save_all`); returns those files' names."""
    store: TableStore = app.state.store
    return store.save_all()


@dataclass
class BackgroundServer:
    """A server running in a thread: its ``url``; ``stop()`` shuts it down."""

    url: str
    server: Any
    thread: threading.Thread
    app: Any = None

    def stop(self) -> None:
        """Shut the server down (its push streams end) and wait for its thread; then log the counts
        of repeated log lines not written yet."""
        if self.app is not None:
            self.app.state.closing = True
        self.server.should_exit = True
        self.thread.join(timeout=10)
        guards.quiet_repeats().flush()


def serve_in_background(
    app: FastAPI,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    allow_hosts: Sequence[str] = (),
    request_timeout: float = guards.REQUEST_TIMEOUT,
    max_connections: int | None = None,
) -> BackgroundServer:
    """Serve ``app`` with uvicorn in a daemon thread (``port=0``: a free port); returns once it listens.

    Only requests whose ``Host`` header names this machine's loopback names, ``host`` or one of
    ``allow_hosts`` (``*``: any) are answered (:class:`~ginenv.experiments.play.guards.HostGuard`),
    and only those of them from this server's own page change state: a ``POST``, ``PUT``, ``PATCH``
    or ``DELETE`` must carry this server's ``Origin`` and be JSON
    (:class:`~ginenv.experiments.play.guards.OriginGuard`). A request must arrive whole within
    ``request_timeout`` seconds, an idle keep-alive connection closes after
    :data:`~ginenv.experiments.play.guards.KEEP_ALIVE`, and connections beyond ``max_connections``
    (``None``: below this process's descriptor limit) make room by closing the connection waiting
    longest for a request, or are answered 503 and closed
    (:func:`~ginenv.experiments.play.guards.guarded_protocol`); push streams hold at most half of
    those connections, and one client address at most
    :data:`~ginenv.experiments.play.guards.STREAMS_PER_ADDRESS` of them
    (:class:`~ginenv.experiments.play.guards.StreamGuard`). Only the reverse proxies named to
    :func:`create_app` (``forwarded_allow_ips``) have their ``X-Forwarded-For`` header
    believed; by default none, and the header is ignored whoever sends it (uvicorn's own default
    believes it from 127.0.0.1, so that any local client could claim a new address with every
    request). The access log is off: request paths hold the keys of seats and matches."""
    import uvicorn

    trusted = getattr(app.state, "forwarded_allow_ips", None)
    hosts = guards.allowed_hosts(host, allow_hosts)
    cap = guards.connection_cap() if max_connections is None else max_connections
    # Outermost first: the Host check, then the origin of a change, then the streams' budget.
    guarded = guards.StreamGuard(app, routes_streams.STREAM_PATHS, guards.stream_cap(cap))
    config = uvicorn.Config(
        guards.HostGuard(guards.OriginGuard(guarded, hosts), hosts),
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        access_log=False,
        proxy_headers=trusted is not None,
        forwarded_allow_ips=trusted or "",
        http=guards.guarded_protocol(request_timeout, cap),
        timeout_keep_alive=guards.KEEP_ALIVE,
    )
    guards.quiet_repeats()  # after Config, which sets uvicorn's logging up
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="ginenv-play", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the play server did not start on {host}:{port}")
        time.sleep(0.02)
    bound = server.servers[0].sockets[0].getsockname()[1]
    return BackgroundServer(f"http://{host}:{bound}", server, thread, app)
