"""Behaviour cloning (research.bc): recorded decisions are the level's own, reproducible,
and a clone trained on them is a checkpoint that plays and that PPO can start from and learn from."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch
from ginenv.agents.arena import play_game
from ginenv.agents.neural import (
    CheckpointError,
    MaskedPolicy,
    opponent_hand_predictor,
    read_checkpoint,
    save_checkpoint,
)
from ginenv.experiments.errors import UsageError
from ginenv.experiments.train.ppo import Args, train

from ginenv import agents, gin_rummy_v0
from ginenv.actions import NUM_ACTIONS, action_id
from research.bc import (
    RECORD_SEED,
    UNSEEN,
    VALUE_SLOTS,
    BCArgs,
    load_shards,
    main,
    record,
    train_bc,
    value_targets,
)


@pytest.fixture(scope="module")
def greedy_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bc") / "greedy"
    assert record("greedy", out, start=7, hands=5) == 5
    return out


def test_the_recorded_decisions_are_the_levels_own(greedy_data: Path) -> None:
    obs, mask, action, shard = load_shards(greedy_data)
    assert len(obs) == len(mask) == len(action) == len(shard) > 5 * 10
    # Replay hand 7 (the first recorded) through the arena and check the level chose what was stored.
    rows = iter(range(len(action)))

    def check(_seat: int, o: dict, act: int) -> None:
        row = next(rows)
        assert np.array_equal(o["observation"], obs[row].astype(np.float32))
        assert act == action[row] and mask[row, act]

    players = [agents.make("greedy"), agents.make("greedy")]
    play_game(gin_rummy_v0.raw_env(), players, seed=RECORD_SEED, deal=7, on_decision=check)
    assert next(rows) > 10  # a whole hand's decisions were compared
    again = greedy_data.parent / "again"
    record("greedy", again, start=7, hands=5)
    assert np.array_equal(load_shards(again)[2], action)


@pytest.mark.parametrize("driver", [None, "random"])
def test_masters_shards_keep_its_simulated_values(tmp_path: Path, driver: str | None) -> None:
    record("master", tmp_path / "m", start=11, hands=2, driver=driver, share=0.5)
    (file,) = sorted((tmp_path / "m").glob("shard_*.npz"))
    with np.load(file, allow_pickle=False) as shard:
        values, ids, action, mask = shard["values"], shard["value_actions"], shard["action"], shard["mask"]
    scored = ids[:, 0] >= 0
    assert scored.mean() > 0.5 and (ids >= 0).sum(axis=1).max() >= 3  # draws and discards, knocks too
    for row in np.flatnonzero(scored):
        n = int((ids[row] >= 0).sum())
        assert np.isfinite(values[row, :n]).all() and np.isnan(values[row, n:]).all()
        assert mask[row, ids[row, :n]].all()  # every simulated option was a legal action
        # Master plays its best option (a draw tied with the take, as in a certain dead hand, draws).
        assert values[row, :n][ids[row, :n] == action[row]] == values[row, :n].max()


def test_a_level_that_does_not_simulate_leaves_no_values(greedy_data: Path) -> None:
    for file in greedy_data.glob("shard_*.npz"):
        with np.load(file, allow_pickle=False) as shard:
            assert len(shard["values"]) == len(shard["action"])
            assert np.isnan(shard["values"]).all() and (shard["value_actions"] == -1).all()


def test_dagger_labels_the_drivers_positions_with_the_levels_answers(
    greedy_data: Path, tmp_path: Path
) -> None:
    # random moves, greedy labels: the positions are random's games, each label greedy's answer there.
    record("greedy", tmp_path / "dagger", start=7, hands=5, driver="random")
    obs, mask, action, _ = load_shards(tmp_path / "dagger")
    teacher = agents.make("greedy")
    answers = [
        teacher.act({"observation": o.astype(np.float32), "action_mask": m})
        for o, m in zip(obs, mask, strict=True)
    ]
    assert np.array_equal(answers, action)
    assert len(obs) != len(load_shards(greedy_data)[0])  # other games than greedy's own
    # The driver moving at none of the decisions is the level's self-play.
    record("greedy", tmp_path / "teacher_only", start=7, hands=5, driver="random", share=0.0)
    assert np.array_equal(load_shards(tmp_path / "teacher_only")[2], load_shards(greedy_data)[2])
    # DAgger's rounds are pooled with the self-play they start from.
    both = tmp_path / "both.pt"
    folders = [str(greedy_data), str(tmp_path / "dagger")]
    shape = ["--hidden", "24", "16", "--card-hidden", "4"]
    assert main(["train", *folders, "--out", str(both), "--epochs", "1", *shape]) == 0
    pooled = read_checkpoint(both)
    assert pooled.config["data"] == ", ".join(folders)
    assert (list(pooled.policy.hidden), pooled.policy.card_hidden) == ([24, 16], 4)
    with pytest.raises(UsageError, match=r"share must lie in \[0, 1\], not 1.5"):
        record("greedy", tmp_path / "x", hands=1, driver="random", share=1.5)


def test_a_clone_plays_and_ppo_starts_from_it(greedy_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "clone.pt"
    figures = train_bc(greedy_data, out, BCArgs(hidden=[32], card_hidden=8, epochs=3, holdout=0.0))
    assert 0.3 < figures["heldout_accuracy"] <= 1.0  # better than chance among the legal actions
    ckpt = read_checkpoint(out)
    assert ckpt.training is None and ckpt.config["algorithm"] == "behaviour cloning"
    assert main(["train", str(greedy_data), "--out", str(tmp_path / "cli.pt"), "--epochs", "1"]) == 0
    # PPO: the clone's weights start the policy and the clone teaches.
    args = Args(
        num_envs=32, num_steps=16, total_steps=2 * 512, hidden=[32], card_hidden=8, eval_every=0,
        runs_dir=str(tmp_path / "runs"), progress=False, init=str(out), kickstart=1.0,
        kickstart_steps=10_000, kickstart_teacher=str(out),
    )  # fmt: skip
    run = train(args)
    assert (run / "checkpoints" / "latest.pt").is_file()


def test_a_clone_can_start_from_another_network(greedy_data: Path, tmp_path: Path) -> None:
    # Fine-tuning (e.g. neural on master's decisions): the weights start from --init, and a network
    # of another shape is refused.
    small = BCArgs(hidden=[32], card_hidden=8, epochs=1, holdout=0.0)
    first, second = tmp_path / "first.pt", tmp_path / "second.pt"
    train_bc(greedy_data, first, small)
    scratch = train_bc(greedy_data, tmp_path / "scratch.pt", small)
    tuned = train_bc(greedy_data, second, dataclasses.replace(small, init=str(first)))
    assert tuned["heldout_cross_entropy"] < scratch["heldout_cross_entropy"]  # two epochs' worth, not one
    other = tmp_path / "other.pt"
    save_checkpoint(MaskedPolicy(hidden=(32,), inputs="features", card_hidden=0), other)
    with pytest.raises(CheckpointError, match="card_hidden 0"):
        train_bc(greedy_data, tmp_path / "x.pt", dataclasses.replace(small, init=str(other)))


def test_fine_tuning_keeps_the_opponent_hand_head_refitted_to_the_new_trunk(
    greedy_data: Path, tmp_path: Path
) -> None:
    # master_net and bench_belief read training['aux'] through the policy's last hidden layer, which
    # fine-tuning moves: the head is refitted to give the old head's probabilities through the new trunk.
    torch.manual_seed(3)
    start = MaskedPolicy(hidden=(32,), inputs="features", card_hidden=8)
    head = torch.nn.Linear(32, 52)
    first = tmp_path / "first.pt"
    save_checkpoint(start, first, training={"aux": head.state_dict()})
    tuned = tmp_path / "tuned.pt"
    args = BCArgs(hidden=[32], card_hidden=8, epochs=3, holdout=0.0, learning_rate=3e-2, init=str(first))
    figures = train_bc(greedy_data, tuned, args)
    assert set(read_checkpoint(tuned).training or {}) == {"aux"}
    obs = load_shards(greedy_data)[0].astype(np.float32)
    before = opponent_hand_predictor(first)(obs)
    after = opponent_hand_predictor(tuned)(obs)
    # The old head copied unchanged onto the new trunk would give other probabilities.
    stale = tmp_path / "stale.pt"
    save_checkpoint(read_checkpoint(tuned).policy, stale, training={"aux": head.state_dict()})
    copied = opponent_hand_predictor(stale)(obs)
    unseen = obs[:, UNSEEN] > 0.5
    assert np.abs(after - before)[unseen].mean() < 0.5 * np.abs(copied - before)[unseen].mean()
    assert 0.0 <= figures["aux_heldout_gap"] < 0.05, figures
    # A starting point without a head gives a policy-only file, as before.
    plain = tmp_path / "plain.pt"
    train_bc(greedy_data, plain, dataclasses.replace(args, init=str(tuned), epochs=1))
    assert set(read_checkpoint(plain).training or {}) == {"aux"}
    save_checkpoint(start, first)
    train_bc(greedy_data, plain, dataclasses.replace(args, epochs=1))
    assert read_checkpoint(plain).training is None


def test_mismatched_or_missing_starting_points_are_refused(greedy_data: Path, tmp_path: Path) -> None:
    base = Args(hidden=[32], card_hidden=8, eval_every=0, runs_dir=str(tmp_path), progress=False)
    with pytest.raises(UsageError, match=r"init: no such checkpoint file 'nope.pt' \(allowed: a file\)"):
        dataclasses.replace(base, init="nope.pt").validate()
    with pytest.raises(UsageError, match=r"kickstart_teacher: no such checkpoint file .*greedy or a"):
        dataclasses.replace(base, kickstart_teacher="nope.pt").validate()
    other = tmp_path / "other.pt"
    save_checkpoint(MaskedPolicy(hidden=(32,), inputs="features", card_hidden=0), other)
    with pytest.raises(CheckpointError, match=r"init .*other.pt: its network has card_hidden 0, this run 8"):
        train(dataclasses.replace(base, init=str(other), total_steps=1))


def test_bad_shards_and_commands_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.savez(
        tmp_path / "shard_0_000.npz",
        obs=np.zeros((2, 532), np.uint8),
        mask=np.zeros((2, 108), bool),
        action=np.zeros(2, np.int16),
    )
    with pytest.raises(ValueError, match="a recorded action is not legal under its mask"):
        load_shards(tmp_path)
    assert main(["train", str(tmp_path / "empty"), "--out", str(tmp_path / "x.pt")]) == 2
    assert "no shard_*.npz files" in capsys.readouterr().err
    assert main(["record", "--level", "grandmaster", "--out", str(tmp_path), "--hands", "1"]) == 2
    assert "unknown level 'grandmaster'" in capsys.readouterr().err
    assert main(["record", "--out", str(tmp_path), "--hands", "1", "--driver", "nobody"]) == 2
    assert "unknown driver 'nobody'" in capsys.readouterr().err


def test_value_targets_tilt_the_prior_by_the_options_values() -> None:
    # One decision with three legal discards, two of them scored by master: discard Kh is worth
    # 2 points more than discard Qs; discard 2c was not simulated. A second decision scored nothing.
    kh, qs, c2 = (action_id(f"discard {c}") for c in ("Kh", "Qs", "2c"))
    mask = np.zeros((2, NUM_ACTIONS), bool)
    mask[:, [kh, qs, c2]] = True
    action = np.array([kh, c2])
    values = np.full((2, VALUE_SLOTS), np.nan, np.float32)
    ids = np.full((2, VALUE_SLOTS), -1)
    values[0, :2], ids[0, :2] = (1.0, -1.0), (kh, qs)
    # No prior: the scored options share all the mass as exp(value / T); unscored rows are labels.
    t = value_targets(mask, action, values, ids, temperature=2.0)
    assert t[0, kh] / t[0, qs] == pytest.approx(np.e) and t[0, [kh, qs]].sum() == pytest.approx(1.0)
    assert t[1, c2] == 1.0 and t[1].sum() == 1.0
    # A prior (log-probabilities) that prefers Qs 3:1 over Kh and gives 2c a half: 2c keeps its half,
    # and the other half goes to Kh and Qs as prior * exp(value / T).
    prior = np.full((2, NUM_ACTIONS), -np.inf)
    prior[:, [kh, qs, c2]] = np.log([0.125, 0.375, 0.5])
    t = value_targets(mask, action, values, ids, temperature=2.0, prior=prior)
    assert t[0, c2] == pytest.approx(0.5) and t[0].sum() == pytest.approx(1.0)
    assert t[0, kh] / t[0, qs] == pytest.approx(np.e / 3)
    assert t[1, c2] == 1.0  # unscored: the recorded action
    kept = value_targets(mask, action, values, ids, temperature=2.0, prior=prior, unscored="prior")
    assert kept[1, [kh, qs, c2]] == pytest.approx([0.125, 0.375, 0.5])
    assert (t[:, ~mask[0]] == 0).all()
    # Sharpened: the scored row's target is one-hot at the best value + T * log prior (master_prior's
    # move): at T = 2 the prior's 3:1 for Qs outweighs Kh's 2 points, at T = 0.5 it does not.
    for temperature, best in ((2.0, qs), (0.5, kh)):
        hard = value_targets(mask, action, values, ids, temperature, prior, unscored="prior", sharpen=True)
        assert hard[0, best] == 1.0 and hard[0].sum() == 1.0
        assert hard[1, [kh, qs, c2]] == pytest.approx([0.125, 0.375, 0.5])
    with pytest.raises(ValueError, match="value temperature must be a number of points > 0"):
        value_targets(mask, action, values, ids, temperature=0.0)
    with pytest.raises(ValueError, match="'prior' keeps"):
        value_targets(mask, action, values, ids, temperature=1.0, unscored="prior")


def test_a_clone_learns_masters_values_as_soft_targets(tmp_path: Path) -> None:
    record("master", tmp_path / "m", start=11, hands=3)
    small = BCArgs(hidden=[32], card_hidden=8, epochs=2, holdout=0.0)
    first = tmp_path / "first.pt"
    train_bc(tmp_path / "m", first, small)
    soft = dataclasses.replace(small, init=str(first), value_temperature=1.0, unscored="prior")
    figures = train_bc(tmp_path / "m", tmp_path / "soft.pt", soft)
    assert read_checkpoint(tmp_path / "soft.pt").config["value_temperature"] == 1.0
    sharp = dataclasses.replace(soft, sharpen_values=True)
    assert train_bc(tmp_path / "m", tmp_path / "sharp.pt", sharp)["heldout_cross_entropy"] > 0
    assert read_checkpoint(tmp_path / "sharp.pt").config["sharpen_values"] is True
    assert np.isfinite(figures["heldout_cross_entropy"]) and figures["heldout_cross_entropy"] > 0
    with pytest.raises(UsageError, match="unscored 'prior' keeps the starting network's policy"):
        train_bc(tmp_path / "m", tmp_path / "x.pt", dataclasses.replace(soft, init=None))
