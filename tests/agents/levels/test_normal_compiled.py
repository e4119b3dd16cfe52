"""The compiled normal level (ginenv.agents.levels.normal_compiled) plays exactly like NormalAgent.

Whole hands go through the batched engine (:func:`levels.scripted_play.play_compiled`): normal
against itself, greedy or random, or a seat that draws at random and discards as normal; at every
decision of a normal seat the compiled :func:`normal_action` must equal ``NormalAgent().act`` on the
observation that seat gets. The level is deterministic, so every decision is checked; each kind of
decision must come up many times, so that a wrong take, discard or knock cannot hide.
"""

from __future__ import annotations

import numpy as np
import pytest
from ginenv.agents.levels.normal import NormalAgent
from ginenv.agents.levels.normal_compiled import normal_action, normal_moves
from levels.scripted_play import check_engine_policy, play_compiled

from ginenv.kernels.policies import compiled_policy
from ginenv.vector import VectorGinRummy


def compiled(s: np.ndarray, i: int, cfg: np.ndarray, rng: np.random.Generator) -> int:
    return normal_action(s, i, cfg)


@pytest.mark.parametrize(("preset", "hands"), [("standard", 200), ("seed004", 100), ("oklahoma", 100)])
def test_compiled_normal_plays_exactly_like_the_normal_agent(preset: str, hands: int) -> None:
    seen = play_compiled(NormalAgent, compiled, preset, hands, 7)
    assert seen.inexact == 0
    assert seen.decisions > 15 * hands
    seen.assert_often(("upcard pass", "stock", "discard", "knock", "discard after a take"), hands / 2)
    seen.assert_often(("upcard take", "take", "forced draw"), hands / 20)
    # Not greedy under another name: the two levels part ways at many decisions.
    assert seen.unlike_greedy > seen.decisions / 50


def test_the_engines_normal_opponent_is_the_compiled_normal() -> None:
    check_engine_policy("normal", normal_moves)
    assert compiled_policy("normal")[0].kernel is normal_action
    venv = VectorGinRummy(4, seed=1)
    venv.reset()
    with pytest.raises(ValueError, match="slot indices"):
        normal_moves(venv, np.array([4]))
