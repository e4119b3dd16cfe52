"""The "Extending ginenv" page (``docs/extending.md``) and its examples (``docs/examples/extending/``):
each worked example runs, the level and its compiled twin as an installed package, and the files the
page lists for a rule option are the ones that spell it."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import tomllib

from ginenv.rules import PRESETS

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples" / "extending"
PAGE = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")


def installed_example(site: Path) -> Path:
    """``site`` as a folder of installed packages holding the example package ``gin_cautious``: its
    modules and the metadata pip would write from its ``pyproject.toml`` (the entry points)."""
    project = tomllib.loads((EXAMPLES / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    shutil.copytree(EXAMPLES / "gin_cautious", site / "gin_cautious")
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n", encoding="utf-8"
    )
    groups = project["entry-points"]
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in entries.items())
            for group, entries in groups.items()
        ),
        encoding="utf-8",
    )
    return site


def test_the_level_and_its_compiled_twin_play_from_an_installed_package(tmp_path: Path) -> None:
    """The package declares ``cautious`` in both groups; a fresh process with it on its path finds
    the level by name (the harness plays it against random on duplicate deals) and the compiled
    opponent by name (it plays as the level move for move, and as ``opponent="cautious"``)."""
    site = installed_example(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / "play_cautious.py"), "--deals", "10"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["agents"] == ["cautious"] and found["compiled"] == ["cautious"]
    assert found["harness"]["games"] == 20
    # Knocking at once and never taking a discard still beats random legal play by far.
    assert found["harness"]["points_per_hand"] > 5, found
    assert found["same_moves"] == 32 * 100
    assert found["batched"]["hands"] > 50
    assert found["batched"]["learner_points_per_hand"] < 0, found


def test_without_the_package_the_names_are_unknown(tmp_path: Path) -> None:
    """The names come from the package's metadata alone: without it on the path neither resolves."""
    code = (
        "from ginenv.agents import available\nfrom ginenv.kernels.policies import policy_names\n"
        "print('cautious' in available(), 'cautious' in policy_names())\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["False", "False"]


def example(name: str) -> ModuleType:
    """An example script of ``docs/examples/extending/`` as a module."""
    spec = importlib.util.spec_from_file_location(f"extending_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def test_the_page_shows_every_example_and_only_files_that_exist() -> None:
    shown = set(re.findall(r'^--8<-- "examples/extending/([^"]+)"$', PAGE, re.M))
    files = {
        str(p.relative_to(EXAMPLES))
        for p in EXAMPLES.rglob("*")
        if p.suffix in (".py", ".toml") and p.name != "__init__.py" and "__pycache__" not in p.parts
    }
    assert shown == files


#: What the rule-option search reads: the package, research, configs and the manual; not the tests,
#: the changelog, the dated reports, nor the pages and examples that explain extending itself.
SEARCHED = ("ginenv", "agents", "experiments", "configs", "research", "docs", "README.md", "pyproject.toml")
NOT_SEARCHED = ("docs/reports", "docs/examples", "docs/ARCHITECTURE.md", "docs/extending.md")


def test_the_rule_option_s_files_are_the_ones_that_name_it() -> None:
    """The page's list for ``discard_taken_card`` is every file that spells the option (its field,
    its rule-array entry ``DISCARD_TAKEN``, its accessor ``discard_taken``), and no other."""
    found = set()
    for top in SEARCHED:
        for path in [ROOT / top] if (ROOT / top).is_file() else (ROOT / top).rglob("*"):
            rel = path.relative_to(ROOT).as_posix()
            if path.suffix not in (".py", ".md", ".js", ".yaml", ".toml") or "__pycache__" in rel:
                continue
            if rel.startswith(NOT_SEARCHED):
                continue
            if "discard_taken" in path.read_text(encoding="utf-8").lower():
                found.add(rel)
    section = PAGE.split("## A rule option", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`((?:ginenv|agents|experiments|configs|research|docs)/[\w/.]+\.\w+)`", section))
    assert {"ginenv/rules.py", "ginenv/kernels/hand.py"} <= found
    assert listed - {p for p in listed if p.startswith("tests/")} == found


def test_the_rule_option_changes_what_a_seat_may_throw_back() -> None:
    rule_option = example("rule_option")
    for seed in range(5):
        assert rule_option.may_throw_back(PRESETS["standard"], seed) is False
        assert rule_option.may_throw_back(PRESETS["seed004"], seed) is True


def test_the_training_example_takes_gradient_steps_on_the_batched_engine() -> None:
    import torch

    reinforce = example("train_reinforce")
    args = reinforce.Args(num_envs=32, updates=3, steps_per_update=60, opponent="greedy", seed=3)
    policy, history = reinforce.train(args)
    assert len(history) == 3 and all(np.isfinite(history))
    torch.manual_seed(args.seed)
    untrained = torch.nn.Linear(policy.in_features, policy.out_features)
    assert not torch.equal(policy.weight, untrained.weight)  # the same start, moved by the updates


def test_the_route_example_answers_through_the_server_s_guards(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient
    from ginenv.experiments.play.server import create_app

    spec = f"{ROOT / 'docs' / 'examples' / 'my_agent.py'}:DeadwoodAgent"
    app = create_app(state_dir=tmp_path / "tables", replay_dir=tmp_path / "replays", pace_ms=0, opponent=spec)
    app.include_router(example("routes_levels").router)
    answer = TestClient(app).get("/api/levels")
    assert answer.status_code == 200
    assert answer.headers["cache-control"] == "no-store"  # the server's guards wrap the new route
    levels = {level["name"]: level["about"] for level in answer.json()["levels"]}
    assert list(levels)[:3] == ["random", "greedy", "easy"]
    assert levels["normal"].startswith("least deadwood")
    assert spec not in levels  # a spec the page may ask for, but no registered level


def test_every_file_the_page_names_exists() -> None:
    """The files in order name real files: the repository's (a ``NAME`` is the one to write), the
    example package's (beside its ``pyproject.toml``), and the manual's pages it links."""
    named = set(re.findall(r"`([\w/.]+\.(?:py|md|js|yaml|toml))`", PAGE))
    assert len(named) > 30
    for path in sorted(named):
        if "NAME" in path:
            assert (ROOT / path).parent.is_dir(), path
        else:
            assert (ROOT / path).is_file() or (EXAMPLES / path).is_file(), path
    for link in re.findall(r"\]\(([\w/.-]+\.md)(?:#[\w-]+)?\)", PAGE):
        assert (ROOT / "docs" / link).is_file(), link
