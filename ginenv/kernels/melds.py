"""Deprecated alias of :mod:`ginenv.kernels.meld_search` (this module's name before 0.2.0).

Kept for one release: importing it warns once; it is removed in 0.3.0 (:mod:`ginenv.deprecation`).
"""

from ginenv.deprecation import moved_module
from ginenv.kernels.meld_search import *  # noqa: F403
from ginenv.kernels.meld_search import __all__ as __all__

__deprecated_alias__ = "ginenv.kernels.meld_search"
__getattr__ = moved_module(__name__, __deprecated_alias__)
