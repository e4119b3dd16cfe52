"""Configs: YAML files mapped one to one onto dataclasses; unknown keys are refused.

Evaluation configs (:class:`LadderFile`) and typed training configs (:func:`load_dataclass_yaml`,
:func:`apply_overrides`, e.g. ``ginenv.experiments.train.ppo.Args``).

This module is also the one place where a config is looked up. The shipped configs (``ladder``,
``ladder_big``, ``ppo``, ``neural``, ``master_ppo``) are package data of ``ginenv.experiments``
(``experiments/configs/*.yaml`` in the repository), read through :mod:`importlib.resources`, so they
work from any folder and from a wheel. Wherever a config is named (``--config``, the loaders below)
it is either a shipped config's NAME or the path of a YAML file: a string that is exactly a shipped
name means the shipped config, anything else is a path. ``ginenv config copy NAME [DEST]`` writes a
shipped config out to edit (:func:`copy_shipped_config`); ``--config DEST`` then runs the edited copy.

Every value is checked for its type here, before any game is played, so that a config error is one
clear line (``UsageError``) naming the setting, what was given and what is allowed.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import yaml
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.harness import (
    DEFAULT_TIME_LIMIT,
    MAX_DEALS,
    EvalConfig,
    check_seed,
    check_specs,
    check_time_limit,
)

from ginenv.engine import DEFAULT_TURN_LIMIT
from ginenv.rules import Rules, RulesError, preset
from ginenv.validation import is_int

T = TypeVar("T")


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


def resolve_rules(spec: object) -> Rules:
    """Rules from a preset name, a mapping of fields, or a Rules instance; else UsageError."""
    if isinstance(spec, Rules):
        return spec
    if not isinstance(spec, (str, dict)):
        raise UsageError(f"rules must be a preset name or a mapping of rule options, got {spec!r}")
    try:
        return preset(spec) if isinstance(spec, str) else Rules.from_dict(spec)
    except (RulesError, TypeError, ValueError) as err:
        raise UsageError(f"rules: {err}") from None


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
    if not is_int(spec.turn_limit) or spec.turn_limit < 1:
        raise bad("turn_limit", f"a positive integer (draws per hand; default {DEFAULT_TURN_LIMIT})")
    if not (spec.seed == "random" or (is_int(spec.seed) and spec.seed >= 0)):  # type: ignore[operator]
        raise bad("seed", "a non-negative integer or 'random'")
    if not isinstance(spec.rules, (str, dict)):
        raise bad("rules", "a preset name or a mapping of rule options")
    check_time_limit(spec.time_limit, f"{path}: time_limit")


# --------------------------------------------------------------------------- shipped configs

#: The package whose ``configs/`` folder holds the shipped configs (``experiments/configs/``).
SHIPPED_PACKAGE = "ginenv.experiments"
SHIPPED_SUFFIX = ".yaml"


def shipped_configs() -> list[str]:
    """The names of the shipped configs, sorted (``ladder``, ``ppo``, ...)."""
    folder = resources.files(SHIPPED_PACKAGE).joinpath("configs")
    return sorted(
        entry.name.removesuffix(SHIPPED_SUFFIX)
        for entry in folder.iterdir()
        if entry.name.endswith(SHIPPED_SUFFIX) and entry.is_file()
    )


def _known_names() -> str:
    return f"shipped configs: {', '.join(shipped_configs())} (ginenv config list)"


def shipped_config_text(name: str) -> str:
    """The YAML text of the shipped config ``name``; an unknown name: UsageError listing the known."""
    if name not in shipped_configs():
        raise UsageError(f"no shipped config named {name!r}; {_known_names()}")
    return resources.files(SHIPPED_PACKAGE).joinpath("configs").joinpath(name + SHIPPED_SUFFIX).read_text()


def is_shipped_config(ref: str | Path) -> bool:
    """Whether ``ref`` names a shipped config (a string that is exactly a shipped name), not a path."""
    return isinstance(ref, str) and ref in shipped_configs()


def config_label(ref: str | Path) -> str:
    """How errors name the config ``ref``: ``ladder (shipped)`` or the path as given."""
    return f"{ref} (shipped)" if is_shipped_config(ref) else str(ref)


def copy_shipped_config(name: str, dest: str | Path | None = None) -> Path:
    """Write the shipped config ``name`` to ``dest`` (default ``./NAME.yaml``; a folder: NAME.yaml in
    it) to edit; returns the path written. An existing file is never overwritten (UsageError)."""
    text = shipped_config_text(name)
    target = Path(name + SHIPPED_SUFFIX) if dest is None else Path(dest)
    if target.is_dir():
        target = target / (name + SHIPPED_SUFFIX)
    if target.exists():
        raise UsageError(f"{target} exists; give another destination (ginenv config copy {name} DEST)")
    try:
        target.write_text(text)
    except OSError as err:
        raise UsageError(f"cannot write {target}: {err.strerror or err}") from None
    return target


def _command_of(name: str) -> str:
    """The command that reads the shipped config ``name``: a ladder file's keys, else training's."""
    data = yaml.safe_load(shipped_config_text(name))
    ladder_keys = {f.name for f in dataclasses.fields(LadderFile)}
    return "ginenv ladder/rate" if isinstance(data, dict) and set(data) <= ladder_keys else "ginenv train"


def config_command(action: str, name: str | None = None, dest: str | Path | None = None) -> str:
    """``ginenv config list | show NAME | copy NAME [DEST]``: the text to print."""
    if action == "list":
        rows = []
        for known in shipped_configs():
            lines = shipped_config_text(known).splitlines()
            about = lines[0].lstrip("# ").strip() if lines and lines[0].startswith("#") else ""
            rows.append(f"{known:<11} {_command_of(known):<19} {about}")
        rows.append(
            "print one: ginenv config show NAME; copy one out to edit: ginenv config copy NAME [DEST], "
            "then --config DEST"
        )
        return "\n".join(rows)
    if name is None:
        raise UsageError(f"ginenv config {action} needs a NAME; {_known_names()}")
    if action == "show":
        return shipped_config_text(name).rstrip("\n")
    if action == "copy":
        target = copy_shipped_config(name, dest)
        return f"wrote {target}: edit it, then {_command_of(name).split('/')[0]} --config {target}"
    raise UsageError(f"ginenv config: unknown action {action!r}; use list, show NAME or copy NAME [DEST]")


def _read_yaml(ref: str | Path) -> Any:
    """The parsed YAML of a shipped config (by name) or a config file (by path); an unknown name,
    an unreadable, binary or malformed file: UsageError."""
    label = config_label(ref)
    try:
        text = shipped_config_text(str(ref)) if is_shipped_config(ref) else Path(ref).read_text()
        return yaml.safe_load(text)
    except FileNotFoundError:
        raise UsageError(
            f"cannot read config {ref}: no such file, nor a shipped config; {_known_names()}"
        ) from None
    except OSError as err:
        raise UsageError(f"cannot read config {ref}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise UsageError(f"config {ref} is not a text file") from None
    except yaml.YAMLError as err:
        raise UsageError(f"config {label} is not valid YAML: {err}") from None


def load_ladder_file(path: str | Path) -> LadderFile:
    """Read a YAML evaluation config: a shipped config's name (``ladder``) or a file's path; an unknown
    name, a missing file, bad YAML, unknown keys or bad values: UsageError."""
    data = _read_yaml(path)
    path = config_label(path)
    if not isinstance(data, dict):
        raise UsageError(f"config {path} must be a mapping of settings")
    known = {f.name for f in dataclasses.fields(LadderFile)}
    odd = [k for k in data if not isinstance(k, str)]
    if odd:
        raise UsageError(
            f"config {path}: setting names must be strings, got {', '.join(repr(k) for k in odd)}; "
            f"known settings: {', '.join(sorted(known))}"
        )
    unknown = sorted(set(data) - known)
    if unknown:
        raise UsageError(
            f"unknown setting(s) in {path}: {', '.join(unknown)}; known settings: {', '.join(sorted(known))}"
        )
    spec = LadderFile(**data)
    _check_fields(spec, path)
    return spec


def check_agent_names(names: tuple[str, ...] | list[str]) -> None:
    """Refuse agent specs that cannot be built (unknown names, missing files or modules, not an
    agent, a constructor that raises, unreadable checkpoints) before any work starts: one line
    naming the spec and the cause (:func:`ginenv.experiments.eval.harness.check_specs`)."""
    check_specs(names)


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
        raise UsageError(f"agents must be 'all' or a list of names, got {spec.agents!r}")
    check_agent_names(names)
    return EvalConfig(
        agents=names,
        format=spec.format,  # type: ignore[arg-type]
        deals=spec.deals,
        unit=spec.unit,  # type: ignore[arg-type]
        rules=resolve_rules(spec.rules),
        seed=check_seed(spec.seed, "seed", random_ok=True),
        turn_limit=spec.turn_limit,
        time_limit=spec.time_limit,
    )


# --------------------------------------------------------------------------- typed configs (train)


def _type_name(tp: Any) -> str:
    """A readable name of a field's type (``int``, ``list[int]``, ``float or None``)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return " or ".join("None" if a is type(None) else _type_name(a) for a in typing.get_args(tp))
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(_type_name(a) for a in typing.get_args(tp))}]"
    return getattr(tp, "__name__", str(tp))


