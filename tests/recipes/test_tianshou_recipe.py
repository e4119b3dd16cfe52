"""The Tianshou recipe (``docs/recipes/train_tianshou.py``) runs as the page shows it: DQN's
gradient updates run with a finite loss, every collected action was legal (the script's collector
hook raises on an illegal one, so the exit status says it), and it ends with ``ginenv match`` (the
checks all recipes share are in ``conftest.py``)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import pytest
from extras import needs_extra


@pytest.mark.long  # imports Tianshou, trains, exports, plays a match
def test_tianshou_recipe_trains_exports_and_matches(run_recipe: Callable[..., str]) -> None:
    needs_extra("tianshou", "tianshou")
    # The collector stops at the first collect past --steps.
    stdout = run_recipe("train_tianshou.py", "--steps", "600", "--envs", "2", trained_at_least=600)
    updates = re.search(r"^(\d+) gradient updates, last loss (\S+)$", stdout, re.MULTILINE)
    assert updates is not None, stdout
    assert int(updates.group(1)) > 0
    assert math.isfinite(float(updates.group(2)))
