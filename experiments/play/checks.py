"""What the play table refuses, and the checks of what a request asks for.

:class:`PlayError` is every refusal of the table and the server (it carries the HTTP status); the
checks read a person's name, an opponent and a rules preset with its target, quoting at most a
short excerpt of a bad value.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Sequence

from ginenv.experiments.play.words import excerpt

from ginenv.rules import PRESETS, Rules, RulesError, preset
from ginenv.validation import is_int

#: The longest name a person may give, and the highest match target a friend table may set.
MAX_NAME = 24
MAX_TARGET = 1000


class PlayError(ValueError):
    """A request the table refuses; nothing changed. ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


def check_name(name: object) -> str:
    """A person's name: 1 to :data:`MAX_NAME` printable characters (runs of spaces become one)."""
    text = " ".join(name.split()) if isinstance(name, str) else ""
    if not 1 <= len(text) <= MAX_NAME or any(unicodedata.category(c)[0] == "C" for c in text):
        raise PlayError(f"a name is 1 to {MAX_NAME} printable characters, got {excerpt(name)}", 400)
    return text


def check_opponent(name: object, allowed: Sequence[str]) -> str:
    """``name`` if it is one of the ``allowed`` opponents."""
    if not isinstance(name, str) or name not in allowed:
        raise PlayError(f"unknown opponent {excerpt(name)}; choose one of: {', '.join(allowed)}", 400)
    return name


def check_rules(name: object, target: object) -> Rules:
    """The rules of preset ``name``, with its match ``target`` replaced unless it is None."""
    if not isinstance(name, str):
        raise PlayError(f"the rules preset must be a name, one of: {', '.join(PRESETS)}", 400)
    try:
        rules = preset(name)
    except RulesError as err:
        raise PlayError(str(err), 400) from None
    if target is None:
        return rules
    if not is_int(target) or not 1 <= target <= MAX_TARGET:
        raise PlayError(
            f"target must be a number of points from 1 to {MAX_TARGET}, got {excerpt(target)}", 400
        )
    return dataclasses.replace(rules, target=target)


__all__ = ["MAX_NAME", "MAX_TARGET", "PlayError", "check_name", "check_opponent", "check_rules"]
