"""The compiled code of ginenv: the one implementation of the rules, in numba.

- :mod:`ginenv.kernels.melds`: what a hand of cards is worth: card bit tricks, the exact least
  deadwood, legal knocks and best discards, arrangements, the showdown (melds, layoffs, the score of
  a knock). Its names are re-exported here (``from ginenv import kernels as K; K.min_deadwood``).
- :mod:`ginenv.kernels.hand`: a hand's state as one int64 record and its step: dealing, legal
  actions, applying an action, the observation encoder.
- :mod:`ginenv.kernels.policies`: the compiled policies (random, greedy, master's rollout policy)
  that the batched engine's opponents, master's search and the tests share.

:class:`ginenv.engine.HandState` (and so the AEC env, matches and replays), the batched engine
(:mod:`ginenv.vector`) and the agents all call these; nothing else implements a rule.
``tests/ginenv/reference.py`` is the independent brute-force oracle they are tested against.
"""

from ginenv.kernels.melds import (
    CARD_VALUE,
    FEATURE_PLANES,
    FULL_DECK,
    KNOCK_KINDS,
    LANE,
    MAX_ARRANGEMENTS,
    RANK_MASK,
    RUN_DEADWOOD,
    KnockKind,
    best_discard_deadwood,
    best_discards,
    best_layoffs,
    deadwood_many,
    hand_features_many,
    hand_value,
    highest_card,
    knock_discards,
    knock_outcome,
    layoff_deadwood,
    layoff_target_count,
    least_arrangements,
    lowest_card,
    meldable,
    min_deadwood,
    own_deadwood,
    own_deadwood_many,
    popcount,
    showdown_melds,
)

__all__ = [
    "CARD_VALUE",
    "FEATURE_PLANES",
    "FULL_DECK",
    "KNOCK_KINDS",
    "LANE",
    "MAX_ARRANGEMENTS",
    "RANK_MASK",
    "RUN_DEADWOOD",
    "KnockKind",
    "best_discard_deadwood",
    "best_discards",
    "best_layoffs",
    "deadwood_many",
    "hand_features_many",
    "hand_value",
    "highest_card",
    "knock_discards",
    "knock_outcome",
    "layoff_deadwood",
    "layoff_target_count",
    "least_arrangements",
    "lowest_card",
    "meldable",
    "min_deadwood",
    "own_deadwood",
    "own_deadwood_many",
    "popcount",
    "showdown_melds",
]
