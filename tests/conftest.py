"""What every test process shares: the installed package ahead of the checkout, and the engine's
"compiling once" note said where no test reads it.

**The installed package wins.** The repository root holds ``ginenv/`` but not ``ginenv.agents`` or
``ginenv.experiments`` (they are the top-level folders ``agents/`` and ``experiments/``, mapped under
``ginenv`` by the install). ``python -m pytest`` puts the current folder first on ``sys.path``,
pytest-xdist's workers put it first too and into ``PYTHONPATH`` (so every process a test starts
inherits it), and pyproject.toml's ``pythonpath`` names the root for ``research/``, which is not
installed. With ginenv installed from its wheel, the root's ``ginenv/`` would shadow it and nothing
of ``ginenv.agents`` would import (an unpacked sdist's tests failed to collect). So before any test
module is imported, the root moves to the end of ``sys.path`` and out of ``PYTHONPATH``: an
installed ginenv, editable or not, is found first, and ``research`` (and only what nothing installed
provides) still comes from the root. An editable install (``dev.py``) resolves to these same
folders, so it runs exactly as before.

**The compiling note.** A fresh checkout has no compiled engine in numba's cache, and the first env
or command of a process says so on stderr (:mod:`ginenv.compiling`). Tests read commands' stderr
line by line: the note is said here, once a process, before any test runs
(tests/ginenv/test_compiling.py tests the note itself, in processes of its own).

**The long tests start first.** A test marked ``long`` (40 s or more on 2 cores; the marker
is registered in pyproject.toml) is moved ahead of the others, which keep their collected order.
pytest-xdist (``dev.py test`` runs ``-n auto --dist worksteal``) gives each worker a run of
consecutive tests, and a worker that runs out takes tests the other has not started; it cannot split
a test: one of minutes collected last (tests/test_packaging.py sorts after every folder) ran alone at
the end of a run while the other worker sat idle.

What a test needs beyond the core install is named with tests/support/extras.py's ``needs_extra``.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def is_root(entry: str) -> bool:
    """Whether a ``sys.path`` or ``PYTHONPATH`` entry names the repository root ("" is the current
    folder)."""
    return Path(entry or os.getcwd()).resolve() == ROOT


def root_last() -> None:
    """The repository root at the end of ``sys.path`` and nowhere in ``PYTHONPATH`` (see the module
    docstring)."""
    sys.path[:] = [entry for entry in sys.path if not (isinstance(entry, str) and is_root(entry))]
    sys.path.append(str(ROOT))
    inherited = os.environ.get("PYTHONPATH")
    if inherited is not None:
        kept = [entry for entry in inherited.split(os.pathsep) if entry and not is_root(entry)]
        if kept:
            os.environ["PYTHONPATH"] = os.pathsep.join(kept)
        else:
            del os.environ["PYTHONPATH"]


root_last()


def pytest_configure(config: pytest.Config) -> None:
    from ginenv.compiling import note_once

    note_once(io.StringIO())


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A stable sort: the long tests first, in their collected order, then every other test in its.
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
