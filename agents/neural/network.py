"""The policy network: a masked MLP from an observation to one logit per action, with a card head.

:class:`MaskedPolicy` reads the network input built from an observation (:meth:`MaskedPolicy.prepare`:
one of :data:`ginenv.features.INPUT_KINDS`) and gives one logit per action id; illegal actions get
``-inf`` when a mask is given. Its optional card head is one small MLP shared by the 52 cards
(:func:`card_channels`, :func:`per_card_columns`). The layers' names do not depend on the activation
(:data:`ACTIVATIONS`), so a checkpoint (:mod:`ginenv.agents.neural.policy_file`) names the same
parameters whichever it declares.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, NUM_ACTIONS
from ginenv.cards import NUM_CARDS
from ginenv.features import FEATURE_PLANES, input_size, policy_inputs
from ginenv.observation import NUM_PLANES, OBS_SIZE, PLANE_BASE, plane_slice
from ginenv.validation import is_int

__all__ = ["ACTIVATIONS", "MaskedPolicy", "card_channels", "per_card_columns"]

#: The nonlinearities a MaskedPolicy may put between its layers, by their checkpoint name.
ACTIVATIONS: dict[str, type[nn.Module]] = {"relu": nn.ReLU, "tanh": nn.Tanh}

_TOP = plane_slice("top")
_FEATURE_PLANES = len(FEATURE_PLANES)


def card_channels(inputs: str) -> int:
    """Entries the card head reads per card: the card's column of every plane, and the scalars."""
    if inputs == "features":
        return NUM_PLANES + _FEATURE_PLANES + PLANE_BASE + 1
    return NUM_PLANES + PLANE_BASE


def per_card_columns(x: torch.Tensor, inputs: str) -> torch.Tensor:
    """(B, 52, :func:`card_channels`): for each card, its entry in every plane of the prepared
    input ``x`` (B, input size), followed by the input's scalars (the same for every card)."""
    batch = x.shape[0]
    planes = [x[:, PLANE_BASE : PLANE_BASE + NUM_PLANES * NUM_CARDS].reshape(batch, NUM_PLANES, NUM_CARDS)]
    scalars = [x[:, :PLANE_BASE]]
    if inputs == "features":
        end = OBS_SIZE + _FEATURE_PLANES * NUM_CARDS
        planes.append(x[:, OBS_SIZE:end].reshape(batch, _FEATURE_PLANES, NUM_CARDS))
        scalars.append(x[:, end:])
    columns = torch.cat(planes, dim=1).transpose(1, 2)
    shared = torch.cat(scalars, dim=1)
    return torch.cat([columns, shared[:, None, :].expand(batch, NUM_CARDS, shared.shape[1])], dim=2)


class MaskedPolicy(nn.Module):
    """An MLP from a network input (built from the observation by :meth:`prepare`) to one logit per
    action id."""

    def __init__(
        self,
        obs_size: int | None = None,
        hidden: Sequence[int] = (256, 256),
        num_actions: int = NUM_ACTIONS,
        inputs: str = "observation",
        activation: str = "relu",
        card_hidden: int = 0,
    ):
        """Layers ``obs_size -> hidden... -> num_actions`` with ``activation`` between them.

        ``inputs``: one of :data:`ginenv.features.INPUT_KINDS`; ``obs_size`` defaults to (and must
        equal) that input's size. ``activation``: a name in :data:`ACTIVATIONS` (``"relu"`` or
        ``"tanh"``). The Linear layers sit at the even indices of ``self.net``, the activations
        between them, so the parameter names do not depend on the activation.

        ``card_hidden`` > 0 adds the card head: one small MLP (``card_channels -> card_hidden -> 3``,
        ReLU), shared by the 52 cards, reads each card's column of the 4x13 planes (the
        observation's, and the deadwood features' with ``inputs="features"``) beside the scalars
        of the observation, and adds to the logits of discarding that card, knocking with it, and
        taking it when it is the top of the discard pile. A plain MLP must learn the same rule
        once per card through its own weights; this head learns it once for all of them.
        """
        super().__init__()
        size = input_size(inputs)
        if obs_size is None:
            obs_size = size
        if obs_size != size:
            raise ValueError(f"a network reading inputs {inputs!r} takes {size} entries, not {obs_size}")
        if not isinstance(activation, str) or activation not in ACTIVATIONS:
            allowed = " or ".join(map(repr, ACTIVATIONS))
            raise ValueError(f"activation must be {allowed}, got {activation!r}")
        self.obs_size, self.hidden, self.num_actions = obs_size, tuple(hidden), num_actions
        self.inputs = inputs
        #: The nonlinearity between the layers, a name in :data:`ACTIVATIONS`.
        self.activation = activation
        layers: list[nn.Module] = []
        width = obs_size
        for h in self.hidden:
            layers += [nn.Linear(width, h), ACTIVATIONS[activation]()]
            width = h
        layers.append(nn.Linear(width, num_actions))
        self.net = nn.Sequential(*layers)
        if not is_int(card_hidden) or card_hidden < 0:
            raise ValueError(f"card_hidden must be an integer >= 0, got {card_hidden!r}")
        self.card_hidden = card_hidden
        if card_hidden:
            self.card = nn.Sequential(
                nn.Linear(card_channels(inputs), card_hidden), nn.ReLU(), nn.Linear(card_hidden, 3)
            )
        # Set once a NeuralAgent has warned about non-finite logits of this network: agents are
        # built fresh for every game but share the network, and one warning per network is enough.
        self.warned_nonfinite = False

    def prepare(self, observations: np.ndarray) -> torch.Tensor:
        """The network input for a batch of observation vectors (B, OBS_SIZE), as a float tensor."""
        return torch.from_numpy(policy_inputs(observations, self.inputs))

    def logits_and_features(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Raw logits and the last hidden layer (what auxiliary heads read) for prepared inputs."""
        feats = self.net[:-1](obs)
        logits = self.net[-1](feats)
        if self.card_hidden:
            logits = logits + self.card_logits(obs)
        return logits, feats

    def card_logits(self, x: torch.Tensor) -> torch.Tensor:
        """The card head's additions to the logits: take (as the top card), discard, knock."""
        columns = per_card_columns(x, self.inputs)
        out = self.card(columns)  # (B, 52, 3)
        top = x[:, _TOP]
        batch = x.shape[0]
        take = (top * out[..., 0]).sum(-1, keepdim=True)
        before = x.new_zeros((batch, DRAW_DISCARD))
        between = x.new_zeros((batch, DISCARD_BASE - DRAW_DISCARD - 1))
        return torch.cat([before, take, between, out[..., 1], out[..., 2]], dim=1)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Logits for prepared inputs (:meth:`prepare`); illegal actions (mask 0) get ``-inf`` when
        a mask is given."""
        logits = self.logits_and_features(obs)[0]
        if mask is not None:
            logits = logits.masked_fill(mask == 0, float("-inf"))
        return logits
