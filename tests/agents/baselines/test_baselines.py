"""The published-baseline adapters (agents/baselines/): OpenSpiel's simple bot, RLCard's novice.

Both libraries come with the ``baselines`` extra: without open-spiel the module is skipped, without
rlcard the RLCard tests (tests/support/extras.py: in CI, where every extra is installed, either
fails instead).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from extras import needs_extra
from ginenv.agents.arena import play_game
from ginenv.agents.base import Agent, Observation
from ginenv.agents.baselines import (
    OpenSpielSimpleAgent,
    PublicHistory,
    ReconstructionError,
    openspiel_actions,
    register_available,
)
from ginenv.agents.baselines.history import track

from ginenv import agents, gin_rummy_v0
from ginenv.actions import action_id, action_name
from ginenv.cards import CARD_NAMES, cards_of, parse_cards
from ginenv.observation import decode

SEATS = ("player_0", "player_1")

# The adapters play pyspiel (OpenSpiel) or RLCard: without pyspiel the module is skipped.
needs_extra("baselines", "pyspiel")


@dataclass
class Game:
    """What one played hand left behind: the deck, every action, and the adapter's decisions."""

    deck: tuple[int, ...]
    dealer: int
    actions: list[tuple[str, int]] = field(default_factory=list)
    observations: list[np.ndarray] = field(default_factory=list)
    chosen: list[int] = field(default_factory=list)
    result: dict[str, Any] | None = None


def play_hand(
    adapter: Agent,
    opponent: Agent,
    seat: int,
    seed: int,
    dealer: int,
    deck: list[int] | None = None,
    on_decision: Callable[[Agent, Observation], None] | None = None,
) -> Game:
    """One hand through ``raw_env`` (illegal actions raise there), the adapter in ``seat``.

    ``opponent`` may be a list of actions to replay instead of an agent: the hand stops when the next
    one is illegal.
    """
    env = gin_rummy_v0.raw_env()
    options: dict[str, Any] = {"dealer": dealer}
    if deck is not None:
        options["deck"] = deck
    env.reset(seed=seed, options=options)
    game = Game(deck=env._state.deck, dealer=dealer)
    adapter.reset(seed)
    if isinstance(opponent, Agent):
        opponent.reset(seed + 1)
    script = None if isinstance(opponent, Agent) else list(opponent)
    for agent in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        if term or trunc:
            game.result = env.infos[agent].get("result")
            env.step(None)
            continue
        obs = env.observe(agent)
        if agent == SEATS[seat]:
            action = adapter.act(obs)
            game.observations.append(obs["observation"].copy())
            game.chosen.append(action)
            if on_decision is not None:
                on_decision(adapter, obs)
        elif script is None:
            action = opponent.act(obs)
        else:
            if not script or not obs["action_mask"][script[0]]:
                break
            action = script.pop(0)
        game.actions.append((agent, action))
        env.step(action)
    return game


def check_reconstruction(adapter: Agent, obs: Observation) -> None:
    """The adapter's rebuilt own hand is the observed hand at this decision."""
    view = decode(obs["observation"])
    if isinstance(adapter, OpenSpielSimpleAgent):
        history = adapter.history
        assert history is not None
        # The record (updated by act with the action just chosen) agrees with the observation.
        assert adapter.last_state is not None or adapter.last_source == "forced"
        if adapter.last_source in ("replay", "minimal"):
            state = adapter.last_state
            role = 1 if view.is_dealer else 0
            assert sorted(state.hands()[role]) == cards_of(view.hand)
            assert state.current_player() == role
    else:
        state = adapter.last_state
        assert state is not None
        from ginenv.agents.baselines import rlcard_card_ids

        rl_id = rlcard_card_ids()
        rl_hand = {i for i in range(52) if state["obs"][0][i]}
        assert rl_hand == {rl_id[c] for c in cards_of(view.hand)}


def make_adapter(name: str, seed: int = 0) -> Agent:
    if name == "rlcard_novice":
        needs_extra("baselines", "rlcard")
    return agents.make(name, seed=seed)


ADAPTERS = ["openspiel_simple", "rlcard_novice"]


def test_registered_when_installed() -> None:
    names = agents.available()
    assert "openspiel_simple" in names
    assert agents.describe("openspiel_simple").startswith("OpenSpiel")
    assert register_available() == []  # already registered: nothing twice
    adapter = agents.make("openspiel_simple", seed=0)
    assert isinstance(adapter, OpenSpielSimpleAgent) and adapter.name == "openspiel_simple"


