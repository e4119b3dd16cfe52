"""The play server's matches against the computer, the game of the day among them.

``POST /api/games`` (a new match, or this person's game of the day: the same table all day),
``GET /api/games/{id}`` (the view), ``POST .../action`` (the person's move), ``POST .../advance``
(one decision of the computer, paced by the page), ``POST .../next`` (the next hand) and
``DELETE /api/games/{id}`` (abandon: the replay is written if a move was made; leaving the game of
the day plays it). A computer match's id is its key: only who started it knows it.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from ginenv.experiments.play.checks import PlayError
from ginenv.experiments.play.context import Context, PlayContext, client, json_answer, person, with_person
from ginenv.experiments.play.table import HOST, Table, daily_key
from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr


class Strict(BaseModel):
    """A request body that refuses unknown fields."""

    model_config = ConfigDict(extra="forbid")


class NewGame(Strict):
    """A new match against the computer: the opponent, the rule preset, the game of the day, a seed."""

    opponent: StrictStr | None = None
    preset: StrictStr | None = None
    daily: StrictBool = False
    seed: StrictInt | None = None


class Move(Strict):
    """A person's move, by action name."""

    action: StrictStr


router = APIRouter(prefix="/api/games")


@router.post("", status_code=201)
def new_game(request: Request, play: Context, body: NewGame | None = None) -> Response:
    """A new match against the computer (201), or this person's game of the day (200 once started)."""
    body = body or NewGame()
    person_id, new = person(request)
    day = play.today() if body.daily else None
    if day is not None:
        found = _todays_table(play, person_id, day.isoformat())
        if found is not None:
            return with_person(json_answer(play.seen_view(found, HOST)), person_id, new)
    play.creations.check(client(request))
    play.store.check_shares(client(request))
    table = Table(
        body.opponent or play.opponent,
        body.preset or play.preset,
        allowed=play.allowed,
        make_agent=play.build,
        seed=body.seed,
        # The game of the day: the same cards for everyone here today, from this server's secret.
        key=None if day is None else daily_key(play.store.server_secret, day),
        daily=day,
        replay_dir=play.replay_dir,
    )
    # The person is kept with every computer table: the hands they finish there are recorded.
    play.store.add(table, person=person_id, client=client(request))
    return with_person(json_answer(play.seen_view(table.id, HOST), 201), person_id, new)


def _todays_table(play: PlayContext, person_id: str, day: str) -> str | None:
    """The table of this person's game of the day if it can go on; 409 once it was played."""
    found = play.store.daily(person_id, day)
    if found and found["finished"]:
        raise PlayError(
            "you played today's game; its replay opens in Replays once the day is over "
            "(its deals are everyone's today)",
            409,
        )
    entry = play.store.entry(found["table"]) if found else None
    return entry.id if entry is not None and not entry.broken else None


@router.get("/{game_id}")
def get_game(game_id: str, play: Context) -> JSONResponse:
    """The view of a match: only what the person may see."""
    return json_answer(play.seen_view(play.store.game(game_id), HOST))


@router.post("/{game_id}/action")
def act(game_id: str, move: Move, play: Context) -> JSONResponse:
    """The person's move."""
    return json_answer(play.seen_view(play.store.game(game_id), HOST, lambda t: t.act(move.action)))


@router.post("/{game_id}/advance")
def advance(game_id: str, play: Context) -> JSONResponse:
    """One decision of the computer."""
    return json_answer(play.seen_view(play.store.game(game_id), HOST, Table.advance))


@router.post("/{game_id}/next")
def next_hand(game_id: str, play: Context) -> JSONResponse:
    """From a hand's showdown to the next hand."""
    return json_answer(play.seen_view(play.store.game(game_id), HOST, Table.next_hand))


@router.delete("/{game_id}")
def abandon(game_id: str, play: Context) -> JSONResponse:
    """Abandon the match; its replay is written if a move was made."""
    store = play.store
    table_id = store.game(game_id)
    with store.use(table_id) as s:
        name = s.table.leave(HOST)
    entry = store.entry(table_id)
    if entry is not None and entry.daily and entry.person:
        # Leaving the game of the day plays it: it cannot be started again to scout its deals.
        store.set_daily(entry.person, entry.daily, table_id, finished=True)
    store.remove(table_id)
    return json_answer({"replay": name})
