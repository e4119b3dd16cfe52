"""The compiled code of ginenv: the one implementation of the rules, in numba.

- :mod:`ginenv.kernels.meld_search`: what a hand of cards is worth: card bit tricks, the exact least
  deadwood, legal knocks and best discards, arrangements, the showdown (melds, layoffs, the score of
  a knock). Its names are re-exported here (``from ginenv import kernels as K; K.min_deadwood``).
- :mod:`ginenv.kernels.hand`: a hand's state as one int64 record and its step: dealing, legal
  actions, applying an action, the observation encoder.
- :mod:`ginenv.kernels.policies`: the batched engine's table of compiled opponents: ``random``, and
  the strategies the agents layer registers by name (``greedy``, ``hard``).
- :mod:`ginenv.kernels.opponent_loops`: the opponent engine's loops, a learner's decisions in N
  slots with a compiled opponent's moves played between them, on one thread or several.

:class:`ginenv.engine.HandState` (and so the AEC env, matches and replays), the batched engine
(:mod:`ginenv.vector`) and the agents all call these; nothing else implements a rule.
``tests/ginenv/reference.py`` is the independent brute-force oracle they are tested against.
"""

# The rule primitives are the package's own names (``K.min_deadwood``); their list is melds' __all__.
from ginenv.kernels.meld_search import *  # noqa: F403
from ginenv.kernels.meld_search import __all__ as __all__
