"""Checks of plain values shared by every layer: "an integer, not a bool", "a finite number".

Python's ``bool`` is an ``int`` and numpy brings its own integer and float types, so "is this an
integer" has three answers in one codebase unless one module owns it. This one does; the engine,
the env, the wrappers, replays, configs and checkpoints all call it.
"""

from __future__ import annotations

import math
import operator
from typing import TypeGuard

import numpy as np

__all__ = ["as_int", "finite_number", "is_int", "optional_seed"]


def is_int(value: object) -> TypeGuard[int]:
    """Whether ``value`` is a Python ``int`` and not a ``bool`` (YAML's ``true`` is not 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def as_int(value: object) -> int | None:
    """Any integer type (``int``, numpy integers) as an ``int``; bools, floats and strings: None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        return operator.index(value)  # type: ignore[arg-type,call-overload,unused-ignore]
    except TypeError:
        return None


def finite_number(name: str, value: object) -> float:
    """``value`` as a finite float (ints, floats and numpy numbers; never bools or strings).

    A value of the wrong type raises ``TypeError``, a non-finite one ``ValueError``; both name
    ``name``.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a finite number, got {value!r} ({type(value).__name__})")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return number


def optional_seed(seed: object) -> int | None:
    """``seed`` as an int (any integer type) or ``None``; anything else raises ``TypeError``."""
    if seed is None:
        return None
    number = as_int(seed)
    if number is None:
        raise TypeError(f"seed must be None or an integer, got {seed!r} ({type(seed).__name__})")
    return number
