"""Masked PPO (ginenv.experiments.train.ppo): a smoke run read back from TensorBoard whose checkpoint
plays in the harness, a run full of truncated hands, kickstarting, and the ``train`` command."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
import torch
from ginenv.agents.neural import OBS_FORMAT, CheckpointError, MaskedPolicy, read_checkpoint, save_checkpoint
from ginenv.experiments.cli import main
from ginenv.experiments.errors import UsageError
from ginenv.experiments.train import actor_critic
from ginenv.experiments.train.actor_critic import (
    ORACLE_SIZE,
    ActorCritic,
    matmul_precision,
    network_weights,
    resolved_precision,
)
from ginenv.experiments.train.league import COMPILED_OPPONENTS
from ginenv.experiments.train.ppo import Args, train
from ginenv.experiments.train.rollouts import RolloutWorker

from ginenv import agents, gin_rummy_v0

# --- a smoke run, read back from TensorBoard -------------------------------------------------------


def test_a_smoke_run_writes_the_scalars(smoke_run: tuple[Args, Path], scalars) -> None:  # type: ignore[no-untyped-def]
    args, run_dir = smoke_run
    assert run_dir.parent == Path(args.runs_dir) and run_dir.name.startswith("ppo__1__")
    found = scalars(run_dir)
    for tag in (
        "charts/episodic_return", "charts/points_per_hand", "charts/SPS", "losses/value",
        "losses/policy", "losses/entropy", "losses/approx_kl", "losses/aux_opponent_hand",
        "losses/explained_variance", "eval/greedy",
    ):  # fmt: skip
        assert tag in found, tag
    assert len(found["losses/policy"]) == 2  # one per update
    assert all(v > 0 for v in found["charts/SPS"])
    # The opponent-hand head starts near log 2 per card (an untrained logit of about 0).
    assert all(0.3 < v < 0.8 for v in found["losses/aux_opponent_hand"])
    assert all(v > 0 for v in found["losses/entropy"])
    # Points per hand are in points, the return in reward units (points * reward_scale).
    ret, pts = found["charts/episodic_return"][0], found["charts/points_per_hand"][0]
    assert ret == pytest.approx(pts * args.reward_scale, rel=1e-4, abs=1e-6)
    assert -150 < found["eval/greedy"][0] < 150


def test_the_checkpoint_plays_in_the_harness_and_records_its_config(smoke_run: tuple[Args, Path]) -> None:
    args, run_dir = smoke_run
    path = run_dir / "checkpoints" / "latest.pt"
    ckpt = read_checkpoint(path)
    assert ckpt.version == 3 and ckpt.obs_format == OBS_FORMAT and ckpt.policy.inputs == "features"
    assert ckpt.config == dataclasses.asdict(args)
    assert ckpt.training is not None and ckpt.training["progress"]["update"] == 2
    assert ckpt.training["progress"]["global_step"] == 2 * args.num_envs * args.num_steps
    agent = agents.make(f"checkpoint:{path}")
    env = gin_rummy_v0.raw_env()
    env.reset(seed=3)
    decisions = 0
    for _ in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        action = agent.act(obs)
        assert obs["action_mask"][action] == 1
        env.step(action)
        decisions += 1
    assert decisions > 2


# --- the train command ----------------------------------------------------------------------------


def test_train_command_runs_with_overrides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    argv = ["train", "--total-steps", "256", "--num-envs", "16", "--experiment", "cli", "--quiet"]
    argv += [
        "--set",
        "num_steps=16",
        "--set",
        "hidden=[8]",
        "--set",
        "eval_every=0",
        "--set",
        f"runs_dir={runs}",
    ]
    assert main([*argv, "--backend", "local", "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "checkpoint:" in out
    (run_dir,) = runs.iterdir()
    # The banner comes first and names the folder and the rounding; the last line splits the time.
    assert out.startswith(f"ginenv train: run folder {run_dir}")
    assert "256 env steps: 1 update of 256 (16 envs x 16 steps per rollout)" in out
    assert "2 rollout workers (local)" in out
    assert "ginenv train: 256 env steps in " in out and "evaluation" not in out.split("steps/s")[-1]
    assert run_dir.name.startswith("cli__1__")
    ckpt = read_checkpoint(run_dir / "checkpoints" / "latest.pt")
    assert ckpt.config is not None and ckpt.config["num_envs"] == 16 and ckpt.config["hidden"] == [8]
    assert (ckpt.config["backend"], ckpt.config["workers"]) == ("local", 2)
    assert main(["train", "--set", "hiden=[8]"]) == 2
    assert "unknown setting(s) in --set 'hiden=[8]': hiden" in capsys.readouterr().err


@pytest.mark.parametrize("critic_inputs", ["observation", "oracle"])
def test_a_run_full_of_truncated_hands_trains(tiny, scalars, critic_inputs: str) -> None:  # type: ignore[no-untyped-def]
    # A turn limit of 3 draws truncates most hands: their bootstrap reads each learner's final view
    # of the hand (venv.final_observations; an oracle critic, the hidden cards of the learner's last
    # decision) and the run must still learn without errors or NaNs.
    args = tiny(turn_limit=3, eval_every=0, critic_inputs=critic_inputs)
    run_dir = train(args)
    found = scalars(run_dir)
    assert all(math.isfinite(v) for v in found["losses/value"] + found["losses/policy"])
    assert found["charts/points_per_hand"]  # hands ended (truncated ones score 0)


def test_an_oracle_critic_trains_and_stays_out_of_the_policy(tiny, scalars) -> None:  # type: ignore[no-untyped-def]
    run_dir = train(tiny(critic_inputs="oracle"))
    found = scalars(run_dir)
    assert all(math.isfinite(v) for v in found["losses/value"] + found["losses/policy"])
    ckpt = read_checkpoint(run_dir / "checkpoints" / "latest.pt")
    assert ckpt.training is not None and ckpt.config is not None
    assert ckpt.config["critic_inputs"] == "oracle"
    # The value MLP reads the policy's inputs and the oracle's; the policy reads its inputs alone,
    # so the checkpoint plays in the harness like any other.
    policy_width = ckpt.policy.net[0].in_features
    assert ckpt.training["critic"]["0.weight"].shape[1] == policy_width + ORACLE_SIZE
    assert "eval/greedy" in found
    with pytest.raises(UsageError, match="critic_inputs must be observation or oracle"):
        tiny(critic_inputs="both").validate()


def test_bfloat16_matrix_products_train_and_save_fp32_weights(tiny, scalars) -> None:  # type: ignore[no-untyped-def]
    run_dir = train(tiny(precision="bf16", eval_every=0))
    found = scalars(run_dir)
    assert all(math.isfinite(v) for v in found["losses/value"] + found["losses/policy"])
    assert found["losses/approx_kl"][0] < 1.0  # the ratio compares bf16 with bf16, not with fp32
    policy = read_checkpoint(run_dir / "checkpoints" / "latest.pt").policy
    assert all(p.dtype == torch.float32 for p in policy.parameters())
    with pytest.raises(UsageError, match="precision must be auto or fp32 or bf16"):
        tiny(precision="fp16").validate()


def test_auto_precision_is_bf16_only_where_native(monkeypatch: pytest.MonkeyPatch) -> None:
    cpu = torch.device("cpu")
    assert resolved_precision("fp32", cpu) == "fp32" and resolved_precision("bf16", cpu) == "bf16"
    monkeypatch.setattr(actor_critic, "native_bf16", lambda device: True)
    assert resolved_precision("auto", cpu) == "bf16"
    with matmul_precision("auto", cpu):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
    monkeypatch.setattr(actor_critic, "native_bf16", lambda device: False)
    assert resolved_precision("auto", cpu) == "fp32"
    with matmul_precision("auto", cpu):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32
    assert Args().precision == "auto"


def test_a_fixed_network_joins_the_league(tiny, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A clone of a strong level as a league member: its own layers, the learner's inputs.
    member = tmp_path / "member.pt"
    save_checkpoint(MaskedPolicy(hidden=(8,), inputs="features", card_hidden=4), member)
    # A short turn limit ends every hand within the rollouts, whatever the untrained networks play.
    args = tiny(eval_every=0, turn_limit=8, opponents={f"checkpoint:{member}": 1.0})
    worker = RolloutWorker(args, 0, args.num_envs, network_weights(ActorCritic.for_args(args)))
    assert set(worker.league.opponent.tolist()) == {len(COMPILED_OPPONENTS)}  # every slot faces it
    rollouts = [worker.collect(None) for _ in range(3)]
    assert all(len(r.actions) for r in rollouts) and any(r.hand_points for r in rollouts)  # hands ended
    assert (Path(train(args)) / "checkpoints" / "latest.pt").is_file()
    other = tmp_path / "other.pt"
    save_checkpoint(MaskedPolicy(hidden=(8,), inputs="observation"), other)
    with pytest.raises(
        CheckpointError, match=r"checkpoint:.*other.pt: its network reads inputs 'observation'"
    ):
        RolloutWorker(
            tiny(opponents={f"checkpoint:{other}": 1.0}), 0, 32, network_weights(ActorCritic.for_args(args))
        )
    with pytest.raises(UsageError, match=r"opponents: no such checkpoint file for checkpoint:nope.pt"):
        tiny(opponents={"checkpoint:nope.pt": 1.0}).validate()


# --- kickstarting ----------------------------------------------------------------------------------


def test_the_kickstarting_teacher_is_greedy_and_its_weight_decays(tiny, scalars) -> None:  # type: ignore[no-untyped-def]
    args = tiny(eval_every=0, kickstart=2.0, kickstart_steps=6 * 512, total_steps=8 * 512, learning_rate=1e-3)
    worker = RolloutWorker(args, 0, args.num_envs, network_weights(ActorCritic.for_args(args)))
    taught = worker.collect(None, teach=True)
    # The teacher's action is legal at every learner decision, and the learner (untrained) often differs.
    assert bool(taught.mask[torch.arange(len(taught.teacher)), taught.teacher].all())
    assert bool((taught.teacher != taught.actions).any())
    assert bool((worker.collect(None).teacher == 0).all())  # nothing recorded when not teaching
    found = scalars(train(args))
    kick = found["losses/kickstart"]
    # Logged only while the weight is positive (6 of the 8 updates), and the imitation improves.
    assert len(kick) == 6 and kick[-1] < kick[0]
