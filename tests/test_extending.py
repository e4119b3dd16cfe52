"""The "Extending ginenv" page (``docs/extending.md``) and its examples (``docs/examples/extending/``):
each worked example runs, the level and its compiled twin as an installed package, and the files the
page lists for a rule option are the ones that spell it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import tomllib

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
