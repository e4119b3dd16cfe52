"""The showdown and the score of one hand: melds, layoffs, knock / undercut / gin / big gin.

:func:`score_knock` scores a knocked hand and lays out its cards, for the engine's results and for
anyone with two hands; the choices themselves are the compiled showdown's
(:func:`ginenv.kernels.showdown_melds`, :func:`ginenv.kernels.best_layoffs`, the same functions the
kernel's :func:`ginenv.kernels.knock_outcome` scores with), so a hand cannot be scored two ways.

The knocker lays down a least-deadwood arrangement (tie-break in :mod:`ginenv.melds`, independent
of the defender's cards). After a knock that is not gin, the
defender's own melds and layoffs are chosen together for the least deadwood: every combination of
layoffs (the fourth card of a 3-card set, chained extensions at either end of a run) is tried and
the defender's remaining cards are melded optimally. No layoffs against gin or big gin. An equal
deadwood is an undercut.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ginenv import kernels
from ginenv.cards import CARD_NAMES, CardError, cards_of, mask_of, parse_cards
from ginenv.kernels import KNOCK_KINDS
from ginenv.melds import Arrangement, best_arrangement
from ginenv.rules import Rules

#: How a knock ends; the names are :data:`ginenv.kernels.KNOCK_KINDS` (a type checker needs them
#: spelled out: tests/ginenv/test_scoring.py holds the two equal).
ResultKind = Literal["knock", "undercut", "gin", "big_gin"]


class IllegalKnockError(ValueError):
    """The knocker's cards do not allow a knock under the rules given."""


@dataclass(frozen=True)
class KnockResult:
    """Outcome of a knock: who scores how much, and the cards laid down."""

    kind: ResultKind
    winner: Literal["knocker", "defender"]
    points: int
    knocker_deadwood: int
    defender_deadwood: int  # after layoffs
    layoffs: tuple[int, ...]  # defender's cards laid off, ascending
    knocker_melds: tuple[int, ...]  # bitmasks
    defender_melds: tuple[int, ...]  # bitmasks
    knocker_deadwood_cards: int
    defender_deadwood_cards: int  # after layoffs
    defender_deadwood_before_layoffs: int
    #: (card, index into knocker_melds) for each layoff.
    layoff_targets: tuple[tuple[int, int], ...] = field(default=())

    def describe(self) -> str:
        """One line a person reads: kind, winner, points and both deadwoods."""
        lay = " ".join(CARD_NAMES[c] for c in self.layoffs) or "none"
        return (
            f"{self.kind}: {self.winner} scores {self.points} "
            f"(knocker deadwood {self.knocker_deadwood}, defender deadwood "
            f"{self.defender_deadwood}, layoffs {lay})"
        )


def _mask(cards: Iterable[int | str] | str | int) -> int:
    if isinstance(cards, int):
        if isinstance(cards, bool):
            raise CardError(f"expected cards, got {cards!r}")
        return cards
    return mask_of(parse_cards(cards))


def score_knock(
    knocker_cards: Iterable[int | str] | str | int,
    defender_cards: Iterable[int | str] | str | int,
    rules: Rules | None = None,
    knock_limit: int | None = None,
) -> KnockResult:
    """Score a knock: ``knocker_cards`` are the 10 kept after the discard, or all 11 for big gin.

    ``knock_limit`` overrides ``rules.knock_limit`` (an Oklahoma hand's limit comes from its upcard).
    Raises :class:`IllegalKnockError` if the knocker's deadwood is over the limit, or big gin is
    claimed when the rules disable it or the 11 cards do not all meld.
    """
    rules = rules or Rules()
    limit = rules.knock_limit if knock_limit is None else knock_limit
    knocker, defender = _mask(knocker_cards), _mask(defender_cards)
    if knocker & defender:
        raise CardError(
            "knocker and defender share cards: "
            + " ".join(CARD_NAMES[c] for c in cards_of(knocker & defender))
        )
    nk, nd = knocker.bit_count(), defender.bit_count()
    if nk not in (10, 11) or nd != 10:
        raise CardError(
            f"a knock needs 10 knocker cards (11 for big gin) and 10 defender cards, got {nk} and {nd}"
        )
    arrangement: Arrangement = best_arrangement(knocker)
    d_arr = best_arrangement(defender)
    if nk == 11:
        if rules.big_gin_bonus is None:
            raise IllegalKnockError("big gin is disabled by these rules (big_gin_bonus=None)")
        if arrangement.deadwood:
            raise IllegalKnockError(f"big gin needs all 11 cards melded; deadwood is {arrangement.deadwood}")
    elif arrangement.deadwood > limit:
        raise IllegalKnockError(f"knocker's deadwood {arrangement.deadwood} is over the knock limit {limit}")
    # The points are the kernel's (the one implementation the engine plays); this function adds the
    # legality checks above and the cards each side lays down.
    code, points, k_dw, d_dw = kernels.knock_outcome(
        knocker, defender, rules.gin_bonus, rules.undercut_bonus, rules.big_gin_bonus or 0
    )
    return _laid_out(knocker, defender, arrangement, d_arr, code, abs(points), k_dw, d_dw)


def knock_layout(
    knocker: int, defender: int, code: int, points: int, knocker_deadwood: int, defender_deadwood: int
) -> KnockResult:
    """The :class:`KnockResult` of a showdown the kernel has already scored: the cards each side
    lays down, for the hand masks ``knocker`` and ``defender`` and the kernel's figures (the
    :class:`ginenv.kernels.KnockKind` ``code``, the winner's ``points`` and both deadwoods). The
    engine lays out its own showdowns with it instead of scoring them twice (:func:`score_knock`)."""
    return _laid_out(
        knocker, defender, best_arrangement(knocker), best_arrangement(defender),
        code, points, knocker_deadwood, defender_deadwood,
    )  # fmt: skip


def _laid_out(
    knocker: int,
    defender: int,
    arrangement: Arrangement,
    d_arr: Arrangement,
    code: int,
    points: int,
    k_dw: int,
    d_dw: int,
) -> KnockResult:
    # The knocker's melds take the defender's layoffs (not after gin); then the defender's own melds.
    kind = KNOCK_KINDS[code]
    laid = 0
    targets: tuple[tuple[int, int], ...] = ()
    if kind in ("knock", "undercut"):
        per_meld = kernels.best_layoffs(np.array(arrangement.melds, dtype=np.int64), defender).tolist()
        for part in per_meld:
            laid |= part
        targets = tuple(sorted((card, i) for i, part in enumerate(per_meld) for card in cards_of(part)))
    remaining = best_arrangement(defender & ~laid) if laid else d_arr
    return KnockResult(
        kind,  # type: ignore[arg-type]
        "defender" if kind == "undercut" else "knocker",
        points,
        knocker_deadwood=k_dw,
        defender_deadwood=d_dw,
        layoffs=tuple(cards_of(laid)),
        knocker_melds=arrangement.melds,
        defender_melds=remaining.melds,
        knocker_deadwood_cards=arrangement.deadwood_cards,
        defender_deadwood_cards=remaining.deadwood_cards,
        defender_deadwood_before_layoffs=d_arr.deadwood,
        layoff_targets=targets,
    )
