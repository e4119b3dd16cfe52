"""N hands of gin rummy in lockstep, stepped by compiled code: the batched engine.

:class:`VectorGinRummy` owns N independent hands (slots): one row each of the hand record of
:mod:`ginenv.kernels.hand`, the same record and the same compiled step that
:class:`ginenv.engine.HandState` (and so the AEC env) plays one hand with, so the batched engine
cannot drift from the rules. What it adds is the batch: loops over the slots in compiled code, the
observation and mask of every slot's seat to move, rewards, and re-dealing. It produces exactly what
``gin_rummy_v0``'s ``observe()`` gives the seat to move, in hand mode:
``tests/ginenv/test_vector.py`` plays many random hands through both from the same decks and actions
and requires identical observations, masks, seats to move, rewards, results and truncations at
every step.

The slots' arrays travel together as one :class:`Batch` record. A slot whose hand ended (a knock,
gin, big gin, a dead or a truncated hand) is dealt a new hand at once from the env's generator
(numpy ``default_rng(seed)``, passed into the compiled loop: a shuffled deck, then a random dealer),
and the observation, mask and player returned are the new hand's; the ended hand's outcome is in
:attr:`VectorGinRummy.results` until the next step. :class:`OpponentVectorGinRummy` plays a
compiled opponent (:mod:`ginenv.kernels.policies`) inside the loop (its loops:
:mod:`ginenv.kernels.opponent_loops`) so a learner sees only its own decisions.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NamedTuple

import numba
import numpy as np
from numba import njit, prange

from ginenv import compiling
from ginenv.actions import ACTION_NAMES, NUM_ACTIONS
from ginenv.cards import NUM_CARDS
from ginenv.engine import DEFAULT_TURN_LIMIT, DeckError, check_turn_limit
from ginenv.kernels import hand as H
from ginenv.kernels import opponent_loops as OL
from ginenv.kernels import policies as P
from ginenv.kernels.meld_search import KnockKind
from ginenv.kernels.policies import CompiledPolicy
from ginenv.observation import OBS_SIZE
from ginenv.rules import Rules
from ginenv.validation import as_int, finite_number

#: The names of the compiled policies that batched opponents and playouts may be
#: (:func:`ginenv.kernels.policies.policy_names`: ``random``, and ``greedy`` and ``hard`` of the
#: installed package).
policy_names = P.policy_names
#: Result kinds of :attr:`VectorGinRummy.results` (``kind``): the engine's ``HandResult.kind`` names.
RESULT_KINDS = H.RESULT_KINDS
#: The rule options as the compiled code reads them.
rules_array = H.rules_array
#: The dtypes :class:`VectorGinRummy` may return observations in (``obs_dtype``).
OBS_DTYPES = ("float32", "uint8")


def most_threads() -> int:
    """The most threads the batched engine may step on: numba's ``NUMBA_NUM_THREADS``, the cores the
    process may use."""
    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]


class HandEnd(enum.IntEnum):
    """The codes of :data:`RESULT_KINDS` (``NONE``: the hand goes on)."""

    NONE = H.NO_RESULT
    KNOCK = KnockKind.KNOCK
    UNDERCUT = KnockKind.UNDERCUT
    GIN = KnockKind.GIN
    BIG_GIN = KnockKind.BIG_GIN
    DEAD = H.DEAD
    TRUNCATED = H.TRUNCATED


class VectorError(ValueError):
    """A batch argument of the wrong size, shape or type, or an illegal action; nothing changed."""


class Batch(NamedTuple):
    """The arrays of N slots, passed to the compiled loops as one record."""

    #: (N, RECORD_SIZE) int64: each slot's hand record.
    state: np.ndarray
    #: (N, OBS_SIZE) float32: the observation of each slot's seat to move.
    obs: np.ndarray
    #: (N, 2, OBS_SIZE) float32: both seats' last view of a hand that ended on the last step.
    final_obs: np.ndarray
    #: (N, 108) int8: the legal actions of each slot's seat to move.
    masks: np.ndarray
    #: (N,) int64: each slot's seat to move.
    players: np.ndarray
    #: (N, 2) float32: what the last step gave each seat.
    rewards: np.ndarray
    #: (N,) bool: the hand ended on the last step (a result of the game).
    terminated: np.ndarray
    #: (N,) bool: the turn limit ended the hand on the last step.
    truncated: np.ndarray
    #: (N, 5) int64: how the hand that ended on the last step ended (the record's result columns).
    results: np.ndarray

    @classmethod
    def empty(cls, n: int, obs_dtype: type = np.float32) -> Batch:
        """Zeroed arrays for ``n`` slots (the observations of ``obs_dtype``)."""
        return cls(
            np.zeros((n, H.RECORD_SIZE), dtype=np.int64),
            np.zeros((n, OBS_SIZE), dtype=obs_dtype),
            np.zeros((n, 2, OBS_SIZE), dtype=np.float32),
            np.zeros((n, NUM_ACTIONS), dtype=np.int8),
            np.zeros(n, dtype=np.int64),
            np.zeros((n, 2), dtype=np.float32),
            np.zeros(n, dtype=np.bool_),
            np.zeros(n, dtype=np.bool_),
            np.full((n, 5), H.NO_RESULT, dtype=np.int64),
        )


# --------------------------------------------------------------------------- compiled loops


# The per-slot helpers take the arrays, not the Batch: inside a prange loop (the threaded step)
# numba was seen to write some of a NamedTuple's arrays to copies (players, rewards), losing the
# writes.


@njit(cache=True, nogil=True)
def _record_end(
    state: np.ndarray,
    i: int,
    results: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    rewards: np.ndarray,
    final_obs: np.ndarray,
    scale: float,
    encode: bool,
) -> None:
    # Slot i's hand ended: its result, both seats' rewards and (with ``encode``) last views.
    H.note_result(state, i, results, terminated, truncated)
    H.end_rewards(state, i, scale, rewards[i])
    if encode:
        # Both seats' last view of the ended hand, for bootstrapping a truncated hand.
        H.encode(state, i, 0, final_obs[i, 0], 0, 0, 0, False)
        H.encode(state, i, 1, final_obs[i, 1], 0, 0, 0, False)


@njit(cache=True, nogil=True)
def _step_all(
    b: Batch, actions: np.ndarray, cfg: np.ndarray, rng: np.random.Generator, scale: float, encode: bool
) -> None:
    """Step every slot; a slot whose hand ended is dealt a new one from ``rng`` (in slot order)."""
    # The loop body clears and shows the slot itself: with those lines in per-slot helpers (taking
    # the Batch, as from the one-engine redesign to 2026-12-04, or its arrays, tried on 2026-12-06)
    # this step at 4096 slots was 10 to 40% slower. The threaded step shows through _show, which its
    # parallel loop and its deals share. The rare end of a hand goes through _record_end, shared
    # with the threaded step.
    for i in range(b.state.shape[0]):
        b.rewards[i, 0] = 0.0
        b.rewards[i, 1] = 0.0
        b.terminated[i] = False
        b.truncated[i] = False
        b.results[i, 0] = H.NO_RESULT
        if H.apply(b.state, i, actions[i], cfg):
            _record_end(
                b.state, i, b.results, b.terminated, b.truncated, b.rewards, b.final_obs, scale, encode
            )
            H.deal_random(b.state, i, cfg, rng)
        b.players[i] = H.mover(b.state, i)
        H.legal_into(b.state, i, b.masks[i], cfg)
        if encode:
            H.encode(b.state, i, b.players[i], b.obs[i], 0, 0, 0, False)


# The threaded step (``threads`` > 1): one compiled call, the slots on the threads and then the new
# deals on one thread in slot order, so that the generator is drawn from as in the serial step and
# every thread count gives the same results. Until 2026-12-07 it was three calls (apply, deal,
# show); in one call, each slot shown while its row is in the cache and one parallel region a step,
# two threads at 2048 slots ran 2.65 M decisions/s against 2.47 M (alternated runs, 2-core machine).


@njit(cache=True, nogil=True)
def _show(
    state: np.ndarray,
    i: int,
    players: np.ndarray,
    masks: np.ndarray,
    obs: np.ndarray,
    cfg: np.ndarray,
    encode: bool,
) -> None:
    # Slot i's seat to move, its mask and (with ``encode``) its observation.
    player = H.mover(state, i)
    players[i] = player
    H.legal_into(state, i, masks[i], cfg)
    if encode:
        H.encode(state, i, player, obs[i], 0, 0, 0, False)


@njit(cache=True, parallel=True, nogil=True)
def _step_threaded(
    state: np.ndarray,
    actions: np.ndarray,
    rewards: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    results: np.ndarray,
    final_obs: np.ndarray,
    players: np.ndarray,
    masks: np.ndarray,
    obs: np.ndarray,
    cfg: np.ndarray,
    rng: np.random.Generator,
    scale: float,
    encode: bool,
    ended: np.ndarray,
) -> None:
    n = state.shape[0]
    # On the threads: every slot's action, the record of each hand it ended, and the view of each
    # slot whose hand goes on.
    for i in prange(n):
        rewards[i, 0] = 0.0
        rewards[i, 1] = 0.0
        terminated[i] = False
        truncated[i] = False
        results[i, 0] = H.NO_RESULT
        over = H.apply(state, i, actions[i], cfg)
        ended[i] = over
        if over:
            _record_end(state, i, results, terminated, truncated, rewards, final_obs, scale, encode)
        else:
            _show(state, i, players, masks, obs, cfg, encode)
    # On this thread, in slot order: the generator's draws are those of the serial step.
    for i in range(n):
        if ended[i]:
            H.deal_random(state, i, cfg, rng)
            _show(state, i, players, masks, obs, cfg, encode)


@njit(cache=True, nogil=True)
def _show_all(b: Batch, cfg: np.ndarray, encode: bool) -> None:
    # Every slot's seat to move, its mask and (with ``encode``) its observation; no result yet.
    for i in range(b.state.shape[0]):
        b.results[i, 0] = H.NO_RESULT
        _show(b.state, i, b.players, b.masks, b.obs, cfg, encode)


@njit(cache=True, nogil=True)
def _count_refused(actions: np.ndarray, masks: np.ndarray) -> tuple[int, int, int, int]:
    # How many actions are outside the ids and the first such slot; then how many of the others
    # are illegal, and the first. Compiled: numpy's fancy indexing took 5% of a step.
    outside = illegal = 0
    first_outside = first_illegal = -1
    for i in range(actions.shape[0]):
        a = actions[i]
        if a < 0 or a >= NUM_ACTIONS:
            if outside == 0:
                first_outside = i
            outside += 1
        elif masks[i, a] == 0:
            if illegal == 0:
                first_illegal = i
            illegal += 1
    return outside, first_outside, illegal, first_illegal


@njit(cache=True, nogil=True)
def _reset_all(b: Batch, decks: np.ndarray, dealers: np.ndarray, cfg: np.ndarray, encode: bool) -> None:
    for i in range(b.state.shape[0]):
        H.deal(b.state, i, decks[i], dealers[i], cfg)
    _show_all(b, cfg, encode)


@njit(cache=True, nogil=True)
def _encode_all(s: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
    for i in range(s.shape[0]):
        H.encode(s, i, seats[i], out[i], 0, 0, 0, False)


@njit(cache=True, nogil=True)
def _policy_actions(
    policy: CompiledPolicy,
    randomly: bool,
    s: np.ndarray,
    cfg: np.ndarray,
    rng: np.random.Generator,
    chosen: np.ndarray,
    out: np.ndarray,
) -> None:
    for i in range(s.shape[0]):
        if chosen[i]:
            out[i] = P.policy_action(policy, randomly, s, i, cfg, rng)


@njit(cache=True, parallel=True, nogil=True)
def _policy_actions_threaded(
    policy: CompiledPolicy, s: np.ndarray, cfg: np.ndarray, chosen: np.ndarray, out: np.ndarray
) -> None:
    # A policy that draws nothing from the generator (not random) may choose on every thread. The
    # index is cast: prange counts in uint64, and a first-class function takes its exact signature.
    for i in prange(s.shape[0]):
        if chosen[i]:
            out[i] = policy(s, np.int64(i), cfg)


@njit(cache=True, nogil=True)
def _random_hands(n: int, cfg: np.ndarray, rng: np.random.Generator, results: np.ndarray) -> int:
    """Play ``n`` hands of uniformly random legal actions; fill ``results`` (n, 5) with each hand's
    result columns; returns the number of decisions taken."""
    s = np.zeros((1, H.RECORD_SIZE), dtype=np.int64)
    decisions = 0
    for h in range(n):
        H.deal_random(s, 0, cfg, rng)
        while not H.apply(s, 0, P.random_legal(s, 0, cfg, rng), cfg):
            decisions += 1
        decisions += 1
        for k, value in enumerate(H.result_of(s, 0)):
            results[h, k] = value
    return decisions


@njit(cache=True, nogil=True)
def _read_state(
    s: np.ndarray, deals: bool = False, hands: bool = False, k: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    # From the records s, through their accessors: with deals each slot's deck and dealer, with hands
    # both hands (else empty), each slot's stock's next k cards (-1 past the last), and the first
    # slot whose hand is over (-1: none). At 2048 slots, deals() takes 53 us against 39 us slicing the
    # record's columns; hands() 5.7 against 11.7, stock_tops(3) 23 against 73 (2026-12-07).
    n = s.shape[0]
    decks = np.empty((n if deals else 0, NUM_CARDS), np.int64)
    dealers = np.empty(n if deals else 0, np.int64)
    both = np.empty((n if hands else 0, 2), np.int64)
    tops = np.full((n, k), -1, np.int64)
    over = -1
    for i in range(n):
        if deals:
            decks[i], dealers[i] = H.deck_order(s, i), H.dealer_of(s, i)
        if hands:
            both[i, 0], both[i, 1] = H.hand_of(s, i, 0), H.hand_of(s, i, 1)
        stock = H.stock_cards(s, i)[:k]
        tops[i, : stock.size] = stock
        if over < 0 and H.result_of(s, i)[0] != H.NO_RESULT:
            over = i
    return decks, dealers, both, tops, over


def play_random_hands(
    num_hands: int, rules: Rules | None = None, seed: int = 0, turn_limit: int = DEFAULT_TURN_LIMIT
) -> StepResults:
    """Play ``num_hands`` whole hands of uniformly random legal actions in compiled code (no
    observations): the engine's raw speed, and a baseline of how random play ends."""
    count = as_int(num_hands)
    if count is None or count < 0:
        raise VectorError(f"num_hands must be a non-negative integer, got {num_hands!r}")
    results = np.full((count, 5), H.NO_RESULT, dtype=np.int64)
    cfg = rules_array(rules or Rules(), check_turn_limit(turn_limit))
    _random_hands(count, cfg, np.random.default_rng(seed), results)
    return StepResults(results[:, 0], results[:, 1], results[:, 2], results[:, 3:5])


