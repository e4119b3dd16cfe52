"""The compiled policies, in one table: uniformly random, greedy, and master's rollout policy.

Each policy reads a row of the hand record (:mod:`ginenv.kernels.hand`) as the seat to move may see
it and returns an action id; :func:`policy_action` picks one by its code in :data:`POLICIES`. The
batched engine's opponents (:mod:`ginenv.vector`), master's search (:mod:`ginenv.agents.levels.master`)
and the tests all call these, so each policy is written once:

* ``random``: a uniformly random legal action, counted from bitmasks (no 108-entry mask).
* ``greedy``: the ``greedy`` level (:mod:`ginenv.agents.baselines.greedy`) move for move: take the
  top discard when it goes into a meld and lowers the deadwood, discard the card leaving the least
  deadwood (the higher card on ties, then the lowest id), after a take only a card that keeps the
  deadwood lower than before (:func:`useful_discards`), knock whenever the best discard allows it,
  big gin whenever legal.
* ``rollout``: master's playout policy (:func:`rollout_action`): the greedy take, the least-deadwood
  discard with optional costs for feeding the opponent's melds and for breaking meld partners
  (:func:`policy_discard_safe`), and a knock unless a low hand waits for gin (:func:`policy_knocks`).
  It may read the opponent's hand in the row: in master's worlds that hand is sampled, never real.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.cards import NUM_CARDS
from ginenv.kernels import hand as H
from ginenv.kernels.melds import CARD_VALUE, lowest_card, meldable, min_deadwood, popcount

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
        if s[i, H.FORCED] or rng.random() < 0.5:
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
def greedy_action(s: np.ndarray, i: int, cfg: np.ndarray) -> int:
    """The greedy level's action in row ``i`` (exactly ``GreedyAgent.act``)."""
    phase = s[i, H.PHASE]
    hand = s[i, H.HAND0 + s[i, H.PLAYER]]
    if phase != H.Phase.DISCARD:
        can_take = phase != H.Phase.DRAW or not s[i, H.FORCED]
        top = H.top_card(s, i)
        if can_take and top >= 0 and greedy_takes(hand, top):
            return DRAW_DISCARD
        return PASS if phase != H.Phase.DRAW else DRAW_STOCK
    allowed, knocks, big = H.discard_options(s, i, cfg)
    if big:
        return BIG_GIN
    taken = s[i, H.JUST_TOOK]
    if taken >= 0:
        useful = useful_discards(hand, taken) & allowed
        if useful:
            allowed = useful
    card = greedy_discard(hand, allowed)
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


# --------------------------------------------------------------------------- master's rollouts


def _partner_table() -> np.ndarray:
    """``PARTNERS[c]``: the cards that can share a meld with ``c`` (its rank, and its suit within two
    ranks), as masks."""
    out = np.zeros(NUM_CARDS, dtype=np.int64)
    for c in range(NUM_CARDS):
        r, s = c % 13, c // 13
        mask = sum(1 << (t * 13 + r) for t in range(4) if t != s)
        mask |= sum(1 << (s * 13 + r + d) for d in (-2, -1, 1, 2) if 0 <= r + d < 13)
        out[c] = mask
    return out


#: Meld partners of each card (:func:`_partner_table`).
PARTNERS = _partner_table()


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
            score += partner_cost * popcount(hand & PARTNERS[c])
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
    p = s[i, H.PLAYER]
    hand = s[i, H.HAND0 + p]
    discard_taken = cfg[H.DISCARD_TAKEN] != 0
    if s[i, H.PHASE] == H.Phase.DRAW:
        top = H.top_card(s, i)
        if not s[i, H.FORCED] and top >= 0 and policy_takes(hand, top, discard_taken):
            return DRAW_DISCARD
        return DRAW_STOCK
    banned = s[i, H.BANNED]
    card, left = policy_discard(hand, banned)
    if policy_knocks(left, s[i, H.KNOCK_LIMIT_COL], trap, H.count_stock(s, i), trap_stock):
        return KNOCK_BASE + card
    if feed_cost > 0.0 or partner_cost > 0.0:
        card, left = policy_discard_safe(hand, banned, s[i, H.HAND0 + 1 - p], feed_cost, partner_cost)
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
        trap = traps[0] if s[i, H.PLAYER] == seat else traps[1]
        if H.apply(s, i, rollout_action(s, i, cfg, trap, trap_stock, feed_cost, partner_cost), cfg):
            break
    winner = s[i, H.WINNER]
    if winner < 0:
        return 0
    return s[i, H.POINTS] if winner == seat else -s[i, H.POINTS]


__all__ = [
    "GREEDY_POLICY",
    "PARTNERS",
    "POLICIES",
    "RANDOM_POLICY",
    "greedy_action",
    "greedy_discard",
    "greedy_takes",
    "pick_bit",
    "play_out",
    "policy_action",
    "policy_discard",
    "policy_discard_safe",
    "policy_knocks",
    "policy_takes",
    "random_legal",
    "rollout",
    "rollout_action",
    "useful_discards",
]
