"""The play table: one match of ``ginenv play`` between two seats, each a person or a computer.

Seat 0 (``player_0`` of a :mod:`ginenv.gin_rummy_v0` env in match mode) is the person who set the
table up. Seat 1 is a computer player (a *computer* table), which acts on exactly what
``observe("player_1")`` gives it through :class:`ginenv.agents.arena.Game` like every agent of the
harness, or a second person who joins through an invitation (a *friend* table). The server keeps
tables in a :class:`~ginenv.experiments.play.store.TableStore`.

This module owns the table's moves, joins, replays and stored records. What a seat is shown
(:meth:`Table.view`) is its base class's, :class:`~ginenv.experiments.play.views.TableViews`: built
from ``observe`` of that seat, never the other seat's hidden cards or the stock order; views name
the seats from the viewer's side, ``"you"`` and ``"opponent"`` (a spectator's "you": seat 0).

**Deals.** Every hand of a table is dealt from a :class:`~ginenv.secret_deals.DealKey` that never
leaves the server (a fresh 256-bit key per table, kept in its stored record, never in a view, a
stream, an error or a replay of an unfinished match): nothing a seat sees, with the source,
narrows the other cards. Two exceptions, both chosen by the person at the table: a computer match
given a ``seed`` (``/?seed=12``: the same public deals again, for practice and tests) deals from
that seed, and scripted ``decks`` (tests) come first. The seed seeds the computer's own choices.

The table refuses anything it cannot do with a :class:`PlayError` that says what was wrong and what
is allowed, and then nothing has changed. A finished or abandoned match is written as a replay
(:mod:`ginenv.replay`) in the replay folder.

A table is stored as its settings, seed, names and moves (:meth:`Table.to_record`) and rebuilt by
replaying them (:meth:`Table.from_record`): the arena reseeds the computer at every hand from the
seed, so it is asked again and answers the same; the recorded move is played in any case
(``restore_mismatches`` counts the answers that differed).

The "game of the day" (seed 002) is dealt from :func:`daily_key` of the server's secret and the date:
the same for everyone on that server that day, other cards on another server, and nobody without
the server's secret can compute them; against ``normal`` (seed 002's Medium) with the standard rules.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ginenv.agents.arena import AgentError, Game
from ginenv.agents.base import AgentForfeit
from ginenv.experiments.eval.harness import agent_slug
from ginenv.experiments.play.checks import PlayError, check_name, check_opponent, check_rules
from ginenv.experiments.play.people import Hand, hand_of
from ginenv.experiments.play.views import COMPUTER, GUEST, HOST, PERSON, TableViews
from ginenv.experiments.play.words import (
    Event,
    excerpt,
    name_slug,
    opponent_label,
    why_illegal,
)

from ginenv import gin_rummy_v0
from ginenv.actions import (
    ACTION_NAMES,
    DRAW_DISCARD,
    DRAW_STOCK,
    PASS,
    UnknownActionError,
    action_card,
    action_id,
)
from ginenv.engine import HandState
from ginenv.replay import MAX_PLAYER_NAME, match_replay
from ginenv.rules import Rules
from ginenv.secret_deals import DealKey
from ginenv.validation import is_int

_AGENT = gin_rummy_v0.AGENTS
#: The opponent and rules of the game of the day (seed 002: "La partie du jour se joue au niveau Moyen").
DAILY_OPPONENT = "normal"
DAILY_PRESET = "standard"
#: How a stored table is marked (:meth:`Table.to_record`); version 1 records (before keyed deals)
#: are still read: they deal from their seed, as they did.
RECORD_FORMAT = "ginenv-table"
RECORD_VERSION = 2
READ_VERSIONS = (1, 2)


def daily_key(server_secret: bytes, day: dt.date) -> DealKey:
    """The deal key of the game of ``day`` on the server whose secret is ``server_secret``."""
    return DealKey(server_secret).derive(f"ginenv game of the day {day.isoformat()}")


class _Replayer:
    """The computer while a stored table is rebuilt: it asks the real agent (so that an agent that
    remembers its decisions is where it was) and plays the recorded move."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.queue: list[int | str] = []
        self.mismatches = 0

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, observation: Any) -> int:
        item = self.queue.pop(0)
        try:
            answer = self.agent.act(observation)
        except Exception:  # the agent's answer is only a check here
            answer = None
        if isinstance(item, str):
            raise AgentForfeit(item)
        if answer is None or int(answer) != item:
            self.mismatches += 1
        return item


