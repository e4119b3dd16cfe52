"""The public record of one hand as one seat saw it, rebuilt from that seat's observations alone.

:class:`PublicHistory` follows the hand from the seat's successive observations: its initial hand
(the first observation of a hand comes before the seat's first action, so it shows the 10 dealt
cards), the first upcard, its own actions and stock draws, and the opponent's moves read from what
changed in between (a card of ours in ``opponent_taken``: it took our discard, else it drew from the
stock; the new top of the pile: its discard). Every decision checks the record against the
observation (own hand, pile, stock size, the opponent's known cards).

The OpenSpiel adapter (:mod:`ginenv.agents.baselines.openspiel_simple`) replays this record in
``pyspiel``; :class:`ReconstructionError`, raised when the observations do not form a hand the record
can follow, is shared by both adapters.
"""

from __future__ import annotations

import enum

from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.cards import CARD_NAMES, cards_of
from ginenv.engine import Phase
from ginenv.observation import MAX_STOCK, SeatView

__all__ = ["ME", "OPP", "UNSEEN_CARD", "Move", "PublicHistory", "ReconstructionError", "track"]


class ReconstructionError(RuntimeError):
    """The observations of a seat do not form a hand the adapter can follow (or a bug)."""


def _bit(card: int) -> int:
    return 1 << card


def _single_card(mask: int) -> int:
    """The card of a one-card mask; anything else is a reconstruction error."""
    if mask == 0 or mask & (mask - 1):
        raise ReconstructionError(f"expected exactly one card, got {len(cards_of(mask))}")
    return mask.bit_length() - 1


#: Who acted: this seat or its opponent.
ME, OPP = 0, 1


class Move(enum.IntEnum):
    """Kinds of event of a :class:`PublicHistory`."""

    #: Decline the upcard.
    PASS = 0
    #: Take the upcard or the top discard.
    TAKE = 1
    #: Draw from the stock.
    STOCK = 2
    #: Discard a card.
    DISCARD = 3


#: Card of an event the seat could not see (the opponent's stock draws).
UNSEEN_CARD = -1


