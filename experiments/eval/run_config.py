"""Deprecated alias of :mod:`ginenv.experiments.eval.eval_config` (this module's name before 0.2.0).

Kept for one release: importing it warns once; it is removed in 0.3.0 (:mod:`ginenv.deprecation`).
"""

from ginenv.experiments.eval.eval_config import *  # noqa: F403

from ginenv.deprecation import moved_module

__deprecated_alias__ = "ginenv.experiments.eval.eval_config"
__getattr__ = moved_module(__name__, __deprecated_alias__)
