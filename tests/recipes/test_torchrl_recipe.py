"""The TorchRL recipe (``docs/recipes/train_torchrl.py``) runs as the page shows it: its PPO updates
run with finite losses and move the policy's weights, and it ends with ``ginenv match`` (the checks
all recipes share are in ``conftest.py``)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from extras import needs_extra


def test_torchrl_recipe_trains_saves_and_matches(run_recipe: Callable[..., str]) -> None:
    needs_extra("torchrl", "torchrl", "tensordict")
    # Whole rollouts, never fewer steps than asked.
    stdout = run_recipe("train_torchrl.py", "--steps", "1024", trained_at_least=1024)
    # The PPO updates ran (two rollouts of 512 steps, 4 epochs of 4 minibatches each), every loss
    # was a number, and the updates changed the network that the checkpoint holds.
    ppo = re.search(
        r"^ppo: (\d+) updates, last loss (\S+), all finite: (\w+), weights moved (\S+)$", stdout, re.MULTILINE
    )
    assert ppo is not None, stdout
    assert int(ppo.group(1)) == 32
    assert math.isfinite(float(ppo.group(2))) and ppo.group(3) == "True"
    assert float(ppo.group(4)) > 0
