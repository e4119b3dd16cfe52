"""Neural agents from checkpoints: a masked policy network, saved and loaded without pickle.

A checkpoint is a ``torch.save`` of plain data only: ``{"format": "ginenv-policy", "version": 1,
"obs_size", "num_actions", "hidden", "state_dict"}``. It is read with ``torch.load(...,
weights_only=True)``, which refuses arbitrary pickled objects, so a checkpoint from elsewhere cannot
run code; anything that is not such a dict is refused with :class:`CheckpointError`.

``agents.make("checkpoint:PATH")`` builds a :class:`NeuralAgent` from one, so the harness evaluates
trained networks like any registered agent (``ginenv match checkpoint:runs/x/policy.pt hard``). The
agent acts greedily on the masked logits (``temperature=0``) or samples at a temperature from its
seeded generator. Training scripts (a later issue) write checkpoints with :func:`save_checkpoint`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ginenv.agents.base import Agent, Observation
from torch import nn

from ginenv.actions import NUM_ACTIONS
from ginenv.observation import OBS_SIZE

FORMAT = "ginenv-policy"
VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used, with what was expected."""


class MaskedPolicy(nn.Module):
    """An MLP from the observation vector to one logit per action id."""

    def __init__(
        self, obs_size: int = OBS_SIZE, hidden: Sequence[int] = (256, 256), num_actions: int = NUM_ACTIONS
    ):
        """Layers ``obs_size -> hidden... -> num_actions`` with ReLU between them."""
        super().__init__()
        self.obs_size, self.hidden, self.num_actions = obs_size, tuple(hidden), num_actions
        layers: list[nn.Module] = []
        width = obs_size
        for h in self.hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        layers.append(nn.Linear(width, num_actions))
        self.net = nn.Sequential(*layers)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Logits; illegal actions (mask 0) get ``-inf`` when a mask is given."""
        logits = self.net(obs)
        if mask is not None:
            logits = logits.masked_fill(mask == 0, float("-inf"))
        return logits


def save_checkpoint(policy: MaskedPolicy, path: str | Path) -> None:
    """Write a policy as a pickle-free checkpoint (see the module docstring)."""
    torch.save(
        {
            "format": FORMAT,
            "version": VERSION,
            "obs_size": policy.obs_size,
            "num_actions": policy.num_actions,
            "hidden": list(policy.hidden),
            "state_dict": policy.state_dict(),
        },
        path,
    )


def load_checkpoint(path: str | Path) -> MaskedPolicy:
    """Read a checkpoint written by :func:`save_checkpoint`; anything else raises CheckpointError."""
    try:
        data: Any = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint at {path}") from None
    except Exception as err:  # torch raises several types for non-checkpoints and unsafe pickles
        raise CheckpointError(
            f"{path} is not a ginenv policy checkpoint (read with weights_only=True): {err}"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a ginenv policy checkpoint ('format' must be {FORMAT!r})")
    if data.get("version") != VERSION:
        raise CheckpointError(
            f"{path}: unsupported checkpoint version {data.get('version')!r}, expected {VERSION}"
        )
    if data.get("obs_size") != OBS_SIZE or data.get("num_actions") != NUM_ACTIONS:
        raise CheckpointError(
            f"{path}: the network expects {data.get('obs_size')} inputs and "
            f"{data.get('num_actions')} actions; this env has {OBS_SIZE} and {NUM_ACTIONS}"
        )
    hidden = data.get("hidden")
    if not isinstance(hidden, list) or not all(isinstance(h, int) and h > 0 for h in hidden):
        raise CheckpointError(f"{path}: 'hidden' must be a list of positive layer widths")
    policy = MaskedPolicy(OBS_SIZE, hidden, NUM_ACTIONS)
    try:
        policy.load_state_dict(data["state_dict"])
    except (KeyError, RuntimeError) as err:
        raise CheckpointError(f"{path}: weights do not fit the declared network: {err}") from None
    policy.eval()
    return policy


class NeuralAgent(Agent):
    """Acts with a :class:`MaskedPolicy`: argmax of the legal logits, or sampled at a temperature."""

    name = "neural"

    def __init__(self, policy: MaskedPolicy, seed: int | None = None, temperature: float = 0.0) -> None:
        """Wrap a policy network; ``temperature`` 0 is greedy."""
        super().__init__(seed)
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        self.policy = policy
        self.temperature = temperature

    @classmethod
    def from_checkpoint(
        cls, path: str | Path, seed: int | None = None, temperature: float = 0.0
    ) -> NeuralAgent:
        """An agent from a checkpoint file."""
        return cls(load_checkpoint(path), seed=seed, temperature=temperature)

    @torch.no_grad()
    def act(self, observation: Observation) -> int:
        """The policy's action for this observation, restricted to the legal ones."""
        obs = torch.as_tensor(observation["observation"], dtype=torch.float32)
        mask = torch.as_tensor(observation["action_mask"])
        logits = self.policy(obs, mask)
        if self.temperature == 0:
            return int(torch.argmax(logits))
        probs = torch.softmax(logits / self.temperature, dim=-1).numpy().astype(np.float64)
        return int(self.rng.choice(len(probs), p=probs / probs.sum()))