# --------------------------------------------------------------------------- the Python face


@dataclass(frozen=True)
class StepResults:
    """How the hands that ended on the last step ended, one entry per slot.

    ``kind[i]`` indexes :data:`RESULT_KINDS` (-1: the hand of slot ``i`` goes on); ``winner[i]`` is
    the seat that scored (-1 for none), ``points[i]`` its points, ``deadwood[i]`` each seat's
    deadwood after a showdown (the defender's after layoffs), -1 after a dead or truncated hand,
    where no cards are shown.
    """

    kind: np.ndarray
    winner: np.ndarray
    points: np.ndarray
    deadwood: np.ndarray

    def names(self) -> list[str | None]:
        """The result kind of each slot by name (``None`` where the hand goes on)."""
        return [RESULT_KINDS[k] if k >= 0 else None for k in self.kind.tolist()]


class VectorGinRummy:
    """N hands in lockstep (hand mode), seen from the seat to move of each slot.

    ``VectorGinRummy(num_envs, rules=Rules(), seed=0, turn_limit=100)``; :meth:`reset` deals from
    given decks and dealers or from the env's generator, :meth:`step` applies one action per slot.
    ``observations=False`` skips building observation vectors (for playouts that need only masks).
    ``obs_dtype="uint8"`` returns the same observations in a quarter of the bytes (every entry is a
    small whole number; ``obs.astype(np.float32)`` is ``observe()``'s vector exactly): a step writes
    less memory, and a learner on a GPU sends less and converts there.

    ``threads``: how many threads :meth:`step` runs on (default 1). Every count gives exactly the
    same results: the slots are stepped on the threads, new deals drawn on one in slot order. More
    than one uses numba's threading layer; with GNU OpenMP's (numba's ``omp`` layer) a process
    forked from one that used it is terminated when it uses threads itself (start such workers with
    ``spawn`` or ``forkserver``), which is why one thread is the default. The most it takes is
    ``numba.config.NUMBA_NUM_THREADS`` (the cores the process may use).
    """

    def __init__(
        self,
        num_envs: int,
        rules: Rules | None = None,
        seed: int | None = None,
        turn_limit: int = DEFAULT_TURN_LIMIT,
        reward_scale: float = 1.0,
        observations: bool = True,
        threads: int = 1,
        obs_dtype: str = "float32",
    ) -> None:
        """Allocate ``num_envs`` slots (call :meth:`reset` before :meth:`step`)."""
        # A first run compiles the batched engine on its first step: the note says so just before.
        compiling.note_once()
        n = as_int(num_envs)
        if n is None or n < 1:
            raise VectorError(f"num_envs must be a positive integer, got {num_envs!r}")
        if rules is not None and not isinstance(rules, Rules):
            raise VectorError(f"rules must be a ginenv.rules.Rules, got {type(rules).__name__}")
        try:
            scale = finite_number("reward_scale", reward_scale)
        except (TypeError, ValueError):
            raise VectorError(f"reward_scale must be a finite number, got {reward_scale!r}") from None
        most = most_threads()
        k = as_int(threads)
        if k is None or not 1 <= k <= most:
            raise VectorError(
                f"threads must be an integer from 1 to {most} (numba's threads), got {threads!r}"
            )
        #: Threads :meth:`step` runs on.
        self.threads = k
        self.num_envs = n
        self.rules = rules or Rules()
        self.turn_limit = check_turn_limit(turn_limit)
        self.reward_scale = scale
        self.observations = bool(observations)
        #: The rule options as the compiled code reads them.
        self.rule_array = rules_array(self.rules, self.turn_limit)
        #: The generator that shuffles new deals (and drives random policies).
        self.rng = np.random.default_rng(seed)
        #: The slots' arrays (full state: for the compiled loops, tests and oracles, not for agents).
        if obs_dtype not in OBS_DTYPES:
            raise VectorError(f"obs_dtype must be one of {', '.join(OBS_DTYPES)}, got {obs_dtype!r}")
        #: The observations' dtype: ``float32`` (``observe()``'s), or ``uint8``, the same values in a
        #: quarter of the bytes (every entry is a small whole number), for a learner that converts
        #: them where it computes, on a GPU for instance.
        self.obs_dtype = str(obs_dtype)
        self.batch = Batch.empty(n, np.dtype(obs_dtype).type)
        self._ready = False

    # ------------------------------------------------------------------ generator

    def _shuffled(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        decks = np.tile(np.arange(NUM_CARDS, dtype=np.int64), (k, 1))
        self.rng.permuted(decks, axis=1, out=decks)
        return decks, self.rng.integers(0, 2, size=k, dtype=np.int64)

    # ------------------------------------------------------------------ API

    def reset(
        self, decks: np.ndarray | None = None, dealers: np.ndarray | None = None, seed: int | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Deal every slot: ``decks`` (N, 52) card ids in dealing order and ``dealers`` (N,) of 0/1,
        or from the generator (reseeded by ``seed``). Returns ``(obs, mask, player)``."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        n = self.num_envs
        given_decks, given_dealers = self._shuffled(n)
        if decks is not None:
            given_decks = _check_decks(decks, n)
        if dealers is not None:
            given_dealers = _check_dealers(dealers, n)
        b = self._fresh_obs()
        _reset_all(b, given_decks, given_dealers, self.rule_array, self.observations)
        self._ready = True
        return self._returned_obs(), b.masks.copy(), b.players.copy()

    def start_from(self, records: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Put every slot in a given position: ``records`` (N, record size) int64, hand records as
        :attr:`ginenv.engine.HandState.record` holds them (full state: e.g. one position with its
        hidden cards replaced by sampled worlds, ``research.worlds.world_records`` of the repository,
        for a search that plays each world out with a network). The positions must not be over.
        Returns ``(obs, mask, player)``, as :meth:`reset`."""
        arr = np.asarray(records)
        if arr.shape != (self.num_envs, H.RECORD_SIZE) or not np.issubdtype(arr.dtype, np.integer):
            raise VectorError(
                f"records must be ({self.num_envs}, {H.RECORD_SIZE}) integer hand records, "
                f"got {arr.dtype} {arr.shape}"
            )
        over = _read_state(np.ascontiguousarray(arr, dtype=np.int64))[-1]
        if over >= 0:
            raise VectorError(f"slot {over}'s position is over: nothing to play")
        b = self._fresh_obs()
        b.state[:] = arr
        _show_all(b, self.rule_array, self.observations)
        self._ready = True
        return self._returned_obs(), b.masks.copy(), b.players.copy()

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Apply one action per slot (the seat to move's); every action must be legal, else nothing
        changes. Returns ``(obs, mask, player, rewards, terminated, truncated)``."""
        if not self._ready:
            raise VectorError("call reset() before step()")
        acts = self.check_actions(actions)
        b = self._fresh_obs()
        if self.threads == 1:
            _step_all(b, acts, self.rule_array, self.rng, self.reward_scale, self.observations)
        else:
            self._step_threaded(acts)
        return (
            self._returned_obs(),
            b.masks.copy(),
            b.players.copy(),
            b.rewards.copy(),
            b.terminated.copy(),
            b.truncated.copy(),
        )

    def _fresh_obs(self) -> Batch:
        """The batch, with a new array for the observations about to be written (every row is).

        The array is then returned as it is (:meth:`_returned_obs`) and the batch reads nothing
        from it: copying 2 KB a slot took a fifth of a step, and an array once returned is never
        written again, whatever the caller keeps."""
        if self.observations:
            self.batch = self.batch._replace(obs=np.empty_like(self.batch.obs))
        return self.batch

    def _returned_obs(self) -> np.ndarray:
        # Without observations the array holds zeros the caller may not change: a copy.
        return self.batch.obs if self.observations else self.batch.obs.copy()

    def _step_threaded(self, acts: np.ndarray) -> None:
        b = self.batch
        numba.set_num_threads(self.threads)  # per calling thread: set at every step
        _step_threaded(
            b.state, acts, b.rewards, b.terminated, b.truncated, b.results, b.final_obs, b.players,
            b.masks, b.obs, self.rule_array, self.rng, self.reward_scale, self.observations,
            np.empty(self.num_envs, dtype=np.bool_),
        )  # fmt: skip

    def check_actions(self, actions: object) -> np.ndarray:
        """``actions`` as an (N,) int64 array if each is legal for its slot's seat to move, else
        :class:`VectorError` saying which slot and what is legal there."""
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise VectorError(f"actions must have shape ({self.num_envs},), one per slot, got {acts.shape}")
        if not np.issubdtype(acts.dtype, np.integer):
            raise VectorError(
                f"actions must be integer action ids 0..{NUM_ACTIONS - 1}, got dtype {acts.dtype}"
            )
        acts = acts.astype(np.int64, copy=False)
        outside, first_outside, illegal, first_illegal = _count_refused(acts, self.batch.masks)
        if outside:
            raise VectorError(
                f"{outside} action(s) outside 0..{NUM_ACTIONS - 1}, nothing was applied; "
                f"first: slot {first_outside} got {int(acts[first_outside])}"
            )
        if illegal:
            i = first_illegal
            legal = ", ".join(ACTION_NAMES[a] for a in np.flatnonzero(self.batch.masks[i]))
            raise VectorError(
                f"{illegal} illegal action(s), nothing was applied; first: slot {i}, "
                f"{ACTION_NAMES[acts[i]]!r} (id {int(acts[i])}) for player {int(self.batch.players[i])}; "
                f"legal there: {legal}"
            )
        return acts

    def policy_actions(self, policy: str = "greedy", slots: np.ndarray | None = None) -> np.ndarray:
        """The action a compiled policy (one of :func:`policy_names`) takes for the seat to move in
        each slot, (N,) int64: batched opponents and self-play playouts without leaving numba.
        ``slots`` (N,) bool computes only those slots (the others get -1). On :attr:`threads`
        threads, except ``random``, which draws from the env's generator in slot order."""
        kernel, randomly = _compiled(policy, "policy")
        if not self._ready:
            raise VectorError("call reset() before policy_actions()")
        if slots is None:
            chosen = np.ones(self.num_envs, dtype=np.bool_)
        else:
            chosen = np.asarray(slots)
            if chosen.shape != (self.num_envs,) or chosen.dtype != np.bool_:
                raise VectorError(
                    f"slots must be a bool array of shape ({self.num_envs},), "
                    f"got {chosen.dtype} {chosen.shape}"
                )
        out = np.full(self.num_envs, -1, dtype=np.int64)
        if self.threads > 1 and not randomly:
            numba.set_num_threads(self.threads)
            _policy_actions_threaded(kernel, self.batch.state, self.rule_array, chosen, out)
        else:
            _policy_actions(kernel, randomly, self.batch.state, self.rule_array, self.rng, chosen, out)
        return out

    @property
    def results(self) -> StepResults:
        """How the hands that ended on the last step ended (see :class:`StepResults`)."""
        r = self.batch.results
        return StepResults(r[:, 0].copy(), r[:, 1].copy(), r[:, 2].copy(), r[:, 3:5].copy())

    def observe(self, seat: np.ndarray | None = None) -> np.ndarray:
        """Observation vectors of ``seat`` (N,) per slot (default: the seat to move), as observe()
        gives them to that seat."""
        seats = self.batch.players if seat is None else _check_dealers(seat, self.num_envs, "seat")
        out = np.empty((self.num_envs, OBS_SIZE), dtype=np.float32)
        _encode_all(self.batch.state, seats, out)
        return out

    @property
    def final_observations(self) -> np.ndarray:
        """(N, 2, OBS_SIZE): for each slot whose hand ended on the last step, each seat's last view
        of that hand (what ``observe()`` gave the seat once it ended), for bootstrapping a truncated
        hand; rows of slots whose hand goes on are stale."""
        return self.batch.final_obs.copy()

    def deals(self) -> tuple[np.ndarray, np.ndarray]:
        """The deck (N, 52, dealing order) and dealer (N,) of each slot's current hand (full state)."""
        decks, dealers, *_ = _read_state(self.batch.state, deals=True)
        return decks, dealers

    def hands(self) -> np.ndarray:
        """Both seats' cards per slot as (N, 2) int64 bitmasks (full state: for tests and oracles)."""
        return _read_state(self.batch.state, hands=True)[2]

    def stock_tops(self, k: int) -> np.ndarray:
        """The next ``k`` cards of each slot's stock, top first, (N, k) int64, -1 past its last card
        (full state: for oracles, such as a training critic that sees the hidden cards)."""
        count = as_int(k)
        if count is None or count < 0:
            raise VectorError(f"k must be an integer >= 0, got {k!r}")
        return _read_state(self.batch.state, k=count)[3]


class OpponentVectorGinRummy:
    """N hands in lockstep where a learner plays one seat and a compiled opponent the other.

    ``opponent`` names a compiled policy (:func:`policy_names`: ``"greedy"``,
    ``ginenv.agents.baselines.greedy`` move for move; ``"hard"``, the compiled ``hard``; ``"random"``,
    uniformly random legal actions; or one registered with
    :func:`ginenv.kernels.policies.register_policy`). The learner's seat is ``seat`` (0 or 1) or, with
    ``seat=None``, drawn at random for every hand. :meth:`step` applies the learner's actions, then
    the opponents' moves in compiled code until every slot waits for the learner again, so the caller
    sees only the learner's decisions: observations and masks are always the learner's. A hand that
    ends before the learner's first decision (the opponent takes the upcard and knocks at once) is
    dealt again, as in :class:`ginenv.wrappers.SingleAgentEnv`.

    ``threads``: as :class:`VectorGinRummy`'s (default 1, the same results for every count, the
    same caveat of forked processes): the slots play on the threads, new hands are dealt (and the
    opponents' moves before the learner's first decision played) on one, in slot order. The
    ``random`` opponent draws from the generator as it plays, so it plays on one thread whatever
    ``threads`` says (:mod:`ginenv.kernels.opponent_loops`).
    """

    def __init__(
        self,
        num_envs: int,
        opponent: str = "greedy",
        seat: int | None = None,
        rules: Rules | None = None,
        seed: int | None = None,
        turn_limit: int = DEFAULT_TURN_LIMIT,
        reward_scale: float = 1.0,
        threads: int = 1,
    ) -> None:
        """Allocate the slots (call :meth:`reset` before :meth:`step`)."""
        self._kernel, self._randomly = _compiled(opponent, "opponent")
        if seat is not None and as_int(seat) not in (0, 1):
            raise VectorError(f"seat must be 0, 1 or None (a random seat every hand), got {seat!r}")
        self._engine = VectorGinRummy(num_envs, rules, seed, turn_limit, reward_scale, threads=threads)
        #: Threads :meth:`step` runs on (one with the ``random`` opponent).
        self.threads = 1 if self._randomly else self._engine.threads
        self.num_envs = self._engine.num_envs
        self.opponent = opponent
        self.seat = seat
        n = self.num_envs
        self._seats = np.zeros(n, dtype=np.int64)
        self._rewards = np.zeros(n, dtype=np.float32)
        self._final_obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
        self._ready = False

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Deal every slot and play the opponents up to the learners' first decisions: ``(obs, mask)``."""
        e = self._engine
        if seed is not None:
            e.rng = np.random.default_rng(seed)
        for i in range(self.num_envs):
            self._seats[i] = self.seat if self.seat is not None else e.rng.integers(0, 2)
        e.reset()
        self._run(np.zeros(self.num_envs, dtype=np.int64), first=True)
        self._ready = True
        return e.batch.obs, e.batch.masks.copy()

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The learners' actions (legal, else nothing changes), then the opponents' moves.

        Returns ``(obs, mask, rewards, terminated, truncated, final_obs)``: the learner's reward
        (N,), and where a hand ended, its final observation (the next hand's is in ``obs``).
        """
        if not self._ready:
            raise VectorError("call reset() before step()")
        self._run(self._engine.check_actions(actions), first=False)
        b = self._engine.batch
        return (
            b.obs,
            b.masks.copy(),
            self._rewards.copy(),
            b.terminated.copy(),
            b.truncated.copy(),
            self._final_obs.copy(),
        )

    def _run(self, actions: np.ndarray, first: bool) -> None:
        e, seats, fixed = self._engine, self._seats, -1 if self.seat is None else self.seat
        # Every slot's observation is written anew into a new array, returned as it is (as
        # VectorGinRummy.step does): no copy, and no array once returned is written again.
        b, cfg = e._fresh_obs(), e.rule_array
        results = (b.terminated, b.truncated, b.results)
        if self.threads == 1:
            OL.step_learners(
                b.state, b.masks, b.obs, *results, actions, seats, fixed, self._kernel, self._randomly, cfg,
                e.rng, e.reward_scale, self._rewards, self._final_obs, first,
            )  # fmt: skip
            return
        numba.set_num_threads(self.threads)  # per calling thread: set at every step
        OL.step_learners_threaded(
            b.state, b.masks, b.obs, *results, actions, seats, fixed, self._kernel, cfg, e.rng,
            e.reward_scale, self._rewards, self._final_obs, first, np.empty(self.num_envs, dtype=np.bool_),
        )  # fmt: skip

    @property
    def seats(self) -> np.ndarray:
        """The learner's seat in each slot's current hand."""
        return self._seats.copy()

    @property
    def dealers(self) -> np.ndarray:
        """The dealer's seat in each slot's current hand."""
        return self._engine.deals()[1]

    @property
    def results(self) -> StepResults:
        """How the hands that ended on the last step ended (see :class:`StepResults`)."""
        return self._engine.results

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, (N, 108) bool."""
        return self._engine.batch.masks.astype(bool)


def _compiled(name: object, what: str) -> tuple[CompiledPolicy, bool]:
    # A policy name as the loops take it, or one line saying which names there are.
    try:
        return P.compiled_policy(name)  # type: ignore[arg-type]
    except LookupError:
        raise VectorError(
            f"{what} must name a compiled policy ({', '.join(policy_names())}), got {name!r}"
        ) from None
    except ValueError as err:  # a bad parameter of a known policy (master@worlds=0)
        raise VectorError(f"{what}: {err}") from None


def _check_decks(decks: object, n: int) -> np.ndarray:
    arr = np.asarray(decks)
    if arr.shape != (n, NUM_CARDS) or not np.issubdtype(arr.dtype, np.integer):
        raise DeckError(
            f"decks must be an integer array of shape ({n}, 52) of card ids, got {arr.dtype} {arr.shape}"
        )
    arr = arr.astype(np.int64)
    if not (np.sort(arr, axis=1) == np.arange(NUM_CARDS)).all():
        bad = int(np.flatnonzero(~(np.sort(arr, axis=1) == np.arange(NUM_CARDS)).all(axis=1))[0])
        raise DeckError(f"deck {bad} does not hold each of the 52 card ids 0..51 exactly once")
    return arr


def _check_dealers(dealers: object, n: int, what: str = "dealers") -> np.ndarray:
    arr = np.asarray(dealers)
    if arr.shape != (n,) or not np.issubdtype(arr.dtype, np.integer) or ((arr != 0) & (arr != 1)).any():
        raise VectorError(
            f"{what} must be an integer array of shape ({n},) of 0 and 1, got {arr.dtype} {arr.shape}"
        )
    return arr.astype(np.int64)


__all__ = [
    "RESULT_KINDS",
    "Batch",
    "HandEnd",
    "OpponentVectorGinRummy",
    "StepResults",
    "VectorError",
    "VectorGinRummy",
    "most_threads",
    "play_random_hands",
    "policy_names",
    "rules_array",
]
