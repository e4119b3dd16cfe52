"""The compiled expert level (ginenv.agents.levels.expert_compiled) plays like ExpertAgent, move for move.

Whole hands go through the batched engine (:func:`levels.scripted_play.play_compiled`): expert
against itself, greedy or random, or a seat that draws at random and discards as expert. At every
decision of an expert seat :func:`expert_choice`, given a copy of the level's generator (the knock
judged by sampled opponent hands draws from it), is compared with ``ExpertAgent.act``. Wherever the
compiled opponent model holds the Python model's probabilities bit for bit
(:func:`levels.scripted_play.same_model`) the moves and the generators after them must be equal;
where the two models' sums of event factors, added in another order, part in the last bits
(:mod:`ginenv.agents.levels.belief_compiled` says why) the moves are counted and must still agree
but for a rare near tie. The engine's ``expert`` is the same code drawing from a generator seeded
by the seat's view.
"""

from __future__ import annotations

import itertools

import pytest
from ginenv.agents.levels.expert import ExpertAgent
from ginenv.agents.levels.expert_compiled import expert_action, expert_choice, expert_moves
from levels.scripted_play import check_engine_policy, play_compiled, same_model

from ginenv.kernels.policies import compiled_policy
from ginenv.rules import PRESETS


@pytest.mark.parametrize(("preset", "hands"), [("standard", 48), ("seed004", 40), ("oklahoma", 40)])
def test_compiled_expert_plays_like_the_expert_agent(preset: str, hands: int) -> None:
    seeds = itertools.count(1000)
    rules = PRESETS[preset]
    seen = play_compiled(
        lambda: ExpertAgent(seed=next(seeds), rules=rules), expert_choice, preset, hands, 7, exact=same_model
    )
    assert seen.decisions > 15 * hands
    # Exact wherever the models are (checked move by move), and that is often.
    assert seen.decisions - seen.inexact > seen.decisions / 4, seen
    # Elsewhere the weights differ in their last bits only: a move changes on a near tie, rarely.
    assert seen.unlike <= seen.decisions / 100, seen
    seen.assert_often(
        ("upcard pass", "stock", "discard", "discard after a take", "play on for gin"), hands / 2
    )
    seen.assert_often(("knock", "take", "upcard take", "forced draw"), hands / 10)


def test_the_engines_expert_is_the_compiled_expert_seeded_by_the_view() -> None:
    check_engine_policy("expert", expert_moves)
    assert compiled_policy("expert")[0].kernel is expert_action
