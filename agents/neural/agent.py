"""The network agent: a policy network acting on one seat's observation, always legally.

:class:`NeuralAgent` acts greedily on the legal logits (``temperature=0``) or samples at a
temperature from its seeded generator; it only ever returns a legal action, even from a network
whose logits are NaN or infinite (see :meth:`NeuralAgent.act`). Built from a checkpoint file
(:meth:`NeuralAgent.from_checkpoint`), it plays the network shared by every agent of that file's
content (:mod:`ginenv.agents.neural.shared`). :func:`shipped_agent` is the registered ``neural``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import torch
from ginenv.agents.base import Agent, Observation
from ginenv.agents.neural.network import MaskedPolicy
from ginenv.agents.neural.policy_file import CheckpointError, PathLike
from ginenv.agents.neural.shared import shared_policy_and_digest
from ginenv.agents.neural.threads import one_thread
from ginenv.agents.shipped import SHIPPED_CHECKPOINT

__all__ = ["NeuralAgent", "shipped_agent"]


class NeuralAgent(Agent):
    """Acts with a :class:`MaskedPolicy`: argmax of the legal logits, or sampled at a temperature."""

    name = "neural"

    def __init__(
        self,
        policy: MaskedPolicy,
        seed: int | None = None,
        temperature: float = 0.0,
        digest: str | None = None,
    ) -> None:
        """Wrap a policy network; ``temperature`` 0 is greedy; ``digest`` records the file's sha256."""
        super().__init__(seed)
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
            raise ValueError(f"temperature must be a number >= 0, got {temperature!r}")
        if not math.isfinite(temperature) or temperature < 0:
            raise ValueError(f"temperature must be a finite number >= 0, got {temperature!r}")
        self.policy = policy
        self.temperature = float(temperature)
        #: sha256 of the checkpoint file the network came from (None for a network built in memory).
        self.digest = digest

    @classmethod
    def from_checkpoint(
        cls, path: PathLike, seed: int | None = None, temperature: float = 0.0, digest: str | None = None
    ) -> NeuralAgent:
        """A fresh agent on the shared network of a checkpoint file (see :func:`shared_policy`)."""
        policy, found = shared_policy_and_digest(path, digest)
        return cls(policy, seed=seed, temperature=temperature, digest=found)

    @torch.no_grad()
    def act(self, observation: Observation) -> int:
        """The policy's action for this observation, always a legal one.

        Only legal actions with finite logits are considered; if no legal action has a finite
        logit (a broken network), a uniformly random legal action is played, and the first time
        a network gives a non-finite logit on a legal action, a RuntimeWarning says so.
        """
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("the observation's action_mask has no legal action")
        obs = self.policy.prepare(np.asarray(observation["observation"], dtype=np.float32)[None])
        with one_thread():  # one observation: more threads only wait on each other, or on a taken core
            values = self.policy(obs)[0, torch.as_tensor(legal)].double().numpy()
        finite = np.isfinite(values)
        if not finite.all():
            self._warn_nonfinite(int(finite.sum()), legal.size)
            if not finite.any():
                return int(self.rng.choice(legal))
            legal, values = legal[finite], values[finite]
        if self.temperature == 0:
            return int(legal[np.argmax(values)])
        weights = np.exp((values - values.max()) / self.temperature)
        return int(self.rng.choice(legal, p=weights / weights.sum()))

    def _warn_nonfinite(self, finite: int, legal: int) -> None:
        if self.policy.warned_nonfinite:
            return
        self.policy.warned_nonfinite = True
        fallback = (
            "choosing among the legal actions with finite logits"
            if finite
            else "playing a uniformly random legal action"
        )
        warnings.warn(
            f"agent {self.name!r}: the network gave NaN or infinite logits on {legal - finite} of "
            f"{legal} legal actions; {fallback} (warned once per network)",
            RuntimeWarning,
            stacklevel=3,
        )


def shipped_agent(seed: int | None = None, temperature: float = 0.0) -> NeuralAgent:
    """The registered agent ``neural``: a fresh agent on the shipped network (shared, read-only)."""
    if not SHIPPED_CHECKPOINT.is_file():
        raise CheckpointError(
            f"the shipped network {SHIPPED_CHECKPOINT} is missing from this installation; "
            "reinstall ginenv, or play a network of your own as checkpoint:PATH"
        )
    return NeuralAgent.from_checkpoint(SHIPPED_CHECKPOINT, seed=seed, temperature=temperature)
