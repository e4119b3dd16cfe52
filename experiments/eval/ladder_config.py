"""Evaluation configs: ladder files (:class:`LadderFile`) and the harness config they become.

A ladder file is read by the one config loader (:mod:`ginenv.experiments.config_loader`: a shipped config's
name or a YAML file's path, unknown keys refused); this module checks each value's type and range
(:func:`load_ladder_file`), before any game is played, so that a config error is one clear line
(``UsageError``) naming the setting, what was given and what is allowed, and then turns the file
into an :class:`~ginenv.experiments.eval.harness.EvalConfig` (:func:`to_eval_config`: ``agents:
all`` expanded, the rules resolved, ``seed: random`` drawn), trusting the values it checked.

The loader's names (``shipped_configs``, ``load_dataclass_yaml``, ``apply_overrides``, ...) and
:func:`ginenv.rules.resolve_rules` are also importable from here, where they used to live.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Re-exported: the config loader's names (and ginenv.rules.resolve_rules, below) lived here before
# the loader served training too.
from ginenv.experiments.config_loader import SHIPPED_PACKAGE as SHIPPED_PACKAGE
from ginenv.experiments.config_loader import SHIPPED_SUFFIX as SHIPPED_SUFFIX
from ginenv.experiments.config_loader import apply_overrides as apply_overrides
from ginenv.experiments.config_loader import check_dataclass_types as check_dataclass_types
from ginenv.experiments.config_loader import config_label, read_config, settings_of
from ginenv.experiments.config_loader import copy_shipped_config as copy_shipped_config
from ginenv.experiments.config_loader import is_shipped_config as is_shipped_config
from ginenv.experiments.config_loader import load_dataclass_yaml as load_dataclass_yaml
from ginenv.experiments.config_loader import shipped_config_text as shipped_config_text
from ginenv.experiments.config_loader import shipped_configs as shipped_configs
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.harness import (
    DEFAULT_TIME_LIMIT,
    MAX_DEALS,
    EvalConfig,
    check_seed,
    check_specs,
    check_time_limit,
    random_seed,
)

from ginenv.engine import DEFAULT_TURN_LIMIT, check_turn_limit
from ginenv.rules import RulesError
from ginenv.rules import resolve_rules as resolve_rules
from ginenv.validation import is_int


@dataclass
class LadderFile:
    """The fields of a ladder/evaluation YAML file (see the shipped config ``ladder``)."""

    #: ``all`` (every registered agent) or a list of agent specs: registered names,
    #: ``checkpoint:PATH``, ``package.module:Name``, ``path/to/file.py:Name``, ``exec:COMMAND``.
    #: A module or file named here is imported, which runs its code: a config is trusted code.
    agents: str | list[str] = "all"
    #: ``round_robin``, ``gauntlet`` or ``adjacent`` (each agent against the next in the list).
    format: str = "round_robin"
    #: ``hand`` or ``match``.
    unit: str = "hand"
    #: Duplicate deals per pairing.
    deals: int = 100
    #: A preset name or a mapping of Rules fields.
    rules: str | dict[str, Any] = "standard"
    #: Master seed (a non-negative integer), or ``random``: drawn from the OS and recorded.
    seed: int | str = 0
    #: Draws per hand after which the hand is truncated and counts 0 points.
    turn_limit: int = DEFAULT_TURN_LIMIT
    #: Seconds an ``exec:`` agent may take for one decision before it forfeits the game.
    time_limit: float = DEFAULT_TIME_LIMIT
    #: Extra notes kept with the results (free text).
    notes: str = field(default="")


def _check_fields(spec: LadderFile, path: str | Path) -> None:
    """Refuse values of the wrong type with the setting's name and what it allows."""

    def bad(name: str, allowed: str) -> UsageError:
        return UsageError(f"{path}: {name} must be {allowed}, got {getattr(spec, name)!r}")

    if not (spec.agents == "all" or isinstance(spec.agents, list)):
        raise bad("agents", "'all' or a list of agent names")
    if isinstance(spec.agents, list) and not all(isinstance(a, str) for a in spec.agents):
        raise bad("agents", "'all' or a list of agent names")
    for name in ("format", "unit", "notes"):
        if not isinstance(getattr(spec, name), str):
            raise bad(name, "a string")
    if not is_int(spec.deals) or not 1 <= spec.deals <= MAX_DEALS:
        raise bad("deals", f"a positive integer (at most {MAX_DEALS:,})")
    try:
        check_turn_limit(spec.turn_limit, f"{path}: turn_limit")
    except ValueError as err:
        raise UsageError(str(err)) from None
    if spec.seed != "random":  # drawn by to_eval_config
        check_seed(spec.seed, f"{path}: seed", random_ok=True)
    if not isinstance(spec.rules, (str, dict)):
        raise bad("rules", "a preset name or a mapping of rule options")
    check_time_limit(spec.time_limit, f"{path}: time_limit")


def load_ladder_file(path: str | Path) -> LadderFile:
    """Read a YAML evaluation config: a shipped config's name (``ladder``) or a file's path; an unknown
    name, a missing file, bad YAML, unknown keys or bad values: UsageError."""
    label = config_label(path)
    spec = LadderFile(**settings_of(read_config(path), LadderFile, label))
    _check_fields(spec, label)
    return spec


def check_agent_names(names: tuple[str, ...] | list[str]) -> None:
    """Refuse agent specs that cannot be built (unknown names, missing files or modules, not an
    agent, a constructor that raises, unreadable checkpoints) before any work starts: one line
    naming the spec and the cause (:func:`ginenv.experiments.eval.harness.check_specs`)."""
    check_specs(names)


def to_eval_config(spec: LadderFile, registered: list[str]) -> EvalConfig:
    """The harness config of a ladder file (``all`` expands to every registered agent).

    ``seed: random`` is drawn here, once: the config (and so the run folder and its results) holds
    the drawn number, which reproduces or resumes the run when given back as the seed. The other
    values are taken as :func:`load_ladder_file` (or the command line's parsers) checked them; the
    rules are resolved here, once (a bad preset or option: UsageError).
    """
    names = tuple(registered) if spec.agents == "all" else tuple(spec.agents)
    check_agent_names(names)
    try:
        rules = resolve_rules(spec.rules)
    except RulesError as err:
        raise UsageError(f"rules: {err}") from None
    return EvalConfig(
        agents=names,
        format=spec.format,  # type: ignore[arg-type]
        deals=spec.deals,
        unit=spec.unit,  # type: ignore[arg-type]
        rules=rules,
        seed=random_seed() if spec.seed == "random" else int(spec.seed),
        turn_limit=spec.turn_limit,
        time_limit=spec.time_limit,
    )