def _coerce(value: Any, tp: Any) -> tuple[bool, Any]:
    """Whether ``value`` fits type ``tp`` (an int is taken for a float), and the value to keep.

    Only the types that config dataclasses use: bool, int, float, str, None, unions, lists, dicts.
    """
    if tp is Any:
        return True, value
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(tp):
            ok, got = _coerce(value, arg)
            if ok:
                return True, got
        return False, None
    if tp is type(None):
        return value is None, None
    if tp is bool:
        return isinstance(value, bool), value
    if tp is int:
        return is_int(value), value
    if tp is float:
        # YAML reads `1e-3` as a string (YAML 1.1 wants a dot): accept what float() parses.
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                return False, None
        ok = (isinstance(value, float) or is_int(value)) and math.isfinite(value)
        return ok, float(value) if ok else None
    if tp is str:
        return isinstance(value, str), value
    if origin is list:
        (item,) = typing.get_args(tp)
        if not isinstance(value, list):
            return False, None
        items = [_coerce(v, item) for v in value]
        return all(ok for ok, _ in items), [v for _, v in items]
    if origin is dict:
        key_tp, value_tp = typing.get_args(tp)
        if not isinstance(value, dict):
            return False, None
        pairs = [(_coerce(k, key_tp), _coerce(v, value_tp)) for k, v in value.items()]
        ok = all(k[0] and v[0] for k, v in pairs)
        return ok, {k[1]: v[1] for k, v in pairs} if ok else None
    return isinstance(value, tp), value


