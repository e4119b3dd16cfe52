"""A route of the play server: ``GET /api/levels``, the computer players the page may offer, each
with its one-line description.

Inside the package this module would be ``experiments/play/routes_levels.py``, listed in
``ginenv.experiments.play.server.ROUTERS``; here it joins an app from outside, as its test does:

    app = create_app(state_dir=..., replay_dir=...)
    app.include_router(router)

Every route takes the server's :class:`~ginenv.experiments.play.context.PlayContext` through the
``Context`` dependency and answers through ``json_answer``. The server's guards wrap it unasked: a
request that would change state is answered only from the server's own page (its ``Origin``, JSON).
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from ginenv.agents import available, describe
from ginenv.experiments.play.context import Context, json_answer

router = APIRouter(prefix="/api/levels")


@router.get("")
def levels(play: Context) -> JSONResponse:
    """The registered opponents this server lets the page ask for, weakest first, described."""
    offered = [name for name in available() if name in play.allowed]
    return json_answer({"levels": [{"name": name, "about": describe(name)} for name in offered]})
