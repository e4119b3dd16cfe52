"""Shared card evaluation and the base class of the heuristic levels (greedy, easy, normal, hard,
expert, master: :class:`HeuristicAgent`).

Everything works on card bitmasks (``ginenv.cards``: bit ``c`` set for card ``c``) read from an
observation with :func:`ginenv.observation.decode`, so an agent sees nothing but its own seat's view.
The hot loops are numba kernels (``cache=True``) built on the compiled rule primitives of
:mod:`ginenv.kernels` (the one home of the deadwood search and the showdown); the public functions
below are thin typed wrappers around them. Their names and meanings are stable: other levels
import them.

Vocabulary used throughout:

* **deadwood** ``dw(h)``: the least deadwood of exactly the cards ``h`` (``deadwood_of_mask``).
* **after-draw deadwood** of a 10-card hand ``h`` and a drawn card ``c``: the least deadwood after
  adding ``c`` and discarding the best card, ``min_x dw(h + c - x)``. When ``c`` can be in no meld
  of ``h + c`` it is plain deadwood, so the value is ``min(dw(h), value(c) + min_x dw(h - x))``
  without any new search (the kernels use this shortcut for most unseen cards).
* **outs** of a 10-card hand: the candidate cards (usually the unseen ones) whose draw lowers the
  after-draw deadwood below ``dw(h)``; **meld outs**: those that would be melded; **gin outs**:
  those that give deadwood 0 after the best discard.
* **expected deadwood** of a 10-card hand: the mean after-draw deadwood over the candidate cards,
  each taken as equally likely to be drawn next (the stock is a uniform subset of the unseen cards).
  The **expected cost** adds a surcharge ``miss`` for every draw that leaves the hand above the
  knock limit (:func:`discard_scores`); ``miss = 0`` gives the expected deadwood back.
* **stock value** of a 10-card hand (:func:`stock_value`): the expected cost one turn further on
  when drawing from the stock now, to compare with taking the top discard.
* **live** cards: the cards the opponent may hold (unseen, plus the ones it took from the pile and
  still holds); a meld the opponent could still make must consist of live cards.
* **danger** of a discard: a score of how much the card may help the opponent (see
  :func:`danger_scores` for the exact formula).
* **useful take**: taking the top discard ``t`` into the 10-card hand ``h`` is useful when some
  discard ``d`` other than ``t`` leaves ``dw(h + t - d) < dw(h)`` (:func:`useful_discards`). Every
  level takes only useful discards, and after a take throws only a card that keeps it useful
  (:class:`TakeGuard`). A take that lowers nothing, followed by the throw of an equal card (Ac for
  Ah, Kc for Qd), is a wasted turn, and two players doing it pass the same cards back and forth
  through the discard pile forever. With the rule, every take strictly lowers the taker's deadwood
  and the stock is finite, so no level can cycle, whatever the rule on throwing back the card just
  taken (``Rules.discard_taken_card``): that card is never a useful discard.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping

import numpy as np
from ginenv.agents.base import Agent, Observation
from numba import njit

from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.cards import CARD_VALUES, NUM_CARDS, cards_of
from ginenv.kernels import CARD_VALUE, best_discards, layoff_deadwood, min_deadwood
from ginenv.kernels import meldable as _meldable_kernel
from ginenv.observation import SeatView, decode

#: Danger weight of a meld window for each of its other cards the opponent took from the pile.
TAKEN_WEIGHT = 2.0
#: Factor applied to set (run) windows when the opponent discarded or passed a card of the same
#: rank (a same-suit card within two ranks): evidence that it is not collecting them.
AVOIDED_FACTOR = 0.5


# --------------------------------------------------------------------------- numba kernels


@njit(cache=True)
def after_draw(hand: int, card: int, base: int, best_minus_one: int) -> int:
    """Least deadwood of ``hand + card`` after its best discard (the levels' shared kernel).

    ``base`` is ``dw(hand)`` and ``best_minus_one`` is ``min_x dw(hand - x)``: when ``card`` can be
    in no meld they settle the value without a search.
    """
    bit = 1 << card
    grown = hand | bit
    if _meldable_kernel(grown) & bit:
        return best_discards(grown)[0]
    return min(base, CARD_VALUE[card] + best_minus_one)


@njit(cache=True)
def _draw_table(hand: int, candidates: int) -> np.ndarray:
    """After-draw deadwood of ``hand`` for each card of ``candidates`` (-1 for other cards)."""
    out = np.full(NUM_CARDS, -1, dtype=np.int64)
    if hand == 0:
        base = 0
        best_minus_one = 0
    else:
        base = min_deadwood(hand)
        best_minus_one = best_discards(hand)[0]
    for c in range(NUM_CARDS):
        if (candidates >> c) & 1:
            out[c] = after_draw(hand, c, base, best_minus_one)
    return out


@njit(cache=True)
def _expected_cost(hand: int, candidates: int, limit: int, miss: float) -> float:
    """Mean over the candidates of ``after-draw deadwood + miss * [after-draw deadwood > limit]``."""
    base = min_deadwood(hand)
    if candidates == 0:
        return base + (miss if base > limit else 0.0)
    best_minus_one = best_discards(hand)[0]
    total = 0.0
    n = 0
    for c in range(NUM_CARDS):
        if (candidates >> c) & 1:
            value = after_draw(hand, c, base, best_minus_one)
            total += value
            if value > limit:
                total += miss
            n += 1
    return total / n


@njit(cache=True)
def _discard_scores(
    hand: int, candidates: int, allowed: int, penalty: np.ndarray, limit: int, miss: float
) -> np.ndarray:
    """``expected_cost(hand - d, candidates) + penalty[d]`` for each allowed ``d`` (inf elsewhere)."""
    out = np.full(NUM_CARDS, np.inf)
    for d in range(NUM_CARDS):
        if (allowed >> d) & 1:
            out[d] = _expected_cost(hand ^ (1 << d), candidates, limit, miss) + penalty[d]
    return out


@njit(cache=True)
def _sensible_discards(hand: int) -> int:
    """Cards whose discard does not break a meld: deadwood in some least-deadwood arrangement
    (``dw(hand - d) + value(d) == dw(hand)``) or a spare melded card (``dw(hand - d) == dw(hand)``)."""
    base = min_deadwood(hand)
    out = 0
    for d in range(NUM_CARDS):
        if (hand >> d) & 1:
            left = min_deadwood(hand ^ (1 << d))
            if left == base or left + CARD_VALUE[d] == base:
                out |= 1 << d
    return out


@njit(cache=True)
def _stock_value(hand: int, candidates: int, penalty: np.ndarray, limit: int, miss: float) -> float:
    """Mean over the candidate draws ``c`` of ``min_d [expected_deadwood(hand + c - d) + penalty[d]]``,
    the next draw's candidates being ``candidates - c``."""
    total = 0.0
    n = 0
    for c in range(NUM_CARDS):
        if (candidates >> c) & 1:
            bit = 1 << c
            grown = hand | bit
            rest = candidates ^ bit
            sensible = _sensible_discards(grown) | bit
            best = np.inf
            for d in range(NUM_CARDS):
                if (sensible >> d) & 1:
                    value = _expected_cost(grown ^ (1 << d), rest, limit, miss) + penalty[d]
                    if value < best:
                        best = value
            total += best
            n += 1
    if n == 0:
        return np.inf
    return total / n


@njit(cache=True)
def _danger_scores(live: int, taken: int, avoided: int) -> np.ndarray:
    """Danger of every card as a discard (see :func:`danger_scores`)."""
    out = np.zeros(NUM_CARDS)
    for card in range(NUM_CARDS):
        r = card % 13
        s = card // 13
        # Sets: three-card sets through ``card`` need two live cards of its rank.
        partners = 0
        taken_partners = 0
        rank_avoided = False
        for t in range(4):
            if t == s:
                continue
            other = t * 13 + r
            if (live >> other) & 1:
                partners += 1
                if (taken >> other) & 1:
                    taken_partners += 1
            if (avoided >> other) & 1:
                rank_avoided = True
        set_score = 0.0
        if partners >= 2:
            # Each pair of live partners is one window; taken partners weigh more.
            windows = partners * (partners - 1) / 2
            set_score = windows + TAKEN_WEIGHT * taken_partners * (partners - 1)
            if rank_avoided:
                set_score *= AVOIDED_FACTOR
        # Runs: the (up to) three three-card windows of the suit through ``card``.
        run_score = 0.0
        for lo in range(r - 2, r + 1):
            if lo < 0 or lo + 2 > 12:
                continue
            ok = True
            weight = 1.0
            for k in range(lo, lo + 3):
                if k == r:
                    continue
                other = s * 13 + k
                if not (live >> other) & 1:
                    ok = False
                    break
                if (taken >> other) & 1:
                    weight += TAKEN_WEIGHT
            if ok:
                run_score += weight
        if run_score > 0.0:
            for k in range(max(0, r - 2), min(12, r + 2) + 1):
                if k != r and (avoided >> (s * 13 + k)) & 1:
                    run_score *= AVOIDED_FACTOR
                    break
        out[card] = set_score + run_score
    return out


@njit(cache=True)
def _useful_discards(grown: int, taken: int) -> int:
    """Cards ``d != taken`` of ``grown`` with ``dw(grown - d) < dw(grown - taken)``."""
    before = min_deadwood(grown ^ (1 << taken))
    out = 0
    for d in range(NUM_CARDS):
        if d != taken and (grown >> d) & 1 and min_deadwood(grown ^ (1 << d)) < before:
            out |= 1 << d
    return out


@njit(cache=True)
def knock_points(
    melds: np.ndarray, knocker_deadwood: int, defender: int, gin_bonus: int, undercut_bonus: int
) -> int:
    """Points of a 10-card knock for the knocker (negative: the defender's undercut) against one
    defender hand, the knocker's showdown ``melds`` (:func:`ginenv.kernels.showdown_melds`) and
    deadwood computed once for many defenders.

    The score of :func:`ginenv.kernels.knock_outcome` without its per-call arrangement search: the
    simulations score one knock against hundreds of sampled hands.
    """
    if knocker_deadwood == 0:
        return gin_bonus + min_deadwood(defender)
    left = layoff_deadwood(melds, defender)
    if left <= knocker_deadwood:
        return -(knocker_deadwood - left + undercut_bonus)
    return left - knocker_deadwood


# --------------------------------------------------------------------------- public helpers


def legal_discards(observation: Mapping[str, np.ndarray]) -> int:
    """Bitmask of the cards the action mask lets this seat discard (with or without a knock)."""
    mask = observation["action_mask"]
    out = 0
    for c in np.flatnonzero(mask[DISCARD_BASE:KNOCK_BASE]):
        out |= 1 << int(c)
    return out


def legal_knocks(observation: Mapping[str, np.ndarray]) -> int:
    """Bitmask of the cards this seat may discard while knocking (the knock actions in the mask)."""
    mask = observation["action_mask"]
    out = 0
    for c in np.flatnonzero(mask[KNOCK_BASE : KNOCK_BASE + NUM_CARDS]):
        out |= 1 << int(c)
    return out


def deadwood(hand: int) -> int:
    """Least deadwood of exactly the cards of ``hand`` (a bitmask, any size)."""
    return int(min_deadwood(hand))


def deadwood_cards(hand: int) -> int:
    """Cards that are deadwood in at least one least-deadwood arrangement of ``hand``.

    A card ``c`` is such a card exactly when ``dw(hand - c) + value(c) == dw(hand)``.
    """
    base = min_deadwood(hand)
    out = 0
    for c in cards_of(hand):
        if min_deadwood(hand ^ 1 << c) + CARD_VALUES[c] == base:
            out |= 1 << c
    return out


def completes_meld(hand: int, card: int) -> bool:
    """Whether taking ``card`` into ``hand`` melds it and lowers the deadwood after the best discard
    of another card (the card just taken from the pile cannot be thrown back the same turn)."""
    grown = hand | 1 << card
    base = min_deadwood(hand)
    if not min_deadwood(grown) < base + CARD_VALUES[card]:
        return False  # the card would be deadwood
    return min(min_deadwood(grown ^ 1 << c) for c in cards_of(hand)) < base


def useful_discards(hand: int, taken: int) -> int:
    """The discards that make taking ``taken`` from the discard pile worth a turn.

    ``hand`` holds the 11 cards after the take (``taken`` included): the result is the bitmask of the
    cards ``d`` other than ``taken`` whose discard leaves strictly less deadwood than the 10 cards
    held before the take, ``dw(hand - d) < dw(hand - taken)``. Empty when the take is wasted (see
    the module docstring's *useful take*). ``taken`` itself is never in it, so the result does not
    depend on whether the rules let the card just taken be thrown back.
    """
    if not hand >> taken & 1:
        raise ValueError(f"the taken card {taken} is not in the hand")
    return int(_useful_discards(hand, taken))


def take_is_useful(hand: int, card: int) -> bool:
    """Whether taking ``card`` into the 10-card ``hand`` can lower its deadwood this turn
    (:func:`useful_discards` is not empty): the condition every level puts on taking a discard."""
    return int(_useful_discards(hand | 1 << card, card)) != 0


class TakeGuard:
    """Mixin of the levels that keeps every take from the discard pile useful (no cycling).

    A level calls :meth:`note_take` when it returns ``draw_discard`` and filters its next plain
    discard through :meth:`useful_only`; the draw rule itself must ask :func:`take_is_useful` (or
    score only :func:`useful_discards`). The memory is one card id, cleared by ``reset`` and by the
    discard; it holds only what the level itself did, nothing of the opponent's cards.
    """

    _taken: int | None = None

    def reset(self, seed: int | None = None) -> None:
        """Start of a hand: forget the last take (then the base class's reset)."""
        self._taken = None
        super().reset(seed)  # type: ignore[misc]

    def note_take(self, top: int) -> int:
        """Remember that this level takes ``top`` from the discard pile; returns ``draw_discard``."""
        self._taken = top
        return DRAW_DISCARD

    def useful_only(self, hand: int, allowed: int) -> int:
        """``allowed`` cut down to the discards that keep the last take useful (all of ``allowed`` when
        the last draw was not a take, e.g. from the stock, or when none of them would, which the draw
        rule rules out). Forgets the take: call it once per discard phase."""
        taken, self._taken = self._taken, None
        if taken is None or not hand >> taken & 1 or hand.bit_count() != 11:
            return allowed
        return int(_useful_discards(hand, taken)) & allowed or allowed


class HeuristicAgent(TakeGuard, Agent):
    """Base of the rule-based levels: owns the turn structure of :meth:`act`, each level its strategy.

    Every level plays a turn the same way: take the upcard or the top discard when
    :meth:`wants_top` says so (remembered by :class:`TakeGuard`, so the next discard keeps the take
    useful); otherwise pass the upcard or draw from the stock, whichever the mask allows; big gin
    whenever the rules allow it; in the discard phase the card and the knock of
    :meth:`choose_discard`. A level overrides those two (and :meth:`see`, to read every view).
    """

    def see(self, view: SeatView) -> None:
        """Called with the view of every decision before anything else (default: nothing)."""

    @abc.abstractmethod
    def wants_top(self, view: SeatView) -> bool:
        """Whether to take the upcard or the top discard ``view.top`` (a legal take)."""

    @abc.abstractmethod
    def choose_discard(self, observation: Observation, view: SeatView) -> tuple[int, bool]:
        """(card, knock?) for the discard phase: a legal discard, a legal knock when ``True``."""

    def act(self, observation: Observation) -> int:
        """This level's choice for the observation (the dispatch of the class docstring)."""
        mask = observation["action_mask"]
        view = decode(observation["observation"])
        self.see(view)
        if mask[DRAW_DISCARD] and view.top is not None and self.wants_top(view):
            return self.note_take(view.top)
        if mask[PASS]:
            return PASS
        if mask[DRAW_STOCK]:
            return DRAW_STOCK
        if mask[BIG_GIN]:
            return BIG_GIN
        card, knock = self.choose_discard(observation, view)
        action = (KNOCK_BASE if knock else DISCARD_BASE) + card
        if not mask[action]:
            raise RuntimeError(f"{type(self).__name__} chose the illegal action {action}: a bug of the level")
        return action


def enables_knock(hand: int, card: int, limit: int) -> bool:
    """Whether taking ``card`` into ``hand`` allows a knock this turn (discarding another card)."""
    grown = hand | 1 << card
    return min(min_deadwood(grown ^ 1 << c) for c in cards_of(hand)) <= limit


def meldable(cards: int) -> int:
    """Cards of ``cards`` that belong to at least one meld made only of cards of ``cards``."""
    return int(_meldable_kernel(cards))


def max_deadwood_value(hand: int) -> int:
    """The highest value among the cards of :func:`deadwood_cards` (0 if the hand melds fully)."""
    loose = deadwood_cards(hand)
    return max((CARD_VALUES[c] for c in cards_of(loose)), default=0)


def partner_cards(cards: int) -> int:
    """Cards of ``cards`` with a partner among ``cards``: the same rank, or the same suit within two
    ranks (a pair or a run draw: one more card could make a meld of three)."""
    out = 0
    for c in cards_of(cards):
        r, s = c % 13, c // 13
        same_rank = any(cards >> (t * 13 + r) & 1 for t in range(4) if t != s)
        near = any(0 <= r + k <= 12 and cards >> (s * 13 + r + k) & 1 for k in (-2, -1, 1, 2))
        if same_rank or near:
            out |= 1 << c
    return out


def interest_cards(taken: int) -> int:
    """Cards that would combine with a card of ``taken`` (the opponent's pick-ups): the same rank,
    or the same suit within two ranks. What the opponent's visible history says it collects."""
    out = 0
    for c in cards_of(taken):
        r, s = c % 13, c // 13
        for t in range(4):
            out |= 1 << (t * 13 + r)
        for k in (-2, -1, 1, 2):
            if 0 <= r + k <= 12:
                out |= 1 << (s * 13 + r + k)
    return out & ~taken


def after_draw_deadwood(hand: int, candidates: int) -> dict[int, int]:
    """For each candidate card ``c``: the least deadwood of ``hand + c`` after its best discard."""
    table = _draw_table(hand, candidates)
    return {c: int(table[c]) for c in cards_of(candidates)}


def gin_outs(hand: int, candidates: int) -> int:
    """Candidate cards that give the 10-card ``hand`` deadwood 0 after the best discard (gin)."""
    table = _draw_table(hand, candidates)
    return sum(1 << c for c in cards_of(candidates) if table[c] == 0)


def expected_deadwood(hand: int, candidates: int) -> float:
    """Mean over the ``candidates`` (each equally likely to be drawn) of the least deadwood of
    ``hand + c`` after its best discard; ``dw(hand)`` if there is no candidate.

    For a 10-card hand and the unseen cards this is the expected deadwood at the end of the next
    turn when drawing from the stock (the stock is a uniform subset of the unseen cards).
    """
    return float(_expected_cost(hand, candidates, 0, 0.0))


def discard_scores(
    hand: int, candidates: int, allowed: int, penalty: np.ndarray, limit: int = 10, miss: float = 0.0
) -> dict[int, float]:
    """For each allowed discard ``d`` of ``hand``: ``expected_deadwood(hand - d, candidates) + penalty[d]``.

    ``penalty`` is an array of 52 floats (e.g. a weight times :func:`danger_scores`).
    """
    table = _discard_scores(hand, candidates, allowed, np.asarray(penalty, dtype=np.float64), limit, miss)
    return {c: float(table[c]) for c in cards_of(allowed)}


def stock_value(hand: int, candidates: int, penalty: np.ndarray, limit: int = 10, miss: float = 0.0) -> float:
    """The value of drawing from the stock with the 10-card ``hand``, on the scale of
    :func:`discard_scores`: the mean over the candidate draws ``c`` (each equally likely) of the best
    ``expected_deadwood(hand + c - d, candidates - c) + penalty[d]`` over the discards ``d``.

    Compare it with ``min(discard_scores(hand + top, candidates, hand, penalty))`` to decide between
    the stock and the top discard: both are the expected cost after the *following* draw. For
    speed only the *sensible* discards of ``hand + c`` are tried (the drawn card, cards that are
    deadwood in some least-deadwood arrangement, and spare melded cards); over 1600 hands against
    ``normal`` this shortcut changed none of ``hard``'s decisions.
    """
    return float(_stock_value(hand, candidates, np.asarray(penalty, dtype=np.float64), limit, miss))


def live_cards(unseen: int, opponent_taken: int) -> int:
    """Cards the opponent may hold: unseen, or taken by it from the discard pile (and still held)."""
    return unseen | opponent_taken


def danger_scores(live: int, taken: int, avoided: int) -> np.ndarray:
    """Danger of discarding each card (an array of 52 floats, index = card id).

    Counts the three-card meld *windows* through the card that the opponent could still complete
    with cards it may hold (``live``): each pair of live cards of the card's rank is one set window;
    each of the up to three same-suit runs of three through the card whose other two cards are live
    is one run window. A window weighs 1, plus :data:`TAKEN_WEIGHT` for each of its other cards the
    opponent took from the pile (``taken``: it showed interest). Set (run) windows are multiplied by
    :data:`AVOIDED_FACTOR` when the opponent discarded or passed a card of the same rank (of the
    same suit within two ranks), ``avoided``. A dead card (no window) scores 0; with no history a
    king or an ace scores at most 4 (one run, three sets), a seven at most 6: the seeds' "kings and
    aces are the safest discards".
    """
    return _danger_scores(live, taken, avoided)


__all__ = [
    "AVOIDED_FACTOR",
    "TAKEN_WEIGHT",
    "HeuristicAgent",
    "TakeGuard",
    "after_draw",
    "after_draw_deadwood",
    "completes_meld",
    "danger_scores",
    "deadwood",
    "deadwood_cards",
    "discard_scores",
    "enables_knock",
    "expected_deadwood",
    "gin_outs",
    "interest_cards",
    "knock_points",
    "legal_discards",
    "legal_knocks",
    "live_cards",
    "max_deadwood_value",
    "meldable",
    "partner_cards",
    "stock_value",
    "take_is_useful",
    "useful_discards",
]
