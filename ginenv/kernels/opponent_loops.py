"""The compiled loops of the opponent engine (:class:`ginenv.vector.OpponentVectorGinRummy`).

N slots, in each a learner's seat and a compiled opponent (:mod:`ginenv.kernels.policies`): a step
applies the learner's action, then the opponent's moves until the learner is to move again; a hand
that ends is recorded (its result, the learner's reward, the learner's last view) and a new one
dealt from the engine's generator, with the learner's seat drawn for it; a new hand that ends before
the learner's first decision is dealt again without a record. :func:`step_learners` does that slot
after slot on one thread. :func:`step_learners_threaded` does the same work in two loops of one
call: every slot on the threads, then the slots whose hand ended on one thread, in slot order (until
2026-12-07 three calls, the views in a loop of their own). The generator is drawn from only while
dealing, in slot order as the serial loop does, so every thread count gives the serial results; an
opponent that draws from the generator (``random``) plays on the serial loop only. Both release
the GIL (``nogil``): a trainer may step one engine while another thread runs its network.

The loops take the arrays of a :class:`ginenv.vector.Batch`, not the NamedTuple: inside a prange
loop numba was seen to write some of a NamedTuple's arrays to copies, losing the writes. A prange
index is uint64 and a policy (a first-class function) takes its exact signature, so the threaded
loops call it with the index cast to int64, as :class:`ginenv.vector.VectorGinRummy`'s do.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from ginenv.kernels import hand as H
from ginenv.kernels import policies as P


@njit(cache=True)
def _record_learner_end(
    state: np.ndarray,
    i: int,
    seat: int,
    scale: float,
    results: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    seat_rewards: np.ndarray,
    rewards: np.ndarray,
    final_obs: np.ndarray,
) -> None:
    # Slot i's hand, in which the learner (``seat``) decided, ended: its result, the learner's
    # reward (through ``seat_rewards``, both seats' in float64) and the learner's last view.
    H.note_result(state, i, results, terminated, truncated)
    H.end_rewards(state, i, scale, seat_rewards)
    rewards[i] = seat_rewards[seat]
    H.encode(state, i, seat, final_obs[i], 0, 0, 0, False)


@njit(cache=True, nogil=True)
def step_learners(
    state: np.ndarray,
    masks: np.ndarray,
    obs: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    results: np.ndarray,
    actions: np.ndarray,
    seats: np.ndarray,
    fixed_seat: int,
    policy: Any,
    randomly: bool,
    cfg: np.ndarray,
    rng: np.random.Generator,
    scale: float,
    rewards: np.ndarray,
    final_obs: np.ndarray,
    first: bool,
) -> None:
    """Apply each slot's learner action (``first``: none, a fresh deal), then the compiled opponent's
    moves until the learner's next decision. A hand that ends is recorded (``results``, the
    learner's ``rewards``, its ``final_obs``) and a new one dealt, with a new learner seat unless
    ``fixed_seat`` >= 0; a new hand that ends before the learner's first decision is dealt again.
    Last, each slot's learner mask and observation (``masks``, ``obs``)."""
    seat_rewards = np.zeros(2, dtype=np.float64)
    for i in range(state.shape[0]):
        rewards[i] = 0.0
        terminated[i] = False
        truncated[i] = False
        results[i, :] = H.NO_RESULT
        # ``fresh``: the learner has not decided yet in the slot's current hand.
        fresh = first
        ended = False if first else H.apply(state, i, actions[i], cfg)
        while True:
            if ended:
                if not fresh:
                    _record_learner_end(
                        state, i, seats[i], scale, results, terminated, truncated, seat_rewards, rewards,
                        final_obs,
                    )  # fmt: skip
                # A hand the learner had no say in (the opponent took the upcard and knocked) is
                # dealt again without a record.
                H.deal_random(state, i, cfg, rng)
                seats[i] = fixed_seat if fixed_seat >= 0 else rng.integers(0, 2)
                fresh = True
                ended = False
            if H.mover(state, i) == seats[i]:
                break
            ended = H.apply(state, i, P.policy_action(policy, randomly, state, i, cfg, rng), cfg)
        H.legal_into(state, i, masks[i], cfg)
        H.encode(state, i, seats[i], obs[i], 0, 0, 0, False)


@njit(cache=True, nogil=True)
def _show_learner(
    state: np.ndarray, i: int, seats: np.ndarray, masks: np.ndarray, obs: np.ndarray, cfg: np.ndarray
) -> None:
    # Slot i's learner mask and observation.
    H.legal_into(state, i, masks[i], cfg)
    H.encode(state, i, seats[i], obs[i], 0, 0, 0, False)


@njit(cache=True, parallel=True, nogil=True)
def step_learners_threaded(
    state: np.ndarray,
    masks: np.ndarray,
    obs: np.ndarray,
    terminated: np.ndarray,
    truncated: np.ndarray,
    results: np.ndarray,
    actions: np.ndarray,
    seats: np.ndarray,
    fixed_seat: int,
    policy: Any,
    cfg: np.ndarray,
    rng: np.random.Generator,
    scale: float,
    rewards: np.ndarray,
    final_obs: np.ndarray,
    first: bool,
    ended: np.ndarray,
) -> None:
    """:func:`step_learners` with the slots on the threads (``policy`` must not draw from a
    generator): first, on the threads, each slot's learner action (``first``: none), the opponent's
    moves until the learner's turn or the hand's end, the record of a hand the learner decided in,
    and the learner's view where the hand goes on; then, on this thread in slot order (the
    generator's draws are the serial loop's), each slot whose hand ended gets a new hand and learner
    seat and the opponent's moves up to the learner's first decision, dealt again while a new hand
    ends before it, and its learner's view."""
    n = state.shape[0]
    for i in prange(n):
        rewards[i] = 0.0
        terminated[i] = False
        truncated[i] = False
        results[i, :] = H.NO_RESULT
        over = False if first else H.apply(state, i, actions[i], cfg)
        while not over and H.mover(state, i) != seats[i]:
            over = H.apply(state, i, policy(state, np.int64(i), cfg), cfg)
        if over and not first:
            seat_rewards = np.zeros(2, dtype=np.float64)  # only where a hand ended: rare
            _record_learner_end(
                state, i, seats[i], scale, results, terminated, truncated, seat_rewards, rewards, final_obs
            )
        ended[i] = over
        if not over:
            _show_learner(state, i, seats, masks, obs, cfg)
    for i in range(n):
        over = ended[i]
        if not over:
            continue
        while over:
            H.deal_random(state, i, cfg, rng)
            seats[i] = fixed_seat if fixed_seat >= 0 else rng.integers(0, 2)
            over = False
            while not over and H.mover(state, i) != seats[i]:
                over = H.apply(state, i, policy(state, i, cfg), cfg)
        _show_learner(state, i, seats, masks, obs, cfg)


__all__ = ["step_learners", "step_learners_threaded"]