def check_dataclass_types(obj: Any, where: str) -> None:
    """Check (and normalise: ints to floats where a float is due) every field of a config dataclass.

    A wrong type raises UsageError naming the setting, the value given and the type allowed.
    """
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        ok, got = _coerce(value, hints[f.name])
        if not ok:
            raise UsageError(f"{where}: {f.name} must be {_type_name(hints[f.name])}, got {value!r}")
        setattr(obj, f.name, got)


def _unknown(keys: list[str], cls: type, where: str) -> UsageError:
    known = sorted(f.name for f in dataclasses.fields(cls))
    return UsageError(f"unknown setting(s) in {where}: {', '.join(keys)}; known settings: {', '.join(known)}")


def load_dataclass_yaml(path: str | Path, cls: type[T]) -> T:
    """A config dataclass from a YAML mapping, a shipped config's name (``ppo``) or a file's path
    (missing keys keep their defaults); unknown keys, non-string keys and values of the wrong type
    are refused with UsageError."""
    data = _read_yaml(path)
    path = config_label(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UsageError(f"config {path} must be a mapping of settings")
    odd = [k for k in data if not isinstance(k, str)]
    if odd:
        raise UsageError(f"config {path}: setting names must be strings, got {', '.join(map(repr, odd))}")
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - known)
    if unknown:
        raise _unknown(unknown, cls, str(path))
    obj = cls(**data)
    check_dataclass_types(obj, str(path))
    return obj


def apply_overrides(obj: T, overrides: list[str]) -> T:
    """``key=value`` overrides (the value read as YAML: ``hidden=[64,64]``, ``anneal_lr=false``),
    each checked like a config file's setting; returns a new object."""
    changes: dict[str, Any] = {}
    known = {f.name for f in dataclasses.fields(obj)}  # type: ignore[arg-type]
    for item in overrides:
        key, sep, text = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise UsageError(f"--set {item!r}: write key=value, e.g. --set learning_rate=1e-4")
        if key not in known:
            raise _unknown([key], type(obj), f"--set {item!r}")
        try:
            changes[key] = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError as err:
            raise UsageError(f"--set {item!r}: the value is not valid YAML: {err}") from None
    new = dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    check_dataclass_types(new, "--set")
    return new
