"""The policy-weighted world sampler (research.beliefs): the opponent's past decisions are
rebuilt as the opponent saw them, the weights favour the true hand, the hands respect what the seat
knows, and the draws are exact and reproducible."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch
from ginenv.agents.levels.belief import OpponentModel
from ginenv.agents.neural import SHIPPED_CHECKPOINT, opponent_hand_predictor, shared_policy

from ginenv import agents, gin_rummy_v0
from ginenv.kernels.hand import Phase
from ginenv.kernels.meld_search import meldable
from ginenv.observation import decode
from research.beliefs import (
    PolicyBelief,
    conditional_hands,
    conditional_marginals,
    opponent_observations,
)

torch.set_num_threads(1)
#: Hands of the network against itself, replayed many times: over a minute in all (tests/conftest.py).
pytestmark = pytest.mark.long


def neural_games(
    games: int, proposal: str = "uniform", proposals: int = 64, max_turns: int = 20
) -> Iterator[tuple[PolicyBelief, int, list[tuple[np.ndarray, np.ndarray, int]]]]:
    """Hands of the network against itself; at each draw decision of seat 0 after a readable
    opponent turn: seat 0's belief (fed seat 0's observations only), the opponent's true hand (for
    the test's checks) and the opponent's real (observation, mask, action) at each of its decisions."""
    policy = shared_policy(SHIPPED_CHECKPOINT)
    head = opponent_hand_predictor(SHIPPED_CHECKPOINT) if proposal == "head" else None
    env = gin_rummy_v0.raw_env()
    for g in range(games):
        env.reset(seed=100 + g)
        players = [agents.make("neural"), agents.make("neural")]
        belief = PolicyBelief(policy, proposal, proposals, max_turns=max_turns, head=head)
        seen: list[tuple[np.ndarray, np.ndarray, int]] = []
        for agent_id in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            p = int(agent_id[-1])
            action = players[p].act(obs)
            if p == 1:
                seen.append((obs["observation"].copy(), obs["action_mask"].astype(bool), action))
            else:
                belief.update(obs["observation"])
                view = belief.record.view
                if view is not None and view.phase == Phase.DRAW and belief.turns:
                    yield belief, int(env.hand.hands[1]), seen
            env.step(action)


def test_the_opponents_decisions_are_rebuilt_as_it_saw_them() -> None:
    rng = np.random.default_rng(0)
    checked = deep = 0
    for belief, truth, seen in neural_games(6):
        turns = belief.turns
        # With the true hand now, the latest discard decision is rebuilt exactly.
        obs, mask, actions = opponent_observations(turns, np.array([truth]), rng)
        real_obs, real_mask, real_action = seen[-1]
        assert np.array_equal(obs[0, -1], real_obs)
        assert np.array_equal(mask[0, -1], real_mask)
        assert actions[-1] == real_action
        # Further back, the stock draws are drawn: among many copies of the true hand, every real
        # decision of the replayed turns is rebuilt by some copy (a wrong layout would match none).
        # (At most 11 choices a stock draw: 2000 copies cover the 121 histories of two turns.)
        if len(turns) >= 2:
            obs, mask, actions = opponent_observations(turns[-2:], np.full(2000, truth), rng)
            for k in range(4):
                real_obs, real_mask, real_action = seen[len(seen) - 4 + k]
                assert actions[k] == real_action
                assert (obs[:, k] == real_obs).all(1).any(), k
            deep += 1
        checked += 1
    assert checked > 30 and deep > 10


def test_the_weights_favour_the_true_hand() -> None:
    # The opponent is the network itself: its moves are likely for its true hand, less so for
    # hands that merely fit the public record.
    # Five hands (39 decisions), the last 8 of the opponent's turns weighing each (20 by default):
    # every turn replayed is a network call for each hand, most of this test's CPU.
    rng = np.random.default_rng(1)
    higher, total = 0, 0
    for belief, truth, _ in neural_games(5, max_turns=8):
        if len(belief.turns) < 3:
            continue
        hands, _ = belief.particles(rng)
        ll = belief.log_likelihood(np.concatenate([[truth], hands]), rng)
        higher += int(ll[0] > np.median(ll[1:]))
        total += 1
    assert total > 20
    assert higher / total > 0.8


def test_a_take_that_makes_a_meld_weighs_hands_that_hold_it() -> None:
    # When the opponent took the seat's discard, the hands in which that card joins a meld explain
    # the take: their weighted share exceeds their share among the proposals.
    rng = np.random.default_rng(2)
    gains = []
    for belief, _, _ in neural_games(20, proposals=256):
        last = belief.turns[-1]
        if not last.took:
            continue
        hands, w = belief.particles(rng)
        # Every candidate holds the card taken; does it make a meld there?
        melds = np.array([meldable(int(h)) >> last.offered & 1 for h in hands.tolist()], dtype=bool)
        if 0 < melds.mean() < 1:
            gains.append(float(w[melds].sum() - melds.mean()))
    assert len(gains) >= 5
    assert np.mean(gains) > 0.1


def test_hands_respect_what_the_seat_knows_and_are_reproducible() -> None:
    for belief, _, _ in neural_games(3, proposal="head"):
        view = belief.record.view
        assert view is not None
        hands = belief.sample_hands(50, np.random.default_rng(5))
        again = belief.sample_hands(50, np.random.default_rng(5))
        assert np.array_equal(hands, again)
        allowed = view.unseen | view.opponent_taken
        for h in hands.tolist():
            assert h.bit_count() == 10
            assert h & ~allowed == 0  # never the seat's own cards or the pile
            assert h & view.opponent_taken == view.opponent_taken  # the cards it took are held
        probs = belief.probabilities(np.random.default_rng(6))
        assert probs.sum() == pytest.approx(10.0, abs=1e-6)
        assert np.all(probs[[c for c in range(52) if not allowed >> c & 1]] == 0)


def test_conditional_draws_have_the_exact_marginals() -> None:
    env = gin_rummy_v0.raw_env()
    env.reset(seed=3)
    players = [agents.make("expert"), agents.make("expert")]
    model = OpponentModel()
    for _ in range(14):  # a few turns, so that the model's weights are not flat
        agent = env.agent_selection
        obs = env.observe(agent)
        if agent == "player_0":
            model.update(decode(obs["observation"]))
        env.step(players[int(agent[-1])].act(obs))
    view = model.view
    hands, log_q = conditional_hands(
        model.log_weights(), view.opponent_taken, view.unseen, model.slots, 20000, np.random.default_rng(4)
    )
    bits = (hands[:, None] >> np.arange(52)) & 1
    assert np.abs(bits.mean(0) - model.probabilities()).max() < 0.02
    exact = conditional_marginals(model.log_weights(), view.opponent_taken, view.unseen, model.slots)
    assert np.allclose(exact, model.probabilities(), atol=1e-9)
    logw = model.log_weights()
    # log q is the sum of the drawn cards' log weights, up to one shared constant.
    direct = np.array(
        [
            logw[[c for c in range(52) if view.unseen >> c & 1 and h >> c & 1]].sum()
            for h in hands[:50].tolist()
        ]
    )
    assert np.allclose(log_q[:50] - direct, (log_q[:50] - direct)[0])


def test_no_history_leaves_the_proposal_unweighted() -> None:
    env = gin_rummy_v0.raw_env()
    env.reset(seed=11)
    belief = PolicyBelief(shared_policy(SHIPPED_CHECKPOINT), "uniform", 32)
    belief.update(env.observe(env.agent_selection)["observation"])
    _, w = belief.particles(np.random.default_rng(0))
    assert np.allclose(w, 1 / 32)
    assert belief.ess == pytest.approx(32)
    # Without a turn to replay, worlds are fresh draws of the proposal (not copies of 32 particles).
    hands = belief.sample_hands(200, np.random.default_rng(1))
    assert len(set(hands.tolist())) == 200
    with pytest.raises(ValueError):
        PolicyBelief(shared_policy(SHIPPED_CHECKPOINT), "head")  # no head given


def test_adapted_replay_estimates_the_likelihood_summed_over_the_stock_draws() -> None:
    # Both replays estimate the same quantity without bias: the likelihood averaged over the unknown
    # stock draws. With one turn replayed the adapted one is exact, and many plain replays average
    # to it; with two, the two estimators' means agree.
    rng = np.random.default_rng(7)
    compared = 0
    for belief, truth, _ in neural_games(6):
        turns = belief.turns
        if len(turns) < 2 or turns[-1].took or turns[-2].took:
            continue
        hands = belief.sample_hands(3, rng)
        for h in (truth, *hands.tolist()):
            belief.max_turns = 1
            belief.adapt = True
            exact = belief.log_likelihood(np.array([h]), rng)[0]
            assert belief.log_likelihood(np.array([h]), rng)[0] == pytest.approx(exact)
            belief.adapt = False
            # 1500 and 3000 plain replays: the largest gaps seen are about half the tolerances.
            plain = belief.log_likelihood(np.full(1500, h), rng)
            assert np.log(np.exp(plain).mean()) == pytest.approx(exact, abs=0.1)
            belief.max_turns = 2
            plain = belief.log_likelihood(np.full(3000, h), rng)
            belief.adapt = True
            adapted = belief.log_likelihood(np.full(300, h), rng)
            assert np.log(np.exp(adapted).mean()) == pytest.approx(np.log(np.exp(plain).mean()), abs=0.25)
            assert adapted.std() < plain.std()  # the point of adapting: less noise
        compared += 1
        if compared == 4:
            break
    assert compared == 4


def test_the_ess_floor_tempers_a_collapsed_set_of_weights() -> None:
    for belief, _, _ in neural_games(3):
        if len(belief.turns) < 4:
            continue
        belief.proposals = 128
        _, w = belief.particles(np.random.default_rng(0))
        if belief.ess >= 0.2 * 128:
            continue
        belief.ess_floor = 0.2
        _, w = belief.particles(np.random.default_rng(0))
        assert belief.power < 1.0
        assert belief.ess >= 0.2 * 128 - 1e-6
        assert w.sum() == pytest.approx(1.0)
        return
    pytest.fail("no position collapsed the weights")
