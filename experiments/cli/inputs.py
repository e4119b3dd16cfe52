"""Values parsed once, where they enter the ``ginenv`` command, and the options several commands share.

Every option whose value travels below the command line is parsed and checked while argparse reads
it (an argparse action of this module): a bad value stops the command with one
:class:`~ginenv.experiments.errors.UsageError` line naming the option, before anything is built or
played. The commands then pass typed values on (an ``int`` seed, a positive ``int`` turn limit,
seconds as a ``float``, bounded counts) and nothing below re-parses them; only the public entry
points a user may call directly (:class:`~ginenv.experiments.eval.harness.EvalConfig`, the env)
check them again, through the same validators (``check_seed``, ``check_time_limit``,
:func:`ginenv.engine.check_turn_limit`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ginenv.agents.sandbox import CHOICES, undumpable
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.harness import (
    DEFAULT_TIME_LIMIT,
    MAX_DEALS,
    MAX_WORKERS,
    HarnessError,
    check_key,
    check_seed,
    check_time_limit,
    random_seed,
)

from ginenv.engine import DEFAULT_TURN_LIMIT, check_turn_limit
from ginenv.rules import PRESETS, Rules, RulesError, resolve_rules
from ginenv.secret_deals import DealKey

#: Shipped configs by name (package data, :func:`ginenv.experiments.config_loader.shipped_configs`).
DEFAULT_CONFIG = "ladder"
DEFAULT_TRAIN_CONFIG = "ppo"
CONFIG_HELP = "a shipped config's name (ginenv config list) or a YAML file's path"
SEED_HELP = (
    "master seed: a non-negative integer, or 'random' (drawn from the OS and recorded); the deals of "
    "a seed are public, so a rating you publish plays --secret (the seed then seeds the agents only)"
)
#: What an agent argument takes (the specs of :mod:`ginenv.agents.specs`).
AGENT_SPECS = "a registered name, checkpoint:PATH, package.module:Name, path/to/file.py:Name or exec:COMMAND"
#: The help of every ``--rules``: the presets it takes.
RULES_HELP = f"rules preset: {', '.join(PRESETS)}"
TURN_LIMIT_HELP = f"draws per hand before it is truncated with no score (default {DEFAULT_TURN_LIMIT})"
TIME_LIMIT_HELP = (
    f"seconds an exec:COMMAND agent may take for one decision before it forfeits the game "
    f"(default {DEFAULT_TIME_LIMIT:g})"
)


def parse_seed(text: str, option: str = "--seed") -> int:
    """A ``--seed`` value as an int: a non-negative integer, or ``random`` (drawn from the OS)."""
    if text == "random":
        return random_seed()
    digits = text.strip()
    return check_seed(int(digits) if digits.isascii() and digits.isdigit() else text, option, random_ok=True)


def parse_rules(name: str) -> Rules:
    """The rules a ``--rules`` preset names (:func:`ginenv.rules.resolve_rules`); else UsageError."""
    try:
        return resolve_rules(name)
    except RulesError as err:
        raise UsageError(f"rules: {err}") from None


def bounded(low: int, high: int, what: str, held: bool = True) -> Callable[[int, str], int]:
    """The parser of a count option from ``low`` to ``high`` (``what`` says what it counts; ``held``:
    every finished deal is kept in memory, so the bound is the statistics' memory)."""

    def parse(value: int, option: str) -> int:
        if value < low:
            raise UsageError(f"{option} must be {'>= 0' if low == 0 else 'a positive integer'}, got {value}")
        if value > high and not held:
            raise UsageError(f"{option} must be at most {high} ({what}), got {value:,}")
        if value > high:
            raise UsageError(
                f"{option} must be at most {high:,} ({what}; every finished deal is held in memory for the "
                f"statistics), got {value:,}; split a bigger evaluation into several runs"
            )
        return value

    return parse


def within(low: int, high: int, unit: str) -> Callable[[int, str], int]:
    """The parser of an integer option from ``low`` to ``high`` ``unit``."""

    def parse(value: int, option: str) -> int:
        if not low <= value <= high:
            raise UsageError(f"{option} must be between {low} and {high}{unit}, got {value}")
        return value

    return parse


HANDS = bounded(1, 2 * MAX_DEALS, "hands")
MATCHES = bounded(1, 2 * MAX_DEALS, "matches")
DEALS = bounded(1, MAX_DEALS, "duplicate deals per pairing")
WORKERS = bounded(0, MAX_WORKERS, "processes; 0 means every core", held=False)
PORT = within(0, 65535, " (0: any free port)")
PACE_MS = within(0, 10_000, " milliseconds")


def turn_limit(value: int, option: str) -> int:
    """A ``--turn-limit`` value (:func:`ginenv.engine.check_turn_limit`)."""
    try:
        return check_turn_limit(value, option)
    except ValueError as err:
        raise UsageError(str(err)) from None


def checked(parse: Callable[[Any, str], object]) -> type[argparse.Action]:
    """An argparse action that stores ``parse(value, option)``: the value checked as it is read.

    A refusal is a :class:`UsageError`, which argparse lets through to ``main`` (one line, exit 2);
    a value argparse's own ``type`` cannot convert is argparse's error as before.
    """

    class Checked(argparse.Action):
        def __call__(
            self,
            parser: argparse.ArgumentParser,
            namespace: argparse.Namespace,
            values: str | Sequence[Any] | None,
            option_string: str | None = None,
        ) -> None:
            setattr(namespace, self.dest, parse(values, option_string or self.dest))

    return Checked


class SeedAction(argparse.Action):
    """``--seed``: stores the seed as an int (:func:`parse_seed`) and whether it was drawn."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        text = str(values)
        setattr(namespace, self.dest, parse_seed(text, option_string or "--seed"))
        namespace.seed_drawn = text == "random"


def add_seed(p: argparse.ArgumentParser, help: str, default: int | None = None) -> None:
    """The ``--seed`` option (an int once parsed; ``random`` draws one and sets ``seed_drawn``)."""
    p.add_argument("--seed", action=SeedAction, default=default, help=help)
    p.set_defaults(seed_drawn=False)


def add_turn_limit(p: argparse.ArgumentParser) -> None:
    """The ``--turn-limit`` option (a positive int once parsed; None when not given)."""
    p.add_argument("--turn-limit", type=int, action=checked(turn_limit), help=TURN_LIMIT_HELP)


KEY_ON_COMMAND_LINE = (
    "{option} would put the deal key in this command line, which every user of the machine reads "
    "(ps, /proc/PID/cmdline): write the key to a file only you can read and give --key-file FILE, "
    "or give it on standard input with --key-file -"
)


def read_key_file(path: object, option: str = "--key-file") -> tuple[DealKey, str | None]:
    """The deal key in file ``path`` (hex, as a secret run printed it; ``-``: standard input) and
    the file's absolute path (None for standard input), checked as it is read (a UsageError says
    what was wrong). This process is made non-dumpable first (:func:`~ginenv.agents.sandbox.undumpable`):
    no process of the same user reads the key from its memory."""
    undumpable()
    name = str(path)
    try:
        if name == "-":
            text, where = sys.stdin.readline(4096), None
        else:
            with open(name, encoding="ascii", errors="replace") as fh:
                text, where = fh.read(4096), os.path.abspath(name)
    except OSError as err:
        raise UsageError(f"{option}: cannot read {name}: {err.strerror or err}") from None
    try:
        return check_key(text.strip(), f"{option} {'(standard input)' if name == '-' else name}"), where
    except HarnessError as err:
        raise UsageError(str(err)) from None


class KeyFileAction(argparse.Action):
    """``--key-file PATH``: stores ``args.key`` (the DealKey) and ``args.key_file`` (its path)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        namespace.key, namespace.key_file = read_key_file(values, option_string or "--key-file")


