"""Training checkpoints (ginenv.experiments.train.training_checkpoints): a run resumes with
everything restored, a run starts from another's networks (an oracle critic from a plain one), and
policy-only, reshaped, tampered or torn checkpoints are refused before anything is loaded."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
import torch
from ginenv.agents.neural import OBS_FORMAT, CheckpointError, MaskedPolicy, read_checkpoint, save_checkpoint
from ginenv.experiments.cli import main
from ginenv.experiments.errors import UsageError
from ginenv.experiments.train.actor_critic import ORACLE_SIZE, ActorCritic
from ginenv.experiments.train.ppo import Args, train
from ginenv.experiments.train.training_checkpoints import load_training_checkpoint, start_from

from ginenv import agents


def test_resume_restores_everything_and_continues(  # type: ignore[no-untyped-def]
    smoke_run: tuple[Args, Path], scalars, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, run_dir = smoke_run
    path = str(run_dir / "checkpoints" / "latest.pt")
    net = ActorCritic.for_args(args)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    progress = load_training_checkpoint(path, net, optimizer)
    assert progress["update"] == 2
    saved = read_checkpoint(path).training
    assert saved is not None
    for key, value in saved["critic"].items():
        assert torch.equal(net.critic.state_dict()[key], value)
    assert torch.equal(net.aux.weight, saved["aux"]["weight"])
    assert optimizer.state_dict()["state"][0]["step"] == saved["optimizer"]["state"][0]["step"]
    # Resuming runs only the updates that are left (3 in all, so one more), in the run's own folder
    # (a copy here: other tests read the shared run), so the TensorBoard curves stay one run.
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    more = dataclasses.replace(args, total_steps=3 * args.num_envs * args.num_steps, eval_every=0)
    resumed = train(more, resume=str(copy / "checkpoints" / "latest.pt"))
    assert resumed == copy
    out = capsys.readouterr().out
    assert f"resuming {copy} from update 2 (env step {2 * args.num_envs * args.num_steps}" in out
    ckpt = read_checkpoint(resumed / "checkpoints" / "latest.pt")
    assert ckpt.training is not None and ckpt.training["progress"]["update"] == 3
    assert len(scalars(resumed)["losses/policy"]) == 3
    # A checkpoint outside a run folder starts a new one.
    loose = tmp_path / "loose.pt"
    shutil.copy(path, loose)
    elsewhere = train(dataclasses.replace(more, runs_dir=str(tmp_path / "runs")), resume=str(loose))
    assert elsewhere.parent == tmp_path / "runs" and len(scalars(elsewhere)["losses/policy"]) == 1


def test_init_starts_an_oracle_critic_from_a_plain_one(smoke_run: tuple[Args, Path], tmp_path: Path) -> None:
    args, run_dir = smoke_run
    path = str(run_dir / "checkpoints" / "latest.pt")
    plain = ActorCritic.for_args(args)
    load_training_checkpoint(path, plain, torch.optim.Adam(plain.parameters()))
    oracle = ActorCritic.for_args(dataclasses.replace(args, critic_inputs="oracle"))
    assert start_from(path, oracle) == ["policy", "critic", "aux"]
    # The oracle's weights start at 0: whatever the hidden cards, it values as the plain critic did.
    obs = torch.rand(5, oracle.critic[0].in_features - ORACLE_SIZE)
    for hidden_cards in (torch.zeros(5, ORACLE_SIZE), torch.rand(5, ORACLE_SIZE)):
        assert torch.allclose(oracle.value(obs, hidden_cards), plain.value(obs))
    assert torch.equal(oracle.aux.weight, plain.aux.weight)
    # A policy-only file starts the policy alone; the heads keep their fresh weights.
    fresh = ActorCritic.for_args(args)
    critic_before = {k: v.clone() for k, v in fresh.critic.state_dict().items()}
    lone = tmp_path / "policy.pt"
    save_checkpoint(plain.actor, lone)
    assert start_from(str(lone), fresh) == ["policy"]
    assert all(torch.equal(critic_before[k], v) for k, v in fresh.critic.state_dict().items())
    # A critic of another width is refused before anything is loaded.
    wider = ActorCritic(args.hidden, args.inputs, args.card_hidden)
    wider.critic[0] = torch.nn.Linear(obs.shape[1] + 1, args.hidden[0])
    actor_before = {k: v.clone() for k, v in wider.actor.state_dict().items()}
    with pytest.raises(CheckpointError, match=r"training\['critic'\]\['0.weight'\] must be a float tensor"):
        start_from(path, wider)
    assert all(torch.equal(actor_before[k], v) for k, v in wider.actor.state_dict().items())


def test_cuda_is_refused_in_one_line_where_torch_has_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = Args(device="cuda", runs_dir=str(tmp_path))
    if torch.cuda.is_available():
        args.validate()  # a CUDA machine: accepted
        return
    with pytest.raises(UsageError, match="sees no CUDA device"):
        args.validate()
    assert main(["train", "--set", "device=cuda", "--set", f"runs_dir={tmp_path}", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "sees no CUDA device" in err and "Traceback" not in err and len(err.splitlines()) == 1


# --- refusals --------------------------------------------------------------------------------------


def test_a_policy_only_checkpoint_cannot_resume(tmp_path: Path) -> None:
    path = tmp_path / "policy.pt"
    save_checkpoint(MaskedPolicy(hidden=(16,), inputs="features"), path)
    net = ActorCritic([16])
    with pytest.raises(CheckpointError, match="holds a policy only"):
        load_training_checkpoint(str(path), net, torch.optim.Adam(net.parameters()))


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda a: ActorCritic([8], a.inputs, a.card_hidden), r"hidden layers \[16\], this run \[8\]"),
        (lambda a: ActorCritic(a.hidden, a.inputs, 0), r"has card_hidden 8, this run 0"),
        (lambda a: ActorCritic(a.hidden, "observation", a.card_hidden), r"reads inputs 'features', this run"),
    ],
)
def test_another_network_shape_is_refused(smoke_run: tuple[Args, Path], build, message) -> None:  # type: ignore[no-untyped-def]
    args, run_dir = smoke_run
    net = build(args)
    with pytest.raises(CheckpointError, match=message):
        load_training_checkpoint(
            str(run_dir / "checkpoints" / "latest.pt"), net, torch.optim.Adam(net.parameters())
        )


def rewritten(run_dir: Path, tmp_path: Path, change) -> str:  # type: ignore[no-untyped-def]
    data = torch.load(run_dir / "checkpoints" / "latest.pt", weights_only=True)
    change(data)
    path = tmp_path / "altered.pt"
    torch.save(data, path)
    return str(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(obs_format=OBS_FORMAT + 1), "trained on observation format 2"),
        (lambda d: d["training"]["critic"].__setitem__("0.weight", torch.zeros(3, 3)), "shape"),
        (lambda d: d["training"]["aux"].__setitem__("bias", torch.full((52,), float("nan"))), "NaN"),
        (lambda d: d["training"]["optimizer"]["state"][0].__setitem__("exp_avg", torch.zeros(2)), "Adam"),
        (lambda d: d["training"].__setitem__("progress", {"update": -1}), "progress"),
        (lambda d: d.update(training=[1, 2]), "mapping with string keys"),
    ],
)
def test_mismatched_checkpoints_are_refused(
    smoke_run: tuple[Args, Path], tmp_path: Path, change, message
) -> None:  # type: ignore[no-untyped-def]
    args, run_dir = smoke_run
    path = rewritten(run_dir, tmp_path, change)
    net = ActorCritic.for_args(args)
    before = {k: v.clone() for k, v in net.state_dict().items()}
    with pytest.raises(CheckpointError, match=message):
        load_training_checkpoint(path, net, torch.optim.Adam(net.parameters()))
    if "observation format" not in message:
        return
    # Refused before anything was loaded into the network; the harness refuses it too.
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())
    with pytest.raises(CheckpointError, match="observation format"):
        agents.make(f"checkpoint:{path}")


def test_train_refuses_a_corrupted_checkpoint(
    smoke_run: tuple[Args, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, run_dir = smoke_run
    raw = (run_dir / "checkpoints" / "latest.pt").read_bytes()
    bad = tmp_path / "torn.pt"
    bad.write_bytes(raw[: len(raw) // 2])
    runs = tmp_path / "runs"
    assert main(["train", "--resume", str(bad), "--set", f"runs_dir={runs}", "--quiet"]) == 2
    assert "--resume: " in capsys.readouterr().err
    assert not runs.exists()  # refused before a run folder was made


def test_a_resumed_run_is_the_same_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    settings = [
        "--num-envs", "32", "--set", "num_steps=16", "--set", "hidden=[16]", "--set", "card_hidden=8",
        "--set", "eval_every=0", "--set", "kickstart=0", "--set", "threads=1", "--set", f"runs_dir={runs}",
        "--experiment", "kept", "--quiet",
    ]  # fmt: skip
    assert main(["train", *settings, "--total-steps", str(32 * 16)]) == 0
    [checkpoint] = runs.glob("kept__*/checkpoints/latest.pt")
    capsys.readouterr()
    # A setting that would make it another run is refused in one line naming it, before any training.
    for given, named in (
        (["--set", "num_envs=64"], "--set num_envs=64 would change num_envs from the checkpoint's 32 to 64"),
        (["--num-envs", "64"], "--num-envs 64 would change num_envs"),
        (["--set", "kickstart=1.0"], "--set kickstart=1.0 would change kickstart"),
        (["--config", "ppo"], "--config ppo would change experiment from the checkpoint's 'kept' to 'ppo'"),
    ):
        assert main(["train", "--resume", str(checkpoint), *given]) == 2
        [line] = capsys.readouterr().err.strip().splitlines()
        assert named in line and "only total_steps, eval_every" in line, line
    # No flags: the checkpoint's settings, not the default config's (1024 slots, the greedy teacher,
    # the experiment `ppo`).
    seen: list[Args] = []
    monkeypatch.setattr(
        "ginenv.experiments.train.ppo.train", lambda spec, resume, branch: seen.append(spec) or runs
    )
    assert main(["train", "--resume", str(checkpoint)]) == 0
    assert (seen[0].num_envs, seen[0].kickstart, seen[0].experiment) == (32, 0.0, "kept")
    assert dataclasses.asdict(seen[0]) == read_checkpoint(str(checkpoint)).config
    monkeypatch.undo()
    # A setting that may change (the steps to train for) is taken, and the run goes on.
    assert main(["train", "--resume", str(checkpoint), "--set", f"total_steps={32 * 16 * 2}", "--quiet"]) == 0
    ckpt = read_checkpoint(str(checkpoint))
    assert ckpt.training is not None and ckpt.training["progress"]["update"] == 2
    assert ckpt.config is not None and ckpt.config["total_steps"] == 32 * 16 * 2
    assert (ckpt.config["num_envs"], ckpt.config["kickstart"], ckpt.config["experiment"]) == (32, 0.0, "kept")


def test_a_branch_continues_a_run_with_other_settings_in_its_own_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    settings = [
        "--num-envs", "32", "--set", "num_steps=16", "--set", "hidden=[16]", "--set", "card_hidden=8",
        "--set", "eval_every=0", "--set", "kickstart=0", "--set", "threads=1", "--set", f"runs_dir={runs}",
        "--quiet",
    ]  # fmt: skip
    assert main(["train", *settings, "--experiment", "first", "--total-steps", str(32 * 16)]) == 0
    [checkpoint] = runs.glob("first__*/checkpoints/latest.pt")
    before = read_checkpoint(str(checkpoint))
    # Another learning rate and league: refused by --resume, taken by --branch into a new folder.
    other = ["--set", "learning_rate=1e-4", "--set", "opponents={random: 1.0}"]
    other += ["--total-steps", str(32 * 16 * 2)]
    assert main(["train", *settings, "--experiment", "second", "--resume", str(checkpoint), *other]) == 2
    capsys.readouterr()
    assert main(["train", *settings, "--experiment", "second", "--branch", str(checkpoint), *other]) == 0
    assert "continues" in capsys.readouterr().out
    [branched] = runs.glob("second__*/checkpoints/latest.pt")
    after = read_checkpoint(str(branched))
    assert after.training is not None and after.training["progress"]["update"] == 2  # one more update
    assert after.config is not None and after.config["learning_rate"] == 1e-4
    assert after.config["opponents"] == {"random": 1.0}
    assert read_checkpoint(str(checkpoint)).training["progress"] == before.training["progress"]  # type: ignore[index]
    # --branch and --resume together, or --branch with init, are refused in one line.
    with pytest.raises(SystemExit):
        main(["train", "--branch", str(checkpoint), "--resume", str(checkpoint)])
    assert main(["train", *settings, "--branch", str(checkpoint), "--set", f"init={checkpoint}"]) == 2
    assert "drop init" in capsys.readouterr().err
