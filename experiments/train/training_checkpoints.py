"""Training checkpoints of a PPO run: saving, resuming, starting from a policy, reading the aux head;
the state kept in memory that a stopped update goes back to.

A training checkpoint is a policy checkpoint (:mod:`ginenv.agents.neural`: plain data read without
unpickling, playable as ``checkpoint:PATH``) whose ``config`` is the run's :class:`Args` and whose
``training`` entry holds what resuming needs: the value MLP (``critic``), the opponent-hand head
(``aux``), Adam's state (``optimizer``) and the progress (``global_step``, ``update``, ``hands``).
Everything read back is checked against this run's networks first: another network shape, a
policy-only file or a malformed entry is refused with CheckpointError before anything is loaded.

A resumed run is the same run: its settings are the checkpoint's ``config``
(:func:`training_args`), and of those only :data:`RESUME_MAY_CHANGE` may be given new values
(:func:`resumed_args`); any other change is refused in one line naming the setting.
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import torch
from ginenv.agents.neural import (
    CheckpointError,
    MaskedPolicy,
    check_state,
    read_checkpoint,
    save_checkpoint,
)
from ginenv.agents.specs import CHECKPOINT_PREFIX
from ginenv.experiments.config_loader import replace_checked, settings_of
from ginenv.experiments.errors import UsageError
from ginenv.experiments.train.actor_critic import ORACLE_SIZE, ActorCritic
from ginenv.experiments.train.args import Args
from torch import nn

from ginenv.validation import is_int

#: The settings a resumed run may be given new values for: how long it goes on, how often it is
#: measured and saved, what it shows, and where its work runs (torch's and the engine's threads,
#: the device, the rollout workers' backend: for a seed and a number of workers both backends train
#: the same network). Anything else (num_envs, the league, the teacher, the seed, the experiment's name...)
#: would make it another run.
RESUME_MAY_CHANGE = (
    "total_steps",
    "eval_every",
    "eval_deals",
    "eval_levels",
    "eval_workers",
    "checkpoint_every",
    "progress",
    "threads",
    "engine_threads",
    "overlap",
    "device",
    "backend",
    "runs_dir",
)


def _check_optimizer(optimizer: torch.optim.Optimizer, state: Any, path: str) -> None:
    """Load Adam's state after checking every moment has its parameter's shape."""
    params = [p for g in optimizer.param_groups for p in g["params"]]
    try:
        groups, moments = state["param_groups"], state["state"]
        if len(groups) != 1 or list(groups[0]["params"]) != list(range(len(params))):
            raise ValueError("parameter groups differ")
        for idx, entry in moments.items():
            for name in ("exp_avg", "exp_avg_sq"):
                if entry[name].shape != params[idx].shape:
                    raise ValueError(f"state of parameter {idx} has the wrong shape")
        optimizer.load_state_dict(state)
    except (KeyError, TypeError, IndexError, ValueError, AttributeError) as err:
        raise CheckpointError(
            f"{path}: training['optimizer'] does not fit this network's Adam: {err}"
        ) from None


def save_training_checkpoint(
    path: Path, net: ActorCritic, optimizer: torch.optim.Optimizer, args: Args, progress: dict[str, int]
) -> None:
    """The policy plus what resuming needs, in the pickle-free checkpoint format."""
    save_checkpoint(
        net.actor,
        path,
        config=dataclasses.asdict(args),
        training={
            "critic": net.critic.state_dict(),
            "aux": net.aux.state_dict(),
            "optimizer": optimizer.state_dict(),
            "progress": dict(progress),
        },
    )


def kept_state(net: ActorCritic, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """A copy of the networks' and Adam's state as they are now (every tensor cloned, on its
    device), for :func:`restore_state` to put back: a stop abandons the update in flight and saves
    the state from before it. The copy is about four times the network's parameters."""
    return copy.deepcopy({"net": net.state_dict(), "optimizer": optimizer.state_dict()})


def restore_state(net: ActorCritic, optimizer: torch.optim.Optimizer, kept: dict[str, Any]) -> None:
    """Put back the state :func:`kept_state` copied (``kept`` is used up: Adam takes its tensors)."""
    net.load_state_dict(kept["net"])
    optimizer.load_state_dict(kept["optimizer"])


def check_same_network(found: MaskedPolicy, wanted: MaskedPolicy, where: str) -> None:
    """Refuse (CheckpointError, starting with ``where``) a checkpoint's policy not built like
    ``wanted``, this run's: another input, card head, activation or hidden layers."""
    for key, phrase in (
        ("inputs", "reads inputs"),
        ("card_hidden", "has card_hidden"),
        ("activation", "has activation"),
        ("hidden", "has hidden layers"),
    ):
        have, want = getattr(found, key), getattr(wanted, key)
        if key == "hidden":
            have, want = list(have), list(want)
        if have != want:
            raise CheckpointError(
                f"{where}: its network {phrase} {have!r}, this run {want!r}; set {key} to match"
            )


def policy_from(path: str, wanted: MaskedPolicy, what: str) -> MaskedPolicy:
    """The policy of a checkpoint file (``what``: the setting naming it), refused (CheckpointError)
    unless it is built like ``wanted``, this run's policy."""
    policy = read_checkpoint(path).policy
    check_same_network(policy, wanted, f"{what} {path}")
    return policy


