"""What one seat observes: privacy (hidden cards never show), the public record of card movements,
the layout and its decoding, and the incremental tracker proven equal to the reference encoder.

The privacy property: take a played hand and, for one seat, the deck positions whose cards that
seat never sees (the opponent's cards it never discards, the stock it never draws). Shuffle the
cards among those positions and replay the same actions: everything ``observe()`` returns to that
seat, and every info before the hand ends, must be identical at every step.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ginenv import gin_rummy_v0
from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS, action_card
from ginenv.cards import CARD_NAMES, FULL_DECK, mask_of, parse_cards
from ginenv.engine import HandState, IllegalActionError, Phase
from ginenv.observation import (
    OBS_SIZE,
    ORACLE_OBS_SIZE,
    PLANE_BASE,
    PLANES,
    Knowledge,
    decode,
    encode,
    plane_slice,
)
from ginenv.rules import Rules

AGENTS = gin_rummy_v0.AGENTS


def make_deck(non_dealer: str, dealer: str, upcard: str, stock: str = "") -> list[str]:
    """A 52-card dealing order from named hands; the unnamed cards follow the named stock."""
    named = parse_cards(f"{non_dealer} {dealer} {upcard} {stock}")
    rest = [c for c in range(52) if c not in set(named)]
    return [CARD_NAMES[c] for c in named + rest]


def choose(rng: random.Random, legal: np.ndarray) -> int:
    """Random legal play that knocks half the time it may, so hands end in every way."""
    knocks = legal[legal >= KNOCK_BASE]
    if (knocks.size or BIG_GIN in legal) and rng.random() < 0.5:
        return BIG_GIN if BIG_GIN in legal else int(knocks[rng.randrange(knocks.size)])
    return int(legal[rng.randrange(legal.size)])


def play_random_hand(deck: list[int], dealer: int, seed: int, rules: Rules) -> list[int]:
    env = gin_rummy_v0.raw_env(rules=rules)
    env.reset(options={"deck": deck, "dealer": dealer})
    rng = random.Random(seed)
    actions = []
    while not any(env.terminations.values()):
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        actions.append(choose(rng, legal))
        env.step(actions[-1])
    return actions


def cards_seen_by(seat: int, deck: list[int], dealer: int, actions: list[int], rules: Rules) -> int:
    """Every card ``seat`` sees during the hand: its deal, the upcard, its stock draws, and the
    opponent's discards (cards taken from the pile were visible in the pile already)."""
    state = HandState(rules, dealer, deck=deck)
    seen = state.hands[seat] | 1 << state.upcard
    for action in actions:
        player = state.player
        if player == seat and action == DRAW_STOCK:
            seen |= 1 << state.stock[-1]
        elif player != seat and action >= DISCARD_BASE:
            seen |= 1 << action_card(action)  # type: ignore[operator]
        state.step(action)
    return seen


def everything_seen(env, agent: str) -> tuple:
    obs = env.observe(agent)
    return (
        obs["observation"].tobytes(),
        obs["action_mask"].tobytes(),
        env.agent_selection,
        env.infos[agent] if not any(env.terminations.values()) else None,
        env.rewards[agent] if not any(env.terminations.values()) else None,
    )


def replay_views(
    env, deck: list[int], dealer: int, actions: list[int], agent: str
) -> tuple[list[tuple], int]:
    """What ``agent`` sees before the first action and after each one, and how many actions were
    applied: the replay stops at an action that is illegal with this deck, which must be the
    opponent's knock or big gin (the only actions whose legality depends on its hidden cards)."""
    env.reset(options={"deck": deck, "dealer": dealer})
    views = [everything_seen(env, agent)]
    for i, action in enumerate(actions):
        try:
            env.step(action)
        except IllegalActionError:
            assert env.agent_selection != agent
            assert action >= KNOCK_BASE or action == BIG_GIN
            return views, i
        views.append(everything_seen(env, agent))
    return views, len(actions)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    seat=st.sampled_from([0, 1]),
    dealer=st.sampled_from([0, 1]),
    big_gin=st.booleans(),
)
def test_hidden_cards_never_change_what_a_seat_observes(
    seed: int, seat: int, dealer: int, big_gin: bool
) -> None:
    rules = Rules(big_gin_bonus=31 if big_gin else None)
    rng = random.Random(seed)
    deck = list(range(52))
    rng.shuffle(deck)
    actions = play_random_hand(deck, dealer, seed, rules)
    seen = cards_seen_by(seat, deck, dealer, actions, rules)
    hidden = [i for i, card in enumerate(deck) if not seen >> card & 1]
    # Shuffle the hidden cards among their positions: other opponent cards, other stock order.
    other = list(deck)
    moved = [deck[i] for i in hidden]
    rng.shuffle(moved)
    for i, card in zip(hidden, moved, strict=True):
        other[i] = card
    assert len(hidden) >= 2  # at least the undrawn stock

    env = gin_rummy_v0.raw_env(rules=rules)
    agent = AGENTS[seat]
    views, n = replay_views(env, deck, dealer, actions, agent)
    assert n == len(actions)
    other_views, m = replay_views(env, other, dealer, actions, agent)
    # Only the hand's last action may fail on the other deck (the opponent's knock or big gin,
    # checked in replay_views); every view up to it must be the same.
    assert m >= n - 1
    assert other_views == views[: m + 1]


