"""What every test process shares: the engine's "compiling once" note said where no test reads it.

A fresh checkout has no compiled engine in numba's cache, and the first env or command of a process
says so on stderr (:mod:`ginenv.compiling`). Tests read commands' stderr line by line: the note is
said here, once a process, before any test runs (tests/ginenv/test_compiling.py tests the note
itself, in processes of its own).
"""

from __future__ import annotations

import io

import pytest


def pytest_configure(config: pytest.Config) -> None:
    from ginenv.compiling import note_once

    note_once(io.StringIO())
