"""N hands of gin rummy in lockstep, stepped by compiled code: the batched engine.

:class:`VectorGinRummy` owns N independent hands (slots) held in flat numpy arrays and stepped by
numba-compiled loops (``cache=True``) over the rule primitives of :mod:`ginenv.kernels`. It plays
exactly the game of :class:`ginenv.engine.HandState` (every option of :class:`ginenv.rules.Rules`,
the same turn limit and truncation) and produces exactly what ``gin_rummy_v0``'s ``observe()``
gives the seat to move, in hand mode: ``tests/ginenv/test_vector.py`` plays many random hands
through both from the same decks and actions and requires identical observations, masks, seats to
move, rewards, results and truncations at every step.

State of slot ``i``: the deck (dealing order), both hands as card bitmasks, the discard pile as a
stack plus its bitmask, the next stock position, the public card record of each seat (taken from
the pile and still held, discarded, passed over: :class:`ginenv.observation.Knowledge`), and the
phase, player to move, dealer, banned card (just taken from the pile), draws made, knock limit and
whether both players passed the upcard. Rule options travel as one small int array.

A slot whose hand ended (a knock, gin, big gin, a dead or a truncated hand) is dealt a new hand at
once from the env's generator (numpy ``default_rng(seed)``, passed into the compiled loop: a shuffled
deck, then a random dealer), and the
observation, mask and player returned are the new hand's; the ended hand's outcome is in
:attr:`VectorGinRummy.results` until the next step.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np
from numba import njit

from ginenv import kernels as K
from ginenv.actions import (
    ACTION_NAMES,
    BIG_GIN,
    DISCARD_BASE,
    DRAW_DISCARD,
    DRAW_STOCK,
    KNOCK_BASE,
    NUM_ACTIONS,
    PASS,
)
from ginenv.cards import NUM_CARDS
from ginenv.engine import DEFAULT_TURN_LIMIT, DeckError, HandState, check_turn_limit
from ginenv.observation import (
    IS_DEALER,
    KNOCK_LIMIT,
    OBS_SIZE,
    PHASE_BASE,
    PLANE_BASE,
    STOCK_SIZE,
    TO_MOVE,
    Knowledge,
)
from ginenv.rules import Rules

# Columns of the per-slot state array.
HAND0, HAND1, PILE_MASK, PILE_LEN, STOCK_POS = 0, 1, 2, 3, 4
TAKEN0, TAKEN1, DISCARDED0, DISCARDED1, PASSED0, PASSED1 = 5, 6, 7, 8, 9, 10
PHASE, PLAYER, DEALER, BANNED, DRAWS, KNOCK_LIMIT_COL, FORCED, JUST_TOOK = 11, 12, 13, 14, 15, 16, 17, 18
NUM_COLUMNS = 19

# Phases (the values of ginenv.engine.Phase).
UPCARD_NON_DEALER, UPCARD_DEALER, DRAW, DISCARD, OVER = 0, 1, 2, 3, 4

# Entries of the rule-option array.
GIN_BONUS, UNDERCUT_BONUS, BIG_GIN_BONUS, OKLAHOMA, DEAD_HAND_STOCK, DISCARD_TAKEN, TURN_LIMIT = range(7)

#: Result kinds of :attr:`VectorGinRummy.results` (``kind``): the engine's ``HandResult.kind`` names;
#: the first four are :class:`ginenv.kernels.KnockKind`'s.
RESULT_KINDS = (*K.KNOCK_KINDS, "dead", "truncated")


class HandEnd(enum.IntEnum):
    """The codes of :data:`RESULT_KINDS` (``NONE``: the hand goes on)."""

    NONE = -1
    KNOCK = K.KnockKind.KNOCK
    UNDERCUT = K.KnockKind.UNDERCUT
    GIN = K.KnockKind.GIN
    BIG_GIN = K.KnockKind.BIG_GIN
    DEAD = 4
    TRUNCATED = 5


DEAD, TRUNCATED, NO_RESULT = HandEnd.DEAD, HandEnd.TRUNCATED, HandEnd.NONE

_PLANE_HAND = PLANE_BASE
_PLANE_TOP = PLANE_BASE + NUM_CARDS
_PLANE_PILE = PLANE_BASE + 2 * NUM_CARDS
_PLANE_OPP_TAKEN = PLANE_BASE + 3 * NUM_CARDS
_PLANE_OPP_DISCARDED = PLANE_BASE + 4 * NUM_CARDS
_PLANE_OPP_PASSED = PLANE_BASE + 5 * NUM_CARDS
_PLANE_OWN_TAKEN = PLANE_BASE + 6 * NUM_CARDS
_PLANE_OWN_DISCARDED = PLANE_BASE + 7 * NUM_CARDS
_PLANE_OWN_PASSED = PLANE_BASE + 8 * NUM_CARDS
_PLANE_UNSEEN = PLANE_BASE + 9 * NUM_CARDS


class VectorError(ValueError):
    """A batch argument of the wrong size, shape or type, or an illegal action; nothing changed."""


# --------------------------------------------------------------------------- compiled game


@njit(cache=True)
def _deal(
    s: np.ndarray,
    decks: np.ndarray,
    piles: np.ndarray,
    i: int,
    deck: np.ndarray,
    dealer: int,
    cfg: np.ndarray,
) -> None:
    # Cards 0-9 to the non-dealer, 10-19 to the dealer, 20 the upcard, the stock from 21.
    non_dealer = 1 - dealer
    first = 0
    second = 0
    for k in range(10):
        first |= 1 << deck[k]
        second |= 1 << deck[10 + k]
    for k in range(52):
        decks[i, k] = deck[k]
    upcard = deck[20]
    s[i, HAND0 + non_dealer] = first
    s[i, HAND0 + dealer] = second
    piles[i, 0] = upcard
    s[i, PILE_LEN] = 1
    s[i, PILE_MASK] = np.int64(1) << upcard
    s[i, STOCK_POS] = 21
    for c in range(TAKEN0, PASSED1 + 1):
        s[i, c] = 0
    s[i, PHASE] = UPCARD_NON_DEALER
    s[i, PLAYER] = non_dealer
    s[i, DEALER] = dealer
    s[i, BANNED] = -1
    s[i, DRAWS] = 0
    s[i, FORCED] = 0
    s[i, JUST_TOOK] = -1
    if cfg[OKLAHOMA]:
        # Oklahoma: the upcard's value is the knock limit; an ace means gin only.
        s[i, KNOCK_LIMIT_COL] = 0 if upcard % 13 == 0 else K.CARD_VALUE[upcard]
    else:
        s[i, KNOCK_LIMIT_COL] = cfg[-1]


@njit(cache=True)
def _discard_options(s: np.ndarray, i: int, cfg: np.ndarray) -> tuple[int, int, bool]:
    """The discard phase's legal moves in slot ``i``: (cards that may be discarded, those whose
    discard may knock, whether big gin is legal)."""
    hand = s[i, HAND0 + s[i, PLAYER]]
    allowed = hand
    if s[i, BANNED] >= 0:
        allowed &= ~(1 << s[i, BANNED])
    knocks = K.knock_discards(hand, s[i, KNOCK_LIMIT_COL]) & allowed
    return allowed, knocks, cfg[BIG_GIN_BONUS] >= 0 and K.min_deadwood(hand) == 0


@njit(cache=True)
def _legal(s: np.ndarray, i: int, out: np.ndarray, cfg: np.ndarray) -> None:
    """The legal-action mask of slot ``i`` (written into ``out``, 108 int8)."""
    out[:] = 0
    phase = s[i, PHASE]
    if phase == DISCARD:
        allowed, knocks, big = _discard_options(s, i, cfg)
        rest = allowed
        while rest:
            low = rest & -rest
            c = K.lowest_card(low)
            out[DISCARD_BASE + c] = 1
            if knocks & low:
                out[KNOCK_BASE + c] = 1
            rest ^= low
        if big:
            out[BIG_GIN] = 1
    elif phase == DRAW:
        out[DRAW_STOCK] = 1
        if not s[i, FORCED]:
            out[DRAW_DISCARD] = 1
    elif phase != OVER:
        out[DRAW_DISCARD] = 1
        out[PASS] = 1


@njit(cache=True)
def _set_plane(out: np.ndarray, base: int, mask: int) -> None:
    while mask:
        low = mask & -mask
        out[base + K.lowest_card(low)] = 1.0
        mask ^= low


@njit(cache=True)
def _encode(s: np.ndarray, piles: np.ndarray, i: int, seat: int, out: np.ndarray) -> None:
    """What ``gin_rummy_v0``'s ``observe()`` gives ``seat`` of slot ``i`` (hand mode)."""
    out[:] = 0.0
    other = 1 - seat
    out[STOCK_SIZE] = 52 - s[i, STOCK_POS]
    out[KNOCK_LIMIT] = s[i, KNOCK_LIMIT_COL]
    out[PHASE_BASE + s[i, PHASE]] = 1.0
    if s[i, PLAYER] == seat:
        out[TO_MOVE] = 1.0
    if s[i, DEALER] == seat:
        out[IS_DEALER] = 1.0
    hand = s[i, HAND0 + seat]
    in_pile = s[i, PILE_MASK]
    top = 0
    if s[i, PILE_LEN] > 0:
        top = np.int64(1) << piles[i, s[i, PILE_LEN] - 1]
    opp_taken = s[i, TAKEN0 + other]
    _set_plane(out, _PLANE_HAND, hand)
    _set_plane(out, _PLANE_TOP, top)
    _set_plane(out, _PLANE_PILE, in_pile ^ top)
    _set_plane(out, _PLANE_OPP_TAKEN, opp_taken)
    _set_plane(out, _PLANE_OPP_DISCARDED, s[i, DISCARDED0 + other])
    _set_plane(out, _PLANE_OPP_PASSED, s[i, PASSED0 + other])
    _set_plane(out, _PLANE_OWN_TAKEN, s[i, TAKEN0 + seat])
    _set_plane(out, _PLANE_OWN_DISCARDED, s[i, DISCARDED0 + seat])
    _set_plane(out, _PLANE_OWN_PASSED, s[i, PASSED0 + seat])
    _set_plane(out, _PLANE_UNSEEN, K.FULL_DECK ^ (hand | in_pile | opp_taken))


