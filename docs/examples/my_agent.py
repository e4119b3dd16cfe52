"""An agent that reads its own hand from the observation (docs/your-agent.md; tests/test_docs.py runs it).

Rate it on the standard ladder with ``ginenv rate docs/examples/my_agent.py:DeadwoodAgent``.
"""

from ginenv.agents import Agent, Observation

from ginenv.actions import BIG_GIN, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS, action_card
from ginenv.cards import cards_of
from ginenv.melds import deadwood_of_mask
from ginenv.observation import decode


def best_after_discard(hand: int) -> int:
    """The least deadwood an 11-card hand (a bitmask) can keep by throwing one of its cards."""
    return min(deadwood_of_mask(hand & ~(1 << card)) for card in cards_of(hand))


class DeadwoodAgent(Agent):
    """Takes the top discard only when it lowers its deadwood; throws what leaves the least; knocks."""

    def act(self, observation: Observation) -> int:
        view = decode(observation["observation"])  # a SeatView: cards as bitmasks
        legal = self.legal_actions(observation)  # legal action ids, ascending
        if BIG_GIN in legal:
            return BIG_GIN
        if DRAW_DISCARD in legal:  # the draw: take the top discard, or pass / draw from the stock
            takes = view.top is not None and (
                best_after_discard(view.hand | 1 << view.top) < deadwood_of_mask(view.hand)
            )
            if takes:
                return DRAW_DISCARD
            return PASS if PASS in legal else DRAW_STOCK
        if DRAW_STOCK in legal:  # after both passed the upcard, the stock is the only draw
            return DRAW_STOCK

        # The discard: every legal id discards or knocks with one card of the 11 in view.hand.
        def left(action: int) -> int:
            card = action_card(action)
            assert card is not None  # each of these actions throws a card
            return deadwood_of_mask(view.hand & ~(1 << card))

        knocks = [a for a in legal if a >= KNOCK_BASE]
        return int(min(knocks or legal, key=left))


if __name__ == "__main__":  # one hand against itself, through the PettingZoo env
    from ginenv import gin_rummy_v0

    env = gin_rummy_v0.env()
    env.reset(seed=0)
    players = {seat: DeadwoodAgent(seed=0) for seat in env.possible_agents}
    for seat in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        if termination or truncation:
            print(seat, reward, info["result"])
        env.step(None if termination or truncation else players[seat].act(obs))
