"""Shared pieces of the PPO tests: a tiny run's settings, its TensorBoard scalars, one smoke run."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from ginenv.experiments.train.ppo import Args, train


def tiny_args(root: Path, **changes: object) -> Args:
    """A run of two updates on 32 slots of 16 steps, small networks, writing under ``root``."""
    base = Args(
        num_envs=32, num_steps=16, total_steps=32 * 16 * 2, hidden=[16], card_hidden=8, update_epochs=2,
        num_minibatches=2, snapshot_every=1, eval_every=2, eval_deals=1, eval_levels=["greedy"],
        runs_dir=str(root / "runs"), progress=False, threads=1,
    )  # fmt: skip
    return dataclasses.replace(base, **changes)


def read_scalars(run_dir: Path) -> dict[str, list[float]]:
    """Every TensorBoard scalar of a run folder, by tag."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir))
    acc.Reload()
    return {tag: [e.value for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


@pytest.fixture
def tiny(tmp_path: Path) -> Callable[..., Args]:
    """``tiny(**changes)``: a tiny run's Args writing under this test's ``tmp_path``."""
    return partial(tiny_args, tmp_path)


@pytest.fixture(scope="session")
def scalars() -> Callable[[Path], dict[str, list[float]]]:
    """``scalars(run_dir)``: the run's TensorBoard scalars by tag."""
    return read_scalars


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Args, Path]:
    """One tiny run (with an evaluation), shared by the tests that read its folder."""
    args = tiny_args(tmp_path_factory.mktemp("ppo"))
    return args, train(args)