def refuse_key(value: object, option: str) -> None:
    """``--key HEX``: refused, the key is never given on a command line (:data:`KEY_ON_COMMAND_LINE`)."""
    raise UsageError(KEY_ON_COMMAND_LINE.format(option=option))


def add_deal_key(p: argparse.ArgumentParser) -> None:
    """``--secret`` (deal from a fresh :class:`~ginenv.secret_deals.DealKey`) or ``--key-file PATH``
    (a given one, from a file or ``-`` standard input, checked as it is read): ``args.key`` is the
    DealKey or None, ``args.key_file`` the file's path or None, ``args.secret`` a bool. ``--key HEX``
    is refused with a pointer to ``--key-file``; ``--sandbox`` says where ``exec:`` agents run."""
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--secret",
        action="store_true",
        help="play on secret deals from a fresh key: its commitment is printed at the start, the key "
        "at the end (for a rating you publish; --seed then seeds the agents only)",
    )
    group.add_argument(
        "--key-file",
        action=KeyFileAction,
        metavar="PATH",
        help="play on the secret deals of the key in this file (32 to 128 hex digits; - reads it from "
        "standard input): check a disclosed run, or resume a stopped --secret run",
    )
    group.add_argument("--key", action=checked(refuse_key), metavar="HEX", help=argparse.SUPPRESS)
    p.set_defaults(key=None, key_file=None)
    p.add_argument(
        "--sandbox",
        choices=CHOICES,
        default="auto",
        help="where exec: agents run: strict (no network, no other process visible, a read-only "
        "file system but their own folder), basic (own folder, cleared environment, limits) or off; "
        "auto (default): strict on secret deals, basic otherwise",
    )


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The options of the commands that play a run of duplicate deals (ladder, match, rate)."""
    p.add_argument("--out", help="run folder (results, plots); rerunning it resumes")
    add_deal_key(p)
    p.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="local processes (default) or Ray (RAY_ADDRESS names a cluster)",
    )
    p.add_argument(
        "--workers",
        type=int,
        action=checked(WORKERS),
        default=0,
        help="local processes (default: every core)",
    )
    p.add_argument("--no-plots", action="store_true", help="skip PNG plots and TensorBoard scalars")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_turn_limit(p)
    p.add_argument("--time-limit", type=float, action=checked(check_time_limit), help=TIME_LIMIT_HELP)
    p.add_argument(
        "--replays",
        action="store_true",
        help="also write every game as a replay file in the run folder's replays/ (see ginenv play)",
    )


def check_save_path(path: str) -> Path:
    """Refuse a ``--save`` target that cannot be written, before the game is played."""
    target = Path(path)
    parent = target.parent
    if target.is_dir():
        raise UsageError(f"--save {path} is a folder; give a file name, e.g. {target / 'replay.json'}")
    if not parent.is_dir():
        raise UsageError(f"--save {path}: the folder {parent} does not exist; create it first")
    if not os.access(parent, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise UsageError(f"--save {path}: cannot write there (permission denied)")
    return target
