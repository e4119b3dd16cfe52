"""Masked PPO (ginenv.experiments.train.ppo): masking, GAE over the learner's decisions, a smoke run read
back from TensorBoard, checkpoints (round trip, resume, refusals), rollout workers on Ray (a local
instance) and the ``train`` command."""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from ginenv.agents.neural import OBS_FORMAT, CheckpointError, MaskedPolicy, read_checkpoint, save_checkpoint
from ginenv.experiments.cli import main
from ginenv.experiments.eval.config import apply_overrides, load_dataclass_yaml
from ginenv.experiments.eval.harness import HarnessError
from ginenv.experiments.train.ppo import (
    ActorCritic,
    Args,
    RolloutWorker,
    init_ray,
    learner_gae,
    load_training_checkpoint,
    masked_log_probs,
    network_weights,
    sample_actions,
    train,
)
from scenarios import DEALER, deck_with, play, start

from ginenv import agents, gin_rummy_v0
from ginenv.actions import NUM_ACTIONS, action_id, action_name

REPO = Path(__file__).resolve().parents[3]


# --- masking ---------------------------------------------------------------------------------------


def discard_position() -> dict:
    """The non-dealer's discard after taking the upcard 5s to its 3s 4s: 11 cards, knocks illegal."""
    env = start(deck_with("3s 4s 7c 8c 9d Jd Qh Kh 2d Ac", DEALER, "5s"))
    return play(env, "draw_discard")


def rigged_logits(legal: np.ndarray) -> torch.Tensor:
    """Illegal actions get far higher logits than legal ones: masking must still zero them."""
    logits = torch.full((1, NUM_ACTIONS), 50.0)
    logits[0, torch.as_tensor(legal)] = torch.linspace(-1.0, 1.0, len(legal))
    return logits


def test_illegal_actions_have_exactly_zero_probability_and_no_entropy_share() -> None:
    obs = discard_position()
    mask = torch.as_tensor(obs["action_mask"], dtype=torch.bool)[None]
    legal = np.flatnonzero(obs["action_mask"])
    assert {action_name(a) for a in legal} >= {"discard 7c", "discard Kh"}
    assert "draw_stock" not in {action_name(a) for a in legal}
    logits = rigged_logits(legal).requires_grad_(True)
    logp, entropy = masked_log_probs(logits, mask)
    probs = logp.exp()[0]
    assert torch.all(probs[~mask[0]] == 0.0)
    assert math.isclose(float(probs.detach().sum()), 1.0, rel_tol=1e-6)
    # The entropy is that of the legal actions alone, as if the illegal ones did not exist.
    only_legal = torch.distributions.Categorical(logits=logits[0, torch.as_tensor(legal)].detach())
    assert math.isclose(float(entropy.detach()), float(only_legal.entropy()), rel_tol=1e-5)
    entropy.sum().backward()
    assert torch.isfinite(logits.grad).all()
    assert torch.all(logits.grad[0, ~mask[0]] == 0.0)


def test_sampling_never_picks_an_illegal_action() -> None:
    obs = discard_position()
    mask = torch.as_tensor(obs["action_mask"], dtype=torch.bool)[None].repeat(4000, 1)
    logits = rigged_logits(np.flatnonzero(obs["action_mask"])).repeat(4000, 1)
    picked = sample_actions(logits, mask, torch.Generator().manual_seed(0))
    assert all(obs["action_mask"][a] for a in picked.tolist())
    assert len(set(picked.tolist())) > 1  # it samples, not argmax


# --- GAE over the learner's own decisions ----------------------------------------------------------


def gae(valid, term, trunc, rew, val, next_value, trunc_val=None, gamma=0.9, lam=0.5):  # type: ignore[no-untyped-def]
    as_t = lambda x, d=torch.float32: torch.tensor(x, dtype=d)[:, None]  # noqa: E731
    out = learner_gae(
        as_t(rew), as_t(val), as_t(valid, torch.bool), as_t(term, torch.bool), as_t(trunc, torch.bool),
        as_t(trunc_val or [0.0] * len(rew)), torch.tensor([next_value]), gamma, lam,
    )  # fmt: skip
    return out[:, 0].tolist()


def test_gae_skips_the_opponents_steps_and_stops_at_the_hand_end() -> None:
    # Steps 0, 2, 3 are the learner's; its hand ends after step 2 (reward 1.0 there); step 3 is
    # the first decision of the next hand, still open at the end (bootstrap 0.5).
    adv = gae(
        valid=[1, 0, 1, 1], term=[0, 0, 1, 0], trunc=[0, 0, 0, 0],
        rew=[0, 0, 1.0, 0], val=[0.2, 9.0, 0.4, 0.1], next_value=0.5,
    )  # fmt: skip
    d2 = 1.0 - 0.4  # terminated: no bootstrap
    d0 = 0.9 * 0.4 - 0.2  # the opponent's step 1 is skipped: the next decision is step 2
    assert adv[1] == 0.0
    assert adv[2] == pytest.approx(d2)
    assert adv[0] == pytest.approx(d0 + 0.9 * 0.5 * d2)
    assert adv[3] == pytest.approx(0.9 * 0.5 - 0.1)  # not chained into the ended hand


