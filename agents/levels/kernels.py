"""Deprecated alias of :mod:`ginenv.agents.levels.heuristics_compiled` (this module's name before 0.2.0).

Kept for one release: importing it warns once; it is removed in 0.3.0 (:mod:`ginenv.deprecation`).
"""

from ginenv.agents.levels.heuristics_compiled import *  # noqa: F403
from ginenv.agents.levels.heuristics_compiled import __all__ as __all__

from ginenv.deprecation import moved_module

__deprecated_alias__ = "ginenv.agents.levels.heuristics_compiled"
__getattr__ = moved_module(__name__, __deprecated_alias__)
