"""The expert level: its characteristic choices on scripted positions, legal and seeded play, and
the privacy property for both Bayesian levels (expert, master): changing the cards a seat never
sees changes none of its decisions."""

from __future__ import annotations

import random

import numpy as np
import pytest
from ginenv.agents.levels.expert import ExpertAgent, meld_probability
from scenarios import position

from ginenv import agents, gin_rummy_v0
from ginenv.actions import (
    action_name,
)
from ginenv.cards import CARD_NAMES, mask_of, parse_cards
from ginenv.engine import Phase
from ginenv.observation import decode


def cards(text: str) -> int:
    return mask_of(parse_cards(text)) if text else 0


def observation(
    hand: str,
    top: str = "",
    pile: str = "",
    opp_taken: str = "",
    opp_discarded: str = "",
    opp_passed: str = "",
    phase: Phase = Phase.DISCARD,
) -> dict[str, np.ndarray]:
    """A consistent observation built by hand (what the env would show this seat); discard phase by
    default."""
    return position(hand, top, pile, opp_taken, opp_discarded, opp_passed, phase=phase)


def late_position(hand: str, stock: int, seed: int = 5) -> dict[str, np.ndarray]:
    """``hand`` (11 cards) to discard with ``stock`` cards left; the pile is a random spread of
    cards, every other one discarded by the opponent."""
    used = set(parse_cards(hand))
    rng = np.random.default_rng(seed)
    rest = [CARD_NAMES[c] for c in rng.permutation([c for c in range(52) if c not in used])]
    n = 31 - stock
    return observation(
        hand, top=rest[n - 1], pile=" ".join(rest[: n - 1]), opp_discarded=" ".join(rest[:n:2])
    )


def act(name: str, obs: dict[str, np.ndarray], seed: int = 0) -> str:
    agent = agents.make(name, seed=seed)
    agent.reset(seed)
    return action_name(agent.act(obs))


def test_registered_after_hard() -> None:
    names = agents.available()
    assert names.index("hard") < names.index("expert") < names.index("master")
    assert isinstance(agents.make("expert"), ExpertAgent)


@pytest.mark.parametrize("name", ["expert", "master"])
def test_does_not_feed_a_set_the_opponent_shows(name: str) -> None:
    # Jd and Tc are alike for this hand; the opponent picked up two jacks, or two tens.
    hand = "As 2s 3s 4h 5h 6h 8c 8d Jd Tc 2d"
    jacks = observation(hand, top="3c", pile="2c 9h Qs", opp_taken="Js Jh")
    tens = observation(hand, top="3c", pile="2c 9h Qs", opp_taken="Ts Th")
    assert act(name, jacks) == "discard Tc"
    assert act(name, tens) == "discard Jd"


def test_meld_probability_follows_the_marginals() -> None:
    p = np.zeros(52)
    js, jh, jd = parse_cards("Js Jh Jd")
    assert meld_probability(p)[jd] == 0.0
    p[js] = p[jh] = 1.0
    assert meld_probability(p)[jd] == pytest.approx(1.0)
    p[jh] = 0.5
    assert meld_probability(p)[jd] == pytest.approx(0.5)


@pytest.mark.parametrize("name", ["expert", "master"])
def test_gin_always_knocks(name: str) -> None:
    obs = observation("As 2s 3s 4h 5h 6h 7c 7d 7s Kc Qd", top="3c", pile="2c 9h Qs")
    assert act(name, obs) in ("knock Kc", "knock Qd")


def test_expert_plays_on_with_little_deadwood_until_the_stock_runs_low() -> None:
    hand = "As 2s 3s 4h 5h 6h 7c 7d 7h Ac Kc"  # discarding Kc leaves 1 point
    for stock in (27, 20, 12):
        assert act("expert", late_position(hand, stock)) == "discard Kc"
    for stock in (5, 2):
        assert act("expert", late_position(hand, stock)) == "knock Kc"


def test_takes_a_discard_that_completes_a_set_and_passes_a_useless_one() -> None:
    hand = "As 2s 3s 4h 5h 6h 7c 7d Kc Qd"
    assert act("expert", observation(hand, top="7h", pile="2c 9h", phase=Phase.DRAW)) == "draw_discard"
    assert act("expert", observation(hand, top="9c", pile="2c 9h", phase=Phase.DRAW)) == "draw_stock"
    upcard = observation(hand, top="7h", phase=Phase.UPCARD_NON_DEALER)
    assert act("expert", upcard) == "draw_discard"


# ---------------------------------------------------------------------------- whole hands


def play(names: tuple[str, str], seed: int, deck: list[int] | None = None, dealer: int = 0) -> list[int]:
    """One hand; returns every action taken. Agents are reseeded with ``seed``."""
    env = gin_rummy_v0.raw_env()
    env.reset(seed=seed, options={"dealer": dealer} | ({"deck": deck} if deck else {}))
    players = [agents.make(n) for n in names]
    for i, p in enumerate(players):
        p.reset(seed * 2 + i)
    actions = []
    for agent_id in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        a = players[int(agent_id[-1])].act(obs)
        assert obs["action_mask"][a] == 1
        actions.append(a)
        env.step(a)
    return actions


@pytest.mark.parametrize("name", ["expert", "master"])
def test_legal_and_seeded(name: str) -> None:
    for seed in range(3):
        first = play((name, "hard"), seed, dealer=seed % 2)
        assert play((name, "hard"), seed, dealer=seed % 2) == first


class Scripted:
    """Replays a list of actions (the opponent's side of a recorded hand)."""

    def __init__(self, actions: list[int]) -> None:
        self.actions = list(actions)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return self.actions.pop(0)


@pytest.mark.parametrize("name", ["expert", "master"])
def test_hidden_cards_change_nothing(name: str) -> None:
    """Shuffle the cards the agent's seat never sees (the opponent's kept cards, the undrawn stock)
    and replay the opponent's actions: every decision of the agent is the same."""
    for seed in (11, 12):
        rnd = random.Random(seed)
        deck = list(range(52))
        rnd.shuffle(deck)
        env = gin_rummy_v0.raw_env()
        env.reset(options={"deck": deck, "dealer": 1})
        me = agents.make(name)
        me.reset(seed)
        opponent = agents.make("greedy")
        seen = 0
        mine: list[int] = []
        theirs: list[int] = []
        for agent_id in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if agent_id == "player_0":
                view = decode(obs["observation"])
                seen |= view.hand | view.discard_pile | view.opponent_taken | view.opponent_discarded
                a = me.act(obs)
                mine.append(a)
            else:
                a = opponent.act(obs)
                theirs.append(a)
            env.step(a)
        hidden = [i for i, c in enumerate(deck) if not seen >> c & 1]
        assert len(hidden) >= 10
        shuffled = list(deck)
        cards_hidden = [deck[i] for i in hidden]
        rnd.shuffle(cards_hidden)
        for i, c in zip(hidden, cards_hidden, strict=True):
            shuffled[i] = c
        assert shuffled != deck
        env.reset(options={"deck": shuffled, "dealer": 1})
        again = agents.make(name)
        again.reset(seed)
        script = Scripted(theirs)
        replay: list[int] = []
        for agent_id in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if agent_id == "player_0":
                a = again.act(obs)
                replay.append(a)
            else:
                a = script.act(obs)
                if not obs["action_mask"][a]:  # a knock the new cards no longer allow: stop here
                    break
            env.step(a)
        assert replay == mine[: len(replay)] and len(replay) >= len(mine) - 1
