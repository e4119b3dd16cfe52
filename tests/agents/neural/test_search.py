"""master_net and master_prior (ginenv.agents.neural.search): master's search in worlds drawn from
the network head, and master's values re-ranked by the network's policy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from ginenv.agents.arena import play_game
from ginenv.agents.levels.belief import OpponentModel
from ginenv.agents.levels.master import MasterAgent
from ginenv.agents.neural import SHIPPED_CHECKPOINT, opponent_hand_predictor, shared_policy
from ginenv.agents.neural.search import EPS, HeadBelief, NetMasterAgent, PriorMasterAgent

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


def _moves(players: list, seed: int) -> list[int]:
    moves: list[int] = []
    play_game(gin_rummy_v0.raw_env(), players, seed=seed, deal=3, on_decision=lambda *d: moves.append(d[2]))
    return moves


def test_master_prior_reranks_masters_scored_options_by_the_networks_log_probabilities() -> None:
    # Temperature 0: master's own decisions, move for move (the same seed draws the same worlds).
    plain = _moves([MasterAgent(seed=5), agents.make("expert", seed=6)], seed=9)
    zero = _moves([PriorMasterAgent(seed=5, temperature=0.0), agents.make("expert", seed=6)], seed=9)
    assert zero == plain
    # A huge temperature: among the options master scored, always the network's favourite.
    player = PriorMasterAgent(seed=5, temperature=1e6)
    policy = shared_policy(SHIPPED_CHECKPOINT)
    checked = 0

    def check(seat: int, obs: dict, action: int) -> None:
        nonlocal checked
        if seat != 0 or len(player.option_values) < 2:
            return
        x = policy.prepare(obs["observation"][None].astype(np.float32))
        logits = policy(x, torch.as_tensor(obs["action_mask"][None])).detach()[0]
        assert action == max(player.option_values, key=lambda a: float(logits[a]))
        checked += 1

    play_game(
        gin_rummy_v0.raw_env(), [player, agents.make("expert", seed=6)], seed=9, deal=3, on_decision=check
    )
    assert checked >= 3
    built = agents.make("master_prior", seed=1)
    assert isinstance(built, PriorMasterAgent) and built.temperature == 1.0


#: The repository's root, and its research folder (research/priors.py and the networks it plays).
ROOT = Path(__file__).resolve().parents[3]
RESEARCH = ROOT / "research"


@pytest.mark.parametrize(("name", "network"), [("PriorN3", "dr_n3.pt"), ("PriorS4", "dr_s4.pt")])
def test_research_priors_plays_master_prior_with_a_research_network_as_its_prior(
    name: str, network: str
) -> None:
    # The research networks are kept in the repository, not in the sdist (MANIFEST.in): an unpacked
    # sdist skips this test, while a checkout (where .git exists) that lacks them fails it.
    if not (RESEARCH / network).exists() and not (ROOT / ".git").exists():
        pytest.skip(
            f"research/{network} is kept in the repository only, not in the sdist: run from a checkout"
        )
    # The research reports' command plays this file as a spec from a fresh clone: it must build, and read
    # the network beside it, not the shipped one.
    folder = RESEARCH
    built = agents.make(f"{folder / 'priors.py'}:{name}", seed=1)
    assert isinstance(built, PriorMasterAgent) and built.temperature == 1.0
    assert Path(built.checkpoint) == folder / network
    env = gin_rummy_v0.raw_env()
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)
    x = built.policy.prepare(obs["observation"][None].astype(np.float32))
    mask = torch.as_tensor(obs["action_mask"][None])
    shipped = shared_policy(SHIPPED_CHECKPOINT)
    assert not torch.equal(built.policy(x, mask), shipped(x, mask))
