"""tests/support/extras.py: a missing extra skips a test with the extra's name outside CI and fails
it in CI; an installed one lets it run."""

from __future__ import annotations

import sys
from types import ModuleType

import pytest
from extras import in_ci, needs, needs_extra


@pytest.fixture
def outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)


@pytest.fixture
def inside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")


@pytest.mark.parametrize(
    ("value", "ci"), [("true", True), ("TRUE", True), ("1", True), ("false", False), ("", False)]
)
def test_ci_is_what_the_environment_says(value: str, ci: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", value)
    assert in_ci() is ci


def test_a_missing_extra_skips_with_its_name_and_install_command(
    outside_ci: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fakes, whatever is installed: a module already imported, and a missing one (None in
    # sys.modules is how Python marks a module that cannot be imported).
    monkeypatch.setitem(sys.modules, "stable_baselines3", ModuleType("stable_baselines3"))
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)
    with pytest.raises(pytest.skip.Exception) as skipped:
        needs_extra("sb3", "stable_baselines3", "sb3_contrib")
    assert str(skipped.value) == "needs the sb3 extra: pip install '.[sb3]' (not installed: sb3_contrib)"


def test_a_missing_extra_fails_in_ci(inside_ci: None) -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        needs_extra("play-load", "no_such_module_of_ginenv", "json")
    assert str(failed.value) == (
        "needs the play-load extra: pip install '.[play-load]' (not installed: no_such_module_of_ginenv); "
        "CI installs everything the tests need, so nothing is skipped there"
    )


@pytest.mark.parametrize("environment", ["outside_ci", "inside_ci"])
def test_installed_modules_let_the_test_run(environment: str, request: pytest.FixtureRequest) -> None:
    request.getfixturevalue(environment)
    needs_extra("core", "numpy", "numpy.linalg", "json")  # nothing raised
    needs("a thing", "install it", None)


def test_a_dotted_name_whose_package_is_missing_is_missing(outside_ci: None) -> None:
    with pytest.raises(pytest.skip.Exception, match=r"not installed: no_such_package_of_ginenv\.rllib\)$"):
        needs_extra("rllib", "no_such_package_of_ginenv.rllib")


def test_what_pip_does_not_install_is_named_with_its_install_command(outside_ci: None) -> None:
    with pytest.raises(pytest.skip.Exception) as skipped:
        needs("the system's Chromium", "apt-get install chromium", "none at 'chromium'")
    assert str(skipped.value) == "needs the system's Chromium: apt-get install chromium (none at 'chromium')"


def test_an_extra_without_modules_is_refused() -> None:
    with pytest.raises(ValueError, match=r"needs_extra\('sb3'\) names no module"):
        needs_extra("sb3")