@njit(cache=True)
def _encode_all(s: np.ndarray, piles: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
    for i in range(s.shape[0]):
        _encode(s, piles, i, seats[i], out[i])


@njit(cache=True)
def _take_top(s: np.ndarray, piles: np.ndarray, i: int, player: int, cfg: np.ndarray) -> None:
    n = s[i, PILE_LEN] - 1
    card = piles[i, n]
    bit = np.int64(1) << card
    s[i, PILE_LEN] = n
    s[i, PILE_MASK] &= ~bit
    s[i, HAND0 + player] |= bit
    s[i, TAKEN0 + player] |= bit
    # The card just taken may not be thrown back this turn, unless the rules allow it (seed 004).
    s[i, BANNED] = -1 if cfg[DISCARD_TAKEN] else card
    s[i, JUST_TOOK] = card
    s[i, DRAWS] += 1
    s[i, PHASE] = DISCARD


@njit(cache=True)
def _apply(
    s: np.ndarray,
    decks: np.ndarray,
    piles: np.ndarray,
    i: int,
    action: int,
    cfg: np.ndarray,
    result: np.ndarray,
) -> bool:
    """Apply a legal ``action`` to slot ``i``; when it ends the hand, fill ``result`` (kind, winner,
    points, deadwood of seat 0, deadwood of seat 1) and return True."""
    phase = s[i, PHASE]
    player = s[i, PLAYER]
    top = piles[i, s[i, PILE_LEN] - 1] if s[i, PILE_LEN] > 0 else -1
    if phase <= UPCARD_DEALER:  # the upcard offer
        if action == DRAW_DISCARD:
            _take_top(s, piles, i, player, cfg)
        else:
            s[i, PASSED0 + player] |= np.int64(1) << top
            if phase == UPCARD_NON_DEALER:
                s[i, PHASE] = UPCARD_DEALER
                s[i, PLAYER] = s[i, DEALER]
            else:
                s[i, PHASE] = DRAW
                s[i, PLAYER] = 1 - s[i, DEALER]
                s[i, FORCED] = 1
        return False
    if phase == DRAW:
        s[i, FORCED] = 0
        if action == DRAW_DISCARD:
            _take_top(s, piles, i, player, cfg)
        else:
            if top >= 0:
                s[i, PASSED0 + player] |= np.int64(1) << top
            s[i, HAND0 + player] |= np.int64(1) << decks[i, s[i, STOCK_POS]]
            s[i, STOCK_POS] += 1
            s[i, BANNED] = -1
            s[i, JUST_TOOK] = -1
            s[i, DRAWS] += 1
            s[i, PHASE] = DISCARD
        return False
    # DISCARD phase: big gin, a knock, or a plain discard.
    if action != BIG_GIN:
        card = action - KNOCK_BASE if action >= KNOCK_BASE else action - DISCARD_BASE
        bit = np.int64(1) << card
        s[i, HAND0 + player] ^= bit
        s[i, DISCARDED0 + player] |= bit
        s[i, TAKEN0 + player] &= ~bit
        piles[i, s[i, PILE_LEN]] = card
        s[i, PILE_LEN] += 1
        s[i, PILE_MASK] |= bit
    if action == BIG_GIN or action >= KNOCK_BASE:
        defender = 1 - player
        kind, points, kdw, ddw = K.knock_outcome(
            s[i, HAND0 + player],
            s[i, HAND0 + defender],
            cfg[GIN_BONUS],
            cfg[UNDERCUT_BONUS],
            cfg[BIG_GIN_BONUS],
        )
        result[0] = kind
        if kind == K.KnockKind.UNDERCUT:
            result[1] = defender
            result[2] = -points
        else:
            result[1] = player
            result[2] = points
        result[3 + player] = kdw
        result[3 + defender] = ddw
        s[i, PHASE] = OVER
        return True
    s[i, BANNED] = -1
    s[i, JUST_TOOK] = -1
    if 52 - s[i, STOCK_POS] <= cfg[DEAD_HAND_STOCK] or s[i, DRAWS] >= cfg[TURN_LIMIT]:
        result[0] = DEAD if 52 - s[i, STOCK_POS] <= cfg[DEAD_HAND_STOCK] else TRUNCATED
        result[1] = -1
        result[2] = 0
        # No cards are shown: neither deadwood is public (as in the AEC env's infos).
        result[3] = -1
        result[4] = -1
        s[i, PHASE] = OVER
        return True
    s[i, PLAYER] = 1 - player
    s[i, PHASE] = DRAW
    return False


@njit(cache=True)
def _deal_random(
    s: np.ndarray, decks: np.ndarray, piles: np.ndarray, i: int, cfg: np.ndarray, rng: np.random.Generator
) -> None:
    _deal(s, decks, piles, i, rng.permutation(52), int(rng.integers(0, 2)), cfg)


@njit(cache=True)
def _end_rewards(result: np.ndarray, scale: float, rewards: np.ndarray) -> None:
    # The zero-sum rewards of an ended hand for seats 0 and 1 (0 and 0 without a winner).
    winner = result[1]
    rewards[0] = 0.0
    rewards[1] = 0.0
    if winner >= 0:
        rewards[winner] = result[2] * scale
        rewards[1 - winner] = -result[2] * scale


@njit(cache=True)
def _step_all(
    s: np.ndarray,
    decks: np.ndarray,
    piles: np.ndarray,
    actions: np.ndarray,
    cfg: np.ndarray,
    rng: np.random.Generator,
    scale: float,
    obs: np.ndarray,
    final_obs: np.ndarray,
    masks: np.ndarray,
    players: np.ndarray,
    rewards: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    results: np.ndarray,
    encode: bool,
) -> None:
    """Step every slot; a slot whose hand ended is dealt a new one from ``rng`` (in slot order)."""
    for i in range(s.shape[0]):
        rewards[i, 0] = 0.0
        rewards[i, 1] = 0.0
        terminated[i] = False
        truncated[i] = False
        results[i, 0] = NO_RESULT
        if _apply(s, decks, piles, i, actions[i], cfg, results[i]):
            if results[i, 0] == TRUNCATED:
                truncated[i] = True
            else:
                terminated[i] = True
            _end_rewards(results[i], scale, rewards[i])
            if encode:
                # Both seats' last view of the ended hand, for bootstrapping a truncated hand.
                _encode(s, piles, i, 0, final_obs[i, 0])
                _encode(s, piles, i, 1, final_obs[i, 1])
            _deal_random(s, decks, piles, i, cfg, rng)
        players[i] = s[i, PLAYER]
        _legal(s, i, masks[i], cfg)
        if encode:
            _encode(s, piles, i, s[i, PLAYER], obs[i])


@njit(cache=True)
def _reset_all(
    s: np.ndarray,
    decks: np.ndarray,
    piles: np.ndarray,
    new_decks: np.ndarray,
    dealers: np.ndarray,
    cfg: np.ndarray,
    obs: np.ndarray,
    masks: np.ndarray,
    players: np.ndarray,
    encode: bool,
) -> None:
    for i in range(s.shape[0]):
        _deal(s, decks, piles, i, new_decks[i], dealers[i], cfg)
        players[i] = s[i, PLAYER]
        _legal(s, i, masks[i], cfg)
        if encode:
            _encode(s, piles, i, s[i, PLAYER], obs[i])


@njit(cache=True)
def _pick_bit(mask: int, k: int) -> int:
    # The card id of the k-th (from 0) card of ``mask``.
    for _ in range(k):
        mask &= mask - 1
    return K.lowest_card(mask)


@njit(cache=True)
def _random_legal(s: np.ndarray, i: int, cfg: np.ndarray, rng: np.random.Generator) -> int:
    # A uniformly random legal action of slot ``i``, counted from bitmasks (no 108-entry mask).
    phase = s[i, PHASE]
    if phase == DISCARD:
        allowed, knocks, can_big_gin = _discard_options(s, i, cfg)
        big = 1 if can_big_gin else 0
        n_discards = K.popcount(allowed)
        n_knocks = K.popcount(knocks)
        # rng.random() is a third of rng.integers()' cost in numba; 53 random bits spread evenly.
        r = int(rng.random() * (n_discards + n_knocks + big))
        if r < n_discards:
            return DISCARD_BASE + _pick_bit(allowed, r)
        if r < n_discards + n_knocks:
            return KNOCK_BASE + _pick_bit(knocks, r - n_discards)
        return BIG_GIN
    if phase == DRAW:
        if s[i, FORCED] or rng.random() < 0.5:
            return DRAW_STOCK
        return DRAW_DISCARD
    return DRAW_DISCARD if rng.random() < 0.5 else PASS


@njit(cache=True)
def _random_hands(n: int, cfg: np.ndarray, rng: np.random.Generator, results: np.ndarray) -> int:
    """Play ``n`` hands of uniformly random legal actions; fill ``results`` (n, 5) as in
    :func:`_apply`; returns the number of decisions taken."""
    s = np.zeros((1, NUM_COLUMNS), dtype=np.int64)
    decks = np.zeros((1, 52), dtype=np.int64)
    piles = np.zeros((1, 52), dtype=np.int64)
    decisions = 0
    for h in range(n):
        _deal_random(s, decks, piles, 0, cfg, rng)
        outcome = results[h]
        while not _apply(s, decks, piles, 0, _random_legal(s, 0, cfg, rng), cfg, outcome):
            decisions += 1
        decisions += 1
    return decisions


def play_random_hands(
    num_hands: int, rules: Rules | None = None, seed: int = 0, turn_limit: int = DEFAULT_TURN_LIMIT
) -> StepResults:
    """Play ``num_hands`` whole hands of uniformly random legal actions in compiled code (no
    observations): the engine's raw speed, and a baseline of how random play ends."""
    if isinstance(num_hands, bool) or not isinstance(num_hands, (int, np.integer)) or num_hands < 0:
        raise VectorError(f"num_hands must be a non-negative integer, got {num_hands!r}")
    results = np.full((int(num_hands), 5), NO_RESULT, dtype=np.int64)
    cfg = rules_array(rules or Rules(), check_turn_limit(turn_limit))
    _random_hands(int(num_hands), cfg, np.random.default_rng(seed), results)
    return StepResults(results[:, 0], results[:, 1], results[:, 2], results[:, 3:5])


# --------------------------------------------------------------------------- compiled opponents

#: Compiled policies for batched opponents and playouts: uniformly random legal actions, and the
#: ``greedy`` level (``ginenv.agents.baselines.greedy``) move for move.
POLICIES = ("random", "greedy")
RANDOM_POLICY, GREEDY_POLICY = 0, 1


@njit(cache=True)
def _greedy_discard(hand: int, allowed: int) -> int:
    # The allowed card whose discard leaves the least deadwood, the highest-valued one on ties, then
    # the lowest card id (greedy.best_discard).
    best = -1
    best_dw = 1 << 30
    rest = allowed
    while rest:
        low = rest & -rest
        rest ^= low
        c = K.lowest_card(low)
        dw = K.min_deadwood(hand ^ low)
        if dw < best_dw or (dw == best_dw and K.CARD_VALUE[c] > K.CARD_VALUE[best]):
            best = c
            best_dw = dw
    return best


@njit(cache=True)
def _greedy_takes(hand: int, card: int) -> bool:
    # greedy.melds_with: after taking ``card`` and the best discard among the other cards, ``card``
    # is in a meld and the deadwood is lower than before.
    bit = 1 << card
    kept = hand | bit
    kept ^= 1 << _greedy_discard(kept, hand)
    after = K.min_deadwood(kept)
    in_meld = after < K.min_deadwood(kept ^ bit) + K.CARD_VALUE[card]
    return in_meld and after < K.min_deadwood(hand)


@njit(cache=True)
def _useful_discards(grown: int, taken: int) -> int:
    # After taking ``taken``: the other cards whose discard leaves less deadwood than the hand before
    # the take (the no-cycling rule of ginenv.agents.levels.common.TakeGuard).
    before = K.min_deadwood(grown ^ (1 << taken))
    out = 0
    rest = grown & ~(1 << taken)
    while rest:
        low = rest & -rest
        rest ^= low
        if K.min_deadwood(grown ^ low) < before:
            out |= low
    return out


@njit(cache=True)
def _greedy_action(s: np.ndarray, piles: np.ndarray, i: int, cfg: np.ndarray) -> int:
    """The greedy level's action in slot ``i`` (exactly ``GreedyAgent.act``)."""
    phase = s[i, PHASE]
    hand = s[i, HAND0 + s[i, PLAYER]]
    if phase != DISCARD:
        can_take = phase != DRAW or not s[i, FORCED]
        if can_take and s[i, PILE_LEN] > 0 and _greedy_takes(hand, piles[i, s[i, PILE_LEN] - 1]):
            return DRAW_DISCARD
        return PASS if phase != DRAW else DRAW_STOCK
    allowed, knocks, big = _discard_options(s, i, cfg)
    if big:
        return BIG_GIN
    taken = s[i, JUST_TOOK]
    if taken >= 0:
        useful = _useful_discards(hand, taken) & allowed
        if useful:
            allowed = useful
    card = _greedy_discard(hand, allowed)
    if knocks >> card & 1:
        return KNOCK_BASE + card
    return DISCARD_BASE + card


@njit(cache=True)
def _policy_action(
    policy: int, s: np.ndarray, piles: np.ndarray, i: int, cfg: np.ndarray, rng: np.random.Generator
) -> int:
    if policy == GREEDY_POLICY:
        return _greedy_action(s, piles, i, cfg)
    return _random_legal(s, i, cfg, rng)


@njit(cache=True)
def _policy_actions(
    policy: int,
    s: np.ndarray,
    piles: np.ndarray,
    cfg: np.ndarray,
    rng: np.random.Generator,
    chosen: np.ndarray,
    out: np.ndarray,
) -> None:
    for i in range(s.shape[0]):
        if chosen[i]:
            out[i] = _policy_action(policy, s, piles, i, cfg, rng)


@njit(cache=True)
def _step_learners(
    s: np.ndarray,
    decks: np.ndarray,
    piles: np.ndarray,
    actions: np.ndarray,
    seats: np.ndarray,
    fixed_seat: int,
    policy: int,
    cfg: np.ndarray,
    rng: np.random.Generator,
    scale: float,
    obs: np.ndarray,
    final_obs: np.ndarray,
    masks: np.ndarray,
    rewards: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    results: np.ndarray,
    first: bool,
) -> None:
    """Apply each slot's learner action (``first``: none, a fresh deal), then the compiled opponent's
    moves until the learner's next decision. A hand that ends is recorded (``results``, the
    learner's ``rewards``, its ``final_obs``) and a new one dealt, with a new learner seat unless
    ``fixed_seat`` >= 0; a new hand that ends before the learner's first decision is dealt again."""
    seat_rewards = np.zeros(2, dtype=np.float64)
    outcome = np.empty(5, dtype=np.int64)
    for i in range(s.shape[0]):
        rewards[i] = 0.0
        terminated[i] = False
        truncated[i] = False
        results[i, :] = NO_RESULT
        # ``fresh``: the learner has not decided yet in the slot's current hand.
        fresh = first
        ended = False if first else _apply(s, decks, piles, i, actions[i], cfg, outcome)
        while True:
            if ended:
                if not fresh:
                    results[i, :] = outcome
                    if outcome[0] == TRUNCATED:
                        truncated[i] = True
                    else:
                        terminated[i] = True
                    _end_rewards(outcome, scale, seat_rewards)
                    rewards[i] = seat_rewards[seats[i]]
                    _encode(s, piles, i, seats[i], final_obs[i])
                # A hand the learner had no say in (the opponent took the upcard and knocked) is
                # dealt again without a record.
                _deal_random(s, decks, piles, i, cfg, rng)
                seats[i] = fixed_seat if fixed_seat >= 0 else rng.integers(0, 2)
                fresh = True
                ended = False
            if s[i, PLAYER] == seats[i]:
                break
            action = _policy_action(policy, s, piles, i, cfg, rng)
            ended = _apply(s, decks, piles, i, action, cfg, outcome)
        _legal(s, i, masks[i], cfg)
        _encode(s, piles, i, seats[i], obs[i])


def rules_array(rules: Rules, turn_limit: int) -> np.ndarray:
    """The rule options as the int64 array the compiled code reads (last entry: the knock limit)."""
    cfg = np.zeros(8, dtype=np.int64)
    cfg[GIN_BONUS] = rules.gin_bonus
    cfg[UNDERCUT_BONUS] = rules.undercut_bonus
    cfg[BIG_GIN_BONUS] = -1 if rules.big_gin_bonus is None else rules.big_gin_bonus
    cfg[OKLAHOMA] = int(rules.oklahoma)
    cfg[DEAD_HAND_STOCK] = rules.dead_hand_stock
    cfg[DISCARD_TAKEN] = int(rules.discard_taken_card)
    cfg[TURN_LIMIT] = turn_limit
    cfg[-1] = rules.knock_limit
    return cfg


# --------------------------------------------------------------------------- the Python face


@dataclass(frozen=True)
class StepResults:
    """How the hands that ended on the last step ended, one entry per slot.

    ``kind[i]`` indexes :data:`RESULT_KINDS` (-1: the hand of slot ``i`` goes on); ``winner[i]`` is
    the seat that scored (-1 for none), ``points[i]`` its points, ``deadwood[i]`` each seat's
    deadwood after a showdown (the defender's after layoffs), -1 after a dead or truncated hand,
    where no cards are shown.
    """

    kind: np.ndarray
    winner: np.ndarray
    points: np.ndarray
    deadwood: np.ndarray

    def names(self) -> list[str | None]:
        """The result kind of each slot by name (``None`` where the hand goes on)."""
        return [RESULT_KINDS[k] if k >= 0 else None for k in self.kind.tolist()]


class VectorGinRummy:
    """N hands in lockstep (hand mode), seen from the seat to move of each slot.

    ``VectorGinRummy(num_envs, rules=Rules(), seed=0, turn_limit=100)``; :meth:`reset` deals from
    given decks and dealers or from the env's generator, :meth:`step` applies one action per slot.
    ``observations=False`` skips building observation vectors (for playouts that need only masks).
    """

    def __init__(
        self,
        num_envs: int,
        rules: Rules | None = None,
        seed: int | None = None,
        turn_limit: int = DEFAULT_TURN_LIMIT,
        reward_scale: float = 1.0,
        observations: bool = True,
    ) -> None:
        """Allocate ``num_envs`` slots (call :meth:`reset` before :meth:`step`)."""
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise VectorError(f"num_envs must be a positive integer, got {num_envs!r}")
        if rules is not None and not isinstance(rules, Rules):
            raise VectorError(f"rules must be a ginenv.rules.Rules, got {type(rules).__name__}")
        if (
            isinstance(reward_scale, bool)
            or not isinstance(reward_scale, (int, float))
            or not np.isfinite(reward_scale)
        ):
            raise VectorError(f"reward_scale must be a finite number, got {reward_scale!r}")
        n = int(num_envs)
        self.num_envs = n
        self.rules = rules or Rules()
        self.turn_limit = check_turn_limit(turn_limit)
        self.reward_scale = float(reward_scale)
        self.observations = bool(observations)
        self._cfg = rules_array(self.rules, self.turn_limit)
        self._rng = np.random.default_rng(seed)
        self._state = np.zeros((n, NUM_COLUMNS), dtype=np.int64)
        self._decks = np.zeros((n, NUM_CARDS), dtype=np.int64)
        self._piles = np.zeros((n, NUM_CARDS), dtype=np.int64)
        self._obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
        self._final_obs = np.zeros((n, 2, OBS_SIZE), dtype=np.float32)
        self._masks = np.zeros((n, NUM_ACTIONS), dtype=np.int8)
        self._players = np.zeros(n, dtype=np.int64)
        self._rewards = np.zeros((n, 2), dtype=np.float32)
        self._terminated = np.zeros(n, dtype=np.bool_)
        self._truncated = np.zeros(n, dtype=np.bool_)
        self._results = np.full((n, 5), NO_RESULT, dtype=np.int64)
        self._ready = False

    # ------------------------------------------------------------------ generator

    def _shuffled(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        decks = np.tile(np.arange(NUM_CARDS, dtype=np.int64), (k, 1))
        self._rng.permuted(decks, axis=1, out=decks)
        return decks, self._rng.integers(0, 2, size=k, dtype=np.int64)

    # ------------------------------------------------------------------ API

    def reset(
        self, decks: np.ndarray | None = None, dealers: np.ndarray | None = None, seed: int | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Deal every slot: ``decks`` (N, 52) card ids in dealing order and ``dealers`` (N,) of 0/1,
        or from the generator (reseeded by ``seed``). Returns ``(obs, mask, player)``."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        n = self.num_envs
        given_decks, given_dealers = self._shuffled(n)
        if decks is not None:
            given_decks = _check_decks(decks, n)
        if dealers is not None:
            given_dealers = _check_dealers(dealers, n)
        _reset_all(
            self._state, self._decks, self._piles, given_decks, given_dealers, self._cfg,
            self._obs, self._masks, self._players, self.observations,
        )  # fmt: skip
        self._results[:, 0] = NO_RESULT
        self._ready = True
        return self._obs.copy(), self._masks.copy(), self._players.copy()

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Apply one action per slot (the seat to move's); every action must be legal, else nothing
        changes. Returns ``(obs, mask, player, rewards, terminated, truncated)``."""
        if not self._ready:
            raise VectorError("call reset() before step()")
        acts = self._check_actions(actions)
        _step_all(
            self._state, self._decks, self._piles, acts, self._cfg, self._rng, self.reward_scale,
            self._obs, self._final_obs, self._masks, self._players, self._rewards, self._terminated,
            self._truncated, self._results, self.observations,
        )  # fmt: skip
        return (
            self._obs.copy(),
            self._masks.copy(),
            self._players.copy(),
            self._rewards.copy(),
            self._terminated.copy(),
            self._truncated.copy(),
        )

    def _check_actions(self, actions: object) -> np.ndarray:
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise VectorError(f"actions must have shape ({self.num_envs},), one per slot, got {acts.shape}")
        if not np.issubdtype(acts.dtype, np.integer):
            raise VectorError(
                f"actions must be integer action ids 0..{NUM_ACTIONS - 1}, got dtype {acts.dtype}"
            )
        acts = acts.astype(np.int64, copy=False)
        outside = (acts < 0) | (acts >= NUM_ACTIONS)
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            raise VectorError(
                f"{int(outside.sum())} action(s) outside 0..{NUM_ACTIONS - 1}, nothing was applied; "
                f"first: slot {i} got {int(acts[i])}"
            )
        illegal = self._masks[np.arange(self.num_envs), acts] == 0
        if illegal.any():
            i = int(np.flatnonzero(illegal)[0])
            legal = ", ".join(ACTION_NAMES[a] for a in np.flatnonzero(self._masks[i]))
            raise VectorError(
                f"{int(illegal.sum())} illegal action(s), nothing was applied; first: slot {i}, "
                f"{ACTION_NAMES[acts[i]]!r} (id {int(acts[i])}) for player {int(self._players[i])}; "
                f"legal there: {legal}"
            )
        return acts

    def policy_actions(self, policy: str = "greedy", slots: np.ndarray | None = None) -> np.ndarray:
        """The action a compiled policy (one of :data:`POLICIES`) takes for the seat to move in
        each slot, (N,) int64: batched opponents and self-play playouts without leaving numba.
        ``slots`` (N,) bool computes only those slots (the others get -1)."""
        if policy not in POLICIES:
            raise VectorError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
        if not self._ready:
            raise VectorError("call reset() before policy_actions()")
        if slots is None:
            chosen = np.ones(self.num_envs, dtype=np.bool_)
        else:
            chosen = np.asarray(slots)
            if chosen.shape != (self.num_envs,) or chosen.dtype != np.bool_:
                raise VectorError(
                    f"slots must be a bool array of shape ({self.num_envs},), "
                    f"got {chosen.dtype} {chosen.shape}"
                )
        out = np.full(self.num_envs, -1, dtype=np.int64)
        _policy_actions(POLICIES.index(policy), self._state, self._piles, self._cfg, self._rng, chosen, out)
        return out

    @property
    def results(self) -> StepResults:
        """How the hands that ended on the last step ended (see :class:`StepResults`)."""
        r = self._results
        return StepResults(r[:, 0].copy(), r[:, 1].copy(), r[:, 2].copy(), r[:, 3:5].copy())

    def observe(self, seat: np.ndarray | None = None) -> np.ndarray:
        """Observation vectors of ``seat`` (N,) per slot (default: the seat to move), as observe()
        gives them to that seat."""
        seats = self._players if seat is None else _check_dealers(seat, self.num_envs, "seat")
        out = np.empty((self.num_envs, OBS_SIZE), dtype=np.float32)
        _encode_all(self._state, self._piles, seats, out)
        return out

    @property
    def final_observations(self) -> np.ndarray:
        """(N, 2, OBS_SIZE): for each slot whose hand ended on the last step, each seat's last view
        of that hand (what ``observe()`` gave the seat once it ended), for bootstrapping a truncated
        hand; rows of slots whose hand goes on are stale."""
        return self._final_obs.copy()

    def deals(self) -> tuple[np.ndarray, np.ndarray]:
        """The deck (N, 52, dealing order) and dealer (N,) of each slot's current hand (full state)."""
        return self._decks.copy(), self._state[:, DEALER].copy()

    def hands(self) -> np.ndarray:
        """Both seats' cards per slot as (N, 2) int64 bitmasks (full state: for tests and oracles)."""
        return self._state[:, HAND0 : HAND1 + 1].copy()


class OpponentVectorGinRummy:
    """N hands in lockstep where a learner plays one seat and a compiled opponent the other.

    ``opponent`` is one of :data:`POLICIES` (``"greedy"``: ``ginenv.agents.baselines.greedy`` move for move;
    ``"random"``: uniformly random legal actions). The learner's seat is ``seat`` (0 or 1) or, with
    ``seat=None``, drawn at random for every hand. :meth:`step` applies the learner's actions, then
    the opponents' moves in compiled code until every slot waits for the learner again, so the caller
    sees only the learner's decisions: observations and masks are always the learner's. A hand that
    ends before the learner's first decision (the opponent takes the upcard and knocks at once) is
    dealt again, as in :class:`ginenv.wrappers.SingleAgentEnv`.
    """

    def __init__(
        self,
        num_envs: int,
        opponent: str = "greedy",
        seat: int | None = None,
        rules: Rules | None = None,
        seed: int | None = None,
        turn_limit: int = DEFAULT_TURN_LIMIT,
        reward_scale: float = 1.0,
    ) -> None:
        """Allocate the slots (call :meth:`reset` before :meth:`step`)."""
        if opponent not in POLICIES:
            raise VectorError(
                f"opponent must be one of {', '.join(POLICIES)} (compiled policies), got {opponent!r}"
            )
        if seat is not None and (isinstance(seat, bool) or seat not in (0, 1)):
            raise VectorError(f"seat must be 0, 1 or None (a random seat every hand), got {seat!r}")
        self._engine = VectorGinRummy(num_envs, rules, seed, turn_limit, reward_scale)
        self.num_envs = self._engine.num_envs
        self.opponent = opponent
        self.seat = seat
        n = self.num_envs
        self._seats = np.zeros(n, dtype=np.int64)
        self._rewards = np.zeros(n, dtype=np.float32)
        self._final_obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
        self._ready = False

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Deal every slot and play the opponents up to the learners' first decisions: ``(obs, mask)``."""
        e = self._engine
        if seed is not None:
            e._rng = np.random.default_rng(seed)
        for i in range(self.num_envs):
            self._seats[i] = self.seat if self.seat is not None else e._rng.integers(0, 2)
        e.reset()
        self._run(np.zeros(self.num_envs, dtype=np.int64), first=True)
        self._ready = True
        return e._obs.copy(), e._masks.copy()

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The learners' actions (legal, else nothing changes), then the opponents' moves.

        Returns ``(obs, mask, rewards, terminated, truncated, final_obs)``: the learner's reward
        (N,), and where a hand ended, its final observation (the next hand's is in ``obs``).
        """
        if not self._ready:
            raise VectorError("call reset() before step()")
        self._run(self._engine._check_actions(actions), first=False)
        e = self._engine
        return (
            e._obs.copy(),
            e._masks.copy(),
            self._rewards.copy(),
            e._terminated.copy(),
            e._truncated.copy(),
            self._final_obs.copy(),
        )

    def _run(self, actions: np.ndarray, first: bool) -> None:
        e = self._engine
        _step_learners(
            e._state, e._decks, e._piles, actions, self._seats, -1 if self.seat is None else self.seat,
            POLICIES.index(self.opponent), e._cfg, e._rng, e.reward_scale, e._obs, self._final_obs,
            e._masks, self._rewards, e._terminated, e._truncated, e._results, first,
        )  # fmt: skip

    @property
    def seats(self) -> np.ndarray:
        """The learner's seat in each slot's current hand."""
        return self._seats.copy()

    @property
    def dealers(self) -> np.ndarray:
        """The dealer's seat in each slot's current hand."""
        return self._engine.deals()[1]

    @property
    def results(self) -> StepResults:
        """How the hands that ended on the last step ended (see :class:`StepResults`)."""
        return self._engine.results

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, (N, 108) bool."""
        return self._engine._masks.astype(bool)


@njit(cache=True)
def _playout_all(
    s: np.ndarray,
    decks: np.ndarray,
    piles: np.ndarray,
    policy: int,
    cfg: np.ndarray,
    rng: np.random.Generator,
    results: np.ndarray,
) -> None:
    for i in range(s.shape[0]):
        while not _apply(s, decks, piles, i, _policy_action(policy, s, piles, i, cfg, rng), cfg, results[i]):
            pass


def _last_take(position: HandState) -> int:
    # The card the player to move just took from the discard pile (public), or -1.
    history = position.history
    if position.phase != DISCARD or not history or history[-1][1] != DRAW_DISCARD:
        return -1
    if position.banned >= 0:
        return position.banned
    replay = HandState(position.rules, position.dealer, deck=position.deck, turn_limit=position.turn_limit)
    for _, action in history[:-1]:
        replay.step(action)
    return replay.discard_pile[-1]


def rollout_worlds(
    position: HandState,
    opponent_hands: np.ndarray,
    stocks: np.ndarray,
    policy: str = "greedy",
    seed: int | None = None,
    turn_limit: int | None = None,
) -> np.ndarray:
    """Play many sampled worlds of one position to the end under a compiled policy, in one call.

    ``position`` is the hand as the player to move knows it (its own cards, the discard pile in
    order, the phase, whose turn, the draws so far); a world replaces what that player cannot see:
    ``opponent_hands[w]`` (a card bitmask) and ``stocks[w]`` (the stock in drawing order, card ids).
    Every world must hold exactly the cards hidden from the player to move. Both seats then play
    ``policy`` (one of :data:`POLICIES`) to the end of the hand. Returns the points of each world
    for the player to move (negative when the opponent scores; 0 for a dead or truncated hand).
    """
    if policy not in POLICIES:
        raise VectorError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    if position.is_over:
        raise VectorError("the position is over: nothing to play out")
    me, opp = position.player, 1 - position.player
    hidden = position.hands[opp]
    for c in position.stock:
        hidden |= 1 << c
    opps = np.asarray(opponent_hands, dtype=np.int64).reshape(-1)
    stock_arr = np.asarray(stocks, dtype=np.int64)
    worlds = opps.size
    n_stock = len(position.stock)
    if worlds < 1 or stock_arr.shape != (worlds, n_stock):
        raise VectorError(
            f"opponent_hands must be (W,) card masks and stocks (W, {n_stock}) card ids in drawing order, "
            f"got {opps.shape} and {stock_arr.shape}"
        )
    want = position.hands[opp].bit_count()
    for w in range(worlds):
        held = int(opps[w])
        stock_mask = 0
        for c in stock_arr[w].tolist():
            stock_mask |= 1 << c
        if held.bit_count() != want or stock_mask.bit_count() != n_stock or held | stock_mask != hidden:
            raise VectorError(
                f"world {w} must split exactly the {want + n_stock} cards hidden from player {me} into an "
                f"opponent hand of {want} cards and a stock of {n_stock}"
            )
    limit = position.turn_limit if turn_limit is None else check_turn_limit(turn_limit)
    cfg = rules_array(position.rules, limit)
    state = np.zeros((worlds, NUM_COLUMNS), dtype=np.int64)
    decks = np.zeros((worlds, NUM_CARDS), dtype=np.int64)
    piles = np.zeros((worlds, NUM_CARDS), dtype=np.int64)
    knowledge = Knowledge.of(position)
    row = state[0]
    row[HAND0 + me] = position.hands[me]
    row[PILE_LEN] = len(position.discard_pile)
    row[PILE_MASK] = knowledge.pile
    row[STOCK_POS] = NUM_CARDS - n_stock
    for seat in (0, 1):
        row[TAKEN0 + seat] = knowledge.taken[seat]
        row[DISCARDED0 + seat] = knowledge.discarded[seat]
        row[PASSED0 + seat] = knowledge.passed[seat]
    row[PHASE] = int(position.phase)
    row[PLAYER] = me
    row[DEALER] = position.dealer
    row[BANNED] = position.banned
    row[DRAWS] = position.draws
    row[KNOCK_LIMIT_COL] = position.knock_limit
    history = position.history
    row[FORCED] = int(position.phase == DRAW and len(history) == 2 and history[1][1] == PASS)
    row[JUST_TOOK] = _last_take(position)
    state[:] = row
    state[:, HAND0 + opp] = opps
    piles[:, : len(position.discard_pile)] = position.discard_pile
    decks[:, NUM_CARDS - n_stock :] = stock_arr
    results = np.full((worlds, 5), NO_RESULT, dtype=np.int64)
    _playout_all(state, decks, piles, POLICIES.index(policy), cfg, np.random.default_rng(seed), results)
    signed = np.where(results[:, 1] == me, results[:, 2], -results[:, 2])
    return np.where(results[:, 1] < 0, 0, signed).astype(np.float64)


def _check_decks(decks: object, n: int) -> np.ndarray:
    arr = np.asarray(decks)
    if arr.shape != (n, NUM_CARDS) or not np.issubdtype(arr.dtype, np.integer):
        raise DeckError(
            f"decks must be an integer array of shape ({n}, 52) of card ids, got {arr.dtype} {arr.shape}"
        )
    arr = arr.astype(np.int64)
    if not (np.sort(arr, axis=1) == np.arange(NUM_CARDS)).all():
        bad = int(np.flatnonzero(~(np.sort(arr, axis=1) == np.arange(NUM_CARDS)).all(axis=1))[0])
        raise DeckError(f"deck {bad} does not hold each of the 52 card ids 0..51 exactly once")
    return arr


def _check_dealers(dealers: object, n: int, what: str = "dealers") -> np.ndarray:
    arr = np.asarray(dealers)
    if arr.shape != (n,) or not np.issubdtype(arr.dtype, np.integer) or ((arr != 0) & (arr != 1)).any():
        raise VectorError(
            f"{what} must be an integer array of shape ({n},) of 0 and 1, got {arr.dtype} {arr.shape}"
        )
    return arr.astype(np.int64)


__all__ = [
    "POLICIES",
    "RESULT_KINDS",
    "HandEnd",
    "OpponentVectorGinRummy",
    "StepResults",
    "VectorError",
    "VectorGinRummy",
    "play_random_hands",
    "rollout_worlds",
    "rules_array",
]
