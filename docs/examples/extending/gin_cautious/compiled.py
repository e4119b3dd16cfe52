"""``cautious`` compiled for the batched engine: the same decisions as :class:`CautiousAgent`, read
from the hand record instead of the observation.

A compiled opponent is a numba function ``(state, i, cfg) -> action`` over row ``i`` of the hand
records ``state`` and the rule array ``cfg``. It reads the row only through
:mod:`ginenv.kernels.hand`'s functions (``phase_of``, ``discard_options``, ...), and only what the
seat to move may know: the engine plays it for that seat, without an observation.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.cards import CARD_VALUES
from ginenv.kernels import hand as H

VALUES = np.array(CARD_VALUES, dtype=np.int64)  # numba reads a global array as a constant


@njit(cache=True)
def highest(cards: int, by_points: bool) -> int:
    """The card of ``cards`` (a bitmask, card ``c`` is bit ``c``) with the highest id, or with the
    most points and then the highest id."""
    best = -1
    for c in range(VALUES.size):
        if cards >> c & 1 and (best < 0 or not by_points or VALUES[c] >= VALUES[best]):
            best = c
    return best


@njit(cache=True)
def cautious_action(state: np.ndarray, i: int, cfg: np.ndarray) -> int:
    """The action of ``cautious`` for the seat to move in row ``i``."""
    phase = H.phase_of(state, i)
    if phase != H.Phase.DISCARD:
        return DRAW_STOCK if phase == H.Phase.DRAW else PASS
    allowed, knocks, big_gin = H.discard_options(state, i, cfg)
    if big_gin:
        return BIG_GIN
    if knocks:
        return KNOCK_BASE + highest(knocks, False)
    return DISCARD_BASE + highest(allowed, True)
