"""The play server's push streams: a seat's (``GET /api/seats/{seat}/stream``) and a spectator's
(``GET /api/watch/{watch}/stream``), server-sent events of the table as that viewer sees it.

A stream sends ``event: view`` with the view at once and after every change (a move, a join, a
Next hand press, a seat's presence coming or going), and a comment line every :data:`KEEPALIVE`
seconds. The store wakes the streams of a table through :class:`Wakers` (``app.state.wakers``)
whenever it changes; an open stream also counts as its seat's presence (the store's
``open_stream``/``close_stream``). The streams one client address holds across all tables, and all
of them together, are bounded around the application
(:class:`~ginenv.experiments.play.guards.StreamGuard`, on the paths of :data:`STREAM_PATHS`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from ginenv.experiments.play.context import Context
from ginenv.experiments.play.store import TableStore
from starlette.concurrency import run_in_threadpool

#: A push stream wakes at once when its table changes, and looks at its table at least this often
#: (seconds: a seat's presence ends with its grace); and seconds between two keep-alive comments.
STREAM_POLL = 1.0
KEEPALIVE = 15.0
#: The paths of the push streams (the stream guard counts the requests to them).
STREAM_PATHS = re.compile(r"/api/(seats|watch)/[^/]+/stream")

router = APIRouter(prefix="/api")


@router.get("/seats/{token}/stream")
async def seat_stream(token: str, request: Request, play: Context) -> StreamingResponse:
    """The push stream of a seat."""
    table_id, seat = play.seat_of(token)
    return await stream(play.store, request, table_id, seat)


@router.get("/watch/{token}/stream")
async def watch_stream(token: str, request: Request, play: Context) -> StreamingResponse:
    """The push stream of a spectator."""
    table_id, _ = play.store.token(token, "watch")
    return await stream(play.store, request, table_id, None)


async def stream(store: TableStore, request: Request, table_id: str, seat: int | None) -> StreamingResponse:
    """A push stream of one table as ``seat`` sees it (see the module docstring)."""
    slot = await run_in_threadpool(store.open_stream, table_id, seat)

    def current() -> dict[str, Any]:
        with slot.lock:
            return store.view(slot, seat)

    async def events() -> AsyncIterator[str]:
        gone = asyncio.Event()
        wakers: Wakers = request.app.state.wakers
        wake = wakers.add(table_id)

        async def listen() -> None:  # the client went away (closed the page, lost the network)
            while (await request.receive())["type"] != "http.disconnect":
                pass
            gone.set()
            wake.set()

        listener = asyncio.create_task(listen())
        try:
            last: Any = None
            beat = time.monotonic()
            while not gone.is_set() and not getattr(request.app.state, "closing", False):
                wake.clear()
                key = (slot.table.version, store.connected(slot))
                if key != last:
                    last = key
                    view = await run_in_threadpool(current)
                    yield f"event: view\ndata: {json.dumps(view, separators=(',', ':'))}\n\n"
                    beat = time.monotonic()
                elif time.monotonic() - beat >= KEEPALIVE:
                    yield ": keep-alive\n\n"
                    beat = time.monotonic()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), STREAM_POLL)
        finally:
            listener.cancel()
            wakers.remove(table_id, wake)
            store.close_stream(slot, seat)

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)


class Wakers:
    """The push streams waiting on each table: :meth:`notify` (from any thread) wakes them."""

    def __init__(self) -> None:
        self._waiting: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self._lock = threading.Lock()

    def add(self, table_id: str) -> asyncio.Event:
        """An event of the running loop, set whenever table ``table_id`` changes."""
        event = asyncio.Event()
        with self._lock:
            self._waiting.setdefault(table_id, set()).add((asyncio.get_running_loop(), event))
        return event

    def remove(self, table_id: str, event: asyncio.Event) -> None:
        """Stop waking ``event``."""
        with self._lock:
            waiting = self._waiting.get(table_id, set())
            waiting.difference_update({w for w in waiting if w[1] is event})
            if not waiting:
                self._waiting.pop(table_id, None)

    def notify(self, table_id: str) -> None:
        """Wake every stream of table ``table_id``."""
        with self._lock:
            waiting = list(self._waiting.get(table_id, ()))
        for loop, event in waiting:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(event.set)
