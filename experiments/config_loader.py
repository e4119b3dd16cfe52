"""Config loading, the one home shared by evaluation and training: YAML onto dataclasses.

A config is named either by a shipped config's NAME or by the path of a YAML file: a string that is
exactly a shipped name means the shipped config, anything else is a path. The shipped configs
(``ladder``, ``ladder_big``, ``ppo``, ``neural``, ``master_ppo``) are package data of
``ginenv.configs`` (``configs/*.yaml`` at the repository's top), read through
:mod:`importlib.resources`, so they work from any folder and from a wheel; ``ginenv config copy NAME
[DEST]`` writes one out to edit (:func:`copy_shipped_config`) and ``--config DEST`` runs the copy.

This module reads a config (:func:`read_config`), maps its settings one to one onto a dataclass's
fields with unknown and non-string keys refused (:func:`settings_of`), checks each value against the
field's type (:func:`load_dataclass_yaml`, :func:`check_dataclass_types`) and applies ``--set
key=value`` overrides (:func:`apply_overrides`). Evaluation's ladder files
(:mod:`ginenv.experiments.eval.ladder_config`) and training's settings
(``ginenv.experiments.train.args.Args``) both load through it. Every refusal is one
:class:`~ginenv.experiments.errors.UsageError` line naming the config, the setting, what was given
and what is allowed.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import yaml
from ginenv.experiments.errors import UsageError

from ginenv.validation import is_int

T = TypeVar("T")

#: The package that holds the shipped configs (``configs/`` at the repository's top).
SHIPPED_PACKAGE = "ginenv.configs"
SHIPPED_SUFFIX = ".yaml"


# --------------------------------------------------------------------------- shipped configs


def shipped_configs() -> list[str]:
    """The names of the shipped configs, sorted (``ladder``, ``ppo``, ...)."""
    folder = resources.files(SHIPPED_PACKAGE)
    return sorted(
        entry.name.removesuffix(SHIPPED_SUFFIX)
        for entry in folder.iterdir()
        if entry.name.endswith(SHIPPED_SUFFIX) and entry.is_file()
    )


def known_configs() -> str:
    """The clause that lists the shipped configs in a refusal (``shipped configs: ladder, ...``)."""
    return f"shipped configs: {', '.join(shipped_configs())} (ginenv config list)"


def shipped_config_text(name: str) -> str:
    """The YAML text of the shipped config ``name``; an unknown name: UsageError listing the known."""
    if name not in shipped_configs():
        raise UsageError(f"no shipped config named {name!r}; {known_configs()}")
    return resources.files(SHIPPED_PACKAGE).joinpath(name + SHIPPED_SUFFIX).read_text()


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


# --------------------------------------------------------------------------- reading


def read_config(ref: str | Path) -> Any:
    """The parsed YAML of a shipped config (by name) or a config file (by path); an unknown name,
    an unreadable, binary or malformed file: UsageError."""
    label = config_label(ref)
    try:
        text = shipped_config_text(str(ref)) if is_shipped_config(ref) else Path(ref).read_text()
        return yaml.safe_load(text)
    except FileNotFoundError:
        raise UsageError(
            f"cannot read config {ref}: no such file, nor a shipped config; {known_configs()}"
        ) from None
    except OSError as err:
        raise UsageError(f"cannot read config {ref}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise UsageError(f"config {ref} is not a text file") from None
    except yaml.YAMLError as err:
        raise UsageError(f"config {label} is not valid YAML: {err}") from None


def unknown_settings(keys: list[str], cls: type, where: str) -> UsageError:
    """The refusal of settings that are not fields of ``cls``, listing the fields."""
    known = sorted(f.name for f in dataclasses.fields(cls))
    return UsageError(f"unknown setting(s) in {where}: {', '.join(keys)}; known settings: {', '.join(known)}")


def settings_of(data: Any, cls: type, label: str) -> dict[str, Any]:
    """``data`` (a config's parsed YAML) as keyword arguments of the dataclass ``cls``: a mapping
    whose keys are strings naming fields of ``cls``; anything else: UsageError naming ``label``."""
    if not isinstance(data, dict):
        raise UsageError(f"config {label} must be a mapping of settings")
    known = sorted(f.name for f in dataclasses.fields(cls))
    odd = [k for k in data if not isinstance(k, str)]
    if odd:
        raise UsageError(
            f"config {label}: setting names must be strings, got {', '.join(repr(k) for k in odd)}; "
            f"known settings: {', '.join(known)}"
        )
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise unknown_settings(unknown, cls, label)
    return data


# --------------------------------------------------------------------------- typed dataclasses


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


def load_dataclass_yaml(path: str | Path, cls: type[T]) -> T:
    """A config dataclass from a YAML mapping, a shipped config's name (``ppo``) or a file's path
    (missing keys keep their defaults; an empty file is all defaults); unknown keys, non-string keys
    and values of the wrong type are refused with UsageError."""
    data = read_config(path)
    label = config_label(path)
    obj = cls(**settings_of({} if data is None else data, cls, label))
    check_dataclass_types(obj, label)
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
            raise unknown_settings([key], type(obj), f"--set {item!r}")
        try:
            changes[key] = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError as err:
            raise UsageError(f"--set {item!r}: the value is not valid YAML: {err}") from None
    return replace_checked(obj, changes, "--set")


def replace_checked(obj: T, changes: dict[str, Any], where: str) -> T:
    """A copy of the config dataclass ``obj`` with ``changes`` (field names to values), each value
    checked like a config file's setting (UsageError naming ``where``)."""
    new = dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    check_dataclass_types(new, where)
    return new
