"""The env's settings: one frozen dataclass shared by every face of the env.

:class:`EnvSettings` holds the nine settings that configure a table (the rules, hand or match mode,
rendering, the reward scale, the oracle view, the dealer, the turn and hand limits, the form of the
infos), with their defaults and their checks written once. Every face builds one:

- ``gin_rummy_v0.env()``, ``raw_env()`` and ``parallel_env()`` (the PettingZoo faces);
- ``ginenv.wrappers.SingleAgentEnv`` (the Gymnasium face, and ``gymnasium.make``).

Each takes the settings as keyword arguments (``env(mode="match", reward_scale=0.01)``), as a whole
(``env(settings=EnvSettings(mode="match"))``), or both: keyword arguments then replace those fields
of ``settings`` (``env(settings=base, render_mode="ansi")``). A setting that is not one of the nine
raises ``TypeError`` naming them; a bad value raises when the env is built, never at the first
``reset``. The settings survive every ``reset()``, seeded or not, and the env exposes them as
``env.unwrapped.settings`` (and, one by one, as ``env.unwrapped.rules``, ``.mode``, ...).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypedDict, get_args

from ginenv.engine import DEFAULT_TURN_LIMIT, check_turn_limit
from ginenv.match import DEFAULT_HAND_LIMIT, check_hand_limit
from ginenv.rules import Rules
from ginenv.validation import as_int, finite_number

if TYPE_CHECKING:
    from typing import Unpack

__all__ = [
    "AGENTS",
    "INFO_FORMS",
    "RENDER_MODES",
    "EnvKwargs",
    "EnvSettings",
    "InfoForm",
    "Mode",
    "RenderModeError",
    "seat_of",
]

#: The two agents; ``dealer`` and per-seat lists index them.
AGENTS = ("player_0", "player_1")
#: One hand per episode, or hands until a player reaches ``rules.target``.
Mode = Literal["hand", "match"]
#: The render modes besides ``None``: ``ansi`` returns the table's text, ``human`` prints it.
RENDER_MODES = ("ansi", "human")
_MODES = ("hand", "match")
#: ``full``: infos as the env card describes them (the result's kind and winner as text, the
#: showdown's cards); ``numeric``: numbers and arrays only, the same keys at every step, for
#: libraries that turn infos into tensors (TorchRL); the full infos stay on ``env.unwrapped.full_infos``.
InfoForm = Literal["full", "numeric"]


class RenderModeError(ValueError, TypeError):
    """A render mode the env does not have.

    A ``ValueError`` (a bad value) that is also a ``TypeError``, the error a Gymnasium env that takes
    no such argument raises: Stable-Baselines3's ``make_vec_env`` asks every named env for
    ``render_mode="rgb_array"`` and builds it again without one on a ``TypeError``, so
    ``make_vec_env("ginenv/GinRummy-v0")`` works as it does for any text-only env.
    """


#: The values of :data:`InfoForm`.
INFO_FORMS: tuple[str, ...] = get_args(InfoForm)


def seat_of(dealer: object) -> int:
    """A dealer as a seat: ``0``, ``1`` (any integer type), ``"player_0"`` or ``"player_1"``.

    Anything else (a bool included) raises ``ValueError``.
    """
    if isinstance(dealer, str) and dealer in AGENTS:
        return AGENTS.index(dealer)
    seat = as_int(dealer)
    if seat not in (0, 1):
        raise ValueError(f"dealer must be 0, 1, 'player_0' or 'player_1', got {dealer!r}")
    return seat


@dataclass(frozen=True)
class EnvSettings:
    """How a table is set up: the settings of every face of the env (see the module docstring).

    Values are checked and normalised when the settings are built: ``rules=None`` becomes the
    standard ``Rules()``, ``reward_scale`` a float, ``dealer`` a seat (``"player_1"`` becomes 1),
    the limits plain ints. ``dataclasses.replace`` checks again.
    """

    #: The rule options (``ginenv.rules.Rules``); ``None``: the standard rules, ``Rules()``.
    rules: Rules = field(default_factory=Rules)
    #: ``"hand"``: one hand per episode; ``"match"``: hands until a player reaches ``rules.target``.
    mode: Mode = "hand"
    #: ``None``, ``"ansi"`` (``render()`` returns the text) or ``"human"`` (printed after each step).
    render_mode: str | None = None
    #: Rewards are points multiplied by this (a finite number; e.g. ``0.01`` for a network).
    reward_scale: float = 1.0
    #: Also show each seat the opponent's hand (research only; changes the observation space).
    oracle: bool = False
    #: ``0`` or ``1`` (or an agent name) to fix who deals the first hand; ``None``: drawn from the
    #: seeded generator at each reset.
    dealer: int | None = None
    #: Draws per hand after which the hand is truncated (a positive integer; a real hand has at
    #: most 29 stock draws, so only players who keep cycling the discard pile reach it).
    turn_limit: int = DEFAULT_TURN_LIMIT
    #: Match mode: hands after which a match nobody has won is truncated (a positive integer).
    hand_limit: int = DEFAULT_HAND_LIMIT
    #: ``"full"`` or ``"numeric"`` (numbers and arrays only: see :data:`InfoForm`).
    infos: InfoForm = "full"

    def __post_init__(self) -> None:
        """Check every value (clear errors naming the setting) and normalise it."""
        rules = Rules() if self.rules is None else self.rules
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a ginenv.rules.Rules, got {type(rules).__name__}")
        if self.mode not in _MODES:
            raise ValueError(f"mode must be 'hand' or 'match', got {self.mode!r}")
        if self.render_mode is not None and self.render_mode not in RENDER_MODES:
            raise RenderModeError(f"render_mode must be None, 'ansi' or 'human', got {self.render_mode!r}")
        if self.infos not in INFO_FORMS:
            raise ValueError(f"infos must be 'full' or 'numeric', got {self.infos!r}")
        if not isinstance(self.oracle, bool):
            raise TypeError(f"oracle must be True or False, got {self.oracle!r}")
        normal = {
            "rules": rules,
            "reward_scale": finite_number("reward_scale", self.reward_scale),
            "dealer": None if self.dealer is None else seat_of(self.dealer),
            "turn_limit": check_turn_limit(self.turn_limit),
            "hand_limit": check_hand_limit(self.hand_limit),
        }
        for name, value in normal.items():
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, settings: EnvSettings | None = None, /, **kwargs: Unpack[EnvKwargs]) -> EnvSettings:
        """The settings a face was given: ``settings`` (default: all defaults) with ``kwargs``
        replacing its fields; a keyword that is not a setting raises ``TypeError`` naming them."""
        unknown = sorted(set(kwargs) - _FIELDS)
        if unknown:
            raise TypeError(
                f"unknown env setting(s) {', '.join(unknown)}; the settings are {', '.join(_FIELD_ORDER)}"
            )
        if settings is None:
            return cls(**kwargs)  # type: ignore[arg-type]
        if not isinstance(settings, EnvSettings):
            raise TypeError(f"settings must be a ginenv.settings.EnvSettings, got {type(settings).__name__}")
        return dataclasses.replace(settings, **kwargs) if kwargs else settings  # type: ignore[arg-type]


class EnvKwargs(TypedDict, total=False):
    """The fields of :class:`EnvSettings` as keyword arguments (for type checkers: the faces take
    ``**kwargs: Unpack[EnvKwargs]``); see :class:`EnvSettings` for each."""

    rules: Rules | None
    mode: Mode
    render_mode: str | None
    reward_scale: float
    oracle: bool
    dealer: int | str | None
    turn_limit: int
    hand_limit: int
    infos: InfoForm


_FIELD_ORDER = tuple(f.name for f in dataclasses.fields(EnvSettings))
_FIELDS = frozenset(_FIELD_ORDER)
