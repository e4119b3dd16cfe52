"""Config loading has one home (ginenv.experiments.config_loader) that evaluation and training share; rules
are resolved by ginenv.rules; the command line parses each value once, as argparse reads it."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from ginenv.experiments import config_loader
from ginenv.experiments.cli import build_parser
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval import ladder_config
from ginenv.experiments.eval.harness import EvalConfig
from ginenv.experiments.eval.units import run_chunk
from ginenv.experiments.train.args import Args

from ginenv.rules import PRESETS, Rules, RulesError, resolve_rules


def test_rules_are_resolved_by_the_rules_module() -> None:
    assert resolve_rules("seed004") is PRESETS["seed004"]
    assert resolve_rules({"preset": "oklahoma", "target": 50}) == Rules(oklahoma=True, target=50)
    mine = Rules(knock_limit=5)
    assert resolve_rules(mine) is mine
    with pytest.raises(RulesError, match="rules must be a preset name or a mapping of rule options, got 7"):
        resolve_rules(7)  # type: ignore[arg-type]
    with pytest.raises(RulesError, match="known presets"):
        resolve_rules("nope")
    # The old import path still works, and is the same function.
    assert ladder_config.resolve_rules is resolve_rules


def test_evaluation_and_training_load_through_one_loader(tmp_path: Path) -> None:
    for name in ("load_dataclass_yaml", "apply_overrides", "shipped_configs", "copy_shipped_config"):
        assert getattr(ladder_config, name) is getattr(config_loader, name)
    bad = tmp_path / "c.yaml"
    # The same mistakes are refused in the same words by both kinds of config.
    bad.write_text("agents: [random, greedy]\ncolour: red\n")
    with pytest.raises(UsageError, match=rf"unknown setting\(s\) in {bad}: colour; known settings: agents"):
        ladder_config.load_ladder_file(bad)
    bad.write_text("seed: 1\ncolour: red\n")
    with pytest.raises(
        UsageError, match=rf"unknown setting\(s\) in {bad}: colour; known settings: anneal_lr"
    ):
        config_loader.load_dataclass_yaml(bad, Args)
    for cls in (ladder_config.LadderFile, Args):
        bad.write_text("1: 2\n")
        with pytest.raises(UsageError, match="setting names must be strings, got 1; known settings: "):
            config_loader.settings_of(config_loader.read_config(bad), cls, str(bad))
    with pytest.raises(UsageError, match="must be a mapping of settings"):
        config_loader.settings_of([1, 2], Args, "x")


def test_a_ladder_file_is_checked_once_and_trusted_below(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("agents: [random, greedy]\nturn_limit: 0\n")
    # The one turn-limit check (ginenv.engine.check_turn_limit) names the file's setting.
    with pytest.raises(UsageError, match=rf"{path}: turn_limit must be a positive integer \(draws per hand"):
        ladder_config.load_ladder_file(path)
    path.write_text("agents: [random, greedy]\nseed: random\nturn_limit: 40\nrules: {knock_limit: 7}\n")
    spec = ladder_config.load_ladder_file(path)
    cfg = ladder_config.to_eval_config(spec, ["random", "greedy"])
    assert isinstance(cfg.seed, int) and cfg.seed >= 0 and cfg.turn_limit == 40
    assert cfg.rules == Rules(knock_limit=7)
    spec.rules = "nope"
    with pytest.raises(UsageError, match="rules: unknown rules preset 'nope'"):
        ladder_config.to_eval_config(spec, ["random", "greedy"])


def test_options_are_typed_as_argparse_reads_them() -> None:
    parser = build_parser()
    args = parser.parse_args(["match", "greedy", "random", "--seed", "5", "--turn-limit", "50"])
    assert (args.seed, args.seed_drawn, args.turn_limit, args.time_limit) == (5, False, 50, None)
    args = parser.parse_args(["match", "greedy", "random", "--seed", "random", "--time-limit", "2"])
    assert isinstance(args.seed, int) and args.seed >= 0 and args.seed_drawn is True
    assert args.time_limit == 2.0
    # Defaults are typed too, and a bad value stops the parse itself with the option's name.
    args = parser.parse_args(["demo"])
    assert (args.seed, args.seed_drawn, args.turn_limit) == (0, False, None)
    for argv, message in (
        (["ladder", "--seed", "05x"], "--seed must be a non-negative integer or 'random', got '05x'"),
        (["demo", "--turn-limit", "0"], "--turn-limit must be a positive integer (draws per hand"),
        (["ladder", "--time-limit", "0"], "--time-limit must be a number of seconds in (0, 3600]"),
        (["rate", "greedy", "--deals", "0"], "--deals must be a positive integer, got 0"),
        (["play", "--port", "70000"], "--port must be between 0 and 65535 (0: any free port), got 70000"),
        (["train", "--workers", "-1"], "--workers must be >= 0, got -1"),
    ):
        with pytest.raises(UsageError) as err:
            parser.parse_args(argv)
        assert message in str(err.value)


def test_workers_receive_the_checked_config_not_a_dict_to_parse_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cfg = EvalConfig(agents=("greedy", "random"), deals=1, seed=3, turn_limit=30)
    calls = []
    original = EvalConfig.__post_init__
    monkeypatch.setattr(EvalConfig, "__post_init__", lambda self: calls.append(original(self)))
    sent = pickle.loads(pickle.dumps(cfg))  # what a worker process or Ray receives
    assert sent == cfg and calls == []
    records = run_chunk(sent, [("greedy", "random", 0)])
    assert [r["deal"] for r in records] == [0] and calls == []
