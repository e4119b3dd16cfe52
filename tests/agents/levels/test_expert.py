"""The expert level: its characteristic choices on scripted positions, legal and seeded play, and
the privacy property for both Bayesian levels (expert, master): changing the cards a seat never
sees changes none of its decisions."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest
from ginenv.agents.levels.expert import ExpertAgent, meld_probability
from levels.scripted_play import late_position, play_out
from levels.scripted_play import play_hand as play_whole_hand
from scenarios import decide as act
from scenarios import position

from ginenv import agents, gin_rummy_v0
from ginenv.cards import parse_cards
from ginenv.engine import Phase
from ginenv.observation import decode

#: A consistent observation built from card names, in the discard phase unless ``phase`` says.
observation = functools.partial(position, phase=Phase.DISCARD)


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


def play(names: tuple[str, str], seed: int, dealer: int = 0) -> list[int]:
    """One hand; returns every action taken (each checked legal). Agents are reseeded with ``seed``."""
    return play_whole_hand(names, seed, (seed * 2, seed * 2 + 1), dealer=dealer)[0]


@pytest.mark.parametrize("name", ["expert", "master"])
def test_legal_and_seeded(name: str) -> None:
    for seed in range(3):
        first = play((name, "hard"), seed, dealer=seed % 2)
        assert play((name, "hard"), seed, dealer=seed % 2) == first


def hand_seen_by(name: str, seed: int, deck: list[int]) -> tuple[int, list[int], list[int]]:
    """One hand from ``deck`` of ``name`` (player_0, reset with ``seed``) against greedy: the cards
    player_0 saw, its actions and the opponent's."""
    env = gin_rummy_v0.raw_env()
    env.reset(options={"deck": deck, "dealer": 1})
    me = agents.make(name)
    me.reset(seed)
    opponent = agents.make("greedy")
    seen = 0
    mine: list[int] = []
    theirs: list[int] = []

    def act(agent_id: str, obs: dict) -> int:
        nonlocal seen
        if agent_id == "player_0":
            view = decode(obs["observation"])
            seen |= view.hand | view.discard_pile | view.opponent_taken | view.opponent_discarded
            mine.append(me.act(obs))
            return mine[-1]
        theirs.append(opponent.act(obs))
        return theirs[-1]

    play_out(env, act)
    return seen, mine, theirs


def replayed_against(name: str, seed: int, deck: list[int], theirs: list[int]) -> list[int]:
    """player_0's actions when ``name`` (reset with ``seed``) plays the hand from ``deck`` against the
    opponent's recorded actions ``theirs``, up to one the new cards no longer allow."""
    env = gin_rummy_v0.raw_env()
    env.reset(options={"deck": deck, "dealer": 1})
    again = agents.make(name)
    again.reset(seed)
    script = list(theirs)
    replay: list[int] = []

    def act(agent_id: str, obs: dict) -> int | None:
        if agent_id == "player_0":
            replay.append(again.act(obs))
            return replay[-1]
        a = script.pop(0)
        return a if obs["action_mask"][a] else None  # a knock the new cards no longer allow: stop here

    play_out(env, act)
    return replay


@pytest.mark.parametrize("name", ["expert", "master"])
def test_hidden_cards_change_nothing(name: str) -> None:
    """Shuffle the cards the agent's seat never sees (the opponent's kept cards, the undrawn stock)
    and replay the opponent's actions: every decision of the agent is the same."""
    for seed in (11, 12):
        rnd = random.Random(seed)
        deck = list(range(52))
        rnd.shuffle(deck)
        seen, mine, theirs = hand_seen_by(name, seed, deck)
        hidden = [i for i, c in enumerate(deck) if not seen >> c & 1]
        assert len(hidden) >= 10
        shuffled = list(deck)
        cards_hidden = [deck[i] for i in hidden]
        rnd.shuffle(cards_hidden)
        for i, c in zip(hidden, cards_hidden, strict=True):
            shuffled[i] = c
        assert shuffled != deck
        replay = replayed_against(name, seed, shuffled, theirs)
        assert replay == mine[: len(replay)] and len(replay) >= len(mine) - 1
