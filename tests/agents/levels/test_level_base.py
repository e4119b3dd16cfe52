"""The base class of the heuristic levels (ginenv.agents.levels.level_base): one turn dispatch for all."""

from __future__ import annotations

import pytest
from ginenv.agents.base import Agent, Observation
from ginenv.agents.levels.level_base import HeuristicAgent
from scenarios import decide, position

from ginenv import agents
from ginenv.actions import BIG_GIN, DRAW_DISCARD, PASS
from ginenv.cards import parse_cards
from ginenv.engine import Phase
from ginenv.observation import SeatView


def c(text: str) -> int:
    return parse_cards(text)[0]


LEVELS = ("greedy", "easy", "normal", "hard", "expert", "master")


def test_one_base_class_owns_the_turn_dispatch() -> None:
    """Every heuristic level plays through :meth:`HeuristicAgent.act` (none keeps a copy of it)."""
    for name in LEVELS:
        agent = agents.make(name)
        assert isinstance(agent, HeuristicAgent)
        assert all(
            "act" not in vars(cls)
            for cls in type(agent).__mro__
            if cls is not HeuristicAgent and cls is not Agent
        )


@pytest.mark.parametrize("name", LEVELS)
def test_every_level_takes_big_gin_and_passes_an_upcard_it_does_not_want(name: str) -> None:
    # 11 cards in melds: big gin comes before any discard or knock.
    obs = position("As 2s 3s 4s 5c 6c 7c 9d 9h 9s 9c", phase=Phase.DISCARD)
    obs["action_mask"][BIG_GIN] = 1
    assert decide(name, obs) == "big_gin"
    # The first upcard melds with nothing: pass (draw_stock is not legal yet).
    obs = position("As 2s 3s 4c 5c 6c 9d Td Jd Kh", top="Qh")
    obs["action_mask"][:] = 0
    obs["action_mask"][[DRAW_DISCARD, PASS]] = 1
    assert decide(name, obs) == "pass"


def test_a_level_that_chooses_an_illegal_discard_is_stopped_with_a_clear_error() -> None:
    class Broken(HeuristicAgent):
        def wants_top(self, view: SeatView) -> bool:
            return False

        def choose_discard(self, observation: Observation, view: SeatView) -> tuple[int, bool]:
            return c("Kh"), True  # a knock with 34 points of deadwood left

    obs = position("As 2s 3s 4c 5c 6c 9d Td Qh Kh 5h", phase=Phase.DISCARD)
    with pytest.raises(RuntimeError, match="Broken chose the illegal action"):
        Broken().act(obs)