def test_the_privacy_check_catches_a_leak() -> None:
    """The same construction with the oracle plane on does see the difference (the check has teeth)."""
    rules = Rules()
    for seed in range(10):
        rng = random.Random(seed)
        deck = list(range(52))
        rng.shuffle(deck)
        actions = play_random_hand(deck, 0, seed, rules)
        seen = cards_seen_by(1, deck, 0, actions, rules)
        end = HandState(rules, 0, deck=deck)
        for action in actions:
            end.step(action)
        # Swap a card the opponent (player_0) holds unseen at the end with an undrawn stock card.
        in_hand = next(i for i, c in enumerate(deck) if end.hands[0] >> c & 1 and not seen >> c & 1)
        in_stock = deck.index(end.stock[0])
        other = list(deck)
        other[in_hand], other[in_stock] = deck[in_stock], deck[in_hand]
        for oracle in (False, True):
            env = gin_rummy_v0.raw_env(rules=rules, oracle=oracle)
            views, _ = replay_views(env, deck, 0, actions, "player_1")
            other_views, m = replay_views(env, other, 0, actions, "player_1")
            assert (other_views != views[: m + 1]) == oracle


# ---------------------------------------------------------------------------- the public record


KNOCKER = "As 2s 3s 7c 7d 7h 4h 5h 6h Kc"
DEFENDER = "3h 2h 7s 4s Qd Qs Kd 9c Td 5c"


def step_names(env, *names: str) -> None:
    for name in names:
        env.step(env.action_id(name))


def view(env, agent: str):
    return decode(env.observe(agent)["observation"])


def names_of(mask: int) -> set[str]:
    return {CARD_NAMES[c] for c in range(52) if mask >> c & 1}


def test_public_record_of_takes_discards_and_passes() -> None:
    deck = make_deck(KNOCKER, DEFENDER, "8h", "Jh 2d 3d")
    env = gin_rummy_v0.raw_env()
    env.reset(options={"deck": deck, "dealer": 0})
    # player_1 (non-dealer) passes the upcard, player_0 takes it and throws Kd.
    step_names(env, "pass", "draw_discard", "discard Kd")
    v1 = view(env, "player_1")
    assert names_of(v1.opponent_taken) == {"8h"}
    assert names_of(v1.opponent_discarded) == {"Kd"}
    assert names_of(v1.own_passed) == {"8h"}
    assert v1.top == parse_cards("Kd")[0] and v1.pile == 0
    v0 = view(env, "player_0")
    assert names_of(v0.opponent_passed) == {"8h"} and names_of(v0.own_taken) == {"8h"}
    # player_1 leaves Kd for the stock (Jh) and throws Jh; player_0 takes Jh and throws 8h back.
    step_names(env, "draw_stock", "discard Jh", "draw_discard", "discard 8h")
    v1 = view(env, "player_1")
    assert names_of(v1.opponent_taken) == {"Jh"}  # 8h went back to the pile
    assert names_of(v1.opponent_discarded) == {"Kd", "8h"}
    assert names_of(v1.own_passed) == {"8h", "Kd"} and names_of(v1.own_discarded) == {"Jh"}
    assert names_of(v1.pile) == {"Kd"} and v1.top == parse_cards("8h")[0]
    v0 = view(env, "player_0")
    assert names_of(v0.opponent_passed) == {"8h", "Kd"}
    assert names_of(v0.hand) == (set(DEFENDER.split()) - {"Kd"}) | {"Jh"}
    # Unseen for player_1: not its hand, not the pile, not Jh (known in player_0's hand).
    known = v1.hand | v1.discard_pile | v1.opponent_taken
    assert v1.unseen == FULL_DECK ^ known
    assert v1.stock_size == 30 and v1.phase is Phase.DRAW and v1.to_move and not v1.is_dealer
    assert not v0.to_move and v0.is_dealer


