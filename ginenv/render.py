"""Text rendering of a hand: the table as a person reads it, and the showdown.

This module owns how the game looks in text (the env's ``ansi`` and ``human`` render modes, and
anyone printing a hand). As in seed 000, a hand is shown sorted with each meld framed and its
deadwood always displayed::

    ┌──────────┐ ┌──────────┐
    │ As 2s 3s │ │ 7c 7d 7h │  4d 9c Kh   deadwood 23
    └──────────┘ └──────────┘

The arrangement shown is the engine's least-deadwood one (:func:`ginenv.melds.best_arrangement`,
the same tie-break as the showdown). Rendering is for spectators and logs: it shows both hands.
Agents never see it; they see only ``observe()``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ginenv.actions import ACTION_NAMES
from ginenv.cards import CARD_NAMES, cards_of
from ginenv.engine import HandState, Phase
from ginenv.melds import best_arrangement, best_discards

_PHASE_TEXT = {
    Phase.UPCARD_NON_DEALER: "upcard offer to the non-dealer",
    Phase.UPCARD_DEALER: "upcard offer to the dealer",
    Phase.DRAW: "draw",
    Phase.DISCARD: "discard",
    Phase.OVER: "hand over",
}


def _names(mask: int) -> str:
    return " ".join(CARD_NAMES[c] for c in cards_of(mask))


def frame_melds(melds: Sequence[int], deadwood_cards: int, note: str = "") -> list[str]:
    """Three lines: each meld framed in a box, then the loose (deadwood) cards and ``note``."""
    inner = [f" {_names(m)} " for m in melds]
    top = " ".join("┌" + "─" * len(t) + "┐" for t in inner)
    mid = " ".join("│" + t + "│" for t in inner)
    bottom = " ".join("└" + "─" * len(t) + "┘" for t in inner)
    loose = _names(deadwood_cards)
    tail = "  ".join(part for part in (loose, note) if part)
    if not mid:
        mid = tail
    elif tail:
        mid = mid + "  " + tail
    return [line.rstrip() for line in (top, mid, bottom) if line.strip()]


def hand_lines(cards: int, knock_limit: int | None = None) -> list[str]:
    """A hand (bitmask) sorted with its melds framed and its deadwood shown.

    For an 11-card hand (between draw and discard) the best discard is shown too, and whether it
    allows a knock under ``knock_limit``.
    """
    arrangement = best_arrangement(cards)
    note = f"deadwood {arrangement.deadwood}"
    if cards.bit_count() == 11:
        best, discards = best_discards(cards_of(cards))
        note += f"; best discard {' / '.join(CARD_NAMES[c] for c in discards)} -> deadwood {best}"
        if knock_limit is not None and best <= knock_limit:
            note += " (gin)" if best == 0 else " (can knock)"
    return frame_melds(arrangement.melds, arrangement.deadwood_cards, note)


def _indent(lines: list[str], prefix: str = "    ") -> list[str]:
    return [prefix + line for line in lines]


def render_table(
    state: HandState,
    agents: Sequence[str] = ("player_0", "player_1"),
    scores: Sequence[int] | None = None,
    target: int | None = None,
    hand_number: int | None = None,
) -> str:
    """The table of a hand: header, both hands, discard pile, stock, last action, showdown if over."""
    lines: list[str] = []
    header = "gin rummy"
    if hand_number is not None:
        header += f" - hand {hand_number}"
    if scores is not None:
        header += f" - {agents[0]} {scores[0]}, {agents[1]} {scores[1]}"
        if target is not None:
            header += f" (target {target})"
    lines.append(header)
    mover = "" if state.is_over else f", {agents[state.player]} to move"
    lines.append(f"phase: {_PHASE_TEXT[state.phase]}{mover}; knock limit {state.knock_limit}")
    for p in (0, 1):
        role = "dealer" if p == state.dealer else "non-dealer"
        count = state.hands[p].bit_count()
        lines.append(f"  {agents[p]} ({role}, {count} cards):")
        lines.extend(_indent(hand_lines(state.hands[p], state.knock_limit)))
    pile = state.discard_pile
    if pile:
        under = " ".join(CARD_NAMES[c] for c in pile[:-1])
        lines.append(f"  discard pile: top {CARD_NAMES[pile[-1]]}" + (f", under it {under}" if under else ""))
    else:
        lines.append("  discard pile: empty")
    lines.append(f"  stock: {len(state.stock)} cards")
    if state.history:
        player, action = state.history[-1]
        lines.append(f"  last action: {agents[player]} {ACTION_NAMES[action]}")
    if state.is_over:
        lines.append(render_showdown(state, agents))
    return "\n".join(lines)


def render_showdown(state: HandState, agents: Sequence[str] = ("player_0", "player_1")) -> str:
    """How a finished hand ended: the melds laid down, the layoffs, both deadwoods and the score.

    A dead or truncated hand has no showdown: one line says so, without either seat's deadwood.
    """
    result = state.result
    if result is None:
        return "showdown: the hand is not over"
    # A dead or truncated hand has no showdown: nobody lays cards down, so the end line reveals
    # nothing of either hand (no deadwood); only the table above, a spectator's view, shows them.
    if result.kind == "dead":
        return f"hand over: dead hand, the stock is down to {len(state.stock)} cards; no showdown, no score"
    if result.kind == "truncated":
        return (
            f"hand over: truncated at the turn limit ({state.draws} draws, limit {state.turn_limit}); "
            "no showdown, no score"
        )
    knock = result.knock
    assert knock is not None and result.knocker is not None and result.winner is not None
    knocker, defender = result.knocker, 1 - result.knocker
    verb = {"big_gin": "goes big gin", "gin": "goes gin"}.get(knock.kind, "knocks")
    lines = [f"showdown: {agents[knocker]} {verb}"]
    lines.append(f"  {agents[knocker]} lays down:")
    lines.extend(
        _indent(
            frame_melds(
                knock.knocker_melds, knock.knocker_deadwood_cards, f"deadwood {knock.knocker_deadwood}"
            )
        )
    )
    lines.append(f"  {agents[defender]} lays down:")
    note = f"deadwood {knock.defender_deadwood}"
    if knock.layoffs:
        note += f" after layoffs ({knock.defender_deadwood_before_layoffs} before)"
    lines.extend(_indent(frame_melds(knock.defender_melds, knock.defender_deadwood_cards, note)))
    if knock.layoffs:
        for card, meld_index in knock.layoff_targets:
            meld = knock.knocker_melds[meld_index]
            lines.append(f"  {agents[defender]} lays off {CARD_NAMES[card]} on [{_names(meld)}]")
    elif knock.kind == "knock" or knock.kind == "undercut":
        lines.append(f"  {agents[defender]} has nothing to lay off")
    else:
        lines.append("  no layoffs against gin")
    lines.append(f"  result: {knock.kind}, {agents[result.winner]} scores {result.points}")
    return "\n".join(lines)
