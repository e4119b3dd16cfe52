"""What a test needs beyond the core install, and what happens when it is missing.

The optional extras of pyproject.toml (``sb3``, ``ray``, ``torchrl``, ``rllib``, ``tianshou``,
``baselines``, ``docs``, ``play-load``, and ``dev``'s test tools) each bring libraries that some
tests drive. A test names what it needs with :func:`needs_extra` (or :func:`needs` for what pip does
not install, the system's Chromium): where it is missing, the test is skipped with the extra's
name and the command that installs it, ``needs the sb3 extra: pip install '.[sb3]'``. In CI
(the environment variable ``CI`` set to ``true``, as CI services set it) everything is installed,
so a missing extra fails the test instead: a skip there would hide a broken install.

Called at a module's top, before the module imports the extra's libraries, it skips (or fails)
the whole module; called in a test or a fixture, that test.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

#: Values of ``CI`` that mean "running in CI" (GitHub Actions and GitLab set ``true``).
CI_VALUES = frozenset({"true", "1", "yes"})


def in_ci() -> bool:
    """Whether the environment says this runs in CI (``CI=true``), where nothing may be skipped."""
    return os.environ.get("CI", "").strip().lower() in CI_VALUES


def needs(what: str, install: str, missing: str | None) -> None:
    """Skip the calling test (or module) when ``missing`` says what is absent, naming ``what`` it
    needs and how to ``install`` it; in CI, fail instead. ``missing`` None: nothing to do."""
    if missing is None:
        return
    reason = f"needs {what}: {install} ({missing})"
    if in_ci():
        reason += "; CI installs everything the tests need, so nothing is skipped there"
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def absent(name: str) -> bool:
    """Whether module ``name`` cannot be found. It is looked up, not imported (importing Locust
    patches the whole process with gevent); a dotted name's parents are imported to look inside."""
    if name in sys.modules:  # imported already, or None: known not to import
        return sys.modules[name] is None
    try:
        return importlib.util.find_spec(name) is None
    except ModuleNotFoundError:  # a parent package is missing
        return True


def needs_extra(extra: str, *modules: str) -> None:
    """Skip (outside CI) or fail (in CI) unless every one of ``modules`` is installed: the libraries
    of pyproject.toml's optional extra ``extra`` that the test uses, e.g.
    ``needs_extra("sb3", "stable_baselines3", "sb3_contrib")``. A library that is installed but
    broken is not skipped: its import fails the test."""
    if not modules:
        raise ValueError(f"needs_extra({extra!r}) names no module: name the modules the test imports")
    missing = [name for name in modules if absent(name)]
    needs(
        f"the {extra} extra",
        f"pip install '.[{extra}]'",
        f"not installed: {', '.join(missing)}" if missing else None,
    )
