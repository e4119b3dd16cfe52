"""The networks a PPO run trains and the masked-policy arithmetic of the update and the rollouts.

:class:`ActorCritic` holds the policy, a :class:`ginenv.agents.neural.MaskedPolicy` (so a
checkpoint plays in the harness as ``checkpoint:PATH``): an MLP plus a card head, one small MLP
shared by the 52 cards over their columns of the 4x13 planes, which adds to the logits of
discarding, knocking with and taking each card (``card_hidden``); the value function, a separate
MLP; and an auxiliary head on the policy's last hidden layer that predicts the opponent's hand (52
logits, binary cross-entropy on the unseen cards against the opponent's true cards: a training
loss only, never an input). Both networks read the observation with per-card deadwood features
(:mod:`ginenv.features`, ``inputs``).

With ``critic_inputs="oracle"`` the value MLP also reads what the learner cannot see
(:data:`ORACLE_SIZE` entries, :func:`ginenv.experiments.train.rollouts.oracle_inputs`): the
opponent's hand, with its deadwood features, and the next :data:`ORACLE_STOCK` cards of the stock.
This is an asymmetric actor-critic (Pinto et al. 2018; the "oracle" of Suphx, Li et al. 2020): the
critic is a training baseline only, never part of a policy checkpoint or of any agent, so the
policy still sees only its seat's observation. Its point is the deal's luck: a value that knows the
cards takes more of the hand's luck out of the advantages than the value of the learner's own view
can.

Illegal actions are masked out of the logits (``-inf``): they are never sampled, have exactly zero
probability, and are left out of the entropy (:func:`masked_log_probs`).
"""

from __future__ import annotations

from functools import cache

import torch
from ginenv.agents.neural import MaskedPolicy
from ginenv.experiments.train.args import CRITIC_INPUTS, Args
from torch import nn

from ginenv.actions import NUM_ACTIONS
from ginenv.cards import NUM_CARDS
from ginenv.features import FEATURE_SIZE, input_size
from ginenv.observation import plane_slice

_UNSEEN = plane_slice("unseen")

#: Stock cards, top first, an oracle critic sees (one 52-card one-hot block each).
ORACLE_STOCK = 4
#: Entries of the oracle inputs (:func:`ginenv.experiments.train.rollouts.oracle_inputs`): the
#: opponent's hand, the stock blocks, then the opponent's hand features.
ORACLE_SIZE = NUM_CARDS * (1 + ORACLE_STOCK) + FEATURE_SIZE


