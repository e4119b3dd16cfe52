"""The Tianshou recipe (``docs/recipes/train_tianshou.py``) runs as the page shows it.

The script is executed as a reader runs it, in a process of its own, with fewer steps and hands:
it must train (gradient updates with a finite loss), leave the ginenv checkpoint in ``--out``, and
end with the table of ``ginenv match`` between that checkpoint and greedy. Its collector's step hook
raises on any illegal action, so a clean exit also means every collected action was legal.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "recipes" / "train_tianshou.py"
#: A signed number as the match table prints it.
NUMBER = r"[+-]\d+\.\d+"


def test_tianshou_recipe_trains_exports_and_matches(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--steps", "600", "--envs", "2", "--hands", "4", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]

    trained = re.search(r"^trained (\d+) steps", proc.stdout, re.MULTILINE)
    assert trained is not None, proc.stdout
    assert int(trained.group(1)) >= 600  # the collector stops at the first collect past --steps

    updates = re.search(r"^(\d+) gradient updates, last loss (\S+)$", proc.stdout, re.MULTILINE)
    assert updates is not None, proc.stdout
    assert int(updates.group(1)) > 0
    assert math.isfinite(float(updates.group(2)))

    checkpoint = out / "policy.pt"
    assert checkpoint.is_file() and checkpoint.stat().st_size > 0

    # The head-to-head row of the match: the checkpoint (A) against greedy (B), 4 hands being 2
    # duplicate deals, and a points-per-hand estimate inside its own confidence interval.
    head_to_head = rf"^\s*checkpoint:{re.escape(str(checkpoint))}\s+greedy\s+(\d+)\s+"
    row = re.search(head_to_head + rf"({NUMBER}) \[({NUMBER}), ({NUMBER})\]", proc.stdout, re.MULTILINE)
    assert row is not None, proc.stdout
    deals, points, low, high = int(row.group(1)), *map(float, row.group(2, 3, 4))
    assert deals == 2
    assert low <= points <= high
    # The match wrote its run folder under --out, not into the current folder's results/.
    assert (out / "match" / "summary.json").is_file()
    assert not (tmp_path / "results").exists()
