"""Every argument of every ``ginenv`` subcommand says what it is for, ``--rules`` names the presets,
and ``ginenv config list`` prints each shipped config's description whole."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest
from ginenv.experiments.cli import build_parser, main
from ginenv.experiments.cli.configs import LIST_WIDTH, description_of
from ginenv.experiments.config_loader import shipped_configs

from ginenv.rules import PRESETS


def parsers(
    parser: argparse.ArgumentParser, name: str = "ginenv"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``parser`` and every subcommand's parser under it, each with its command line."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                yield from parsers(child, f"{name} {sub}")


def test_every_argument_has_help() -> None:
    missing = [
        f"{name}: {action.option_strings or action.dest}"
        for name, parser in parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction) and not (action.help or "").strip()
    ]
    assert missing == []


def test_rules_lists_the_presets() -> None:
    found = 0
    for name, parser in parsers(build_parser()):
        for action in parser._actions:
            if "--rules" in action.option_strings:
                found += 1
                assert all(preset in (action.help or "") for preset in PRESETS), name
    assert found >= 3  # match, demo, play


def test_config_list_prints_every_description_whole(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    flat = " ".join(line.strip() for line in lines)
    for name in shipped_configs():
        about = description_of(name)
        assert about and about in flat, name
    assert all(len(line) <= LIST_WIDTH for line in lines[:-1])
