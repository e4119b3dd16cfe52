"""The public record of one hand as one seat saw it, rebuilt from that seat's observations alone.

:class:`PublicHistory` follows the hand from the seat's successive observations through the seat's
:class:`~ginenv.public_record.PublicRecord` (which reads the moves of both seats): its initial hand
(the first observation of a hand comes before the seat's first action, so it shows the 10 dealt
cards), the first upcard, its own actions and stock draws, and the opponent's moves. Every decision
checks that the record read each move up to the observation, and that it shows the action the seat
recorded.

The OpenSpiel adapter (:mod:`ginenv.agents.baselines.openspiel_simple`) replays this record in
``pyspiel``; :class:`ReconstructionError`, raised when the observations do not form a hand the record
can follow, is shared by both adapters.
"""

from __future__ import annotations

from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.cards import CARD_NAMES, cards_of
from ginenv.observation import SeatView
from ginenv.public_record import ME, OPP, UNSEEN_CARD, Event, Move, PublicRecord, Table, has_moved, new_hand

__all__ = ["ME", "OPP", "UNSEEN_CARD", "Move", "PublicHistory", "ReconstructionError", "track"]


class ReconstructionError(RuntimeError):
    """The observations of a seat do not form a hand the adapter can follow (or a bug)."""


class PublicHistory:
    """One hand as one seat saw it, rebuilt from that seat's observations alone.

    Create it from the first observation of a hand (before the seat's first action); then call
    :meth:`record` with each action the seat takes and :meth:`observe` with each later observation.
    ``events`` lists ``(who, kind, card)`` in play order (``who``: :data:`ME` or :data:`OPP`; ``kind``:
    a :class:`Move`); ``card`` is :data:`UNSEEN_CARD` for the opponent's stock draws. The moves are
    read by the seat's :class:`~ginenv.public_record.PublicRecord`; every observation must be read
    move by move from the hand's first, and must show the action recorded.
    """

    __slots__ = ("_expected", "public")

    def __init__(self, view: SeatView) -> None:
        """Start the record from the first observation of a hand."""
        if has_moved(view):
            raise ReconstructionError(
                "the first observation of a hand must come before the seat's first action"
            )
        #: The seat's public record of the hand.
        self.public = PublicRecord()
        self.public.update(view)
        if not self.public.complete:
            raise ReconstructionError(
                f"cannot start a hand at phase {view.phase.name} (dealer: {view.is_dealer}); "
                "the adapter must see every decision of its seat from the first one"
            )
        #: The seat's own move recorded since its last observation, which the next one must show.
        self._expected: Event | None = None

    @property
    def role(self) -> int:
        """OpenSpiel's player id of the seat: 0 for the non-dealer (who acts first), 1 for the dealer."""
        return 1 if self._view.is_dealer else 0

    @property
    def upcard(self) -> int:
        """The hand's first upcard."""
        assert self.public.upcard is not None
        return self.public.upcard

    @property
    def initial_hand(self) -> int:
        """The 10 cards the seat was dealt (a bitmask)."""
        assert self.public.dealt is not None
        return self.public.dealt

    @property
    def hand(self) -> int:
        """The seat's cards now (a bitmask; a card drawn from the stock counts once observed)."""
        return self._table().hand

    @property
    def events(self) -> list[tuple[int, Move, int]]:
        """The hand's moves so far, ``(who, kind, card)`` in play order, the seat's recorded action
        included."""
        moves = self.public.events + ([self._expected] if self._expected is not None else [])
        return [(who, kind, card) for who, kind, card in moves]

    def _table(self) -> Table:
        """The public state now, once the seat's recorded action is made."""
        table = self.public.table
        assert table is not None
        return table if self._expected is None else table.after(self._expected)

    @property
    def _view(self) -> SeatView:
        assert self.public.view is not None
        return self.public.view

    def record(self, action: int, view: SeatView) -> None:
        """Note the seat's own ``action``, taken on observation ``view``: the next observation must
        show it."""
        if action == PASS:
            self._expected = Event(ME, Move.PASS, self._top(view))
        elif action == DRAW_DISCARD:
            self._expected = Event(ME, Move.TAKE, self._top(view))
        elif action == DRAW_STOCK:
            self._expected = Event(ME, Move.STOCK, UNSEEN_CARD)  # the card shows in the next observation
        elif DISCARD_BASE <= action < KNOCK_BASE:
            self._expected = Event(ME, Move.DISCARD, action - DISCARD_BASE)
        else:
            # A knock or big gin ends the hand: no further observation belongs to it.
            self._expected = None

    def observe(self, view: SeatView) -> None:
        """Bring the record up to a later observation of the same hand (the seat's next decision)."""
        expected = self._expected
        if expected is None:
            raise ReconstructionError("no action of the seat was recorded since its last observation")
        self._expected = None
        read = len(self.public.events)
        if new_hand(self._view, view):
            raise ReconstructionError("the observation does not follow the hand")
        self.public.update(view)
        new = self.public.events[read:]
        _, kind, card = expected
        if not new or new[0].who != ME or new[0].kind != kind or card not in (UNSEEN_CARD, new[0].card):
            raise ReconstructionError(f"the observation does not show the seat's {kind.name.lower()}")
        self.check(view)

    @staticmethod
    def _top(view: SeatView) -> int:
        if view.top is None:
            raise ReconstructionError("expected a card on the discard pile")
        return view.top

    def public_state(self) -> tuple[list[int], int, int]:
        """The public state now: (discard pile bottom to top, opponent's known cards, stock size)."""
        table = self._table()
        return list(table.pile), table.taken[OPP], table.stock

    def check(self, view: SeatView) -> None:
        """Raise :class:`ReconstructionError` unless the record read every move up to ``view``."""
        table = self.public.table
        if not self.public.complete or table is None or not table.shows(view):
            raise ReconstructionError(
                f"the record does not follow the hand up to this observation (hand {cards_of(view.hand)})"
            )

    def __repr__(self) -> str:
        moves = ", ".join(
            f"{'me' if who == ME else 'opp'} {Move(kind).name.lower()}"
            + (f" {CARD_NAMES[card]}" if card >= 0 else "")
            for who, kind, card in self.events
        )
        return f"PublicHistory(role={self.role}, upcard={CARD_NAMES[self.upcard]}, events=[{moves}])"


def track(history: PublicHistory | None, view: SeatView) -> PublicHistory:
    """The record for ``view``: a new one at the first decision of a hand, else ``history`` updated."""
    if history is None or not has_moved(view):
        return PublicHistory(view)
    history.observe(view)
    return history
