"""The play server's pages: the play page at ``/``, the replay page at ``/replay``, and
``GET /api/options``, what the play page offers (opponents, rule presets, the pace, the game of the
day, the preselected match, the address of invitation links). The files under ``/static/`` are
mounted by :func:`~ginenv.experiments.play.server.create_app`."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, Response
from ginenv.agents import specs
from ginenv.experiments.play.context import Context, json_answer, person, with_person
from ginenv.experiments.play.presets import preset_options
from ginenv.experiments.play.table import DAILY_OPPONENT, DAILY_PRESET
from ginenv.experiments.play.words import opponent_label

STATIC_DIR = Path(__file__).parent / "static"

router = APIRouter()


@router.get("/", include_in_schema=False)
def index(request: Request) -> Response:
    """The play page, with the person cookie."""
    return with_person(FileResponse(STATIC_DIR / "index.html"), *person(request))


@router.get("/replay", include_in_schema=False)
def replay_page() -> FileResponse:
    """The replay page."""
    return FileResponse(STATIC_DIR / "replay.html")


@router.get("/api/options")
def options(request: Request, play: Context) -> Response:
    """What the play page offers, and the match it starts with."""
    data = {
        "opponents": [
            {"name": n, "label": opponent_label(n), "description": _describe(n)} for n in play.allowed
        ],
        "presets": preset_options(),
        "pace_ms": play.pace_ms,
        "daily": {"date": play.today().isoformat(), "opponent": DAILY_OPPONENT, "preset": DAILY_PRESET},
        "start": {
            "opponent": play.opponent,
            "preset": play.preset,
            "daily": play.daily,
            "autostart": play.autostart,
        },
        # Read at each request: ``ginenv play --host 0.0.0.0`` sets it once the server listens.
        "share_base": request.app.state.share_base,
    }
    return with_person(json_answer(data), *person(request))


def _describe(name: str) -> str:
    from ginenv import agents

    spec = specs.resolve(name)
    if spec.kind == "checkpoint":
        return f"the network in {spec.target}"
    if spec.kind != "registered":
        return f"your agent {name}"
    return agents.describe(name)
