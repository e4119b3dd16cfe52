"""What one seat may see of a hand, and its encoding as the observation vector.

This module owns the line between public and private information. :class:`Knowledge` records the
public card events of the current hand as actions are applied (who took which card from the
discard pile and still holds it, who discarded what, who passed over which card);
:func:`encode` turns one seat's view into the flat ``float32`` vector the env returns as
``observation["observation"]``; :func:`decode` reads such a vector back as card bitmasks, so agents
that reason about cards (the Bayesian levels) work from observations alone.

What a seat sees (and nothing else): its own hand, the discard pile, the public history of card
movements of both seats, the stock size, the phase, whose turn it is, who dealt, the knock limit and,
in match mode, the running scores. Never the opponent's hidden cards (except in oracle mode, which
appends them as an extra plane) and never the order of the stock. :func:`encode` reads only those
parts of the engine state; the privacy property test (``tests/ginenv/test_observation.py``) checks
that changing the cards a seat cannot see changes nothing it observes.

Layout of the vector (seat-relative: "own" is the observing seat, "opponent" the other):

| index        | name                  | meaning                                                   |
|--------------|-----------------------|-----------------------------------------------------------|
| 0            | ``stock_size``        | cards left in the stock (0..31)                           |
| 1            | ``knock_limit``       | the hand's knock limit (Oklahoma: the upcard's value)     |
| 2            | ``own_score``         | own running points in the match (0 in hand mode)          |
| 3            | ``opponent_score``    | the opponent's running points (0 in hand mode)            |
| 4            | ``target``            | the match target (0 in hand mode)                         |
| 5..9         | phase one-hot         | ``Phase`` 0..4 (upcard offers, draw, discard, over)       |
| 10           | ``to_move``           | 1 if this seat decides now                                |
| 11           | ``is_dealer``         | 1 if this seat dealt this hand                            |
| 12 + 52 k .. | plane ``k`` (52 each) | one entry per card id (``ginenv.cards``), see :data:`PLANES` |
| 532..583     | ``opponent_hand``     | oracle mode only: the opponent's cards                    |

Planes, in order: ``hand`` (own cards), ``top`` (the top of the discard pile), ``pile`` (the cards
under it), ``opponent_taken`` (cards the opponent took from the discard pile and still holds),
``opponent_discarded`` (every card the opponent discarded this hand), ``opponent_passed`` (cards the
opponent passed over: the declined upcard, and the top discard whenever it drew from the stock
instead), ``own_taken`` / ``own_discarded`` / ``own_passed`` (the same for this seat: what the
opponent knows about it), ``unseen`` (cards neither in the own hand, nor in the discard pile, nor
known to be held by the opponent: the stock and the opponent's unknown cards, which a belief model
spreads its probability over).

The full state (:func:`encode_state`, the env's ``state()``, for centralised critics and analysis,
never for an agent's policy) is a second vector of :data:`STATE_SIZE` entries, laid out by absolute
seat (``player_0`` first), with everything hidden from the seats included:

| index      | name                   | meaning                                                     |
|------------|------------------------|-------------------------------------------------------------|
| 0          | ``stock_size``         | cards left in the stock (0..31)                             |
| 1          | ``knock_limit``        | the hand's knock limit                                      |
| 2, 3       | ``score_0/1``          | running points of player_0 and player_1 (0 in hand mode)    |
| 4          | ``target``             | the match target (0 in hand mode)                           |
| 5          | ``draws``              | draws made this hand (stock, discard pile or upcard)        |
| 6          | ``turn_limit``         | draws after which the hand is truncated                     |
| 7..11      | phase one-hot          | ``Phase`` 0..4                                              |
| 12, 13     | player to move         | one-hot over the seats                                      |
| 14, 15     | dealer                 | one-hot over the seats                                      |
| 16 + 52 k  | plane ``k`` (52 each)  | :data:`STATE_PLANES`, one entry per card id                 |

State planes: ``hand_0``, ``hand_1`` (both hands), ``top``, ``pile`` (the cards under the top),
``taken_0/1``, ``discarded_0/1``, ``passed_0/1`` (the public record of :class:`Knowledge` per seat),
``banned`` (the card just taken from the pile, which the mover may not discard), then two order
planes: ``stock_order`` (for each card in the stock its position from the top, 1 = drawn next; 0
elsewhere) and ``pile_order`` (for each card in the discard pile its position from the bottom, 1 =
the first upcard's place; the top has the largest; 0 elsewhere). :func:`state_slice` names them.

Speed: the vector is built from int bitmasks in one pass: the flags and planes are packed into one
Python int, turned into bytes and expanded with ``np.unpackbits``; no loop over cards, and
:class:`Knowledge` is updated in O(1) per action.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.cards import FULL_DECK, NUM_CARDS, cards_of
from ginenv.engine import HAND_SIZE, HandState, Phase

#: Index of each scalar entry.
STOCK_SIZE = 0
KNOCK_LIMIT = 1
OWN_SCORE = 2
OPPONENT_SCORE = 3
TARGET = 4
NUM_SCALARS = 5
#: Scalar names, in index order.
SCALARS = ("stock_size", "knock_limit", "own_score", "opponent_score", "target")

#: First index of the phase one-hot (``PHASE_BASE + Phase``).
PHASE_BASE = NUM_SCALARS
NUM_PHASES = len(Phase)
TO_MOVE = PHASE_BASE + NUM_PHASES
IS_DEALER = TO_MOVE + 1
NUM_FLAGS = NUM_PHASES + 2

#: Card planes, in order; plane ``k`` covers ``PLANE_BASE + 52 k`` .. ``PLANE_BASE + 52 k + 51``.
PLANES = (
    "hand",
    "top",
    "pile",
    "opponent_taken",
    "opponent_discarded",
    "opponent_passed",
    "own_taken",
    "own_discarded",
    "own_passed",
    "unseen",
)
PLANE_BASE = IS_DEALER + 1
NUM_PLANES = len(PLANES)
#: Length of the observation vector without the oracle plane.
OBS_SIZE = PLANE_BASE + NUM_PLANES * NUM_CARDS
#: Version of this encoding, recorded in trained checkpoints: bump it whenever the layout or the
#: meaning of any entry changes, so that networks trained on the old one are refused, not misread.
OBS_FORMAT = 1
#: Length with the oracle plane (the opponent's hand) appended.
ORACLE_OBS_SIZE = OBS_SIZE + NUM_CARDS
#: Index of the first entry of the oracle plane.
ORACLE_BASE = OBS_SIZE
#: Most cards the stock can hold (52 - 2 hands - the upcard).
MAX_STOCK = NUM_CARDS - 2 * HAND_SIZE - 1


def plane_slice(name: str) -> slice:
    """The slice of the observation vector holding plane ``name`` (one of :data:`PLANES` or
    ``"opponent_hand"``, the oracle plane)."""
    if name == "opponent_hand":
        return slice(ORACLE_BASE, ORACLE_BASE + NUM_CARDS)
    try:
        k = PLANES.index(name)
    except ValueError:
        raise KeyError(f"unknown plane {name!r}; planes: {', '.join(PLANES)}, opponent_hand") from None
    start = PLANE_BASE + k * NUM_CARDS
    return slice(start, start + NUM_CARDS)


# Bit offsets of the packed part (flags and planes), counted from index NUM_SCALARS of the vector.
_FLAG_TO_MOVE = TO_MOVE - NUM_SCALARS
_FLAG_DEALER = IS_DEALER - NUM_SCALARS
_P = [PLANE_BASE - NUM_SCALARS + k * NUM_CARDS for k in range(NUM_PLANES + 1)]
(
    _HAND,
    _TOP,
    _PILE,
    _OPP_TAKEN,
    _OPP_DISCARDED,
    _OPP_PASSED,
    _OWN_TAKEN,
    _OWN_DISCARDED,
    _OWN_PASSED,
    _UNSEEN,
    _ORACLE,
) = _P
_PHASE_BIT = tuple(1 << p for p in range(NUM_PHASES))
# Vector indices of the first entry of each plane (for the tracker's in-place updates).
(
    _V_HAND,
    _V_TOP,
    _V_PILE,
    _V_OPP_TAKEN,
    _V_OPP_DISCARDED,
    _V_OPP_PASSED,
    _V_OWN_TAKEN,
    _V_OWN_DISCARDED,
    _V_OWN_PASSED,
    _V_UNSEEN,
    _V_ORACLE,
) = (p + NUM_SCALARS for p in _P)


class Knowledge:
    """The public card events of one hand, per seat, as int bitmasks; updated once per action.

    ``taken[p]``: cards seat ``p`` took from the discard pile and still holds. ``discarded[p]``:
    every card ``p`` discarded this hand (a knock's discard included). ``passed[p]``: cards ``p``
    passed over (the declined upcard; the top discard when drawing from the stock instead).
    ``pile``: the cards of the discard pile. All of it is public: both seats see the same record.
    """

    __slots__ = ("discarded", "passed", "pile", "taken")

    def __init__(self, upcard: int) -> None:
        """A fresh record for a hand whose first upcard is ``upcard``."""
        self.taken = [0, 0]
        self.discarded = [0, 0]
        self.passed = [0, 0]
        self.pile = 1 << upcard

    @classmethod
    def of(cls, state: HandState) -> Knowledge:
        """The record of a hand so far, rebuilt by replaying its public history from the deal."""
        replay = HandState(state.rules, state.dealer, deck=state.deck)
        knowledge = cls(replay.upcard)
        for player, action in state.history:
            pile = replay.discard_pile
            knowledge.record(player, action, pile[-1] if pile else -1)
            replay.step(action)
        return knowledge

    def record(self, player: int, action: int, top: int) -> None:
        """Note ``player``'s ``action``; ``top`` is the top discard just *before* it (-1 if none).

        Call it for every action applied to the hand, after the engine accepted it.
        """
        if action >= DISCARD_BASE:
            bit = 1 << (action - KNOCK_BASE if action >= KNOCK_BASE else action - DISCARD_BASE)
            self.discarded[player] |= bit
            self.taken[player] &= ~bit
            self.pile |= bit
        elif action == DRAW_DISCARD:
            bit = 1 << top
            self.taken[player] |= bit
            self.pile &= ~bit
        elif action in (DRAW_STOCK, PASS) and top >= 0:
            self.passed[player] |= 1 << top
        # BIG_GIN moves no card.

    def copy(self) -> Knowledge:
        """An independent copy."""
        other = Knowledge.__new__(Knowledge)
        other.taken = list(self.taken)
        other.discarded = list(self.discarded)
        other.passed = list(self.passed)
        other.pile = self.pile
        return other

    def __repr__(self) -> str:
        return (
            f"Knowledge(taken={self.taken}, discarded={self.discarded}, passed={self.passed}, "
            f"pile={self.pile:#x})"
        )


def observation_high(knock_limit: int, score_high: int, target: int, oracle: bool) -> np.ndarray:
    """Upper bounds of the vector's entries (the ``high`` of its ``Box``; every low is 0)."""
    high = np.ones(ORACLE_OBS_SIZE if oracle else OBS_SIZE, dtype=np.float32)
    high[STOCK_SIZE] = MAX_STOCK
    high[KNOCK_LIMIT] = knock_limit
    high[OWN_SCORE] = high[OPPONENT_SCORE] = score_high
    high[TARGET] = target
    return high


class Encoder:
    """Builds observation vectors for one configuration (oracle plane on or off).

    :meth:`encode` reads from the engine state only the seat's own hand, the discard pile, the stock
    size, the phase, the player to move, the dealer and the knock limit; with ``oracle`` also the
    opponent's hand. Everything else comes from :class:`Knowledge`.
    """

    __slots__ = ("_nbits", "_nbytes", "oracle", "size")

    def __init__(self, oracle: bool = False) -> None:
        """``oracle``: append the opponent's hand as a last plane (research only, never for play)."""
        self.oracle = oracle
        self.size = ORACLE_OBS_SIZE if oracle else OBS_SIZE
        self._nbits = self.size - NUM_SCALARS
        self._nbytes = (self._nbits + 7) // 8

    def encode(
        self,
        state: HandState,
        knowledge: Knowledge,
        seat: int,
        scores: Sequence[int] | None = None,
        target: int = 0,
    ) -> np.ndarray:
        """The observation vector of ``seat`` (0 or 1): a new ``float32`` array of :attr:`size`."""
        other = 1 - seat
        hand = state.hands[seat]
        pile = state.discard_pile
        top = 1 << pile[-1] if pile else 0
        in_pile = knowledge.pile
        opp_taken = knowledge.taken[other]
        bits = (
            _PHASE_BIT[state.phase]
            | (state.player == seat) << _FLAG_TO_MOVE
            | (state.dealer == seat) << _FLAG_DEALER
            | hand << _HAND
            | top << _TOP
            | (in_pile ^ top) << _PILE
            | opp_taken << _OPP_TAKEN
            | knowledge.discarded[other] << _OPP_DISCARDED
            | knowledge.passed[other] << _OPP_PASSED
            | knowledge.taken[seat] << _OWN_TAKEN
            | knowledge.discarded[seat] << _OWN_DISCARDED
            | knowledge.passed[seat] << _OWN_PASSED
            | (FULL_DECK ^ (hand | in_pile | opp_taken)) << _UNSEEN
        )
        if self.oracle:
            bits |= state.hands[other] << _ORACLE
        out = np.empty(self.size, dtype=np.float32)
        out[NUM_SCALARS:] = np.unpackbits(
            np.frombuffer(bits.to_bytes(self._nbytes, "little"), dtype=np.uint8),
            count=self._nbits,
            bitorder="little",
        )
        out[STOCK_SIZE] = len(state.stock)
        out[KNOCK_LIMIT] = state.knock_limit
        if scores is None:
            out[OWN_SCORE] = out[OPPONENT_SCORE] = out[TARGET] = 0.0
        else:
            out[OWN_SCORE] = scores[seat]
            out[OPPONENT_SCORE] = scores[other]
            out[TARGET] = target
        return out


class Tracker:
    """Both seats' observation vectors of the current hand, kept up to date action by action.

    The fast path of :meth:`Encoder.encode`: each action rewrites the few entries it changes (a
    dozen at most), so that observing is one array copy. :meth:`deal` and :meth:`refresh` build the
    vectors with :class:`Encoder` itself, and ``tests/ginenv/test_observation.py`` checks that the
    two agree at every step of many random hands and matches. It owns the hand's :class:`Knowledge`.
    """

    __slots__ = ("_encoder", "_phase", "_player", "_vectors", "knowledge")

    def __init__(self, oracle: bool = False) -> None:
        """An empty tracker; call :meth:`deal` before anything else."""
        self._encoder = Encoder(oracle)
        self.knowledge = Knowledge(0)
        self._vectors: list[np.ndarray] = []
        self._phase = Phase.OVER
        self._player = 0

    @property
    def oracle(self) -> bool:
        """Whether the vectors carry the opponent's hand (oracle plane)."""
        return self._encoder.oracle

    def deal(self, state: HandState, scores: Sequence[int] | None = None, target: int = 0) -> None:
        """Start tracking a freshly dealt hand (no action applied yet)."""
        self.knowledge = Knowledge(state.upcard)
        self.refresh(state, scores, target)

    def refresh(self, state: HandState, scores: Sequence[int] | None = None, target: int = 0) -> None:
        """Rebuild both vectors from scratch (at a deal, at the end of a hand, after new scores)."""
        encode = self._encoder.encode
        self._vectors = [
            encode(state, self.knowledge, 0, scores, target),
            encode(state, self.knowledge, 1, scores, target),
        ]
        self._phase = state.phase
        self._player = state.player

    def observe(self, seat: int) -> np.ndarray:
        """A fresh copy of ``seat``'s observation vector."""
        return self._vectors[seat].copy()

    def record(self, state: HandState, player: int, action: int, top: int, hand_before: int) -> None:
        """Note an action that did not end the hand; ``state`` is the hand *after* it.

        ``top`` is the top discard before the action (-1 if none) and ``hand_before`` the mover's
        cards before it (the env reads both before stepping the engine).
        """
        self.knowledge.record(player, action, top)
        me = self._vectors[player]
        other = self._vectors[1 - player]
        oracle = self._encoder.oracle
        if action >= DISCARD_BASE:
            card = action - KNOCK_BASE if action >= KNOCK_BASE else action - DISCARD_BASE
            me[_V_HAND + card] = 0.0
            me[_V_OWN_DISCARDED + card] = 1.0
            me[_V_OWN_TAKEN + card] = 0.0
            other[_V_OPP_DISCARDED + card] = 1.0
            other[_V_OPP_TAKEN + card] = 0.0
            other[_V_UNSEEN + card] = 0.0
            if oracle:
                other[_V_ORACLE + card] = 0.0
            for vec in (me, other):
                if top >= 0:
                    vec[_V_TOP + top] = 0.0
                    vec[_V_PILE + top] = 1.0
                vec[_V_TOP + card] = 1.0
        elif action == DRAW_STOCK:
            card = (state.hands[player] ^ hand_before).bit_length() - 1
            me[_V_HAND + card] = 1.0
            me[_V_UNSEEN + card] = 0.0
            if oracle:
                other[_V_ORACLE + card] = 1.0
            if top >= 0:
                me[_V_OWN_PASSED + top] = 1.0
                other[_V_OPP_PASSED + top] = 1.0
            me[STOCK_SIZE] = other[STOCK_SIZE] = len(state.stock)
        elif action == DRAW_DISCARD:
            me[_V_HAND + top] = 1.0
            me[_V_OWN_TAKEN + top] = 1.0
            other[_V_OPP_TAKEN + top] = 1.0
            if oracle:
                other[_V_ORACLE + top] = 1.0
            pile = state.discard_pile
            for vec in (me, other):
                vec[_V_TOP + top] = 0.0
                if pile:
                    vec[_V_TOP + pile[-1]] = 1.0
                    vec[_V_PILE + pile[-1]] = 0.0
        elif action == PASS:
            me[_V_OWN_PASSED + top] = 1.0
            other[_V_OPP_PASSED + top] = 1.0
        phase = state.phase
        if phase != self._phase:
            old = PHASE_BASE + self._phase
            me[old] = other[old] = 0.0
            me[PHASE_BASE + phase] = other[PHASE_BASE + phase] = 1.0
            self._phase = phase
        if state.player != self._player:
            self._player = state.player
            self._vectors[self._player][TO_MOVE] = 1.0
            self._vectors[1 - self._player][TO_MOVE] = 0.0


def encode(
    state: HandState,
    knowledge: Knowledge,
    seat: int,
    scores: Sequence[int] | None = None,
    target: int = 0,
    oracle: bool = False,
) -> np.ndarray:
    """One-off form of :meth:`Encoder.encode` (the env keeps an :class:`Encoder`)."""
    return Encoder(oracle).encode(state, knowledge, seat, scores, target)


@dataclass(frozen=True)
class SeatView:
    """An observation vector read back: scalars as ints, planes as card bitmasks (``ginenv.cards``)."""

    stock_size: int
    knock_limit: int
    own_score: int
    opponent_score: int
    target: int
    phase: Phase
    to_move: bool
    is_dealer: bool
    hand: int
    top: int | None
    pile: int
    opponent_taken: int
    opponent_discarded: int
    opponent_passed: int
    own_taken: int
    own_discarded: int
    own_passed: int
    unseen: int
    #: The opponent's hand in oracle mode, else ``None``.
    opponent_hand: int | None = None

    @property
    def discard_pile(self) -> int:
        """Every card of the discard pile (top included)."""
        return self.pile | (1 << self.top if self.top is not None else 0)

    def cards(self, plane: str) -> list[int]:
        """Card ids of a plane (``"hand"``, ``"opponent_taken"``, ...), ascending."""
        value = getattr(self, plane)
        if plane == "top":
            return [] if value is None else [value]
        return cards_of(value or 0)


def decode(observation: np.ndarray) -> SeatView:
    """Read an observation vector (or the ``"observation"`` entry of the dict) back as a :class:`SeatView`."""
    vec = np.asarray(observation)
    if vec.ndim != 1 or vec.shape[0] not in (OBS_SIZE, ORACLE_OBS_SIZE):
        raise ValueError(
            f"an observation vector has {OBS_SIZE} entries ({ORACLE_OBS_SIZE} with the oracle plane), "
            f"got shape {vec.shape}"
        )
    packed = np.packbits(vec[NUM_SCALARS:].astype(np.uint8), bitorder="little")
    bits = int.from_bytes(packed.tobytes(), "little")

    def plane(offset: int) -> int:
        return bits >> offset & FULL_DECK

    phase = next((p for p in Phase if bits >> p & 1), Phase.OVER)
    top_mask = plane(_TOP)
    return SeatView(
        stock_size=int(vec[STOCK_SIZE]),
        knock_limit=int(vec[KNOCK_LIMIT]),
        own_score=int(vec[OWN_SCORE]),
        opponent_score=int(vec[OPPONENT_SCORE]),
        target=int(vec[TARGET]),
        phase=phase,
        to_move=bool(bits >> _FLAG_TO_MOVE & 1),
        is_dealer=bool(bits >> _FLAG_DEALER & 1),
        hand=plane(_HAND),
        top=top_mask.bit_length() - 1 if top_mask else None,
        pile=plane(_PILE),
        opponent_taken=plane(_OPP_TAKEN),
        opponent_discarded=plane(_OPP_DISCARDED),
        opponent_passed=plane(_OPP_PASSED),
        own_taken=plane(_OWN_TAKEN),
        own_discarded=plane(_OWN_DISCARDED),
        own_passed=plane(_OWN_PASSED),
        unseen=plane(_UNSEEN),
        opponent_hand=plane(_ORACLE) if vec.shape[0] == ORACLE_OBS_SIZE else None,
    )


# ---------------------------------------------------------------------------- full state

#: Scalar entries of the full state vector, in index order.
STATE_SCALARS = ("stock_size", "knock_limit", "score_0", "score_1", "target", "draws", "turn_limit")
STATE_PHASE_BASE = len(STATE_SCALARS)
#: One-hot of the player to move (``STATE_PLAYER_BASE + seat``) and of the dealer.
STATE_PLAYER_BASE = STATE_PHASE_BASE + NUM_PHASES
STATE_DEALER_BASE = STATE_PLAYER_BASE + 2
#: Card planes of the full state, in order (the last two hold positions, not 0/1).
STATE_PLANES = (
    "hand_0",
    "hand_1",
    "top",
    "pile",
    "taken_0",
    "taken_1",
    "discarded_0",
    "discarded_1",
    "passed_0",
    "passed_1",
    "banned",
    "stock_order",
    "pile_order",
)
STATE_PLANE_BASE = STATE_DEALER_BASE + 2
#: Length of the full state vector.
STATE_SIZE = STATE_PLANE_BASE + len(STATE_PLANES) * NUM_CARDS
# The most cards the discard pile can hold: all but the two 10-card hands.
_MAX_PILE = NUM_CARDS - 2 * HAND_SIZE
# The 0/1 planes are packed from bit 0 (the phase one-hot) up to the order planes.
_STATE_BITS = STATE_PLANE_BASE + (len(STATE_PLANES) - 2) * NUM_CARDS - STATE_PHASE_BASE
_STATE_BYTES = (_STATE_BITS + 7) // 8


def state_slice(name: str) -> slice:
    """The slice of the full state vector holding plane ``name`` (one of :data:`STATE_PLANES`)."""
    try:
        k = STATE_PLANES.index(name)
    except ValueError:
        raise KeyError(f"unknown state plane {name!r}; planes: {', '.join(STATE_PLANES)}") from None
    start = STATE_PLANE_BASE + k * NUM_CARDS
    return slice(start, start + NUM_CARDS)


_STOCK_ORDER = state_slice("stock_order").start
_PILE_ORDER = state_slice("pile_order").start


def state_high(knock_limit: int, score_high: int, target: int, turn_limit: int) -> np.ndarray:
    """Upper bounds of the full state's entries (the ``high`` of the env's ``state_space``; lows are 0)."""
    high = np.ones(STATE_SIZE, dtype=np.float32)
    high[0] = MAX_STOCK
    high[1] = knock_limit
    high[2] = high[3] = score_high
    high[4] = target
    high[5] = high[6] = turn_limit
    high[_STOCK_ORDER : _STOCK_ORDER + NUM_CARDS] = MAX_STOCK
    high[_PILE_ORDER : _PILE_ORDER + NUM_CARDS] = _MAX_PILE
    return high


def encode_state(
    state: HandState, knowledge: Knowledge, scores: Sequence[int] | None = None, target: int = 0
) -> np.ndarray:
    """The full state vector of a hand (layout in the module docstring): a new ``float32`` array."""
    pile = state.discard_pile
    top = 1 << pile[-1] if pile else 0
    planes = (
        state.hands[0],
        state.hands[1],
        top,
        knowledge.pile ^ top,
        knowledge.taken[0],
        knowledge.taken[1],
        knowledge.discarded[0],
        knowledge.discarded[1],
        knowledge.passed[0],
        knowledge.passed[1],
        1 << state.banned if state.banned >= 0 else 0,
    )
    bits = 1 << state.phase | 1 << (NUM_PHASES + state.player) | 1 << (NUM_PHASES + 2 + state.dealer)
    offset = STATE_PLANE_BASE - STATE_PHASE_BASE
    for plane in planes:
        bits |= plane << offset
        offset += NUM_CARDS
    out = np.zeros(STATE_SIZE, dtype=np.float32)
    out[STATE_PHASE_BASE:_STOCK_ORDER] = np.unpackbits(
        np.frombuffer(bits.to_bytes(_STATE_BYTES, "little"), dtype=np.uint8),
        count=_STATE_BITS,
        bitorder="little",
    )
    stock = state.stock
    out[0] = len(stock)
    out[1] = state.knock_limit
    if scores is not None:
        out[2], out[3] = scores[0], scores[1]
        out[4] = target
    out[5] = state.draws
    out[6] = state.turn_limit
    # The stock is kept reversed (the next card drawn is last): position 1 is stock[-1].
    n = len(stock)
    for i, card in enumerate(stock):
        out[_STOCK_ORDER + card] = n - i
    for i, card in enumerate(pile):
        out[_PILE_ORDER + card] = i + 1
    return out
