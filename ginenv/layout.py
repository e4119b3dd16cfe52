"""Where each entry of the observation and full-state vectors lies: the layout, and nothing else.

The compiled encoder (:func:`ginenv.kernels.hand.encode`) writes these vectors and
:func:`ginenv.observation.decode` reads them back; both take every index from here, so the layout is
written once. What a seat may see, and why, is :mod:`ginenv.observation`'s to say.

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
"""

from __future__ import annotations

import numpy as np

from ginenv.cards import NUM_CARDS

#: Cards dealt to each player.
HAND_SIZE = 10
#: Phases of a hand (``ginenv.engine.Phase``: two upcard offers, draw, discard, over).
NUM_PHASES = 5

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


def observation_high(knock_limit: int, score_high: int, target: int, oracle: bool) -> np.ndarray:
    """Upper bounds of the vector's entries (the ``high`` of its ``Box``; every low is 0)."""
    high = np.ones(ORACLE_OBS_SIZE if oracle else OBS_SIZE, dtype=np.float32)
    high[STOCK_SIZE] = MAX_STOCK
    high[KNOCK_LIMIT] = knock_limit
    high[OWN_SCORE] = high[OPPONENT_SCORE] = score_high
    high[TARGET] = target
    return high


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
MAX_PILE = NUM_CARDS - 2 * HAND_SIZE
# The 0/1 planes are packed from bit 0 (the phase one-hot) up to the order planes.
STATE_BITS = STATE_PLANE_BASE + (len(STATE_PLANES) - 2) * NUM_CARDS - STATE_PHASE_BASE
STATE_BYTES = (STATE_BITS + 7) // 8


def state_slice(name: str) -> slice:
    """The slice of the full state vector holding plane ``name`` (one of :data:`STATE_PLANES`)."""
    try:
        k = STATE_PLANES.index(name)
    except ValueError:
        raise KeyError(f"unknown state plane {name!r}; planes: {', '.join(STATE_PLANES)}") from None
    start = STATE_PLANE_BASE + k * NUM_CARDS
    return slice(start, start + NUM_CARDS)


STOCK_ORDER = state_slice("stock_order").start
PILE_ORDER = state_slice("pile_order").start


def state_high(knock_limit: int, score_high: int, target: int, turn_limit: int) -> np.ndarray:
    """Upper bounds of the full state's entries (the ``high`` of the env's ``state_space``; lows are 0)."""
    high = np.ones(STATE_SIZE, dtype=np.float32)
    high[0] = MAX_STOCK
    high[1] = knock_limit
    high[2] = high[3] = score_high
    high[4] = target
    high[5] = high[6] = turn_limit
    high[STOCK_ORDER : STOCK_ORDER + NUM_CARDS] = MAX_STOCK
    high[PILE_ORDER : PILE_ORDER + NUM_CARDS] = MAX_PILE
    return high
