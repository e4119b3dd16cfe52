"""The batched engine's opponents: a table of compiled policies, of which the core keeps one, random.

A compiled policy reads row ``i`` of the hand record (:mod:`ginenv.kernels.hand`) as the seat to
move may see it and returns an action id. The game's own policy is here: ``random``, a uniformly
random legal action counted from bitmasks (no 108-entry mask), the one that draws from the engine's
generator. Strategies are the agents' (``greedy``, the compiled ``hard``): each is an njit function
``(state, i, cfg) -> action`` compiled for :data:`POLICY_SIGNATURE`, kept beside its level and
registered under its name, either by :func:`register_policy` or, for the installed package's own, by
an entry point of the group :data:`POLICY_GROUP` (``ginenv``'s metadata names ``greedy``, ``hard``
and ``master``), loaded the first time the name is asked for; so the core steps the agents' strategies
without importing them. An entry point may instead name a *factory*, a plain function of keyword
parameters that returns the njit function: ``master@worlds=64`` (:func:`parse_policy_name`) calls
``master``'s with ``worlds=64``, and the policy is registered under the whole name.

The engine's loops take a policy as a numba first-class function (:class:`CompiledPolicy`): one
compiled loop, cached on disk, serves every registered policy, at the price of a call through a
pointer per opponent move (the policies' own work, a deadwood search or two, is far larger).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, types
from numba.experimental.function_type import _get_wrapper_address

from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.kernels import hand as H
from ginenv.kernels.meld_search import lowest_card, popcount
from ginenv.plugins import installed

#: A compiled policy's signature: (the hand records (N, RECORD_SIZE), the row, the rule array) -> action.
POLICY_SIGNATURE = types.int64(types.int64[:, ::1], types.int64, types.int64[::1])
#: The entry-point group that names the installed packages' compiled policies (name -> njit function).
POLICY_GROUP = "ginenv.compiled_policies"
#: The policy the core implements itself (it draws from the engine's generator).
RANDOM = "random"


# --------------------------------------------------------------------------- random


@njit(cache=True)
def pick_bit(mask: int, k: int) -> int:
    """The card id of the ``k``-th (from 0) card of ``mask``."""
    for _ in range(k):
        mask &= mask - 1
    return lowest_card(mask)


@njit(cache=True)
def random_legal(s: np.ndarray, i: int, cfg: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random legal action of row ``i``."""
    phase = H.phase_of(s, i)
    if phase == H.Phase.DISCARD:
        allowed, knocks, can_big_gin = H.discard_options(s, i, cfg)
        big = 1 if can_big_gin else 0
        n_discards = popcount(allowed)
        n_knocks = popcount(knocks)
        # rng.random() is a third of rng.integers()' cost in numba; 53 random bits spread evenly.
        r = int(rng.random() * (n_discards + n_knocks + big))
        if r < n_discards:
            return DISCARD_BASE + pick_bit(allowed, r)
        if r < n_discards + n_knocks:
            return KNOCK_BASE + pick_bit(knocks, r - n_discards)
        return BIG_GIN
    if phase == H.Phase.DRAW:
        if not H.may_take_top(s, i) or rng.random() < 0.5:
            return DRAW_STOCK
        return DRAW_DISCARD
    return DRAW_DISCARD if rng.random() < 0.5 else PASS


# --------------------------------------------------------------------------- the table


class CompiledPolicy:
    """A registered policy as numba passes it to the engine's loops: a first-class function.

    numba types it by :data:`POLICY_SIGNATURE`, not by which function it is, so the loops compile
    (and are cached) once for every policy; ``kernel`` is the njit function. It follows numba's
    wrapper-address protocol (``__wrapper_address__``) and carries its numba type as
    ``_numba_type_``: typed that way a call of an engine loop costs about 2 us of typing instead of
    the 10 us of numba's own ``WrapperAddressProtocol`` class, which builds the type anew each call."""

    _numba_type_ = types.FunctionType(POLICY_SIGNATURE)

    def __init__(self, name: str, kernel: Any) -> None:
        self.name = name
        self.kernel = kernel
        self._address: int | None = None

    def __call__(self, s: np.ndarray, i: int | np.integer, cfg: np.ndarray) -> int:
        """The policy's action in row ``i`` (in Python; the loops call the compiled function)."""
        return int(self.kernel(s, i, cfg))

    def __wrapper_address__(self) -> int:
        if self._address is None:  # compiles the kernel for the signature, once
            self._address = _get_wrapper_address(self.kernel, POLICY_SIGNATURE)
        return self._address

    def __repr__(self) -> str:
        return f"CompiledPolicy({self.name!r})"


# No signature in the decorator: it would compile at import, before the engine's note of a first
# compilation (ginenv.compiling) looks at the cache. CompiledPolicy compiles it for the signature.
@njit(cache=True)
def no_policy(s: np.ndarray, i: int, cfg: np.ndarray) -> int:
    """The policy argument of the loops when ``random`` plays (never called: it has no kernel)."""
    return -1


#: The kernel argument of the loops for ``random`` (with ``randomly`` true).
NO_POLICY = CompiledPolicy(RANDOM, no_policy)
#: Registered policies by name (``random``: :data:`NO_POLICY`); entry points join on first use.
_TABLE: dict[str, CompiledPolicy] = {RANDOM: NO_POLICY}


