"""Policy checkpoints: the file format, written and read without pickle, and checked before use.

A checkpoint is a ``torch.save`` zip file of plain data only: ``{"format": "ginenv-policy",
"version": 3, "obs_size", "num_actions", "hidden", "state_dict", "obs_format", "code_version",
"config", "training", "inputs", "activation"}``:

- ``obs_format``: the version of the observation encoding (:data:`OBS_FORMAT`) the network was
  trained on; a network reading another layout would play nonsense on every input, so any other
  value is refused;
- ``code_version``: the ginenv version that wrote the file (recorded, not enforced);
- ``config``: the training configuration (a mapping of plain values, or None);
- ``inputs``: how the network's input is built from an observation, one of
  :data:`ginenv.features.INPUT_KINDS` (``"observation"``: the vector as it is; ``"features"``: plus
  per-card deadwood features of the own hand); ``obs_size`` must be that input's size;
- ``activation``: the nonlinearity between the hidden layers, one of :data:`ACTIVATIONS`
  (``"relu"``, what ginenv's trainer uses; ``"tanh"``, Stable-Baselines3's MlpPolicy default, for
  networks exported by :func:`ginenv.experiments.train.sb3.export_maskable_ppo`); optional, absent means
  ``"relu"``;
- ``training``: what resuming needs besides the policy (the value and auxiliary heads, the
  optimizer, progress counters), or None for a policy-only file; validated by the trainer, which
  knows its own modules (:mod:`ginenv.experiments.train.ppo`).

Version-1 files (the first four keys and the weights) still load; they were written for
observation format 1. Version-1 and version-2 files read the plain observation (``inputs`` absent)
and are ReLU networks (an ``activation`` other than ``"relu"`` in them is refused).
Loading is defensive, because a checkpoint may come from anyone:

- the file must be a torch zip archive with uncompressed entries, at most
  :data:`MAX_CHECKPOINT_BYTES`; torch's legacy (pre-zip) format is refused because its loader
  allocates every storage at the size the file *declares*, before reading it;
- it is read with ``torch.load(..., weights_only=True)``, which refuses arbitrary pickled objects, so
  a checkpoint from elsewhere cannot run code;
- every declared size is checked against sane bounds (:data:`MAX_HIDDEN_LAYERS`,
  :data:`MAX_LAYER_WIDTH`, :data:`MAX_PARAMETERS`) and against the tensors actually in the file
  (keys, dtypes, shapes) *before* the network is built, so a tiny file declaring huge layers is
  refused at once instead of allocating them;
- weights that are NaN or infinite are refused: such a network gives NaN logits on every input, so
  the agent would play at random while its results were reported as the network's.

Anything else is refused with :class:`CheckpointError`, saying what was wrong and what is allowed.

:func:`checkpoint_digest` gives the sha256 of a file's content, for keying run folders and the
shared networks (:mod:`ginenv.agents.neural.shared`). Training scripts write checkpoints with
:func:`save_checkpoint`; :func:`export_policy` keeps what a run ships; :func:`check_state` checks
the modules a trainer saved in ``training`` against its own.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import math
import os
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from ginenv.agents.neural.network import ACTIVATIONS, MaskedPolicy, card_channels
from torch import nn

import ginenv
from ginenv.actions import NUM_ACTIONS
from ginenv.features import INPUT_KINDS, input_size
from ginenv.observation import OBS_FORMAT, OBS_SIZE
from ginenv.validation import is_int

__all__ = [
    "CODE_VERSION",
    "FORMAT",
    "MAX_CHECKPOINT_BYTES",
    "MAX_HIDDEN_LAYERS",
    "MAX_LAYER_WIDTH",
    "MAX_PARAMETERS",
    "SUPPORTED_VERSIONS",
    "VERSION",
    "WEIGHT_DTYPES",
    "Checkpoint",
    "CheckpointError",
    "PathLike",
    "check_state",
    "checkpoint_bytes",
    "checkpoint_digest",
    "export_policy",
    "load_checkpoint",
    "policy_from_bytes",
    "read_bounded",
    "read_checkpoint",
    "save_checkpoint",
]

FORMAT = "ginenv-policy"
#: The version :func:`save_checkpoint` writes; :data:`SUPPORTED_VERSIONS` are read.
VERSION = 3
SUPPORTED_VERSIONS = (1, 2, 3)

#: The ginenv version recorded in the checkpoints this code writes.
CODE_VERSION: str = ginenv.__version__

#: Bounds on what a checkpoint may declare; far above any network this game needs.
MAX_HIDDEN_LAYERS = 16
MAX_LAYER_WIDTH = 16384
MAX_PARAMETERS = 64_000_000
MAX_CHECKPOINT_BYTES = 1 << 30

#: Weight dtypes accepted (converted to float32 on load, so half-precision training output loads).
WEIGHT_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)

PathLike = str | os.PathLike[str]


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used, with what was expected."""


