"""Training checkpoints of a PPO run: saving, resuming, starting from a policy, reading the aux head.

A training checkpoint is a policy checkpoint (:mod:`ginenv.agents.neural`: plain data read without
unpickling, playable as ``checkpoint:PATH``) whose ``config`` is the run's :class:`Args` and whose
``training`` entry holds what resuming needs: the value MLP (``critic``), the opponent-hand head
(``aux``), Adam's state (``optimizer``) and the progress (``global_step``, ``update``, ``hands``).
Everything read back is checked against this run's networks first: another network shape, a
policy-only file or a malformed entry is refused with CheckpointError before anything is loaded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ginenv.agents.neural import CheckpointError, MaskedPolicy, read_checkpoint, save_checkpoint
from ginenv.experiments.train.args import Args
from ginenv.experiments.train.networks import ActorCritic
from torch import nn

from ginenv.cards import NUM_CARDS
from ginenv.observation import plane_slice

_UNSEEN = plane_slice("unseen")
_OPPONENT_TAKEN = plane_slice("opponent_taken")


def _check_state(module: nn.Module, state: Any, what: str, path: str) -> dict[str, torch.Tensor]:
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
    critic = _check_state(net.critic, training.get("critic"), "critic", path)
    aux = _check_state(net.aux, training.get("aux"), "aux", path)
    progress = training.get("progress")
    names = ("global_step", "update", "hands")
    if not isinstance(progress, dict) or not all(
        isinstance(progress.get(k), int) and not isinstance(progress.get(k), bool) and progress[k] >= 0
        for k in names
    ):
        raise CheckpointError(f"{path}: training['progress'] must give {', '.join(names)} as integers >= 0")
    net.actor.load_state_dict(ckpt.policy.state_dict())
    net.critic.load_state_dict(critic)
    net.aux.load_state_dict(aux)
    _check_optimizer(optimizer, training.get("optimizer"), path)
    return {k: int(progress[k]) for k in names}


def opponent_hand_predictor(path: str | Path) -> Callable[[np.ndarray], np.ndarray]:
    """The auxiliary head of a training checkpoint as a function of observations.

    Returns ``predict(observations) -> probabilities``: for a batch of one seat's observation
    vectors (B, OBS_SIZE), the probability (B, 52) that the opponent holds each card: the head's for
    the unseen cards, and the facts of the observation for the others (1 for the cards it took from
    the discard pile, 0 for the own hand and the pile). It reads the observation only, like the
    policy it was trained beside. A policy-only checkpoint (no ``training['aux']``) raises
    CheckpointError.
    """
    ckpt = read_checkpoint(path)
    if ckpt.training is None or "aux" not in ckpt.training:
        raise CheckpointError(f"{path} holds no auxiliary opponent-hand head (a policy-only checkpoint)")
    policy = ckpt.policy.eval().requires_grad_(False)
    head = nn.Linear(policy.hidden[-1], NUM_CARDS)
    head.load_state_dict(_check_state(head, ckpt.training["aux"], "aux", str(path)))
    head.eval().requires_grad_(False)

    def predict(observations: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, dtype=np.float32)
        with torch.no_grad():
            probs = torch.sigmoid(head(policy.net[:-1](policy.prepare(obs)))).numpy()
        probs = np.where(obs[:, _UNSEEN] > 0.5, probs, 0.0)
        return np.where(obs[:, _OPPONENT_TAKEN] > 0.5, 1.0, probs).astype(np.float32)

    return predict
