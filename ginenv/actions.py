"""The action ids of a hand and their names: one fixed layout shared by the engine and the env.

| ids      | name             | when                                                     |
|----------|------------------|----------------------------------------------------------|
| 0        | ``draw_stock``   | draw phase                                               |
| 1        | ``draw_discard`` | draw phase, or take the upcard when it is offered        |
| 2        | ``pass``         | decline the upcard when it is offered                    |
| 3        | ``big_gin``      | discard phase, all 11 cards meld (when the rules allow)  |
| 4..55    | ``discard XX``   | discard card ``id - 4`` without knocking                 |
| 56..107  | ``knock XX``     | discard card ``id - 56`` and knock (gin at deadwood 0)   |
"""

from __future__ import annotations

from ginenv.cards import CARD_NAMES, NUM_CARDS, CardError, parse_card, short_repr
from ginenv.validation import as_int

DRAW_STOCK = 0
DRAW_DISCARD = 1
PASS = 2
BIG_GIN = 3
DISCARD_BASE = 4
KNOCK_BASE = DISCARD_BASE + NUM_CARDS
NUM_ACTIONS = KNOCK_BASE + NUM_CARDS

_SIMPLE = {"draw_stock": DRAW_STOCK, "draw_discard": DRAW_DISCARD, "pass": PASS, "big_gin": BIG_GIN}
ACTION_NAMES: tuple[str, ...] = (
    ("draw_stock", "draw_discard", "pass", "big_gin")
    + tuple(f"discard {n}" for n in CARD_NAMES)
    + tuple(f"knock {n}" for n in CARD_NAMES)
)


class UnknownActionError(ValueError):
    """An action id or name is not part of the action layout."""


def discard_action(card: int) -> int:
    """Action id of discarding ``card`` without knocking."""
    return DISCARD_BASE + card


def knock_action(card: int) -> int:
    """Action id of discarding ``card`` and knocking."""
    return KNOCK_BASE + card


def action_card(action: int) -> int | None:
    """The card an action discards, or ``None`` for draws, pass and big gin."""
    if DISCARD_BASE <= action < KNOCK_BASE:
        return action - DISCARD_BASE
    if KNOCK_BASE <= action < NUM_ACTIONS:
        return action - KNOCK_BASE
    return None


def action_name(action: int) -> str:
    """Readable name of an action id: ``"draw_stock"``, ``"discard 7h"``, ``"knock Td"``, ..."""
    # Numpy integers are admitted (actions picked from a numpy mask); bools are refused.
    index = as_int(action)
    if index is None or not 0 <= index < NUM_ACTIONS:
        raise UnknownActionError(
            f"unknown action id {short_repr(action)}; action ids are 0..{NUM_ACTIONS - 1}"
        )
    return ACTION_NAMES[index]


def action_id(name: str) -> int:
    """Inverse of :func:`action_name`; accepts any card spelling ``parse_card`` reads (``knock 10h``)."""
    if not isinstance(name, str):
        raise UnknownActionError(f"an action name must be a string, got {short_repr(name)}")
    text = " ".join(name.strip().lower().split())
    if text in _SIMPLE:
        return _SIMPLE[text]
    verb, _, card_text = text.partition(" ")
    if verb in ("discard", "knock") and card_text:
        try:
            card = parse_card(card_text)
        except CardError as err:
            raise UnknownActionError(f"unknown action {short_repr(name)}: {err}") from None
        return (DISCARD_BASE if verb == "discard" else KNOCK_BASE) + card
    raise UnknownActionError(
        f"unknown action {short_repr(name)}; actions are draw_stock, draw_discard, pass, big_gin, "
        "'discard <card>' and 'knock <card>' (e.g. 'discard 7h')"
    )