class Table(TableViews):
    """One match: seat 0 a person, seat 1 the computer ``opponent`` or (``opponent=None``) a friend.

    ``make_agent(name, rules)`` builds the computer player; ``allowed`` lists the opponents the table
    accepts; ``seed`` seeds the computer (drawn from the OS when ``None``) and, given with no ``key``,
    deals public seeded cards (see the module docstring); ``key`` deals the hands (a fresh
    :class:`DealKey` when neither is given); ``daily`` makes it the game of that day (``normal``,
    the standard rules, dealt from ``key``, which must be :func:`daily_key` of that day); ``target``
    replaces the preset's match target; ``names`` are the seats' names (a friend table: the host's,
    then the guest's once they join); ``replay_dir`` is where the replay is written when the match
    ends or is abandoned (``None``: not written); ``decks`` and ``dealer`` script the deals (tests).
    """

    def __init__(
        self,
        opponent: str | None = "normal",
        preset_name: str = "standard",
        *,
        allowed: Sequence[str] = (),
        make_agent: Callable[[str, Rules], Any] | None = None,
        seed: int | None = None,
        key: DealKey | None = None,
        daily: dt.date | None = None,
        replay_dir: Path | None = None,
        table_id: str | None = None,
        decks: Sequence[Sequence[str]] | None = None,
        dealer: int | None = None,
        target: int | None = None,
        names: Sequence[str] | None = None,
        tag: str | None = None,
    ) -> None:
        if daily is not None:
            if key is None and seed is None:
                raise ValueError("the game of the day is dealt from the server's key: give key=daily_key()")
            opponent, preset_name, target = DAILY_OPPONENT, DAILY_PRESET, None
        self.kind = "friend" if opponent is None else "computer"
        self.opponent = None if opponent is None else check_opponent(opponent, allowed)
        self.rules = check_rules(preset_name, target)
        self.preset = preset_name
        self.target = target
        if seed is not None and (not is_int(seed) or seed < 0):
            raise PlayError(f"seed must be a non-negative integer or null, got {excerpt(seed)}", 400)
        # A seed the person chose deals its public cards; otherwise a secret does (module docstring).
        self.key = key if key is not None or seed is not None else DealKey.new()
        self.seed = secrets.randbits(31) if seed is None else seed
        self.daily = daily
        self.id = table_id or secrets.token_urlsafe(12)
        # Names the replay file (never derived from the id: a computer table's id is its key).
        self.tag = tag or secrets.token_hex(3)
        self.replay_dir = replay_dir
        self.replay_name: str | None = None
        self.persons = (True, self.opponent is None)
        self.label = None if self.opponent is None else opponent_label(self.opponent)
        if names is None:
            names = ["You", self.opponent] if self.opponent is not None else ["Player 1", ""]
        self.names = [str(n) for n in names]
        self.joined = self.kind == "computer"
        if self.opponent is not None:
            if make_agent is None:
                raise ValueError("a computer table needs make_agent")
            self.agent: Any = make_agent(self.opponent, self.rules)
        else:
            self.agent = None
        self.env = gin_rummy_v0.raw_env(rules=self.rules, mode="match")
        self.decks = None if decks is None else [list(d) for d in decks]
        self.dealer = dealer
        self.game = self._new_game()
        self.stage = "play"  # play | showdown | over
        self.events: list[Event] = []
        self.log: list[list[Any]] = []  # every move, "next" and "left": what to_record stores
        self.moves = 0
        self.hand_index = 0
        #: Counts every change (moves, joins, Next hand presses): the server's push streams watch it.
        self.version = 0
        self.next_pressed = [False, False]
        self.restore_mismatches = 0
        self._result: dict[str, Any] | None = None  # the match's end, per seat
        self._infos: list[dict[str, Any]] | None = None  # the finished hand's result, as each seat got it
        self._final: HandState | None = None  # the finished hand, shown during the showdown
        self._drawn: list[int | None] = [None, None]
        self._taken: list[int | None] = [None, None]
        self._restoring = False
        #: The hands of a computer match finished since the store last saved the table (the person's
        #: record, :mod:`~ginenv.experiments.play.people`): the store writes them in the transaction
        #: of that save, then clears them. A rebuilt table adds none for the hands it replays.
        self.ended_hands: list[Hand] = []

    def _new_game(self) -> Game:
        """The arena's match of this table: it deals game 0 from the key (or the chosen seed) and
        reseeds the computer at every hand from the seed, as the harness does; a person's seat is
        played from outside."""
        options: dict[str, Any] = {}
        if self.decks is not None:  # scripted deals (tests): dealt in order, then shuffled from the seed
            options["decks"] = [list(d) for d in self.decks]
        if self.dealer is not None or self.daily is not None:
            options["dealer"] = 0 if self.dealer is None else self.dealer
        return Game(
            self.env,
            [None, self.agent],
            seed=self.seed,
            # A game of the day stored before keyed deals was game 1 of its date's seed.
            deal=1 if self.daily is not None and self.key is None else 0,
            names=[self.names[0], self.opponent or "guest"],
            options=options,
            key=self.key,
        )

    # ------------------------------------------------------------------ moves

    def act(self, name: object, seat: int = PERSON) -> None:
        """A person's move, by action name (``"draw_stock"``, ``"discard 7h"``, ``"knock 7h"``...)."""
        if not isinstance(name, str):
            raise PlayError(
                f"an action is a string such as 'draw_stock' or 'discard 7h', got {excerpt(name)}", 400
            )
        try:
            action = action_id(name)
        except UnknownActionError as err:
            raise PlayError(str(err), 400) from None
        if not self.persons[seat]:
            raise PlayError("that seat is the computer's: it moves through advance")
        self._check_turn(seat)
        state = self.env.hand
        if not state.is_legal(action):
            raise PlayError(why_illegal(state, action, seat))
        self._play(seat, action)

    def advance(self) -> None:
        """The computer makes one decision (the page calls this at a readable pace)."""
        if self.opponent is None:
            raise PlayError("there is no computer at this table: both players make their own moves")
        self._check_turn(COMPUTER)
        self._play(COMPUTER, None)

    def _play(self, seat: int, action: int | None) -> None:
        """Apply a legal move of ``seat`` (``None``: the computer's, which the arena asks its agent
        for) and record it."""
        state = self.env.hand
        top = state.discard_pile[-1] if state.discard_pile else None
        offered = state.phase.offers_upcard
        before = state.hands[seat]
        played = self._step(action)
        if played is None:
            self._forfeited()
            return
        card, secret = action_card(played), None
        if played == DRAW_STOCK:
            # Only a person's own stock draw is ever named, and only to them.
            secret = (self.env.hand.hands[seat] & ~before).bit_length() - 1 if self.persons[seat] else None
        elif played in (DRAW_DISCARD, PASS):
            card = top
        if played in (DRAW_STOCK, DRAW_DISCARD):
            self._drawn[seat] = secret if played == DRAW_STOCK else card
        else:
            self._drawn[seat] = None
        self._taken[seat] = card if played == DRAW_DISCARD else None
        self.events.append(Event(len(self.events), seat, played, card, secret, offered))
        self.log.append([seat, ACTION_NAMES[played]])
        self.version += 1
        if self.stage == "over":
            self.save_replay()

    def next_hand(self, seat: int = PERSON) -> None:
        """From the showdown of a hand to the next hand (a friend table: once both pressed it)."""
        if self.stage != "showdown":
            raise PlayError(
                "there is no finished hand to leave: "
                + ("the match is over" if self.stage == "over" else "the hand is still being played")
            )
        if self.opponent is None:
            self.next_pressed[seat] = True
            self.version += 1
            if not all(self.next_pressed):
                return
        self._deal_next()

    def _deal_next(self) -> None:
        self.stage = "play"
        self._final = None
        self._infos = None
        self.hand_index += 1
        self.events = []
        self._drawn = [None, None]
        self._taken = [None, None]
        self.next_pressed = [False, False]
        self.log.append(["next"])
        self.version += 1

    def join(self, name: object) -> None:
        """The guest sits down at a friend table under ``name``."""
        if self.opponent is not None:
            raise PlayError("this is a computer table: nobody can join it")
        if self.stage == "over":
            raise PlayError("this table has ended: ask your friend for a new invitation")
        if self.joined:
            raise PlayError("this invitation was already used: an invitation gives its seat once")
        self.names[GUEST] = check_name(name)
        self.joined = True
        self.version += 1

    def leave(self, seat: int = PERSON) -> str | None:
        """``seat`` leaves: a computer match is abandoned, a friend match ends (the other player sees
        it). Writes the replay if a move was made; returns its file name."""
        if self.opponent is not None or self.stage == "over":
            return self.save_replay()
        self.stage = "over"
        self._result = {
            "winner": None,  # a match left has no winner
            "truncated": False,
            "forfeit": "left the match",
            "left": seat,
            "hands_played": len(self.match.records),
        }
        self.events.append(Event(len(self.events), seat, "left"))
        self.log.append(["left", seat])
        self.version += 1
        return self.save_replay()

    def _check_turn(self, seat: int) -> None:
        if self.stage == "showdown":
            raise PlayError("the hand is over: press Next hand to deal the next one")
        if self.stage == "over":
            raise PlayError("the match is over: start a new match")
        if not self.joined:
            raise PlayError("your friend has not joined yet: send them the invitation link")
        if self.env.hand.player != seat:
            if not self.persons[seat]:
                raise PlayError("it is your turn, not the computer's")
            other = 1 - seat
            pronoun = "their" if self.persons[other] else "its"
            raise PlayError(f"it is {self.display_name(other)}'s turn: wait for {pronoun} move")

    def _step(self, action: int | None) -> int | None:
        """One move through the arena: a person's ``action``, or the computer's (``None``);
        returns the move, or None if the computer forfeited."""
        state = self.env.hand
        records = len(self.match.records)
        if action is None:
            try:
                action = self.game.advance()
            except AgentError as err:
                # The game is unchanged: the agent failed before any move was made.
                raise PlayError(f"the computer player {self.opponent} failed: {err.detail}", 500) from None
            if action is None:
                return None
        else:
            self.game.play(action)
        self.moves += 1
        if len(self.match.records) > records:
            self._end_of_hand(state)
        return action

    def _forfeited(self) -> None:
        """The computer (a program that hung, died or answered an illegal move) forfeits the match."""
        forfeit = self.game.record.forfeit
        assert forfeit is not None
        self.stage = "over"
        self._result = {
            "winner": PERSON,
            "truncated": False,
            "forfeit": forfeit["reason"],
            "hands_played": len(self.match.records),
        }
        self.events.append(Event(len(self.events), COMPUTER, "forfeit", reason=forfeit["reason"]))
        self.log.append([COMPUTER, "forfeit", forfeit["reason"]])
        self.version += 1
        self.game.close()
        self.save_replay()

    def _end_of_hand(self, finished: HandState) -> None:
        self._infos = [self.env.infos[a]["result"] for a in _AGENT]
        self._final = finished
        if self.opponent is not None and not self._restoring:
            self.ended_hands.append(hand_of(finished, self._infos[PERSON], PERSON, self.opponent))
        over = bool(self.env.terminations[_AGENT[0]] or self.env.truncations[_AGENT[0]])
        self.stage = "over" if over else "showdown"
        if not over:
            return
        final = self._infos[0].get("match_result")
        if final is None:
            self._result = {"winner": None, "truncated": True, "hands_played": len(self.match.records)}
            return
        self._result = {
            "winner": _AGENT.index(final["winner"]),
            "truncated": False,
            **{k: list(final[k]) for k in ("points", "bonuses", "totals", "hands_won")},
            "shutout": final["shutout"],
            "hands_played": final["hands_played"],
        }

    # ------------------------------------------------------------------ replay and record

    def save_replay(self) -> str | None:
        """Name the match's replay (once a move was made; the name never changes after); returns it.

        The table writes nothing: the store keeps the replay (:meth:`replay_text`) in the
        transaction that marks the match over, and exports it to the replay folder once committed,
        so no file can ever name a match its store does not know has ended."""
        if self.replay_dir is None or not self.moves or self._restoring:
            return None
        if self.replay_name is None:
            stamp = dt.datetime.now().strftime("%Y-%m-%dT%H%M%S")
            if self.opponent is None:
                who = f"{name_slug(self.names[0], 'player1')}-vs-{name_slug(self.names[1], 'player2')}"
            else:
                who = f"you-vs-{agent_slug(self.opponent)}"
            daily = f"-daily-{self.daily.isoformat()}" if self.daily else ""
            self.replay_name = f"{stamp}-{who}{daily}-{self.tag}.json"
        return self.replay_name

    def replay_text(self) -> str:
        """The match so far as a replay file's JSON (:mod:`ginenv.replay`, as ``ginenv replay`` reads)."""
        players = [self.display_name(s)[:MAX_PLAYER_NAME] or f"player_{s}" for s in (0, 1)]
        return json.dumps(match_replay(self.match, players), indent=1) + "\n"

    def to_record(self) -> dict[str, Any]:
        """The table as plain data: its settings, seed, deal key, names and moves (see the module
        docstring). It holds the key, so it stays server side: never sent, logged or exported."""
        return {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "id": self.id,
            "tag": self.tag,
            "kind": self.kind,
            "opponent": self.opponent,
            "preset": self.preset,
            "target": self.target,
            "seed": self.seed,
            "key": None if self.key is None else self.key.hex(),
            "daily": self.daily.isoformat() if self.daily else None,
            "decks": self.decks,
            "dealer": self.dealer,
            "names": list(self.names),
            "joined": self.joined,
            "next_pressed": list(self.next_pressed),
            "replay": self.replay_name,
            "over": self.stage == "over",
            "changes": self.version,
            "moves": [list(m) for m in self.log],
        }

    @classmethod
    def from_record(
        cls,
        record: dict[str, Any],
        *,
        allowed: Sequence[str],
        make_agent: Callable[[str, Rules], Any],
        replay_dir: Path | None = None,
    ) -> Table:
        """Rebuild a table from :meth:`to_record`'s data by replaying its moves; a record that does
        not replay raises :class:`PlayError` (status 500)."""
        try:
            if record.get("format") != RECORD_FORMAT or record.get("version") not in READ_VERSIONS:
                raise ValueError(f"not a {RECORD_FORMAT} record of version {READ_VERSIONS}")
            daily = dt.date.fromisoformat(record["daily"]) if record["daily"] else None
            key = DealKey.from_hex(record["key"]) if record.get("key") else None
            if record["version"] == 1 and daily is not None:
                # Before keyed deals the game of the day was dealt from its date (game 1 of
                # YYYYMMDD): a table of those days goes on with the cards it was dealt.
                record = {**record, "seed": daily.year * 10000 + daily.month * 100 + daily.day}
            table = cls(
                record["opponent"],
                record["preset"],
                allowed=allowed,
                make_agent=make_agent,
                seed=record["seed"],
                key=key,
                daily=daily,
                replay_dir=replay_dir,
                table_id=record["id"],
                decks=record["decks"],
                dealer=record["dealer"],
                target=record["target"],
                names=record["names"],
                tag=record["tag"],
            )
            table.joined = bool(record["joined"])
            table.replay_name = record["replay"]
            table._restore(record["moves"])
            if table.stage == "showdown" and table.opponent is None:
                table.next_pressed = [bool(x) for x in record["next_pressed"]][:2]
            table.version = max(table.version, int(record.get("changes", 0)))  # views never go back
        except (KeyError, TypeError, ValueError, IndexError, RuntimeError, AttributeError) as err:
            raise PlayError(f"a stored table could not be rebuilt: {excerpt(str(err), 200)}", 500) from None
        return table

    def _restore(self, moves: list[Any]) -> None:
        replayer = None if self.agent is None else _Replayer(self.agent)
        if replayer is not None:
            self.game.players[COMPUTER] = replayer
        self._restoring = True
        try:
            for entry in moves:
                if entry == ["next"]:
                    self._deal_next()
                elif len(entry) == 2 and entry[0] == "left":
                    self.leave(int(entry[1]))
                elif self.stage != "play" or entry[0] not in (0, 1):
                    raise ValueError(f"move {excerpt(entry)} cannot be replayed here")
                elif len(entry) == 3 and entry[1] == "forfeit" and replayer is not None:
                    replayer.queue.append(str(entry[2]))
                    self._play(COMPUTER, None)
                elif len(entry) == 2 and isinstance(entry[1], str):
                    seat, action = int(entry[0]), action_id(entry[1])
                    if self.env.hand.player != seat:
                        raise ValueError(f"move {excerpt(entry)} is out of turn")
                    if self.persons[seat]:
                        if not self.env.hand.is_legal(action):
                            raise ValueError(f"move {excerpt(entry)} is illegal")
                        self._play(seat, action)
                    else:
                        assert replayer is not None
                        replayer.queue.append(action)
                        self._play(seat, None)
                else:
                    raise ValueError(f"unknown move {excerpt(entry)}")
        except (PlayError, UnknownActionError) as err:
            raise ValueError(str(err)) from None
        finally:
            self._restoring = False
            if replayer is not None:
                self.game.players[COMPUTER] = self.agent
                self.restore_mismatches = replayer.mismatches


__all__ = [
    "COMPUTER",
    "DAILY_OPPONENT",
    "DAILY_PRESET",
    "GUEST",
    "HOST",
    "PERSON",
    "PlayError",
    "Table",
    "check_name",
    "daily_key",
]
