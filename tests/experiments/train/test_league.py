"""The league (ginenv.experiments.train.league): draws follow the mix and the seed, the snapshot pool
keeps frozen copies of the most recent policies, the compiled opponents move only in their slots, and
prioritized fictitious self-play tilts the shares by the learner's scores."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from ginenv.agents.levels.easy_compiled import easy_moves
from ginenv.agents.levels.expert_compiled import expert_moves
from ginenv.agents.levels.hard_compiled import hard_moves
from ginenv.agents.levels.master_compiled import WORLDS, master_moves
from ginenv.agents.levels.normal_compiled import normal_moves
from ginenv.agents.neural import MaskedPolicy
from ginenv.experiments.train.league import (
    COMPILED_OPPONENTS,
    PFSP_HANDS,
    League,
    drawn_fixed,
    drawn_levels,
    level_width,
)

from ginenv.vector import VectorGinRummy

SNAPSHOT = len(COMPILED_OPPONENTS)  # the league code of the pool's first snapshot


def policy() -> MaskedPolicy:
    return MaskedPolicy(hidden=(8,), inputs="features")


def league(mix: dict[str, float], slots: int = 4000, seed: int = 0, pool: int = 3) -> League:
    return League(mix, pool, policy(), slots, np.random.default_rng(seed))


def test_draws_follow_the_mix_and_the_seed() -> None:
    drawn = league({"greedy": 0.75, "random": 0.0, "snapshot": 0.25})
    codes, counts = np.unique(drawn.opponent, return_counts=True)
    assert codes.tolist() == [COMPILED_OPPONENTS.index("greedy"), SNAPSHOT]  # random has weight 0
    assert abs(counts[0] / counts.sum() - 0.75) < 0.03
    assert set(drawn.seats.tolist()) == {0, 1}
    again = league({"greedy": 0.75, "random": 0.0, "snapshot": 0.25})
    assert np.array_equal(again.opponent, drawn.opponent) and np.array_equal(again.seats, drawn.seats)
    assert np.array_equal(drawn.plays_a_network(), drawn.opponent >= SNAPSHOT)


def test_new_hands_redraw_only_their_slots() -> None:
    drawn = league({"greedy": 1, "random": 1}, slots=64)
    seats, opponent = drawn.seats.copy(), drawn.opponent.copy()
    ended = np.arange(0, 64, 2)
    drawn.new_hands(ended)
    kept = np.arange(1, 64, 2)
    assert np.array_equal(drawn.seats[kept], seats[kept])
    assert np.array_equal(drawn.opponent[kept], opponent[kept])
    changed = (drawn.seats[ended] != seats[ended]) | (drawn.opponent[ended] != opponent[ended])
    assert changed.any()


def test_the_pool_keeps_frozen_copies_of_the_most_recent_snapshots() -> None:
    drawn = league({"snapshot": 1.0}, slots=600, pool=2)
    learner = policy()
    for _ in range(3):
        drawn.add_snapshot(learner)
    assert len(drawn.snapshots) == 2 and all(s is not learner for s in drawn.snapshots)
    before = [p.clone() for p in drawn.snapshots[-1].parameters()]
    with torch.no_grad():
        next(learner.parameters()).add_(1.0)
    assert all(torch.equal(a, b) for a, b in zip(before, drawn.snapshots[-1].parameters(), strict=True))
    assert not any(p.requires_grad for s in drawn.snapshots for p in s.parameters())
    # Snapshot opponents are drawn uniformly among the pool as it is at the draw.
    assert set(drawn.draw_opponents(200).tolist()) == {SNAPSHOT, SNAPSHOT + 1}
    turns = drawn.network_turns(np.ones(600, dtype=bool))
    assert sum(len(slots) for _, slots, _ in turns) == 600
    assert not any(argmax for _, _, argmax in turns)  # snapshots sample, as the learner does


def test_fixed_networks_have_their_own_codes_and_play_their_most_likely_action() -> None:
    clone = policy()
    mix = {"greedy": 1.0, "checkpoint:clone.pt": 2.0, "snapshot": 1.0}
    drawn = League(mix, 3, policy(), 4000, np.random.default_rng(0), {"checkpoint:clone.pt": clone})
    fixed_code = SNAPSHOT  # the first code after the compiled policies; snapshots come after it
    codes, counts = np.unique(drawn.opponent, return_counts=True)
    assert codes.tolist() == [COMPILED_OPPONENTS.index("greedy"), fixed_code, fixed_code + 1]
    assert abs(counts[1] / counts.sum() - 0.5) < 0.03
    turns = drawn.network_turns(np.ones(4000, dtype=bool))
    assert [(net is clone, argmax) for net, _, argmax in turns] == [(True, True), (False, False)]
    assert np.array_equal(turns[0][1], np.flatnonzero(drawn.opponent == fixed_code))
    assert not any(p.requires_grad for p in clone.parameters())  # frozen, never trained
    drawn.add_snapshot(policy())
    assert set(drawn.draw_opponents(300).tolist()) == {0, fixed_code, fixed_code + 1, fixed_code + 2}


def test_a_fixed_network_of_weight_0_is_neither_loaded_nor_drawn() -> None:
    mix = {"checkpoint:b.pt": 1.0, "checkpoint:off.pt": 0.0, "snapshot": 1.0, "checkpoint:a.pt": 1.0}
    assert drawn_fixed(mix) == ["checkpoint:b.pt", "checkpoint:a.pt"]  # the mix's order: their codes
    nets = {k: policy() for k in drawn_fixed(mix)}  # what a worker loads: no network for off.pt
    drawn = League(mix, 3, policy(), 600, np.random.default_rng(0), nets)
    assert [k for k, _ in drawn.fixed] == ["checkpoint:b.pt", "checkpoint:a.pt"]
    assert set(drawn.opponent.tolist()) == {SNAPSHOT, SNAPSHOT + 1, SNAPSHOT + 2}


def test_compiled_opponents_move_only_in_their_slots() -> None:
    venv = VectorGinRummy(8, seed=3)
    venv.reset()
    drawn = league({"greedy": 1, "random": 1, "hard": 1}, slots=8)
    drawn.opponent[:] = [COMPILED_OPPONENTS.index(k) for k in ("greedy", "random", "hard", "hard") * 2]
    to_move = np.array([True, False] * 4)
    actions = np.full(8, -7, dtype=np.int64)
    greedy = drawn.compiled_moves(venv, actions, to_move, wanted="greedy")
    assert greedy is not None and (greedy >= 0).all()  # the teacher's action in every slot
    assert (actions[~to_move] == -7).all() and (actions[to_move] >= 0).all()
    by_greedy = to_move & (drawn.opponent == COMPILED_OPPONENTS.index("greedy"))
    assert np.array_equal(actions[by_greedy], greedy[by_greedy])
    by_hard = np.flatnonzero(to_move & (drawn.opponent == COMPILED_OPPONENTS.index("hard")))
    assert by_hard.size and np.array_equal(actions[by_hard], hard_moves(venv, by_hard))
    assert drawn.compiled_moves(venv, actions, np.zeros(8, dtype=bool)) is None


def test_the_compiled_levels_are_league_members_moving_in_their_slots() -> None:
    venv = VectorGinRummy(12, seed=4)
    venv.reset()
    mix = {"expert": 0.3, "normal": 0.3, "easy": 0.3, "greedy": 0.1}
    drawn = league(mix, slots=12)
    assert drawn.kinds == ["greedy", "easy", "normal", "expert"]
    drawn.new_hands(np.arange(12))
    drawn.opponent[:] = [COMPILED_OPPONENTS.index(k) for k in ("easy", "normal", "expert") * 4]
    to_move = np.ones(12, dtype=bool)
    actions = np.full(12, -7, dtype=np.int64)
    drawn.compiled_moves(venv, actions, to_move)
    for name, moves in (("easy", easy_moves), ("normal", normal_moves), ("expert", expert_moves)):
        mine = np.flatnonzero(drawn.opponent == COMPILED_OPPONENTS.index(name))
        assert np.array_equal(actions[mine], moves(venv, mine)), name
    assert np.all(venv.batch.masks[np.arange(12), actions] == 1)


def test_master_widths_are_compiled_members_after_the_engine_s_policies() -> None:
    venv = VectorGinRummy(8, seed=3)
    venv.reset()
    mix = {"master@worlds=2": 1.0, "greedy": 1.0, "master@worlds=3": 0.0, "master": 1.0, "snapshot": 1.0}
    assert drawn_levels(mix) == ["master@worlds=2", "master"]
    drawn = league(mix, slots=8)
    assert drawn.compiled == (*COMPILED_OPPONENTS, "master@worlds=2", "master")
    assert drawn.first_snapshot == SNAPSHOT + 2
    two = SNAPSHOT
    drawn.opponent[:] = [two, two, SNAPSHOT + 1, 0, two, two, SNAPSHOT + 2, SNAPSHOT + 2]
    assert drawn.plays_a_network().tolist() == [False] * 6 + [True] * 2
    to_move = np.ones(8, dtype=bool)
    actions = np.full(8, -7, dtype=np.int64)
    drawn.compiled_moves(venv, actions, to_move)
    mine = np.flatnonzero(drawn.opponent == two)
    assert np.array_equal(actions[mine], master_moves(venv, mine, 2))
    assert actions[2] == master_moves(venv, np.array([2]), WORLDS)[0]
    assert (actions[6:] == -7).all()  # the snapshots' slots are the networks' to fill
    assert level_width("master") == WORLDS and level_width("hard") is None
    with pytest.raises(ValueError, match="worlds must be an integer from 1 to 65536"):
        level_width("master@worlds=-1")


def test_pfsp_scores_follow_the_hands_and_tilt_the_shares() -> None:
    mix = {"greedy": 1.0, "random": 1.0, "snapshot": 1.0}
    flat = league(mix, slots=2000)
    tilted = League(mix, 3, policy(), 2000, np.random.default_rng(0), pfsp="variance")
    # Before any hand is scored every score is 1/2, so the tilt changes nothing: the same draws.
    assert np.array_equal(tilted.opponent, flat.opponent)
    greedy, random = COMPILED_OPPONENTS.index("greedy"), COMPILED_OPPONENTS.index("random")
    snap = np.flatnonzero(tilted.opponent >= SNAPSHOT)
    rand = np.flatnonzero(tilted.opponent == random)
    gree = np.flatnonzero(tilted.opponent == greedy)
    # The learner wins every hand against random and loses every one against a snapshot; against
    # greedy it wins half the hands by 10 and loses the other half by 30: half the hands, a quarter of
    # the points.
    points = np.zeros(2000)
    points[rand], points[snap] = 20.0, -30.0
    points[gree] = np.where(np.arange(gree.size) % 2 == 0, 10.0, -30.0)
    tilted.score(np.arange(2000), points)
    scores = tilted.member_scores()
    n = {"random": rand.size, "snapshot": snap.size, "greedy": gree.size}
    moved = {k: 1 - (1 - 1 / PFSP_HANDS) ** n[k] for k in n}  # a running mean over n hands
    won = {"random": 1 + moved["random"] * 19, "snapshot": 1 - moved["snapshot"]}
    lost = {"random": 1 - moved["random"], "snapshot": 1 + moved["snapshot"] * 29}
    for k in won:
        assert scores[k] == pytest.approx(won[k] / (won[k] + lost[k]))
    # Many more such hands: the scores reach the point shares (1, 0 and 1/4), not the hands won.
    for _ in range(40):
        tilted.score(np.arange(2000), points)
    scores = tilted.member_scores()
    assert scores["random"] == pytest.approx(1.0, abs=1e-3)
    assert scores["snapshot"] == pytest.approx(0.0, abs=1e-3)
    assert scores["greedy"] == pytest.approx(0.25, abs=0.01)
    # variance favours the member nearest 1/2 (greedy); the others fall behind it.
    share = dict(zip(tilted.kinds, tilted.p, strict=True))
    assert share["greedy"] > share["random"] and share["greedy"] > share["snapshot"]
    hard = League(mix, 3, policy(), 2000, np.random.default_rng(0), pfsp="hard")
    hard.opponent = tilted.opponent.copy()
    hard.score(np.arange(2000), points)
    share = dict(zip(hard.kinds, hard.p, strict=True))
    assert share["snapshot"] > share["greedy"] > share["random"]  # hard: the members it loses to
    # Without pfsp the scores are kept (for the logs) and the shares stay the mix's.
    flat.score(np.arange(2000), points)
    assert np.allclose(flat.p, 1 / 3) and flat.member_scores()["random"] > 0.5


def test_a_member_always_beaten_is_still_drawn() -> None:
    tilted = League(
        {"greedy": 1.0, "random": 1.0}, 3, policy(), 400, np.random.default_rng(0), pfsp="variance"
    )
    for _ in range(200):  # random beaten every hand: its score near 1, x (1 - x) near 0
        tilted.score(
            np.arange(400), np.where(tilted.opponent == COMPILED_OPPONENTS.index("random"), 20.0, 0.0)
        )
        tilted.new_hands(np.arange(400))
    assert tilted.member_scores()["random"] > 0.99
    assert 0 < (tilted.opponent == COMPILED_OPPONENTS.index("random")).mean() < 0.1
