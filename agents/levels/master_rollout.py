"""master's rollout strategy: the compiled policy both seats play master's worlds out with.

:mod:`ginenv.agents.levels.master` scores the options of a decision by playing each one out to the
end of the hand in hundreds of sampled worlds. Both seats of a world are played by this policy
(:func:`rollout_action`), fast enough for thousands of play-outs a decision:

* **draw**: take the top discard when it goes into a meld and lowers the deadwood
  (:func:`policy_takes`), otherwise draw from the stock;
* **knock** as soon as the least-deadwood discard allows it, unless a low hand waits for gin or an
  undercut (the seat's *trap* deadwood, :func:`policy_knocks`);
* **discard** the card leaving the least deadwood, the higher card on ties (:func:`policy_discard`),
  or, with costs on, with ``feed_cost`` added for a card that goes into a meld with the opponent's
  hand and ``partner_cost`` per card of the hand it could share a meld with
  (:data:`ginenv.kernels.MELD_PARTNERS`, :func:`policy_discard_safe`).

The policy may read the opponent's hand in the record: in master's worlds that hand is sampled,
never real. The rules of a hand are the engine's (:func:`ginenv.kernels.hand.apply` steps every
play-out), under :func:`rollout_rules`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE
from ginenv.kernels import hand as H
from ginenv.kernels.meld_search import (
    CARD_VALUE,
    MELD_PARTNERS,
    lowest_card,
    meldable,
    min_deadwood,
    popcount,
)
from ginenv.rules import Rules

#: The turn limit of master's worlds: none (the rollout policy never cycles cards through the pile).
NO_TURN_LIMIT = 1 << 40


def rollout_rules(rules: Rules) -> np.ndarray:
    """The rule array (:func:`ginenv.kernels.hand.rules_array`) master's worlds are played under: the
    table's ``rules`` without big gin (the policy knocks its 11th card away instead) and with no turn
    limit. The knock limit of a world is its record's (the hand's, Oklahoma's included)."""
    return H.search_rules(H.rules_array(rules, NO_TURN_LIMIT), NO_TURN_LIMIT)


@njit(cache=True)
def policy_discard_safe(
    hand: int, banned: int, opp: int, feed_cost: float, partner_cost: float
) -> tuple[int, int]:
    """(card, deadwood left) of the rollout policy's discard when it does not knock: the least
    deadwood, plus ``feed_cost`` if the card goes into a meld with the opponent's hand ``opp`` (the
    world's hand), plus ``partner_cost`` for each card of the hand it could share a meld with (a
    card kept for a meld to come); then the higher card."""
    best = np.inf
    card = -1
    left = 0
    rest = hand
    while rest:
        low = rest & -rest
        rest ^= low
        c = lowest_card(low)
        if c == banned:
            continue
        v = min_deadwood(hand ^ low)
        score = float(v)
        # The costs are skipped when off: this is the rollouts' hot path.
        if feed_cost and meldable(opp | low) & low:
            score += feed_cost
        if partner_cost:
            score += partner_cost * popcount(hand & MELD_PARTNERS[c])
        if score < best or (score == best and CARD_VALUE[c] > CARD_VALUE[card]):
            best = score
            card = c
            left = v
    return card, left


@njit(cache=True)
def policy_discard(hand: int, banned: int) -> tuple[int, int]:
    """(card, deadwood left) of the rollout policy's discard: least deadwood, then the higher card
    (:func:`policy_discard_safe` with no feeding or partner costs)."""
    return policy_discard_safe(hand, banned, 0, 0.0, 0.0)


@njit(cache=True)
def policy_takes(hand: int, top: int, discard_taken: bool) -> bool:
    """The rollout policy's draw: take ``top`` when it goes into a meld and lowers the deadwood.

    ``discard_taken``: the rules let the card just taken be thrown back (``Rules.discard_taken_card``).
    Throwing ``top`` back leaves the deadwood as it was, so a take that lowers it never does.
    """
    bit = 1 << top
    grown = hand | bit
    if not meldable(grown) & bit:
        return False
    _, after = policy_discard(grown, -1 if discard_taken else top)
    return after < min_deadwood(hand)


@njit(cache=True)
def policy_knocks(left: int, limit: int, trap: int, stock_left: int, trap_stock: int) -> bool:
    """The rollout policy's knock: allowed, and not a low hand kept to trap a knock (deadwood 1 to
    ``trap`` with at least ``trap_stock`` cards in the stock waits for gin or an undercut)."""
    if left > limit:
        return False
    return left == 0 or left > trap or stock_left < trap_stock


@njit(cache=True)
def rollout_action(
    s: np.ndarray,
    i: int,
    cfg: np.ndarray,
    trap: int,
    trap_stock: int,
    feed_cost: float,
    partner_cost: float,
) -> int:
    """Master's rollout policy for the seat to move in row ``i`` (a draw or a discard phase);
    ``trap``: this seat's trap deadwood (:func:`policy_knocks`)."""
    p = H.mover(s, i)
    hand = H.hand_of(s, i, p)
    if H.phase_of(s, i) == H.Phase.DRAW:
        top = H.top_card(s, i)
        if H.may_take_top(s, i) and top >= 0 and policy_takes(hand, top, H.discard_taken(cfg)):
            return DRAW_DISCARD
        return DRAW_STOCK
    banned = H.banned_card(s, i)
    card, left = policy_discard(hand, banned)
    if policy_knocks(left, H.knock_limit_of(s, i), trap, H.count_stock(s, i), trap_stock):
        return KNOCK_BASE + card
    if feed_cost > 0.0 or partner_cost > 0.0:
        card, left = policy_discard_safe(hand, banned, H.hand_of(s, i, 1 - p), feed_cost, partner_cost)
    return DISCARD_BASE + card


@njit(cache=True)
def rollout(
    s: np.ndarray,
    i: int,
    cfg: np.ndarray,
    seat: int,
    traps: np.ndarray,
    trap_stock: int,
    feed_cost: float,
    partner_cost: float,
) -> int:
    """Play row ``i`` to the end with :func:`rollout_action` for both seats; the points for ``seat``
    (negative when the other scores, 0 for a dead or truncated hand). ``traps[0]`` is ``seat``'s
    trap deadwood, ``traps[1]`` the other's.

    Finite: a take lowers the taker's deadwood, a stock draw never raises it (the least-deadwood
    discard may be the drawn card) and uses up the stock."""
    while True:
        trap = traps[0] if H.mover(s, i) == seat else traps[1]
        if H.apply(s, i, rollout_action(s, i, cfg, trap, trap_stock, feed_cost, partner_cost), cfg):
            break
    return H.points_for(s, i, seat)


__all__ = [
    "NO_TURN_LIMIT",
    "policy_discard",
    "policy_discard_safe",
    "policy_knocks",
    "policy_takes",
    "rollout",
    "rollout_action",
    "rollout_rules",
]
