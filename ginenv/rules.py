"""Rule options: one frozen dataclass, its named presets, and their dict/YAML form.

Every option of ``docs/RULES.md`` is a field of :class:`Rules`; presets are named instances of it
(:data:`PRESETS`), and configs map onto its fields one to one (:meth:`Rules.from_dict` refuses unknown
keys). :func:`resolve_rules` turns whatever names rules in a config or on a command line (a preset's
name or a mapping of options) into a :class:`Rules`. The default instance is the locked "version
1.0.0" variant of seeds 001/003.
"""

from __future__ import annotations

import dataclasses
import reprlib
from dataclasses import dataclass
from numbers import Integral
from typing import Any, Literal

import numpy as np

from ginenv.validation import is_int

NextDealer = Literal["alternate", "winner", "loser"]
_NEXT_DEALER = ("alternate", "winner", "loser")
# Short, depth-limited reprs in messages: a value read from a config may be huge or deeply nested.
_SHOW = reprlib.Repr()
_SHOW.maxlevel = 3
_SHOW.maxstring = 60
_SHOW.maxother = 60


class RulesError(ValueError):
    """A rule option has a value the game cannot play with."""


@dataclass(frozen=True)
class Rules:
    """The options of one game of gin rummy (defaults: seeds 001/003, "version 1.0.0")."""

    #: A player may knock when the deadwood of the 10 cards kept is at most this (0..10 usual).
    knock_limit: int = 10
    #: Bonus for gin (all 10 cards melded at the knock).
    gin_bonus: int = 25
    #: Bonus to the defender when their deadwood (after layoffs) is equal or lower.
    undercut_bonus: int = 25
    #: Bonus for big gin (all 11 cards meld after the draw), the whole bonus in place of the gin
    #: bonus (seed 000's 31; seed 004's 25 + 6); ``None`` disables big gin. Never below ``gin_bonus``.
    big_gin_bonus: int | None = None
    #: Whether the card just taken from the discard pile may be discarded in the same turn (seed 004:
    #: "cela peut être celle qu'il vient de piocher"); forbidden by seeds 000-003.
    discard_taken_card: bool = False
    #: Oklahoma: the knock limit of a hand is the first upcard's value (ace: gin only).
    oklahoma: bool = False
    #: The hand is dead when a discard without knock leaves this many cards in the stock.
    dead_hand_stock: int = 2
    #: A match ends when a player's total reaches this.
    target: int = 100
    #: Match bonus to the winner (0: off).
    game_bonus: int = 0
    #: Match bonus per hand won, to each player (the line or box bonus; 0: off).
    line_bonus: int = 0
    #: The winner's bonuses are multiplied by this when the loser scored nothing (shutout).
    shutout_multiplier: int = 1
    #: Who deals the next hand of a match: ``alternate``, the hand's ``winner`` or its ``loser``
    #: (after a dead hand the same dealer deals again unless alternating).
    next_dealer: NextDealer = "alternate"

    def __post_init__(self) -> None:
        # numpy integers (a config built from arrays) are plain integers here; bools are not integers.
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if (
                isinstance(value, Integral)
                and not isinstance(value, (bool, np.bool_))
                and type(value) is not int
            ):
                object.__setattr__(self, f.name, int(value))
            elif isinstance(value, np.bool_):
                object.__setattr__(self, f.name, bool(value))

        def need(ok: bool, field: str, allowed: str) -> None:
            if not ok:
                raise RulesError(f"invalid {field}={_SHOW.repr(getattr(self, field))}: must be {allowed}")

        for name in (
            "knock_limit",
            "gin_bonus",
            "undercut_bonus",
            "dead_hand_stock",
            "target",
            "game_bonus",
            "line_bonus",
            "shutout_multiplier",
        ):
            value = getattr(self, name)
            need(is_int(value), name, "an integer")
        need(0 <= self.knock_limit <= 100, "knock_limit", "between 0 and 100")
        need(self.gin_bonus >= 0, "gin_bonus", ">= 0")
        need(self.undercut_bonus >= 0, "undercut_bonus", ">= 0")
        big = self.big_gin_bonus
        need(
            big is None or (is_int(big) and big >= 0),
            "big_gin_bonus",
            "None (big gin off) or an integer >= 0",
        )
        need(
            big is None or big >= self.gin_bonus,
            "big_gin_bonus",
            f"at least gin_bonus ({self.gin_bonus}): it is big gin's whole bonus, never less than gin's",
        )
        need(isinstance(self.discard_taken_card, bool), "discard_taken_card", "true or false")
        need(isinstance(self.oklahoma, bool), "oklahoma", "true or false")
        # 31 cards are in the stock after the deal; at least one draw must be possible.
        need(0 <= self.dead_hand_stock <= 30, "dead_hand_stock", "between 0 and 30")
        need(self.target >= 1, "target", ">= 1")
        need(self.game_bonus >= 0, "game_bonus", ">= 0")
        need(self.line_bonus >= 0, "line_bonus", ">= 0")
        need(self.shutout_multiplier >= 1, "shutout_multiplier", ">= 1")
        need(self.next_dealer in _NEXT_DEALER, "next_dealer", "one of " + ", ".join(_NEXT_DEALER))

    @property
    def big_gin(self) -> bool:
        """Whether big gin is enabled."""
        return self.big_gin_bonus is not None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of every field (JSON/YAML ready)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Rules from a mapping; a ``preset`` key starts from that preset, unknown keys are refused."""
        if not isinstance(data, dict):
            raise RulesError(f"rules must be a mapping of option names to values, got {_SHOW.repr(data)}")
        bad_keys = [k for k in data if not isinstance(k, str)]
        if bad_keys:
            raise RulesError(f"rule option names must be strings, got {_SHOW.repr(bad_keys[0])}")
        data = dict(data)
        base = cls()
        if "preset" in data:
            base = preset(data.pop("preset"))
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RulesError(
                f"unknown rule option(s) {', '.join(unknown)}; known options: "
                + ", ".join(sorted(known))
                + ", preset"
            )
        return dataclasses.replace(base, **data)

    def replace(self, **changes: Any) -> Rules:
        """A copy with some options changed (validated)."""
        return Rules.from_dict({**self.to_dict(), **changes})


#: Named rule sets of the seeds (see docs/RULES.md, "Options and presets").
PRESETS: dict[str, Rules] = {
    # Seeds 001/003: the locked "version 1.0.0" variant, the default.
    "standard": Rules(),
    # Seed 000 (French app): big gin 31, match bonuses on (game 100, line 25, shutout doubles).
    "seed000": Rules(big_gin_bonus=31, game_bonus=100, line_bonus=25, shutout_multiplier=2),
    # Seed 000's short game: the same to 50 points.
    "seed000_short": Rules(big_gin_bonus=31, game_bonus=100, line_bonus=25, shutout_multiplier=2, target=50),
    # Seed 004 (online rules): undercut bonus 20; big gin is gin's 25 plus "un bonus de Big Gin de 6
    # points", 31 in all; the card just taken from the discard pile may be discarded again.
    "seed004": Rules(undercut_bonus=20, big_gin_bonus=31, discard_taken_card=True),
    # Oklahoma gin (not in the seeds; offered by OpenSpiel).
    "oklahoma": Rules(oklahoma=True),
}


def preset(name: str) -> Rules:
    """The preset called ``name``; unknown names are refused with the list of known ones."""
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        raise RulesError(
            f"unknown rules preset {_SHOW.repr(name)}; known presets: {', '.join(PRESETS)}"
        ) from None


def resolve_rules(spec: Rules | str | dict[str, Any]) -> Rules:
    """Rules from a preset's name (:func:`preset`), a mapping of options (:meth:`Rules.from_dict`,
    a ``preset`` key included) or a :class:`Rules` itself; anything else raises :class:`RulesError`."""
    if isinstance(spec, Rules):
        return spec
    if isinstance(spec, str):
        return preset(spec)
    if isinstance(spec, dict):
        return Rules.from_dict(spec)
    raise RulesError(f"rules must be a preset name or a mapping of rule options, got {_SHOW.repr(spec)}")
