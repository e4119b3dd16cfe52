"""Deprecated alias of :mod:`ginenv.experiments.cli.play_command` (this module's name before 0.2.0).

Kept for one release: importing it warns once; it is removed in 0.3.0 (:mod:`ginenv.deprecation`).
"""

from ginenv.experiments.cli.play_command import *  # noqa: F403

from ginenv.deprecation import moved_module

__deprecated_alias__ = "ginenv.experiments.cli.play_command"
__getattr__ = moved_module(__name__, __deprecated_alias__)
