"""The play server's answers about the person at the page: where they stand, and forgetting them.

``GET /api/me`` answers the person of the ``ginenv_player`` cookie: their finished hands against
the computer under a preset (``?preset=``, default ``standard``, the ladder's) and their rating on
the ladder's scale (:func:`~ginenv.experiments.play.people.standing`: ``{"hands", "preset",
"rating", "low", "high", "between", "levels", "why"}``; no cookie or no hands: 0 hands and nulls),
with what the page's plot needs: ``"history"``, the rating and its interval after each hand (at most
:data:`~ginenv.experiments.play.people.HISTORY_POINTS` of them), and ``"ladder"``, the ladder's
rating of each level (None for a preset without a ladder run).
``DELETE /api/me`` removes every record of that person (:func:`~ginenv.experiments.play.people.forget`:
their hands, their games of the day, their id on the tables they started; the replays of their
finished games stay, as anonymous as they were) and clears the cookie, so the next game starts a
new person. Like every change it passes the server's guards (its own ``Origin``, JSON).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from ginenv.experiments.play.checks import PlayError
from ginenv.experiments.play.context import PERSON_COOKIE, Context, json_answer, known_person
from ginenv.experiments.play.people import forget, person_standing
from ginenv.experiments.play.words import excerpt

from ginenv.rules import PRESETS

router = APIRouter(prefix="/api/me")


@router.get("")
def me(request: Request, play: Context, preset: str = "standard") -> JSONResponse:
    """Where the cookie's person stands under ``preset``."""
    if preset not in PRESETS:
        raise PlayError(f"unknown preset {excerpt(preset)}; choose one of: {', '.join(PRESETS)}", 400)
    return json_answer(person_standing(play.store.db, known_person(request), preset))


@router.delete("")
def forget_me(request: Request, play: Context) -> JSONResponse:
    """Remove every record of the cookie's person; answers how many of each went."""
    person_id = known_person(request)
    removed = {"hands": 0, "daily": 0, "tables": 0}
    if person_id is not None:
        with play.store.db.transaction() as db:
            removed = forget(db, person_id)
    answer = json_answer({"removed": removed})
    answer.delete_cookie(PERSON_COOKIE, path="/", httponly=True, samesite="lax")
    return answer
