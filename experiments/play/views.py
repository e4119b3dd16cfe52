"""What each seat of a play table is shown: the read side of :class:`~ginenv.experiments.play.table.Table`.

:class:`TableViews` is the table's base class: it reads the table's state and changes nothing. A
seat's view (:meth:`TableViews.view`) is built from ``observe`` of that seat read back with
:func:`ginenv.observation.decode`, plus public facts (the discard pile in order, the moves, the
scores): never the other seat's hidden cards or the stock order. A showdown is public, so the
other hand's melds and deadwood are shown once a knock ends the hand; after a dead hand they are
not, as in the env's infos. A spectator (``view(None)``) sees only what both players see: no hand.
Views name the seats from the viewer's side, ``"you"`` and ``"opponent"``. The table's moves,
joins and stored records are :mod:`ginenv.experiments.play.table`'s.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from ginenv.experiments.play.presets import rules_line
from ginenv.experiments.play.words import (
    Event,
    arrangement,
    card_names,
    event_view,
    hand_display,
    match_line,
    phase_name,
    showdown_view,
    turn_prompt,
)

from ginenv.actions import ACTION_NAMES, DISCARD_BASE, KNOCK_BASE
from ginenv.aec import AGENTS, raw_env
from ginenv.cards import CARD_NAMES, cards_of
from ginenv.engine import HandState
from ginenv.match import Match
from ginenv.observation import decode
from ginenv.rules import Rules

#: The person's seat and the computer's (at a friend table: the host's and the guest's).
PERSON, COMPUTER = 0, 1
HOST, GUEST = 0, 1
#: The fields of a table where the viewer has no move to make.
NO_MOVE: dict[str, Any] = {
    "opponent_known": [],
    "legal": [],
    "taken": None,
    "drawn": None,
    "discard_hints": {},
}


class TableViews:
    """The read side of a play table (the base class of ``Table``): who is where, and what each seat
    and a spectator are shown. It reads the state ``Table`` keeps (below) and changes none of it."""

    id: str
    kind: str  # "computer" or "friend"
    opponent: str | None
    label: str | None
    names: list[str]
    persons: tuple[bool, bool]
    joined: bool
    preset: str
    rules: Rules
    daily: dt.date | None
    env: raw_env
    stage: str  # play | showdown | over
    events: list[Event]
    hand_index: int
    version: int
    next_pressed: list[bool]
    replay_name: str | None
    _result: dict[str, Any] | None  # the match's end, per seat
    _infos: list[dict[str, Any]] | None  # the finished hand's result, as each seat got it
    _final: HandState | None  # the finished hand, shown during the showdown
    _drawn: list[int | None]  # the card each seat drew from the stock this turn
    _taken: list[int | None]  # the card each seat took from the discard pile this turn

    # ------------------------------------------------------------------ state

    @property
    def match(self) -> Match:
        """The engine match (server side only: it holds the hidden cards)."""
        match = self.env.match
        assert match is not None
        return match

    @property
    def turn_seat(self) -> int | None:
        """The seat to move, or ``None`` (no move is due: showdown or match over)."""
        return None if self.stage != "play" else int(self.env.hand.player)

    @property
    def finished_hand(self) -> HandState | None:
        """The hand whose showdown is shown (server side only), or ``None`` during play."""
        return self._final

    def display_name(self, seat: int) -> str:
        """How the other seat and spectators name ``seat``."""
        if not self.persons[seat]:
            return str(self.label)
        return self.names[seat] or ("Your friend" if seat == GUEST else "Player 1")

    def _words(self, viewer: int | None) -> list[str]:
        return ["You" if s == viewer else self.display_name(s) for s in (0, 1)]

    # ------------------------------------------------------------------ views

    def view(self, seat: int | None = PERSON, connected: Sequence[bool] = (True, True)) -> dict[str, Any]:
        """Everything the page shows to ``seat`` (``None``: a spectator); ``connected`` says which
        persons have the table open (the server's presence; see the module docstring)."""
        p = 0 if seat is None else seat  # whose side is "you"
        ready = seat is not None and self.stage == "showdown" and self.next_pressed[seat]
        rel = ("you", "opponent") if p == 0 else ("opponent", "you")
        words = self._words(seat)
        scores = self.match.scores
        players = [
            {
                "name": self.names[s] if self.persons[s] else self.opponent,
                "label": self.display_name(s),
                "kind": "person" if self.persons[s] else "computer",
                "joined": s == HOST or self.joined,
                "connected": bool(connected[s]) if self.persons[s] else True,
            }
            for s in (0, 1)
        ]
        turn = self.turn_seat if self.joined else None
        base: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "spectator": seat is None,
            "you": None if seat is None else {"name": self.display_name(seat), "seat": seat, "ready": ready},
            "opponent": players[1 - p],
            "players": players,
            "version": self.version,
            "waiting_for": self._waiting_for(seat, connected),
            "rules_line": rules_line(self.preset, self.rules),
            "invite": None,
            "watch": None,
            "preset": self.preset,
            "rules": self.rules.to_dict(),
            "daily": self.daily.isoformat() if self.daily else None,
            "stage": self.stage,
            "turn": None if turn is None else rel[turn],
            "hand_index": self.hand_index,
            "scores": {"you": scores[p], "opponent": scores[1 - p]},
            "target": self.rules.target,
            "events": [event_view(e, seat, rel, words) for e in self.events],
            "showdown": self._showdown(seat, p, words),
            "match_result": self._result_view(rel),
            "replay": self.replay_name,
        }
        if self._final is not None:
            base.update(self._finished_table(self._final, seat, p, words, base["showdown"]))
        elif seat is None:
            base.update(self._public_table(p, words))
        else:
            base.update(self._live_table(seat, words))
        return base

    def _waiting_for(self, seat: int | None, connected: Sequence[bool]) -> str | None:
        """What the other person must do before the viewer can go on (friend tables only)."""
        if self.opponent is not None or self.stage == "over":
            return None
        others = (0, 1) if seat is None else (1 - seat,)
        if not self.joined:
            return "join"
        if not all(connected[s] for s in others):
            return "reconnect"
        pressed = self.next_pressed
        if self.stage == "showdown" and any(pressed) and (seat is None or pressed[seat]):
            return "next"
        return None

    def _showdown(self, seat: int | None, p: int, words: list[str]) -> dict[str, Any] | None:
        if self._infos is None or self._final is None:
            return None
        own = None if seat is None else self._final.hands[seat]
        return showdown_view(self._infos[p], own, p, seat, words)

    def _result_view(self, rel: tuple[str, str]) -> dict[str, Any] | None:
        r = self._result
        if r is None:
            return None
        p = rel.index("you")
        out: dict[str, Any] = {
            "winner": None if r["winner"] is None else rel[r["winner"]],
            "truncated": r["truncated"],
        }
        for key in ("points", "bonuses", "totals", "hands_won"):
            if key in r:
                out[key] = {"you": r[key][p], "opponent": r[key][1 - p]}
        for key in ("shutout", "forfeit"):
            if key in r:
                out[key] = r[key]
        if r.get("left") is not None:
            out["left"] = rel[r["left"]]
        out["hands_played"] = r["hands_played"]
        return out

    def _live_table(self, seat: int, words: list[str]) -> dict[str, Any]:
        state = self.env.hand
        observation = self.env.observe(AGENTS[seat])
        seen = decode(observation["observation"])
        mask = observation["action_mask"]
        playing = self.stage == "play" and self.joined
        legal = [ACTION_NAMES[a] for a in range(len(mask)) if mask[a]] if playing else []
        phase = phase_name(seen.phase)
        my_turn = bool(seen.to_move) and playing
        # The discard pile's order is public (every card in it was shown face up); the observation
        # holds it as a set, so the order is read from the engine, and only the order.
        pile = card_names(list(state.discard_pile))
        assert set(pile) == set(card_names(seen.discard_pile))
        hints: dict[str, int] = {}
        if my_turn and phase == "discard":
            for card in cards_of(seen.hand):
                if mask[DISCARD_BASE + card] or mask[KNOCK_BASE + card]:
                    hints[CARD_NAMES[card]] = arrangement(seen.hand & ~(1 << card)).deadwood
        drawn, taken = self._drawn[seat], self._taken[seat]
        return {
            "phase": phase,
            "prompt": self._prompt(phase, my_turn, legal, pile, words, seat),
            "dealer": "you" if seen.is_dealer else "opponent",
            "stock": seen.stock_size,
            "discard_pile": pile,
            "opponent_cards": 10 + (1 if phase == "discard" and not seen.to_move else 0),
            "opponent_known": card_names(seen.opponent_taken),
            "hand": hand_display(seen.hand),
            "knock_limit": seen.knock_limit,
            "legal": legal,
            "taken": CARD_NAMES[taken] if my_turn and taken is not None else None,
            "drawn": CARD_NAMES[drawn] if my_turn and drawn is not None else None,
            "discard_hints": hints,
        }

    def _public_table(self, p: int, words: list[str]) -> dict[str, Any]:
        """The hand in play as a spectator sees it: what both players see, no hand."""
        state = self.env.hand
        phase = phase_name(state.phase)
        mover = int(state.player)
        if self.stage == "over":
            prompt = match_line(self._result, None, words)
        elif not self.joined:
            prompt = f"Waiting for {words[GUEST]} to join."
        elif phase == "upcard":
            prompt = f"{words[mover]} is deciding on the upcard {CARD_NAMES[state.discard_pile[-1]]}…"
        else:
            prompt = f"{words[mover]} to {'draw' if phase == 'draw' else 'discard'}."
        return {
            "phase": phase,
            "prompt": prompt,
            "dealer": "you" if state.dealer == p else "opponent",
            "stock": len(state.stock),
            "discard_pile": card_names(list(state.discard_pile)),
            "opponent_cards": 10 + (1 if phase == "discard" and mover != p else 0),
            "hand": hand_display(0),
            "knock_limit": state.knock_limit,
            **NO_MOVE,
            # The cards each seat took from the discard pile and still holds (public by the rules).
            "known": {"you": self._taken_by(p), "opponent": self._taken_by(1 - p)},
        }

    def _taken_by(self, seat: int) -> list[str]:
        return card_names(decode(self.env.observe(AGENTS[1 - seat])["observation"]).opponent_taken)

    def _finished_table(
        self, state: HandState, seat: int | None, p: int, words: list[str], show: dict[str, Any] | None
    ) -> dict[str, Any]:
        """The table of a finished hand: its last discard pile and the viewer's own final cards."""
        assert show is not None
        if self.stage == "over":
            tail = " " + match_line(self._result, seat, words)
        elif self.opponent is None and (seat is None or self.next_pressed[seat]):
            waiting = [words[s] for s in (0, 1) if not self.next_pressed[s]]
            tail = f" Waiting for {' and '.join(waiting)} to press Next hand."
        else:
            tail = " Press Next hand."
        return {
            "phase": "over",
            "prompt": show["title"] + tail,
            "dealer": "you" if state.dealer == p else "opponent",
            "stock": len(state.stock),
            "discard_pile": card_names(list(state.discard_pile)),
            "opponent_cards": 10,
            "hand": hand_display(0 if seat is None else state.hands[seat]),
            "knock_limit": state.knock_limit,
            **NO_MOVE,
        }

    def _prompt(
        self, phase: str, my_turn: bool, legal: list[str], pile: list[str], words: list[str], seat: int
    ) -> str:
        if self.stage == "over":
            return match_line(self._result, seat, words)
        if not self.joined:
            return "Waiting for your friend to join: send them the invitation link."
        return turn_prompt(phase, my_turn, legal, pile, words[1 - seat])