def replay_knowledge(state: HandState) -> tuple[list[int], list[int], list[int], int]:
    """(taken, discarded, passed, pile) rebuilt from the public history alone, in plain Python."""
    replay = HandState(state.rules, state.dealer, deck=state.deck, turn_limit=state.turn_limit)
    taken, discarded, passed, pile = [0, 0], [0, 0], [0, 0], 1 << replay.upcard
    for player, action in state.history:
        top = replay.top_discard()
        if action >= DISCARD_BASE:
            bit = 1 << action_card(action)
            discarded[player] |= bit
            taken[player] &= ~bit
            pile |= bit
        elif action == DRAW_DISCARD:
            taken[player] |= 1 << top
            pile &= ~(1 << top)
        elif action in (DRAW_STOCK, PASS) and top is not None:
            passed[player] |= 1 << top
        replay.step(action)
    return taken, discarded, passed, pile


def reference_encode(
    state: HandState, seat: int, scores: list[int] | None, target: int, oracle: bool
) -> np.ndarray:
    """The observation vector built entry by entry from the readable state (independent of the kernel)."""
    taken, discarded, passed, pile = replay_knowledge(state)
    other = 1 - seat
    out = np.zeros(ORACLE_OBS_SIZE if oracle else OBS_SIZE, dtype=np.float32)
    out[0], out[1] = len(state.stock), state.knock_limit
    if scores is not None:
        out[2], out[3], out[4] = scores[seat], scores[other], target
    out[5 + state.phase] = 1.0
    out[10], out[11] = float(state.player == seat), float(state.dealer == seat)
    top = 1 << state.discard_pile[-1] if state.discard_pile else 0
    hand = state.hands[seat]
    planes = {
        "hand": hand,
        "top": top,
        "pile": pile ^ top,
        "opponent_taken": taken[other],
        "opponent_discarded": discarded[other],
        "opponent_passed": passed[other],
        "own_taken": taken[seat],
        "own_discarded": discarded[seat],
        "own_passed": passed[seat],
        "unseen": FULL_DECK ^ (hand | pile | taken[other]),
    }
    if oracle:
        planes["opponent_hand"] = state.hands[other]
    for name, mask in planes.items():
        for card in range(52):
            if mask >> card & 1:
                out[plane_slice(name)][card] = 1.0
    return out


def test_knowledge_of_replays_the_public_record() -> None:
    env = gin_rummy_v0.raw_env()
    env.reset(seed=4)
    rng = random.Random(4)
    while not any(env.terminations.values()):
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[rng.randrange(legal.size)]))
        if not any(env.terminations.values()):
            live = env.knowledge
            assert replay_knowledge(env.hand) == (live.taken, live.discarded, live.passed, live.pile)
            snapshot = Knowledge.of(env.hand)
            assert (snapshot.taken, snapshot.pile) == (live.taken, live.pile)
            # The pile record is the engine's discard pile; cards taken are still held.
            assert live.pile == mask_of(env.hand.discard_pile)
            for p in (0, 1):
                assert live.taken[p] & ~env.hand.hands[p] == 0
    copy = env.knowledge.copy()
    copy.taken[0] ^= 1
    assert copy.taken != env.knowledge.taken


# ---------------------------------------------------------------------------- layout and decoding


def test_layout_constants() -> None:
    assert OBS_SIZE == PLANE_BASE + 52 * len(PLANES) == 532
    assert ORACLE_OBS_SIZE == OBS_SIZE + 52
    assert plane_slice("hand") == slice(12, 64)
    assert plane_slice("unseen") == slice(480, 532)
    assert plane_slice("opponent_hand") == slice(532, 584)
    with pytest.raises(KeyError, match="unknown plane"):
        plane_slice("stock")
    with pytest.raises(ValueError, match="entries"):
        decode(np.zeros(10, dtype=np.float32))


