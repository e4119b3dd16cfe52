"""Scripted positions for the agent tests: decks built from named hands, actions by name."""

from __future__ import annotations

from typing import Any

from ginenv import agents, gin_rummy_v0
from ginenv.actions import action_name
from ginenv.cards import CARD_NAMES, parse_cards

#: A dealer's hand that melds with nothing the tests give the non-dealer.
DEALER = "6s Ts Js 3d 6d 8d 3h 4h Jh 2c"


def deck_with(non_dealer: str, dealer: str, upcard: str, stock: str = "") -> list[str]:
    """A full deck: the named cards in dealing order, then every other card."""
    used = parse_cards(f"{non_dealer} {dealer} {upcard} {stock}")
    return [CARD_NAMES[c] for c in used + [c for c in range(52) if c not in used]]


def start(deck: list[str]) -> Any:
    """An env dealt from ``deck`` with player_0 dealing (player_1 decides first)."""
    env = gin_rummy_v0.raw_env()
    env.reset(seed=0, options={"deck": deck, "dealer": 0})
    return env


def play(env: Any, *actions: str) -> dict:
    """Apply scripted actions; the observation of whoever is to move next."""
    for name in actions:
        env.step(env.unwrapped.action_id(name))
    return env.observe(env.agent_selection)


def decide(agent_name: str, obs: dict, seed: int = 0) -> str:
    """The name of the action a freshly seeded agent picks for ``obs``."""
    agent = agents.make(agent_name, seed=seed)
    agent.reset(seed)
    return action_name(agent.act(obs))
