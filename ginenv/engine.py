"""The hand state machine: deal, upcard offer, draw, discard, knock, dead hand, showdown.

:class:`HandState` owns one hand (one deal). Its :class:`Phase` says whose decision it is and of
what kind; each phase has one handler. Legal actions are computed here and nowhere else, as an int
bitmask over the action ids of :mod:`ginenv.actions` (cached until the state changes); applying an
action that is not legal raises :class:`IllegalActionError` before anything is touched.

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

import enum
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ginenv.actions import (
    ACTION_NAMES,
    BIG_GIN,
    DISCARD_BASE,
    DRAW_DISCARD,
    DRAW_STOCK,
    KNOCK_BASE,
    NUM_ACTIONS,
    PASS,
    UnknownActionError,
    action_id,
)
from ginenv.cards import (
    CARD_NAMES,
    CARD_VALUES,
    NUM_CARDS,
    CardError,
    cards_of,
    parse_cards,
    short_repr,
)
from ginenv.melds import deadwood_of_mask, knock_discards
from ginenv.rules import Rules, RulesError
from ginenv.scoring import KnockResult, score_knock
from ginenv.validation import as_int

HAND_SIZE = 10
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


class Phase(enum.IntEnum):
    """Whose decision it is, and of what kind."""

    UPCARD_NON_DEALER = 0  # non-dealer: take the upcard or pass
    UPCARD_DEALER = 1  # dealer: take the upcard or pass (the non-dealer passed)
    DRAW = 2  # draw from the stock or the discard pile
    DISCARD = 3  # discard (maybe knocking), or big gin
    OVER = 4  # the hand has ended


class IllegalActionError(ValueError):
    """An action that is not legal in the current state; the state is left unchanged."""


class DeckError(CardError):
    """A deck given for a deal is not 52 distinct cards."""


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


def check_turn_limit(turn_limit: object) -> int:
    """``turn_limit`` as a positive int; anything else raises ``ValueError`` saying what is allowed."""
    limit = as_int(turn_limit)
    if limit is None or limit < 1:
        raise ValueError(
            f"turn_limit must be a positive integer (draws per hand; default {DEFAULT_TURN_LIMIT}), "
            f"got {short_repr(turn_limit)}"
        )
    return limit


def _knock_limit(rules: Rules, upcard: int) -> int:
    if not rules.oklahoma:
        return rules.knock_limit
    # Oklahoma: the upcard's value; an ace means gin only.
    return 0 if upcard % 13 == 0 else CARD_VALUES[upcard]


class HandState:
    """One hand of gin rummy between players 0 and 1."""

    __slots__ = (
        "_legal",
        "banned",
        "dealer",
        "deck",
        "discard_pile",
        "draws",
        "hands",
        "history",
        "knock_limit",
        "phase",
        "player",
        "result",
        "rules",
        "stock",
        "turn_limit",
        "upcard",
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
        self.draws = 0
        self.rules = rules or Rules()
        if deck is None:
            order = list(range(NUM_CARDS))
            (rng or random.Random()).shuffle(order)
        else:
            order = parse_deck(deck)
        self.deck: tuple[int, ...] = tuple(order)
        self.dealer = dealer
        non_dealer = 1 - dealer
        hands = [0, 0]
        for c in order[:HAND_SIZE]:
            hands[non_dealer] |= 1 << c
        for c in order[HAND_SIZE : 2 * HAND_SIZE]:
            hands[dealer] |= 1 << c
        self.hands = hands
        self.upcard = order[UPCARD_INDEX]
        self.discard_pile: list[int] = [self.upcard]
        # Reversed so that pop() takes card 21 first.
        self.stock: list[int] = order[:UPCARD_INDEX:-1]
        self.phase = Phase.UPCARD_NON_DEALER
        self.player = non_dealer
        self.banned = -1  # card taken from the discard pile this turn: cannot be discarded
        self.knock_limit = _knock_limit(self.rules, self.upcard)
        self.history: list[tuple[int, int]] = []  # (player, action)
        self.result: HandResult | None = None
        self._legal = -1

    # ------------------------------------------------------------------ queries

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
            legal = self._compute_legal()
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

    def _compute_legal(self) -> int:
        phase = self.phase
        if phase is Phase.DISCARD:
            hand = self.hands[self.player]
            allowed = hand if self.banned < 0 else hand & ~(1 << self.banned)
            legal = allowed << DISCARD_BASE
            knocks = knock_discards(hand, self.knock_limit) & allowed
            legal |= knocks << KNOCK_BASE
            if self.rules.big_gin_bonus is not None and deadwood_of_mask(hand) == 0:
                legal |= 1 << BIG_GIN
            return legal
        if phase is Phase.DRAW:
            if self._forced_stock_draw():
                return 1 << DRAW_STOCK
            return (1 << DRAW_STOCK) | (1 << DRAW_DISCARD)
        if phase is Phase.OVER:
            return 0
        return (1 << DRAW_DISCARD) | (1 << PASS)

    def _forced_stock_draw(self) -> bool:
        # Both players passed the upcard: the non-dealer's first draw is from the stock.
        h = self.history
        return len(h) == 2 and h[1][1] == PASS

    def top_discard(self) -> int | None:
        """The card on top of the discard pile, if any."""
        return self.discard_pile[-1] if self.discard_pile else None

    def hand_cards(self, player: int) -> list[int]:
        """Cards held by ``player``, ascending."""
        return cards_of(self.hands[player])

    # ------------------------------------------------------------------ stepping

    def step(self, action: int) -> None:
        """Apply an action id (any integer type) for the player to move.

        Illegal actions, and anything that is not an integer, raise and change nothing.
        """
        if type(action) is not int:
            number = as_int(action)
            if number is None:
                self._refuse(action)
            action = number  # type: ignore[assignment]
        legal = self._legal
        if legal < 0:
            legal = self.legal_mask()
        if action < 0 or not legal >> action & 1:
            self._refuse(action)
        self.history.append((self.player, action))
        self._legal = -1
        _HANDLERS[self.phase](self, action)

    def step_name(self, name: str) -> None:
        """Apply an action by name (``"draw_stock"``, ``"discard 7h"``, ...)."""
        self.step(action_id(name))

    def _refuse(self, action: object) -> None:
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

    def _take_top_discard(self) -> None:
        card = self.discard_pile.pop()
        self.hands[self.player] |= 1 << card
        # The card just taken may not be thrown back this turn, unless the rules allow it (seed 004).
        self.banned = -1 if self.rules.discard_taken_card else card
        self.draws += 1
        self.phase = Phase.DISCARD

    def _on_upcard(self, action: int) -> None:
        if action == DRAW_DISCARD:
            self._take_top_discard()
        elif self.phase is Phase.UPCARD_NON_DEALER:
            self.phase = Phase.UPCARD_DEALER
            self.player = self.dealer
        else:
            self.phase = Phase.DRAW
            self.player = self.non_dealer

    def _on_draw(self, action: int) -> None:
        if action == DRAW_DISCARD:
            self._take_top_discard()
        else:
            self.hands[self.player] |= 1 << self.stock.pop()
            self.banned = -1
            self.draws += 1
            self.phase = Phase.DISCARD

    def _on_discard(self, action: int) -> None:
        player = self.player
        if action == BIG_GIN:
            self._showdown(player, self.hands[player])
            return
        if action >= KNOCK_BASE:
            card = action - KNOCK_BASE
            self.hands[player] ^= 1 << card
            self.discard_pile.append(card)
            self._showdown(player, self.hands[player])
            return
        card = action - DISCARD_BASE
        self.hands[player] ^= 1 << card
        self.discard_pile.append(card)
        self.banned = -1
        if len(self.stock) <= self.rules.dead_hand_stock:
            dw = (deadwood_of_mask(self.hands[0]), deadwood_of_mask(self.hands[1]))
            self.result = HandResult("dead", None, 0, None, dw)
            self.phase = Phase.OVER
            return
        if self.draws >= self.turn_limit:
            dw = (deadwood_of_mask(self.hands[0]), deadwood_of_mask(self.hands[1]))
            self.result = HandResult("truncated", None, 0, None, dw)
            self.phase = Phase.OVER
            return
        self.player = 1 - player
        self.phase = Phase.DRAW

    def _showdown(self, knocker: int, knocker_cards: int) -> None:
        defender = 1 - knocker
        res = score_knock(knocker_cards, self.hands[defender], self.rules, self.knock_limit)
        winner = knocker if res.winner == "knocker" else defender
        dw = [0, 0]
        dw[knocker] = res.knocker_deadwood
        dw[defender] = res.defender_deadwood
        self.result = HandResult(res.kind, winner, res.points, knocker, (dw[0], dw[1]), res)
        self.phase = Phase.OVER

    # ------------------------------------------------------------------ copies

    def clone(self) -> HandState:
        """An independent copy (for search and tests)."""
        other = HandState.__new__(HandState)
        other.rules = self.rules
        other.dealer = self.dealer
        other.deck = self.deck
        other.hands = list(self.hands)
        other.stock = list(self.stock)
        other.discard_pile = list(self.discard_pile)
        other.phase = self.phase
        other.player = self.player
        other.banned = self.banned
        other.upcard = self.upcard
        other.knock_limit = self.knock_limit
        other.turn_limit = self.turn_limit
        other.draws = self.draws
        other.history = list(self.history)
        other.result = self.result
        other._legal = self._legal
        return other

    def __repr__(self) -> str:
        return (
            f"<HandState phase={self.phase.name} player={self.player} dealer={self.dealer} "
            f"stock={len(self.stock)} top={CARD_NAMES[self.discard_pile[-1]] if self.discard_pile else None}>"
        )


# One handler per phase, indexed by the phase's value (OVER has none: nothing is legal there).
_HANDLERS = (
    HandState._on_upcard,
    HandState._on_upcard,
    HandState._on_draw,
    HandState._on_discard,
)
