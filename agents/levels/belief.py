"""The Bayesian opponent model of the expert and master levels, and a fast showdown for simulations.

:class:`OpponentModel` estimates, for every card, the probability that the opponent holds it, from
the observations of one seat only (``observe()``; never the engine). The seat's public record
(:class:`ginenv.public_record.PublicRecord`) reads the hand's moves from them, and the opponent's
become events: it *took* card ``c`` from the discard pile, *passed* over ``c`` (declined the upcard,
or drew from the stock with ``c`` on top), *discarded* ``c``.

**Facts** (exact): the cards in ``opponent_taken`` are held (probability 1); the own hand, the
discard pile and every discarded card are not (0). The opponent's other cards, ``k = 10 - |taken|``
of them when this seat decides, lie among the ``unseen`` cards ``U`` (the rest of ``U`` is the
stock).

**Prior**: the deal is uniform, so before any event every ``k``-subset of ``U`` is equally likely.

**Likelihood of the opponent's play** (an explicit per-card model, so that the posterior keeps a
product form): each event multiplies the weight ``w_x`` of every unknown card ``x`` related to the
event's card ``c`` by a factor ``f`` (the likelihood ratio of the event between "x held" and "x not
held"):

| event               | x of c's rank | x = c +- 1 in suit | x = c +- 2 in suit | x worth more than c |
|---------------------|---------------|--------------------|--------------------|---------------------|
| took c from pile    | take_rank     | take_adjacent      | take_gap           | -                   |
| passed over c       | pass_rank     | pass_adjacent      | pass_gap           | -                   |
| discarded c         | disc_rank     | disc_adjacent      | disc_gap           | disc_higher         |

A taken card makes its meld partners likelier (``f > 1``: they took it to meld); a passed or
discarded card makes them less likely (``f < 1``: holding them, they would have taken or kept it);
a discard also makes unrelated higher cards slightly less likely (deadwood is thrown high first).
Evidence fades: ``x`` held now may have been drawn from the stock *after* the event, when the event
says nothing about it. With ``a = memory ** m`` the chance that it was already held (``m`` opponent
draws since the event), the factor applied is the mixture ``1 + a (f - 1)``. A taken card that is
discarded later withdraws its take event.

**Posterior**: ``P(H) ∝ prod_{x in H} w_x`` over the ``k``-subsets ``H`` of ``U`` (a conditional
Bernoulli distribution). Its marginals are exact, from elementary symmetric polynomials
(``p_x = w_x e_{k-1}(w without x) / e_k(w)``; they lie in [0, 1] and sum to ``k`` by construction,
which the brief's "normalise and clip" only approximates), and whole hands are sampled *exactly*
from the same distribution by a sequential draw (:func:`sample_subsets`), so the sampled hands and
the reported probabilities never disagree.

**Hand quality** (for sampled hands only): an opponent who has played ``t`` turns has improved their
hand, which a product of per-card weights cannot say. :meth:`OpponentModel.sample_hands` can tilt
the samples by ``exp(-beta(t) * deadwood(H))`` with a short Metropolis chain of card swaps started
from the exact samples (``beta(t) = quality * min(t, quality_turns) / quality_turns``), so that the
sampled deadwoods follow what opponents really hold at that stage; the master's undercut risk
depends on it. The parameters' defaults were fitted on self-play logs with
``benchmarks/bench_belief.py`` (log-loss of the per-card probabilities; mean and tail of the
opponent's deadwood for the tilt).

**Knocks against sampled hands** (:class:`Knock`): the knocker's showdown melds are arranged once
(:func:`ginenv.kernels.showdown_melds`, the engine's tie-break) and scored against many defender
hands with the compiled layoffs of :mod:`ginenv.kernels` (:func:`ginenv.kernels.defend_knock`);
``tests/agents/test_belief.py`` checks them against :func:`ginenv.scoring.score_knock`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from numba import njit

from ginenv import compiling
from ginenv.cards import CARD_NAMES, CARD_VALUES, NUM_CARDS, NUM_RANKS, cards_of
from ginenv.kernels import RANK_MASK, defend_knock, min_deadwood, showdown_melds
from ginenv.observation import SeatView
from ginenv.public_record import OPP, Move, PublicRecord
from ginenv.rules import Rules

T = TypeVar("T")


class EventKind(enum.IntEnum):
    """What the opponent did with a card, as the model reads it from the observations."""

    #: Took it from the discard pile (the upcard or the top discard).
    TAKE = 0
    #: Passed over it: declined the upcard, or drew from the stock with it on top of the pile.
    PASS = 1
    #: Discarded it.
    DISCARD = 2


@dataclass(frozen=True)
class BeliefParams:
    """Likelihood factors of the opponent model (see the module docstring for their meaning)."""

    take_rank: float = 3.7
    take_adjacent: float = 3.5
    take_gap: float = 2.5
    pass_rank: float = 0.45
    pass_adjacent: float = 0.52
    pass_gap: float = 0.72
    disc_rank: float = 0.38
    disc_adjacent: float = 0.43
    disc_gap: float = 0.69
    disc_higher: float = 0.93
    #: Chance per opponent draw that evidence about a card still applies (it was held back then).
    memory: float = 1.0
    #: Deadwood tilt of sampled hands at full strength (per deadwood point).
    quality: float = 0.25
    #: Opponent turns after which the tilt is at full strength.
    quality_turns: int = 10
    #: Factor on sampled hands the opponent would have knocked with but did not: gin, or a
    #: deadwood above ``trap`` and within the knock limit.
    no_knock: float = 0.5
    #: Opponents commonly keep hands of deadwood 1 to ``trap`` to wait for gin or an undercut.
    trap: int = 8

    def factors(self, kind: EventKind) -> tuple[float, float, float]:
        """(same rank, adjacent, gap) factors of an event kind."""
        if kind == EventKind.TAKE:
            return self.take_rank, self.take_adjacent, self.take_gap
        if kind == EventKind.PASS:
            return self.pass_rank, self.pass_adjacent, self.pass_gap
        return self.disc_rank, self.disc_adjacent, self.disc_gap


def related(card: int) -> tuple[int, int, int]:
    """(same-rank cards, cards one step away in the suit, cards two steps away) of ``card``, as masks."""
    r = card % NUM_RANKS
    same = int(RANK_MASK[r]) & ~(1 << card)
    adjacent = gap = 0
    for step, is_gap in ((1, False), (2, True)):
        for sign in (-1, 1):
            rr = r + sign * step
            if 0 <= rr < NUM_RANKS:
                if is_gap:
                    gap |= 1 << (card + sign * step)
                else:
                    adjacent |= 1 << (card + sign * step)
    return same, adjacent, gap


def _relation_tables() -> np.ndarray:
    """``T[r, c]``: 52-entry indicator of the cards in relation ``r`` to card ``c`` (0 same rank,
    1 adjacent in suit, 2 two steps in suit, 3 worth more than ``c`` and in none of the others)."""
    table = np.zeros((4, NUM_CARDS, NUM_CARDS))
    for c in range(NUM_CARDS):
        near = 0
        for r, mask in enumerate(related(c)):
            near |= mask
            table[r, c, cards_of(mask)] = 1.0
        for x in range(NUM_CARDS):
            if CARD_VALUES[x] > CARD_VALUES[c] and not near >> x & 1:
                table[3, c, x] = 1.0
    return table


#: ``RELATIONS[r, c, x]``: 1 where card ``x`` is in relation ``r`` to card ``c`` (:func:`_relation_tables`).
RELATIONS = _relation_tables()


@dataclass(frozen=True)
class Event:
    """One public action of the opponent: its :class:`EventKind`, its card, and ``time``, the number of
    opponent discards (completed turns) when it was seen."""

    kind: EventKind
    card: int
    time: int

    def __str__(self) -> str:
        return f"{self.kind.name.lower()} {CARD_NAMES[self.card]} @{self.time}"


#: The order of one turn's events: the draw (a pass, or a take) before the discard.
_ORDER = {EventKind.PASS: 0, EventKind.TAKE: 1, EventKind.DISCARD: 2}


def _evidence(record: PublicRecord, index: int) -> tuple[EventKind, int]:
    """What the record's move ``index`` says of the opponent's cards: (kind, card), card -1 when
    nothing (the seat's own moves; a stock draw over a card the opponent had passed over already)."""
    who, move, card = record.events[index]
    if who != OPP:
        return EventKind.PASS, -1
    if move == Move.STOCK:
        # A stock draw passes over the top of the pile.
        state = record.states[index]
        if state is None or state.top < 0 or state.passed[OPP] >> state.top & 1:
            return EventKind.PASS, -1
        return EventKind.PASS, state.top
    kind = {Move.PASS: EventKind.PASS, Move.TAKE: EventKind.TAKE, Move.DISCARD: EventKind.DISCARD}[move]
    return kind, card


class OpponentModel:
    """Per-card probabilities that the opponent holds each card, and hands sampled from them.

    Feed it every observation of the hand with :meth:`update` (repeats are harmless; a new hand is
    detected and the model restarts); call :meth:`reset` at the start of a hand. The hand's moves are
    read by :attr:`record`, the seat's :class:`~ginenv.public_record.PublicRecord`.
    """

    def __init__(self, params: BeliefParams | None = None) -> None:
        """A model with these likelihood factors (default: :class:`BeliefParams`)."""
        self.params = params or BeliefParams()
        self.record = PublicRecord()
        self.events: list[Event] = []
        self._cache: dict[str, object] = {}

    def reset(self) -> None:
        """Forget the hand."""
        self.record.reset()
        self.events = []
        self._cache = {}

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()``, kept until the model's state changes (a new event or new unseen cards):
        for values a caller derives from the beliefs, e.g. master's feeding risk of each card."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]  # type: ignore[return-value]

    # ------------------------------------------------------------------ events

    def update(self, view: SeatView) -> None:
        """Read one observation of this seat; the opponent's new moves become events."""
        record = self.record
        prev = record.view
        read = len(record.events)
        started = record.update(view)
        if started:
            self.events, read = [], 0
        elif record.view is prev:
            return  # a repeat
        now = view.opponent_discarded.bit_count()
        new = [
            Event(kind, card, now)
            for kind, card in (_evidence(record, i) for i in range(read, len(record.events)))
            if card >= 0
        ]
        # Within a turn the draw (pass or take) comes before the discard.
        new.sort(key=lambda ev: (_ORDER[ev.kind], ev.card))
        self.events += new
        if started or new or prev is None or view.unseen != prev.unseen:
            self._cache = {}

    @property
    def view(self) -> SeatView:
        """The last observation read."""
        if self.record.view is None:
            raise RuntimeError("OpponentModel.update() has not been given an observation yet")
        return self.record.view

    @property
    def known(self) -> int:
        """Cards the opponent certainly holds (taken from the pile, not discarded since)."""
        return self.record.opponent_held

    @property
    def unknown(self) -> int:
        """Cards that may be the opponent's unknown cards (the unseen cards: these and the stock)."""
        return self.record.unseen

    @property
    def slots(self) -> int:
        """How many of the opponent's cards are unknown (10 minus the known ones)."""
        return self.record.opponent_hidden

    @property
    def turns(self) -> int:
        """Opponent turns completed this hand (its discards)."""
        return self.record.opponent_turns

    # ------------------------------------------------------------------ beliefs

    def log_weights(self) -> np.ndarray:
        """Log of the per-card weight ``w_x`` (52 entries; only the unseen cards' entries are used)."""
        cached = self._cache.get("logw")
        if cached is not None:
            return cached  # type: ignore[return-value]
        p = self.params
        logw = np.zeros(NUM_CARDS)
        now = self.turns
        withdrawn = self.view.opponent_discarded
        for ev in self.events:
            if ev.kind == EventKind.TAKE and withdrawn >> ev.card & 1:
                continue
            a = p.memory ** max(0, now - ev.time)
            factors = p.factors(ev.kind) + ((p.disc_higher,) if ev.kind == EventKind.DISCARD else ())
            for r, f in enumerate(factors):
                if f != 1.0:
                    logw += np.log1p(a * (f - 1.0)) * RELATIONS[r, ev.card]
        self._cache["logw"] = logw
        return logw

    def _unknown_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(unseen card ids, their weights normalised to mean 1)."""
        cached = self._cache.get("arrays")
        if cached is not None:
            return cached  # type: ignore[return-value]
        ids = np.array(cards_of(self.unknown), dtype=np.int64)
        logw = self.log_weights()[ids] if ids.size else np.zeros(0)
        if ids.size:
            logw = logw - logw.mean()
        w = np.exp(logw)
        self._cache["arrays"] = (ids, w)
        return ids, w

    def probabilities(self) -> np.ndarray:
        """P(opponent holds card) for the 52 cards: 1 for known cards, 0 for cards gone, and the exact
        posterior marginals for the unseen ones (they sum to :attr:`slots`)."""
        cached = self._cache.get("probs")
        if cached is not None:
            return cached.copy()  # type: ignore[attr-defined]
        out = np.zeros(NUM_CARDS)
        for c in cards_of(self.known):
            out[c] = 1.0
        ids, w = self._unknown_arrays()
        if ids.size:
            out[ids] = subset_marginals(w, self.slots)
        self._cache["probs"] = out
        return out.copy()

    def uniform_probabilities(self) -> np.ndarray:
        """The baseline: the same facts, and the unknown slots spread evenly over the unseen cards."""
        out = np.zeros(NUM_CARDS)
        for c in cards_of(self.known):
            out[c] = 1.0
        ids = cards_of(self.unknown)
        if ids:
            out[ids] = self.slots / len(ids)
        return out

    def stock_probabilities(self) -> np.ndarray:
        """P(the next stock card is card c): unseen cards not held by the opponent, evenly ordered."""
        p = self.probabilities()
        out = np.zeros(NUM_CARDS)
        ids = cards_of(self.unknown)
        if ids:
            free = 1.0 - p[ids]
            total = free.sum()
            out[ids] = free / total if total > 0 else 1.0 / len(ids)
        return out

    def beta(self) -> float:
        """Deadwood tilt of sampled hands at the current stage."""
        p = self.params
        return p.quality * min(self.turns, p.quality_turns) / max(1, p.quality_turns)

    def sample_hands(
        self, n: int, rng: np.random.Generator, quality: bool = True, sweeps: int = 8, trap: int | None = None
    ) -> np.ndarray:
        """``n`` whole opponent hands (int64 card masks, known cards included) drawn from the posterior.

        With ``quality`` the exact draws are moved by ``sweeps * slots`` Metropolis swaps towards
        ``exp(-beta * deadwood)``, and hands the opponent would have knocked get the factor
        ``no_knock`` (see the module docstring): deadwood 0, or above ``trap`` and within the knock
        limit (``trap``: an opponent that keeps hands of deadwood 1 to ``trap`` to wait for gin or
        an undercut; default :attr:`BeliefParams.trap`). The random numbers all come from ``rng``.
        """
        if trap is None:
            trap = self.params.trap
        ids, w = self._unknown_arrays()
        k = self.slots
        u = rng.random((n, ids.size))
        hands = sample_subsets(w, k, ids, u, self.known)
        beta = self.beta() if quality else 0.0
        # The opponent has discarded at least once without knocking: low hands are less likely.
        penalty = -np.log(self.params.no_knock) if quality and self.turns > 0 else 0.0
        if (beta > 0.0 or penalty > 0.0) and 0 < k < ids.size and sweeps > 0:
            steps = sweeps * k
            r = rng.random((n, steps, 3))
            tilt_chains(hands, ids, w, k, self.known, beta, penalty, self.view.knock_limit, trap, r)
        return hands


# ------------------------------------------------------------------------- compiled functions


@njit(cache=True)
def suffix_esp(w: np.ndarray, k: int) -> np.ndarray:
    """``E[i, j] = e_j(w[i:])``, the elementary symmetric polynomials of every suffix of ``w``."""
    n = w.size
    e = np.zeros((n + 1, k + 1))
    e[n, 0] = 1.0
    for i in range(n - 1, -1, -1):
        e[i, 0] = 1.0
        for j in range(1, k + 1):
            e[i, j] = e[i + 1, j] + w[i] * e[i + 1, j - 1]
    return e


@njit(cache=True)
def subset_marginals(w: np.ndarray, k: int) -> np.ndarray:
    """Exact inclusion probabilities of each item under ``P(S) ∝ prod_{i in S} w_i``, ``|S| = k``."""
    n = w.size
    out = np.zeros(n)
    if k <= 0:
        return out
    if k >= n:
        out[:] = 1.0
        return out
    suf = suffix_esp(w, k)
    pre = np.zeros(k + 1)  # e_j(w[:i])
    pre[0] = 1.0
    total = suf[0, k]
    for i in range(n):
        acc = 0.0
        for j in range(k):
            acc += pre[j] * suf[i + 1, k - 1 - j]
        out[i] = min(1.0, w[i] * acc / total)
        for j in range(k, 0, -1):
            pre[j] += w[i] * pre[j - 1]
    return out


@njit(cache=True)
def sample_subsets(w: np.ndarray, k: int, ids: np.ndarray, u: np.ndarray, base: int) -> np.ndarray:
    """One exact draw of ``P(S) ∝ prod w`` per row of uniforms ``u``; each returned as a card mask
    (``ids`` maps items to cards) together with the ``base`` cards."""
    n = w.size
    m = u.shape[0]
    out = np.empty(m, dtype=np.int64)
    if k >= n:
        full = base
        for i in range(n):
            full |= np.int64(1) << ids[i]
        out[:] = full
        return out
    suf = suffix_esp(w, k)
    for s in range(m):
        mask = base
        r = k
        for i in range(n):
            if r == 0:
                break
            if u[s, i] * suf[i, r] < w[i] * suf[i + 1, r - 1]:
                mask |= np.int64(1) << ids[i]
                r -= 1
        out[s] = mask
    return out


@njit(cache=True)
def _knockable(dw: int, limit: int, trap: int) -> bool:
    """Whether an opponent would have knocked with deadwood ``dw`` (gin, or above its trap)."""
    return dw <= limit and (dw == 0 or dw > trap)


@njit(cache=True)
def tilt_chains(
    hands: np.ndarray,
    ids: np.ndarray,
    w: np.ndarray,
    k: int,
    base: int,
    beta: float,
    penalty: float,
    limit: int,
    trap: int,
    r: np.ndarray,
) -> None:
    """Metropolis swaps, in place, towards ``P(H) ∝ prod w * exp(-beta * deadwood(H))``, times
    ``exp(-penalty)`` when the opponent would have knocked ``H`` (:func:`_knockable`)."""
    n = ids.size
    held = np.empty(k, dtype=np.int64)
    free = np.empty(n - k, dtype=np.int64)
    for s in range(hands.shape[0]):
        mask = hands[s]
        a = 0
        b = 0
        for i in range(n):
            if (mask >> ids[i]) & 1:
                held[a] = i
                a += 1
            else:
                free[b] = i
                b += 1
        dw = min_deadwood(mask)
        energy = beta * dw + (penalty if _knockable(dw, limit, trap) else 0.0)
        for t in range(r.shape[1]):
            ia = int(r[s, t, 0] * k)
            ib = int(r[s, t, 1] * (n - k))
            i, j = held[ia], free[ib]
            cand = (mask & ~(np.int64(1) << ids[i])) | (np.int64(1) << ids[j])
            dw2 = min_deadwood(cand)
            energy2 = beta * dw2 + (penalty if _knockable(dw2, limit, trap) else 0.0)
            ratio = w[j] / w[i] * np.exp(energy - energy2)
            if r[s, t, 2] < ratio:
                mask = cand
                energy = energy2
                held[ia] = j
                free[ib] = i
        hands[s] = mask


@njit(cache=True)
def knock_points_many(
    melds: np.ndarray, knocker_deadwood: int, defenders: np.ndarray, gin_bonus: int, undercut_bonus: int
) -> np.ndarray:
    """The knocker's points (negative: the defender's) with ``melds`` laid down and
    ``knocker_deadwood`` left, against each defender hand of ``defenders`` (int64 masks): one
    compiled loop instead of one Python call each."""
    out = np.empty(defenders.size, dtype=np.int64)
    for i in range(defenders.size):
        out[i] = defend_knock(melds, knocker_deadwood, defenders[i], gin_bonus, undercut_bonus)[1]
    return out


@dataclass(frozen=True)
class Knock:
    """A knocker's 10 cards laid down (least deadwood, the engine's tie-break), ready for scoring."""

    hand: int
    melds: np.ndarray
    deadwood: int

    @classmethod
    def of(cls, hand: int) -> Knock:
        """Arrange the knocker's 10 cards exactly as the showdown will."""
        return cls(hand, showdown_melds(hand), int(min_deadwood(hand)))

    def points(self, defenders: np.ndarray, rules: Rules | None = None) -> np.ndarray:
        """The knocker's points (negative: the defender's) against each defender hand (int64 masks)."""
        rules = rules or Rules()
        return knock_points_many(  # type: ignore[no-any-return]
            self.melds,
            self.deadwood,
            np.asarray(defenders, dtype=np.int64),
            rules.gin_bonus,
            rules.undercut_bonus,
        )


# The compiled entry points of the opponent model (ginenv.compiling): its marginals, and the
# sampled hands that only some levels draw.
compiling.register(OpponentModel, subset_marginals)
compiling.register(OpponentModel.sample_hands, sample_subsets, tilt_chains)

__all__ = [
    "RELATIONS",
    "BeliefParams",
    "Event",
    "EventKind",
    "Knock",
    "OpponentModel",
    "knock_points_many",
    "related",
    "sample_subsets",
    "subset_marginals",
    "suffix_esp",
    "tilt_chains",
]