@pytest.mark.parametrize("name", ADAPTERS)
@pytest.mark.parametrize("opponent", ["random", "greedy"])
def test_adapter_plays_whole_hands_legally(name: str, opponent: str) -> None:
    adapter = make_adapter(name)
    other = agents.make(opponent, seed=1)
    kinds = set()
    for k in range(24):
        game = play_hand(
            adapter, other, seat=k % 2, seed=100 + k, dealer=(k // 2) % 2, on_decision=check_reconstruction
        )
        assert game.result is not None and game.chosen
        kinds.add(game.result["kind"])
    assert "knock" in kinds


@pytest.mark.parametrize("name", ADAPTERS)
def test_adapter_plays_matches(name: str) -> None:
    """Several hands in a row, reset by the harness at each hand; also without resets."""
    env = gin_rummy_v0.raw_env(mode="match")
    record = play_game(env, [make_adapter(name), agents.make("greedy")], seed=0, deal=3)
    assert len(record.hands) >= 2 and "match_result" in record.hands[-1]

    class NoReset(Agent):
        def __init__(self, inner: Agent) -> None:
            super().__init__(0)
            self.inner = inner

        def reset(self, seed: int | None = None) -> None:
            pass

        def act(self, observation: Observation) -> int:
            return self.inner.act(observation)

    record = play_game(env, [agents.make("greedy"), NoReset(make_adapter(name))], seed=0, deal=4)
    assert len(record.hands) >= 2


@pytest.mark.parametrize("name", ADAPTERS)
@pytest.mark.parametrize("seat", [0, 1])
def test_decisions_do_not_depend_on_hidden_cards(name: str, seat: int) -> None:
    """Permute the cards the adapter never saw (the opponent's hidden cards, the stock's order): the
    adapter sees the same observations and makes the same decisions."""
    rng = np.random.default_rng(seat)
    changed = 0

    def replayed(into: list[Any]) -> Callable[[Agent, Observation], None]:
        def keep(adapter: Agent, obs: Observation) -> None:
            if isinstance(adapter, OpenSpielSimpleAgent):
                into.append(adapter.last_state.history() if adapter.last_source == "replay" else None)

        return keep

    for k in range(8):
        states: tuple[list[Any], list[Any]] = ([], [])
        first = play_hand(
            make_adapter(name),
            agents.make("greedy"),
            seat,
            seed=200 + k,
            dealer=k % 2,
            on_decision=replayed(states[0]),
        )
        hidden = decode(first.observations[-1]).unseen
        positions = [i for i, c in enumerate(first.deck) if hidden >> c & 1]
        deck = list(first.deck)
        for i, c in zip(positions, rng.permutation([deck[i] for i in positions]), strict=True):
            deck[i] = int(c)
        opponent_hand = slice(0, 10) if first.dealer == seat else slice(10, 20)
        changed += set(deck[opponent_hand]) != set(first.deck[opponent_hand])
        # The opponent replays its moves (all legal until its last: a knock may not be any more).
        script = [a for agent, a in first.actions if agent != SEATS[seat]]
        second = play_hand(
            make_adapter(name),
            script,
            seat,
            seed=200 + k,
            dealer=k % 2,
            deck=deck,
            on_decision=replayed(states[1]),
        )
        assert len(second.observations) == len(first.observations)
        for a, b in zip(first.observations, second.observations, strict=True):
            np.testing.assert_array_equal(a, b)
        assert second.chosen == first.chosen
        # OpenSpiel: the rebuilt pyspiel history, hidden cards filled in, is the same too.
        assert states[0] == states[1]
    assert changed >= 6


# ---------------------------------------------------------------------------- OpenSpiel


def deck_with(non_dealer: str, dealer: str, upcard: str, stock: str = "") -> list[str]:
    used = parse_cards(f"{non_dealer} {dealer} {upcard} {stock}")
    rest = [c for c in range(52) if c not in used]
    return [CARD_NAMES[c] for c in used + rest]


def first_observation(deck: list[str], dealer: int = 0) -> tuple[Any, dict[str, np.ndarray]]:
    env = gin_rummy_v0.raw_env()
    env.reset(seed=0, options={"deck": deck, "dealer": dealer})
    return env, env.observe(env.agent_selection)


def test_openspiel_knock_becomes_knock_with_the_bots_discard() -> None:
    hand = "As 2s 3s 4c 5c 6c 7d 8d 9d Kh"
    env, obs = first_observation(deck_with(hand, "Ac 2c 3c 4d 5d 6d 7s 8s 9s Jh", "2h"))
    bot = OpenSpielSimpleAgent(seed=0)
    assert action_name(bot.act(obs)) == "draw_discard"  # 2h lets it knock
    env.step(action_id("draw_discard"))
    assert action_name(bot.act(env.observe(env.agent_selection))) == "knock Kh"
    assert bot.fallbacks == 0


def test_openspiel_discard_of_the_card_just_taken_is_replaced() -> None:
    # The bot takes Kh to knock at once and would throw Kh back, which ginenv forbids.
    hand = "As 2s 3s 4c 5c 6c 7d 8d 9d Qh"
    env, obs = first_observation(deck_with(hand, "Ac 2c 3c 4d 5d 6d 7s 8s 9s Jh", "Kh"))
    bot = OpenSpielSimpleAgent(seed=0)
    assert action_name(bot.act(obs)) == "draw_discard"
    env.step(action_id("draw_discard"))
    assert action_name(bot.act(env.observe(env.agent_selection))) == "knock Qh"
    assert bot.fallbacks == 1


def test_openspiel_gin_pass_and_plain_discards() -> None:
    hand = "As 2s 3s 4c 5c 6c 7d 8d 9d Kh"
    env, obs = first_observation(deck_with(hand, "Ac 2c 3c 4d 5d 6d 7s 8s 9s Jh", "Td"))
    bot = OpenSpielSimpleAgent(seed=0)
    assert action_name(bot.act(obs)) == "draw_discard"  # Td extends 7d8d9d
    env.step(action_id("draw_discard"))
    env.step(bot.act(env.observe(env.agent_selection)))
    assert env.infos["player_0"]["result"]["kind"] == "gin"

    hand = "As 5s 9s 2c 6c Tc 3d 7d Jd Kh"
    env, obs = first_observation(deck_with(hand, "Ac 2s 3c 4d 5d 6d 7s 8s 9h Jh", "Qh", stock="Ks"))
    bot = OpenSpielSimpleAgent(seed=0)
    assert action_name(bot.act(obs)) == "pass"
    env.step(action_id("pass"))
    env.step(action_id("pass"))  # the dealer passes too: the non-dealer must draw from the stock
    assert action_name(bot.act(env.observe(env.agent_selection))) == "draw_stock"
    assert bot.last_source == "forced"
    env.step(action_id("draw_stock"))  # Ks
    # No meld: the highest card, the higher card id on ties (Kh over Ks), as OpenSpiel sorts them.
    assert action_name(bot.act(env.observe(env.agent_selection))) == "discard Kh"
    assert bot.last_source == "replay"


def test_openspiel_replay_and_one_decision_states_agree() -> None:
    """The bot reads only its hand, the top card and the knock card: deciding on the whole replayed
    hand or on a one-decision state gives the same action at every decision."""
    replaying = OpenSpielSimpleAgent(seed=0)
    minimal = OpenSpielSimpleAgent(seed=0, replay=False)
    sources = set()

    class Both(Agent):
        def reset(self, seed: int | None = None) -> None:
            replaying.reset(seed)
            minimal.reset(seed)

        def act(self, observation: Observation) -> int:
            a = replaying.act(observation)
            assert minimal.act(observation) == a
            sources.add(replaying.last_source)
            return a

    for k in range(16):
        opponent = agents.make("random" if k % 2 else "greedy", seed=k)
        play_hand(Both(), opponent, seat=k % 2, seed=300 + k, dealer=(k // 2) % 2)
    assert sources >= {"replay"}


def openspiel_native_moves(deck: list[int]) -> list[tuple[int, int]]:
    """Two simple bots playing OpenSpiel's own gin_rummy on ``deck`` (player 0 the non-dealer), as
    ginenv actions, up to the first knock's discard; ``(-1, -1)`` marks OpenSpiel's wall."""
    import pyspiel

    game = pyspiel.load_game("gin_rummy")
    bots = [pyspiel.make_simple_gin_rummy_bot(game.get_parameters(), p) for p in (0, 1)]
    state = game.new_initial_state()
    cards = iter(deck)
    moves: list[tuple[int, int]] = []
    simple = {52: action_id("draw_discard"), 53: action_id("draw_stock"), 54: action_id("pass")}
    knocked = False
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(next(cards))
            continue
        player = state.current_player()
        a = bots[player].step(state)
        if knocked:
            moves.append((player, action_id(f"knock {CARD_NAMES[a]}")))
            break
        knocked = a == 55
        if not knocked:
            moves.append((player, simple[a] if a >= 52 else action_id(f"discard {CARD_NAMES[a]}")))
        state.apply_action(a)
        if state.stock_size() == 2 and a < 52:
            moves.append((-1, -1))  # the wall: ginenv's hand is dead here
            break
    return moves


def test_openspiel_adapters_replay_openspiels_own_game() -> None:
    """Two adapters in ginenv play move for move the game two simple bots play in OpenSpiel on the
    same deck (until OpenSpiel's wall, where ginenv's hand is dead)."""
    rng = np.random.default_rng(11)
    for _ in range(40):
        deck = [int(c) for c in rng.permutation(52)]
        env = gin_rummy_v0.raw_env()
        env.reset(options={"deck": deck, "dealer": 1})
        seats = {s: OpenSpielSimpleAgent(seed=0) for s in SEATS}
        moves = []
        for agent in env.agent_iter():
            _, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = seats[agent].act(env.observe(agent))
            moves.append((SEATS.index(agent), action))
            env.step(action)
        native = openspiel_native_moves(deck)
        if native[-1] == (-1, -1):
            native.pop()
        assert moves == native
        assert sum(a.fallbacks for a in seats.values()) == 0


def test_openspiel_replay_uses_the_replay_cache() -> None:
    bot = OpenSpielSimpleAgent(seed=0)
    play_hand(bot, agents.make("greedy"), seat=0, seed=5, dealer=1)
    assert bot._cache is not None and len(bot._cache[0]) > 21


def test_public_history_follows_the_hand_and_fills_hidden_cards() -> None:
    deck = deck_with("As 2s 3s 4c 5c 6c 7d 8d 9d Qh", "Ac 2c 3c 4d 5d 6d 7s 8s 9s Jh", "Kh", stock="Ks Kd")
    env, obs = first_observation(deck, dealer=1)  # player_0 is the non-dealer
    history = PublicHistory(decode(obs["observation"]))
    assert history.role == 0 and history.upcard == parse_cards("Kh")[0]
    for name in ("pass",):
        history.record(action_id(name), decode(obs["observation"]))
        env.step(action_id(name))
    env.step(action_id("draw_discard"))  # the dealer takes Kh
    env.step(action_id("discard Jh"))
    view = decode(env.observe("player_0")["observation"])
    history.observe(view)
    assert [(w, k) for w, k, _ in history.events] == [(0, 0), (1, 1), (1, 3)]
    actions, fill = openspiel_actions(history, view.unseen)
    # Jh came from the dealer's hidden hand: its first unknown slot; the other nine are unseen cards.
    assert actions[10] == parse_cards("Jh")[0]
    assert all(view.unseen >> c & 1 for c in fill.values()) and len(fill) == 9
    # A mismatched observation is refused.
    history.record(action_id("draw_stock"), view)
    with pytest.raises(ReconstructionError):
        history.observe(view)


def test_a_hand_joined_midway_is_refused() -> None:
    env = gin_rummy_v0.raw_env()
    env.reset(seed=1, options={"dealer": 1})
    env.step(action_id("pass"))
    env.step(action_id("pass"))
    env.step(action_id("draw_stock"))
    obs = env.observe(env.agent_selection)
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    with pytest.raises(ReconstructionError, match="first observation of a hand"):
        OpenSpielSimpleAgent(seed=0).act(env.observe(env.agent_selection))


def history_trace(games: int) -> str:
    """A digest of every decision of ``games`` seeded matches of the OpenSpiel adapter against expert:
    the move, and the deciding seat's public history (fed its observations and its moves)."""
    digest = hashlib.sha256()
    env = gin_rummy_v0.raw_env(mode="match")
    histories: list[PublicHistory | None] = [None, None]

    def see(seat: int, obs: dict, action: int) -> None:
        view = decode(obs["observation"])
        histories[seat] = history = track(histories[seat], view)
        history.record(action, view)
        moves = [(who, int(kind), card) for who, kind, card in history.events]
        digest.update(repr((seat, action, moves, history.public_state())).encode())

    for g in range(games):
        play_game(
            env, [agents.make("openspiel_simple"), agents.make("expert")], seed=7, deal=g, on_decision=see
        )
    return digest.hexdigest()


def test_the_public_history_and_the_adapters_moves_are_pinned() -> None:
    """Recorded with the history's own reader of observation diffs, before it read the moves from the
    public record (ginenv.public_record); unchanged since."""
    assert history_trace(3) == "0cd242705211777abdbb338e45e5ebb5ad2fe75002d97a15a2780162da70282c"


def test_knock_limits_outside_openspiel_are_refused() -> None:
    bot = OpenSpielSimpleAgent(seed=0)
    with pytest.raises(ValueError, match=r"knock cards 0\.\.10"):
        bot._game(11)


# ---------------------------------------------------------------------------- RLCard


def test_rlcard_card_ids_match_rlcard() -> None:
    needs_extra("baselines", "rlcard")
    from ginenv.agents.baselines import rlcard_card_ids
    from rlcard.games.gin_rummy.utils import utils

    ids = rlcard_card_ids()
    for c, name in enumerate(CARD_NAMES):
        assert str(utils.get_card(ids[c])) == name.upper()
    assert sorted(ids) == list(range(52))


def test_rlcard_adapter_chooses_among_rlcards_own_choices() -> None:
    """The adapter's candidates are exactly what RLCard's step picks from (numpy's global RNG)."""
    needs_extra("baselines", "rlcard")
    from rlcard.models.gin_rummy_rule_models import GinRummyNoviceRuleAgent

    adapter = agents.make("rlcard_novice", seed=0)
    seen_kinds = set()
    state_rng = np.random.get_state()
    try:
        np.random.seed(0)

        def compare(ad: Agent, obs: Observation) -> None:
            state = ad.last_state
            options = set(ad.candidates(state))
            picks = {int(GinRummyNoviceRuleAgent.step(state)) for _ in range(40)}
            assert picks == options if len(options) <= 3 else picks <= options
            seen_kinds.add("draw" if max(options) < 6 else "card")

        for k in range(10):
            play_hand(
                adapter, agents.make("greedy"), seat=k % 2, seed=400 + k, dealer=k % 2, on_decision=compare
            )
    finally:
        np.random.set_state(state_rng)
    assert seen_kinds == {"draw", "card"}


def test_rlcard_gin_is_offered_alone_and_knocks_are_ours() -> None:
    needs_extra("baselines", "rlcard")
    from ginenv.agents.baselines import RL_GIN, RL_KNOCK_BASE

    adapter = agents.make("rlcard_novice", seed=0)
    for stock, gin in (("Td", True), ("2h", False)):
        deck = deck_with("As 2s 3s 4c 5c 6c 7d 8d 9d Kh", "Ac 2c 3c 4d 5d 6d 7s 8s 9s Jh", "Qd", stock=stock)
        env, _ = first_observation(deck)
        env.step(action_id("pass"))
        env.step(action_id("pass"))
        env.step(action_id("draw_stock"))
        obs = env.observe(env.agent_selection)
        _, ours = adapter.rlcard_state(obs)
        if gin:
            assert list(ours) == [RL_GIN] and action_name(ours[RL_GIN]) == "knock Kh"
            assert action_name(adapter.act(obs)) == "knock Kh"
        else:
            knocks = {action_name(a) for rl, a in ours.items() if rl >= RL_KNOCK_BASE}
            assert knocks == {"knock Kh", "knock 2h"}  # 2h leaves Kh: 10 points, still a knock
            # The novice knocks whenever it can, with any of the knock cards (uniformly).
            assert {action_name(adapter.act(obs)) for _ in range(20)} == knocks


def test_rlcard_is_reproducible_with_its_seed() -> None:
    needs_extra("baselines", "rlcard")
    a = play_hand(agents.make("rlcard_novice"), agents.make("random"), seat=0, seed=7, dealer=0)
    b = play_hand(agents.make("rlcard_novice"), agents.make("random"), seat=0, seed=7, dealer=0)
    assert a.chosen == b.chosen
