"""The hand state machine: deal, upcard offer, draw, discard, knock, dead hand, showdown.

:class:`HandState` is the readable face of one hand (one deal) over the one implementation of the
rules, the compiled record of :mod:`ginenv.kernels.hand` (a single row): dealing, the legal actions
and each action's effect are computed there, for this class as for the batched engine and master's
rollouts. Its :class:`Phase` (the kernel's :class:`ginenv.kernels.hand.Phase`: one definition for
both) says whose decision it is and of what kind (the kernel has one branch per phase). Legal
actions are an int bitmask over the action ids of :mod:`ginenv.actions` (cached until the state
changes); applying an action that is not legal raises :class:`IllegalActionError` before anything
is touched. The hand's cards, pile, stock and public record are read from the
record; the history of actions and the :class:`HandResult` are kept here.

Deal order (``docs/RULES.md``): cards 0-9 to the non-dealer, 10-19 to the dealer, card 20 is the
upcard, 21 onwards is the stock, 21 drawn first. Players are 0 and 1; ``dealer`` indexes them.

The upcard offer: the non-dealer may take the upcard (``draw_discard``) or ``pass``; then the dealer
may; if both pass, the non-dealer's first draw must be from the stock (``draw_stock`` is the only
legal action). Whoever takes the upcard discards next, and the other player plays the next turn.

Every hand is finite: after ``turn_limit`` draws (stock, discard pile or upcard; default
:data:`DEFAULT_TURN_LIMIT`) the hand ends at the next discard without a knock, as a ``"truncated"``
result worth no points. A real hand has at most 29 stock draws; only players who keep taking the
discard pile come near the limit (two players can cycle cards through the pile forever).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NoReturn

import numpy as np

from ginenv import compiling
from ginenv.actions import (
    ACTION_NAMES,
    DISCARD_BASE,
    KNOCK_BASE,
    NUM_ACTIONS,
    UnknownActionError,
    action_id,
)
from ginenv.cards import (
    CARD_NAMES,
    NUM_CARDS,
    CardError,
    cards_of,
    parse_cards,
    short_repr,
)
from ginenv.kernels import hand as H
from ginenv.kernels.hand import Phase
from ginenv.kernels.meld_search import min_deadwood
from ginenv.layout import HAND_SIZE, NUM_PHASES
from ginenv.rules import Rules, RulesError
from ginenv.scoring import KnockResult, knock_layout
from ginenv.validation import as_int

UPCARD_INDEX = 2 * HAND_SIZE
#: Draws per hand after which the hand is truncated (far above any real hand: 29 stock draws at most).
DEFAULT_TURN_LIMIT = 100
# Action ids of each value of the low four bits of a legal mask (draws, pass, big gin).
_LOW_ACTIONS = tuple(tuple(a for a in range(4) if m >> a & 1) for m in range(16))
_LANE = (1 << 13) - 1
# (shift, table): the action ids of each 13-bit lane value of the card actions of a legal mask, so
# that listing the legal actions costs eight lookups instead of a loop over bits.
_CARD_ACTION_LANES = tuple(
    (base, tuple(tuple(base + r for r in range(13) if m >> r & 1) for m in range(1 << 13)))
    for base in range(DISCARD_BASE, NUM_ACTIONS, 13)
)


class IllegalActionError(ValueError):
    """An action that is not legal in the current state; the state is left unchanged."""


class DeckError(CardError):
    """A deck given for a deal is not 52 distinct cards."""


#: How a hand ended; the names are :data:`ginenv.kernels.hand.RESULT_KINDS` (a type checker needs
#: them spelled out: tests/ginenv/test_engine.py holds the two equal).
ResultKind = Literal["knock", "undercut", "gin", "big_gin", "dead", "truncated"]


@dataclass(frozen=True)
class HandResult:
    """How a hand ended.

    ``points`` go to ``winner`` (``None`` and 0 for a dead or truncated hand); ``deadwood`` is each
    player's deadwood at the end (the defender's after layoffs). Only a showdown reveals the other
    seat's deadwood: after a dead or truncated hand each seat may see its own alone.
    """

    kind: ResultKind
    winner: int | None
    points: int
    knocker: int | None
    deadwood: tuple[int, int]
    knock: KnockResult | None = None

    @property
    def truncated(self) -> bool:
        """True when the turn limit ended the hand (not a result of the game)."""
        return self.kind == "truncated"

    @property
    def showdown(self) -> bool:
        """True when cards were shown (a knock, gin or big gin), so both deadwoods are public."""
        return self.knock is not None

    def score_deltas(self) -> tuple[int, int]:
        """Zero-sum points change for players 0 and 1."""
        if self.winner is None:
            return (0, 0)
        return (self.points, -self.points) if self.winner == 0 else (-self.points, self.points)

    def to_dict(self) -> dict[str, object]:
        """Plain-data form (for infos and replays)."""
        return {
            "kind": self.kind,
            "winner": self.winner,
            "points": self.points,
            "knocker": self.knocker,
            "deadwood": list(self.deadwood),
            "layoffs": [CARD_NAMES[c] for c in self.knock.layoffs] if self.knock else [],
        }


def parse_deck(deck: Sequence[int | str] | np.ndarray) -> list[int]:
    """A 52-card dealing order from names or ids (ids of any integer type, or a 1-D numpy array of
    them); anything else raises :class:`DeckError`."""
    if isinstance(deck, np.ndarray):
        if deck.ndim != 1:
            raise DeckError(f"a deck array must be 1-D (52 card ids), got shape {deck.shape}")
    elif isinstance(deck, str) or not isinstance(deck, Sequence):
        raise DeckError(f"a deck must be a list of 52 card names or ids, got {type(deck).__name__}")
    try:
        cards = parse_cards(deck)
    except CardError as err:
        raise DeckError(f"invalid deck: {err}") from None
    if len(cards) != NUM_CARDS:
        raise DeckError(f"a deck must hold all 52 cards exactly once, got {len(cards)} cards")
    return cards


def check_dealer(dealer: object) -> int:
    """``dealer`` as 0 or 1 (any integer type); anything else raises ``ValueError``."""
    seat = as_int(dealer)
    if seat not in (0, 1):
        raise ValueError(f"dealer must be 0 or 1, got {short_repr(dealer)}")
    return seat


def check_turn_limit(turn_limit: object, what: str = "turn_limit") -> int:
    """``turn_limit`` as a positive int; anything else raises ``ValueError`` saying what is allowed.

    The one check of a turn limit, wherever one enters (the env, configs, the command line):
    ``what`` names it as the user gave it (``--turn-limit``, ``ladder.yaml: turn_limit``).
    """
    limit = as_int(turn_limit)
    if limit is None or limit < 1:
        raise ValueError(
            f"{what} must be a positive integer (draws per hand; default {DEFAULT_TURN_LIMIT}), "
            f"got {short_repr(turn_limit)}"
        )
    return limit


# Phases by value, as the kernel reports them.
_PHASES = tuple(Phase)
assert len(_PHASES) == NUM_PHASES


class HandState:
    """One hand of gin rummy between players 0 and 1 (one row of the compiled record)."""

    __slots__ = (
        "_cfg",
        "_legal",
        "dealer",
        "history",
        "phase",
        "player",
        "record",
        "result",
        "rules",
        "turn_limit",
    )

    def __init__(
        self,
        rules: Rules | None = None,
        dealer: int = 0,
        deck: Sequence[int | str] | np.ndarray | None = None,
        rng: random.Random | None = None,
        turn_limit: int = DEFAULT_TURN_LIMIT,
    ) -> None:
        """Deal a hand: from ``deck`` (52 cards in dealing order) or shuffled with ``rng``.

        ``turn_limit``: draws after which the hand ends as ``"truncated"`` (see the module docstring).
        """
        if rules is not None and not isinstance(rules, Rules):
            raise RulesError(f"rules must be a ginenv.rules.Rules (or None), got {type(rules).__name__}")
        dealer = check_dealer(dealer)
        self.turn_limit = check_turn_limit(turn_limit)
        self.rules = rules or Rules()
        if deck is None:
            order = list(range(NUM_CARDS))
            (rng or random.Random()).shuffle(order)
        else:
            order = parse_deck(deck)
        self._cfg = H.shared_rules_array(self.rules, self.turn_limit)
        #: The compiled record of the hand, shape ``(1, RECORD_SIZE)`` (:mod:`ginenv.kernels.hand`).
        self.record = np.zeros((1, H.RECORD_SIZE), dtype=np.int64)
        H.deal(self.record, 0, np.array(order, dtype=np.int64), dealer, self._cfg)
        self.dealer = dealer
        self.phase = Phase.UPCARD_NON_DEALER
        self.player = 1 - dealer
        self.history: list[tuple[int, int]] = []  # (player, action)
        self.result: HandResult | None = None
        self._legal = -1

    # ------------------------------------------------------------------ queries

    @property
    def rule_array(self) -> np.ndarray:
        """The rule options as the compiled code reads them (read-only; ``kernels.hand.rules_array``)."""
        return self._cfg

    # The record's views (the deck, the pile, the stock) are read through their accessors' Python
    # bodies (py_func): a compiled call from Python boxes the view it returns, 1.9 us against 0.53 us
    # for the pile. The scalars' compiled accessors cost a call from Python: 210 ns a property against
    # 170 ns indexing the row, 11.4 us against 10.3 us for encode_state (medians of 3 alternated runs,
    # 2026-12-07, busy 2-core machine).

    @property
    def deck(self) -> tuple[int, ...]:
        """The 52 cards in dealing order."""
        return tuple(H.deck_order.py_func(self.record, 0).tolist())

    @property
    def hands(self) -> tuple[int, int]:
        """Both players' cards as bitmasks (players 0 and 1)."""
        return H.hand_of(self.record, 0, 0), H.hand_of(self.record, 0, 1)

    @property
    def upcard(self) -> int:
        """The first upcard (card 20 of the deal)."""
        return int(H.deck_order.py_func(self.record, 0)[UPCARD_INDEX])

    @property
    def discard_pile(self) -> list[int]:
        """The discard pile, bottom first (the top is last)."""
        return H.discard_pile.py_func(self.record, 0).tolist()

    @property
    def stock(self) -> list[int]:
        """The stock, the next card to be drawn last (as a stack)."""
        return H.stock_cards.py_func(self.record, 0)[::-1].tolist()

    @property
    def stock_size(self) -> int:
        """Cards left in the stock."""
        return H.count_stock(self.record, 0)

    @property
    def banned(self) -> int:
        """The card taken from the discard pile this turn, which may not be discarded (-1: none)."""
        return H.banned_card(self.record, 0)

    @property
    def draws(self) -> int:
        """Draws made this hand (stock, discard pile or upcard)."""
        return H.draws_of(self.record, 0)

    @property
    def knock_limit(self) -> int:
        """This hand's knock limit (Oklahoma: from the upcard)."""
        return H.knock_limit_of(self.record, 0)

    @property
    def is_over(self) -> bool:
        """True once the hand has ended (knock, gin, big gin, dead hand or turn limit)."""
        return self.phase is Phase.OVER

    @property
    def non_dealer(self) -> int:
        """Index of the non-dealer."""
        return 1 - self.dealer

    def legal_mask(self) -> int:
        """Bitmask over action ids of the legal actions (0 once the hand is over)."""
        legal = self._legal
        if legal < 0:
            low, discards, knocks = H.legal_parts(self.record, 0, self._cfg)
            legal = low | discards << DISCARD_BASE | knocks << KNOCK_BASE
            self._legal = legal
        return legal

    def legal_actions(self) -> list[int]:
        """Legal action ids, ascending."""
        legal = self._legal
        if legal < 0:
            legal = self.legal_mask()
        out = list(_LOW_ACTIONS[legal & 0xF])
        if legal > 0xF:
            for lane, table in _CARD_ACTION_LANES:
                bits = legal >> lane & _LANE
                if bits:
                    out.extend(table[bits])
        return out

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` (any integer type) may be applied now; non-integers are never legal."""
        index = action if type(action) is int else as_int(action)
        if index is None or not 0 <= index < NUM_ACTIONS:
            return False
        return bool(self.legal_mask() >> index & 1)

    def top_discard(self) -> int | None:
        """The card on top of the discard pile, if any."""
        top = H.top_card(self.record, 0)
        return None if top < 0 else top

    def hand_cards(self, player: int) -> list[int]:
        """Cards held by ``player``, ascending."""
        return cards_of(self.hands[player])

    # ------------------------------------------------------------------ stepping

    def step(self, action: int) -> None:
        """Apply an action id (any integer type) for the player to move.

        Illegal actions, and anything that is not an integer, raise and change nothing.
        """
        if type(action) is not int or not 0 <= action < NUM_ACTIONS:
            action = self._action_id(action)
        self._applied(action, H.try_apply(self.record, 0, action, self._cfg))

    def step_viewing(self, action: int, views: np.ndarray, mask: np.ndarray, scores: np.ndarray) -> None:
        """:meth:`step`, then what the new seat to move observes into ``views[seat]`` and its legal
        mask into ``mask``, in the same compiled call (:func:`ginenv.kernels.hand.step_view`, whose
        docstring says what ``scores`` holds): the AEC env's step. An illegal action writes nothing."""
        if type(action) is not int or not 0 <= action < NUM_ACTIONS:
            action = self._action_id(action)
        self._applied(action, H.step_view(self.record, 0, action, self._cfg, views, mask, scores))

    def _action_id(self, action: object) -> int:
        # Anything but an int in range: its int, or the refusal (before anything is touched).
        number = action if type(action) is int else as_int(action)
        if number is None:
            self._refuse(action)
        if not 0 <= number < NUM_ACTIONS:
            self._refuse(number)
        return number

    def _applied(self, action: int, code: int) -> None:
        # Mirror the kernel's answer (try_apply's code): the history, the phase, the seat, the result.
        if code == H.ILLEGAL:
            self._refuse(action)
        player = self.player
        self.history.append((player, action))
        self._legal = -1
        self.phase = phase = _PHASES[code & 7]
        self.player = code >> 3
        if phase is Phase.OVER:
            self.result = self._result(player)

    def step_name(self, name: str) -> None:
        """Apply an action by name (``"draw_stock"``, ``"discard 7h"``, ...)."""
        self.step(action_id(name))

    def _refuse(self, action: object) -> NoReturn:
        legal = ", ".join(ACTION_NAMES[a] for a in self.legal_actions()) or self._over_note()
        # A bool is an int to Python but never an action id: it gets the "not an integer" message.
        if not isinstance(action, int) or isinstance(action, bool):
            raise UnknownActionError(
                f"an action must be an integer action id (0..{NUM_ACTIONS - 1}), got {short_repr(action)} "
                f"({type(action).__name__}). Legal now: {legal}"
            )
        if not 0 <= action < NUM_ACTIONS:
            raise UnknownActionError(
                f"unknown action id {action}; ids are 0..{NUM_ACTIONS - 1}. Legal now: {legal}"
            )
        what = f"{ACTION_NAMES[action]!r} (id {action})"
        raise IllegalActionError(
            f"{what} is not legal for player {self.player} in phase {self.phase.name}; legal actions: {legal}"
        )

    def _over_note(self) -> str:
        kind = self.result.kind if self.result is not None else "ended"
        if kind == "truncated":
            return f"none (the hand is over: truncated at the turn limit of {self.turn_limit} draws)"
        return f"none (the hand is over: {kind})"

    def _result(self, mover: int) -> HandResult:
        # The kernel has scored the hand; the showdown's cards are laid out by ginenv.scoring.
        kind, winner, points, *deadwood = H.result_of(self.record, 0)
        hands = self.hands
        if kind >= H.DEAD:
            dw = (min_deadwood(hands[0]), min_deadwood(hands[1]))
            return HandResult(H.RESULT_KINDS[kind], None, 0, None, dw)  # type: ignore[arg-type]
        defender = 1 - mover
        res = knock_layout(hands[mover], hands[defender], kind, points, deadwood[mover], deadwood[defender])
        return HandResult(res.kind, winner, res.points, mover, (deadwood[0], deadwood[1]), res)

    # ------------------------------------------------------------------ copies

    def clone(self) -> HandState:
        """An independent copy (for search and tests)."""
        other = HandState.__new__(HandState)
        other.rules = self.rules
        other.turn_limit = self.turn_limit
        other._cfg = self._cfg
        other.record = self.record.copy()
        other.dealer = self.dealer
        other.phase = self.phase
        other.player = self.player
        other.history = list(self.history)
        other.result = self.result
        other._legal = self._legal
        return other

    def __repr__(self) -> str:
        top = self.top_discard()
        return (
            f"<HandState phase={self.phase.name} player={self.player} dealer={self.dealer} "
            f"stock={self.stock_size} top={CARD_NAMES[top] if top is not None else None}>"
        )


# The compiled entry points a hand runs (ginenv.compiling: what a command compiles before its games).
compiling.register(HandState, H.deal, H.step_view)

# Phase is the kernel's (ginenv.kernels.hand): listed here, it is documented as this module's too.
__all__ = [
    "DEFAULT_TURN_LIMIT",
    "UPCARD_INDEX",
    "DeckError",
    "HandResult",
    "HandState",
    "IllegalActionError",
    "Phase",
    "ResultKind",
    "check_dealer",
    "check_turn_limit",
    "parse_deck",
]
