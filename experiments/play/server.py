"""The play server of ``ginenv play``: a local web page where a person plays a match against an agent.

:func:`create_app` builds the FastAPI application (served by uvicorn): the play page at ``/``, the
replay page at ``/replay``, their files at ``/static/`` and a JSON API. Each ``POST /api/games``
deals a new :class:`ginenv.experiments.play.table.Table` kept in this process's memory under a random
id, so two browser tabs play two independent games; a lock per table serialises its requests.

API (JSON; every error is a non-2xx answer ``{"error": "what was wrong and what is allowed"}``, and
then nothing has changed):

====================================  ===============================================================
``GET /api/options``                  opponents, rule presets (name, label, help text, options:
                                      :func:`~ginenv.experiments.play.presets.preset_options`),
                                      the computer's pace, the game of the day
``POST /api/games``                   ``{"opponent", "preset", "daily", "seed"}`` (all optional): 201
                                      and the view of a new match
``GET /api/games/{id}``               the view (:meth:`Table.view`: only what the person may see)
``POST /api/games/{id}/action``       ``{"action": "draw_stock" | "draw_discard" | "pass" |
                                      "discard 7h" | "knock 7h" | "big_gin"}``: the person's move
``POST /api/games/{id}/advance``      the computer makes one decision (the page paces these)
``POST /api/games/{id}/next``         from a hand's showdown to the next hand
``DELETE /api/games/{id}``            abandon the match; its replay is written if a move was made
``GET /api/replays``                  the saved replays, newest first
``GET /api/replays/{name}``           a saved replay as move-by-move frames
``POST /api/replays/view``            any replay file's JSON (also ``ginenv demo --save``'s) as frames
====================================  ===============================================================

Status codes: 400 a malformed request (bad JSON, unknown fields or values, an unknown action name),
404 an unknown game or replay, 409 a move the game does not allow now (an illegal move, out of turn),
413 a replay too large, 500 the computer player failed.

The server listens on 127.0.0.1 unless told otherwise: it serves one person on this machine.
:func:`serve_in_background` runs it on a free port in a thread (the browser tests use it).
"""

from __future__ import annotations

import datetime as dt
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from ginenv.agents import specs
from ginenv.experiments.play.presets import preset_options
from ginenv.experiments.play.table import (
    DAILY_OPPONENT,
    DAILY_PRESET,
    PlayError,
    Table,
    opponent_label,
    replay_frames,
)
from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr
from starlette.exceptions import HTTPException

from ginenv.replay import ReplayError, parse_replay
from ginenv.rules import PRESETS, Rules

STATIC_DIR = Path(__file__).parent / "static"
#: Where ``ginenv play`` writes replays unless ``--replay-dir`` says otherwise.
DEFAULT_REPLAY_DIR = Path.home() / ".ginenv" / "replays"
#: Milliseconds the page waits before each computer decision (a readable pace).
DEFAULT_PACE_MS = 800
#: Matches kept in memory; beyond it the least recently used one is abandoned (its replay written).
MAX_GAMES = 64
#: The largest replay file the replay page accepts (a 200-hand match is about 100 kB).
MAX_REPLAY_BYTES = 5_000_000
_REPLAY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\.json$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewGame(_Strict):
    """A new match: the opponent, the rule preset, the game of the day, a deal seed."""

    opponent: StrictStr | None = None
    preset: StrictStr | None = None
    daily: StrictBool = False
    seed: StrictInt | None = None


class Move(_Strict):
    """The person's move, by action name."""

    action: StrictStr


@dataclass
class _Slot:
    table: Table
    lock: threading.Lock


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers={"Cache-Control": "no-store"})


def _validation_message(err: RequestValidationError) -> str:
    parts = []
    for e in err.errors():
        if e.get("type") == "json_invalid":
            detail = e.get("ctx", {}).get("error", "parse error")
            return f"malformed request: the body is not valid JSON ({detail})"
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
        parts.append(f"{where}: {e.get('msg', 'invalid')}")
    return "malformed request: " + "; ".join(parts)


