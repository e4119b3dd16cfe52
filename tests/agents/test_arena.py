"""The arena (ginenv.agents.arena): one game between agents from a deal and a seed, its seeding
formula, the forfeit rule of agents in other processes, and a seat played from outside."""

from __future__ import annotations

import numpy as np
import pytest
from ginenv.agents.arena import AgentError, Game, agent_seed, deal_seed, forfeit_points, play_game
from ginenv.agents.base import Agent, AgentForfeit, Observation

from ginenv import agents, gin_rummy_v0
from ginenv.actions import action_id
from ginenv.cards import CARD_NAMES, parse_cards
from ginenv.melds import deadwood
from ginenv.rules import Rules
from ginenv.secret_deals import DealKey


def deck(non_dealer: str, dealer: str, upcard: str) -> list[str]:
    """A deck in dealing order: these hands and upcard, then the other cards in id order."""
    used = parse_cards(f"{non_dealer} {dealer} {upcard}")
    return [CARD_NAMES[c] for c in used + [c for c in range(52) if c not in used]]


class Forfeits(Agent):
    """A client that hangs at its ``at``-th decision (what ExternalAgent reports)."""

    def __init__(self, at: int = 1) -> None:
        super().__init__(0)
        self.at, self.decisions = at, 0

    def act(self, observation: Observation) -> int:
        self.decisions += 1
        if self.decisions == self.at:
            raise AgentForfeit("no answer within 0.5 s")
        return int(np.flatnonzero(observation["action_mask"])[0])


NON_DEALER = "2s 3s 4s Kc Kd 9h 5c 7d Jh Qs"  # deadwood 10 + 5 + 7 + 10 + 10 + 9 = 51 before melds
DEALER = "As Ac Ad 8s 8c 8d 6h 7h 9c Tc"


def test_a_forfeit_scores_the_gin_bonus_plus_the_forfeiting_hand_for_the_opponent() -> None:
    env = gin_rummy_v0.raw_env()
    options = {"deck": deck(NON_DEALER, DEALER, "Th"), "dealer": 1}
    # player_0 is the non-dealer and decides first (the upcard offer): it forfeits at once.
    record = play_game(env, [Forfeits(), agents.make("greedy")], seed=0, options=options, names=["bot", "g"])
    points = 25 + deadwood(NON_DEALER)
    assert record.returns == [-points, points]
    assert record.forfeit == {
        "seat": 0,
        "agent": "bot",
        "reason": "no answer within 0.5 s",
        "hand": 0,
        "points": points,
    }
    assert record.hands == [] and not record.truncated


def test_forfeit_points_follow_the_rules_and_the_unit() -> None:
    rules = Rules(gin_bonus=20, target=150, game_bonus=100)
    ten = sum(1 << c for c in parse_cards(NON_DEALER))
    assert forfeit_points(rules, "hand", ten) == 20 + deadwood(NON_DEALER)
    eleven = ten | 1 << parse_cards("Ks")[0]
    # With 11 cards, after the best discard (the Ks: the K K K set stays).
    assert forfeit_points(rules, "hand", eleven) == 20 + deadwood("2s 3s 4s Kc Kd Ks 9h 5c 7d Jh")
    assert forfeit_points(rules, "match", ten) == 250


def test_a_forfeit_in_a_match_loses_the_match_by_the_target_plus_the_game_bonus() -> None:
    env = gin_rummy_v0.raw_env(rules=Rules(target=50, game_bonus=30), mode="match")
    record = play_game(env, [agents.make("greedy"), Forfeits(at=5)], seed=3, deal=0)
    assert record.forfeit is not None and record.forfeit["seat"] == 1
    assert record.returns == [80.0, -80.0]


