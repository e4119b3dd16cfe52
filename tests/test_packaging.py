"""The install layout: agents/ and experiments/ install as ginenv.agents and ginenv.experiments.

A research project's own ``agents/`` and ``experiments/`` packages must neither shadow ginenv's nor be
shadowed by them; this runs Python from such a project folder.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_user_agents_and_experiments_packages_do_not_collide(tmp_path: Path) -> None:
    for name in ("agents", "experiments"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"OWNER = 'user {name}'\n")
    script = (
        "import agents, experiments\n"
        "from ginenv import agents as ginenv_agents\n"
        "from ginenv.experiments import cli\n"
        "print(agents.OWNER, '|', experiments.OWNER)\n"
        "print(type(ginenv_agents.make('greedy')).__name__, '|', cli.main.__module__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["user agents | user experiments", "GreedyAgent | ginenv.experiments.cli"]


def test_no_top_level_agents_or_experiments_is_installed(tmp_path: Path) -> None:
    # From an empty folder, the bare names must not resolve to ginenv's folders.
    script = (
        "import importlib.util\n"
        "print(importlib.util.find_spec('agents'), importlib.util.find_spec('experiments'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "None None"