def save_checkpoint(
    policy: MaskedPolicy,
    path: PathLike,
    config: Mapping[str, Any] | None = None,
    training: Mapping[str, Any] | None = None,
) -> None:
    """Write a policy as a pickle-free checkpoint (see the module docstring).

    ``config``: the training configuration (plain values); ``training``: what resuming needs (plain
    values and tensors). The file is written beside ``path`` and renamed over it, so a reader (an
    evaluation running while training goes on) never sees half a file.
    """
    data = {
        "format": FORMAT,
        "version": VERSION,
        "obs_size": policy.obs_size,
        "num_actions": policy.num_actions,
        "hidden": list(policy.hidden),
        "state_dict": policy.state_dict(),
        "obs_format": OBS_FORMAT,
        "code_version": CODE_VERSION,
        "config": None if config is None else dict(config),
        "training": None if training is None else dict(training),
        "inputs": policy.inputs,
        "activation": policy.activation,
        "card_hidden": policy.card_hidden,
    }
    target = Path(path)
    partial = target.with_name(f".{target.name}.partial")
    torch.save(data, partial)
    os.replace(partial, target)


def checkpoint_bytes(path: PathLike) -> bytes:
    """The whole file at ``path``, refused (:class:`CheckpointError`) with a clear message when the
    path is empty or not a path, or the file is missing, unreadable or too large."""
    if isinstance(path, str) and not path:
        raise CheckpointError("no checkpoint path given (write checkpoint:PATH)")
    if not isinstance(path, (str, os.PathLike)):
        raise CheckpointError(f"a checkpoint path must be a string or path, got {type(path).__name__}")
    return read_bounded(path, CheckpointError, "checkpoint", "checkpoint file")


def read_bounded(path: PathLike, error: type[Exception], what: str, kind: str) -> bytes:
    """The whole of a file that may come from anyone, read at most :data:`MAX_CHECKPOINT_BYTES`.

    A missing, unreadable, folder or too large ``path`` raises ``error`` with one line naming
    ``what`` it should be ("no checkpoint at PATH") and its ``kind`` of file ("PATH is a folder,
    not a checkpoint file"); the size is checked before anything is read.
    """
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_CHECKPOINT_BYTES:
                raise error(f"{path} is {size} bytes; a {what} may be at most {MAX_CHECKPOINT_BYTES} bytes")
            return f.read(MAX_CHECKPOINT_BYTES + 1)
    except FileNotFoundError:
        raise error(f"no {what} at {path}") from None
    except IsADirectoryError:
        raise error(f"{path} is a folder, not a {kind}") from None
    except OSError as err:
        raise error(f"cannot read {what} {path}: {err.strerror or err}") from None


def checkpoint_digest(path: PathLike) -> str:
    """The sha256 (hex) of a checkpoint file's content: a key that changes whenever the file does."""
    return hashlib.sha256(checkpoint_bytes(path)).hexdigest()


def _load_plain_data(raw: bytes, path: PathLike) -> Any:
    """``torch.load`` of the file's bytes, only for an uncompressed torch zip archive."""
    not_ours = (
        f"{path} is not a ginenv policy checkpoint: expected a zip archive written by torch.save, "
        "read with weights_only=True (pickles and torch's legacy format are refused)"
    )
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, ValueError, EOFError):
        raise CheckpointError(not_ours) from None
    # torch.save stores entries uncompressed; a compressed entry could inflate far beyond the file.
    packed = [i.filename for i in infos if i.compress_type != zipfile.ZIP_STORED]
    if packed:
        raise CheckpointError(f"{not_ours}; compressed entries are refused: {', '.join(packed[:3])}")
    try:
        return torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for non-checkpoints and unsafe pickles
        raise CheckpointError(f"{not_ours}: {err}") from None


