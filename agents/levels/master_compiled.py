"""master's decision compiled over the hand record: the ``master`` level as a batched engine's opponent.

The strategy is the one of :mod:`.master` (its docstring is its one statement; the opponent model's
is :mod:`.belief`'s); this module owns only its compiled form. :func:`master_action` reads a row of
the hand record (:mod:`ginenv.kernels.hand`) as the seat to move sees it, through the core's
accessors only, and returns the action :class:`.master.MasterAgent` (default constants, ``worlds``
worlds for every simulated decision) would choose from that seat's observation:

* **the opponent model** is :mod:`.belief_compiled`'s, rebuilt at each decision from the public
  record the engine keeps (its docstring says how, and why its weights may part from the Python
  model's in their last bits);
* **the worlds** are sampled from that model with :class:`.belief.OpponentModel`'s own kernels
  (:func:`.belief.sample_subsets`, the hand-quality tilt), in the same order and from the same
  kinds of uniform draws as the Python level, and scored by :func:`.master.simulate_options` (the
  rollouts of :mod:`.master_rollout`); the opponent's real hand is never read;
* **the options** (the expert's pruning, the knock candidates, the shown-meld rule, the take
  guard of :class:`.level_base.TakeGuard`, read from the record's :func:`ginenv.kernels.hand.just_taken`)
  are :meth:`.master.MasterAgent.choose_discard` and :meth:`~.master.MasterAgent.wants_top` line by
  line.

**Exact with the same generator, but for the last bits of the weights.** Given a
:class:`numpy.random.Generator` in the state the level's ``rng`` is in, :func:`master_action` draws
the same uniforms in the same order (numba's ``Generator.random`` is numpy's, bit for bit, and
advances the generator passed in) and computes what the level computes in the same order,
numpy's pairwise sums included (:func:`.belief_compiled.np_sum`), so wherever its opponent model
equals the level's bit for bit it plays the level's move and leaves the generator where the level leaves it
(``tests/agents/levels/test_master_compiled.py`` plays whole hands of the standard, seed 004 and
Oklahoma rules through both and checks every such decision). The model cannot always be equal
bit for bit: the Python model adds each event's log factor as the events come, and the record
keeps sets, not the order (nor the rare second discard of a card the opponent took back), so the
sums here add the same terms in another order (passes, takes, discards, each by card) and part
from the level's in their last bits at more than half of the decisions. A move changes only where
that shifts a near tie (two candidates' expert scores equal to the last bit, a uniform at a
threshold): 5 of 1350 decisions of the test's standard hands, 99.51% of 2432 decisions the same
move at 64 worlds, and over 4000 duplicate hands at 64 worlds the compiled master against the
Python level scored +0.23 [-0.53, +0.99] points a hand: level
(``benchmarks/bench_master_compiled.py``, 2026-12-07).

**As an engine opponent** (:func:`master_policy`, the compiled-policy table's ``master``; the
width ``master@worlds=N`` through :func:`master_policy_for`) a policy gets the record, the row and
the rules only, no generator: it seeds numba's own generator (one per thread) from the seat's
view (:func:`.compiled_base.view_seed`) and draws from it. So the opponent is a fixed function
of what its seat sees, the same on every run and thread, as random as the level to anyone who
does not know the seed; on a given view it is the level with one particular generator state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from ginenv.agents.levels.belief_compiled import BELIEF_TRAP, model_of, sample_hands, stock_odds
from ginenv.agents.levels.compiled_base import (
    DISCARD,
    TAKE_OR_NOT,
    in_order,
    level_turn,
    no_take,
    seed_by_view,
    uniforms,
)
from ginenv.agents.levels.expert import discard_values
from ginenv.agents.levels.expert_compiled import feed_weight
from ginenv.agents.levels.heuristics_compiled import take_guarded, useful_discards
from ginenv.agents.levels.master import MasterAgent, Option, meld_rate, simulate_options
from ginenv.agents.levels.master_rollout import NO_TURN_LIMIT
from numba import njit

from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, KNOCK_BASE
from ginenv.kernels import hand as H
from ginenv.kernels.meld_search import meldable, min_deadwood, showdown_melds
from ginenv.kernels.policies import slot_rows
from ginenv.layout import HAND_SIZE
from ginenv.vector import VectorGinRummy

# The option kinds of master.simulate_options, as plain ints for the arrays built here.
KNOCK, PLAY_ON = int(Option.KNOCK), int(Option.PLAY_ON)
TAKE_TOP, DRAW = int(Option.TAKE_TOP), int(Option.DRAW)
# The level's constants as the compiled code reads them (numba freezes a global when it compiles:
# after editing a default, delete this module's numba cache).
FEED_SAMPLES = int(MasterAgent.feed_samples)
KNOCK_CANDIDATES = int(MasterAgent.knock_candidates)
DISCARD_CANDIDATES = int(MasterAgent.discard_candidates)
PLAY_ON_MARGIN = float(MasterAgent.play_on_margin)
SIMULATE_DISCARDS = bool(MasterAgent.simulate_discards)
SKIP_SHOWN_MELDS = bool(MasterAgent.skip_shown_melds)
if not MasterAgent.simulate_draws:
    raise ImportError("the compiled master simulates its draws: MasterAgent.simulate_draws must be true")
OWN_TRAP = int(MasterAgent.own_trap)
OPPONENT_TRAPS = np.array(MasterAgent.opponent_traps, dtype=np.int64)
TRAP_STOCK = int(MasterAgent.trap_stock)
FEED_COST = float(MasterAgent.feed_cost)
PARTNER_COST = float(MasterAgent.partner_cost)
#: The shipped width: MasterAgent's worlds for every simulated decision (knocks and the others).
WORLDS = int(MasterAgent.worlds)
if MasterAgent.worlds_knock != MasterAgent.worlds:
    raise ImportError("the compiled master has one width: MasterAgent.worlds_knock must equal worlds")
#: The widths a compiled master accepts (``master@worlds=N``).
MIN_WORLDS, MAX_WORLDS = 1, 1 << 16


# --------------------------------------------------------------------------- the simulations


@njit(cache=True)
def simulate(
    s: np.ndarray,
    i: int,
    cfg: np.ndarray,
    rng: Any,
    n: int,
    kinds: np.ndarray,
    cards: np.ndarray,
) -> np.ndarray:
    """Mean points of each ``(kinds[j], cards[j])`` option over ``n`` worlds
    (``MasterAgent.simulate``: ``draw_worlds`` then :func:`.master.simulate_options`)."""
    p = H.mover(s, i)
    hand = H.hand_of(s, i, p)
    limit = H.knock_limit_of(s, i)
    ids, w, known, slots, turns = model_of(s, i, p)
    no = kinds.size
    knock_melds = np.zeros((no, 4), dtype=np.int64)
    knock_dw = np.zeros(no, dtype=np.int64)
    for j in range(no):
        if kinds[j] == KNOCK:
            kept = hand ^ (np.int64(1) << cards[j])
            melds = showdown_melds(kept)
            for m in range(min(melds.size, 4)):
                knock_melds[j, m] = melds[m]
            knock_dw[j] = min_deadwood(kept)
    styles = OPPONENT_TRAPS.size
    share = -(-n // styles)
    opps = np.empty(share * styles, dtype=np.int64)
    traps = np.empty((share * styles, 2), dtype=np.int64)
    for t in range(styles):
        opps[t * share : (t + 1) * share] = sample_hands(
            rng, share, ids, w, known, slots, turns, limit, OPPONENT_TRAPS[t]
        )
        traps[t * share : (t + 1) * share, 0] = OWN_TRAP
        traps[t * share : (t + 1) * share, 1] = OPPONENT_TRAPS[t]
    u = uniforms(rng, (n, max(1, ids.size)))
    points = simulate_options(
        hand,
        kinds,
        cards,
        opps[:n],
        ids,
        u,
        H.top_card(s, i),
        limit,
        H.search_rules(cfg, NO_TURN_LIMIT),
        knock_melds,
        knock_dw,
        traps[:n],
        TRAP_STOCK,
        FEED_COST,
        PARTNER_COST,
    )
    means = np.zeros(no)
    for j in range(no):
        total = 0.0
        for k in range(n):
            total += points[k, j]
        means[j] = total / n
    return means


# --------------------------------------------------------------------------- the decisions


@njit(cache=True)
def _argmax(means: np.ndarray) -> int:
    best = 0
    for j in range(1, means.size):
        if means[j] > means[best]:
            best = j
    return best


@njit(cache=True)
def master_discard(s: np.ndarray, i: int, cfg: np.ndarray, rng: Any, worlds: int) -> int:
    """The discard phase's action in row ``i`` when big gin is not legal
    (``MasterAgent.choose_discard`` after :meth:`.base.TakeGuard.useful_only`)."""
    p = H.mover(s, i)
    hand = H.hand_of(s, i, p)
    allowed, knocks, _ = H.discard_options(s, i, cfg)
    allowed = take_guarded(hand, H.just_taken(s, i), allowed)
    ids, w, known, slots, turns = model_of(s, i, p)
    q = stock_odds(ids, w, known, slots)
    feed = sample_hands(rng, FEED_SAMPLES, ids, w, known, slots, turns, H.knock_limit_of(s, i), BELIEF_TRAP)
    values = discard_values(hand, allowed | knocks, q, feed_weight(s, i) * meld_rate(feed), -1)
    ranked = in_order(values, allowed)
    kinds = np.empty(KNOCK_CANDIDATES + DISCARD_CANDIDATES + 1, dtype=np.int64)
    cards = np.empty(kinds.size, dtype=np.int64)
    no = 0
    if knocks:
        # The least deadwood for each distinct deadwood left, the first card of each in order.
        order = in_order(values, knocks)
        seen = 0  # deadwoods seen, as bits
        firsts = np.full(HAND_SIZE + 1, -1, dtype=np.int64)
        for c in order:
            left = min_deadwood(hand ^ (np.int64(1) << c))
            if not (seen >> left) & 1:
                seen |= 1 << left
                firsts[left] = c
        if firsts[0] >= 0:
            return KNOCK_BASE + firsts[0]
        for left in range(firsts.size):
            if firsts[left] >= 0 and no < KNOCK_CANDIDATES:
                kinds[no] = KNOCK
                cards[no] = firsts[left]
                no += 1
        n_plain = min(DISCARD_CANDIDATES, ranked.size)
        extra = cards[0]
        for j in range(n_plain):
            kinds[no] = PLAY_ON
            cards[no] = ranked[j]
            no += 1
            if ranked[j] == extra:
                extra = -1
        # Playing on with the knock's own discard keeps the knockable hand for later.
        if extra >= 0 and (allowed >> extra) & 1:
            kinds[no] = PLAY_ON
            cards[no] = extra
            no += 1
        means = simulate(s, i, cfg, rng, worlds, kinds[:no], cards[:no])
        for j in range(no):
            if kinds[j] == PLAY_ON:
                means[j] -= PLAY_ON_MARGIN
        best = _argmax(means)
        return (KNOCK_BASE if kinds[best] == KNOCK else DISCARD_BASE) + cards[best]
    if not SIMULATE_DISCARDS or ranked.size <= 1:
        return DISCARD_BASE + ranked[0]
    shown = H.public_cards(s, i, 1 - p)[0]
    wanted = max(2, DISCARD_CANDIDATES)
    for j in range(ranked.size):
        if no == wanted:
            break
        c = ranked[j]
        bit = np.int64(1) << c
        if j == 0 or not SKIP_SHOWN_MELDS or not (meldable(shown | bit) >> c) & 1:
            kinds[no] = PLAY_ON
            cards[no] = c
            no += 1
    if no == 1:
        return DISCARD_BASE + cards[0]
    means = simulate(s, i, cfg, rng, worlds, kinds[:no], cards[:no])
    return DISCARD_BASE + cards[_argmax(means)]


@njit(cache=True)
def master_takes(s: np.ndarray, i: int, cfg: np.ndarray, rng: Any, worlds: int, top: int) -> bool:
    """Whether the seat to move in row ``i`` takes ``top`` (``MasterAgent.wants_top``)."""
    hand = H.hand_of(s, i, H.mover(s, i))
    if not useful_discards(hand | (1 << top), top):
        return False  # a wasted turn, and the way two players cycle cards through the pile
    kinds = np.array([TAKE_TOP, DRAW], dtype=np.int64)
    cards = np.array([top, -1], dtype=np.int64)
    means = simulate(s, i, cfg, rng, worlds, kinds, cards)
    return means[0] > means[1]


@njit(cache=True)
def master_action(s: np.ndarray, i: int, cfg: np.ndarray, rng: Any, worlds: int) -> int:
    """The master level's action for the seat to move in row ``i`` with ``worlds`` worlds per
    simulated decision, drawing from ``rng`` (a numpy Generator: exactly ``MasterAgent.act`` with
    that generator; None: numba's generator of this thread); -1 for a row whose hand is over."""
    step, top, _, _ = level_turn(s, i, cfg)
    if step == TAKE_OR_NOT:
        return DRAW_DISCARD if master_takes(s, i, cfg, rng, worlds, top) else no_take(s, i)
    return master_discard(s, i, cfg, rng, worlds) if step == DISCARD else step


@njit(cache=True)
def seeded_action(s: np.ndarray, i: int, cfg: np.ndarray, worlds: int) -> int:
    """:func:`master_action` drawing from numba's generator seeded by
    :func:`.compiled_base.view_seed`."""
    seed_by_view(s, i)
    return master_action(s, i, cfg, None, worlds)


@njit(cache=True)
def master_policy(s: np.ndarray, i: int, cfg: np.ndarray) -> int:
    """The compiled-policy table's ``master``: :func:`seeded_action` at the shipped width."""
    return seeded_action(s, i, cfg, WORLDS)


@njit(cache=True, nogil=True)
def master_actions(s: np.ndarray, cfg: np.ndarray, slots: np.ndarray, out: np.ndarray, worlds: int) -> None:
    """``out[k] = seeded_action(s, slots[k], cfg, worlds)`` for each row index of ``slots``."""
    for k in range(slots.size):
        out[k] = seeded_action(s, slots[k], cfg, worlds)


def check_worlds(worlds: object) -> int:
    """``worlds`` as a width, or ValueError in one line saying what is allowed."""
    allowed = f"master's worlds must be an integer from {MIN_WORLDS} to {MAX_WORLDS}"
    if isinstance(worlds, bool) or not isinstance(worlds, int | np.integer):
        raise ValueError(f"{allowed}, got {worlds!r}")
    if not MIN_WORLDS <= worlds <= MAX_WORLDS:
        raise ValueError(f"{allowed}, got {worlds}")
    return int(worlds)


def master_moves(venv: VectorGinRummy, slots: np.ndarray, worlds: int = WORLDS) -> np.ndarray:
    """The compiled master's action (``worlds`` worlds, the engine opponent's generator) for the seat
    to move in each of the ``slots`` (row indices) of ``venv``, as an int64 array in the order of
    ``slots`` (-1 where the hand is over)."""
    worlds = check_worlds(worlds)
    rows = slot_rows(slots, venv.num_envs)
    out = np.empty(rows.size, dtype=np.int64)
    master_actions(venv.batch.state, venv.rule_array, rows, out, worlds)
    return out


_POLICIES: dict[int, Callable[..., int]] = {WORLDS: master_policy}


def master_policy_for(worlds: object = WORLDS) -> Callable[..., int]:
    """The compiled policy ``(state, i, cfg) -> action`` of master at width ``worlds`` (one njit
    function per width, made once per process; the shipped width is :func:`master_policy`)."""
    width = check_worlds(worlds)
    if width not in _POLICIES:

        @njit(cache=True)
        def policy(s: np.ndarray, i: int, cfg: np.ndarray) -> int:
            return seeded_action(s, i, cfg, width)

        _POLICIES[width] = policy
    return _POLICIES[width]


__all__ = [
    "MAX_WORLDS",
    "MIN_WORLDS",
    "WORLDS",
    "check_worlds",
    "master_action",
    "master_actions",
    "master_discard",
    "master_moves",
    "master_policy",
    "master_policy_for",
    "master_takes",
    "seeded_action",
    "simulate",
]
