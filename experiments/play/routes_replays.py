"""The play server's replays: ``GET /api/replays`` (the finished matches' replays, newest first),
``GET /api/replays/{name}`` (one of them as move-by-move frames) and ``POST /api/replays/view``
(any replay file's JSON, also ``ginenv demo --save``'s, as frames).

Replays are served from the store, which holds those of finished matches only, never from the
replay folder; and a game of the day's replay opens to nobody before its day is over
(:meth:`~ginenv.experiments.play.context.PlayContext.hidden_replays`).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from fastapi import APIRouter, Request
from ginenv.experiments.play.checks import PlayError
from ginenv.experiments.play.context import Context
from ginenv.experiments.play.frames import replay_frames
from ginenv.experiments.play.words import clip, excerpt

from ginenv.replay import ReplayError, parse_replay

#: The largest replay file the replay page accepts (a 200-hand match is about 100 kB).
MAX_REPLAY_BYTES = 5_000_000
_REPLAY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\.json$")

router = APIRouter(prefix="/api/replays")


@router.get("")
def list_replays(play: Context) -> dict[str, Any]:
    """The replays of finished matches that may be opened now."""
    hidden = play.hidden_replays()
    return {
        "replays": [
            {
                "name": name,
                "size": size,
                "modified": dt.datetime.fromtimestamp(created).isoformat(timespec="seconds"),
            }
            for name, size, created in play.store.replays()
            if not hidden(name)
        ]
    }


@router.get("/{name}")
def saved_replay(name: str, play: Context) -> dict[str, Any]:
    """One finished match's replay as frames."""
    if not _REPLAY_NAME.match(name):
        raise PlayError(
            f"bad replay name {excerpt(name)}: a file name ending in .json, as /api/replays lists", 400
        )
    # Served from the store, never from the folder: a file there may be of a match in progress
    # (exported as the server stopped), the store holds finished matches only.
    text = play.store.replay(name)
    if text is None or play.hidden_replays()(name):
        raise PlayError(
            f"no replay named {excerpt(name)} in the replay folder: its match is not over, or the "
            "name is wrong",
            404,
        )
    try:
        data = parse_replay(text, "the replay")
    except ReplayError as err:
        raise PlayError(str(err), 400) from None
    return _frames(data, name)


@router.post("/view")
async def view_replay(request: Request) -> dict[str, Any]:
    """Any replay file's JSON, as frames."""
    raw = await request.body()
    if len(raw) > MAX_REPLAY_BYTES:
        raise PlayError(f"a replay file may hold at most {MAX_REPLAY_BYTES} bytes, got {len(raw)}", 413)
    try:
        data = parse_replay(raw)
    except ReplayError as err:
        raise PlayError(clip(str(err), 300), 400) from None
    return _frames(data, "")


def _frames(data: Any, name: str) -> dict[str, Any]:
    try:
        return replay_frames(data, name)
    except ReplayError as err:
        raise PlayError(f"not a valid replay: {clip(str(err), 300)}", 400) from None