def test_decode_matches_the_engine_state() -> None:
    env = gin_rummy_v0.raw_env(oracle=True)
    env.reset(seed=9)
    rng = random.Random(9)
    steps = 0
    while not any(env.terminations.values()):
        state = env.hand
        for seat, agent in enumerate(AGENTS):
            obs = env.observe(agent)["observation"]
            v = decode(obs)
            assert v.hand == state.hands[seat]
            assert v.opponent_hand == state.hands[1 - seat]
            assert v.discard_pile == mask_of(state.discard_pile)
            assert v.top == (state.discard_pile[-1] if state.discard_pile else None)
            assert v.stock_size == len(state.stock)
            assert v.phase is state.phase
            assert v.to_move == (state.player == seat) and v.is_dealer == (state.dealer == seat)
            assert v.knock_limit == 10
            assert (v.own_score, v.opponent_score, v.target) == (0, 0, 0)
            assert v.cards("hand") == sorted(v.cards("hand")) and len(v.cards("top")) <= 1
            assert obs.dtype == np.float32 and set(np.unique(obs[5:])) <= {0.0, 1.0}
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[rng.randrange(legal.size)]))
        steps += 1
    assert steps > 10


def test_oklahoma_knock_limit_is_observed() -> None:
    deck = make_deck(KNOCKER, DEFENDER, "4d")
    env = gin_rummy_v0.raw_env(rules=Rules(oklahoma=True))
    env.reset(options={"deck": deck, "dealer": 0})
    assert view(env, "player_0").knock_limit == 4 == view(env, "player_1").knock_limit


# ---------------------------------------------------------------------------- compiled == reference


@pytest.mark.parametrize("oracle", [False, True])
@pytest.mark.parametrize("mode", ["hand", "match"])
def test_env_observations_equal_the_reference_encoder_at_every_step(mode: str, oracle: bool) -> None:
    rules = Rules(target=30, big_gin_bonus=31, game_bonus=100, line_bonus=25)
    env = gin_rummy_v0.raw_env(rules=rules, mode=mode, oracle=oracle)
    rng = random.Random(1)
    checked = 0
    for episode in range(6 if mode == "hand" else 1):
        env.reset(seed=episode)
        while env.agents:
            agent = env.agent_selection
            state = env.hand
            match = env.match
            scores = match.scores if match is not None else None
            for seat in (0, 1):
                expected = reference_encode(state, seat, scores, rules.target if match else 0, oracle)
                assert np.array_equal(
                    encode(state, seat, scores, rules.target if match else 0, oracle), expected
                )
                assert np.array_equal(env.observe(AGENTS[seat])["observation"], expected)
                checked += 1
            if env.terminations[agent]:
                env.step(None)
                continue
            legal = np.flatnonzero(env.observe(agent)["action_mask"])
            assert list(legal) == state.legal_actions()
            env.step(choose(rng, legal))
    assert checked > 300


# ---------------------------------------------------------------------------- the full state


@pytest.mark.parametrize("mode", ["hand", "match"])
def test_state_vector_matches_the_engine_at_every_step(mode: str) -> None:
    from ginenv.observation import (
        STATE_DEALER_BASE,
        STATE_PHASE_BASE,
        STATE_PLAYER_BASE,
        STATE_SIZE,
        state_slice,
    )

    env = gin_rummy_v0.raw_env(mode=mode, rules=Rules(target=30))
    rng = random.Random(3)
    for episode in range(4):
        env.reset(seed=episode)
        while env.agents and not (
            env.terminations[env.agent_selection] or env.truncations[env.agent_selection]
        ):
            state_vec = env.state()
            hand = env.hand
            assert state_vec.shape == (STATE_SIZE,) and env.state_space.contains(state_vec)
            for seat in (0, 1):
                assert (
                    mask_of(np.flatnonzero(state_vec[state_slice(f"hand_{seat}")]).tolist())
                    == hand.hands[seat]
                )
            order = state_vec[state_slice("stock_order")]
            # Position k from the top for every stock card: the stock list is kept reversed.
            assert [int(order[c]) for c in reversed(hand.stock)] == list(range(1, len(hand.stock) + 1))
            pile = state_vec[state_slice("pile_order")]
            assert [int(pile[c]) for c in hand.discard_pile] == list(range(1, len(hand.discard_pile) + 1))
            assert np.count_nonzero(pile) == len(hand.discard_pile)
            assert state_vec[STATE_PHASE_BASE + hand.phase] == 1
            assert state_vec[STATE_PLAYER_BASE + hand.player] == 1
            assert state_vec[STATE_DEALER_BASE + hand.dealer] == 1
            env.step(choose(rng, np.flatnonzero(env.observe(env.agent_selection)["action_mask"])))
