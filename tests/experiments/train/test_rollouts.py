"""Rollout collection (ginenv.experiments.train.rollouts) and the advantages of its decisions
(ginenv.experiments.train.ppo): GAE over the learner's own decisions, potential shaping, the
opponent's hand as 0/1 columns, and a worker's rollout holding only the learner's legal decisions,
the same for the same seed, and an oracle critic's inputs recorded beside each decision, laid out
by oracle_inputs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from ginenv.experiments.train.actor_critic import ORACLE_SIZE, ORACLE_STOCK, ActorCritic, network_weights
from ginenv.experiments.train.ppo import learner_batch, learner_gae, potential_shaping
from ginenv.experiments.train.rollouts import (
    RolloutWorker,
    collect_overlapped,
    oracle_inputs,
    unpack_card_masks,
)

from ginenv.cards import NUM_CARDS, mask_of, parse_cards
from ginenv.features import FEATURE_SIZE, POINTS, scaled_hand_features

# --- GAE over the learner's own decisions ----------------------------------------------------------


def gae(valid, term, trunc, rew, val, next_value, trunc_val=None, gamma=0.9, lam=0.5):  # type: ignore[no-untyped-def]
    as_t = lambda x, d=torch.float32: torch.tensor(x, dtype=d)[:, None]  # noqa: E731
    out = learner_gae(
        as_t(rew), as_t(val), as_t(valid, torch.bool), as_t(term, torch.bool), as_t(trunc, torch.bool),
        as_t(trunc_val or [0.0] * len(rew)), torch.tensor([next_value]), gamma, lam,
    )  # fmt: skip
    return out[:, 0].tolist()


def test_gae_skips_the_opponents_steps_and_stops_at_the_hand_end() -> None:
    # Steps 0, 2, 3 are the learner's; its hand ends after step 2 (reward 1.0 there); step 3 is
    # the first decision of the next hand, still open at the end (bootstrap 0.5).
    adv = gae(
        valid=[1, 0, 1, 1], term=[0, 0, 1, 0], trunc=[0, 0, 0, 0],
        rew=[0, 0, 1.0, 0], val=[0.2, 9.0, 0.4, 0.1], next_value=0.5,
    )  # fmt: skip
    d2 = 1.0 - 0.4  # terminated: no bootstrap
    d0 = 0.9 * 0.4 - 0.2  # the opponent's step 1 is skipped: the next decision is step 2
    assert adv[1] == 0.0
    assert adv[2] == pytest.approx(d2)
    assert adv[0] == pytest.approx(d0 + 0.9 * 0.5 * d2)
    assert adv[3] == pytest.approx(0.9 * 0.5 - 0.1)  # not chained into the ended hand


def test_a_truncated_hand_bootstraps_from_its_final_view() -> None:
    adv = gae(
        valid=[1, 1], term=[0, 0], trunc=[1, 0], rew=[0, 0], val=[0.3, 0.7], next_value=2.0,
        trunc_val=[0.45, 0.0],
    )  # fmt: skip
    assert adv[0] == pytest.approx(0.9 * 0.45 - 0.3)  # the final view's value, not the next hand's


def test_shaping_pays_the_change_of_potential_and_nothing_after_a_hand_ends() -> None:
    # One slot: decisions at steps 0 and 2; the hand ends after step 2; the rollout ends open at 0.7.
    potential = torch.tensor([[-0.5], [0.0], [-0.2]])
    valid = torch.tensor([[True], [False], [True]])
    ended = torch.tensor([[False], [False], [True]])
    shaped = potential_shaping(potential, valid, ended, torch.tensor([0.7]), gamma=0.9)[:, 0].tolist()
    assert shaped[0] == pytest.approx(0.9 * -0.2 + 0.5)  # the next decision is step 2's
    assert shaped[1] == 0.0
    assert shaped[2] == pytest.approx(0.2)  # its hand is over: the next potential is 0


def test_card_masks_unpack_into_one_column_per_card() -> None:
    masks = np.array([mask_of(parse_cards("As Td Kc")), 0], dtype=np.int64)
    unpacked = unpack_card_masks(masks)
    assert unpacked.shape == (2, 52) and unpacked.dtype == np.float32
    assert sorted(np.flatnonzero(unpacked[0])) == sorted(parse_cards("As Td Kc"))
    assert not unpacked[1].any()


def test_a_rollout_holds_the_learners_legal_decisions_and_follows_the_seed(tiny) -> None:  # type: ignore[no-untyped-def]
    args = tiny(eval_every=0)
    weights = network_weights(ActorCritic.for_args(args))
    first = learner_batch([RolloutWorker(args, 0, args.num_envs, weights).collect(None)], args)
    again = learner_batch([RolloutWorker(args, 0, args.num_envs, weights).collect(None)], args)
    other = RolloutWorker(args, 1, args.num_envs, weights).collect(None)
    decisions = len(first.actions)
    assert 0.3 * args.num_envs * args.num_steps < decisions < 0.7 * args.num_envs * args.num_steps
    assert bool(first.mask[torch.arange(decisions), first.actions].all())
    assert torch.allclose(first.returns, first.advantages + first.values)
    assert torch.equal(first.actions, again.actions) and torch.equal(first.advantages, again.advantages)
    assert not (len(other.actions) == decisions and torch.equal(other.actions, first.actions))


def test_overlapped_workers_collect_what_each_collects_alone(tiny) -> None:  # type: ignore[no-untyped-def]
    # Every kind of league member (the compiled greedy, random, which draws from the engine's
    # generator, and hard; snapshots), the greedy teacher and a truncated hand or two (turn limit
    # 10): three workers' steps interleaved, the engines on another thread, then each worker alone.
    args = tiny(
        eval_every=0, turn_limit=10, opponents={"greedy": 0.3, "random": 0.2, "hard": 0.2, "snapshot": 0.3}
    )
    weights = network_weights(ActorCritic.for_args(args))
    shard = args.num_envs // 4

    def workers() -> list[RolloutWorker]:
        return [RolloutWorker(args, i, shard, weights) for i in range(3)]

    together, alone = workers(), workers()
    for update in range(2):  # the second rollout goes on from the hands the first left open
        interleaved = collect_overlapped(together, weights, update == 1, teach=True)
        single = [w.collect(weights, update == 1, teach=True) for w in alone]
        for a, b in zip(interleaved, single, strict=True):
            for field in dataclasses.fields(a):
                x, y = getattr(a, field.name), getattr(b, field.name)
                if isinstance(x, torch.Tensor):
                    assert torch.equal(x, y), field.name
                elif field.name not in ("env_seconds", "inference_seconds"):
                    assert x == y, field.name
    assert any(bool(r.truncated.any()) for r in interleaved)
    assert any(bool(r.teacher.any()) for r in interleaved)


def test_oracle_inputs_hold_the_opponents_hand_then_one_block_per_stock_card() -> None:
    hands = np.array([mask_of(parse_cards("As Td Kc")), 0], dtype=np.int64)
    tops = np.array([parse_cards("2h 3h 4h 5h"), [*parse_cards("9c"), -1, -1, -1]], dtype=np.int64)
    assert tops.shape[1] == ORACLE_STOCK
    full = oracle_inputs(hands[:1].repeat(2), tops)
    assert full.shape == (2, ORACLE_SIZE)
    # Last, the opponent's deadwood features, as the policy's own: As + Td + Kc, 21 points here.
    np.testing.assert_array_equal(full[:, -FEATURE_SIZE:], scaled_hand_features(hands[:1].repeat(2)))
    assert full[0, -1] * POINTS == pytest.approx(21)
    out = oracle_inputs(hands, tops)[:, : NUM_CARDS * (1 + ORACLE_STOCK)].reshape(
        2, 1 + ORACLE_STOCK, NUM_CARDS
    )
    assert sorted(np.flatnonzero(out[0, 0])) == sorted(parse_cards("As Td Kc"))
    for block, name in enumerate(["2h", "3h", "4h", "5h"], start=1):
        assert np.flatnonzero(out[0, block]).tolist() == parse_cards(name)
    # Past the stock's end a block is all zero.
    assert not out[1, 0].any() and np.flatnonzero(out[1, 1]).tolist() == parse_cards("9c")
    assert not out[1, 2:].any()


def test_an_oracle_critics_rollout_records_the_hidden_cards(tiny) -> None:  # type: ignore[no-untyped-def]
    args = tiny(eval_every=0, critic_inputs="oracle")
    rollout = RolloutWorker(args, 0, args.num_envs, network_weights(ActorCritic.for_args(args))).collect(None)
    cards = rollout.oracle[:, : NUM_CARDS * (1 + ORACLE_STOCK)]
    blocks = cards.reshape(len(rollout.actions), 1 + ORACLE_STOCK, NUM_CARDS)
    # First the opponent's hand, the aux head's target; then the stock's next cards, one each, none
    # of them in the opponent's hand; then that hand's deadwood features (tested with the networks).
    assert torch.equal(blocks[:, 0], rollout.opp)
    per_block = blocks[:, 1:].sum(-1)
    assert bool(((per_block == 0) | (per_block == 1)).all()) and bool((per_block[:, 0] == 1).any())
    assert not bool((blocks[:, 1:] * blocks[:, :1]).any())
    assert torch.isfinite(learner_batch([rollout], args).advantages).all()
    # Without an oracle critic nothing hidden is recorded.
    plain_args = tiny(eval_every=0)
    plain = RolloutWorker(plain_args, 0, 32, network_weights(ActorCritic.for_args(plain_args))).collect(None)
    assert plain.oracle.shape == (len(plain.actions), 0)