def test_a_truncated_hand_bootstraps_from_its_final_view() -> None:
    adv = gae(
        valid=[1, 1], term=[0, 0], trunc=[1, 0], rew=[0, 0], val=[0.3, 0.7], next_value=2.0,
        trunc_val=[0.45, 0.0],
    )  # fmt: skip
    assert adv[0] == pytest.approx(0.9 * 0.45 - 0.3)  # the final view's value, not the next hand's
    assert adv[1] == pytest.approx(0.9 * 2.0 - 0.7)


# --- a smoke run, read back from TensorBoard -------------------------------------------------------


def tiny(tmp_path: Path, **changes: object) -> Args:
    base = Args(
        num_envs=32, num_steps=16, total_steps=32 * 16 * 2, hidden=[16], card_hidden=8, update_epochs=2,
        num_minibatches=2, snapshot_every=1, eval_every=2, eval_deals=1, eval_levels=["greedy"],
        runs_dir=str(tmp_path / "runs"), progress=False,
    )  # fmt: skip
    return dataclasses.replace(base, **changes)


def scalars(run_dir: Path) -> dict[str, list[float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    return {tag: [e.value for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Args, Path]:
    args = tiny(tmp_path_factory.mktemp("ppo"))
    return args, train(args)


def test_a_smoke_run_writes_the_scalars(smoke_run: tuple[Args, Path]) -> None:
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


def test_resume_restores_everything_and_continues(smoke_run: tuple[Args, Path]) -> None:
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
    # Resuming runs only the updates that are left: 3 in all, so one more.
    more = dataclasses.replace(args, total_steps=3 * args.num_envs * args.num_steps, eval_every=0)
    resumed = train(more, resume=path)
    assert resumed != run_dir  # its own folder, even when started within the same second
    ckpt = read_checkpoint(resumed / "checkpoints" / "latest.pt")
    assert ckpt.training is not None and ckpt.training["progress"]["update"] == 3
    assert len(scalars(resumed)["losses/policy"]) == 1


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


# --- config ----------------------------------------------------------------------------------------


def test_the_shipped_config_is_the_dataclass_defaults() -> None:
    assert load_dataclass_yaml(REPO / "configs" / "ppo.yaml", Args) == Args()


def test_config_errors_name_the_setting(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("seed: 1\nlearning_rte: 0.1\n")
    with pytest.raises(HarnessError, match=r"unknown setting.*learning_rte"):
        load_dataclass_yaml(cfg, Args)
    cfg.write_text("hidden: [64, true]\n")
    with pytest.raises(HarnessError, match=r"hidden must be list\[int\], got \[64, True\]"):
        load_dataclass_yaml(cfg, Args)
    with pytest.raises(HarnessError, match=r"seed must be int, got 1\.5"):
        apply_overrides(Args(), ["seed=1.5"])
    with pytest.raises(HarnessError, match="write key=value"):
        apply_overrides(Args(), ["seed"])
    got = apply_overrides(Args(), ["learning_rate=1e-4", "hidden=[64, 64]", "opponents={greedy: 1}"])
    assert (got.learning_rate, got.hidden, got.opponents) == (1e-4, [64, 64], {"greedy": 1.0})
    with pytest.raises(HarnessError, match="opponents: unknown league member"):
        apply_overrides(Args(), ["opponents={master: 1}"]).validate()
    with pytest.raises(HarnessError, match="gamma must be a number from 0 to 1"):
        apply_overrides(Args(), ["gamma=2"]).validate()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"backend": "spark"}, "backend must be local or ray, got 'spark'"),
        ({"workers": 0}, "workers must be a positive integer, got 0"),
        ({"workers": 3}, r"workers must be a divisor of num_envs \(1024\).*, got 3"),
    ],
)
def test_bad_backends_and_worker_counts_are_refused(changes: dict, message: str) -> None:
    with pytest.raises(HarnessError, match=message):
        dataclasses.replace(Args(), **changes).validate()


def test_the_train_command_refuses_uneven_workers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    argv = ["train", "--num-envs", "32", "--workers", "3", "--backend", "ray", "--set", f"runs_dir={runs}"]
    assert main(argv) == 2
    assert "workers must be a divisor of num_envs (32)" in capsys.readouterr().err
    assert not runs.exists()  # refused before Ray or a run folder was started


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
    assert "checkpoint:" in capsys.readouterr().out
    (run_dir,) = runs.iterdir()
    assert run_dir.name.startswith("cli__1__")
    ckpt = read_checkpoint(run_dir / "checkpoints" / "latest.pt")
    assert ckpt.config is not None and ckpt.config["num_envs"] == 16 and ckpt.config["hidden"] == [8]
    assert (ckpt.config["backend"], ckpt.config["workers"]) == ("local", 2)
    assert main(["train", "--set", "hiden=[8]"]) == 2
    assert "unknown setting(s) in --set 'hiden=[8]': hiden" in capsys.readouterr().err


def test_action_names_used_here_exist() -> None:
    for name in ("draw_discard", "discard 7c", "discard Kh"):
        assert action_name(action_id(name)) == name


