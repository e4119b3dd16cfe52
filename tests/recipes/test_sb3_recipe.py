"""The Stable-Baselines3 recipe (``docs/recipes/train_sb3.py``) runs as the page shows it: it trains,
leaves SB3's own save file beside the ginenv checkpoint, and ends with ``ginenv match`` (the checks
all recipes share are in ``conftest.py``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from extras import needs_extra


def test_sb3_recipe_trains_exports_and_matches(run_recipe: Callable[..., str], tmp_path: Path) -> None:
    needs_extra("sb3", "stable_baselines3", "sb3_contrib")
    # learn() rounds up to whole rollouts, never down.
    run_recipe("train_sb3.py", "--steps", "1024", "--envs", "2", trained_at_least=1024)
    assert (tmp_path / "run" / "maskable_ppo.zip").is_file()
