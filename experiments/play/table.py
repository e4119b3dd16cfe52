"""The play table: a person against a computer player, one match, seen from the person's seat.

:class:`Table` owns one match of ``ginenv play`` (the web server in
:mod:`ginenv.experiments.play.server` keeps one per browser tab). The person sits at ``player_0`` of a
:mod:`ginenv.gin_rummy_v0` env in match mode and the computer at ``player_1``; the computer acts on
exactly what ``observe("player_1")`` gives it, like every agent of the harness.

What the person is shown (:meth:`Table.view`) is built from ``observe("player_0")`` read back with
:func:`ginenv.observation.decode`, plus public facts (the discard pile in order, the moves, the
scores): never the computer's hidden cards or the stock order. A showdown is public, so the
computer's melds and deadwood are shown once a knock ends the hand; after a dead hand they are
not (there is no showdown), as in the env's infos.

The table refuses anything it cannot do with a :class:`PlayError` that says what was wrong and what
is allowed (an illegal move, a move out of turn, an unknown opponent or preset), and then nothing has
changed. A finished or abandoned match is written as a replay (:mod:`ginenv.replay`) in the replay
folder; :func:`replay_frames` turns any replay (the table's, ``ginenv demo --save``'s, a hand's or a
match's) into the move-by-move frames the replay page steps through, both hands shown since the game
is over.

The "game of the day" (seed 002) deals from :func:`daily_seed` of the date, so everyone playing on
the same calendar day gets the same deals, against ``normal`` (seed 002's Medium) with the standard
rules; the computer is seeded from the same number, so the same moves bring the same replies.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ginenv.agents import specs
from ginenv.agents.arena import AgentError, Game
from ginenv.experiments.eval.harness import agent_slug

from ginenv import gin_rummy_v0
from ginenv.actions import (
    ACTION_NAMES,
    BIG_GIN,
    DISCARD_BASE,
    DRAW_DISCARD,
    DRAW_STOCK,
    KNOCK_BASE,
    PASS,
    UnknownActionError,
    action_card,
    action_id,
)
from ginenv.cards import CARD_NAMES, cards_of
from ginenv.engine import HandState, Phase
from ginenv.match import Match
from ginenv.melds import Arrangement, best_arrangement
from ginenv.observation import decode
from ginenv.replay import ReplayError, match_replay, play_replay, save_replay
from ginenv.rules import PRESETS, Rules, RulesError, preset

#: The person's seat and the computer's.
PERSON, COMPUTER = 0, 1
_AGENT = gin_rummy_v0.AGENTS
#: The opponent and rules of the game of the day (seed 002: "La partie du jour se joue au niveau Moyen").
DAILY_OPPONENT = "normal"
DAILY_PRESET = "standard"
#: Labels the page shows for the registered levels (seed 002 calls normal "Moyen", Medium).
LABELS = {
    "random": "Random",
    "greedy": "Greedy",
    "easy": "Easy",
    "normal": "Normal (Medium)",
    "hard": "Hard",
    "expert": "Expert",
    "master": "Master",
    "neural": "Neural network",
    "openspiel_simple": "OpenSpiel simple bot",
    "rlcard_novice": "RLCard novice",
}
_WHO = ("you", "computer")


class PlayError(ValueError):
    """A request the table refuses; nothing changed. ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


def daily_seed(day: dt.date) -> int:
    """The deal seed of the game of the day: the date as the number ``YYYYMMDD``."""
    return day.year * 10000 + day.month * 100 + day.day


def opponent_label(name: str) -> str:
    """How the page names a computer player: a level by its label, ``checkpoint:PATH`` by its file
    name, a module or file spec by its class, ``exec:COMMAND`` by its program."""
    if name in LABELS:
        return LABELS[name]
    try:
        spec = specs.resolve(name)
    except specs.AgentSpecError:
        return name
    if spec.kind == "checkpoint":
        return f"Network {Path(spec.target).name}"
    if spec.kind in ("module", "file"):
        return str(spec.attr)
    if spec.kind == "exec":
        return f"Program {Path(spec.target.split()[0]).name}"
    return name


