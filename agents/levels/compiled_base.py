"""The base of the heuristic levels compiled over the hand record: their turn, generator and order.

The compiled form of a heuristic level (:mod:`.easy_compiled`, :mod:`.normal_compiled`,
:mod:`.hard_compiled`, :mod:`.expert_compiled`) reads a row of the hand record
(:mod:`ginenv.kernels.hand`) as the seat to move sees it, through the core's accessors only, and
returns the action its Python level would choose from that seat's observation. What they share is
here, as :mod:`.level_base` holds what the Python levels share:

* **the turn** (:func:`level_turn`, ``HeuristicAgent.act``'s dispatch compiled): what is decided
  by the turn alone (big gin whenever the rules allow it, the draw when the top card may not be
  taken), and what the level decides: whether to take the top card (else :func:`no_take`: pass
  the upcard or draw from the stock), or its discard;
* **the generator**: a level that draws takes a :class:`numpy.random.Generator` (the Python level's,
  bit for bit: numba's ``Generator.random`` and ``Generator.integers`` are numpy's) or None, numba's
  own generator of this thread. As an engine opponent (the compiled policies' signature has no
  generator) it seeds that one from the seat's view (:func:`seed_by_view`),
  so the opponent is a fixed function of what its seat sees, the same on every run and thread, as
  random as the level to anyone who does not know the seed;
* **the order of cards** the levels break ties by (:func:`in_order`): the lower score, the higher
  card, the lower id;
* **the engine's moves** of a level in given slots of a :class:`ginenv.vector.VectorGinRummy` (a
  league opponent in training): :func:`engine_moves`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

from ginenv.actions import BIG_GIN, DRAW_STOCK, PASS
from ginenv.cards import NUM_CARDS
from ginenv.kernels import hand as H
from ginenv.kernels.meld_search import CARD_VALUE, popcount
from ginenv.kernels.policies import slot_rows
from ginenv.vector import VectorGinRummy

# --------------------------------------------------------------------------- the level's parameters


def defaults(level: type, *names: str) -> tuple[Any, ...]:
    """The default parameters ``names`` of the Python ``level`` class, each of its own type, as the
    compiled code reads them: numba freezes a module's global when it compiles, so after editing a
    default, delete the numba cache of the compiled level's module."""
    return tuple(type(getattr(level, n))(getattr(level, n)) for n in names)


# --------------------------------------------------------------------------- the turn


#: :func:`level_turn`'s step where the level decides whether to take the top card ...
TAKE_OR_NOT = -2
#: ... and where it decides its discard (and knock); any other step is the action itself.
DISCARD = -3


@njit(cache=True)
def no_take(s: np.ndarray, i: int) -> int:
    """The move of the seat to move in row ``i`` when it does not take the top card: pass the upcard,
    or draw from the stock."""
    return DRAW_STOCK if H.phase_of(s, i) == H.Phase.DRAW else PASS


@njit(cache=True)
def level_turn(s: np.ndarray, i: int, cfg: np.ndarray) -> tuple[int, int, int, int]:
    """``(step, top, allowed, knocks)`` of the seat to move in row ``i``: :data:`TAKE_OR_NOT` with the
    top card it may take; :data:`DISCARD` with the cards it may discard and those that may knock;
    otherwise ``step`` is the action of the turn alone: -1 for a row whose hand is over, big gin
    whenever the rules allow it, :func:`no_take` when the top card may not be taken
    (``HeuristicAgent.act``'s dispatch)."""
    phase = H.phase_of(s, i)
    if phase == H.Phase.OVER:
        return -1, -1, 0, 0
    if phase != H.Phase.DISCARD:
        top = H.top_card(s, i)
        if H.may_take_top(s, i) and top >= 0:
            return TAKE_OR_NOT, top, 0, 0
        return no_take(s, i), -1, 0, 0
    allowed, knocks, big = H.discard_options(s, i, cfg)
    if big:
        return BIG_GIN, -1, 0, 0
    return DISCARD, -1, allowed, knocks


@njit(cache=True)
def seed_by_view(s: np.ndarray, i: int) -> None:
    """Seed numba's generator of this thread by :func:`view_seed` (nothing for a hand that is over)."""
    if H.phase_of(s, i) != H.Phase.OVER:
        np.random.seed(view_seed(s, i))


