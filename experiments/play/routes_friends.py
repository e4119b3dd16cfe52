"""The play server's tables for two people: the host's new table, the guest's join, each seat's
view, moves, Next hand and Leave, and a spectator's view (``/api/friends``, ``/api/seats/{seat}``,
``/api/watch/{watch}``). Every key in these paths is a token of the store: a seat's, an
invitation's (used once) or a spectator's; their push streams are in ``routes_streams``."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from ginenv.experiments.play.checks import PlayError, check_name
from ginenv.experiments.play.context import Context, client, json_answer
from ginenv.experiments.play.routes_games import Move, Strict
from ginenv.experiments.play.table import GUEST, HOST, Table
from pydantic import StrictInt, StrictStr


class NewFriendTable(Strict):
    """A table for two people: the rules preset, the match target (the preset's if null), the host's name."""

    preset: StrictStr | None = None
    target: StrictInt | None = None
    name: StrictStr


class Join(Strict):
    """The guest takes the seat an invitation offers, under a name."""

    invite: StrictStr
    name: StrictStr


router = APIRouter(prefix="/api")


@router.post("/friends", status_code=201)
def new_friend_table(request: Request, body: NewFriendTable, play: Context) -> JSONResponse:
    """A table for two people; the host's seat token and view (with the invitation and watch links)."""
    name = check_name(body.name)
    play.creations.check(client(request))
    play.store.check_shares(client(request))
    rules = body.preset or play.preset
    table = Table(None, rules, target=body.target, names=[name, ""], replay_dir=play.replay_dir)
    entry = play.store.add(table, client=client(request))
    view = play.seen_view(table.id, HOST)
    return json_answer({"table": table.id, "seat": entry.tokens["seat0"], "view": view}, 201)


@router.post("/friends/join")
def join(body: Join, play: Context) -> JSONResponse:
    """The guest's seat token and view; an invitation works once (409 after)."""
    store = play.store
    table_id, _ = store.token(body.invite, "invite")
    name = check_name(body.name)
    with store.use(table_id) as s:
        entry = store.entry(table_id)
        if entry is None or entry.invite_used or s.table.joined:
            raise PlayError("this invitation was already used: an invitation gives its seat once")
        s.table.join(name)
        store.use_invite(table_id)
        store.seen(s, GUEST)
        view = store.view(s, GUEST)
    return json_answer({"table": table_id, "seat": entry.tokens["seat1"], "view": view})


@router.get("/seats/{token}")
def get_seat(token: str, play: Context) -> JSONResponse:
    """That seat's view."""
    table_id, seat = play.seat_of(token)
    return json_answer(play.seen_view(table_id, seat))


@router.post("/seats/{token}/action")
def seat_act(token: str, move: Move, play: Context) -> JSONResponse:
    """That seat's move."""
    table_id, seat = play.seat_of(token)
    return json_answer(play.seen_view(table_id, seat, lambda t: t.act(move.action, seat)))


@router.post("/seats/{token}/next")
def seat_next(token: str, play: Context) -> JSONResponse:
    """That seat pressed Next hand (the next hand starts once both did)."""
    table_id, seat = play.seat_of(token)
    return json_answer(play.seen_view(table_id, seat, lambda t: t.next_hand(seat)))


@router.delete("/seats/{token}")
def seat_leave(token: str, play: Context) -> JSONResponse:
    """That seat leaves: the match ends, the other player sees it."""
    table_id, seat = play.seat_of(token)
    with play.store.use(table_id) as s:
        s.table.leave(seat)
    return json_answer({"left": True})


@router.get("/watch/{token}")
def watch(token: str, play: Context) -> JSONResponse:
    """A spectator's view (no hand)."""
    table_id, _ = play.store.token(token, "watch")
    return json_answer(play.seen_view(table_id, None))
