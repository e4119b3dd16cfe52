"""One seat's public record of a hand: what both seats did, read from that seat's observations alone.

:class:`PublicRecord` is the one reader of a seat's successive observations (``observe()``'s vectors,
or :class:`~ginenv.observation.SeatView` read from them). It keeps the hand's public moves in play
order (:attr:`PublicRecord.events`: who passed over the upcard, took the top of the pile, drew from
the stock, discarded which card) and the public state before each of them (:class:`Table`: the
pile, the stock size, each seat's taken, discarded and passed cards, whose move in which phase).
The agents that follow the opponent (the levels' Bayesian model, the OpenSpiel adapter, research's
policy-weighted sampler) read the hand from here, so it is read one way.

Reading. Between two observations of the seat, the moves are found by replaying the rules of the
turn on the public state: whoever is to move passes, takes or draws, then discards, each move read
from the card it shows in the planes (a card newly passed over, newly taken, newly discarded; a
stock draw from the stock size), until the replayed state is exactly the observation. A step that
cannot be replayed so (observations missed, a record joined in mid-hand) is read from the planes
alone: the new passes, takes and discards of each seat, in that order, with the stock draws and the
order of the pile below its top unknown; :attr:`PublicRecord.complete` then turns false and
:attr:`PublicRecord.since` marks where the continuous history starts again.

New hands, one rule (:func:`new_hand`): an observation starts a new record when the seat has made no
move yet in it (its first decision of a hand, whatever the stock size), when the stock grew, or when
a card left a record that only grows within a hand (either seat's discards and passes). An
observation equal to the last one is a repeat and changes nothing.

Past decisions. :meth:`PublicRecord.decision` gives the public state at any past move as a
:class:`Decision`, and :meth:`Decision.observe` the observation and legal-action mask its mover had
then, for any hands it might have held, written by the kernel's own encoder
(:func:`ginenv.kernels.hand.encode`, :func:`ginenv.kernels.hand.legal_into`): a belief that weighs
the opponent's moves by a model of its play replays them exactly as the env showed them.

Only what the seat observed goes in: its own cards, never the opponent's (the opponent's stock
draws are :data:`UNSEEN_CARD`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit

from ginenv.actions import NUM_ACTIONS
from ginenv.cards import FULL_DECK, cards_of
from ginenv.kernels import hand as H
from ginenv.kernels.hand import Phase
from ginenv.layout import HAND_SIZE, MAX_STOCK, OBS_SIZE
from ginenv.observation import SeatView, decode
from ginenv.rules import Rules

#: Who moved, seat-relative: the seat whose record it is, or its opponent.
ME, OPP = 0, 1
#: The card of a move the seat could not see (the opponent's stock draws).
UNSEEN_CARD = -1
#: No card (an empty pile's top, no card just taken).
NO_CARD = -1


class Move(enum.IntEnum):
    """Kinds of public move."""

    #: Decline the upcard offer.
    PASS = 0
    #: Take the top of the discard pile (the upcard or a discard).
    TAKE = 1
    #: Draw from the stock (passing over the top of the pile).
    STOCK = 2
    #: Discard a card (a knock's discard included).
    DISCARD = 3


class Event(NamedTuple):
    """One public move: ``who`` (:data:`ME` or :data:`OPP`), its :class:`Move`, and its card (for a
    stock draw the card drawn, :data:`UNSEEN_CARD` when the seat did not see it)."""

    who: int
    kind: Move
    card: int


class Table(NamedTuple):
    """The public state of a hand at one moment, as one seat knows it (index :data:`ME` of each pair
    is the seat's, :data:`OPP` its opponent's)."""

    phase: Phase
    #: Who moves next.
    mover: int
    #: The discard pile, bottom to top (below the top, in card order after a step read from the planes).
    pile: tuple[int, ...]
    stock: int
    #: The seat's own cards.
    hand: int
    #: Cards each seat took from the pile and still holds.
    taken: tuple[int, int]
    discarded: tuple[int, int]
    passed: tuple[int, int]
    #: Whether the mover's draw must come from the stock (both passed the upcard).
    forced: bool
    #: The card the mover just took from the pile (:data:`NO_CARD`: none).
    just_took: int

    @property
    def top(self) -> int:
        """The top of the pile (:data:`NO_CARD` when empty)."""
        return self.pile[-1] if self.pile else NO_CARD

    @property
    def pile_mask(self) -> int:
        """Every card of the pile."""
        mask = 0
        for card in self.pile:
            mask |= 1 << card
        return mask

    @property
    def unseen(self) -> int:
        """Cards the seat has not seen: not its own, not in the pile, not taken by the opponent."""
        return FULL_DECK ^ (self.hand | self.pile_mask | self.taken[OPP])

    @classmethod
    def start(cls, upcard: int, dealer: int, hand: int) -> Table:
        """A hand as dealt: ``upcard`` on the pile, the non-dealer (``1 - dealer``) to answer the offer."""
        return cls(
            Phase.UPCARD_NON_DEALER,
            1 - dealer,
            (upcard,),
            MAX_STOCK,
            hand,
            (0, 0),
            (0, 0),
            (0, 0),
            False,
            NO_CARD,
        )

    @classmethod
    def of(cls, view: SeatView) -> Table:
        """The state an observation shows (the order of the pile below its top unknown: card order)."""
        pile = tuple(cards_of(view.pile)) + (() if view.top is None else (view.top,))
        first_draw = not (view.own_discarded | view.opponent_discarded) and view.top is not None
        forced = (
            view.phase == Phase.DRAW
            and first_draw
            and bool((view.own_passed & view.opponent_passed) >> pile[-1] & 1)
        )
        return cls(
            view.phase,
            ME if view.to_move else OPP,
            pile,
            view.stock_size,
            view.hand,
            (view.own_taken, view.opponent_taken),
            (view.own_discarded, view.opponent_discarded),
            (view.own_passed, view.opponent_passed),
            forced,
            NO_CARD,
        )

    def after(self, event: Event) -> Table:
        """The state once ``event``, the mover's move, is made."""
        who, kind, card = event
        taken, discarded, passed = list(self.taken), list(self.discarded), list(self.passed)
        pile, stock, hand, phase, mover = self.pile, self.stock, self.hand, self.phase, self.mover
        just_took, forced = NO_CARD, False
        bit = 1 << card if card >= 0 else 0
        if kind == Move.PASS:
            passed[who] |= bit
            mover = 1 - who
            if phase == Phase.UPCARD_NON_DEALER:
                phase = Phase.UPCARD_DEALER
            else:
                # Both passed: the non-dealer's first draw must be from the stock.
                phase, forced = Phase.DRAW, True
        elif kind == Move.TAKE:
            pile = pile[:-1]
            taken[who] |= bit
            just_took, phase = card, Phase.DISCARD
            if who == ME:
                hand |= bit
        elif kind == Move.STOCK:
            if pile:
                passed[who] |= 1 << pile[-1]
            stock -= 1
            phase = Phase.DISCARD
            if who == ME:
                hand |= bit
        else:
            pile += (card,)
            discarded[who] |= bit
            taken[who] &= ~bit
            if who == ME:
                hand &= ~bit
            phase, mover = Phase.DRAW, 1 - who
        return Table(
            phase,
            mover,
            pile,
            stock,
            hand,
            (taken[0], taken[1]),
            (discarded[0], discarded[1]),
            (passed[0], passed[1]),
            forced,
            just_took,
        )

    def shows(self, view: SeatView) -> bool:
        """Whether ``view`` observes exactly this state (at the end of a hand, whatever the phase)."""
        same = (
            self.top == (NO_CARD if view.top is None else view.top)
            and self.pile_mask == view.discard_pile
            and self.stock == view.stock_size
            and self.hand == view.hand
            and self.taken == (view.own_taken, view.opponent_taken)
            and self.discarded == (view.own_discarded, view.opponent_discarded)
            and self.passed == (view.own_passed, view.opponent_passed)
        )
        return same and (
            view.phase == Phase.OVER or (self.phase == view.phase and (self.mover == ME) == view.to_move)
        )