def register_policy(name: str, kernel: Callable[..., int]) -> CompiledPolicy:
    """Make ``kernel`` (an njit function ``(state, i, cfg) -> action``) an opponent of the batched
    engine under ``name``; a name already registered is replaced (``random`` cannot be)."""
    if not isinstance(name, str) or not name or name == RANDOM:
        raise ValueError(f"a compiled policy needs a new non-empty name other than {RANDOM!r}, got {name!r}")
    if not hasattr(kernel, "py_func"):
        raise TypeError(
            f"policy {name!r} must be a numba njit function (state, i, cfg) -> action, got {kernel!r}"
        )
    policy = CompiledPolicy(name, kernel)
    _TABLE[name] = policy
    return policy


def policy_names() -> tuple[str, ...]:
    """The names of every compiled policy: registered ones and installed entry points, each once by
    its base name (``master``, not every ``master@worlds=N`` loaded so far, so that what an error
    lists does not depend on what ran before it)."""
    return tuple(sorted({name.partition("@")[0] for name in (*_TABLE, *installed(POLICY_GROUP))}))


def slot_rows(slots: np.ndarray, num_envs: int) -> np.ndarray:
    """``slots`` as the contiguous int64 row indices a compiled opponent's batch loop reads
    (``hard_moves``, ``master_moves``), checked: a 1-D array of indices in ``0..num_envs-1``, else
    ValueError in one line."""
    rows = np.ascontiguousarray(slots, dtype=np.int64)
    if rows.ndim != 1:
        raise ValueError(f"slots must be a 1-D array of slot indices, got shape {rows.shape}")
    if rows.size and (rows.min() < 0 or rows.max() >= num_envs):
        raise ValueError(f"slot indices must lie in 0..{num_envs - 1}")
    return rows


def parse_policy_name(name: str) -> tuple[str, dict[str, int | float | str]]:
    """``(base, params)`` of a policy name ``base`` or ``base@key=value[,key=value...]`` (values read
    as int, else float, else kept as text); a malformed parameter list raises ValueError, one line."""
    base, at, rest = name.partition("@")
    params: dict[str, int | float | str] = {}
    if not at:
        return base, params
    for item in rest.split(","):
        key, eq, raw = item.partition("=")
        if not eq or not key.isidentifier() or not raw:
            raise ValueError(f"policy {name!r}: parameters are {base}@key=value[,key=value...], got {item!r}")
        value: int | float | str = raw
        for kind in (int, float):
            try:
                value = kind(raw)
                break
            except ValueError:
                pass
        params[key] = value
    return base, params


def _load(name: str) -> CompiledPolicy:
    # The policy of a name not yet in the table, from its installed entry point: an njit function,
    # or a factory (a plain function of keyword parameters returning one) for ``base@key=value``.
    base, params = parse_policy_name(name)
    point = installed(POLICY_GROUP).get(base)
    if point is None or base == RANDOM:
        raise LookupError(
            f"no compiled policy named {name!r}; known: {', '.join(policy_names())} "
            f"(installed ones come from the entry-point group {POLICY_GROUP!r})"
        )
    loaded = point.load()
    if hasattr(loaded, "py_func"):
        if params:
            raise ValueError(f"compiled policy {base!r} takes no parameters, got {name!r}")
        return register_policy(name, loaded)
    allowed = inspect.signature(loaded).parameters
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(
            f"compiled policy {base!r} has no parameter {unknown[0]!r}; "
            f"it takes: {', '.join(allowed) or 'none'}"
        )
    return register_policy(name, loaded(**params))


def compiled_policy(name: str) -> tuple[CompiledPolicy, bool]:
    """``(policy, randomly)`` for the engine's loops: the registered policy (loaded from its entry
    point the first time; ``base@key=value,...`` calls the entry point's factory with those
    parameters) and ``False``, or :data:`NO_POLICY` and ``True`` for ``random``. An unknown name
    raises :class:`LookupError` naming the known ones; a bad parameter, :class:`ValueError` in one
    line."""
    if name not in _TABLE:
        if not isinstance(name, str):
            raise LookupError(f"no compiled policy named {name!r}; known: {', '.join(policy_names())}")
        _load(name)
    return _TABLE[name], name == RANDOM


# --------------------------------------------------------------------------- in the loops


@njit(cache=True)
def policy_action(
    policy: Any, randomly: bool, s: np.ndarray, i: int, cfg: np.ndarray, rng: np.random.Generator
) -> int:
    """The action of ``policy`` (``randomly``: of ``random``, from ``rng``) for the seat to move in
    row ``i``."""
    if randomly:
        return random_legal(s, i, cfg, rng)
    return policy(s, i, cfg)


@njit(cache=True)
def play_out(
    policy: Any, randomly: bool, s: np.ndarray, i: int, cfg: np.ndarray, rng: np.random.Generator
) -> None:
    """Play row ``i`` to the end of its hand with one policy for both seats."""
    while not H.apply(s, i, policy_action(policy, randomly, s, i, cfg, rng), cfg):
        pass


__all__ = [
    "NO_POLICY",
    "POLICY_GROUP",
    "POLICY_SIGNATURE",
    "RANDOM",
    "CompiledPolicy",
    "compiled_policy",
    "no_policy",
    "parse_policy_name",
    "pick_bit",
    "play_out",
    "policy_action",
    "policy_names",
    "random_legal",
    "register_policy",
    "slot_rows",
]