def test_a_run_full_of_truncated_hands_trains(tmp_path: Path) -> None:
    # A turn limit of 3 draws truncates most hands: their bootstrap reads each learner's final view
    # of the hand (venv.final_observations) and the run must still learn without errors or NaNs.
    args = dataclasses.replace(tiny(tmp_path), turn_limit=3, eval_every=0)
    run_dir = train(args)
    found = scalars(run_dir)
    assert all(math.isfinite(v) for v in found["losses/value"] + found["losses/policy"])
    assert found["charts/points_per_hand"]  # hands ended (truncated ones score 0)


# --- kickstarting ----------------------------------------------------------------------------------


def test_the_kickstarting_teacher_is_greedy_and_its_weight_decays(tmp_path: Path) -> None:
    args = dataclasses.replace(
        tiny(tmp_path), eval_every=0, kickstart=2.0, kickstart_steps=6 * 512, total_steps=8 * 512,
        learning_rate=1e-3,
    )  # fmt: skip
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


# --- rollout workers on Ray ------------------------------------------------------------------------


class FakeRay:
    """Records how :func:`init_ray` initialises Ray."""

    def __init__(self, initialised: bool, cpus: float = 8.0) -> None:
        self.initialised, self.cpus, self.calls = initialised, cpus, []  # type: ignore[var-annotated]

    def is_initialized(self) -> bool:
        return self.initialised

    def init(self, **kwargs: Any) -> None:
        self.calls.append(kwargs)
        self.initialised = True
        self.cpus = kwargs.get("num_cpus", self.cpus)

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": self.cpus}


def test_ray_is_reused_or_started_locally_or_on_the_cluster_of_ray_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    running = FakeRay(initialised=True)
    monkeypatch.setitem(sys.modules, "ray", running)
    assert init_ray(2) == (running, False) and running.calls == []  # reused, never shut down by the run
    local = FakeRay(initialised=False)
    monkeypatch.setitem(sys.modules, "ray", local)
    assert init_ray(64) == (local, True)
    (call,) = local.calls
    assert call.get("address") is None and call["num_cpus"] >= 64  # every actor gets its CPU
    cluster = FakeRay(initialised=False, cpus=2.0)
    monkeypatch.setitem(sys.modules, "ray", cluster)
    monkeypatch.setenv("RAY_ADDRESS", "ray://head:10001")
    with pytest.warns(UserWarning, match="Ray has 2 CPUs for 4 rollout workers"):
        assert init_ray(4) == (cluster, True)
    assert cluster.calls[0]["address"] == "ray://head:10001" and "num_cpus" not in cluster.calls[0]


def comparable(run_dir: Path) -> dict[str, list[float]]:
    """The run's scalars but the wall-clock ones."""
    return {k: v for k, v in scalars(run_dir).items() if not k.startswith("timing/") and k != "charts/SPS"}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    """A local Ray instance of 2 CPUs for this module's Ray tests (runs reuse it and leave it running)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_ray_workers_train_like_local_ones_and_write_a_run_that_loads(local_ray: Any, tmp_path: Path) -> None:
    # One test, not several: under pytest-xdist a module fixture would start Ray once per worker process.
    args = tiny(tmp_path, backend="ray", workers=2, eval_every=0)
    ray_dir = train(args)
    assert local_ray.is_initialized()  # not the run's to shut down
    deadline = time.time() + 20  # the run ended its actors: their CPUs come free
    while local_ray.available_resources().get("CPU", 0) < 2 and time.time() < deadline:
        time.sleep(0.1)
    assert local_ray.available_resources().get("CPU", 0) == 2

    found = scalars(ray_dir)
    for tag in ("charts/episodic_return", "losses/policy", "losses/value", "charts/learner_decisions"):
        assert len(found[tag]) == 2, tag  # one per update
    assert all(math.isfinite(v) for v in found["losses/value"] + found["losses/policy"])
    # Both workers' decisions reach the update: about half of the 32 slots' 16 steps are the learner's.
    assert all(150 < v < 370 for v in found["charts/learner_decisions"])
    path = ray_dir / "checkpoints" / "latest.pt"
    net = ActorCritic.for_args(args)
    progress = load_training_checkpoint(str(path), net, torch.optim.Adam(net.parameters()))
    assert progress["update"] == 2 and progress["global_step"] == 2 * args.num_envs * args.num_steps
    assert agents.make(f"checkpoint:{path}") is not None

    # The same seed and workers in this process, one after another: the same figures and network.
    local_dir = train(dataclasses.replace(args, backend="local"))
    assert comparable(local_dir) == comparable(ray_dir)
    ray_net = read_checkpoint(path).policy.state_dict()
    local_net = read_checkpoint(local_dir / "checkpoints" / "latest.pt").policy.state_dict()
    assert all(torch.equal(ray_net[k], local_net[k]) for k in ray_net)
    # The split matters: one worker over all the slots deals other hands and trains another network.
    single = train(dataclasses.replace(args, backend="local", workers=1))
    assert comparable(single)["charts/episodic_return"] != comparable(ray_dir)["charts/episodic_return"]
