"""The settings of a PPO run (ginenv.experiments.train.args): the shipped config is the defaults, and
bad settings are refused with a UsageError naming the setting, before any run folder or Ray."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from ginenv.experiments.cli import main
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.harness import HarnessError
from ginenv.experiments.eval.ladder_config import apply_overrides, load_dataclass_yaml
from ginenv.experiments.train.args import Args


def test_the_shipped_config_is_the_dataclass_defaults() -> None:
    assert load_dataclass_yaml("ppo", Args) == Args()


def test_config_errors_name_the_setting(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("seed: 1\nlearning_rte: 0.1\n")
    with pytest.raises(UsageError, match=r"unknown setting.*learning_rte"):
        load_dataclass_yaml(cfg, Args)
    cfg.write_text("hidden: [64, true]\n")
    with pytest.raises(UsageError, match=r"hidden must be list\[int\], got \[64, True\]"):
        load_dataclass_yaml(cfg, Args)
    with pytest.raises(UsageError, match=r"seed must be int, got 1\.5"):
        apply_overrides(Args(), ["seed=1.5"])
    with pytest.raises(UsageError, match="write key=value"):
        apply_overrides(Args(), ["seed"])
    got = apply_overrides(Args(), ["learning_rate=1e-4", "hidden=[64, 64]", "opponents={greedy: 1}"])
    assert (got.learning_rate, got.hidden, got.opponents) == (1e-4, [64, 64], {"greedy": 1.0})
    with pytest.raises(UsageError, match="opponents: unknown league member"):
        apply_overrides(Args(), ["opponents={openspiel_simple: 1}"]).validate()
    # The levels compiled over the engine's record are league members.
    apply_overrides(Args(), ["opponents={expert: 0.3, normal: 0.3, easy: 0.2, hard: 0.2}"]).validate()
    # master, compiled, at the shipped width or another; a bad width in one line.
    apply_overrides(Args(), ["opponents={master: 1, master@worlds=64: 1}"]).validate()
    with pytest.raises(
        UsageError, match=r"^opponents: master's worlds must be an integer from 1 to 65536, got 0$"
    ):
        apply_overrides(Args(), ["opponents={master@worlds=0: 1}"]).validate()
    with pytest.raises(UsageError, match="gamma must be a number from 0 to 1"):
        apply_overrides(Args(), ["gamma=2"]).validate()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"backend": "spark"}, "backend must be local or ray, got 'spark'"),
        ({"workers": 0}, "workers must be a positive integer, got 0"),
        ({"workers": 3}, r"workers must be a divisor of num_envs \(1024\).*, got 3"),
        ({"pfsp": "off"}, "pfsp must be null or variance or hard, got 'off'"),
        (
            {"engine_threads": 0},
            r"engine_threads must be an integer from 1 to \d+ \(numba's threads\), got 0",
        ),
        ({"engine_threads": 4096}, "engine_threads must be an integer from 1 to"),
        ({"threads": "two"}, r"threads must be auto or an integer >= 0 \(0: torch's default\), got 'two'"),
        ({"threads": -1}, "threads must be auto or an integer >= 0"),
        (
            {"overlap": True},
            "overlap needs backend local and workers >= 2.*got backend 'local' and workers 1",
        ),
        (
            {"overlap": True, "workers": 2, "backend": "ray"},
            "overlap needs backend local and workers >= 2.*got backend 'ray' and workers 2",
        ),
    ],
)
def test_bad_backends_worker_counts_and_weightings_are_refused(changes: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        dataclasses.replace(Args(), **changes).validate()


def test_the_train_command_refuses_uneven_workers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    argv = ["train", "--num-envs", "32", "--workers", "3", "--backend", "ray", "--set", f"runs_dir={runs}"]
    assert main(argv) == 2
    assert "workers must be a divisor of num_envs (32)" in capsys.readouterr().err
    assert not runs.exists()  # refused before Ray or a run folder was started


def test_the_harness_and_training_share_one_usage_error() -> None:
    assert HarnessError is UsageError and issubclass(UsageError, ValueError)


def test_threads_are_auto_by_default_and_a_number_still_pins_them() -> None:
    assert Args().threads == "auto"
    assert apply_overrides(Args(), ["threads=1"]).threads == 1
    assert apply_overrides(Args(), ["threads=auto"]).threads == "auto"


def test_the_exploit_command_refuses_bad_threads_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["exploit", "random", "--threads", "many"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith("--threads must be auto or an integer >= 0 (0: torch's default), got 'many'")
