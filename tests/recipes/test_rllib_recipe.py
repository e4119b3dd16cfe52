"""The RLlib recipe (``docs/recipes/train_rllib.py``) runs as the page shows it: one line per PPO
iteration from RLlib's result, then ``ginenv match`` (the checks all recipes share are in
``conftest.py``)."""

from __future__ import annotations

import re
from collections.abc import Callable

from extras import needs_extra

#: A signed number as RLlib's lines print it.
NUMBER = r"[+-]\d+\.\d+"


def test_rllib_recipe_trains_exports_and_matches(run_recipe: Callable[..., str]) -> None:
    needs_extra("rllib", "ray.rllib")
    # The env steps sampled: the default batch of 1000 per iteration.
    stdout = run_recipe("train_rllib.py", "--iterations", "1", trained_at_least=1000)
    # One line per iteration with PPO's policy loss and the learner's points per hand.
    iterations = re.findall(
        rf"^iteration (\d+): policy loss ({NUMBER}), points per hand ({NUMBER})$", stdout, re.MULTILINE
    )
    assert [int(i) for i, _, _ in iterations] == [1], stdout
