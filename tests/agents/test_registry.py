"""The agent registry and the baseline agents (random, greedy) on scripted positions."""

from __future__ import annotations

import numpy as np
import pytest
from ginenv.agents.base import Agent

from ginenv import agents, gin_rummy_v0
from ginenv.actions import NUM_ACTIONS, action_id, action_name
from ginenv.cards import parse_cards
from ginenv.rules import Rules


def test_make_and_available() -> None:
    names = agents.available()
    assert names[:2] == ["random", "greedy"]
    agent = agents.make("greedy", seed=0)
    assert isinstance(agent, Agent) and agent.name == "greedy"
    with pytest.raises(agents.UnknownAgentError, match="known agents: random, greedy"):
        agents.make("grandmaster")


def test_duplicate_registration_is_refused() -> None:
    with pytest.raises(ValueError, match="already registered"):
        agents.register("random", agents.RandomAgent)


def test_random_agent_is_legal_and_reproducible() -> None:
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    legal = [action_id("discard 7h"), action_id("discard Kd"), action_id("knock 7h")]
    mask[legal] = 1
    obs = {"observation": np.zeros(1, dtype=np.float32), "action_mask": mask}
    a = agents.make("random", seed=1)
    picks = [a.act(obs) for _ in range(50)]
    assert set(picks) <= set(legal) and len(set(picks)) == 3
    a.reset(seed=7)
    first = [a.act(obs) for _ in range(10)]
    a.reset(seed=7)
    assert [a.act(obs) for _ in range(10)] == first


def test_random_agent_plays_the_random_policy_from_its_own_generator() -> None:
    # One uniform choice (ginenv.wrappers.RandomPolicy): the agent reset with a seed draws what the
    # policy seeded the same way draws, decision for decision.
    from ginenv.wrappers import RandomPolicy

    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    mask[[0, 5, 9, 40, 107]] = 1
    obs = {"observation": np.zeros(1, dtype=np.float32), "action_mask": mask}
    agent, policy = agents.make("random", seed=3), RandomPolicy(11)
    agent.reset(seed=11)
    assert [agent.act(obs) for _ in range(30)] == [policy(obs) for _ in range(30)]


def deck_with(non_dealer: str, dealer: str, upcard: str) -> list[str]:
    used = parse_cards(f"{non_dealer} {dealer} {upcard}")
    rest = [c for c in range(52) if c not in used]
    from ginenv.cards import CARD_NAMES

    return [CARD_NAMES[c] for c in used + rest]


def first_decision(deck: list[str], dealer: int = 0) -> tuple[object, dict]:
    env = gin_rummy_v0.raw_env()
    env.reset(seed=0, options={"deck": deck, "dealer": dealer})
    return env, env.observe(env.agent_selection)


def test_greedy_takes_an_upcard_that_completes_a_meld_and_passes_otherwise() -> None:
    hand = "7h 8h Ks Kc 2d 5c 9s Jd 4s Qc"
    _, obs = first_decision(deck_with(hand, "As 2s 3s 4c 6d 8d Tc Jc Qd Ad", "9h"))
    assert action_name(agents.make("greedy").act(obs)) == "draw_discard"
    _, obs = first_decision(deck_with(hand, "As 2s 3s 4c 6d 8d Tc Jc Qd Ad", "3h"))
    assert action_name(agents.make("greedy").act(obs)) == "pass"


def test_greedy_throws_its_highest_useless_card_and_knocks_at_once() -> None:
    # Non-dealer takes 9h: 7h 8h 9h, Ks Kc Kh... keep it simple: after taking, the best discard is Qc.
    hand = "7h 8h Ks Kc Kd 2d 3d 4d As Qc"
    env, obs = first_decision(deck_with(hand, "2s 3s 4c 6d 8d Tc Jc Qd Ad 5s", "9h"))
    greedy = agents.make("greedy")
    assert action_name(greedy.act(obs)) == "draw_discard"
    env.step(greedy.act(obs))
    obs = env.observe(env.agent_selection)
    # Melds 7-8-9h, K K K, 2-3-4d; deadwood As + Qc: throwing Qc leaves 1, a legal knock.
    assert action_name(greedy.act(obs)) == "knock Qc"


def test_names_that_are_not_strings_and_empty_checkpoint_paths_are_refused() -> None:
    with pytest.raises(agents.UnknownAgentError, match="an agent name must be a string, got int 3"):
        agents.make(3)  # type: ignore[arg-type]
    assert not agents.specs.is_known(None)
    with pytest.raises(agents.AgentSpecError, match=r"give the checkpoint file, e.g. checkpoint:"):
        agents.make("checkpoint:")


def test_every_make_builds_a_new_agent() -> None:
    # The harness builds agents per game: no two calls may hand out the same object.
    for name in agents.available():
        a, b = agents.make(name, seed=0), agents.make(name, seed=0)
        assert a is not b, name


def test_every_level_is_told_the_rules_of_the_table() -> None:
    from ginenv.experiments.eval.harness import make_agent

    from ginenv.rules import PRESETS

    table = PRESETS["seed004"]
    for name in ("random", "greedy", "easy", "normal", "hard", "expert", "master"):
        assert agents.make(name).rules == Rules()
        assert agents.make(name, rules=table).rules is table
        assert make_agent(name, rules=table).rules is table
    with pytest.raises(TypeError, match=r"rules must be a ginenv\.rules\.Rules"):
        agents.make("expert", rules={"undercut_bonus": 20})  # type: ignore[arg-type]


def test_expert_scores_knocks_under_the_tables_undercut_bonus() -> None:
    from ginenv.agents.levels.belief import Knock

    from ginenv.cards import mask_of, parse_cards
    from ginenv.rules import PRESETS

    # The defender (deadwood 1: Ac) undercuts this knock of 10: 9 + 25 by default, 9 + 20 under seed 004.
    knock = Knock.of(mask_of(parse_cards("As 2s 3s 4c 5c 6c 7d 8d 9d Kh")))
    defender = np.array([mask_of(parse_cards("2h 3h 4h 7h 8h 9h Jc Qc Kc Ac"))], dtype=np.int64)
    standard = agents.make("expert")
    seed004 = agents.make("expert", rules=PRESETS["seed004"])
    assert standard.rules.undercut_bonus - seed004.rules.undercut_bonus == 5
    assert knock.points(defender, seed004.rules)[0] - knock.points(defender, standard.rules)[0] == 5
