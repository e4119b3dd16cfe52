"""What every recipe test checks: the script runs as a reader runs it and ends as its page says.

``run_recipe(name, *args, trained_at_least=N)`` executes ``docs/recipes/NAME`` in a process of its
own, in a fresh folder, with ``--out`` there and ``--hands 4``, and checks what all recipes share:
exit 0, a ``trained N steps`` line with N at least as asked, the ginenv checkpoint in ``--out``,
and the head-to-head row of ``ginenv match`` between that checkpoint and greedy (4 hands being 2
duplicate deals, an estimate inside its own interval), whose run folder is under ``--out``, not in
the current folder's ``results/``. It returns the script's output for the library's own checks.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

RECIPES = Path(__file__).resolve().parents[2] / "docs" / "recipes"
#: A signed number as the match table prints it.
NUMBER = r"[+-]\d+\.\d+"


@pytest.fixture
def run_recipe(tmp_path: Path) -> Callable[..., str]:
    """The runner described in the module docstring, writing under ``tmp_path``."""

    def run(name: str, *args: str, trained_at_least: int) -> str:
        out = tmp_path / "run"
        proc = subprocess.run(
            [sys.executable, str(RECIPES / name), *args, "--hands", "4", "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr[-4000:]

        trained = re.search(r"^trained (\d+) steps", proc.stdout, re.MULTILINE)
        assert trained is not None, proc.stdout
        assert int(trained.group(1)) >= trained_at_least

        checkpoint = out / "policy.pt"
        assert checkpoint.is_file() and checkpoint.stat().st_size > 0
        head_to_head = rf"^\s*checkpoint:{re.escape(str(checkpoint))}\s+greedy\s+(\d+)\s+"
        row = re.search(head_to_head + rf"({NUMBER}) \[({NUMBER}), ({NUMBER})\]", proc.stdout, re.MULTILINE)
        assert row is not None, proc.stdout
        deals, points, low, high = int(row.group(1)), *map(float, row.group(2, 3, 4))
        assert deals == 2
        assert low <= points <= high
        assert (out / "match" / "summary.json").is_file()
        assert not (tmp_path / "results").exists()
        return proc.stdout

    return run
