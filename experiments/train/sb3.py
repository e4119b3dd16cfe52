"""Stable-Baselines3 on the batched engine: a ``VecEnv`` over :class:`ginenv.vector_env.GinRummyVectorEnv`.

Stable-Baselines3 trains on its own ``VecEnv`` interface, not on ``gymnasium.vector``; this module
owns the adapter, so that SB3 and sb3-contrib code (``MaskablePPO`` with its action masks) train on
thousands of hands stepped in compiled code instead of one Python env per hand::

    from sb3_contrib import MaskablePPO
    from ginenv.experiments.train.sb3 import GinRummyVecEnv

    model = MaskablePPO("MlpPolicy", GinRummyVecEnv(num_envs=256, opponent="greedy"), n_steps=64)
    model.learn(100_000)

Semantics are SB3's: ``step`` returns ``(obs, rewards, dones, infos)``; a slot whose hand ended is
dealt a new hand at once, the returned observation is the new hand's, and
``infos[i]["terminal_observation"]`` holds the ended hand's final view with
``infos[i]["TimeLimit.truncated"]`` set when the turn limit ended it (SB3 then bootstraps).
``env_method("action_masks")`` answers sb3-contrib's mask query. Stable-Baselines3 is imported only
here (the ``dev`` extra installs it).

The way back: :func:`export_maskable_ppo` writes a trained model as a ginenv checkpoint
(:mod:`ginenv.agents.neural`), so it plays in the harness as ``checkpoint:PATH`` with exactly the
SB3 policy's action logits (``ginenv export-sb3 MODEL.zip OUT.pt`` on the command line)::

    from ginenv.experiments.train.sb3 import export_maskable_ppo

    export_maskable_ppo(model, "policy.pt")          # a model in memory: everything is checked
    export_maskable_ppo("model.zip", "policy.pt")    # a save file: read without unpickling

Only what a :class:`~ginenv.agents.neural.MaskedPolicy` represents exactly is exported: an
``MlpPolicy`` (``net_arch`` layers with ReLU or Tanh, the default ``FlattenExtractor``) on the flat
observation vector of ``OBS_SIZE`` entries with ``Discrete(NUM_ACTIONS)`` actions; anything else
raises :class:`SB3ExportError` saying what is wrong. The value side is dropped (a policy-only
checkpoint); the checkpoint's ``config`` records where the network came from.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ginenv.agents.neural import (
    ACTIVATIONS,
    MAX_CHECKPOINT_BYTES,
    MAX_HIDDEN_LAYERS,
    MAX_LAYER_WIDTH,
    WEIGHT_DTYPES,
    CheckpointError,
    MaskedPolicy,
    PathLike,
    load_checkpoint,
    read_bounded,
    save_checkpoint,
)
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv
from torch import nn

from ginenv.actions import NUM_ACTIONS
from ginenv.observation import OBS_SIZE
from ginenv.validation import is_int
from ginenv.vector import OpponentVectorGinRummy
from ginenv.vector_env import GinRummyVectorEnv

#: The reward per point of :class:`GinRummyVecEnv` unless told otherwise: the trainer's own scale
#: (the shipped config ``ppo``). A hand is worth up to about 100 points; raw points as rewards give value
#: targets in the tens and SB3's default learning rates and clipping (tuned for rewards near 1) then
#: learn poorly.
SB3_REWARD_SCALE = 0.01


class GinRummyVecEnv(VecEnv):  # type: ignore[misc]
    """``num_envs`` learner slots against a compiled opponent, as a Stable-Baselines3 ``VecEnv``: SB3's
    face of :class:`ginenv.vector_env.GinRummyVectorEnv` (``vector_env``), the Gymnasium one.

    Rewards are points times ``reward_scale``, by default :data:`SB3_REWARD_SCALE` (0.01, the
    trainer's scale, chosen for learning), not the Gymnasium env's 1.0 (raw points); pass
    ``reward_scale=1.0`` for raw points."""

    def __init__(self, num_envs: int = 8, **settings: Any) -> None:
        """The slots of :class:`ginenv.vector_env.GinRummyVectorEnv`, given its keyword arguments
        (``opponent``, ``seat``, ``rules``, ``turn_limit``, ``reward_scale`` (default
        :data:`SB3_REWARD_SCALE`), ``seed``, ``threads`` (the engine's): see it; any other name is
        refused there)."""
        settings.setdefault("reward_scale", SB3_REWARD_SCALE)
        self.vector_env = GinRummyVectorEnv(num_envs, **settings)
        super().__init__(
            self.vector_env.num_envs,
            self.vector_env.single_observation_space,
            self.vector_env.single_action_space,
        )
        self._seed: int | None = settings.get("seed")
        self._actions: np.ndarray | None = None

    @property
    def vector(self) -> OpponentVectorGinRummy:
        """The batched engine underneath (seats, results of the last step)."""
        return self.vector_env.vector

    def reset(self) -> np.ndarray:
        """Deal every slot (with the seed given to :meth:`seed` or the constructor, once)."""
        obs, _ = self.vector_env.reset(seed=self._seed)
        self._seed = None
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Keep the learners' actions for :meth:`step_wait`."""
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Apply the actions, then the opponents' moves: SB3's ``(obs, rewards, dones, infos)``."""
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        obs, rewards, terminated, truncated, found = self.vector_env.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):  # then the ended hands' final views are in found["final_obs"]
            final = found["final_obs"][i]
            infos[i] = {"terminal_observation": final, "TimeLimit.truncated": bool(truncated[i])}
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, (num_envs, 108) bool."""
        return self.vector_env.action_masks()

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        """Only ``action_masks`` (what sb3-contrib asks every step): one mask per slot."""
        if method_name != "action_masks":
            raise AttributeError(f"GinRummyVecEnv has no per-slot method {method_name!r}; only action_masks")
        masks = self.action_masks()
        return [masks[i] for i in self._indices(indices)]

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """SB3 asks for ``render_mode``, sb3-contrib whether ``action_masks`` exists (the bound
        method, per slot); slots have no other per-env attributes."""
        if attr_name == "render_mode":
            return [None for _ in self._indices(indices)]
        if attr_name == "action_masks":
            return [self.action_masks for _ in self._indices(indices)]
        raise AttributeError(f"GinRummyVecEnv slots have no attribute {attr_name!r}")

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Slots have no settable attributes."""
        raise AttributeError(f"GinRummyVecEnv slots have no settable attribute {attr_name!r}")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """No slot is wrapped by a Gymnasium wrapper."""
        return [False for _ in self._indices(indices)]

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next :meth:`reset`."""
        self._seed = seed
        return [seed for _ in range(self.num_envs)]

    def close(self) -> None:
        """Nothing to release."""

    def _indices(self, indices: Any) -> Iterable[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices)


# --------------------------------------------------------------------------- export to a checkpoint

#: The member of a Stable-Baselines3 save file (``model.save()``'s zip) that holds the policy's
#: weights, a ``torch.save`` state dict; the only member :func:`export_maskable_ppo` loads.
POLICY_MEMBER = "policy.pth"

#: What :func:`export_maskable_ppo` can represent exactly, for its error messages.
SUPPORTED = (
    f"supported: an SB3 MlpPolicy (MaskablePPO's or PPO's) on a flat Box observation of {OBS_SIZE} "
    f"entries (GinRummyVecEnv's) with Discrete({NUM_ACTIONS}) actions, the default FlattenExtractor, "
    "and ReLU or Tanh between the net_arch layers"
)

#: SB3 activation_fn classes (as policy_kwargs name them) that a MaskedPolicy reproduces.
_SB3_ACTIVATIONS = {"torch.nn.modules.activation.ReLU": "relu", "torch.nn.modules.activation.Tanh": "tanh"}

#: The modules of SB3's and sb3-contrib's actor-critic policies, whose activation_fn defaults to Tanh.
_SB3_POLICY_MODULES = ("stable_baselines3.common.policies", "sb3_contrib.common.maskable.policies")
_SB3_DEFAULT_ACTIVATION = "torch.nn.modules.activation.Tanh"

#: The most bytes of a save file's ``data`` (JSON) read for its plain-text hints.
_MAX_DATA_BYTES = 64 << 20

_POLICY_KEY = re.compile(r"mlp_extractor\.policy_net\.(\d+)\.(weight|bias)")


class SB3ExportError(ValueError):
    """A Stable-Baselines3 model or save file that a ginenv checkpoint cannot represent exactly; the
    message says what is wrong and what is supported."""


def export_maskable_ppo(model_or_path: Any, path: PathLike, activation: str | None = None) -> MaskedPolicy:
    """Write the policy of a MaskablePPO model as a ginenv checkpoint at ``path``; the network read
    back from it (a :class:`~ginenv.agents.neural.MaskedPolicy`).

    ``model_or_path``: a MaskablePPO model (PPO's works too), its ``model.policy``, or the path of
    the ``.zip`` file ``model.save()`` wrote. The exported network gives exactly the SB3 policy's
    action logits (before masking) on every observation vector; the value side is dropped.

    - From a model in memory, its spaces, features extractor, layers and activation are checked, and
      the written network is compared with the SB3 policy on sample inputs. ``activation``, when
      given, must match the model's.
    - From a save file, nothing is unpickled: only ``policy.pth`` is loaded, with
      ``torch.load(..., weights_only=True)``, and the layer widths are read off the tensor shapes.
      The activation is not in those tensors (it lives in the cloudpickled ``data`` member, which
      is never loaded), so the caller gives it: ``"relu"`` for
      ``policy_kwargs=dict(activation_fn=nn.ReLU)``, ``"tanh"`` for SB3's MlpPolicy default. Left
      out (None), it is ``"tanh"``, unless the plain-text description SB3 writes beside the pickled
      values (``data`` read as JSON, the pickles never decoded) says otherwise; a given activation
      that this description contradicts, or an activation_fn it names other than ReLU or Tanh, is
      refused rather than written wrong. A model trained behind ``VecNormalize`` (whose statistics
      are saved apart) cannot be detected from the file: its export would read unnormalized
      observations.

    The checkpoint's ``config`` records the source (``{"source": "sb3-contrib MaskablePPO", ...}``).
    Anything a MaskedPolicy cannot represent exactly (another observation size or a non-flat
    observation space, another number of actions, a CNN or custom features extractor, an activation
    other than ReLU or Tanh, a save file without ``policy.pth`` or with inconsistent shapes) raises
    :class:`SB3ExportError`; a failure to write ``path`` raises OSError.
    """
    if activation is not None and (not isinstance(activation, str) or activation not in ACTIVATIONS):
        raise SB3ExportError(
            f"activation must be one of {', '.join(map(repr, ACTIVATIONS))} (SB3's nn.ReLU or nn.Tanh), "
            f"got {activation!r}"[:400]
        )
    target = Path(path)
    if target.is_dir():
        raise SB3ExportError(
            f"{path} is a folder; give the checkpoint's file name, e.g. {target / 'policy.pt'}"
        )
    if not target.parent.is_dir():
        raise SB3ExportError(f"cannot write {path}: the folder {target.parent} does not exist")
    if isinstance(model_or_path, (str, os.PathLike)):
        source = _save_file_path(model_or_path)
        if target.exists() and target.resolve() == source.resolve():
            raise SB3ExportError(f"{path} is the save file itself; write the checkpoint to another file")
        state, config = _read_save_file(source, activation)
        chosen, where, sb3_policy = config["activation"], str(source), None
    else:
        sb3_policy = _sb3_policy(model_or_path)
        inferred = _check_policy(sb3_policy)
        if activation is not None and inferred is not None and activation != inferred:
            raise SB3ExportError(
                f"the model's layers use {inferred!r}, but activation={activation!r} was given; "
                "leave it out for a model in memory (it is read from the layers)"
            )
        chosen, where = inferred or activation or "relu", "the model"
        state = {k: v.detach().cpu() for k, v in sb3_policy.state_dict().items()}
        config = _memory_config(model_or_path, sb3_policy, chosen)
    policy = _masked_policy(state, chosen, where)
    if sb3_policy is not None:
        _check_same_logits(sb3_policy, policy)
    config["hidden"] = list(policy.hidden)
    save_checkpoint(policy.eval(), target, config=config)
    try:
        return load_checkpoint(target)
    except CheckpointError as err:  # cannot happen for a network checked above; said plainly if it does
        raise SB3ExportError(f"the checkpoint written to {path} does not load back: {err}") from None


def _save_file_path(source: PathLike) -> Path:
    """The save file's path; like SB3's ``load``, ``model`` finds ``model.zip``."""
    given = Path(source)
    if not given.exists() and given.suffix != ".zip" and given.with_name(given.name + ".zip").is_file():
        return given.with_name(given.name + ".zip")
    return given


def _read_save_file(source: Path, activation: str | None) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The policy's state dict from a save file's ``policy.pth``, and the config recording where it
    came from (its ``activation``: the one given, checked against the file's plain-text hints, else
    the hinted one, else tanh); the ``data`` member is read as JSON, never unpickled."""
    not_sb3 = f"{source} is not a Stable-Baselines3 save file (the .zip that model.save() writes)"
    what = "Stable-Baselines3 save file"
    raw = read_bounded(source, SB3ExportError, what, f"{what} (.zip)")
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            names = archive.namelist()
            if POLICY_MEMBER not in names:
                raise SB3ExportError(
                    f"{not_sb3}: it has no {POLICY_MEMBER} (members: {', '.join(names[:6]) or 'none'})"[:400]
                )
            member = _read_member(archive, POLICY_MEMBER, MAX_CHECKPOINT_BYTES, not_sb3)
            hints = _plain_hints(archive, names)
    except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError, OSError) as err:
        if isinstance(err, SB3ExportError):
            raise
        raise SB3ExportError(f"{not_sb3}: {err}"[:400]) from None
    state = _load_state(member, source)
    declared = hints.pop("activation_fn", None)
    module = hints.pop("policy_module", None)
    if declared is None and hints.pop("default_activation", False) and module in _SB3_POLICY_MODULES:
        declared = _SB3_DEFAULT_ACTIVATION  # no activation_fn in policy_kwargs: the class default
    origin = "caller"
    if declared is not None:
        name = _SB3_ACTIVATIONS.get(declared)
        short = declared.rsplit(".", 1)[-1]
        if name is None:
            raise SB3ExportError(
                f"{source}: its policy_kwargs name activation_fn {short}; only nn.ReLU and nn.Tanh "
                f"are supported ({SUPPORTED})"
            )
        if activation is not None and name != activation:
            raise SB3ExportError(
                f"{source}: the save file says its activation_fn is {short}, but activation "
                f"{activation!r} was given; export it with activation {name!r} (--activation {name})"
            )
        origin = "caller, as the save file says" if activation is not None else "save file"
        activation = name
    hints.pop("default_activation", None)
    maskable = isinstance(module, str) and module.startswith("sb3_contrib.common.maskable")
    config: dict[str, Any] = {
        "source": "sb3-contrib MaskablePPO" if maskable else "Stable-Baselines3 policy",
        "from": "save file",
        "file": source.name,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "activation": activation or "tanh",
        "activation_from": origin if activation is not None else "default (tanh)",
    }
    if module is not None:
        config["policy_module"] = module
    config.update(hints)
    return state, config


def _read_member(archive: zipfile.ZipFile, name: str, limit: int, not_sb3: str) -> bytes:
    """One member's bytes, at most ``limit`` of them (a compressed member may claim any size)."""
    with archive.open(name) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise SB3ExportError(f"{not_sb3}: its {name} is larger than {limit} bytes")
    return data


def _plain_hints(archive: zipfile.ZipFile, names: list[str]) -> dict[str, Any]:
    """What the save file says in plain text: the SB3 version, and from the ``data`` JSON the
    readable description SB3 writes beside each pickled value (the policy class's module, the
    ``activation_fn`` of policy_kwargs, the timesteps). The pickles are never decoded; anything
    unreadable is skipped."""
    hints: dict[str, Any] = {}
    if "_stable_baselines3_version" in names:
        version = archive.open("_stable_baselines3_version").read(64).decode("ascii", "replace").strip()
        if re.fullmatch(r"[\w.+-]{1,40}", version):
            hints["sb3_version"] = version
    if "data" not in names or archive.getinfo("data").file_size > _MAX_DATA_BYTES:
        return hints
    try:
        doc = json.loads(archive.open("data").read(_MAX_DATA_BYTES + 1))
    except (ValueError, RecursionError, UnicodeDecodeError):
        return hints
    if not isinstance(doc, dict):
        return hints
    kwargs, policy_class = doc.get("policy_kwargs"), doc.get("policy_class")
    if isinstance(kwargs, dict) and "activation_fn" in kwargs:
        # SB3 writes str() of each value beside the pickle: "<class 'torch.nn.modules.activation.ReLU'>".
        described = str(kwargs["activation_fn"])
        found = re.fullmatch(r"<class '([\w.]+)'>", described)
        hints["activation_fn"] = found.group(1) if found else described[:100]
    elif isinstance(kwargs, dict):
        hints["default_activation"] = True  # policy_kwargs (every key is listed) without activation_fn
    if isinstance(policy_class, dict) and isinstance(policy_class.get("__module__"), str):
        hints["policy_module"] = policy_class["__module__"][:200]
    steps = doc.get("num_timesteps")
    if is_int(steps) and steps >= 0:
        hints["num_timesteps"] = steps
    return hints


def _load_state(member: bytes, source: Path) -> dict[str, torch.Tensor]:
    """``policy.pth`` as a state dict, read with ``weights_only=True`` from a torch zip archive."""
    bad = f"{source}: {POLICY_MEMBER} is not a state dict saved by torch.save"
    try:
        with zipfile.ZipFile(io.BytesIO(member)) as inner:
            packed = [i.filename for i in inner.infolist() if i.compress_type != zipfile.ZIP_STORED]
    except (zipfile.BadZipFile, ValueError, EOFError):
        # torch's legacy format allocates every storage at its declared size before reading it.
        raise SB3ExportError(f"{bad} in its zip format (the legacy format is refused)") from None
    if packed:
        raise SB3ExportError(f"{bad}: compressed entries are refused ({', '.join(packed[:3])})")
    try:
        state = torch.load(io.BytesIO(member), map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for unsafe pickles and corrupt data
        raise SB3ExportError(f"{bad} (read with weights_only=True): {_reason(err)}") from None
    if not isinstance(state, Mapping) or not all(isinstance(k, str) for k in state):
        raise SB3ExportError(
            f"{bad}: expected a mapping of parameter names to tensors, got {type(state).__name__}"
        )
    return dict(state)


def _reason(err: Exception) -> str:
    """torch.load's error on one line: the unpickler's own reason when it names one (torch's message
    runs over many lines of advice, with terminal colour codes)."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(err))
    found = re.search(r"WeightsUnpickler error: ([^\n]*?\.)(?:\s|$)", text)
    lines = text.strip().splitlines()
    reason = found.group(1) if found else lines[0] if lines else type(err).__name__
    return " ".join(reason.split())[:300]


def _sb3_policy(model: Any) -> Any:
    """The actor-critic policy of a model, or the policy itself; anything else is refused."""
    from stable_baselines3.common.policies import ActorCriticPolicy

    supported: tuple[type, ...] = (ActorCriticPolicy,)
    try:
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

        supported = (MaskableActorCriticPolicy, ActorCriticPolicy)
    except ImportError:  # sb3-contrib absent: PPO's policy is exported all the same
        pass
    policy = model if isinstance(model, nn.Module) else getattr(model, "policy", None)
    if not isinstance(policy, supported):
        what = type(policy).__name__ if isinstance(policy, nn.Module) else type(model).__name__
        raise SB3ExportError(
            f"cannot export a {what}: expected a MaskablePPO model, its policy, or the path of its "
            f".zip save file ({SUPPORTED})"
        )
    getter = getattr(model, "get_vec_normalize_env", None)
    if callable(getter) and getter() is not None:
        raise SB3ExportError(
            "the model was trained behind VecNormalize: its policy reads normalized observations, which a "
            f"ginenv checkpoint cannot reproduce ({SUPPORTED})"
        )
    return policy


def _check_policy(policy: Any) -> str | None:
    """Refuse a policy a MaskedPolicy cannot represent; the activation of its layers (None when it
    has no hidden layer)."""
    from stable_baselines3.common.torch_layers import FlattenExtractor, MlpExtractor

    obs_space, action_space = policy.observation_space, policy.action_space
    if not isinstance(obs_space, spaces.Box) or len(obs_space.shape) != 1:
        raise SB3ExportError(
            f"the model's observation space is {obs_space}, not a flat Box: a ginenv network reads the "
            f"observation vector ({SUPPORTED})"
        )
    if obs_space.shape != (OBS_SIZE,):
        raise SB3ExportError(
            f"the model reads observations of {obs_space.shape[0]} entries, but ginenv's observation vector "
            f"has {OBS_SIZE} ({SUPPORTED})"
        )
    if not isinstance(action_space, spaces.Discrete) or (int(action_space.n), int(action_space.start)) != (
        NUM_ACTIONS,
        0,
    ):
        raise SB3ExportError(
            f"the model's action space is {action_space}, but ginenv has Discrete({NUM_ACTIONS}) "
            f"({SUPPORTED})"
        )
    extractor = policy.pi_features_extractor
    if type(extractor) is not FlattenExtractor:
        raise SB3ExportError(
            f"the model's features extractor is a {type(extractor).__name__}, which a ginenv network "
            f"cannot represent ({SUPPORTED})"
        )
    if type(policy.mlp_extractor) is not MlpExtractor or type(policy.action_net) is not nn.Linear:
        raise SB3ExportError(
            f"the model's layers are customised ({type(policy.mlp_extractor).__name__}, "
            f"{type(policy.action_net).__name__}): only SB3's MlpExtractor and a Linear action_net are "
            f"supported ({SUPPORTED})"
        )
    layers = list(policy.mlp_extractor.policy_net)
    names = {cls: name for name, cls in ACTIVATIONS.items()}
    for i, layer in enumerate(layers):
        if i % 2 == 0 and (type(layer) is not nn.Linear or layer.bias is None):
            raise SB3ExportError(
                f"policy_net[{i}] is {layer}, not a Linear layer with a bias (net_arch layers and "
                f"their activations alternate in SB3's MlpExtractor; {SUPPORTED})"
            )
        if i % 2 == 1 and type(layer) not in names:
            raise SB3ExportError(
                f"the model's activation_fn is {type(layer).__name__}; only nn.ReLU and nn.Tanh are "
                f"supported ({SUPPORTED})"
            )
    activations = {names[type(layer)] for layer in layers[1::2]}
    if len(layers) % 2 or len(activations) > 1:
        raise SB3ExportError(
            f"policy_net is {[type(m).__name__ for m in layers]}: expected Linear layers each followed by "
            f"the same activation ({SUPPORTED})"
        )
    return activations.pop() if activations else None


def _memory_config(model: Any, policy: Any, activation: str) -> dict[str, Any]:
    """Where a network exported from memory came from, as plain values."""
    import stable_baselines3

    maskable = type(policy).__name__ == "MaskableActorCriticPolicy"
    config: dict[str, Any] = {
        "source": "sb3-contrib MaskablePPO" if maskable else "stable-baselines3 PPO",
        "from": "model in memory",
        "policy_class": f"{type(policy).__module__}.{type(policy).__qualname__}",
        "sb3_version": stable_baselines3.__version__,
        "activation": activation,
        "activation_from": "model layers",
    }
    steps = getattr(model, "num_timesteps", None)
    if is_int(steps):
        config["num_timesteps"] = steps
    return config


def _masked_policy(state: Mapping[str, torch.Tensor], activation: str, where: str) -> MaskedPolicy:
    """A MaskedPolicy holding the actor of an SB3 state dict, every key and shape checked first."""
    pairs = _policy_layers(state, where)
    weights: dict[str, torch.Tensor] = {}
    width = OBS_SIZE
    for n, (name, params) in enumerate(pairs):
        width = _check_layer(name, params, n, width, n == len(pairs) - 1, where)
        for part in ("weight", "bias"):
            value = params[part].detach().to(torch.float32).clone(memory_format=torch.contiguous_format)
            if not bool(torch.isfinite(value).all()):
                raise SB3ExportError(f"{where}: {name}.{part} holds NaN or infinite weights (as float32)")
            weights[f"net.{2 * n}.{part}"] = value
    hidden = [int(params["weight"].shape[0]) for _, params in pairs[:-1]]
    policy = MaskedPolicy(hidden=hidden, activation=activation)
    policy.load_state_dict(weights)
    return policy.eval()


def _policy_layers(state: Mapping[str, torch.Tensor], where: str) -> list[tuple[str, dict[str, Any]]]:
    """The actor's Linear layers of an SB3 state dict, in order, ``(name, {"weight": ..., "bias":
    ...})``: the policy net's, then ``action_net``; anything an MlpPolicy does not hold is refused."""
    layers: dict[int, dict[str, Any]] = {}
    others: list[str] = []
    for key, value in state.items():
        found = _POLICY_KEY.fullmatch(key)
        if found:
            layers.setdefault(int(found.group(1)), {})[found.group(2)] = value
        elif "features_extractor." in key:
            raise SB3ExportError(
                f"{where}: the features extractor has parameters ({key}), so it is not the MlpPolicy's "
                f"FlattenExtractor; a ginenv network cannot represent it ({SUPPORTED})"
            )
        elif not key.startswith(("action_net.", "mlp_extractor.value_net.", "value_net.")):
            others.append(key)
    if others:
        raise SB3ExportError(
            f"{where}: parameters {', '.join(others[:4])} are not an MlpPolicy's (mlp_extractor.policy_net, "
            f"action_net and the value side) ({SUPPORTED})"[:600]
        )
    indices = sorted(layers)
    if indices != list(range(0, 2 * len(indices), 2)) or any(
        set(p) != {"weight", "bias"} for p in layers.values()
    ):
        raise SB3ExportError(
            f"{where}: mlp_extractor.policy_net has parameters at indices {indices}: expected a weight and a "
            f"bias at 0, 2, 4, ... (Linear layers with one activation between them; {SUPPORTED})"[:600]
        )
    if len(indices) > MAX_HIDDEN_LAYERS:
        raise SB3ExportError(
            f"{where}: {len(indices)} hidden layers; a ginenv network has at most {MAX_HIDDEN_LAYERS}"
        )
    pairs = [(f"mlp_extractor.policy_net.{i}", layers[i]) for i in indices]
    head = {name: state[f"action_net.{name}"] for name in ("weight", "bias") if f"action_net.{name}" in state}
    if len(head) != 2:
        raise SB3ExportError(
            f"{where}: no action_net.weight and action_net.bias: not an actor-critic policy ({SUPPORTED})"
        )
    pairs.append(("action_net", head))
    return pairs


def _check_layer(name: str, params: dict[str, Any], n: int, width: int, last: bool, where: str) -> int:
    """Refuse layer ``n`` of the actor (``name``; ``last``: the action head) unless it is a dense
    float Linear layer reading ``width`` inputs and as wide as a ginenv layer may be; its width."""
    weight, bias = params["weight"], params["bias"]
    for part, tensor in (("weight", weight), ("bias", bias)):
        if (
            not isinstance(tensor, torch.Tensor)
            or tensor.layout != torch.strided
            or tensor.dtype not in WEIGHT_DTYPES
        ):
            kind = tensor.dtype if isinstance(tensor, torch.Tensor) else type(tensor).__name__
            raise SB3ExportError(f"{where}: {name}.{part} must be a dense float tensor, got {kind}")
    if weight.dim() != 2 or bias.dim() != 1 or weight.shape[0] != bias.shape[0]:
        raise SB3ExportError(
            f"{where}: {name} has weight {list(weight.shape)} and bias {list(bias.shape)}; a Linear "
            "layer has weight [out, in] and bias [out]"
        )
    if weight.shape[1] != width:
        if n == 0:
            raise SB3ExportError(
                f"{where}: the policy reads observations of {weight.shape[1]} entries, but ginenv's "
                f"observation vector has {OBS_SIZE} ({SUPPORTED})"
            )
        raise SB3ExportError(
            f"{where}: {name}.weight has shape {list(weight.shape)}, but the layer before it gives "
            f"{width} outputs (expected [*, {width}])"
        )
    width = int(weight.shape[0])
    if last and width != NUM_ACTIONS:
        raise SB3ExportError(
            f"{where}: action_net gives {width} action logits, but ginenv has {NUM_ACTIONS} actions "
            f"({SUPPORTED})"
        )
    if not last and not 1 <= width <= MAX_LAYER_WIDTH:
        raise SB3ExportError(f"{where}: {name} is {width} wide; a ginenv layer has 1 to {MAX_LAYER_WIDTH}")
    return width


@torch.no_grad()
def _check_same_logits(sb3_policy: Any, policy: MaskedPolicy) -> None:
    """Refuse the export when the network's log-probabilities differ from the SB3 policy's on sample
    inputs (a policy class that changes what its parts compute)."""
    generator = torch.Generator().manual_seed(0)
    inputs = (torch.rand(64, OBS_SIZE, generator=generator) < 0.3).float()
    inputs[32:] *= torch.rand(32, OBS_SIZE, generator=generator) * 4
    device = getattr(sb3_policy, "device", torch.device("cpu"))
    theirs = sb3_policy.get_distribution(inputs.to(device)).distribution.logits.double().cpu()
    ours = torch.log_softmax(policy(inputs).double(), dim=-1)
    if theirs.shape != ours.shape or not torch.allclose(theirs, ours, rtol=1e-4, atol=1e-4):
        raise SB3ExportError(
            "the exported network's logits differ from the model's own (a policy class that changes what "
            f"its layers compute?); nothing was written ({SUPPORTED})"
        )


__all__ = ["POLICY_MEMBER", "GinRummyVecEnv", "SB3ExportError", "export_maskable_ppo"]
