"""Test helpers shared by the batched engine's tests and the sampled worlds' tests: a hand cut at the
start of a turn, and an AEC env dealt a given deck (to replay a position's history in)."""

from __future__ import annotations

import random

import numpy as np

from ginenv import gin_rummy_v0
from ginenv.actions import KNOCK_BASE
from ginenv.cards import CARD_NAMES
from ginenv.engine import HandState, Phase
from ginenv.rules import Rules


def aec_for(rules: Rules, turn_limit: int, deck: np.ndarray, dealer: int) -> gin_rummy_v0.raw_env:
    """An AEC env (hand mode) dealt ``deck`` (card ids in dealing order) with ``dealer`` dealing."""
    env = gin_rummy_v0.raw_env(rules=rules, turn_limit=turn_limit)
    env.reset(options={"deck": [CARD_NAMES[c] for c in deck], "dealer": int(dealer)})
    return env


def cut_position(seed: int, steps: int) -> tuple[HandState, list[int]]:
    """A hand after ``steps`` random legal actions, cut at the start of a turn (a draw)."""
    rng = random.Random(seed)
    state = HandState(Rules(), dealer=seed % 2, rng=rng)
    played: list[int] = []
    while not state.is_over and (len(played) < steps or state.phase is not Phase.DRAW):
        legal = state.legal_actions()
        knocks = [a for a in legal if a >= KNOCK_BASE]
        action = knocks[0] if knocks else rng.choice(legal)
        state.step(action)
        played.append(action)
    return state, played
