"""The luck of the stock: a zero-mean control variate for duplicate evaluations (AIVAT's idea).

This module owns the *luck* of a hand: how much its stock draws helped player 0, in points, from a
fixed value estimate ``V`` of each chance event. The harness (:mod:`ginenv.experiments.eval.harness`)
plays duplicate deals, which cancel the deal itself; what is left of the cards' luck is the order of
the stock. Subtracting the luck from a hand's points keeps the estimate of the points per hand exactly
unbiased and removes part of the variance, so fewer hands separate two agents.

**Why the luck has mean zero.** The deck is a uniform random permutation and no agent sees the stock
order. So given everything up to a stock draw (both hands, the discard pile, the history), the card
drawn is uniform over the cards left in the stock. For any *fixed* function ``V`` of the state
(both hands, the discard pile, the stock as a set, the history so far; never the stock order) the
term of one draw::

    luck = V(state after drawing the actual card) - mean over c in the stock of V(state after drawing c)

has conditional mean zero, and so has the sum of such terms over a hand, and over the hands of a
match (a martingale; any stopping rule that depends only on the past, such as the end of the hand,
keeps the mean zero). Subtracting it from the points keeps the estimate unbiased *whatever* ``V``
is; the better ``V`` follows the final points, the more variance goes. ``V`` is written from the
drawer's view, so player 0's luck is ``+V`` terms on player 0's draws and ``-V`` terms on player 1's
(zero-sum: player 1's luck is minus player 0's).

**What the caller must keep.** The mean is zero over the deal's randomness, so the luck of every
hand must be counted as computed, whatever the hand's score: a truncated hand (0 points) and a
forfeited game keep the luck of the draws they made (:func:`state_luck` of the state as it stands).
Setting their luck to 0 multiplies it by an event decided by later draws, which is not zero-mean
(a small bias, as such games are rare, but a bias). The weights were fitted under the standard
rules; under other rules the luck stays exactly zero-mean, it may only remove less variance.

**What V is.** After a stock draw the drawer holds 11 cards. ``V`` assumes the drawer then makes
its least-deadwood discard (the highest card among ties) and describes the position by 13 figures
(:data:`FEATURES`, computed with the compiled kernels of :mod:`ginenv.kernels`): the deadwood
left (three shapes of it), whether the drawer can knock or has gin, the points a knock would score
now against the opponent's actual hand (layoffs and undercuts included), the melded cards, whether
the discard would let the opponent knock, and products with the opponent's deadwood and with
whether the drawer has already passed up a knock this hand (a player waiting for gin). ``V`` is
linear in them with one weight vector per stage of the hand (stock left after the draw: 0-6, 7-12,
13-18, 19-24, 25-31) and per table kind: *sound* (neither player has yet made a discard leaving 5 or
more deadwood above its best discard) or not (one player plays loosely, as ``random`` does, and
its hand says little about its future). The history flags are functions of the past only, so they
keep the mean zero.

**How V was fit** (``benchmarks/fit_luck_value.py``, which writes ``experiments/eval/data/luck_value.json``):
2000 duplicate deals of each adjacent pair of the default ladder (random .. master) on master seed
101, a seed no evaluation uses by default. Since ``V`` is linear in its weights, so is the luck:
``luck = w . delta`` where ``delta`` sums, over a hand's draws, the features of the drawn card minus
their mean over the stock (:func:`state_delta`). The weights are the ridge least-squares fit of each
deal's pair sum (centred per pairing) on the pair's ``delta``: the control variate of least
variance on the fit deals, fixed once and shipped as plain numbers, so on any other deals the
estimate is exactly unbiased (the fitted weights play the role of AIVAT's value scale ``beta``,
estimated offline once, not on the data they correct). A ``V`` fitted as a value (regression of
the final points on the features, ``beta = 1``, AIVAT's choice) was measured too and removed less
variance, or added some (see the benchmark's docstring).

**Measured** (``benchmarks/bench_variance.py --deals 1000``, seed 0, the harness's standard deals,
never used to fit or choose ``V``): the variance of the per-deal value falls by 15% (easy-random,
where the random player's loose play says little), 25% (normal-easy), 34% (hard-normal,
expert-neural), 35% (neural-hard) and 39% (master-expert), and the hands needed to separate a pair
fall in proportion (e.g. 174 -> 114 for hard-normal, 236 -> 154 for neural-hard). Half was the
aim; richer features, an MLP and rollouts did no better (the benchmark's docstring lists them).
The luck costs about 0.1 ms per hand (:func:`state_luck`), a fraction of a percent of a ladder run.

**How a hand is replayed.** The luck keeps no rules of its own: a compiled replay deals a hand
record and applies each action with the hand kernel (:mod:`ginenv.kernels.hand`: ``deal``,
``is_legal``, ``apply``, the functions every engine of the package steps), and reads the record (the
hands, the discard pile, the stock, the phase, the knock limit) at each stock draw to compute the
features. Only the two history flags above (knocks passed up, loose discards) are its own.

Functions: :func:`hand_luck` (from a deck and actions, validated by the engine), :func:`deal_delta`
(the features from a deck and actions, without building a :class:`~ginenv.engine.HandState`),
:func:`state_luck` (from a :class:`~ginenv.engine.HandState`), :func:`state_delta` (the features
behind the luck, for fitting), :func:`draw_values` (``V`` of every card of the stock at a draw, for
checks) and :func:`load_value` (the shipped weights, refused with :class:`LuckValueError` when
malformed).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from ginenv import compiling
from ginenv.actions import ACTION_NAMES, BIG_GIN, DISCARD_BASE, DRAW_STOCK, KNOCK_BASE, NUM_ACTIONS
from ginenv.cards import NUM_CARDS
from ginenv.engine import DEFAULT_TURN_LIMIT, HandState
from ginenv.kernels import (
    CARD_VALUE,
    best_discards,
    knock_outcome,
    lowest_card,
    meldable,
    min_deadwood,
    popcount,
)
from ginenv.kernels import hand as H
from ginenv.kernels.hand import Phase
from ginenv.rules import Rules

#: The figures ``V`` is linear in, per candidate card (drawer's view; see the module docstring).
FEATURES: tuple[str, ...] = (
    "near_gin",  # exp(-deadwood / 5) after the best discard
    "near_knock",  # exp(-deadwood / 15)
    "deadwood",  # deadwood / 30
    "can_knock",  # deadwood <= the hand's knock limit
    "knock_points",  # points a knock now would score (negative when undercut), 0 if no knock
    "knock_points_eager",  # knock_points when the drawer has not passed up a knock this hand
    "gin",  # deadwood 0
    "melded",  # cards in some meld of the 10 kept, / 10
    "feeds_knock",  # the discard would let the opponent knock by taking it
    "near_gin_vs_opponent",  # near_gin * exp(-opponent deadwood / 10)
    "can_knock_waiter",  # can_knock when the drawer has passed up a knock before
    "gin_waiter",  # gin when the drawer has passed up a knock before
    "knock_points_vs_opponent",  # knock_points * exp(-opponent deadwood / 10)
)
#: Stages of the hand: inclusive ranges of the stock left after the draw.
STAGES: tuple[tuple[int, int], ...] = ((0, 6), (7, 12), (13, 18), (19, 24), (25, 31))
#: Table kinds: ``sound`` while neither player has made a loose discard (5+ deadwood above its best).
TABLES: tuple[str, ...] = ("sound", "loose")
#: A discard leaving this much more deadwood than the best discard is loose (``random`` plays so).
LOOSE_DISCARD = 5
NUM_FEATURES = len(FEATURES)
#: Length of :func:`state_delta`'s vector: one block of features per (table, stage).
NUM_WEIGHTS = len(TABLES) * len(STAGES) * NUM_FEATURES

VALUE_FORMAT = "ginenv-luck-value"
VALUE_VERSION = 1
#: The shipped weights of ``V`` (written by ``benchmarks/fit_luck_value.py``).
DEFAULT_VALUE_PATH = Path(__file__).resolve().parent / "data" / "luck_value.json"

# The stage of each count of stock left after a draw (at most 31 cards are ever in the stock).
_STAGE_OF = np.array([next(i for i, (lo, hi) in enumerate(STAGES) if lo <= n <= hi) for n in range(32)])


class LuckValueError(ValueError):
    """A value file for ``V`` that cannot be used, saying what is wrong and what is expected."""


@dataclass(frozen=True)
class LuckValue:
    """The weights of ``V``: ``weights[t * len(STAGES) + s]`` are table ``t``'s, stage ``s``'s."""

    weights: np.ndarray  # float64, shape (len(TABLES) * len(STAGES), NUM_FEATURES)
    fit: dict[str, Any]
    path: str

    @property
    def flat(self) -> np.ndarray:
        """The weights as one vector, in the order of :func:`state_delta`."""
        return self.weights.reshape(-1)


# ---------------------------------------------------------------------------- the value file


def value_document(weights: np.ndarray, fit: dict[str, Any]) -> dict[str, Any]:
    """The JSON form of weights (shape ``(NUM_WEIGHTS,)`` or blocks) and their provenance ``fit``."""
    w = np.asarray(weights, dtype=np.float64).reshape(len(TABLES), len(STAGES), NUM_FEATURES)
    return {
        "format": VALUE_FORMAT,
        "version": VALUE_VERSION,
        "features": list(FEATURES),
        "stages": [list(s) for s in STAGES],
        "tables": list(TABLES),
        "loose_discard": LOOSE_DISCARD,
        "weights": {t: [[float(x) for x in row] for row in w[i]] for i, t in enumerate(TABLES)},
        "fit": fit,
    }


def _need(cond: bool, path: str | Path, message: str) -> None:
    if not cond:
        raise LuckValueError(f"luck value file {path}: {message}")


def parse_value(doc: Any, path: str | Path = "<data>") -> LuckValue:
    """Check a parsed value document (see :func:`value_document`) and return its weights."""
    _need(isinstance(doc, dict), path, f"must hold a JSON object, got {type(doc).__name__}")
    _need(doc.get("format") == VALUE_FORMAT, path, f"'format' must be {VALUE_FORMAT!r}")
    _need(
        type(doc.get("version")) is int and doc.get("version") == VALUE_VERSION,
        path,
        f"unsupported 'version' {doc.get('version')!r}; this ginenv reads version {VALUE_VERSION}",
    )
    allowed = ("format", "version", "features", "stages", "tables", "loose_discard", "weights", "fit")
    unknown = [k for k in doc if k not in allowed]
    _need(not unknown, path, f"unknown key(s) {unknown}; allowed: {', '.join(allowed)}")
    # The features, stages and loose-discard rule are code: weights fitted for others are refused.
    _need(doc.get("features") == list(FEATURES), path, f"'features' must be {list(FEATURES)}")
    _need(
        doc.get("stages") == [list(s) for s in STAGES], path, f"'stages' must be {[list(s) for s in STAGES]}"
    )
    _need(doc.get("tables") == list(TABLES), path, f"'tables' must be {list(TABLES)}")
    _need(
        type(doc.get("loose_discard")) is int and doc.get("loose_discard") == LOOSE_DISCARD,
        path,
        f"'loose_discard' must be {LOOSE_DISCARD}",
    )
    weights = doc.get("weights")
    _need(
        isinstance(weights, dict) and sorted(weights) == sorted(TABLES),
        path,
        f"'weights' must map each of {list(TABLES)} to {len(STAGES)} lists of {NUM_FEATURES} numbers",
    )
    rows: list[list[float]] = []
    for table in TABLES:
        blocks = weights[table]
        _need(
            isinstance(blocks, list) and len(blocks) == len(STAGES),
            path,
            f"weights[{table!r}] must be {len(STAGES)} lists (one per stage) of {NUM_FEATURES} numbers",
        )
        for s, row in enumerate(blocks):
            good = (
                isinstance(row, list)
                and len(row) == NUM_FEATURES
                and all(type(x) in (int, float) and math.isfinite(x) for x in row)
            )
            _need(
                good,
                path,
                f"weights[{table!r}][{s}] must be {NUM_FEATURES} finite numbers (not bools or strings)",
            )
            rows.append([float(x) for x in row])
    fit = doc.get("fit", {})
    _need(isinstance(fit, dict), path, "'fit' (the provenance of the weights) must be an object")
    return LuckValue(np.array(rows, dtype=np.float64), fit, str(path))


def load_value(path: str | Path | None = None) -> LuckValue:
    """Read and check a value file (default: the shipped :data:`DEFAULT_VALUE_PATH`, read once).

    A missing, unreadable or malformed file raises :class:`LuckValueError` saying what is wrong.
    """
    if path is None:
        return _default_value()
    return _read_value(Path(path))


@functools.lru_cache(maxsize=1)
def _default_value() -> LuckValue:
    return _read_value(DEFAULT_VALUE_PATH)


def _read_value(path: Path) -> LuckValue:
    try:
        text = path.read_text()
    except OSError as err:
        raise LuckValueError(
            f"cannot read luck value file {path}: {err.strerror or err} "
            "(fit one with benchmarks/fit_luck_value.py)"
        ) from None
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as err:
        raise LuckValueError(f"luck value file {path} is not valid JSON: {err}") from None
    return parse_value(doc, path)


# ---------------------------------------------------------------------- the compiled functions


@njit(cache=True)
def _candidate(pre, opp, bit, limit, cfg, opp_dw, waiter, feeds_memo, out):
    # The features of drawing card ``bit`` into the 10-card hand ``pre`` (drawer's view), into ``out``.
    # ``cfg``: the rule array (kernels.hand.rules_array); its big gin bonus is -1 when disabled.
    gin_bonus, undercut_bonus, big_gin_bonus = H.bonuses(cfg)
    hand = pre | bit
    dw, ties = best_discards(hand)
    # The least-deadwood discard; among ties the highest card (keeping low cards is the usual play).
    discard = -1
    value = -1
    rest = ties
    while rest:
        low = rest & -rest
        rest ^= low
        card = lowest_card(low)
        if CARD_VALUE[card] > value:
            value = CARD_VALUE[card]
            discard = card
    kept = hand ^ (1 << discard)
    can_knock = 1.0 if dw <= limit else 0.0
    points = 0.0
    if big_gin_bonus >= 0 and min_deadwood(hand) == 0:
        points = float(knock_outcome(hand, opp, gin_bonus, undercut_bonus, big_gin_bonus)[1])
    elif dw <= limit:
        # ``kept`` holds 10 cards: a knock, never big gin, so the big gin bonus is not read.
        points = float(knock_outcome(kept, opp, gin_bonus, undercut_bonus, big_gin_bonus)[1])
    gin = 1.0 if dw == 0 else 0.0
    opp_close = math.exp(-opp_dw / 10.0)
    near_gin = math.exp(-dw / 5.0)
    # Whether the opponent could knock with the discard: the same few discards recur across the
    # cards of one draw, so each is worked out once a draw (``feeds_memo``: -1 unknown, else 0/1).
    if feeds_memo[discard] < 0:
        feeds_memo[discard] = 1 if best_discards(opp | (1 << discard))[0] <= limit else 0
    feeds = float(feeds_memo[discard])
    out[0] = near_gin
    out[1] = math.exp(-dw / 15.0)
    out[2] = dw / 30.0
    out[3] = can_knock
    out[4] = points
    out[5] = 0.0 if waiter else points
    out[6] = gin
    out[7] = popcount(meldable(kept)) / 10.0
    out[8] = feeds
    out[9] = near_gin * opp_close
    out[10] = can_knock if waiter else 0.0
    out[11] = gin if waiter else 0.0
    out[12] = points * opp_close


@njit(cache=True)
def _stock_features(s, cfg, waiter, memo, rows):
    # Row 0 of the hand record ``s`` waits for a draw: the features of drawing each stock card, from
    # the mover's view, into ``rows[card]``. Returns the stock as a card mask.
    player = H.mover(s, 0)
    pre = H.hand_of(s, 0, player)
    opp = H.hand_of(s, 0, 1 - player)
    stock = H.stock_mask(s, 0)
    limit = H.knock_limit_of(s, 0)
    opp_dw = min_deadwood(opp)
    memo[:] = -1
    rest = stock
    while rest:
        low = rest & -rest
        rest ^= low
        _candidate(pre, opp, low, limit, cfg, opp_dw, waiter, memo, rows[lowest_card(low)])
    return stock


@njit(cache=True)
def _replay(deck, dealer, actions, cfg, check, stage_of, delta, probe):
    # Plays a hand from its deck and action ids with the hand kernel (kernels.hand: deal, is_legal,
    # apply), adding into ``delta`` (NUM_WEIGHTS floats), for each stock draw, the features of the
    # drawn card minus their mean over the stock, signed for player 0, in the block of the draw's
    # table and stage. If the hand then waits for a draw, ``probe`` rows 0-51 get each stock card's
    # features and row 52 the block offset and the drawer. The luck's own history (knocks passed up,
    # loose discards) is kept here; the hand's state is the record's. ``check``: refuse an action the
    # kernel says is not legal (off for a HandState's history, legal by construction). Returns (the
    # index of the first action refused, or -1; the phase it met; the hand's knock limit).
    nf = NUM_FEATURES
    nstages = len(STAGES)
    s = np.zeros((1, H.RECORD_SIZE), dtype=np.int64)
    H.deal(s, 0, deck, dealer, cfg)
    limit = H.knock_limit_of(s, 0)
    waited = np.zeros(2, dtype=np.int64)  # knocks passed up: plain discards when a knock was legal
    loose = np.zeros(2, dtype=np.int64)  # loose discards (LOOSE_DISCARD or more above the best)
    rows = np.zeros((NUM_CARDS, nf))
    total = np.zeros(nf)
    memo = np.full(NUM_CARDS, -1, dtype=np.int64)
    for i in range(actions.size):
        a = actions[i]
        phase = H.phase_of(s, 0)
        if check and not H.is_legal(s, 0, a, cfg):
            return i, phase, limit
        player = H.mover(s, 0)
        if phase == Phase.DRAW and a == DRAW_STOCK:
            stock = _stock_features(s, cfg, waited[player] > 0, memo, rows)
            total[:] = 0.0
            n = 0
            rest = stock
            while rest:
                low = rest & -rest
                rest ^= low
                total += rows[lowest_card(low)]
                n += 1
            actual = rows[H.next_stock_card(s, 0)]
            table = 0 if loose[0] == 0 and loose[1] == 0 else 1
            # The stage of the stock left after this draw.
            block = (table * nstages + stage_of[H.count_stock(s, 0) - 1]) * nf
            sign = 1.0 if player == 0 else -1.0
            for f in range(nf):
                delta[block + f] += sign * (actual[f] - total[f] / n)
        elif phase == Phase.DISCARD and a != BIG_GIN:
            card = a - DISCARD_BASE if a < KNOCK_BASE else a - KNOCK_BASE
            hand = H.hand_of(s, 0, player)
            best = best_discards(hand)[0]
            if min_deadwood(hand ^ (1 << card)) >= best + LOOSE_DISCARD:
                loose[player] += 1
            if a < KNOCK_BASE and best <= limit:  # some discard (maybe the banned card) could knock
                waited[player] += 1
        H.apply(s, 0, a, cfg)
    if H.phase_of(s, 0) == Phase.DRAW:
        # Waiting for a draw: the features of drawing each stock card (for draw_values).
        player = H.mover(s, 0)
        stock = _stock_features(s, cfg, waited[player] > 0, memo, rows)
        rest = stock
        while rest:
            low = rest & -rest
            rest ^= low
            card = lowest_card(low)
            probe[card, :] = rows[card]
        table = 0 if loose[0] == 0 and loose[1] == 0 else 1
        probe[52, 0] = (table * nstages + stage_of[H.count_stock(s, 0) - 1]) * nf
        probe[52, 1] = player
    return -1, H.phase_of(s, 0), limit


# ---------------------------------------------------------------------------- the API


def _run(
    deck: Sequence[int] | np.ndarray,
    dealer: int,
    actions: Sequence[int] | np.ndarray,
    cfg: np.ndarray,
    check: bool = True,
) -> tuple[np.ndarray, np.ndarray, int]:
    # (delta, probe, the hand's knock limit) of _replay; an action the kernel refuses raises.
    cards = np.asarray(deck, dtype=np.int64)
    if cards.shape != (NUM_CARDS,):
        raise ValueError(f"a deck must be {NUM_CARDS} card ids in dealing order, got shape {cards.shape}")
    moves = np.asarray(actions, dtype=np.int64).reshape(-1)
    delta = np.zeros(NUM_WEIGHTS)
    probe = np.full((NUM_CARDS + 1, NUM_FEATURES), np.nan)
    bad, phase, limit = _replay(cards, int(dealer), moves, cfg, check, _STAGE_OF, delta, probe)
    if bad >= 0:
        a = int(moves[bad])
        what = f"{ACTION_NAMES[a]!r} (id {a})" if 0 <= a < NUM_ACTIONS else f"id {a}"
        where = "after the hand ended" if phase == Phase.OVER else f"in phase {Phase(phase).name}"
        raise ValueError(
            f"cannot compute the luck of this hand: its action {bad}, {what}, is not legal {where}"
        )
    return delta, probe, int(limit)


def _state_run(state: HandState) -> tuple[np.ndarray, np.ndarray, int]:
    # The hand of ``state`` replayed from its deal (its own record's deck and rule array); its
    # history holds only actions the engine found legal, so they are not checked again.
    actions = np.fromiter((a for _, a in state.history), dtype=np.int64, count=len(state.history))
    deck = H.deck_order(state.record, 0)
    return _run(deck, state.dealer, actions, state.rule_array, check=False)


def state_delta(state: HandState) -> np.ndarray:
    """The luck's features (:data:`NUM_WEIGHTS` floats): summed over the hand's stock draws so far,
    the features of the card drawn minus their mean over the stock, player 0's view, in the block of
    each draw's table and stage. ``state_luck(state) == state_delta(state) @ load_value().flat``."""
    return _state_run(state)[0]


