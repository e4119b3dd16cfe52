"""Engine-level test helpers: a deal built from card names, and tiny policies that play whole hands.

``knock_first`` makes hands and matches end by knocks; ``cycle_the_pile`` never ends a hand itself
(both players keep taking the top discard), so only the turn limit can; ``never_knock`` plays
every hand to a dead hand, so only a match's hand limit ends its match.
"""

from __future__ import annotations

from ginenv.actions import ACTION_NAMES, DISCARD_BASE, DRAW_STOCK, KNOCK_BASE, PASS, action_id
from ginenv.cards import CARD_NAMES, CARD_VALUES, NUM_CARDS, parse_card, parse_cards
from ginenv.engine import HandState, Phase
from ginenv.melds import deadwood_of_mask


def deck(non_dealer: str, dealer: str, upcard: str, stock: str = "") -> list[str]:
    """A 52-card dealing order: the named hands, the upcard, then the stock starting with ``stock``;
    the cards not named follow in id order."""
    hands = [parse_cards(non_dealer), parse_cards(dealer), parse_cards(upcard)]
    assert [len(h) for h in hands] == [10, 10, 1], "10 cards a hand and one upcard"
    named = parse_cards(f"{non_dealer} {dealer} {upcard} {stock}")  # refuses duplicates
    return [CARD_NAMES[c] for c in named + [c for c in range(NUM_CARDS) if c not in named]]


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


def cycle_the_pile(state: HandState) -> int:
    """Always take the top discard (the upcard too) and throw the lowest other card, never knocking:
    the stock is never touched, so the hand goes on until the turn limit truncates it."""
    names = [ACTION_NAMES[a] for a in state.legal_actions()]
    if "draw_discard" in names:
        return action_id("draw_discard")
    throws = [n.split()[1] for n in names if n.startswith("discard ")]
    return action_id("discard " + min(throws, key=lambda c: (CARD_VALUES[parse_card(c)], c)))


def never_knock(state: HandState) -> int:
    """Pass the upcard, draw from the stock, throw the lowest card, never knock: every hand dies."""
    names = [ACTION_NAMES[a] for a in state.legal_actions()]
    for simple in ("pass", "draw_stock"):
        if simple in names:
            return action_id(simple)
    throws = [n.split()[1] for n in names if n.startswith("discard ")]
    return action_id("discard " + min(throws, key=lambda c: (CARD_VALUES[parse_card(c)], c)))
