"""A tiny engine-level policy for tests that need whole hands and matches to end by knocks."""

from __future__ import annotations

from ginenv.actions import DISCARD_BASE, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.engine import HandState, Phase
from ginenv.melds import deadwood_of_mask


def knock_first(state: HandState) -> int:
    """Never take a discard; throw the card leaving the least deadwood; knock whenever allowed."""
    legal = state.legal_mask()
    if state.phase is not Phase.DISCARD:
        return PASS if legal >> PASS & 1 else DRAW_STOCK
    hand = state.hands[state.player]
    knocks = [a for a in state.legal_actions() if a >= KNOCK_BASE]
    if knocks:
        return min(knocks, key=lambda a: deadwood_of_mask(hand ^ 1 << (a - KNOCK_BASE)))
    discards = [a for a in state.legal_actions() if DISCARD_BASE <= a < KNOCK_BASE]
    return min(discards, key=lambda a: (deadwood_of_mask(hand ^ 1 << (a - DISCARD_BASE)), -a))
