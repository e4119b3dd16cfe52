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
pytest-xdist (``dev.py test`` runs a worker a core, ``--dist worksteal``) gives each
worker a run of consecutive tests, and one that runs out takes tests another has not started; it cannot split
a test: one of minutes collected last (tests/test_packaging.py sorts after every folder) ran alone at
the end of a run while the other worker sat idle.

**What each test costs the machine.** CI's budget is 15 minutes of a 2-core machine, so what counts
is CPU, not a test's wall time (which another worker's load stretches). With ``GINENV_TEST_CPU``
naming a file, each test appends one JSON line to it: its node id, the CPU seconds of the process
running it (``self``), of the child processes it waited for (``children``: the commands, servers
and notebooks it starts) and its wall seconds. ``python3 dev.py test`` prints the 15 slowest tests;
``GINENV_TEST_CPU=cpu.jsonl python3 dev.py test`` then says which ones the budget goes to.

What a test needs beyond the core install is named with tests/support/extras.py's ``needs_extra``.
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cpu_cost import cpu_seconds

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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """One JSON line a test in the file ``GINENV_TEST_CPU`` names (see the module docstring)."""
    out = os.environ.get("GINENV_TEST_CPU")
    if not out:
        yield
        return
    own, children = cpu_seconds()
    started = time.perf_counter()
    yield
    wall = time.perf_counter() - started
    own_after, children_after = cpu_seconds()
    row = {"id": item.nodeid, "self": own_after - own, "children": children_after - children, "wall": wall}
    with open(out, "a", encoding="utf-8") as file:  # one short append a line: workers do not interleave
        file.write(json.dumps(row) + "\n")