def test_the_two_games_of_a_deal_deal_the_same_cards_with_the_seats_swapped() -> None:
    env = gin_rummy_v0.raw_env()
    seen = []
    for _ in range(2):
        g = Game(env, [agents.make("greedy"), agents.make("greedy")], seed=5, deal=7)
        seen.append((env.hand.deck, env.hand.dealer))
        g.run()
    assert seen[0] == seen[1] and seen[0][1] == 7 % 2
    assert deal_seed(5, 7) != deal_seed(5, 8) and deal_seed(5, 7) != deal_seed(6, 7)
    assert agent_seed(5, 7, 0, 0) != agent_seed(5, 7, 0, 1)


def test_agents_are_reset_with_the_arena_seeds_at_every_hand() -> None:
    class Seeds(Agent):
        def __init__(self) -> None:
            super().__init__(0)
            self.seeds: list[int | None] = []

        def reset(self, seed: int | None = None) -> None:
            self.seeds.append(seed)

        def act(self, observation: Observation) -> int:
            return agents.make("greedy").act(observation)

    env = gin_rummy_v0.raw_env(rules=Rules(target=40), mode="match")
    probe = Seeds()
    record = play_game(env, [probe, agents.make("greedy")], seed=2, deal=1)
    assert len(probe.seeds) == len(record.hands) >= 2
    # Deal 1: player_1 deals the first hand, so player_0 is the non-dealer (role 0).
    assert probe.seeds[0] == agent_seed(2, 1, 0, 0)


def test_an_illegal_action_of_an_agent_in_this_process_is_its_error() -> None:
    class Illegal(Agent):
        def act(self, observation: Observation) -> int:
            return action_id("big_gin")

    with pytest.raises(
        AgentError, match=r"agent cheat returned 3, which is not a legal action here \(legal: "
    ):
        play_game(gin_rummy_v0.raw_env(), [Illegal(), Illegal()], seed=0, names=["cheat", "cheat"])


def test_a_seat_played_from_outside() -> None:
    env = gin_rummy_v0.raw_env()
    game = Game(
        env,
        [None, agents.make("greedy")],
        seed=0,
        options={"deck": deck(NON_DEALER, DEALER, "Th"), "dealer": 1},
    )
    assert game.to_move == 0
    with pytest.raises(RuntimeError, match="played from outside"):
        game.advance()
    game.play(action_id("pass"))  # the person passes the upcard Th
    assert game.to_move == 1
    assert game.advance() is not None  # the computer's decision
    while not game.over:
        if game.to_move == 0:
            legal = np.flatnonzero(env.observe("player_0")["action_mask"])
            game.play(int(legal[0]))
        else:
            game.advance()
    assert len(game.record.hands) == 1 and sum(game.record.returns) == 0


def test_a_key_deals_every_hand_from_the_secret_not_the_seed() -> None:
    key = DealKey.new()
    players = [agents.make("greedy"), agents.make("greedy")]
    env = gin_rummy_v0.raw_env(mode="match")
    record = play_game(env, players, seed=3, deal=5, key=key)
    assert len(record.states) >= 2  # a match: the key dealt its later hands too
    for h, state in enumerate(record.states):
        assert [int(c) for c in state.deck] == key.deck(5, h)
    seeded = play_game(gin_rummy_v0.raw_env(mode="match"), players, seed=3, deal=5)
    assert [int(c) for c in seeded.states[0].deck] != key.deck(5, 0)
    # Same key, same deal: the same cards (a disclosed key replays the game); seats swapped too.
    again = play_game(gin_rummy_v0.raw_env(mode="hand"), players[::-1], seed=9, deal=5, key=key)
    assert [int(c) for c in again.states[0].deck] == key.deck(5, 0)


def test_scripted_decks_come_before_the_keyed_ones() -> None:
    key = DealKey.new()
    scripted = deck(NON_DEALER, DEALER, "Ks")
    env = gin_rummy_v0.raw_env(mode="match")
    game = Game(env, [None, None], seed=0, options={"decks": [scripted]}, key=key)
    assert [CARD_NAMES[int(c)] for c in game.env.hand.deck] == scripted