class PublicHistory:
    """One hand as one seat saw it, rebuilt from that seat's observations alone.

    Create it from the first observation of a hand (before the seat's first action); then call
    :meth:`record` with each action the seat takes and :meth:`observe` with each later observation.
    ``events`` lists ``(who, kind, card)`` in play order (``who``: :data:`ME` or :data:`OPP`; ``kind``:
    a :class:`Move`); ``card`` is :data:`UNSEEN_CARD` for the
    opponent's stock draws. Every observation is checked against the record (:meth:`check`).
    """

    __slots__ = ("_pending", "events", "hand", "initial_hand", "role", "upcard")

    def __init__(self, view: SeatView) -> None:
        """Start the record from the first observation of a hand."""
        if view.own_taken | view.own_discarded | view.own_passed:
            raise ReconstructionError(
                "the first observation of a hand must come before the seat's first action"
            )
        #: OpenSpiel's player id of the seat: 0 for the non-dealer (who acts first), 1 for the dealer.
        self.role = 1 if view.is_dealer else 0
        #: The 10 cards the seat was dealt, and the seat's cards now (as bitmasks).
        self.initial_hand = view.hand
        self.hand = view.hand
        self.events: list[tuple[int, Move, int]] = []
        self._pending: tuple[int, int] | None = None
        phase = view.phase
        if phase is Phase.UPCARD_NON_DEALER and not view.is_dealer and view.top is not None:
            self.upcard = view.top
        elif phase is Phase.UPCARD_DEALER and view.is_dealer and view.top is not None:
            self.upcard = view.top
            self.events.append((OPP, Move.PASS, view.top))
        elif phase is Phase.DRAW and view.is_dealer and view.top is not None:
            # The non-dealer took the upcard and discarded: the upcard is the one card it holds openly.
            self.upcard = _single_card(view.opponent_taken)
            self.events += [(OPP, Move.TAKE, self.upcard), (OPP, Move.DISCARD, view.top)]
        else:
            raise ReconstructionError(
                f"cannot start a hand at phase {phase.name} (dealer: {view.is_dealer}); "
                "the adapter must see every decision of its seat from the first one"
            )
        self.check(view)

    def record(self, action: int, view: SeatView) -> None:
        """Note the seat's own ``action``, taken on observation ``view``."""
        if action == PASS:
            self.events.append((ME, Move.PASS, self._top(view)))
        elif action == DRAW_DISCARD:
            card = self._top(view)
            self.events.append((ME, Move.TAKE, card))
            self.hand |= _bit(card)
        elif action == DRAW_STOCK:
            self.events.append((ME, Move.STOCK, UNSEEN_CARD))  # the card shows in the next observation
        elif DISCARD_BASE <= action < KNOCK_BASE:
            card = action - DISCARD_BASE
            self.events.append((ME, Move.DISCARD, card))
            self.hand &= ~_bit(card)
        else:
            # A knock or big gin ends the hand: no further observation belongs to it.
            self._pending = None
            return
        self._pending = (self.events[-1][1], self.events[-1][2])

    def observe(self, view: SeatView) -> None:
        """Bring the record up to a later observation of the same hand (the seat's next decision)."""
        pending = self._pending
        if pending is None:
            raise ReconstructionError("no action of the seat was recorded since its last observation")
        self._pending = None
        kind, card = pending
        events = self.events
        if kind == Move.STOCK:
            drawn = _single_card(view.hand & ~self.hand)
            events[-1] = (ME, Move.STOCK, drawn)
            self.hand |= _bit(drawn)
        elif kind == Move.PASS:
            if self.role == 0:
                # The dealer answers the offer: take it (and discard) or pass (then we must draw).
                if view.opponent_taken >> card & 1:
                    events += [(OPP, Move.TAKE, card), (OPP, Move.DISCARD, self._top(view))]
                else:
                    events.append((OPP, Move.PASS, card))
            else:
                # Both passed: the non-dealer's first draw is from the stock, then it discards.
                events += [(OPP, Move.STOCK, UNSEEN_CARD), (OPP, Move.DISCARD, self._top(view))]
        elif kind == Move.DISCARD:
            # The opponent's turn: it took our discard (it shows among its known cards) or drew.
            if view.opponent_taken >> card & 1:
                events.append((OPP, Move.TAKE, card))
            else:
                events.append((OPP, Move.STOCK, UNSEEN_CARD))
            events.append((OPP, Move.DISCARD, self._top(view)))
        # Move.TAKE: the seat discards next, nothing happened in between.
        self.check(view)

    @staticmethod
    def _top(view: SeatView) -> int:
        if view.top is None:
            raise ReconstructionError("expected a card on the discard pile")
        return view.top

    def public_state(self) -> tuple[list[int], int, int]:
        """Replay the record: (discard pile bottom to top, opponent's known cards, stock size)."""
        pile = [self.upcard]
        opp_known = 0
        stock = MAX_STOCK
        for who, kind, card in self.events:
            if kind == Move.TAKE:
                if not pile or pile[-1] != card:
                    raise ReconstructionError(f"took {CARD_NAMES[card]}, which is not the top discard")
                pile.pop()
                if who == OPP:
                    opp_known |= _bit(card)
            elif kind == Move.STOCK:
                stock -= 1
            elif kind == Move.DISCARD:
                pile.append(card)
                if who == OPP:
                    opp_known &= ~_bit(card)
        return pile, opp_known, stock

    def check(self, view: SeatView) -> None:
        """Raise :class:`ReconstructionError` unless the record agrees with the observation."""
        pile, opp_known, stock = self.public_state()
        top = pile[-1] if pile else None
        problems = []
        if self.hand != view.hand:
            problems.append(f"hand {cards_of(self.hand)} != observed {cards_of(view.hand)}")
        if top != view.top or sum(_bit(c) for c in pile) != view.discard_pile:
            problems.append("discard pile differs")
        if opp_known != view.opponent_taken:
            problems.append("opponent's known cards differ")
        if stock != view.stock_size:
            problems.append(f"stock size {stock} != observed {view.stock_size}")
        if problems:
            raise ReconstructionError("; ".join(problems))

    def __repr__(self) -> str:
        moves = ", ".join(
            f"{'me' if who == ME else 'opp'} {Move(kind).name.lower()}"
            + (f" {CARD_NAMES[card]}" if card >= 0 else "")
            for who, kind, card in self.events
        )
        return f"PublicHistory(role={self.role}, upcard={CARD_NAMES[self.upcard]}, events=[{moves}])"


def track(history: PublicHistory | None, view: SeatView) -> PublicHistory:
    """The record for ``view``: a new one at the first decision of a hand, else ``history`` updated."""
    if history is None or not (view.own_taken | view.own_discarded | view.own_passed):
        return PublicHistory(view)
    history.observe(view)
    return history
