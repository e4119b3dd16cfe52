"""The compiled easy level (ginenv.agents.levels.easy_compiled) plays exactly like EasyAgent.

Whole hands go through the batched engine (:func:`levels.scripted_play.play_compiled`): easy against
itself, greedy or random, or a seat that draws at random and discards as easy. At every decision of
an easy seat :func:`easy_choice`, given a copy of the level's generator, must equal ``EasyAgent.act``
and leave the generator where the level leaves it: easy breaks ties between equal discards with
``rng.integers``, which the compiled code draws bit for bit, so every decision is checked, the
random ties (counted here) included. The engine's ``easy`` is the same code drawing from a generator
seeded by the seat's view.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from ginenv.agents.levels.easy import EasyAgent
from ginenv.agents.levels.easy_compiled import easy_action, easy_choice, easy_moves
from levels.scripted_play import check_engine_policy, play_compiled

from ginenv.kernels.policies import compiled_policy


@pytest.mark.parametrize(("preset", "hands"), [("standard", 160), ("seed004", 80), ("oklahoma", 80)])
def test_compiled_easy_plays_exactly_like_the_easy_agent(preset: str, hands: int) -> None:
    seeds = itertools.count(1000)
    draws = 0

    def compiled(s: np.ndarray, i: int, cfg: np.ndarray, rng: np.random.Generator) -> int:
        nonlocal draws
        before = rng.bit_generator.state
        move = easy_choice(s, i, cfg, rng)
        draws += int(rng.bit_generator.state != before)
        return move

    seen = play_compiled(lambda: EasyAgent(seed=next(seeds)), compiled, preset, hands, 7)
    assert seen.inexact == 0
    assert seen.decisions > 15 * hands
    seen.assert_often(
        ("upcard pass", "stock", "discard", "discard after a take", "play on for gin"), hands / 2
    )
    seen.assert_often(("knock", "take", "forced draw"), hands / 5)
    assert seen.kinds["upcard take"] > 0, seen.kinds
    # The random ties come up often: the generator's state is checked at each of them.
    assert draws > hands, draws


def test_the_engines_easy_is_the_compiled_easy_seeded_by_the_view() -> None:
    check_engine_policy("easy", easy_moves)
    assert compiled_policy("easy")[0].kernel is easy_action
