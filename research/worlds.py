"""Sampled worlds of one position, for searches that play a decision out in many of them.

A *world* is what the player to move cannot see, drawn: the opponent's hand and the stock's order.
:func:`world_records` writes the hand records of many worlds of one position (the record of
:mod:`ginenv.kernels.hand`, one row per world), :func:`rollout_worlds` plays them to the end under a
compiled policy of :mod:`ginenv.kernels.policies` in one call, and :func:`restocked` draws the
stock's order again for each of many hand records (exact samples of a hand's future deals, for
training targets). A network plays worlds out through the batched engine instead
(:meth:`ginenv.vector.VectorGinRummy.start_from`; ``benchmarks/bench_net_rollouts.py`` and
:mod:`research.deal_rollouts` do).

These helpers serve search and its research; the batched engine (:mod:`ginenv.vector`) keeps only
the engine. They read full state: never an agent's view.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ginenv.engine import HandState, check_turn_limit
from ginenv.kernels import hand as H
from ginenv.kernels import policies as P
from ginenv.kernels.policies import CompiledPolicy, compiled_policy
from ginenv.validation import as_int
from ginenv.vector import VectorError, policy_names


@njit(cache=True)
def _playout_all(
    s: np.ndarray,
    policy: CompiledPolicy,
    randomly: bool,
    cfg: np.ndarray,
    rng: np.random.Generator,
    seat: int,
    points: np.ndarray,
) -> None:
    # Every row played to its end; ``points[i]``: row i's points for ``seat``.
    for i in range(s.shape[0]):
        P.play_out(policy, randomly, s, i, cfg, rng)
        points[i] = H.points_for(s, i, seat)


@njit(cache=True)
def _write_worlds(s: np.ndarray, seat: int, hands: np.ndarray, stocks: np.ndarray) -> None:
    # Row w gets ``seat``'s hand ``hands[w]`` and the stock ``stocks[w]`` (drawing order).
    for w in range(s.shape[0]):
        H.set_hand(s, w, seat, hands[w])
        H.stock_cards(s, w)[:] = stocks[w]


def world_records(position: HandState, opponent_hands: np.ndarray, stocks: np.ndarray) -> np.ndarray:
    """The hand records of many sampled worlds of one position, (W, record size) int64.

    ``position`` is the hand as the player to move knows it (its own cards, the discard pile in
    order, the phase, whose turn, the draws so far); a world replaces what that player cannot see:
    ``opponent_hands[w]`` (a card bitmask) and ``stocks[w]`` (the stock in drawing order, card ids).
    Every world must hold exactly the cards hidden from the player to move (else
    :class:`VectorError`). :func:`rollout_worlds` plays them out under a compiled policy;
    :meth:`ginenv.vector.VectorGinRummy.start_from` starts slots from them for any other player (a network).
    """
    if position.is_over:
        raise VectorError("the position is over: nothing to play out")
    me, opp = position.player, 1 - position.player
    hands = position.hands
    stock = position.stock
    hidden = hands[opp]
    for c in stock:
        hidden |= 1 << c
    opps = np.asarray(opponent_hands, dtype=np.int64).reshape(-1)
    stock_arr = np.asarray(stocks, dtype=np.int64)
    worlds = opps.size
    n_stock = len(stock)
    if worlds < 1 or stock_arr.shape != (worlds, n_stock):
        raise VectorError(
            f"opponent_hands must be (W,) card masks and stocks (W, {n_stock}) card ids in drawing order, "
            f"got {opps.shape} and {stock_arr.shape}"
        )
    want = hands[opp].bit_count()
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
    # Every world is the position's own record with the hidden cards replaced.
    state = np.repeat(position.record, worlds, axis=0)
    _write_worlds(state, opp, opps, stock_arr)
    return state


def restocked(records: np.ndarray, worlds: int, rng: np.random.Generator) -> np.ndarray:
    """``worlds`` copies of each hand record with the stock's order redrawn, (N * worlds, record
    size) int64, the copies of record ``i`` at rows ``i * worlds ...``.

    Everything else stays: both hands, the discard pile, the draws so far. Given what both seats
    hold, the stock is a uniformly random order of the remaining cards, so these are exact samples
    of the hand's future deals (full state: training targets and oracles, never an agent's view).
    """
    arr = np.asarray(records)
    if arr.ndim != 2 or arr.shape[1] != H.RECORD_SIZE or not np.issubdtype(arr.dtype, np.integer):
        raise VectorError(
            f"records must be (N, {H.RECORD_SIZE}) integer hand records, got {arr.dtype} {arr.shape}"
        )
    count = as_int(worlds)
    if count is None or count < 1:
        raise VectorError(f"worlds must be a positive integer, got {worlds!r}")
    state = np.repeat(arr.astype(np.int64), count, axis=0)
    for row in range(len(state)):
        segment = H.stock_cards(state, row)
        segment[:] = rng.permutation(segment)
    return state


def rollout_worlds(
    position: HandState,
    opponent_hands: np.ndarray,
    stocks: np.ndarray,
    policy: str = "greedy",
    seed: int | None = None,
    turn_limit: int | None = None,
) -> np.ndarray:
    """Play many sampled worlds of one position to the end under a compiled policy, in one call.

    The worlds are :func:`world_records`' (``opponent_hands[w]``, a card bitmask, and ``stocks[w]``,
    the stock in drawing order, holding exactly the cards hidden from the player to move). Both
    seats then play ``policy`` (one of :func:`ginenv.vector.policy_names`) to the end of the hand.
    Returns the points of each world for the player to move (negative when the opponent scores; 0
    for a dead or truncated hand).
    """
    try:
        kernel, randomly = compiled_policy(policy)
    except LookupError:
        raise VectorError(f"policy must be one of {', '.join(policy_names())}, got {policy!r}") from None
    state = world_records(position, opponent_hands, stocks)
    me = position.player
    limit = position.turn_limit if turn_limit is None else check_turn_limit(turn_limit)
    cfg = H.rules_array(position.rules, limit)
    points = np.empty(len(state), dtype=np.int64)
    _playout_all(state, kernel, randomly, cfg, np.random.default_rng(seed), me, points)
    return points.astype(np.float64)


__all__ = ["restocked", "rollout_worlds", "world_records"]