def engine_moves(name: str) -> Callable[[VectorGinRummy, np.ndarray], np.ndarray]:
    """The function ``moves(venv, slots)`` giving the action of the engine's compiled policy
    ``name`` (:func:`ginenv.kernels.policies.compiled_policy`) for the seat to move in each of the
    ``slots`` (row indices, checked by :func:`ginenv.kernels.policies.slot_rows`) of ``venv``, as an
    int64 array in the order of ``slots`` (-1 where the hand is over), computed in those slots only:
    the level as a league opponent in training."""

    def moves(venv: VectorGinRummy, slots: np.ndarray) -> np.ndarray:
        rows = slot_rows(slots, venv.num_envs)
        chosen = np.zeros(venv.num_envs, dtype=np.bool_)
        chosen[rows] = True
        return venv.policy_actions(name, chosen)[rows]

    return moves


# --------------------------------------------------------------------------- random numbers


@njit(cache=True)
def uniforms(rng: Any, shape: Any) -> np.ndarray:
    """Uniforms in [0, 1) of ``shape`` from ``rng`` (a numpy Generator), or from numba's own
    generator of this thread when ``rng`` is None (numba compiles only the branch of the type)."""
    if rng is None:
        return np.random.random(shape)
    return rng.random(shape)


@njit(cache=True)
def draw_index(rng: Any, n: int) -> int:
    """A uniform integer in ``0 .. n - 1`` from ``rng`` (a numpy Generator: ``rng.integers(n)``, bit
    for bit), or from numba's own generator of this thread when ``rng`` is None."""
    if rng is None:
        return np.random.randint(0, n)
    return rng.integers(0, n)


@njit(cache=True)
def _mix(h: int, x: int) -> int:
    # splitmix64's finaliser over the running hash and one more word (int64 arithmetic wraps).
    z = (h ^ x) * -7046029254386353131  # 0x9E3779B97F4A7C15 as an int64
    z = (z ^ ((z >> 30) & 0x3FFFFFFFF)) * -4658895280553007687
    z = (z ^ ((z >> 27) & 0x1FFFFFFFFF)) * -7723592293110705685
    return z ^ ((z >> 31) & 0x1FFFFFFFF)


@njit(cache=True)
def view_seed(s: np.ndarray, i: int) -> int:
    """A 32-bit seed made of what the seat to move in row ``i`` sees: its hand, the pile, both seats'
    public cards, the stock's size, the phase and the card just taken."""
    p = H.mover(s, i)
    h = 0x6D617374  # "mast"
    h = _mix(h, H.hand_of(s, i, p))
    h = _mix(h, H.pile_mask(s, i))
    h = _mix(h, H.top_card(s, i))
    for seat in range(2):
        taken, discarded, passed = H.public_cards(s, i, (p + seat) % 2)
        h = _mix(h, taken)
        h = _mix(h, discarded)
        h = _mix(h, passed)
    h = _mix(h, H.count_stock(s, i) * 16 + H.phase_of(s, i))
    h = _mix(h, H.just_taken(s, i) + 1)
    return h & 0xFFFFFFFF


@njit(cache=True)
def card_ids(mask: int) -> np.ndarray:
    """The card ids of ``mask``, ascending (int64)."""
    out = np.empty(popcount(mask), dtype=np.int64)
    n = 0
    for c in range(NUM_CARDS):
        if (mask >> c) & 1:
            out[n] = c
            n += 1
    return out


# --------------------------------------------------------------------------- the order of cards


@njit(cache=True)
def before(values: np.ndarray, a: int, b: int) -> bool:
    """Whether card ``a`` comes before ``b`` in the levels' order: the lower score in ``values``,
    then the higher card, then the lower id."""
    if values[a] != values[b]:
        return values[a] < values[b]
    if CARD_VALUE[a] != CARD_VALUE[b]:
        return CARD_VALUE[a] > CARD_VALUE[b]
    return a < b


@njit(cache=True)
def in_order(values: np.ndarray, mask: int) -> np.ndarray:
    """The cards of ``mask`` in the levels' order (:func:`before`; an insertion sort: at most 11 cards)."""
    out = card_ids(mask)
    for a in range(1, out.size):
        c = out[a]
        b = a - 1
        while b >= 0 and before(values, c, out[b]):
            out[b + 1] = out[b]
            b -= 1
        out[b + 1] = c
    return out


__all__ = [
    "DISCARD",
    "TAKE_OR_NOT",
    "before",
    "card_ids",
    "defaults",
    "draw_index",
    "engine_moves",
    "in_order",
    "level_turn",
    "no_take",
    "seed_by_view",
    "uniforms",
    "view_seed",
]
