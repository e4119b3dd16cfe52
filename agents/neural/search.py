"""master_net and master_prior: master's search, helped by the shipped network.

``master_net`` reads the opponent's hand with the network's head instead of the Bayesian model;
``master_prior`` (:class:`PriorMasterAgent`) keeps master's worlds and takes the network's policy
as a prior over the options master scores.

master (:mod:`ginenv.agents.levels.master`) decides by playing each option out in hundreds of worlds,
each an opponent hand and a stock order drawn from its Bayesian opponent model
(:class:`ginenv.agents.levels.belief.OpponentModel`). That model's probabilities are overconfident:
in notebook 03 its 0.95 came true 0.83 of the time. The shipped network's opponent-hand head, trained
beside the policy on the true hands, is calibrated (its 0.94 came true 0.94 of the time;
docs/training.md).

Strategy, precisely: master's, decision for decision (the same candidates, worlds, rollouts,
margins and tie-breaks), except that the weight of each unseen card in the world sampler is the
head's odds ``p / (1 - p)`` for that card at this decision, read from this seat's observation alone
(:func:`ginenv.agents.neural.opponent_hand_predictor`), instead of the model's event factors. The
sampled hands then go through master's own hand-quality tilt (a hand the opponent would have knocked
with is less likely), and the expert's evaluation, which master prunes with, reads the same
weights. One small forward pass a decision; everything else is master's.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np
import torch
from ginenv.agents.base import Observation
from ginenv.agents.levels.belief import BeliefParams, OpponentModel
from ginenv.agents.levels.master import MasterAgent
from ginenv.agents.neural import SHIPPED_CHECKPOINT, MaskedPolicy, opponent_hand_predictor, shared_policy

from ginenv.actions import DISCARD_BASE, KNOCK_BASE
from ginenv.rules import Rules

#: Probabilities are kept inside [EPS, 1 - EPS] before they become odds (a card the head is sure
#: of must still be possible in a world).
EPS = 1e-3


class HeadBelief(OpponentModel):
    """The opponent model with its card weights replaced by the network head's odds (when set)."""

    def __init__(self, params: BeliefParams | None = None) -> None:
        """As :class:`OpponentModel`; :meth:`set_head` gives the weights of the next decision."""
        super().__init__(params)
        self._head_logw: np.ndarray | None = None

    def set_head(self, probabilities: np.ndarray) -> None:
        """The head's probability for each of the 52 cards at this decision (unseen cards used)."""
        p = np.clip(np.asarray(probabilities, dtype=np.float64), EPS, 1.0 - EPS)
        self._head_logw = np.log(p) - np.log1p(-p)
        self._cache.clear()

    def log_weights(self) -> np.ndarray:
        """The head's log-odds when set, else the model's own factors."""
        if self._head_logw is None:
            return super().log_weights()
        return self._head_logw


@lru_cache(maxsize=8)
def _predictor(path: str) -> Callable[[np.ndarray], np.ndarray]:
    # One read of the checkpoint per process: every agent of a run shares it (read-only).
    return opponent_hand_predictor(path)


class NetMasterAgent(MasterAgent):
    """master's search in worlds drawn from the network's reading of the opponent's hand."""

    name = "master_net"

    def __init__(
        self,
        seed: int | None = None,
        rules: Rules | None = None,
        checkpoint: str | Path = SHIPPED_CHECKPOINT,
        **params: float,
    ) -> None:
        """As :class:`MasterAgent`; ``checkpoint``: a checkpoint with an opponent-hand head (the
        shipped network by default)."""
        super().__init__(seed, rules, None, **params)
        self.head_model = HeadBelief(self.model.params)
        self.model = self.head_model
        self.predict = _predictor(str(checkpoint))

    def act(self, observation: Observation) -> int:
        """Read the opponent's hand with the head, then decide as master does."""
        vector = np.asarray(observation["observation"], dtype=np.float32)[None]
        self.head_model.set_head(self.predict(vector)[0])
        return super().act(observation)


class PriorMasterAgent(MasterAgent):
    """master's search with the shipped network's policy as a prior over the scored options.

    Strategy, precisely: master decides as usual (the same candidates, worlds and rollouts), which
    leaves the mean points of every option it simulated (:attr:`MasterAgent.option_values`). Where
    it scored two or more, the option played is the one with the best
    ``value + temperature * log pi(option)``, ``pi`` the network's policy over the legal actions
    of this observation (a plain discard beside a knock also pays master's ``play_on_margin``, as
    in master). ``temperature`` is in points per nat: the network's preference of one nat
    is worth that many points of master's estimate, so near-ties in master's noisy values go the
    network's way and clear differences stay master's. Where master scored fewer than two options
    (gin, one candidate, a useless take passed over), master's choice is played. This is the
    decision that soft-target cloning (``bc train --value-temperature``) teaches a network. One
    forward pass a decision beside master's search.
    """

    name = "master_prior"
    #: Points per nat of the network's log-probabilities (1.0 measured best of 0.5, 1, 2 and 4;
    #: docs/reports/2026-12-02-master-prior.md).
    temperature: float = 1.0
    #: The policy network of the prior (the shipped network by default), a checkpoint file.
    checkpoint: str = str(SHIPPED_CHECKPOINT)

    @cached_property
    def policy(self) -> MaskedPolicy:
        """The prior's network, read once per process and shared (read-only)."""
        return shared_policy(self.checkpoint)

    @torch.no_grad()
    def act(self, observation: Observation) -> int:
        """Master's decision, re-ranked by the network's prior where master scored two or more options."""
        chosen = super().act(observation)
        values = self.option_values
        if len(values) < 2:
            return chosen
        obs = self.policy.prepare(np.asarray(observation["observation"], dtype=np.float32)[None])
        mask = torch.as_tensor(np.asarray(observation["action_mask"], dtype=bool))[None]
        log_prior = self.policy(obs, mask).log_softmax(1)[0].double().numpy()
        knock = any(a >= KNOCK_BASE for a in values)

        def score(action: int) -> float:
            margin = self.play_on_margin if knock and DISCARD_BASE <= action < KNOCK_BASE else 0.0
            return values[action] - margin + self.temperature * float(log_prior[action])

        return max(values, key=score)


__all__ = ["EPS", "HeadBelief", "NetMasterAgent", "PriorMasterAgent"]
