"""What the play tests look for in an answer: every card name a JSON value mentions."""

from __future__ import annotations

import re
from typing import Any

#: A card name as the API writes it ("As", "Td", "7h").
CARD_TOKEN = re.compile(r"\b([A2-9TJQK][scdh])\b")

#: Fields that hold random identifiers (table ids, replay names, invitation and watch links).
#: ``secrets.token_urlsafe`` may write "-Qd" into one by chance; that names no card.
OPAQUE_FIELDS = frozenset({"id", "tag", "table", "invite", "watch", "replay"})


def card_names(value: Any) -> set[str]:
    """Every card name inside a JSON value (strings searched for card tokens, keys included), except
    inside the random identifiers of ``OPAQUE_FIELDS``."""
    if isinstance(value, str):
        return set(CARD_TOKEN.findall(value))
    if isinstance(value, dict):
        named = {k: v for k, v in value.items() if not (k in OPAQUE_FIELDS and isinstance(v, str))}
        return set().union(*(card_names(k) | card_names(v) for k, v in named.items()))
    if isinstance(value, list):
        return set().union(*(card_names(v) for v in value))
    return set()