def _own_planes(view: SeatView, who: int) -> tuple[int, int, int]:
    """(taken, discarded, passed) of seat ``who`` in ``view``."""
    if who == ME:
        return view.own_taken, view.own_discarded, view.own_passed
    return view.opponent_taken, view.opponent_discarded, view.opponent_passed


def _one_card(mask: int) -> int:
    """The card of a one-card mask; :data:`NO_CARD` for any other mask."""
    return mask.bit_length() - 1 if mask and not mask & (mask - 1) else NO_CARD


def _next_move(table: Table, view: SeatView) -> Event | None:
    """The mover's move from ``table`` towards ``view``, read from the card it shows there; None when
    no move of the rules leads there."""
    who, top = table.mover, table.top
    taken, discarded, passed = _own_planes(view, who)
    newly_held = (taken & ~table.taken[who]) | (discarded & ~table.discarded[who])
    if table.phase.offers_upcard:
        if top >= 0 and newly_held >> top & 1:
            return Event(who, Move.TAKE, top)
        if top >= 0 and (passed & ~table.passed[who]) >> top & 1:
            return Event(who, Move.PASS, top)
        return None
    if table.phase == Phase.DRAW:
        if top >= 0 and not table.forced and newly_held >> top & 1:
            return Event(who, Move.TAKE, top)
        if view.stock_size < table.stock:
            # The seat sees its own card (the one new in its hand); the opponent's stays unseen.
            drawn = _one_card(view.hand & ~table.hand) if who == ME else UNSEEN_CARD
            return Event(who, Move.STOCK, drawn)
        if top >= 0 and not table.forced and discarded >> top & 1:
            return Event(who, Move.TAKE, top)  # a card it had discarded once, taken back and thrown again
        return None
    if table.phase == Phase.DISCARD:
        new = discarded & ~table.discarded[who]
        if not new:
            # A card discarded a second time: it was taken back from the pile, and leaves the taken cards.
            new = table.taken[who] & ~taken & discarded
        if _one_card(new) >= 0:
            return Event(who, Move.DISCARD, _one_card(new))
    return None


