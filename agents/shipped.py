"""The network file shipped inside the package, named where neither torch nor an agent is loaded.

The registry (:mod:`ginenv.agents`) registers ``neural``, ``master_net`` and ``master_prior`` with
this file as their weights without importing torch, and :mod:`ginenv.agents.neural` plays it; both
import it from here, so the neural package never reads a name back from the package that builds
its agents lazily (``ginenv.agents`` re-exports it as ``ginenv.agents.SHIPPED_CHECKPOINT``, and
``ginenv.agents.neural`` as ``ginenv.agents.neural.SHIPPED_CHECKPOINT``).
"""

from pathlib import Path

#: The network shipped inside the package as the agent ``neural``: the policy and its auxiliary
#: opponent-hand head; its ``config`` records the training run that wrote it (docs/training.md).
SHIPPED_CHECKPOINT = Path(__file__).resolve().parent / "neural" / "data" / "neural.pt"
