"""The compiled hard level (ginenv.agents.levels.hard_compiled) plays exactly like HardAgent.

Whole hands go through the batched engine (:func:`levels.scripted_play.play_compiled`), each slot a
hard seat against hard, greedy or random, or a seat that draws at random and discards as hard; at
every decision of a hard seat the compiled :func:`hard_action` must equal ``HardAgent().act`` on the
observation that seat gets (one agent per slot and seat, fed its decisions in order and replaced at
each new hand, so :class:`TakeGuard`'s memory is the real one). Each kind of decision must come up
many times, so that a wrong take, knock or play-on cannot hide.
"""

from __future__ import annotations

import numpy as np
import pytest
from ginenv.agents.levels.hard import HardAgent
from ginenv.agents.levels.hard_compiled import hard_action, hard_actions, hard_moves
from levels.scripted_play import check_engine_policy, play_compiled

from ginenv.vector import VectorGinRummy


def compiled(s: np.ndarray, i: int, cfg: np.ndarray, rng: np.random.Generator) -> int:
    return hard_action(s, i, cfg)


@pytest.mark.parametrize(("preset", "hands"), [("standard", 400), ("seed004", 200), ("oklahoma", 200)])
def test_compiled_hard_plays_exactly_like_the_hard_agent(preset: str, hands: int) -> None:
    seen = play_compiled(HardAgent, compiled, preset, hands, seed=7, slots=32)
    assert seen.inexact == 0
    assert seen.decisions > 15 * hands
    seen.assert_often(("upcard pass", "stock", "discard", "knock"), hands / 2)
    seen.assert_often(
        ("upcard take", "take", "discard after a take", "forced draw", "play on for gin"), hands / 10
    )
    # Not greedy under another name: the two levels part ways at many decisions.
    assert seen.unlike_greedy > seen.decisions / 20


def test_hard_actions_fill_the_given_rows() -> None:
    venv = VectorGinRummy(12, seed=5)
    venv.reset()
    s, cfg = venv.batch.state, venv.rule_array
    rng = np.random.default_rng(5)
    for _ in range(30):
        rows = rng.permutation(12)[:7].astype(np.int64)
        out = np.full(rows.size, -2, dtype=np.int64)
        hard_actions(s, cfg, rows, out)
        assert out.tolist() == [hard_action(s, int(r), cfg) for r in rows]
        np.testing.assert_array_equal(hard_moves(venv, rows), out)
        assert np.all(venv.batch.masks[rows, out] == 1)
        venv.step(hard_moves(venv, np.arange(12)))
    assert hard_moves(venv, np.zeros(0, dtype=np.int64)).shape == (0,)
    with pytest.raises(ValueError, match="slot indices"):
        hard_moves(venv, np.array([12]))
    with pytest.raises(ValueError, match="1-D"):
        hard_moves(venv, np.zeros((2, 2), dtype=np.int64))


def test_the_engines_hard_opponent_is_the_compiled_hard() -> None:
    # "hard" in the batched engine's table of compiled policies is this module's hard_action.
    check_engine_policy("hard", hard_moves)