def create_app(
    *,
    replay_dir: Path = DEFAULT_REPLAY_DIR,
    pace_ms: int = DEFAULT_PACE_MS,
    opponent: str = "normal",
    preset: str = "standard",
    daily: bool = False,
    autostart: bool = False,
    today: Callable[[], dt.date] = dt.date.today,
    make_agent: Callable[[str, Rules], Any] | None = None,
    max_games: int = MAX_GAMES,
) -> FastAPI:
    """The play server's application.

    ``opponent``/``preset``/``daily`` preselect the page's choices (``autostart``: start that match
    at once, as ``ginenv play`` does); ``opponent`` may be any agent spec (``checkpoint:PATH``,
    ``file.py:Name``, ``exec:COMMAND``...), which is then the only such spec the page may ask for.
    ``today`` gives the date of the game of the day; ``make_agent(name, rules)`` builds computer
    players (the harness's factory by default).
    """
    from ginenv.experiments.eval.harness import make_agent as harness_make_agent

    from ginenv import agents

    # The page may ask for the registered names and the one spec given on the command line, never
    # another file, module or program: a spec is code that runs here.
    allowed: list[str] = list(agents.available())
    if opponent not in allowed:
        if not specs.is_known(opponent):
            raise PlayError(f"unknown opponent {opponent!r}; choose one of: {', '.join(allowed)}", 400)
        allowed.append(opponent)
    if preset not in PRESETS:
        raise PlayError(f"unknown rules preset {preset!r}; known presets: {', '.join(PRESETS)}", 400)
    build = make_agent or (lambda name, rules: harness_make_agent(name, rules=rules))
    games: OrderedDict[str, _Slot] = OrderedDict()
    games_lock = threading.Lock()
    app = FastAPI(title="ginenv play", docs_url=None, redoc_url=None, openapi_url="/api/openapi.json")
    # The tables by id, for tests and tools in this process (never sent: they hold the hidden cards).
    app.state.tables = games

    @app.exception_handler(PlayError)
    async def play_error(_: Request, err: PlayError) -> JSONResponse:
        return _error(err.status, str(err))

    @app.exception_handler(RequestValidationError)
    async def bad_request(_: Request, err: RequestValidationError) -> JSONResponse:
        return _error(400, _validation_message(err))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, err: HTTPException) -> JSONResponse:
        if err.status_code == 404:
            return _error(404, f"no such page or API route: {request.url.path}")
        if err.status_code == 405:
            return _error(405, f"{request.method} is not allowed on {request.url.path}")
        return _error(err.status_code, str(err.detail))

    def slot(game_id: str) -> _Slot:
        with games_lock:
            found = games.get(game_id)
            if found is None:
                raise PlayError(
                    f"no game with id {game_id!r}: games live in the server's memory; start a new match", 404
                )
            games.move_to_end(game_id)
            return found

    def answer(s: _Slot, change: Callable[[Table], Any] | None = None, status: int = 200) -> JSONResponse:
        with s.lock:
            if change is not None:
                change(s.table)
            return JSONResponse(s.table.view(), status_code=status, headers={"Cache-Control": "no-store"})

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html")

    @app.get("/replay", include_in_schema=False)
    def replay_page() -> FileResponse:
        return FileResponse(STATIC_DIR / "replay.html")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    @app.get("/api/options")
    def options() -> dict[str, Any]:
        return {
            "opponents": [
                {"name": n, "label": opponent_label(n), "description": _describe(n)} for n in allowed
            ],
            "presets": preset_options(),
            "pace_ms": pace_ms,
            "daily": {"date": today().isoformat(), "opponent": DAILY_OPPONENT, "preset": DAILY_PRESET},
            "start": {"opponent": opponent, "preset": preset, "daily": daily, "autostart": autostart},
        }

    @app.post("/api/games", status_code=201)
    def new_game(body: NewGame | None = None) -> JSONResponse:
        body = body or NewGame()
        table = Table(
            body.opponent or opponent,
            body.preset or preset,
            allowed=allowed,
            make_agent=build,
            seed=body.seed,
            daily=today() if body.daily else None,
            replay_dir=replay_dir,
        )
        s = _Slot(table, threading.Lock())
        with games_lock:
            games[table.id] = s
            evicted = [games.popitem(last=False)[1] for _ in range(max(0, len(games) - max_games))]
        for old in evicted:
            with old.lock:
                old.table.save_replay()
        return answer(s, status=201)

    @app.get("/api/games/{game_id}")
    def get_game(game_id: str) -> JSONResponse:
        return answer(slot(game_id))

    @app.post("/api/games/{game_id}/action")
    def act(game_id: str, move: Move) -> JSONResponse:
        return answer(slot(game_id), lambda t: t.act(move.action))

    @app.post("/api/games/{game_id}/advance")
    def advance(game_id: str) -> JSONResponse:
        return answer(slot(game_id), Table.advance)

    @app.post("/api/games/{game_id}/next")
    def next_hand(game_id: str) -> JSONResponse:
        return answer(slot(game_id), Table.next_hand)

    @app.delete("/api/games/{game_id}")
    def abandon(game_id: str) -> dict[str, Any]:
        s = slot(game_id)
        with games_lock:
            games.pop(game_id, None)
        with s.lock:
            return {"replay": s.table.save_replay()}

    @app.get("/api/replays")
    def list_replays() -> dict[str, Any]:
        files = sorted(replay_dir.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        return {
            "replays": [
                {
                    "name": p.name,
                    "size": p.stat().st_size,
                    "modified": dt.datetime.fromtimestamp(p.stat().st_mtime).isoformat(timespec="seconds"),
                }
                for p in files
                if _REPLAY_NAME.match(p.name)
            ]
        }

    @app.get("/api/replays/{name}")
    def saved_replay(name: str) -> dict[str, Any]:
        if not _REPLAY_NAME.match(name):
            raise PlayError(
                f"bad replay name {name!r}: a file name ending in .json, as /api/replays lists", 400
            )
        path = replay_dir / name
        if not path.is_file():
            raise PlayError(f"no replay named {name!r} in {replay_dir}", 404)
        if path.stat().st_size > MAX_REPLAY_BYTES:
            raise PlayError(f"replay {name!r} is larger than {MAX_REPLAY_BYTES} bytes", 413)
        try:
            data = parse_replay(path.read_bytes(), f"replay {name!r}")
        except ReplayError as err:
            raise PlayError(str(err), 400) from None
        return _frames(data, name)

    @app.post("/api/replays/view")
    async def view_replay(request: Request) -> dict[str, Any]:
        raw = await request.body()
        if len(raw) > MAX_REPLAY_BYTES:
            raise PlayError(f"a replay file may hold at most {MAX_REPLAY_BYTES} bytes, got {len(raw)}", 413)
        try:
            data = parse_replay(raw)
        except ReplayError as err:
            raise PlayError(str(err), 400) from None
        return _frames(data, "")

    return app


def save_open_games(app: FastAPI) -> list[str]:
    """Write the replay of every match still in memory (``ginenv play`` calls this as it stops)."""
    saved = []
    for s in list(app.state.tables.values()):
        with s.lock:
            name = s.table.save_replay()
        if name:
            saved.append(name)
    return saved


def add_table(app: FastAPI, table: Table) -> str:
    """Serve an already dealt table under its id (tests script deals and computer moves this way)."""
    app.state.tables[table.id] = _Slot(table, threading.Lock())
    return table.id


def _frames(data: Any, name: str) -> dict[str, Any]:
    try:
        return replay_frames(data, name)
    except ReplayError as err:
        raise PlayError(f"not a valid replay: {err}", 400) from None


def _describe(name: str) -> str:
    from ginenv import agents

    spec = specs.resolve(name)
    if spec.kind == "checkpoint":
        return f"the network in {spec.target}"
    if spec.kind != "registered":
        return f"your agent {name}"
    return agents.describe(name)


@dataclass
class BackgroundServer:
    """A server running in a thread: its ``url``; ``stop()`` shuts it down."""

    url: str
    server: Any
    thread: threading.Thread

    def stop(self) -> None:
        """Shut the server down and wait for its thread."""
        self.server.should_exit = True
        self.thread.join(timeout=10)


def serve_in_background(app: FastAPI, host: str = "127.0.0.1", port: int = 0) -> BackgroundServer:
    """Serve ``app`` with uvicorn in a daemon thread (``port=0``: a free port); returns once it listens."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, name="ginenv-play", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the play server did not start on {host}:{port}")
        time.sleep(0.02)
    bound = server.servers[0].sockets[0].getsockname()[1]
    return BackgroundServer(f"http://{host}:{bound}", server, thread)
