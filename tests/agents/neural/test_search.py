"""master_net (ginenv.agents.neural.search): master's search in worlds drawn from the network head."""

from __future__ import annotations

import numpy as np
from ginenv.agents.arena import play_game
from ginenv.agents.levels.belief import OpponentModel
from ginenv.agents.neural import SHIPPED_CHECKPOINT, opponent_hand_predictor
from ginenv.agents.neural.search import EPS, HeadBelief, NetMasterAgent

from ginenv import agents, gin_rummy_v0
from ginenv.observation import decode


def test_the_world_weights_are_the_heads_odds() -> None:
    env = gin_rummy_v0.raw_env()
    env.reset(seed=7)
    obs = env.observe(env.agent_selection)
    probs = opponent_hand_predictor(SHIPPED_CHECKPOINT)(obs["observation"][None])[0]
    model = HeadBelief()
    model.update(decode(obs["observation"]))
    plain = OpponentModel()
    plain.update(decode(obs["observation"]))
    assert np.array_equal(model.log_weights(), plain.log_weights())  # no head yet: the model's own
    model.set_head(probs)
    p = np.clip(probs, EPS, 1 - EPS)
    assert np.allclose(model.log_weights(), np.log(p / (1 - p)))
    # The sampled worlds hold the cards the seat cannot see, and the marginals follow the head.
    hands = model.sample_hands(400, np.random.default_rng(0), quality=False)
    seen = decode(obs["observation"])
    assert all(int(h) & seen.hand == 0 and int(h).bit_count() == 10 for h in hands)
    freq = np.array([[h >> c & 1 for c in range(52)] for h in hands.tolist()]).mean(axis=0)
    unseen = [c for c in range(52) if seen.unseen >> c & 1]
    assert np.corrcoef(freq[unseen], probs[unseen])[0, 1] > 0.8


def test_master_net_plays_a_whole_game_from_observations_only() -> None:
    player = agents.make("master_net", seed=1)
    assert isinstance(player, NetMasterAgent) and isinstance(player.model, HeadBelief)
    record = play_game(gin_rummy_v0.env(), [player, agents.make("greedy", seed=2)], seed=4)
    assert record.hands and record.forfeit is None
