"""Evaluation configs: YAML files mapped one to one onto a dataclass; unknown keys are refused.

Every value is checked for its type here, before any game is played, so that a config error is one
clear line (``HarnessError``) naming the setting, what was given and what is allowed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from ginenv.experiments.harness import CHECKPOINT_PREFIX, MAX_DEALS, EvalConfig, HarnessError, check_seed

from ginenv.engine import DEFAULT_TURN_LIMIT
from ginenv.rules import Rules, RulesError, preset


@dataclass
class LadderFile:
    """The fields of a ladder/evaluation YAML file (see ``configs/ladder.yaml``)."""

    #: ``all`` (every registered agent) or a list of agent names.
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
    #: Extra notes kept with the results (free text).
    notes: str = field(default="")


def resolve_rules(spec: object) -> Rules:
    """Rules from a preset name, a mapping of fields, or a Rules instance; else HarnessError."""
    if isinstance(spec, Rules):
        return spec
    if not isinstance(spec, (str, dict)):
        raise HarnessError(f"rules must be a preset name or a mapping of rule options, got {spec!r}")
    try:
        return preset(spec) if isinstance(spec, str) else Rules.from_dict(spec)
    except (RulesError, TypeError, ValueError) as err:
        raise HarnessError(f"rules: {err}") from None


def _is_int(value: object) -> bool:
    # YAML's true/false are bools, and bool is an int in Python: `deals: true` is not 1.
    return isinstance(value, int) and not isinstance(value, bool)


def _check_fields(spec: LadderFile, path: str | Path) -> None:
    """Refuse values of the wrong type with the setting's name and what it allows."""

    def bad(name: str, allowed: str) -> HarnessError:
        return HarnessError(f"{path}: {name} must be {allowed}, got {getattr(spec, name)!r}")

    if not (spec.agents == "all" or isinstance(spec.agents, list)):
        raise bad("agents", "'all' or a list of agent names")
    if isinstance(spec.agents, list) and not all(isinstance(a, str) for a in spec.agents):
        raise bad("agents", "'all' or a list of agent names")
    for name in ("format", "unit", "notes"):
        if not isinstance(getattr(spec, name), str):
            raise bad(name, "a string")
    if not _is_int(spec.deals) or not 1 <= spec.deals <= MAX_DEALS:
        raise bad("deals", f"a positive integer (at most {MAX_DEALS:,})")
    if not _is_int(spec.turn_limit) or spec.turn_limit < 1:
        raise bad("turn_limit", f"a positive integer (draws per hand; default {DEFAULT_TURN_LIMIT})")
    if not (spec.seed == "random" or (_is_int(spec.seed) and spec.seed >= 0)):  # type: ignore[operator]
        raise bad("seed", "a non-negative integer or 'random'")
    if not isinstance(spec.rules, (str, dict)):
        raise bad("rules", "a preset name or a mapping of rule options")


def load_ladder_file(path: str | Path) -> LadderFile:
    """Read a YAML evaluation config; a missing file, bad YAML, unknown keys or bad values: HarnessError."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as err:
        raise HarnessError(f"cannot read config {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise HarnessError(f"config {path} is not a text file") from None
    except yaml.YAMLError as err:
        raise HarnessError(f"config {path} is not valid YAML: {err}") from None
    if not isinstance(data, dict):
        raise HarnessError(f"config {path} must be a mapping of settings")
    known = {f.name for f in dataclasses.fields(LadderFile)}
    odd = [k for k in data if not isinstance(k, str)]
    if odd:
        raise HarnessError(
            f"config {path}: setting names must be strings, got {', '.join(repr(k) for k in odd)}; "
            f"known settings: {', '.join(sorted(known))}"
        )
    unknown = sorted(set(data) - known)
    if unknown:
        raise HarnessError(
            f"unknown setting(s) in {path}: {', '.join(unknown)}; known settings: {', '.join(sorted(known))}"
        )
    spec = LadderFile(**data)
    _check_fields(spec, path)
    return spec


def check_agent_names(names: tuple[str, ...] | list[str], registered: list[str]) -> None:
    """Refuse unknown agent names and unreadable checkpoints before any work starts."""
    unknown = [a for a in names if a not in registered and not a.startswith(CHECKPOINT_PREFIX)]
    if unknown:
        raise HarnessError(
            f"unknown agent(s) {', '.join(unknown)}; known agents: {', '.join(registered)}, "
            f"or {CHECKPOINT_PREFIX}PATH"
        )
    for name in names:
        if name.startswith(CHECKPOINT_PREFIX):
            from ginenv.agents.neural import CheckpointError, load_checkpoint

            try:
                load_checkpoint(name[len(CHECKPOINT_PREFIX) :])
            except CheckpointError as err:
                raise HarnessError(str(err)) from None


def to_eval_config(spec: LadderFile, registered: list[str]) -> EvalConfig:
    """The harness config of a ladder file (``all`` expands to every registered agent).

    ``seed: random`` is drawn here, once: the config (and so the run folder and its results) holds
    the drawn number, which reproduces or resumes the run when given back as the seed.
    """
    if spec.agents == "all":
        names = tuple(registered)
    elif isinstance(spec.agents, list) and all(isinstance(a, str) for a in spec.agents):
        names = tuple(spec.agents)
    else:
        raise HarnessError(f"agents must be 'all' or a list of names, got {spec.agents!r}")
    check_agent_names(names, registered)
    return EvalConfig(
        agents=names,
        format=spec.format,  # type: ignore[arg-type]
        deals=spec.deals,
        unit=spec.unit,  # type: ignore[arg-type]
        rules=resolve_rules(spec.rules),
        seed=check_seed(spec.seed, "seed", random_ok=True),
        turn_limit=spec.turn_limit,
    )
