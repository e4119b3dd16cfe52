"""What every route of the play server reaches: the app's :class:`PlayContext` and the answer helpers.

:func:`~ginenv.experiments.play.server.create_app` builds one :class:`PlayContext` per application
and keeps it in ``app.state.play``; a route asks for it with the FastAPI dependency :data:`Context`
(:func:`play_context` reads it from ``request.app.state``), so the route modules
(``routes_pages``, ``routes_games``, ``routes_friends``, ``routes_streams``, ``routes_replays``)
hold no state of their own and no route is a closure. This module also owns the person cookie,
the client's address as the creation limit counts it, and the JSON answers every route sends
(``Cache-Control: no-store``: the API's answers are private).
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import JSONResponse, Response
from ginenv.experiments.play.store import RateLimit, TableStore
from ginenv.experiments.play.table import Table

from ginenv.rules import Rules

#: The cookie that names a person (their game of the day).
PERSON_COOKIE = "ginenv_player"
_PERSON = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
#: The date in a game of the day's replay name (``...-daily-2026-12-06-<tag>.json``).
_DAILY_NAME = re.compile(r"-daily-(\d{4}-\d{2}-\d{2})-")


@dataclass
class PlayContext:
    """One play server's settings and shared objects, as :func:`create_app` was given them.

    ``allowed``: the opponents the page may ask for; ``build(name, rules)`` builds a computer
    player; ``store`` keeps the tables; ``creations`` bounds new tables per client address;
    ``opponent``/``preset``/``daily``/``autostart``: the page's preselected choices; ``today``
    gives the date of the game of the day.
    """

    allowed: list[str]
    build: Callable[[str, Rules], Any]
    store: TableStore
    creations: RateLimit
    replay_dir: Path
    pace_ms: int
    opponent: str
    preset: str
    daily: bool
    autostart: bool
    today: Callable[[], dt.date]

    def seat_of(self, token: str) -> tuple[str, int]:
        """The table and seat a seat token names (404 for an unknown one)."""
        table_id, role = self.store.token(token, "seat0", "seat1")
        return table_id, int(role[-1])

    def seen_view(
        self, table_id: str, seat: int | None, change: Callable[[Table], Any] | None = None
    ) -> dict:
        """``change`` the table (a move; None: nothing), mark ``seat`` present, and return its view."""
        with self.store.use(table_id) as s:
            if change is not None:
                change(s.table)
            self.store.seen(s, seat)
            return self.store.view(s, seat)

    def hidden_replays(self) -> Callable[[str], bool]:
        """Which replay names nobody may open now (see the server's docstring): the store lists only
        finished matches, and a game of the day stays closed to everyone until its day is over (its
        deals are everybody's that day: one person's replay would show the others their cards)."""
        day = self.today().isoformat()

        def hidden(name: str) -> bool:
            found = _DAILY_NAME.search(name)
            return found is not None and found.group(1) >= day

        return hidden


async def play_context(request: Request) -> PlayContext:
    """The dependency every route takes: the context :func:`create_app` stored on the app.

    ``async``: it only reads an attribute, so it runs on the event loop, not in a thread."""
    context: PlayContext = request.app.state.play
    return context


#: A route's parameter of this type receives the app's :class:`PlayContext`.
Context = Annotated[PlayContext, Depends(play_context)]


def client(request: Request) -> str:
    """The client's address, as the creation limit counts it (the connection's, or a trusted proxy's)."""
    return request.client.host if request.client else "unknown"


def person(request: Request) -> tuple[str, bool]:
    """The person's id from their cookie, or a new one (True: set the cookie on the answer)."""
    found = request.cookies.get(PERSON_COOKIE, "")
    if _PERSON.match(found):
        return found, False
    return secrets.token_urlsafe(18), True


def known_person(request: Request) -> str | None:
    """The person's id from their cookie, or None (no cookie, or not an id this server makes)."""
    found = request.cookies.get(PERSON_COOKIE, "")
    return found if _PERSON.match(found) else None


def with_person(response: Response, person_id: str, new: bool) -> Response:
    """``response`` with the person cookie set when ``new``."""
    if new:
        response.set_cookie(
            PERSON_COOKIE, person_id, max_age=400 * 86400, httponly=True, samesite="lax", path="/"
        )
    return response


def json_answer(data: Any, status: int = 200) -> JSONResponse:
    """A private JSON answer (never cached)."""
    return JSONResponse(data, status_code=status, headers={"Cache-Control": "no-store"})
