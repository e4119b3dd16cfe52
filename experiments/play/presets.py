"""The rule presets as the play page offers them: a label and a line of help for each preset.

The presets themselves live in :data:`ginenv.rules.PRESETS`, their option values in
:class:`ginenv.rules.Rules`; this module only puts them into words for the setup screen. The server
sends :func:`preset_options` in ``GET /api/options`` and the page builds its rules menu and the note
under it from that answer, so no preset, label or rule text is written in the page's scripts.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from ginenv.rules import PRESETS, Rules

#: The preset every other one is described against.
BASE_PRESET = "standard"
#: How the rules menu names each preset, as a player knows the game (a preset without one is shown
#: by its name). The source of each (the seed that describes it) is in :data:`ginenv.rules.PRESETS`.
PRESET_LABELS = {
    "standard": "Standard",
    "seed000": "Classic (match bonuses)",
    "seed000_short": "Classic short game (to 50)",
    "seed004": "Online (undercut 20, big gin)",
    "oklahoma": "Oklahoma",
}


def _shutout(value: Any) -> str:
    if value == 2:
        return "a shutout doubles the winner\u2019s bonuses"
    return f"shutout multiplies bonuses by {value}"


#: Each option of :class:`Rules` at a value, in words (one entry per field; a test holds them equal).
RULE_WORDS: dict[str, Callable[[Any], str]] = {
    "knock_limit": lambda v: f"knock limit {v}",
    "gin_bonus": lambda v: f"gin bonus {v}",
    "undercut_bonus": lambda v: f"undercut bonus {v}",
    "big_gin_bonus": lambda v: "no big gin" if v is None else f"big gin allowed (bonus {v})",
    "discard_taken_card": lambda v: (
        "the card just taken from the discard pile may "
        + ("be discarded again" if v else "not be discarded again")
    ),
    "oklahoma": lambda v: (
        "Oklahoma: the first upcard sets the knock limit (ace: gin only)" if v else "no Oklahoma"
    ),
    "dead_hand_stock": lambda v: f"dead hand when {v} cards are left in the stock",
    "target": lambda v: f"match to {v} points",
    "game_bonus": lambda v: f"game bonus {v}" if v else "no game bonus",
    "line_bonus": lambda v: f"line bonus {v} per hand won" if v else "no line bonus",
    "shutout_multiplier": _shutout,
    "next_dealer": lambda v: "the deal alternates" if v == "alternate" else f"the hand\u2019s {v} deals next",
}


def rule_words(key: str, value: Any) -> str:
    """One rule option at ``value`` in words (an option without words: its name and value)."""
    words = RULE_WORDS.get(key)
    return words(value) if words else f"{key.replace('_', ' ')} {json.dumps(value)}"


def rule_changes(rules: Rules, base: Rules | None = None) -> list[str]:
    """The options in which ``rules`` differ from ``base`` (the standard preset), in words."""
    base = PRESETS[BASE_PRESET] if base is None else base
    return [
        rule_words(f.name, getattr(rules, f.name))
        for f in dataclasses.fields(Rules)
        if getattr(rules, f.name) != getattr(base, f.name)
    ]


def preset_help(name: str) -> str:
    """The note the setup screen shows under the rules menu for preset ``name``."""
    rules = PRESETS[name]
    changes = rule_changes(rules)
    if changes:
        return "Changes from the standard rules: " + "; ".join(changes) + "."
    return (
        f"The standard rules: knock with {rules.knock_limit} or less, gin {rules.gin_bonus}, "
        f"undercut {rules.undercut_bonus}, match to {rules.target}."
    )


def preset_label(name: str) -> str:
    """How the page names preset ``name``."""
    return PRESET_LABELS.get(name, name)


def rules_line(name: str, rules: Rules) -> str:
    """The rules a table plays, in one line: ``"Standard rules: knock with 10 or less, gin 25,
    undercut 25, match to 100"`` (``rules`` may differ from the preset, e.g. in its target)."""
    if rules.oklahoma:
        parts = ["the first upcard sets the knock limit"]
    else:
        parts = [f"knock with {rules.knock_limit} or less"]
    parts += [f"gin {rules.gin_bonus}", f"undercut {rules.undercut_bonus}"]
    if rules.big_gin_bonus is not None:
        parts.append(f"big gin {rules.big_gin_bonus}")
    if rules.discard_taken_card:
        parts.append("the card just taken may be discarded again")
    if rules.game_bonus:
        parts.append(f"game bonus {rules.game_bonus}")
    if rules.line_bonus:
        parts.append(f"line bonus {rules.line_bonus}")
    if rules.shutout_multiplier == 2:
        parts.append("a shutout doubles the bonuses")
    elif rules.shutout_multiplier > 2:
        parts.append(f"a shutout multiplies the bonuses by {rules.shutout_multiplier}")
    parts.append(f"match to {rules.target}")
    return f"{preset_label(name).split(' (')[0]} rules: " + ", ".join(parts)


def preset_options() -> list[dict[str, Any]]:
    """Every preset as ``/api/options`` sends it: name, label, help text and the option values."""
    return [
        {"name": n, "label": preset_label(n), "help": preset_help(n), "rules": r.to_dict()}
        for n, r in PRESETS.items()
    ]
