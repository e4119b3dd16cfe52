"""The shared card evaluation of the heuristic levels: typed functions over card bitmasks.

Everything works on card bitmasks (``ginenv.cards``: bit ``c`` set for card ``c``) read from an
observation with :func:`ginenv.observation.decode`, so an agent sees nothing but its own seat's view.
The functions are thin typed wrappers around the compiled functions of :mod:`.heuristics_compiled` and
of :mod:`ginenv.kernels` (the deadwood search, the showdown, and
:func:`ginenv.agents.levels.heuristics_compiled.useful_discards`, the one home of the useful-take
rule, shared with the batched engine's greedy opponent). Their names and meanings are stable: every
level imports them. The base class that plays the turns is in :mod:`.level_base`.

Vocabulary used throughout:

* **deadwood** ``dw(h)``: the least deadwood of exactly the cards ``h`` (``deadwood_of_mask``).
* **after-draw deadwood** of a 10-card hand ``h`` and a drawn card ``c``: the least deadwood after
  adding ``c`` and discarding the best card, ``min_x dw(h + c - x)``. When ``c`` can be in no meld
  of ``h + c`` it is plain deadwood, so the value is ``min(dw(h), value(c) + min_x dw(h - x))``
  without any new search (the compiled functions use this shortcut for most unseen cards).
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
  (:class:`.level_base.TakeGuard`). A take that lowers nothing, followed by the throw of an equal card (Ac for
  Ah, Kc for Qd), is a wasted turn, and two players doing it pass the same cards back and forth
  through the discard pile forever. With the rule, every take strictly lowers the taker's deadwood
  and the stock is finite, so no level can cycle, whatever the rule on throwing back the card just
  taken (``Rules.discard_taken_card``): that card is never a useful discard.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from ginenv.agents.levels.heuristics_compiled import (
    best_other_discard,
    danger_table,
    discard_cost_table,
    draw_table,
    expected_cost,
    stock_cost,
)
from ginenv.agents.levels.heuristics_compiled import completes_meld as compiled_completes_meld
from ginenv.agents.levels.heuristics_compiled import deadwood_cards as compiled_deadwood_cards
from ginenv.agents.levels.heuristics_compiled import gin_outs as compiled_gin_outs
from ginenv.agents.levels.heuristics_compiled import interest_cards as compiled_interest_cards
from ginenv.agents.levels.heuristics_compiled import max_deadwood_value as compiled_max_deadwood_value
from ginenv.agents.levels.heuristics_compiled import partner_cards as compiled_partner_cards
from ginenv.agents.levels.heuristics_compiled import useful_discards as compiled_useful_discards

from ginenv.actions import DISCARD_BASE, KNOCK_BASE
from ginenv.cards import NUM_CARDS, cards_of
from ginenv.kernels import meldable as meldable_cards
from ginenv.kernels import min_deadwood


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
    return int(compiled_deadwood_cards(hand))


def completes_meld(hand: int, card: int) -> bool:
    """Whether taking ``card`` into ``hand`` melds it and lowers the deadwood after the best discard
    of another card (the card just taken from the pile cannot be thrown back the same turn)."""
    return bool(compiled_completes_meld(hand, card))


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
    return int(compiled_useful_discards(hand, taken))


def take_is_useful(hand: int, card: int) -> bool:
    """Whether taking ``card`` into the 10-card ``hand`` can lower its deadwood this turn
    (:func:`useful_discards` is not empty): the condition every level puts on taking a discard."""
    return int(compiled_useful_discards(hand | 1 << card, card)) != 0


def enables_knock(hand: int, card: int, limit: int) -> bool:
    """Whether taking ``card`` into ``hand`` allows a knock this turn (discarding another card)."""
    return int(best_other_discard(hand, card)) <= limit


def meldable(cards: int) -> int:
    """Cards of ``cards`` that belong to at least one meld made only of cards of ``cards``."""
    return int(meldable_cards(cards))


def max_deadwood_value(hand: int) -> int:
    """The highest value among the cards of :func:`deadwood_cards` (0 if the hand melds fully)."""
    return int(compiled_max_deadwood_value(hand))


def partner_cards(cards: int) -> int:
    """Cards of ``cards`` with a meld partner among ``cards`` (:data:`ginenv.kernels.MELD_PARTNERS`:
    the same rank, or the same suit within two ranks; a pair or a run draw: one more card could make
    a meld of three)."""
    return int(compiled_partner_cards(cards))


def interest_cards(taken: int) -> int:
    """Cards that would combine with a card of ``taken`` (the opponent's pick-ups): their meld
    partners (:data:`ginenv.kernels.MELD_PARTNERS`) not taken. What the opponent's visible history
    says it collects."""
    return int(compiled_interest_cards(taken))


def after_draw_deadwood(hand: int, candidates: int) -> dict[int, int]:
    """For each candidate card ``c``: the least deadwood of ``hand + c`` after its best discard."""
    table = draw_table(hand, candidates)
    return {c: int(table[c]) for c in cards_of(candidates)}


def gin_outs(hand: int, candidates: int) -> int:
    """Candidate cards that give the 10-card ``hand`` deadwood 0 after the best discard (gin)."""
    return int(compiled_gin_outs(hand, candidates))


def expected_deadwood(hand: int, candidates: int) -> float:
    """Mean over the ``candidates`` (each equally likely to be drawn) of the least deadwood of
    ``hand + c`` after its best discard; ``dw(hand)`` if there is no candidate.

    For a 10-card hand and the unseen cards this is the expected deadwood at the end of the next
    turn when drawing from the stock (the stock is a uniform subset of the unseen cards).
    """
    return float(expected_cost(hand, candidates, 0, 0.0))


def discard_scores(
    hand: int, candidates: int, allowed: int, penalty: np.ndarray, limit: int = 10, miss: float = 0.0
) -> dict[int, float]:
    """For each allowed discard ``d`` of ``hand``: ``expected_deadwood(hand - d, candidates) + penalty[d]``.

    ``penalty`` is an array of 52 floats (e.g. a weight times :func:`danger_scores`).
    """
    table = discard_cost_table(hand, candidates, allowed, np.asarray(penalty, dtype=np.float64), limit, miss)
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
    return float(stock_cost(hand, candidates, np.asarray(penalty, dtype=np.float64), limit, miss))


def live_cards(unseen: int, opponent_taken: int) -> int:
    """Cards the opponent may hold: unseen, or taken by it from the discard pile (and still held)."""
    return unseen | opponent_taken


def danger_scores(live: int, taken: int, avoided: int) -> np.ndarray:
    """Danger of discarding each card (an array of 52 floats, index = card id).

    Counts the three-card meld *windows* through the card that the opponent could still complete
    with cards it may hold (``live``): each pair of live cards of the card's rank is one set window;
    each of the up to three same-suit runs of three through the card whose other two cards are live
    is one run window. A window weighs 1, plus :data:`.heuristics_compiled.TAKEN_WEIGHT` for each of
    its other cards the opponent took from the pile (``taken``: it showed interest). Set (run)
    windows are multiplied by :data:`.heuristics_compiled.AVOIDED_FACTOR` when the opponent
    discarded or passed a card of the same rank (of the same suit within two ranks), ``avoided``. A
    dead card (no window) scores 0; with no history a king or an ace scores at most 4 (one run,
    three sets), a seven at most 6: the seeds' "kings and aces are the safest discards".
    """
    return danger_table(live, taken, avoided)


__all__ = [
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