def _layer_shapes(
    hidden: Sequence[int], size: int = OBS_SIZE, card_hidden: int = 0, inputs: str = "observation"
) -> dict[str, tuple[int, ...]]:
    """The state-dict key and tensor shape of every parameter of a MaskedPolicy with ``hidden``
    layers reading ``size`` inputs, and a card head of ``card_hidden`` units (0: none)."""
    widths = [size, *hidden, NUM_ACTIONS]
    shapes: dict[str, tuple[int, ...]] = {}
    for i, (fan_in, fan_out) in enumerate(itertools.pairwise(widths)):
        # Linear layers sit at even indices of the Sequential, activations between them.
        shapes[f"net.{2 * i}.weight"] = (fan_out, fan_in)
        shapes[f"net.{2 * i}.bias"] = (fan_out,)
    if card_hidden:
        shapes["card.0.weight"] = (card_hidden, card_channels(inputs))
        shapes["card.0.bias"] = (card_hidden,)
        shapes["card.2.weight"] = (3, card_hidden)
        shapes["card.2.bias"] = (3,)
    return shapes


def _check_metadata(data: dict[str, Any], version: int, path: PathLike) -> None:
    """Refuse a version-2 or -3 file whose observation format, code version, config or training is wrong."""
    if version == 1:
        return  # written before these keys existed, for observation format 1
    obs_format = data.get("obs_format")
    if not is_int(obs_format):
        raise CheckpointError(
            f"{path}: 'obs_format' must be an integer (the observation encoding version), got {obs_format!r}"
        )
    if obs_format != OBS_FORMAT:
        raise CheckpointError(
            f"{path}: the network was trained on observation format {obs_format}, but this ginenv "
            f"encodes observations in format {OBS_FORMAT}; it would misread every input. Retrain it, "
            f"or play it with the ginenv version that wrote it ({data.get('code_version')!r})"
        )
    if not isinstance(data.get("code_version"), str):
        raise CheckpointError(f"{path}: 'code_version' must be a string, got {data.get('code_version')!r}")
    for key in ("config", "training"):
        value = data.get(key)
        if value is not None and not (isinstance(value, dict) and all(isinstance(k, str) for k in value)):
            raise CheckpointError(
                f"{path}: {key!r} must be None or a mapping with string keys, got {type(value).__name__}"
            )


def _inputs_of(data: dict[str, Any], version: int, path: PathLike) -> str:
    """The input kind a checkpoint declares (``"observation"`` before version 3)."""
    if version < 3:
        return "observation"
    kind = data.get("inputs")
    if kind not in INPUT_KINDS:
        raise CheckpointError(
            f"{path}: 'inputs' must be one of {', '.join(map(repr, INPUT_KINDS))}, got {kind!r}"[:400]
        )
    return str(kind)


def _activation_of(data: dict[str, Any], version: int, path: PathLike) -> str:
    """The activation a checkpoint declares: ``"relu"`` when absent, and always before version 3."""
    if "activation" not in data:
        return "relu"
    value = data["activation"]
    if version < 3 and value != "relu":
        raise CheckpointError(
            f"{path}: version-{version} checkpoints are ReLU networks, but 'activation' is {value!r}; "
            "another activation needs a version-3 file"[:400]
        )
    if not isinstance(value, str) or value not in ACTIVATIONS:
        raise CheckpointError(
            f"{path}: 'activation' must be one of {', '.join(map(repr, ACTIVATIONS))} "
            f"(or absent, meaning 'relu'), got {value!r}"[:400]
        )
    return value


def _card_hidden_of(data: dict[str, Any], version: int, path: PathLike) -> int:
    """The width of the card head a checkpoint declares (0, no head, when absent or before version 3)."""
    value = data.get("card_hidden", 0) if version >= 3 else 0
    if not is_int(value) or not 0 <= value <= MAX_LAYER_WIDTH:
        raise CheckpointError(
            f"{path}: 'card_hidden' must be an integer from 0 (no card head) to {MAX_LAYER_WIDTH}, "
            f"got {value!r}"[:400]
        )
    return int(value)


