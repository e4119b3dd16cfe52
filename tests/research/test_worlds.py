"""Sampled worlds of one position (research.worlds): the true world plays out as the AEC
env does, sampled worlds are checked and reproducible, and restocked copies redraw only the stock."""

from __future__ import annotations

import numpy as np
import pytest
from cut_hands import aec_for, cut_position

from ginenv import agents, kernels
from ginenv.cards import NUM_CARDS, cards_of, mask_of
from ginenv.vector import VectorError, VectorGinRummy
from research.worlds import restocked, rollout_worlds, world_records


def test_rollout_of_the_true_world_is_the_greedy_continuation() -> None:
    checked = 0
    for seed in range(40):
        position, played = cut_position(seed, 6 + seed % 20)
        if position.is_over:
            continue
        me = position.player
        truth = np.array([position.hands[1 - me]])
        stock = np.array([position.stock[::-1]])  # drawing order
        points = rollout_worlds(position, truth, stock, policy="greedy")
        env = aec_for(position.rules, position.turn_limit, np.array(position.deck), position.dealer)
        for action in played:
            env.step(action)
        players = [agents.make("greedy"), agents.make("greedy")]
        while not (env.terminations["player_0"] or env.truncations["player_0"]):
            agent = env.agent_selection
            env.step(players[int(agent[-1])].act(env.observe(agent)))
        assert points[0] == env.rewards[f"player_{me}"], seed
        checked += 1
    assert checked > 30


def test_rollout_of_sampled_worlds_and_bad_worlds() -> None:
    position, _ = cut_position(3, 8)
    me = position.player
    hidden = cards_of(position.hands[1 - me] | mask_of(position.stock))
    rng = np.random.default_rng(0)
    opps, stocks = [], []
    for _ in range(500):
        order = rng.permutation(hidden)
        opps.append(mask_of(order[:10].tolist()))
        stocks.append(order[10:])
    points = rollout_worlds(position, np.array(opps), np.array(stocks), policy="random", seed=1)
    assert points.shape == (500,) and len(set(points.tolist())) > 3
    again = rollout_worlds(position, np.array(opps), np.array(stocks), policy="random", seed=1)
    np.testing.assert_array_equal(points, again)
    mine = position.hands[me]
    with pytest.raises(VectorError, match="hidden from player"):
        rollout_worlds(position, np.array([mine]), np.array(stocks[:1]))
    with pytest.raises(VectorError, match=r"stocks \(W"):
        rollout_worlds(position, np.array(opps[:2]), np.array(stocks[:1]))
    with pytest.raises(VectorError, match="policy must be one of"):
        rollout_worlds(position, np.array(opps[:1]), np.array(stocks[:1]), policy="openspiel_simple")


def test_restocked_copies_keep_the_hands_and_redraw_only_the_stock_order() -> None:
    cuts = [p for p, _ in (cut_position(seed, 8 + seed) for seed in range(3)) if not p.is_over]
    records = np.concatenate([p.record for p in cuts])
    copies = restocked(records, 40, np.random.default_rng(0))
    assert copies.shape == (40 * len(cuts), records.shape[1])
    for k, p in enumerate(cuts):
        mine = copies[40 * k : 40 * (k + 1)]
        pos = NUM_CARDS - len(p.stock)
        stock = slice(kernels.hand.DECK + pos, kernels.hand.DECK + NUM_CARDS)
        outside = np.ones(records.shape[1], dtype=bool)
        outside[stock] = False
        # Both hands, the discard pile and the draws so far are the position's own ...
        assert (mine[:, outside] == p.record[0, outside]).all()
        # ... and each copy's stock holds the same cards, in orders that differ.
        assert all(sorted(row.tolist()) == sorted(p.stock) for row in mine[:, stock])
        assert len({tuple(row.tolist()) for row in mine[:, stock]}) > 30
        # Each copy is a real position: it plays on from the same public state.
        venv = VectorGinRummy(40, seed=k)
        obs, mask, _ = venv.start_from(mine)
        assert (obs == obs[0]).all() and (mask == mask[0]).all()
    with pytest.raises(VectorError, match="worlds must be a positive integer"):
        restocked(records, 0, np.random.default_rng(0))
    with pytest.raises(VectorError, match="records must be"):
        restocked(records[0], 2, np.random.default_rng(0))


def test_world_records_replace_only_the_hidden_cards() -> None:
    position, _ = cut_position(5, 10)
    me = position.player
    hidden = cards_of(position.hands[1 - me] | mask_of(position.stock))
    rng = np.random.default_rng(5)
    orders = [rng.permutation(hidden) for _ in range(6)]
    want = position.hands[1 - me].bit_count()
    opps = np.array([mask_of(o[:want].tolist()) for o in orders])
    stocks = np.array([o[want:] for o in orders])
    records = world_records(position, opps, stocks)
    hand = kernels.hand
    assert records.shape == (6, hand.RECORD_SIZE)
    assert (records[:, hand.HAND0 + me] == position.hands[me]).all()
    assert records[:, hand.HAND0 + 1 - me].tolist() == opps.tolist()
    start = hand.DECK + NUM_CARDS - len(position.stock)
    assert (records[:, start : hand.DECK + NUM_CARDS] == stocks).all()
    # Everything else (the pile, the public record, the phase, the dealt deck) is the position's own.
    stock = range(start, hand.DECK + NUM_CARDS)
    same = [c for c in range(hand.RECORD_SIZE) if c not in (hand.HAND0, hand.HAND1) and c not in stock]
    assert (records[:, same] == position.record[0, same]).all()