def deal_delta(
    deck: Sequence[int] | np.ndarray,
    dealer: int,
    actions: Sequence[int] | np.ndarray,
    rules: Rules,
    knock_limit: int | None = None,
    turn_limit: int = DEFAULT_TURN_LIMIT,
) -> np.ndarray:
    """:func:`state_delta` of the hand dealt from ``deck`` (52 card ids in dealing order) by
    ``dealer`` and played by ``actions`` from the deal on, without building a
    :class:`~ginenv.engine.HandState`: for the many play-outs of a training recorder. The hand is
    stepped by the hand kernel, which refuses an action that is not legal (``ValueError``); the deck
    and ``turn_limit`` are trusted. ``knock_limit``, when given, must be the hand's own (the kernel
    deals it from ``rules``: Oklahoma's from the upcard), else ``ValueError``."""
    delta, _, limit = _run(deck, dealer, actions, H.shared_rules_array(rules, int(turn_limit)))
    if knock_limit is not None and knock_limit != limit:
        raise ValueError(
            f"knock_limit {knock_limit} is not this deal's: its rules deal a knock limit of {limit}"
        )
    return delta


def state_luck(state: HandState, value: LuckValue | None = None) -> float:
    """The summed luck of the stock draws of ``state``'s hand so far, player 0's view, in points
    (player 1's is the negative). A hand without a stock draw has luck 0.

    ``state`` holds everything needed (deck, dealer, history, rules, turn limit); its history is
    trusted (a :class:`~ginenv.engine.HandState` only records legal actions). ``value``: other
    weights for ``V`` (default: the shipped ones, :func:`load_value`).
    """
    weights = (value or load_value()).flat
    return float(state_delta(state) @ weights)


