"""The ``ginenv config`` command: list the shipped configs, print one, or copy one out to edit
(the configs themselves are read by :mod:`ginenv.experiments.config`)."""

from __future__ import annotations

import argparse
import dataclasses
import textwrap
from pathlib import Path
from typing import Any

import yaml
from ginenv.experiments.config import copy_shipped_config, known_configs, shipped_config_text, shipped_configs
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.config import LadderFile


def command_of(name: str) -> str:
    """The command that reads the shipped config ``name``: a ladder file's keys, else training's."""
    data = yaml.safe_load(shipped_config_text(name))
    ladder_keys = {f.name for f in dataclasses.fields(LadderFile)}
    return "ginenv ladder/rate" if isinstance(data, dict) and set(data) <= ladder_keys else "ginenv train"


#: The width ``config list`` wraps the descriptions to.
LIST_WIDTH = 100


def description_of(name: str) -> str:
    """The shipped config ``name``'s description: its leading comment lines, whole, as one line."""
    about = []
    for line in shipped_config_text(name).splitlines():
        if not line.startswith("#"):
            break
        about.append(line.lstrip("#").strip())
    return " ".join(part for part in about if part)


def config_command(action: str, name: str | None = None, dest: str | Path | None = None) -> str:
    """``ginenv config list | show NAME | copy NAME [DEST]``: the text to print."""
    if action == "list":
        rows = []
        for known in shipped_configs():
            rows.append(f"{known:<11} {command_of(known)}")
            rows += textwrap.wrap(
                description_of(known), LIST_WIDTH, initial_indent="  ", subsequent_indent="  "
            )
        rows.append(
            "print one: ginenv config show NAME; copy one out to edit: ginenv config copy NAME [DEST], "
            "then --config DEST"
        )
        return "\n".join(rows)
    if name is None:
        raise UsageError(f"ginenv config {action} needs a NAME; {known_configs()}")
    if action == "show":
        return shipped_config_text(name).rstrip("\n")
    if action == "copy":
        target = copy_shipped_config(name, dest)
        return f"wrote {target}: edit it, then {command_of(name).split('/')[0]} --config {target}"
    raise UsageError(f"ginenv config: unknown action {action!r}; use list, show NAME or copy NAME [DEST]")


def cmd_config(args: argparse.Namespace) -> int:
    """``ginenv config ACTION``: print what :func:`config_command` says."""
    print(config_command(args.action, getattr(args, "name", None), getattr(args, "dest", None)))
    return 0


def add_parser(sub: Any) -> None:
    """The subcommand ``config`` (and its actions) of the parser's ``sub``."""
    conf = sub.add_parser("config", help="list the shipped configs, print one, or copy one out to edit")
    conf_sub = conf.add_subparsers(
        dest="action", required=True, metavar="ACTION", help="list, show NAME or copy NAME [DEST]"
    )
    conf_sub.add_parser("list", help="the shipped configs' names and what each is for")
    names = ", ".join(shipped_configs())
    conf_sub.add_parser("show", help="print a shipped config's YAML").add_argument(
        "name", metavar="NAME", help=f"a shipped config: {names}"
    )
    copy = conf_sub.add_parser("copy", help="write a shipped config to a file to edit (then --config FILE)")
    copy.add_argument("name", metavar="NAME", help=f"a shipped config: {names}")
    copy.add_argument("dest", nargs="?", help="file or folder to write (default ./NAME.yaml)")
    conf.set_defaults(func=cmd_config)