class ActorCritic(nn.Module):
    """The policy (a MaskedPolicy), a separate value MLP and the opponent-hand head."""

    def __init__(
        self,
        hidden: list[int] | tuple[int, ...],
        inputs: str = "features",
        card_hidden: int = 0,
        critic_inputs: str = "observation",
    ) -> None:
        """MLPs ``input -> hidden... -> 108`` (policy, with a card head of ``card_hidden`` units) and
        ``-> 1`` (value); aux ``hidden[-1] -> 52``; ``inputs`` is the input kind of
        :mod:`ginenv.features` both read; ``critic_inputs="oracle"``: the value MLP also reads
        the oracle inputs (pass them to :meth:`forward` and :meth:`value`)."""
        super().__init__()
        if critic_inputs not in CRITIC_INPUTS:
            raise ValueError(
                f"critic_inputs must be one of {', '.join(CRITIC_INPUTS)}, got {critic_inputs!r}"
            )
        self.oracle = critic_inputs == "oracle"
        self.actor = MaskedPolicy(None, hidden, NUM_ACTIONS, inputs=inputs, card_hidden=card_hidden)
        layers: list[nn.Module] = []
        width = input_size(inputs) + (ORACLE_SIZE if self.oracle else 0)
        for h in hidden:
            layers += [nn.Linear(width, h), nn.Tanh()]
            width = h
        layers.append(nn.Linear(width, 1))
        self.critic = nn.Sequential(*layers)
        # Reads the policy's features, so predicting the opponent's cards shapes what the policy sees.
        self.aux = nn.Linear(hidden[-1], NUM_CARDS)

    @classmethod
    def for_args(cls, args: Args) -> ActorCritic:
        """The networks a run with ``args`` trains."""
        return cls(args.hidden, args.inputs, args.card_hidden, args.critic_inputs)

    def value(self, obs: torch.Tensor, oracle: torch.Tensor | None = None) -> torch.Tensor:
        """The value (B,) of the inputs ``obs``; an oracle critic also reads ``oracle`` (B, ORACLE_SIZE)."""
        if self.oracle:
            if oracle is None:
                raise ValueError("an oracle critic needs its oracle inputs (oracle_inputs)")
            obs = torch.cat([obs, oracle], dim=1)
        return self.critic(obs).squeeze(-1)

    def forward(
        self, obs: torch.Tensor, oracle: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(logits, value, aux_logits)``: raw logits (mask them), value (B,), 52 card logits;
        ``oracle``: an oracle critic's extra inputs (:meth:`value`)."""
        logits, feats = self.actor.logits_and_features(obs)
        return logits, self.value(obs, oracle), self.aux(feats)


@cache  # the update asks once per minibatch; the hardware does not change within a process
def native_bf16(device: torch.device) -> bool:
    """Whether ``device`` computes bfloat16 matrix products natively: a CUDA GPU that supports them,
    or a CPU with AVX512-BF16 or AMX (read from Linux's ``/proc/cpuinfo``; elsewhere, no). Without
    it torch emulates bfloat16 and the products are no faster than fp32."""
    if device.type == "cuda":
        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    if device.type != "cpu":
        return False
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def resolved_precision(precision: str, device: torch.device) -> str:
    """``Args.precision`` as run on ``device``: ``auto`` is ``bf16`` where the device computes it
    natively (:func:`native_bf16`) and ``fp32`` elsewhere; ``fp32`` and ``bf16`` are themselves.
    bf16 learns as well as fp32 here and steps 1.23x faster
    (docs/reports/2026-12-05-league-with-the-shipped-network-and-bf16.md)."""
    if precision == "auto":
        return "bf16" if native_bf16(device) else "fp32"
    return precision


def matmul_precision(precision: str, device: torch.device) -> torch.autocast:
    """The autocast context of ``Args.precision`` on ``device`` (:func:`resolved_precision`):
    bfloat16 matrix products for bf16, a no-op for fp32. Callers take ``.float()`` of what comes out
    before any softmax or loss."""
    bf16 = resolved_precision(precision, device) == "bf16"
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=bf16)


def masked_log_probs(logits: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities over the legal actions only, and the entropy over them.

    Illegal actions (``mask`` False) get ``-inf`` logits, so exactly zero probability; their terms
    are dropped from the entropy (``0 * -inf`` would be NaN). Every row needs a legal action.
    """
    logp = torch.log_softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)
    probs = logp.exp()
    entropy = -(probs * logp.masked_fill(~mask, 0.0)).sum(-1)
    return logp, entropy


def sample_actions(logits: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One action per row from the masked policy (never an illegal one: its probability is 0)."""
    logp, _ = masked_log_probs(logits, mask)
    return torch.multinomial(logp.exp(), 1, generator=generator).squeeze(-1)


def unseen_card_loss(aux_logits: torch.Tensor, opponent: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
    """Mean binary cross-entropy of the opponent-hand head over the unseen cards of each input.

    The other cards are known from the observation (own hand and discard pile: not the opponent's;
    cards it took from the pile: its own), so only the unseen ones are worth predicting, and
    :func:`ginenv.agents.neural.opponent_hand_predictor` fills in the known ones.
    """
    unseen = (inputs[:, _UNSEEN] > 0.5).float()
    each = nn.functional.binary_cross_entropy_with_logits(aux_logits, opponent, reduction="none")
    return (each * unseen).sum() / unseen.sum().clamp(min=1.0)


def network_weights(net: nn.Module) -> dict[str, torch.Tensor]:
    """``net``'s state dict on the CPU (what the learner sends its workers)."""
    return {k: v.detach().cpu() for k, v in net.state_dict().items()}