#: The most moves between two observations of one seat (its move, then the opponent's pass or
#: draw and discard), with room to spare.
_MOST_MOVES = 6


def _replay(table: Table, view: SeatView) -> tuple[list[Event], list[Table], Table] | None:
    """The moves that lead from ``table`` to ``view``, the state before each and the state reached;
    None if no moves of the rules do."""
    events: list[Event] = []
    states: list[Table] = []
    while not table.shows(view):
        move = _next_move(table, view)
        if move is None or len(events) == _MOST_MOVES:
            return None
        events.append(move)
        states.append(table)
        table = table.after(move)
    return events, states, table


def has_moved(view: SeatView) -> bool:
    """Whether the seat has made a move of this hand in ``view`` (every move leaves a card in one of
    its own planes: a pass or a stock draw in ``own_passed``, a take in ``own_taken`` until its
    discard, a discard in ``own_discarded``)."""
    return bool(view.own_taken | view.own_discarded | view.own_passed)


def new_hand(prev: SeatView, view: SeatView) -> bool:
    """The one rule for spotting a new hand: ``view`` (not a repeat of ``prev``) cannot follow
    ``prev`` in one hand when the seat has made no move yet in it, when the stock grew, or when a
    card left either seat's discards or passes (they only grow within a hand)."""
    shrunk = (
        (prev.own_discarded & ~view.own_discarded)
        | (prev.opponent_discarded & ~view.opponent_discarded)
        | (prev.own_passed & ~view.own_passed)
        | (prev.opponent_passed & ~view.opponent_passed)
    )
    return not has_moved(view) or bool(shrunk) or view.stock_size > prev.stock_size