def _validated(data: Any, path: PathLike) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """The MaskedPolicy arguments (hidden, inputs, activation, card_hidden) and float32 weights of a
    loaded checkpoint, every declared size checked.

    Nothing of the declared size is allocated here: the sizes are compared with bounds and with the
    tensors already read from the file.
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a ginenv policy checkpoint ('format' must be {FORMAT!r})")
    version = data.get("version")
    if not is_int(version) or version not in SUPPORTED_VERSIONS:
        supported = " or ".join(str(v) for v in SUPPORTED_VERSIONS)
        raise CheckpointError(f"{path}: unsupported checkpoint version {version!r}, expected {supported}")
    _check_metadata(data, version, path)
    inputs = _inputs_of(data, version, path)
    activation = _activation_of(data, version, path)
    card_hidden = _card_hidden_of(data, version, path)
    size = input_size(inputs)
    obs_size, num_actions = data.get("obs_size"), data.get("num_actions")
    if not (is_int(obs_size) and is_int(num_actions)) or (obs_size, num_actions) != (size, NUM_ACTIONS):
        raise CheckpointError(
            f"{path}: the network expects {obs_size!r} inputs and {num_actions!r} actions; "
            f"with inputs {inputs!r} this env gives {size} and {NUM_ACTIONS} (integers)"
        )
    hidden = data.get("hidden")
    allowed = (
        f"'hidden' must be a list of at most {MAX_HIDDEN_LAYERS} layer widths, "
        f"each an integer from 1 to {MAX_LAYER_WIDTH}"
    )
    if not isinstance(hidden, (list, tuple)) or len(hidden) > MAX_HIDDEN_LAYERS:
        raise CheckpointError(f"{path}: {allowed}; got {hidden!r}"[:400])
    bad = [h for h in hidden if not is_int(h) or not 1 <= h <= MAX_LAYER_WIDTH]
    if bad:
        raise CheckpointError(f"{path}: {allowed}; got {list(hidden)!r} ({bad[0]!r} is not allowed)")
    shapes = _layer_shapes(hidden, size, card_hidden, inputs)
    parameters = sum(math.prod(s) for s in shapes.values())
    if parameters > MAX_PARAMETERS:
        raise CheckpointError(
            f"{path}: hidden layers {list(hidden)} make {parameters} parameters; "
            f"at most {MAX_PARAMETERS} are allowed"
        )
    state = data.get("state_dict")
    if not isinstance(state, Mapping):
        raise CheckpointError(
            f"{path}: 'state_dict' must be a mapping of parameter names to tensors, "
            f"got {type(state).__name__}"
        )
    odd_keys = [k for k in state if not isinstance(k, str)]
    if odd_keys:
        raise CheckpointError(f"{path}: 'state_dict' keys must be strings, got {odd_keys[0]!r}")
    missing = [k for k in shapes if k not in state]
    unexpected = [k for k in state if k not in shapes]
    if missing or unexpected:
        parts = [f"missing {', '.join(missing)}"] * bool(missing)
        parts += [f"unexpected {', '.join(unexpected[:5])}"] * bool(unexpected)
        raise CheckpointError(
            f"{path}: 'state_dict' does not fit hidden layers {list(hidden)} "
            f"({'; '.join(parts)}); expected exactly {', '.join(shapes)}"
        )
    weights: dict[str, torch.Tensor] = {}
    for key, shape in shapes.items():
        tensor = state[key]
        if not isinstance(tensor, torch.Tensor) or tensor.layout != torch.strided:
            raise CheckpointError(
                f"{path}: state_dict[{key!r}] must be a dense tensor, got {type(tensor).__name__}"
            )
        if tensor.dtype not in WEIGHT_DTYPES:
            names = ", ".join(str(d).removeprefix("torch.") for d in WEIGHT_DTYPES)
            dtype = str(tensor.dtype).removeprefix("torch.")
            raise CheckpointError(f"{path}: state_dict[{key!r}] has dtype {dtype}; allowed: {names}")
        if tuple(tensor.shape) != shape:
            raise CheckpointError(
                f"{path}: state_dict[{key!r}] has shape {list(tensor.shape)}, but hidden layers "
                f"{list(hidden)} need {list(shape)}"
            )
        # A private compact float32 copy: no view into a larger storage of the file survives.
        weight = tensor.detach().to(torch.float32).clone(memory_format=torch.contiguous_format)
        # Checked after the cast, so a float64 weight beyond float32's range is caught too.
        if not bool(torch.isfinite(weight).all()):
            raise CheckpointError(
                f"{path}: state_dict[{key!r}] holds NaN or infinite weights (as float32); "
                "every weight must be finite"
            )
        weights[key] = weight
    spec = {"hidden": list(hidden), "inputs": inputs, "activation": activation, "card_hidden": card_hidden}
    return spec, weights


def policy_from_bytes(raw: bytes, path: PathLike, trainable: bool) -> MaskedPolicy:
    """The network in ``raw``, the bytes of the checkpoint file ``path`` (named in the messages),
    validated like :func:`load_checkpoint`; ``trainable``: whether its parameters require grad."""
    return _policy_from_data(_load_plain_data(raw, path), path, trainable)


def _policy_from_data(data: Any, path: PathLike, trainable: bool) -> MaskedPolicy:
    spec, weights = _validated(data, path)
    # Built on the meta device and then handed the checked weights: no second copy, no random init.
    with torch.device("meta"):
        policy = MaskedPolicy(None, num_actions=NUM_ACTIONS, **spec)
    policy.load_state_dict(weights, assign=True)
    policy.requires_grad_(trainable)
    return policy.eval()


@dataclass(frozen=True)
class Checkpoint:
    """Everything in a checkpoint file: the policy (trainable copy) and what was saved with it."""

    policy: MaskedPolicy
    #: The file's format version (1, 2 or 3).
    version: int
    #: The observation encoding version the network reads (1 for version-1 files).
    obs_format: int
    #: The ginenv version that wrote the file (None for version-1 files).
    code_version: str | None
    #: The training configuration (None when not recorded).
    config: dict[str, Any] | None
    #: What resuming needs besides the policy (None for a policy-only file); the trainer checks it.
    training: dict[str, Any] | None


def read_checkpoint(path: PathLike) -> Checkpoint:
    """The whole content of a checkpoint, validated like :func:`load_checkpoint` (CheckpointError)."""
    data = _load_plain_data(checkpoint_bytes(path), path)
    policy = _policy_from_data(data, path, trainable=True)
    version = data["version"]
    return Checkpoint(
        policy=policy,
        version=version,
        obs_format=data["obs_format"] if version >= 2 else 1,
        code_version=data.get("code_version") if version >= 2 else None,
        config=data.get("config") if version >= 2 else None,
        training=data.get("training") if version >= 2 else None,
    )


def load_checkpoint(path: PathLike) -> MaskedPolicy:
    """A private, trainable copy of the network in a checkpoint (see the module docstring).

    Anything that is not a valid checkpoint raises :class:`CheckpointError`. To play, prefer
    :func:`~ginenv.agents.neural.shared.shared_policy`, which loads each file content once.
    """
    return policy_from_bytes(checkpoint_bytes(path), path, trainable=True)


def export_policy(source: PathLike, target: PathLike, keep: Sequence[str] = ("aux",)) -> Checkpoint:
    """Write the policy of a training checkpoint without what only resuming needs (the value head,
    the optimizer, progress): what a run ships.

    The file keeps the training ``config``, the observation format, the input encoding and the
    entries of ``training`` named in ``keep`` that the source has (by default the auxiliary
    opponent-hand head, small, which
    :func:`~ginenv.agents.neural.opponent_hand.opponent_hand_predictor` reads). ``source`` is validated
    like any checkpoint.
    """
    ckpt = read_checkpoint(source)
    kept = {k: v for k, v in (ckpt.training or {}).items() if k in keep}
    save_checkpoint(ckpt.policy, target, config=ckpt.config, training=kept or None)
    return read_checkpoint(target)


def check_state(module: nn.Module, state: Any, what: str, path: str) -> dict[str, torch.Tensor]:
    """``state`` checked against ``module``'s own parameters (names, shapes, finite floats)."""
    own = module.state_dict()
    if not isinstance(state, dict) or set(state) != set(own):
        keys = sorted(state) if isinstance(state, dict) else type(state).__name__
        raise CheckpointError(f"{path}: training[{what!r}] must hold exactly {sorted(own)}, got {keys}")
    for key, ref in own.items():
        t = state[key]
        if not isinstance(t, torch.Tensor) or not t.is_floating_point() or t.shape != ref.shape:
            raise CheckpointError(
                f"{path}: training[{what!r}][{key!r}] must be a float tensor of shape {list(ref.shape)}"
            )
        if not bool(torch.isfinite(t).all()):
            raise CheckpointError(f"{path}: training[{what!r}][{key!r}] holds NaN or infinite values")
    return {k: v.to(torch.float32) for k, v in state.items()}
