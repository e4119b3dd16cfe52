"""The one error for bad input from a person, shared by evaluation, training and the command line."""

from __future__ import annotations


class UsageError(ValueError):
    """Bad input from a person: a config, a spec, a flag; the CLI prints its message in one line and
    exits 2.

    The message names the setting, what was given and what is allowed. ``HarnessError``
    (:mod:`ginenv.experiments.eval.harness`) is this class under its older name.
    """


__all__ = ["UsageError"]