class PublicRecord:
    """The public moves of one hand as one seat saw them, from that seat's observations alone.

    Feed it every observation of the seat with :meth:`update` (a repeat is harmless; a new hand
    restarts the record, see :func:`new_hand`). :attr:`events` lists the hand's moves in play order,
    :attr:`states` the public state before each; :attr:`table` is the state now.
    """

    def __init__(self) -> None:
        """An empty record."""
        self.reset()

    def reset(self) -> None:
        """Forget the hand."""
        self.view: SeatView | None = None
        self.events: list[Event] = []
        #: The public state before each event (None for one read from the planes alone).
        self.states: list[Table | None] = []
        self.table: Table | None = None
        #: Whether every observation of the hand was read move by move from its first.
        self.complete = False
        #: Index of the first event of the continuous history (after the last step read from the planes).
        self.since = 0
        #: The hand's first upcard and the seat's 10 dealt cards (None when the hand was joined midway).
        self.upcard: int | None = None
        self.dealt: int | None = None

    def update(self, observation: SeatView | np.ndarray) -> bool:
        """Read one observation of the seat (a vector, or a view of one); True when it started a new
        hand's record."""
        view = observation if isinstance(observation, SeatView) else decode(np.asarray(observation))
        prev = self.view
        if prev is not None and view == prev:
            return False
        started = prev is None or new_hand(prev, view)
        if started:
            self.reset()
            self._start(view)
        else:
            assert self.table is not None
            read = _replay(self.table, view)
            if read is None:
                self._read_planes(view)
            else:
                self.events += read[0]
                self.states += read[1]
                self.table = read[2]
        self.view = view
        return started

    def _start(self, view: SeatView) -> None:
        """Read a hand's observation from the deal: the opponent's moves before the seat's first."""
        if not has_moved(view):
            dealer = ME if view.is_dealer else OPP
            # The upcard is a card of the pile or one the opponent took or passed over.
            for upcard in cards_of(view.discard_pile | view.opponent_taken | view.opponent_passed):
                start = Table.start(upcard, dealer, view.hand)
                read = _replay(start, view)
                if read is not None:
                    self.events, self.states, self.table = read[0], list(read[1]), read[2]
                    self.complete, self.upcard, self.dealt = True, upcard, view.hand
                    return
        # Joined midway: nothing is known before this view, every card of its planes is new.
        self.table = Table(
            Phase.UPCARD_NON_DEALER, OPP, (), MAX_STOCK, 0, (0, 0), (0, 0), (0, 0), False, NO_CARD
        )
        self._read_planes(view)

    def _read_planes(self, view: SeatView) -> None:
        """Read a step no replay explains from the planes alone (see the module docstring)."""
        assert self.table is not None
        old = self.table
        for who in (ME, OPP):
            taken, discarded, passed = _own_planes(view, who)
            for kind, new in (
                (Move.PASS, passed & ~old.passed[who]),
                (Move.TAKE, taken & ~old.taken[who]),
                (Move.DISCARD, discarded & ~old.discarded[who]),
            ):
                for card in cards_of(new):
                    self.events.append(Event(who, kind, card))
                    self.states.append(None)
        self.table = Table.of(view)
        self.complete = False
        self.since = len(self.events)

    # ------------------------------------------------------------------ what the seat knows now

    def _now(self) -> SeatView:
        if self.view is None:
            raise RuntimeError("PublicRecord.update() has not been given an observation yet")
        return self.view

    @property
    def opponent_held(self) -> int:
        """Cards the opponent took from the pile and still holds (it certainly holds them)."""
        return self._now().opponent_taken

    @property
    def unseen(self) -> int:
        """Cards the seat has not seen: the stock and the opponent's cards it has not shown."""
        return self._now().unseen

    @property
    def opponent_hidden(self) -> int:
        """How many of the opponent's 10 cards (when the seat decides) the seat has not seen."""
        view = self._now()
        return max(0, min(HAND_SIZE - view.opponent_taken.bit_count(), view.unseen.bit_count()))

    @property
    def opponent_turns(self) -> int:
        """The opponent's completed turns this hand (its discards)."""
        return self._now().opponent_discarded.bit_count()

    @property
    def stock_size(self) -> int:
        """Cards left in the stock."""
        return self._now().stock_size

    # ------------------------------------------------------------------ past decisions

    def decision(self, index: int) -> Decision:
        """The public state at the move :attr:`events` ``[index]``, as its mover saw it then."""
        state = self.states[index]
        if state is None:
            raise ValueError(f"event {index} was read from the planes alone: its moment is unknown")
        view = self._now()
        who = self.events[index].who
        # Written through the record's functions, five compiled calls from Python: 4.2 us a decision
        # against 3.6 us writing the columns here (medians of 3 alternated runs, 2026-12-07).
        row = np.zeros((1, H.RECORD_SIZE), dtype=np.int64)
        hand0, hand1 = (state.hand, 0) if ME == 0 else (0, state.hand)
        # The stock's cards are unseen: placeholder ids, of which the encoder reads only the count.
        stock = np.zeros(state.stock, dtype=np.int64)
        H.set_position(row, 0, hand0, hand1, stock, NO_CARD, int(state.phase), state.mover, view.knock_limit)
        pile = np.array(state.pile, dtype=np.int64)
        H.set_table(row, 0, pile, ME if view.is_dealer else OPP, state.forced)
        for seat in (ME, OPP):
            H.set_public_cards(row, 0, seat, state.taken[seat], state.discarded[seat], state.passed[seat])
        # Banned as under the standard rules; Decision.observe applies the rules it is given.
        H.set_just_taken(row, 0, state.just_took, _STANDARD_RULES)
        scores = (view.own_score, view.opponent_score) if who == ME else (view.opponent_score, view.own_score)
        return Decision(row[0], who, scores[0], scores[1], view.target)