def hand_luck(
    deck: Sequence[int],
    dealer: int,
    actions: Sequence[int],
    rules: Rules,
    turn_limit: int = DEFAULT_TURN_LIMIT,
    value: LuckValue | None = None,
) -> float:
    """The summed luck of a hand's stock draws, player 0's view, in points (player 1's is the
    negative), from its deck (52 card ids in dealing order), dealer and action ids.

    The hand is replayed by the engine first, so an illegal action or a bad deck raises as
    :meth:`HandState.step` does (``IllegalActionError``, ``DeckError``, ...). Dead, truncated and
    unfinished hands have the luck of the draws they made.
    """
    state = HandState(rules, dealer=dealer, deck=deck, turn_limit=turn_limit)
    for action in actions:
        state.step(action)
    return state_luck(state, value)


def draw_values(state: HandState, value: LuckValue | None = None) -> dict[int, float]:
    """``V`` of drawing each card of the stock now, by card id, from player 0's view, in points.

    ``state`` must be waiting for a draw (phase ``DRAW``). The luck of drawing card ``c`` is
    ``draw_values(state)[c]`` minus the mean of the values; the luck of the hand after it is the
    luck before it plus that (see :func:`state_luck`).
    """
    if state.phase is not Phase.DRAW:
        raise ValueError(f"draw_values needs a hand waiting for a draw (phase DRAW), not {state.phase.name}")
    _, probe, _ = _state_run(state)
    weights = (value or load_value()).flat
    block = int(probe[52, 0])
    sign = 1.0 if int(probe[52, 1]) == 0 else -1.0
    w = weights[block : block + NUM_FEATURES]
    return {c: sign * float(probe[c] @ w) for c in state.stock}


# The compiled entry points of the luck of a hand (ginenv.compiling): the harness runs them
# after every game.
compiling.register(__name__, H.deck_order, _replay)

__all__ = [
    "DEFAULT_VALUE_PATH",
    "FEATURES",
    "NUM_WEIGHTS",
    "STAGES",
    "TABLES",
    "LuckValue",
    "LuckValueError",
    "draw_values",
    "hand_luck",
    "load_value",
    "parse_value",
    "state_delta",
    "state_luck",
    "value_document",
]
