"""Where the rollout workers run (ginenv.experiments.train.distributed): how Ray is found or started,
Ray actors training the same network as workers in the learner's process, and local workers whose
env steps overlap training the same network as workers one after another."""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
import torch
from extras import needs_extra
from ginenv.agents.neural import read_checkpoint
from ginenv.experiments.train.actor_critic import ActorCritic
from ginenv.experiments.train.distributed import init_ray
from ginenv.experiments.train.ppo import train
from ginenv.experiments.train.training_checkpoints import load_training_checkpoint

from ginenv import agents


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
    # Each actor's engine threads are CPUs of its own (engine_threads).
    monkeypatch.delenv("RAY_ADDRESS")
    local = FakeRay(initialised=False)
    monkeypatch.setitem(sys.modules, "ray", local)
    assert init_ray(32, 3) == (local, True) and local.calls[0]["num_cpus"] >= 96
    monkeypatch.setitem(sys.modules, "ray", FakeRay(initialised=True, cpus=4.0))
    with pytest.warns(
        UserWarning, match=r"4 CPUs for 4 rollout workers of 2 CPU\(s\) each \(engine_threads\)"
    ):
        init_ray(4, 2)


def comparable(found: dict[str, list[float]]) -> dict[str, list[float]]:
    """A run's scalars but the wall-clock ones."""
    return {k: v for k, v in found.items() if not k.startswith("timing/") and k != "charts/SPS"}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    """A local Ray instance of 2 CPUs for this module's Ray tests (runs reuse it and leave it running)."""
    needs_extra("ray", "ray")
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_ray_workers_train_like_local_ones_and_write_a_run_that_loads(local_ray: Any, tiny, scalars) -> None:  # type: ignore[no-untyped-def]
    # One test, not several: under pytest-xdist a module fixture would start Ray once per worker process.
    args = tiny(backend="ray", workers=2, eval_every=0)
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
    assert comparable(scalars(local_dir)) == comparable(found)
    ray_net = read_checkpoint(path).policy.state_dict()
    local_net = read_checkpoint(local_dir / "checkpoints" / "latest.pt").policy.state_dict()
    assert all(torch.equal(ray_net[k], local_net[k]) for k in ray_net)
    # The split matters: one worker over all the slots deals other hands and trains another network.
    single = train(dataclasses.replace(args, backend="local", workers=1))
    assert scalars(single)["charts/episodic_return"] != found["charts/episodic_return"]


def test_overlapped_local_workers_train_the_network_of_workers_one_after_another(tiny, scalars) -> None:  # type: ignore[no-untyped-def]
    args = tiny(workers=2, eval_every=0, threads=2)
    apart = train(args)
    overlapped = train(dataclasses.replace(args, overlap=True))
    assert comparable(scalars(overlapped)) == comparable(scalars(apart))
    one = read_checkpoint(apart / "checkpoints" / "latest.pt").policy.state_dict()
    other = read_checkpoint(overlapped / "checkpoints" / "latest.pt").policy.state_dict()
    assert all(torch.equal(one[k], other[k]) for k in one)