#: The standard rules' array, for a decision's row before :meth:`Decision.observe` is given rules.
_STANDARD_RULES = H.shared_rules_array(Rules(), 0)


@dataclass(frozen=True)
class Decision:
    """One past move's moment: the hand's record row (:mod:`ginenv.kernels.hand`) as public, with the
    mover's cards left to be supplied, and the match scores the mover saw."""

    row: np.ndarray
    #: The mover's seat in ``row`` (:data:`ME` or :data:`OPP`).
    seat: int
    own_score: int
    opponent_score: int
    target: int

    def observe(self, hands: np.ndarray, rules: Rules | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The mover's observation vectors (N, OBS_SIZE float32) and legal-action masks (N, 108 int8)
        at this moment, had it held each of ``hands`` (N int64 card masks), written by the kernel's
        encoder; ``rules`` (default: the standard rules) decide whether big gin is legal and whether a
        card just taken may be thrown back."""
        cfg = H.rules_array(rules or Rules(), 0)
        row = self.row.reshape(1, -1).copy()
        H.set_just_taken(row, 0, H.just_taken(row, 0), cfg)
        hands = np.ascontiguousarray(hands, dtype=np.int64).reshape(-1)
        obs = np.empty((hands.size, OBS_SIZE), dtype=np.float32)
        mask = np.empty((hands.size, NUM_ACTIONS), dtype=np.int8)
        _observe_many(row, self.seat, hands, cfg, self.own_score, self.opponent_score, self.target, obs, mask)
        return obs, mask


@njit(cache=True)
def _observe_many(
    s: np.ndarray,
    seat: int,
    hands: np.ndarray,
    cfg: np.ndarray,
    own: int,
    other: int,
    target: int,
    obs: np.ndarray,
    mask: np.ndarray,
) -> None:
    # One compiled loop: record ``s`` (one row) with each hand in the mover's seat, encoded and its
    # mask written.
    for k in range(hands.size):
        H.set_hand(s, 0, seat, hands[k])
        H.encode(s, 0, seat, obs[k], own, other, target, False)
        H.legal_into(s, 0, mask[k], cfg)


__all__ = [
    "ME",
    "NO_CARD",
    "OPP",
    "UNSEEN_CARD",
    "Decision",
    "Event",
    "Move",
    "PublicRecord",
    "Table",
    "has_moved",
    "new_hand",
]