def _names(cards: Sequence[int] | int) -> list[str]:
    return [CARD_NAMES[c] for c in (cards_of(cards) if isinstance(cards, int) else cards)]


@lru_cache(maxsize=4096)
def _arrangement(mask: int) -> Arrangement:
    return best_arrangement(mask)


def hand_display(mask: int) -> dict[str, Any]:
    """A hand as the page shows it: melds first (each in order), then the deadwood cards by suit and
    rank; the melds, the deadwood cards and their count."""
    if not mask:
        return {"cards": [], "melds": [], "deadwood_cards": [], "deadwood": 0}
    arr = _arrangement(mask)
    melds = sorted(arr.melds, key=lambda m: cards_of(m)[0] % 13 * 4 + cards_of(m)[0] // 13)
    meld_names = [_names(m) for m in melds]
    loose = _names(arr.deadwood_cards)
    return {
        "cards": [c for m in meld_names for c in m] + loose,
        "melds": meld_names,
        "deadwood_cards": loose,
        "deadwood": arr.deadwood,
    }


def _check_opponent(name: object, allowed: Sequence[str]) -> str:
    if not isinstance(name, str) or name not in allowed:
        raise PlayError(f"unknown opponent {name!r}; choose one of: {', '.join(allowed)}", 400)
    return name


def _check_preset(name: object) -> Rules:
    if not isinstance(name, str):
        raise PlayError(f"the rules preset must be a name, one of: {', '.join(PRESETS)}", 400)
    try:
        return preset(name)
    except RulesError as err:
        raise PlayError(str(err), 400) from None


@dataclass
class Event:
    """One move of the hand as the person may know it (a computer's stock draw names no card)."""

    n: int
    who: str
    action: str
    card: str | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the page."""
        return {"n": self.n, "who": self.who, "action": self.action, "card": self.card, "text": self.text}


class Table:
    """One match between the person (``player_0``) and a computer player (``player_1``).

    ``make_agent(name, rules)`` builds the computer player (the harness's factory by default);
    ``allowed`` lists the opponents the table accepts; ``seed`` seeds the deals and the computer
    (drawn from the OS when ``None``); ``daily`` makes it the game of that day (``normal``, the
    standard rules, :func:`daily_seed`); ``replay_dir`` is where the replay is written when the match
    ends or is abandoned (``None``: not written); ``decks`` and ``dealer`` script the deals (tests).
    """

    def __init__(
        self,
        opponent: str = "normal",
        preset_name: str = "standard",
        *,
        allowed: Sequence[str],
        make_agent: Callable[[str, Rules], Any],
        seed: int | None = None,
        daily: dt.date | None = None,
        replay_dir: Path | None = None,
        table_id: str | None = None,
        decks: Sequence[Sequence[str]] | None = None,
        dealer: int | None = None,
    ) -> None:
        if daily is not None:
            opponent, preset_name, seed = DAILY_OPPONENT, DAILY_PRESET, daily_seed(daily)
        self.opponent = _check_opponent(opponent, allowed)
        self.preset = preset_name
        self.rules = _check_preset(preset_name)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise PlayError(f"seed must be a non-negative integer or null, got {seed!r}", 400)
        self.seed = secrets.randbits(31) if seed is None else seed
        self.daily = daily
        self.id = table_id or secrets.token_urlsafe(12)
        self.replay_dir = replay_dir
        self.replay_name: str | None = None
        self.label = opponent_label(self.opponent)
        self.agent = make_agent(self.opponent, self.rules)
        self.env = gin_rummy_v0.raw_env(rules=self.rules, mode="match")
        options: dict[str, Any] = {}
        if decks is not None:  # scripted deals (tests): dealt in order, then shuffled from the seed
            options["decks"] = [list(d) for d in decks]
        if dealer is not None:
            options["dealer"] = dealer
        # The arena deals game 0 of the table's seed and reseeds the computer at every hand, as the
        # harness does; the person's seat is played from outside (player None).
        self.game = Game(
            self.env, [None, self.agent], seed=self.seed, names=["you", self.opponent], options=options
        )
        self.stage = "play"  # play | showdown | over
        self.events: list[Event] = []
        self.showdown: dict[str, Any] | None = None
        self.match_result: dict[str, Any] | None = None
        self.moves = 0
        self._hand_index = 0
        self._final: HandState | None = None  # the finished hand, shown during the showdown
        self._start_hand()

    # ------------------------------------------------------------------ state

    @property
    def match(self) -> Match:
        """The engine match (server side only: it holds the hidden cards)."""
        match = self.env.match
        assert match is not None
        return match

    @property
    def turn(self) -> str | None:
        """``"you"``, ``"computer"`` or ``None`` (no move is due: showdown or match over)."""
        if self.stage != "play":
            return None
        return _WHO[self.env.hand.player]

    def _start_hand(self) -> None:
        # The arena has reseeded the computer for this hand (a seeded game replies the same way).
        self.events = []
        self._drawn: int | None = None
        self._taken: int | None = None

    def _record(self, who: int, action: int, card: int | None, text: str) -> None:
        self.events.append(
            Event(
                len(self.events),
                _WHO[who],
                ACTION_NAMES[action],
                None if card is None else CARD_NAMES[card],
                text,
            )
        )

    # ------------------------------------------------------------------ moves

    def act(self, name: object) -> None:
        """The person's move, by action name (``"draw_stock"``, ``"discard 7h"``, ``"knock 7h"``...)."""
        if not isinstance(name, str):
            raise PlayError(f"an action is a string such as 'draw_stock' or 'discard 7h', got {name!r}", 400)
        try:
            action = action_id(name)
        except UnknownActionError as err:
            raise PlayError(str(err), 400) from None
        self._check_turn(PERSON)
        state = self.env.hand
        if not state.is_legal(action):
            raise PlayError(self._why_illegal(state, action))
        self._play(PERSON, action)

    def advance(self) -> None:
        """The computer makes one decision (the page calls this at a readable pace)."""
        self._check_turn(COMPUTER)
        self._play(COMPUTER, None)

    def _play(self, seat: int, action: int | None) -> None:
        """Apply a legal move of ``seat`` (``None``: the computer's, which the arena asks its agent
        for) and record it as the person may know it."""
        state = self.env.hand
        top = state.discard_pile[-1] if state.discard_pile else None
        offered = state.phase in (Phase.UPCARD_NON_DEALER, Phase.UPCARD_DEALER)
        before = state.hands[seat]
        action = self._step(action)
        if action is None:
            self._forfeited()
            return
        who = "You" if seat == PERSON else self.label
        card = action_card(action)
        if action == DRAW_STOCK:
            # Only the person's own stock draw names its card: the computer's is hidden.
            card = (self.env.hand.hands[PERSON] & ~before).bit_length() - 1 if seat == PERSON else None
            drawn = f"{CARD_NAMES[card]} " if card is not None else ""
            text = f"{who} drew {drawn}from the stock."
        elif action in (DRAW_DISCARD, PASS):
            assert top is not None
            card = top
            if action == PASS:
                text = f"{who} passed on the upcard {CARD_NAMES[top]}."
            else:
                text = f"{who} took {CARD_NAMES[top]} from {'the upcard' if offered else 'the discard pile'}."
        else:
            text = _discard_text(who, action, card)
        if seat == PERSON:
            self._drawn = card if action in (DRAW_STOCK, DRAW_DISCARD) else None
            self._taken = card if action == DRAW_DISCARD else None
        self._record(seat, action, card, text)
        if self.stage == "over":
            self.save_replay()

    def next_hand(self) -> None:
        """From the showdown of a hand to the next hand of the match."""
        if self.stage != "showdown":
            raise PlayError(
                "there is no finished hand to leave: "
                + ("the match is over" if self.stage == "over" else "the hand is still being played")
            )
        self.stage = "play"
        self.showdown = None
        self._final = None
        self._hand_index += 1
        self._start_hand()

    def _check_turn(self, seat: int) -> None:
        if self.stage == "showdown":
            raise PlayError("the hand is over: press Next hand to deal the next one")
        if self.stage == "over":
            raise PlayError("the match is over: start a new match")
        if self.env.hand.player != seat:
            raise PlayError(
                f"it is {self.label}'s turn: wait for its move"
                if seat == PERSON
                else "it is your turn, not the computer's"
            )

    def _why_illegal(self, state: HandState, action: int) -> str:
        """Why the person may not make this move now, and what is allowed."""
        phase = state.phase
        card = action_card(action)
        if phase in (Phase.UPCARD_NON_DEALER, Phase.UPCARD_DEALER):
            return "the upcard is offered to you: take it (D) or pass (P)"
        if phase == Phase.DRAW:
            if action == DRAW_DISCARD:
                return "both players passed on the upcard, so the first draw is from the stock (T)"
            return "draw first: from the stock (T) or the discard pile (D)"
        # Discard phase.
        if action in (DRAW_STOCK, DRAW_DISCARD, PASS):
            return "you have already drawn: discard a card (tap it twice or drag it onto the discard pile)"
        if action == BIG_GIN:
            return "big gin needs all 11 cards melded" + (
                "" if self.rules.big_gin else ", and these rules have no big gin"
            )
        assert card is not None
        name = CARD_NAMES[card]
        hand = state.hands[PERSON]
        if not hand >> card & 1:
            return f"{name} is not in your hand"
        if card == state.banned:
            return f"you cannot discard {name}: you just took it from the discard pile; discard another card"
        if action >= KNOCK_BASE:
            left = _arrangement(hand & ~(1 << card)).deadwood
            return (
                f"you cannot knock discarding {name}: your deadwood would be {left}, above the knock "
                f"limit {state.knock_limit}"
            )
        return f"{ACTION_NAMES[action]} is not allowed now"

    def _step(self, action: int | None) -> int | None:
        """One move through the arena: the person's ``action``, or the computer's (``None``);
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
        self.match_result = {
            "winner": "you",
            "truncated": False,
            "forfeit": forfeit["reason"],
            "hands_played": len(self.match.records),
        }
        text = f"{self.label} forfeits the match: {forfeit['reason']}."
        self.events.append(Event(len(self.events), _WHO[COMPUTER], "forfeit", None, text))
        self.game.close()
        self.save_replay()

    def _end_of_hand(self, finished: HandState) -> None:
        info = self.env.infos[_AGENT[PERSON]]["result"]
        self._final = finished
        self.showdown = _showdown(info, finished, self.label)
        over = bool(self.env.terminations[_AGENT[PERSON]] or self.env.truncations[_AGENT[PERSON]])
        self.stage = "over" if over else "showdown"
        if over:
            final = info.get("match_result")
            if final is None:
                self.match_result = {
                    "winner": None,
                    "truncated": True,
                    "hands_played": len(self.match.records),
                }
            else:
                self.match_result = {
                    "winner": _WHO[0 if final["winner"] == _AGENT[0] else 1],
                    "truncated": False,
                    "points": _per_seat(final["points"]),
                    "bonuses": _per_seat(final["bonuses"]),
                    "totals": _per_seat(final["totals"]),
                    "hands_won": _per_seat(final["hands_won"]),
                    "shutout": final["shutout"],
                    "hands_played": final["hands_played"],
                }

    # ------------------------------------------------------------------ replay

    def save_replay(self) -> str | None:
        """Write the match so far as a replay (once a move was made); returns the file name."""
        if self.replay_dir is None or not self.moves:
            return None
        if self.replay_name is None:
            stamp = dt.datetime.now().strftime("%Y-%m-%dT%H%M%S")
            daily = "-daily" if self.daily else ""
            self.replay_name = f"{stamp}-you-vs-{agent_slug(self.opponent)}{daily}-{self.id[:6]}.json"
        self.replay_dir.mkdir(parents=True, exist_ok=True)
        save_replay(match_replay(self.match), self.replay_dir / self.replay_name)
        return self.replay_name

    # ------------------------------------------------------------------ the person's view

    def view(self) -> dict[str, Any]:
        """Everything the page shows, from the person's seat (see the module docstring)."""
        rules = self.rules
        scores = self.match.scores
        base: dict[str, Any] = {
            "id": self.id,
            "opponent": {"name": self.opponent, "label": self.label},
            "preset": self.preset,
            "rules": rules.to_dict(),
            "daily": self.daily.isoformat() if self.daily else None,
            "stage": self.stage,
            "turn": self.turn,
            "hand_index": self._hand_index,
            "scores": {"you": scores[PERSON], "computer": scores[COMPUTER]},
            "target": rules.target,
            "events": [e.to_dict() for e in self.events],
            "showdown": self.showdown,
            "match_result": self.match_result,
            "replay": self.replay_name,
        }
        if self._final is not None:
            base.update(self._finished_table(self._final))
        else:
            base.update(self._live_table())
        return base

    def _live_table(self) -> dict[str, Any]:
        state = self.env.hand
        observation = self.env.observe(_AGENT[PERSON])
        seen = decode(observation["observation"])
        mask = observation["action_mask"]
        legal = [ACTION_NAMES[a] for a in range(len(mask)) if mask[a]]
        phase = _phase_name(seen.phase)
        my_turn = seen.to_move
        # The discard pile's order is public (every card in it was shown face up); the observation
        # holds it as a set, so the order is read from the engine, and only the order.
        pile = _names(list(state.discard_pile))
        assert set(pile) == set(_names(seen.discard_pile))
        hints: dict[str, int] = {}
        if my_turn and phase == "discard":
            for card in cards_of(seen.hand):
                if mask[DISCARD_BASE + card] or mask[KNOCK_BASE + card]:
                    hints[CARD_NAMES[card]] = _arrangement(seen.hand & ~(1 << card)).deadwood
        opponent_cards = 10 + (1 if phase == "discard" and not my_turn else 0)
        return {
            "phase": phase,
            "prompt": self._prompt(phase, my_turn, legal, pile),
            "dealer": "you" if seen.is_dealer else "computer",
            "stock": seen.stock_size,
            "discard_pile": pile,
            "opponent_cards": opponent_cards,
            "opponent_known": _names(seen.opponent_taken),
            "hand": hand_display(seen.hand),
            "knock_limit": seen.knock_limit,
            "legal": legal,
            "taken": CARD_NAMES[self._taken] if my_turn and self._taken is not None else None,
            "drawn": CARD_NAMES[self._drawn] if my_turn and self._drawn is not None else None,
            "discard_hints": hints,
        }

    def _finished_table(self, state: HandState) -> dict[str, Any]:
        """The table of a finished hand: its last discard pile and the person's own final cards."""
        assert self.showdown is not None
        return {
            "phase": "over",
            "prompt": self.showdown["title"]
            + (
                " Press Next hand."
                if self.stage == "showdown"
                else " " + _match_line(self.match_result, self.label)
            ),
            "dealer": "you" if state.dealer == PERSON else "computer",
            "stock": len(state.stock),
            "discard_pile": _names(list(state.discard_pile)),
            "opponent_cards": 10,
            "opponent_known": [],
            "hand": hand_display(state.hands[PERSON]),
            "knock_limit": state.knock_limit,
            "legal": [],
            "taken": None,
            "drawn": None,
            "discard_hints": {},
        }

    def _prompt(self, phase: str, my_turn: bool, legal: list[str], pile: list[str]) -> str:
        who = self.label
        if not my_turn:
            return f"{who} is thinking…" if phase != "upcard" else f"{who} is deciding on the upcard…"
        if phase == "upcard":
            return f"The upcard {pile[-1]} is offered to you: take it (D) or pass (P)."
        if phase == "draw":
            if "draw_discard" not in legal:
                return "Both passed on the upcard: draw from the stock (T)."
            return f"Your turn: draw from the stock (T) or take {pile[-1]} from the discard pile (D)."
        text = "Discard a card: tap it twice, or drag it onto the discard pile."
        if any(a.startswith("knock") for a in legal):
            text += " You can knock: select a card and press Knock."
        if "big_gin" in legal:
            text += " You have big gin!"
        return text


def _phase_name(phase: Phase) -> str:
    if phase in (Phase.UPCARD_NON_DEALER, Phase.UPCARD_DEALER):
        return "upcard"
    return {Phase.DRAW: "draw", Phase.DISCARD: "discard"}.get(phase, "over")


def _discard_text(who: str, action: int, card: int | None) -> str:
    if action == BIG_GIN:
        return f"{who} laid down big gin."
    assert card is not None
    if action >= KNOCK_BASE:
        return f"{who} knocked, discarding {CARD_NAMES[card]}."
    return f"{who} discarded {CARD_NAMES[card]}."


def _per_seat(values: Sequence[Any]) -> dict[str, Any]:
    return {"you": values[PERSON], "computer": values[COMPUTER]}


def _who(agent: str | None) -> str | None:
    return None if agent is None else _WHO[_AGENT.index(agent)]


_KIND_WORDS = {
    "knock": "knock",
    "undercut": "undercut",
    "gin": "gin",
    "big_gin": "big gin",
    "dead": "dead hand",
    "truncated": "turn limit",
}


def _showdown(info: dict[str, Any], state: HandState, label: str) -> dict[str, Any]:
    """The end of a hand as the person sees it (``info``: the env's public result for player_0)."""
    kind = info["kind"]
    winner, knocker = _who(info["winner"]), _who(info["knocker"])
    points = info["points"]
    you_deadwood = info["deadwood"][PERSON]
    sides: dict[str, Any] = {"you": None, "computer": None}
    if info["showdown"] is not None:
        layoffs = info["layoffs"]
        for seat, side in enumerate(info["showdown"]):
            defender = _WHO[seat] != knocker
            sides[_WHO[seat]] = {
                "melds": side["melds"],
                "deadwood_cards": side["deadwood_cards"],
                "layoffs": list(layoffs) if defender else [],
                "deadwood": info["deadwood"][seat],
            }
    else:
        own = hand_display(state.hands[PERSON])
        sides["you"] = {
            "melds": own["melds"],
            "deadwood_cards": own["deadwood_cards"],
            "layoffs": [],
            "deadwood": you_deadwood,
        }
    name = {"you": "You", "computer": label, None: "Nobody"}
    if kind == "dead":
        title = "Dead hand: the stock is down to two cards and nobody knocked. No points."
    elif kind == "truncated":
        title = "The hand reached the turn limit and ends the match with no result."
    else:
        you = knocker == "you"
        deadwood = info["deadwood"][_WHO.index(knocker or "you")]
        verb = {
            "gin": "go gin" if you else "goes gin",
            "big_gin": "lay down big gin" if you else "lays down big gin",
        }.get(kind, f"{'knock' if you else 'knocks'} with {deadwood} deadwood")
        scores = "score" if winner == "you" else "scores"
        undercut = " undercut!" if kind == "undercut" else ""
        title = f"{name[knocker]} {verb}:{undercut} {name[winner]} {scores} {points} points."
    return {
        "kind": kind,
        "kind_words": _KIND_WORDS[kind],
        "title": title,
        "winner": winner,
        "knocker": knocker,
        "points": points,
        "you": sides["you"],
        "computer": sides["computer"],
    }


def _match_line(result: dict[str, Any] | None, label: str) -> str:
    if result is None:
        return ""
    if result["truncated"]:
        return "The match ends without a winner."
    totals = result["totals"]
    if result["winner"] == "you":
        return f"You win the match, {totals['you']} to {totals['computer']}."
    return f"{label} wins the match, {totals['computer']} to {totals['you']}."


# ---------------------------------------------------------------------------- replays


def replay_frames(data: Any, name: str = "") -> dict[str, Any]:
    """A replay (checked by :func:`ginenv.replay.play_replay`) as frames, one per move, both hands shown.

    Raises :class:`ginenv.replay.ReplayError` for a malformed or inconsistent replay.
    """
    if not isinstance(data, dict):
        raise ReplayError(f"a replay is a JSON object (format 'ginenv-replay'), got {type(data).__name__}")
    play_replay(data)  # refuses anything malformed, before anything is shown
    rules = Rules.from_dict(data["rules"])
    turn_limit = data.get("turn_limit", gin_rummy_v0.DEFAULT_TURN_LIMIT)
    entries = data["hands"]
    hands_out: list[dict[str, Any]] = []
    scores = [0, 0]
    if data["mode"] == "hand":
        states = [HandState(rules, entries[0]["dealer"], deck=entries[0]["deck"], turn_limit=turn_limit)]
        steppers: list[Callable[[int], Any]] = [states[0].step]
        match: Match | None = None
    else:
        match = Match(
            rules,
            entries[0]["dealer"],
            decks=[h["deck"] for h in entries],
            turn_limit=turn_limit,
            hand_limit=data.get("hand_limit", 200),
        )
    for index, entry in enumerate(entries):
        state = states[0] if match is None else match.hand
        step = steppers[0] if match is None else match.step
        frames = [_frame(state, 0, None, None, f"Deal: player_{state.dealer} deals.", scores)]
        for n, action_text in enumerate(entry["actions"], start=1):
            action = action_id(action_text)
            actor = state.player
            top = state.discard_pile[-1] if state.discard_pile else None
            step(action)
            text = f"player_{actor}: " + _replay_text(action, top)
            if state.result is not None:
                if match is not None:
                    scores = list(match.scores)
                text += " " + _result_text(state.result.to_dict())
            frames.append(_frame(state, n, actor, ACTION_NAMES[action], text, scores))
        hands_out.append(
            {"index": index, "dealer": entry["dealer"], "result": entry["result"], "frames": frames}
        )
    return {
        "name": name,
        "mode": data["mode"],
        "rules": rules.to_dict(),
        "match_result": data.get("match_result"),
        "hands": hands_out,
    }


def _frame(
    state: HandState, n: int, actor: int | None, action: str | None, text: str, scores: list[int]
) -> dict[str, Any]:
    return {
        "step": n,
        "actor": actor,
        "action": action,
        "text": text,
        "hands": [hand_display(state.hands[0]), hand_display(state.hands[1])],
        "discard_pile": _names(list(state.discard_pile)),
        "stock": len(state.stock),
        "scores": list(scores),
    }


def _replay_text(action: int, top: int | None) -> str:
    card = action_card(action)
    if action == DRAW_STOCK:
        return "draws from the stock."
    if action == DRAW_DISCARD:
        return f"takes {CARD_NAMES[top] if top is not None else 'the top card'} from the discard pile."
    if action == PASS:
        return "passes on the upcard."
    if action == BIG_GIN:
        return "lays down big gin."
    assert card is not None
    return (
        f"knocks, discarding {CARD_NAMES[card]}." if action >= KNOCK_BASE else f"discards {CARD_NAMES[card]}."
    )


def _result_text(result: dict[str, Any]) -> str:
    kind = _KIND_WORDS[result["kind"]]
    if result["winner"] is None:
        return f"End of hand: {kind}, no points."
    return f"End of hand: {kind}, player_{result['winner']} scores {result['points']}."


__all__ = [
    "COMPUTER",
    "DAILY_OPPONENT",
    "DAILY_PRESET",
    "PERSON",
    "Event",
    "PlayError",
    "Table",
    "daily_seed",
    "hand_display",
    "opponent_label",
    "replay_frames",
]
