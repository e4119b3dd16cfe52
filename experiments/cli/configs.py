"""The ``ginenv config`` command: list the shipped configs, print one, or copy one out to edit
(the configs themselves are read by :mod:`ginenv.experiments.config_loader`).

A shipped config may read files that no install brings: the recipe of ``neural`` starts from a
behaviour clone that only the repository's ``research/`` code makes. ``config list`` reads the
files each config names (:func:`files_named`), looks for them where the command would (the current
folder), and under a config whose file is missing prints what it needs first and how that file is
made, from the config's own comment line ``# needs PATH: HOW``.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import textwrap
from pathlib import Path
from typing import Any

import yaml
from ginenv.agents.specs import CHECKPOINT_PREFIX
from ginenv.experiments.config_loader import (
    copy_shipped_config,
    is_shipped_config,
    known_configs,
    shipped_config_text,
    shipped_configs,
)
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.ladder_config import LadderFile


def command_of(name: str) -> str:
    """The command that reads the shipped config ``name``: a ladder file's keys, else training's."""
    data = yaml.safe_load(shipped_config_text(name))
    ladder_keys = {f.name for f in dataclasses.fields(LadderFile)}
    return "ginenv ladder/rate" if isinstance(data, dict) and set(data) <= ladder_keys else "ginenv train"


#: The width ``config list`` wraps the descriptions to.
LIST_WIDTH = 100
#: A leading comment line saying how a file the config reads is made: ``# needs PATH: HOW``. The needs
#: lines come last in the header; a comment line after one continues its HOW.
NEEDS = re.compile(r"^needs (\S+): (.+)$")


def leading_comments(name: str) -> list[str]:
    """The shipped config ``name``'s leading comment lines, without their ``#``."""
    about = []
    for line in shipped_config_text(name).splitlines():
        if not line.startswith("#"):
            break
        about.append(line.lstrip("#").strip())
    return about


def header_parts(name: str) -> tuple[list[str], dict[str, str]]:
    """The shipped config ``name``'s header split in two: the description's lines, and each file of its
    ``# needs PATH: HOW`` lines with its HOW (continuation lines joined)."""
    about: list[str] = []
    how: dict[str, str] = {}
    path = None
    for line in leading_comments(name):
        found = NEEDS.match(line)
        if found:
            path = found.group(1)
            how[path] = found.group(2)
        elif path is not None:
            how[path] = f"{how[path]} {line}".strip()
        elif line:
            about.append(line)
    return about, how


def description_of(name: str) -> str:
    """The shipped config ``name``'s description: its leading comment lines, whole, as one line (its
    ``needs`` lines apart: :func:`needs_of`)."""
    return " ".join(header_parts(name)[0])


def files_named(data: Any) -> list[str]:
    """The files a config's settings name, in order, once each: every ``checkpoint:PATH`` spec (a league
    member, an evaluation opponent, a ladder agent) and every ``.pt`` value (``init``, a teacher),
    anywhere in the mapping, keys included."""
    found: list[str] = []

    def visit(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                visit(key)
                visit(item)
        elif isinstance(value, list):
            for item in value:
                visit(item)
        elif isinstance(value, str):
            path = value.removeprefix(CHECKPOINT_PREFIX)
            if (value.startswith(CHECKPOINT_PREFIX) or value.endswith(".pt")) and path not in found:
                found.append(path)

    visit(data)
    return found


def needs_of(name: str) -> dict[str, str]:
    """The files the shipped config ``name`` reads, each with how it is made (its ``# needs PATH: HOW``
    comment; ``""`` where the config has none)."""
    how = header_parts(name)[1]
    return {path: how.get(path, "") for path in files_named(yaml.safe_load(shipped_config_text(name)))}


def missing_needs(name: str, folder: str | Path = ".") -> dict[str, str]:
    """What :func:`needs_of` names that ``folder`` (where the command would run) lacks: the config does
    not run there until these files exist."""
    return {path: how for path, how in needs_of(name).items() if not (Path(folder) / path).is_file()}


def needs_clause(config: str | Path | None, message: str) -> str:
    """What to append to a refusal ``message`` about a file that the shipped config ``config`` needs and
    the current folder lacks: ``; the shipped config neural needs runs/expert_bc.pt first: HOW`` for
    each such file the message names (``""`` for any other config or message)."""
    if not isinstance(config, str) or not is_shipped_config(config):
        return ""
    return "".join(
        f"; the shipped config {config} needs {path} first: {how}"
        for path, how in missing_needs(config).items()
        if path in message
    )


def config_command(action: str, name: str | None = None, dest: str | Path | None = None) -> str:
    """``ginenv config list | show NAME | copy NAME [DEST]``: the text to print."""
    if action == "list":
        rows = []
        for known in shipped_configs():
            missing = missing_needs(known)
            rows.append(
                f"{known:<11} {command_of(known)}" + ("  (needs files first: below)" if missing else "")
            )
            rows += textwrap.wrap(
                description_of(known), LIST_WIDTH, initial_indent="  ", subsequent_indent="  "
            )
            for path, how in missing.items():
                note = f"needs {path}, not in this folder" + (f": {how}" if how else "")
                rows += textwrap.wrap(
                    note, LIST_WIDTH, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False
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
