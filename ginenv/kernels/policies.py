"""The compiled policies, in one table: uniformly random and greedy.

Each policy reads a row of the hand record (:mod:`ginenv.kernels.hand`) as the seat to move may see
it and returns an action id; :func:`policy_action` picks one by its code in :data:`POLICIES`. The
batched engine's opponents and playouts (:mod:`ginenv.vector`), the ``greedy`` level and the tests
all call these, so each policy is written once:

* ``random``: a uniformly random legal action, counted from bitmasks (no 108-entry mask).
* ``greedy``: the ``greedy`` level (:mod:`ginenv.agents.baselines.greedy`) move for move: take the
  top discard when it goes into a meld and lowers the deadwood, discard the card leaving the least
  deadwood (the higher card on ties, then the lowest id), after a take only a card that keeps the
  deadwood lower than before (:func:`useful_discards`), knock whenever the best discard allows it,
  big gin whenever legal.

Master's rollout policy is master's strategy, not the game's: it lives with master
(:mod:`ginenv.agents.levels.master_rollout`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.kernels import hand as H
from ginenv.kernels.melds import CARD_VALUE, lowest_card, min_deadwood, popcount

#: Policy names by code (``policy_action``'s ``policy``).
POLICIES = ("random", "greedy")
RANDOM_POLICY, GREEDY_POLICY = 0, 1


# --------------------------------------------------------------------------- random


@njit(cache=True)
def pick_bit(mask: int, k: int) -> int:
    """The card id of the ``k``-th (from 0) card of ``mask``."""
    for _ in range(k):
        mask &= mask - 1
    return lowest_card(mask)


@njit(cache=True)
def random_legal(s: np.ndarray, i: int, cfg: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random legal action of row ``i``."""
    phase = s[i, H.PHASE]
    if phase == H.Phase.DISCARD:
        allowed, knocks, can_big_gin = H.discard_options(s, i, cfg)
        big = 1 if can_big_gin else 0
        n_discards = popcount(allowed)
        n_knocks = popcount(knocks)
        # rng.random() is a third of rng.integers()' cost in numba; 53 random bits spread evenly.
        r = int(rng.random() * (n_discards + n_knocks + big))
        if r < n_discards:
            return DISCARD_BASE + pick_bit(allowed, r)
        if r < n_discards + n_knocks:
            return KNOCK_BASE + pick_bit(knocks, r - n_discards)
        return BIG_GIN
    if phase == H.Phase.DRAW:
        if not H.may_take_top(s, i) or rng.random() < 0.5:
            return DRAW_STOCK
        return DRAW_DISCARD
    return DRAW_DISCARD if rng.random() < 0.5 else PASS


# --------------------------------------------------------------------------- greedy


@njit(cache=True)
def greedy_discard(hand: int, allowed: int) -> int:
    """The allowed card whose discard leaves the least deadwood, the highest-valued one on ties,
    then the lowest card id (``GreedyAgent``'s discard)."""
    best = -1
    best_dw = 1 << 30
    rest = allowed
    while rest:
        low = rest & -rest
        rest ^= low
        c = lowest_card(low)
        dw = min_deadwood(hand ^ low)
        if dw < best_dw or (dw == best_dw and CARD_VALUE[c] > CARD_VALUE[best]):
            best = c
            best_dw = dw
    return best


@njit(cache=True)
def greedy_takes(hand: int, card: int) -> bool:
    """``GreedyAgent``'s take: after taking ``card`` and the best discard among the other cards,
    ``card`` is in a meld and the deadwood is lower than before."""
    bit = 1 << card
    kept = hand | bit
    kept ^= 1 << greedy_discard(kept, hand)
    after = min_deadwood(kept)
    in_meld = after < min_deadwood(kept ^ bit) + CARD_VALUE[card]
    return in_meld and after < min_deadwood(hand)


@njit(cache=True)
def useful_discards(grown: int, taken: int) -> int:
    """After taking ``taken`` (``grown`` holds it): the other cards whose discard leaves less deadwood
    than the hand before the take. Only these may follow a take, so no level cycles cards through
    the pile (``ginenv.agents.levels.base.TakeGuard``)."""
    before = min_deadwood(grown ^ (1 << taken))
    out = 0
    rest = grown & ~(1 << taken)
    while rest:
        low = rest & -rest
        rest ^= low
        if min_deadwood(grown ^ low) < before:
            out |= low
    return out


@njit(cache=True)
def take_guarded(hand: int, taken: int, allowed: int) -> int:
    """The discards allowed after a take of ``taken`` (-1: no take): the :func:`useful_discards`
    among ``allowed`` when there are some, else ``allowed`` (``TakeGuard.useful_only``)."""
    if taken >= 0:
        useful = useful_discards(hand, taken) & allowed
        if useful:
            return useful
    return allowed


@njit(cache=True)
def greedy_action(s: np.ndarray, i: int, cfg: np.ndarray) -> int:
    """The greedy level's action in row ``i`` (exactly ``GreedyAgent.act``)."""
    phase = s[i, H.PHASE]
    hand = s[i, H.HAND0 + s[i, H.PLAYER]]
    if phase != H.Phase.DISCARD:
        top = H.top_card(s, i)
        if H.may_take_top(s, i) and top >= 0 and greedy_takes(hand, top):
            return DRAW_DISCARD
        return PASS if phase != H.Phase.DRAW else DRAW_STOCK
    allowed, knocks, big = H.discard_options(s, i, cfg)
    if big:
        return BIG_GIN
    card = greedy_discard(hand, take_guarded(hand, s[i, H.JUST_TOOK], allowed))
    if knocks >> card & 1:
        return KNOCK_BASE + card
    return DISCARD_BASE + card


@njit(cache=True)
def policy_action(policy: int, s: np.ndarray, i: int, cfg: np.ndarray, rng: np.random.Generator) -> int:
    """The action of policy ``policy`` (a :data:`POLICIES` index) for the seat to move in row ``i``."""
    if policy == GREEDY_POLICY:
        return greedy_action(s, i, cfg)
    return random_legal(s, i, cfg, rng)


@njit(cache=True)
def play_out(policy: int, s: np.ndarray, i: int, cfg: np.ndarray, rng: np.random.Generator) -> None:
    """Play row ``i`` to the end of its hand with ``policy`` for both seats."""
    while not H.apply(s, i, policy_action(policy, s, i, cfg, rng), cfg):
        pass


__all__ = [
    "GREEDY_POLICY",
    "POLICIES",
    "RANDOM_POLICY",
    "greedy_action",
    "greedy_discard",
    "greedy_takes",
    "pick_bit",
    "play_out",
    "policy_action",
    "random_legal",
    "take_guarded",
    "useful_discards",
]
