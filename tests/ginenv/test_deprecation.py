"""The old paths of the modules renamed in 0.2.0 (ginenv.deprecation): each still imports, warns once
with a DeprecationWarning that names the new path and the release that drops the old one, and gives
the very same objects as the new path."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from ginenv.deprecation import REMOVED_IN

#: Old path -> new path: the renames of 0.2.0 (the changelog's Changed section lists each).
MOVED = {
    "ginenv.kernels.melds": "ginenv.kernels.meld_search",
    "ginenv.agents.levels.kernels": "ginenv.agents.levels.heuristics_compiled",
    "ginenv.agents.levels.hard_kernel": "ginenv.agents.levels.hard_compiled",
    "ginenv.agents.levels.base": "ginenv.agents.levels.level_base",
    "ginenv.agents.neural.checkpoint": "ginenv.agents.neural.policy_file",
    "ginenv.experiments.config": "ginenv.experiments.config_loader",
    "ginenv.experiments.eval.config": "ginenv.experiments.eval.ladder_config",
    "ginenv.experiments.eval.run_config": "ginenv.experiments.eval.eval_config",
    "ginenv.experiments.train.checkpoints": "ginenv.experiments.train.training_checkpoints",
    "ginenv.experiments.train.networks": "ginenv.experiments.train.actor_critic",
    "ginenv.experiments.cli.play": "ginenv.experiments.cli.play_command",
}


def aliases_in_the_package() -> dict[str, str]:
    """Every module of the installed package that marks itself a deprecated alias, read from its
    source (nothing imported): old path -> the path it names."""
    import ginenv.agents
    import ginenv.experiments

    found = {}
    for package in (ginenv, ginenv.agents, ginenv.experiments):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*.py")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.startswith("__deprecated_alias__ = "):
                    parts = path.relative_to(root).with_suffix("").parts
                    found[".".join([package.__name__, *parts])] = line.split("=", 1)[1].strip().strip("\"'")
    return found


def test_every_alias_is_one_of_the_renames() -> None:
    assert aliases_in_the_package() == MOVED
    assert REMOVED_IN == "0.3.0"


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_path_imports_warns_once_and_gives_the_same_objects(
    old: str, new: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = importlib.import_module(new)
    parent, _, leaf = old.rpartition(".")
    monkeypatch.delitem(sys.modules, old, raising=False)  # a first import, whatever ran before
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        alias = importlib.import_module(old)
        assert importlib.import_module(old) is alias
        exec(f"import {old}\nfrom {parent} import {leaf}", {})  # every spelling, after the first
    said = [w for w in caught if issubclass(w.category, DeprecationWarning) and old in str(w.message)]
    assert len(said) == 1, [str(w.message) for w in said]
    told = f"{old} is deprecated and will be removed in ginenv 0.3.0: import {new} instead"
    assert str(said[0].message) == told
    assert said[0].filename == __file__  # the line that imported the old path, not importlib's
    assert alias is not target and alias.__deprecated_alias__ == new
    public = getattr(target, "__all__", None) or [n for n in vars(target) if not n.startswith("_")]
    assert public
    for name in public:
        assert getattr(alias, name) is getattr(target, name), name
    if hasattr(target, "__all__"):
        assert alias.__all__ == target.__all__  # a star import of the old path gives the same names
    # A name the star import leaves out (private ones) is handed on to the new module too.
    hidden = [n for n in vars(target) if n.startswith("_") and not n.startswith("__")]
    for name in hidden:
        assert getattr(alias, name) is getattr(target, name), name
    missing = rf"module '{old}' \(now '{new}'\) has no attribute 'no_such_name'"
    with pytest.raises(AttributeError, match=missing):
        _ = alias.no_such_name


def test_a_script_importing_an_old_path_is_told_once_where() -> None:
    # Python's default filters show a DeprecationWarning only where __main__ triggers it: the
    # warning must point at the script's import line for a user to see it at all.
    code = (
        "import ginenv.kernels.melds\n"
        "import ginenv.kernels.melds\n"
        "from ginenv.kernels.melds import min_deadwood\n"
        "from ginenv.kernels.meld_search import min_deadwood as new\n"
        "assert min_deadwood is new\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "DeprecationWarning" in line]
    assert lines == [
        "<string>:1: DeprecationWarning: ginenv.kernels.melds is deprecated and will be removed in "
        "ginenv 0.3.0: import ginenv.kernels.meld_search instead"
    ]
