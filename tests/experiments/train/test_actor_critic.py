"""The networks of a PPO run (ginenv.experiments.train.actor_critic): masking of illegal actions, exactly
zero probability and no share of the entropy, sampling only legal actions, and an oracle critic
whose inputs only the value reads."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from ginenv.experiments.train.actor_critic import ORACLE_SIZE, ActorCritic, masked_log_probs, sample_actions
from scenarios import DEALER, deck_with, play, start

from ginenv.actions import NUM_ACTIONS, action_id, action_name
from ginenv.features import input_size

# --- masking ---------------------------------------------------------------------------------------


def discard_position() -> dict:
    """The non-dealer's discard after taking the upcard 5s to its 3s 4s: 11 cards, knocks illegal."""
    env = start(deck_with("3s 4s 7c 8c 9d Jd Qh Kh 2d Ac", DEALER, "5s"))
    return play(env, "draw_discard")


def rigged_logits(legal: np.ndarray) -> torch.Tensor:
    """Illegal actions get far higher logits than legal ones: masking must still zero them."""
    logits = torch.full((1, NUM_ACTIONS), 50.0)
    logits[0, torch.as_tensor(legal)] = torch.linspace(-1.0, 1.0, len(legal))
    return logits


def test_illegal_actions_have_exactly_zero_probability_and_no_entropy_share() -> None:
    obs = discard_position()
    mask = torch.as_tensor(obs["action_mask"], dtype=torch.bool)[None]
    legal = np.flatnonzero(obs["action_mask"])
    assert {action_name(a) for a in legal} >= {"discard 7c", "discard Kh"}
    assert "draw_stock" not in {action_name(a) for a in legal}
    logits = rigged_logits(legal).requires_grad_(True)
    logp, entropy = masked_log_probs(logits, mask)
    probs = logp.exp()[0]
    assert torch.all(probs[~mask[0]] == 0.0)
    assert math.isclose(float(probs.detach().sum()), 1.0, rel_tol=1e-6)
    # The entropy is that of the legal actions alone, as if the illegal ones did not exist.
    only_legal = torch.distributions.Categorical(logits=logits[0, torch.as_tensor(legal)].detach())
    assert math.isclose(float(entropy.detach()), float(only_legal.entropy()), rel_tol=1e-5)
    entropy.sum().backward()
    assert torch.isfinite(logits.grad).all()
    assert torch.all(logits.grad[0, ~mask[0]] == 0.0)


def test_sampling_never_picks_an_illegal_action() -> None:
    obs = discard_position()
    mask = torch.as_tensor(obs["action_mask"], dtype=torch.bool)[None].repeat(4000, 1)
    logits = rigged_logits(np.flatnonzero(obs["action_mask"])).repeat(4000, 1)
    picked = sample_actions(logits, mask, torch.Generator().manual_seed(0))
    assert all(obs["action_mask"][a] for a in picked.tolist())
    assert len(set(picked.tolist())) > 1  # it samples, not argmax


def test_action_names_used_here_exist() -> None:
    for name in ("draw_discard", "discard 7c", "discard Kh"):
        assert action_name(action_id(name)) == name


# --- the oracle critic -----------------------------------------------------------------------------


def test_only_the_oracle_critics_value_reads_the_oracle_inputs() -> None:
    torch.manual_seed(0)
    net = ActorCritic([16], "features", 8, critic_inputs="oracle")
    obs = torch.rand(3, input_size("features"))
    first, second = torch.rand(3, ORACLE_SIZE), torch.rand(3, ORACLE_SIZE)
    logits_a, value_a, aux_a = net(obs, first)
    logits_b, value_b, aux_b = net(obs, second)
    # The policy and its opponent-hand head never see the hidden cards; the value does.
    assert torch.equal(logits_a, logits_b) and torch.equal(aux_a, aux_b)
    assert not torch.allclose(value_a, value_b)
    with pytest.raises(ValueError, match="needs its oracle inputs"):
        net(obs)
    with pytest.raises(ValueError, match="critic_inputs must be one of observation, oracle"):
        ActorCritic([16], critic_inputs="cheat")
