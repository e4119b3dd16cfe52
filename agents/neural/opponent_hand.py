"""The opponent's hand read by a network: the auxiliary head of a training checkpoint.

A trainer may save, beside the policy, a head on the policy's last hidden layer that predicts which
unseen cards the opponent holds (``training["aux"]``: trained on the true hands, kept by
:func:`~ginenv.agents.neural.policy_file.export_policy`). :func:`opponent_hand_predictor` turns it
into a function of one seat's observations, which master's searches with the network
(:mod:`ginenv.agents.neural.search`) and the notebooks read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from ginenv.agents.neural.policy_file import CheckpointError, check_state, read_checkpoint
from torch import nn

from ginenv.cards import NUM_CARDS
from ginenv.observation import plane_slice

__all__ = ["opponent_hand_predictor"]

_UNSEEN = plane_slice("unseen")
_OPPONENT_TAKEN = plane_slice("opponent_taken")


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
    head.load_state_dict(check_state(head, ckpt.training["aux"], "aux", str(path)))
    head.eval().requires_grad_(False)

    def predict(observations: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, dtype=np.float32)
        with torch.no_grad():
            probs = torch.sigmoid(head(policy.net[:-1](policy.prepare(obs)))).numpy()
        probs = np.where(obs[:, _UNSEEN] > 0.5, probs, 0.0)
        return np.where(obs[:, _OPPONENT_TAKEN] > 0.5, 1.0, probs).astype(np.float32)

    return predict
