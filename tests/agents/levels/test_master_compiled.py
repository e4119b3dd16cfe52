"""The compiled master (ginenv.agents.levels.master_compiled) plays like MasterAgent, move for move.

Whole hands go through the batched engine (:func:`levels.scripted_play.play_compiled`), master in
one or both seats of each slot (the other ``greedy``); at every decision of a master seat
:func:`master_action`, given a copy of the Python level's generator, is compared with
``MasterAgent.act`` on the observation that seat gets. Wherever the compiled opponent model holds
the Python model's probabilities bit for bit (:func:`levels.scripted_play.same_model`) it must
choose the same move and leave the generator in the same state; where the two models' sums of event
factors, added in another order, part in the last bits (:mod:`ginenv.agents.levels.belief_compiled`
says why), the moves must still agree but for a rare near tie. The engine's ``master`` opponent is
the same code drawing from a generator seeded by the seat's view.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from ginenv.agents.levels.compiled_base import view_seed
from ginenv.agents.levels.master import MasterAgent
from ginenv.agents.levels.master_compiled import (
    WORLDS,
    master_action,
    master_moves,
    master_policy,
    master_policy_for,
    seeded_action,
)
from levels.scripted_play import play_compiled, same_model

from ginenv.kernels import hand as H
from ginenv.kernels.policies import compiled_policy
from ginenv.rules import PRESETS
from ginenv.vector import OpponentVectorGinRummy, VectorError, VectorGinRummy

#: Worlds of both sides in the move-for-move test (the code is the same at every width; few worlds
#: keep the Python level fast).
TEST_WORLDS = 16


#: The seats of a slot: master against master, or against greedy in either seat (eight, one a slot:
#: no slot has its seats swapped).
SEATINGS = (("level", "level"), ("level", "greedy"), ("level", "level"), ("greedy", "level")) * 2


@pytest.mark.parametrize(("preset", "hands"), [("standard", 48), ("seed004", 24), ("oklahoma", 24)])
def test_compiled_master_plays_exactly_like_the_master_agent(preset: str, hands: int) -> None:
    rules = PRESETS[preset]
    seeds = itertools.count(11_000)

    def fresh() -> MasterAgent:
        return MasterAgent(seed=next(seeds), rules=rules, worlds=TEST_WORLDS, worlds_knock=TEST_WORLDS)

    def compiled(s: np.ndarray, i: int, cfg: np.ndarray, rng: np.random.Generator) -> int:
        return master_action(s, i, cfg, rng, TEST_WORLDS)

    seen = play_compiled(fresh, compiled, preset, hands, 11, slots=8, exact=same_model, seatings=SEATINGS)
    assert seen.decisions > 12 * hands
    # Exact wherever the models are (checked move by move), and that is often.
    assert seen.decisions - seen.inexact > seen.decisions / 4, seen
    # Elsewhere the weights differ in their last bits only: a move changes on a near tie, rarely
    # (5 of 1350 decisions of the standard hands measured: the limit is 1 in 100).
    assert seen.unlike <= seen.decisions / 100, seen
    seen.assert_often(("upcard pass", "stock", "discard", "knock"), hands / 4)
    seen.assert_often(("take", "play on for gin"), 0)


def test_the_engines_master_is_the_compiled_master_seeded_by_the_view() -> None:
    venv = VectorGinRummy(16, seed=5)
    venv.reset()
    every = np.arange(16, dtype=np.int64)
    rng = np.random.default_rng(5)
    differs = 0
    for _ in range(20):
        s, cfg = venv.batch.state, venv.rule_array
        chosen = venv.policy_actions("master@worlds=4")
        np.testing.assert_array_equal(chosen, master_moves(venv, every, 4))
        np.testing.assert_array_equal(chosen, [seeded_action(s, i, cfg, 4) for i in range(16)])
        assert np.all(venv.batch.masks[every, chosen] == 1)
        # The same view, the same generator: the policy is a function of what its seat sees.
        np.testing.assert_array_equal(chosen, venv.policy_actions("master@worlds=4"))
        differs += int((master_moves(venv, every, 1) != chosen).sum())
        venv.step(np.where(rng.random(16) < 0.5, chosen, venv.policy_actions("random")))
    assert differs > 0  # the width reaches the decisions
    assert compiled_policy("master")[0].kernel is master_policy
    assert master_policy_for(WORLDS) is master_policy
    assert master_policy_for(4) is master_policy_for(4)


def test_view_seed_reads_only_the_seat_to_move_s_view() -> None:
    venv = VectorGinRummy(2, seed=9)
    venv.reset()
    s = venv.batch.state.copy()
    p = H.mover(s, 0)
    seed = view_seed(s, 0)
    assert 0 <= seed < 1 << 32
    # Another hand for the opponent, the same view: the same seed.
    other = H.hand_of(s, 0, 1 - p)
    stock = H.stock_mask(s, 0)
    a, b = other & -other, stock & -stock
    H.set_hand(s, 0, 1 - p, other ^ a ^ b)
    assert view_seed(s, 0) == seed


def test_opponent_vector_plays_master_with_a_width() -> None:
    # The width of the test above: its policy is compiled once (some 25 s of CPU a width).
    env = OpponentVectorGinRummy(4, opponent="master@worlds=4", seed=3)
    _obs, mask, *_ = env.reset()
    assert mask.any(axis=1).all()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("master@worlds=0", "worlds must be an integer from 1 to 65536, got 0"),
        ("master@worlds=many", "worlds must be an integer from 1 to 65536, got 'many'"),
        ("master@depth=3", "has no parameter 'depth'; it takes: worlds"),
        ("master@worlds", "parameters are master@key=value"),
        ("greedy@worlds=3", "takes no parameters"),
    ],
)
def test_a_bad_master_width_is_refused_in_one_line(name: str, message: str) -> None:
    with pytest.raises(VectorError, match=message) as err:
        VectorGinRummy(2, seed=1).policy_actions(name)
    assert "\n" not in str(err.value)
