"""The compiled hard level (ginenv.agents.levels.hard_compiled) plays exactly like HardAgent.

Whole hands go through the batched engine, each slot a hard seat against hard, greedy or random, or
a seat that draws at random and discards as hard; at every decision of a hard seat the compiled
:func:`hard_action` must equal ``HardAgent().act`` on the observation that seat gets (one agent per
slot and seat, fed its decisions in order and replaced at each new hand, so :class:`TakeGuard`'s
memory is the real one). Each kind of decision must come up many times, so that a wrong take, knock
or play-on cannot hide.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from ginenv.agents.levels.hard import HardAgent
from ginenv.agents.levels.hard_compiled import hard_action, hard_actions, hard_moves
from levels.scripted_play import decision_kind

from ginenv.actions import DRAW_DISCARD, action_name
from ginenv.kernels import hand as H
from ginenv.rules import PRESETS
from ginenv.vector import VectorGinRummy

#: The seats of a slot (swapped in every other group of slots): "hard"; "greedy" or "random" (the
#: compiled policies); "drawer": random draws, hard's discards (so that hard must discard after takes
#: it would not have made, where the useful-discard guard decides far more often).
SEATINGS = (("hard", "hard"), ("hard", "greedy"), ("hard", "random"), ("drawer", "greedy"))


def play_checked(preset: str, hands: int, seed: int, slots: int = 32) -> tuple[Counter[str], int]:
    """Play ``hands`` hands of ``preset``, comparing the compiled and the Python hard at each of its
    decisions; returns the decisions by kind and at how many of them greedy would have played
    otherwise."""
    venv = VectorGinRummy(slots, rules=PRESETS[preset], seed=seed)
    obs, mask, player = venv.reset()
    seating = [SEATINGS[i % len(SEATINGS)] for i in range(slots)]
    seating = [pair[::-1] if (i // len(SEATINGS)) % 2 else pair for i, pair in enumerate(seating)]
    players = [[HardAgent(), HardAgent()] for _ in range(slots)]
    kinds: Counter[str] = Counter()
    unlike_greedy = 0
    ended = 0
    every = np.arange(slots, dtype=np.int64)
    while ended < hands:
        s = venv.batch.state
        compiled = hard_moves(venv, every)
        greedy = venv.policy_actions("greedy")
        actions = venv.policy_actions("random")
        for i in range(slots):
            seat = int(player[i])
            role = seating[i][seat]
            if role == "greedy":
                actions[i] = greedy[i]
            if role in ("greedy", "random"):
                continue
            if role == "drawer" and s[i, H.PHASE] != H.Phase.DISCARD:
                # A random draw; a take is hard's own to its memory (TakeGuard) and to the record.
                if actions[i] == DRAW_DISCARD:
                    players[i][seat].note_take(int(H.top_card(s, i)))
                continue
            expected = players[i][seat].act({"observation": obs[i], "action_mask": mask[i]})
            assert compiled[i] == expected, (
                preset,
                i,
                seat,
                action_name(int(compiled[i])),
                action_name(expected),
                s[i, : H.DECK].tolist(),
            )
            kinds[decision_kind(s[i], mask[i], expected)] += 1
            unlike_greedy += int(greedy[i] != expected)
            actions[i] = expected
        obs, mask, player, _, terminated, truncated = venv.step(actions)
        for i in np.flatnonzero(terminated | truncated):
            ended += 1
            players[i] = [HardAgent(), HardAgent()]
    return kinds, unlike_greedy


@pytest.mark.parametrize(("preset", "hands"), [("standard", 400), ("seed004", 200), ("oklahoma", 200)])
def test_compiled_hard_plays_exactly_like_the_hard_agent(preset: str, hands: int) -> None:
    kinds, unlike_greedy = play_checked(preset, hands, seed=7)
    decisions = sum(kinds.values())
    assert decisions > 15 * hands
    for kind in ("upcard pass", "stock", "discard", "knock"):
        assert kinds[kind] > hands / 2, (kind, kinds)
    for kind in ("upcard take", "take", "discard after a take", "forced draw", "play on for gin"):
        assert kinds[kind] > hands / 10, (kind, kinds)
    # Not greedy under another name: the two levels part ways at many decisions.
    assert unlike_greedy > decisions / 20


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
    venv = VectorGinRummy(32, seed=5)
    venv.reset()
    every = np.arange(32, dtype=np.int64)
    rng = np.random.default_rng(5)
    for _ in range(80):
        chosen = venv.policy_actions("hard")
        np.testing.assert_array_equal(chosen, hard_moves(venv, every))
        random_moves = venv.policy_actions("random")
        venv.step(np.where(rng.random(32) < 0.5, chosen, random_moves))
