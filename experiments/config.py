"""Evaluation configs: YAML files mapped one to one onto a dataclass; unknown keys are refused."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from ginenv.experiments.harness import EvalConfig, HarnessError

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
    #: Master seed.
    seed: int = 0
    #: Extra notes kept with the results (free text).
    notes: str = field(default="")


def resolve_rules(spec: str | dict[str, Any] | Rules) -> Rules:
    """Rules from a preset name, a mapping of fields, or a Rules instance."""
    if isinstance(spec, Rules):
        return spec
    try:
        return preset(spec) if isinstance(spec, str) else Rules.from_dict(spec)
    except RulesError as err:
        raise HarnessError(str(err)) from None


def load_ladder_file(path: str | Path) -> LadderFile:
    """Read a YAML evaluation config; a missing file, bad YAML or unknown keys raise HarnessError."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as err:
        raise HarnessError(f"cannot read config {path}: {err.strerror or err}") from None
    except yaml.YAMLError as err:
        raise HarnessError(f"config {path} is not valid YAML: {err}") from None
    if not isinstance(data, dict):
        raise HarnessError(f"config {path} must be a mapping of settings")
    known = {f.name for f in dataclasses.fields(LadderFile)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise HarnessError(
            f"unknown setting(s) in {path}: {', '.join(unknown)}; known settings: {', '.join(sorted(known))}"
        )
    return LadderFile(**data)


def check_agent_names(names: tuple[str, ...] | list[str], registered: list[str]) -> None:
    """Refuse unknown agent names and unreadable checkpoints before any work starts."""
    from ginenv.agents.registry import CHECKPOINT_PREFIX

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
    """The harness config of a ladder file (``all`` expands to every registered agent)."""
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
        seed=spec.seed,
    )
