"""The inputs of learned policies: what a network reads, derived from one seat's observation only.

This module owns the input encodings a :class:`ginenv.agents.neural.MaskedPolicy` may declare
(:data:`INPUT_KINDS`), so the trainer, the neural agent and the SB3 bridge build a network's input
the same way:

- ``"observation"``: the observation vector as it is (:data:`ginenv.observation.OBS_SIZE` entries);
  the first networks were trained on it.
- ``"features"``: the observation with its scalars rescaled to about [0, 1], followed by
  :data:`FEATURE_SIZE` entries computed by :func:`hand_features_many` from the
  observation's own-hand plane: per card, the deadwood left after discarding it (11 cards held) or
  reachable by drawing it (10 held), whether it is in a meld, and the hand's deadwood, in units of
  :data:`POINTS` points. A raw-bit network must rediscover meld arithmetic from 52 bits; these are
  the numbers every heuristic level starts from, so PPO starts from them too.

Both read nothing but the observation, so a policy on either sees only what its seat may see.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ginenv.cards import NUM_CARDS
from ginenv.kernels.meld_search import (
    FULL_DECK,
    best_discard_deadwood,
    lowest_card,
    meldable,
    min_deadwood,
    own_deadwood,
    popcount,
)
from ginenv.observation import (
    KNOCK_LIMIT,
    OBS_SIZE,
    OPPONENT_SCORE,
    OWN_SCORE,
    STOCK_SIZE,
    TARGET,
    plane_slice,
)

INPUT_KINDS = ("observation", "features")


#: Per-card planes of :func:`hand_features_many`, in order (one entry per card id each).
FEATURE_PLANES = ("after_discard", "after_draw", "meldable")


@njit(cache=True, nogil=True)
def hand_features_many(hands: np.ndarray) -> np.ndarray:
    """What each card is worth to each hand (int64 masks of 10 or 11 cards), in deadwood points.

    Returns float32 ``(N, 3 * 52 + 1)``: the planes of :data:`FEATURE_PLANES`, then the hand's own
    deadwood. ``after_discard``: for an 11-card hand, the least deadwood left after discarding that
    held card (0 elsewhere); ``after_draw``: for a 10-card hand, the least deadwood reachable by adding
    that card (not held) and making the best discard (0 elsewhere); ``meldable``: 1 for each held card
    that belongs to some meld of the hand. The last entry: the least deadwood of a 10-card hand, or
    after the best discard of an 11-card one. These are the figures the heuristic levels compute
    (what greedy reads to draw and discard), given to a learned policy so it need not rediscover
    the meld arithmetic from raw card bits.
    """
    n = hands.size
    out = np.zeros((n, 3 * 52 + 1), dtype=np.float32)
    for i in range(n):
        hand = hands[i]
        held = popcount(hand)
        if held >= 11:
            best = 1 << 30
            rest = hand
            while rest:
                low = rest & -rest
                rest ^= low
                value = min_deadwood(hand ^ low)
                out[i, lowest_card(low)] = value
                best = min(best, value)
            out[i, 3 * 52] = best
        else:
            rest = FULL_DECK & ~hand
            while rest:
                low = rest & -rest
                rest ^= low
                out[i, 52 + lowest_card(low)] = best_discard_deadwood(hand | low)
            out[i, 3 * 52] = own_deadwood(hand)
        melded = meldable(hand)
        while melded:
            low = melded & -melded
            melded ^= low
            out[i, 104 + lowest_card(low)] = 1.0
    return out


#: Entries appended by the ``"features"`` input (:func:`hand_features_many`).
FEATURE_SIZE = len(FEATURE_PLANES) * NUM_CARDS + 1
#: Deadwood features are divided by this many points.
POINTS = 50.0

# Rescales the observation's scalars (cards left, knock limit, match points) to about [0, 1].
_SCALE = np.ones(OBS_SIZE, dtype=np.float32)
_SCALE[STOCK_SIZE] = 1 / 31
_SCALE[KNOCK_LIMIT] = 1 / 10
_SCALE[[OWN_SCORE, OPPONENT_SCORE, TARGET]] = 1 / 100
_FEATURE_SCALE = np.full(FEATURE_SIZE, 1 / POINTS, dtype=np.float32)
_FEATURE_SCALE[2 * NUM_CARDS : 3 * NUM_CARDS] = 1.0  # the meldable plane is 0/1 already
_HAND = plane_slice("hand")
_BITS = np.int64(1) << np.arange(NUM_CARDS, dtype=np.int64)


def input_size(kind: str) -> int:
    """Entries of the network input of ``kind`` (one of :data:`INPUT_KINDS`)."""
    check_kind(kind)
    return OBS_SIZE + (FEATURE_SIZE if kind == "features" else 0)


def check_kind(kind: object) -> str:
    """``kind`` if it is one of :data:`INPUT_KINDS`, else ValueError naming the allowed ones."""
    if kind not in INPUT_KINDS:
        raise ValueError(f"unknown policy input {kind!r}; allowed: {', '.join(INPUT_KINDS)}")
    return str(kind)


def hand_masks(observations: np.ndarray) -> np.ndarray:
    """The own hand of each observation (B, OBS_SIZE) as int64 card bitmasks (B,)."""
    held = observations[:, _HAND] > 0.5
    return (held.astype(np.int64) * _BITS).sum(axis=1)


def scaled_hand_features(hands: np.ndarray) -> np.ndarray:
    """The ``"features"`` input's :data:`FEATURE_SIZE` entries for hands given as int64 card
    bitmasks (B,): :func:`hand_features_many` in units of :data:`POINTS` points (the
    meldable plane stays 0/1). A training oracle computes them for the opponent's hand too."""
    return hand_features_many(np.asarray(hands, dtype=np.int64)) * _FEATURE_SCALE


def policy_inputs(observations: np.ndarray, kind: str) -> np.ndarray:
    """Network inputs (B, :func:`input_size`) float32 for a batch of observations (B, OBS_SIZE)."""
    check_kind(kind)
    obs = np.asarray(observations, dtype=np.float32)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
        raise ValueError(f"observations must have shape (batch, {OBS_SIZE}), got {obs.shape}")
    if kind == "observation":
        return obs
    out = np.empty((obs.shape[0], OBS_SIZE + FEATURE_SIZE), dtype=np.float32)
    np.multiply(obs, _SCALE, out=out[:, :OBS_SIZE])
    out[:, OBS_SIZE:] = scaled_hand_features(hand_masks(obs))
    return out