def start_from(path: str, net: ActorCritic) -> list[str]:
    """Start ``net`` from the checkpoint ``path`` (``Args.init``): its policy, and where it is a
    training checkpoint its value MLP and opponent-hand head too; the names of the parts loaded.

    A plain critic starts an oracle one (:data:`ORACLE_SIZE` more inputs): its first layer's weights
    on the oracle inputs start at 0, so the oracle critic starts out valuing as the plain one did
    and learns what the hidden cards add. Another shape: CheckpointError before anything is loaded.
    """
    ckpt = read_checkpoint(path)
    check_same_network(ckpt.policy, net.actor, f"init {path}")
    training = ckpt.training or {}
    parts: dict[str, tuple[nn.Module, dict[str, torch.Tensor]]] = {}
    if "critic" in training:
        critic = training["critic"]
        first = critic.get("0.weight") if isinstance(critic, dict) else None
        own = net.critic.state_dict()["0.weight"]
        if net.oracle and isinstance(first, torch.Tensor) and first.shape[1] + ORACLE_SIZE == own.shape[1]:
            critic = {
                **critic,
                "0.weight": torch.cat([first, first.new_zeros(first.shape[0], ORACLE_SIZE)], 1),
            }
        parts["critic"] = (net.critic, check_state(net.critic, critic, "critic", path))
    if "aux" in training:
        parts["aux"] = (net.aux, check_state(net.aux, training["aux"], "aux", path))
    net.actor.load_state_dict(ckpt.policy.state_dict())
    for module, state in parts.values():
        module.load_state_dict(state)
    return ["policy", *parts]


def fixed_member(member: str, inputs: str) -> MaskedPolicy:
    """The network of a fixed league member ``checkpoint:PATH``, refused (CheckpointError) unless it
    reads this run's ``inputs`` (the rollouts prepare one input batch for every network); its
    layers may differ from the learner's."""
    path = member.removeprefix(CHECKPOINT_PREFIX)
    policy = read_checkpoint(path).policy
    if policy.inputs != inputs:
        raise CheckpointError(
            f"opponents: {member}: its network reads inputs {policy.inputs!r}, this run {inputs!r}; "
            "a league member must read the learner's inputs"
        )
    return policy


def load_training_checkpoint(path: str, net: ActorCritic, optimizer: torch.optim.Optimizer) -> dict[str, int]:
    """Restore a run from a checkpoint written by :func:`save_training_checkpoint`; its progress.

    A policy-only checkpoint, another network shape or anything malformed: CheckpointError.
    """
    ckpt = read_checkpoint(path)  # refuses another observation format, corrupt files, bad weights
    check_same_network(ckpt.policy, net.actor, path)
    training = ckpt.training
    if training is None:
        raise CheckpointError(
            f"{path} holds a policy only (no value head, optimizer or progress); it cannot resume a run"
        )
    critic = check_state(net.critic, training.get("critic"), "critic", path)
    aux = check_state(net.aux, training.get("aux"), "aux", path)
    progress = training.get("progress")
    names = ("global_step", "update", "hands")
    if not isinstance(progress, dict) or not all(is_int(progress.get(k)) and progress[k] >= 0 for k in names):
        raise CheckpointError(f"{path}: training['progress'] must give {', '.join(names)} as integers >= 0")
    net.actor.load_state_dict(ckpt.policy.state_dict())
    net.critic.load_state_dict(critic)
    net.aux.load_state_dict(aux)
    _check_optimizer(optimizer, training.get("optimizer"), path)
    return {k: int(progress[k]) for k in names}


def training_args(path: str) -> Args:
    """The settings of the run that wrote the training checkpoint ``path`` (its ``config``).

    A policy-only file, a missing or malformed ``config``, or settings this version does not know:
    CheckpointError naming the file.
    """
    ckpt = read_checkpoint(path)
    if ckpt.training is None:
        raise CheckpointError(
            f"{path} holds a policy only (no value head, optimizer or progress); it cannot resume a run"
        )
    try:
        values = settings_of(ckpt.config, Args, f"{path} (its config)")
        return replace_checked(Args(), values, f"{path} (its config)")
    except UsageError as err:
        raise CheckpointError(f"{path}: the run's settings cannot be read back: {err}") from None


def resumed_args(saved: Args, asked: Args, sources: dict[str, str], config: str = "--config") -> Args:
    """The settings of a resumed run: ``saved``, the checkpoint's (:func:`training_args`), with
    ``asked``'s values of :data:`RESUME_MAY_CHANGE` where they differ.

    ``asked`` holds the settings the command line gives (a config, ``--set``, flags, on top of the
    checkpoint's); ``sources`` says where a setting given came from (e.g. ``--set num_envs=256``),
    ``config`` where the others did. Any other setting that differs from the checkpoint's is
    refused with UsageError, one line naming it, its two values and what may change.
    """
    for f in dataclasses.fields(Args):
        want, have = getattr(asked, f.name), getattr(saved, f.name)
        if want != have and f.name not in RESUME_MAY_CHANGE:
            where = sources.get(f.name, config)
            raise UsageError(
                f"--resume: {where} would change {f.name} from the checkpoint's {have!r} to {want!r}, "
                f"another run; a resumed run keeps its settings, and only {', '.join(RESUME_MAY_CHANGE)} "
                "may change"
            )
    changes = {n: getattr(asked, n) for n in RESUME_MAY_CHANGE if getattr(asked, n) != getattr(saved, n)}
    return dataclasses.replace(saved, **changes)
