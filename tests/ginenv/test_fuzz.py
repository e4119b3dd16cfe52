"""Random legal play of thousands of hands, checking the engine's invariants at every step."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS, action_card
from ginenv.cards import CARD_VALUES, FULL_DECK, mask_of
from ginenv.engine import HandState, Phase
from ginenv.melds import deadwood_of_mask
from ginenv.rules import PRESETS, Rules
from ginenv.scoring import score_knock

HANDS_PER_RULES = 1000


def choose(state: HandState, rng: random.Random, knock_at: int | None) -> int:
    """A random legal action, or (``knock_at`` set) a greedy one: keep deadwood low and knock once it
    is at most ``knock_at``, so that showdowns of every kind come up often."""
    legal = state.legal_actions()
    if knock_at is None or state.phase is not Phase.DISCARD:
        return rng.choice(legal)
    if BIG_GIN in legal:
        return BIG_GIN
    hand = state.hands[state.player]

    def left(action: int) -> tuple[int, float]:
        card = action_card(action)
        assert card is not None
        return deadwood_of_mask(hand & ~(1 << card)), rng.random()

    knocks = [a for a in legal if a >= KNOCK_BASE]
    if knocks:
        best = min(knocks, key=left)
        if left(best)[0] <= knock_at:
            return best
    return min((a for a in legal if DISCARD_BASE <= a < KNOCK_BASE), key=left)


def check_state(state: HandState) -> None:
    hands = state.hands
    stock, pile = mask_of(state.stock), mask_of(state.discard_pile)
    # Every card is in exactly one place.
    assert hands[0] | hands[1] | stock | pile == FULL_DECK
    assert hands[0].bit_count() + hands[1].bit_count() + len(state.stock) + len(state.discard_pile) == 52
    legal = state.legal_actions()
    assert 0 <= state.draws <= state.turn_limit
    if state.rules.discard_taken_card:
        assert state.banned == -1  # seed 004: nothing is ever banned from the discard
    if state.is_over:
        assert legal == []
        return
    assert legal, "no legal action in a live hand"
    sizes = [hands[0].bit_count(), hands[1].bit_count()]
    mover = state.player
    if state.phase is Phase.DISCARD:
        assert sizes[mover] == 11 and sizes[1 - mover] == 10
        held = hands[mover]
        discards = {a - DISCARD_BASE for a in legal if DISCARD_BASE <= a < KNOCK_BASE}
        assert mask_of(discards) == held & ~(1 << state.banned if state.banned >= 0 else 0)
        for a in legal:
            if a >= KNOCK_BASE:
                assert a - KNOCK_BASE in discards
                assert deadwood_of_mask(held ^ (1 << (a - KNOCK_BASE))) <= state.knock_limit
        assert (BIG_GIN in legal) == (state.rules.big_gin and deadwood_of_mask(held) == 0)
    else:
        assert sizes == [10, 10]
        allowed = {DRAW_STOCK, DRAW_DISCARD} if state.phase is Phase.DRAW else {DRAW_DISCARD, PASS}
        assert set(legal) <= allowed
        assert len(state.stock) > state.rules.dead_hand_stock


def check_result(state: HandState, kinds: Counter[str]) -> None:
    result = state.result
    assert result is not None
    kinds[result.kind] += 1
    assert sum(result.score_deltas()) == 0
    if result.kind == "dead":
        assert (result.winner, result.points) == (None, 0)
        assert len(state.stock) == state.rules.dead_hand_stock
        return
    if result.kind == "truncated":
        assert (result.winner, result.points, result.knocker, result.knock) == (None, 0, None, None)
        assert state.draws == state.turn_limit
        assert len(state.stock) > state.rules.dead_hand_stock
        assert result.deadwood == (deadwood_of_mask(state.hands[0]), deadwood_of_mask(state.hands[1]))
        return
    knocker = result.knocker
    assert knocker is not None
    defender = 1 - knocker
    assert result.deadwood[knocker] <= state.knock_limit
    knocker_cards = state.hands[knocker]
    assert knocker_cards.bit_count() == (11 if result.kind == "big_gin" else 10)
    assert state.hands[defender].bit_count() == 10
    # The engine scores through score_knock, with the hand's own limit.
    assert result.knock == score_knock(knocker_cards, state.hands[defender], state.rules, state.knock_limit)
    expected_winner = defender if result.kind == "undercut" else knocker
    assert result.winner == expected_winner
    if result.kind in ("gin", "big_gin"):
        assert result.deadwood[knocker] == 0
        assert result.knock is not None and result.knock.layoffs == ()
        bonus = state.rules.gin_bonus if result.kind == "gin" else state.rules.big_gin_bonus
        assert result.points == bonus + result.deadwood[defender]
    elif result.kind == "knock":
        assert result.points == result.deadwood[defender] - result.deadwood[knocker] > 0
    else:
        assert (
            result.points == result.deadwood[knocker] - result.deadwood[defender] + state.rules.undercut_bonus
        )


def play_hand(rules: Rules, rng: random.Random, kinds: Counter[str], turn_limit: int = 100) -> None:
    state = HandState(rules, dealer=rng.randrange(2), rng=rng, turn_limit=turn_limit)
    upcard = state.upcard
    expected_limit = rules.knock_limit
    if rules.oklahoma:
        expected_limit = 0 if upcard % 13 == 0 else CARD_VALUES[upcard]
    assert state.knock_limit == expected_limit
    knock_at = rng.choice([None, 0, 0, 3, 10])
    steps = 0
    while not state.is_over:
        check_state(state)
        stock_before, history_before = len(state.stock), len(state.history)
        action = choose(state, rng, knock_at)
        state.step(action)
        assert len(state.history) == history_before + 1
        assert len(state.stock) == stock_before - (action == DRAW_STOCK)
        steps += 1
        # Two upcard decisions, then a draw and a discard per turn: bounded by the turn limit.
        assert steps <= 2 + 2 * state.turn_limit
    check_state(state)
    check_result(state, kinds)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_random_play_keeps_the_invariants(name: str) -> None:
    rules = PRESETS[name]
    rng = random.Random(f"fuzz-{name}")
    kinds: Counter[str] = Counter()
    for _ in range(HANDS_PER_RULES):
        play_hand(rules, rng, kinds)
    # The play reached every ending the rules allow, so the checks above ran on each.
    assert kinds["knock"] and kinds["undercut"] and kinds["gin"] and kinds["dead"], kinds
    assert bool(kinds["big_gin"]) == rules.big_gin, kinds


@pytest.mark.parametrize(
    "rules", [Rules(knock_limit=0, dead_hand_stock=0), Rules(knock_limit=3, dead_hand_stock=20, gin_bonus=10)]
)
def test_random_play_with_unusual_options(rules: Rules) -> None:
    rng = random.Random(repr(rules))
    kinds: Counter[str] = Counter()
    for _ in range(HANDS_PER_RULES // 2):
        play_hand(rules, rng, kinds)
    assert kinds["dead"] and kinds["gin"], kinds


@pytest.mark.parametrize("name", ["standard", "seed004"])
def test_random_play_under_a_small_turn_limit(name: str) -> None:
    """With 12 draws a hand, many hands end truncated; every invariant holds for them too."""
    rng = random.Random(f"limit-{name}")
    kinds: Counter[str] = Counter()
    for _ in range(HANDS_PER_RULES // 4):
        play_hand(PRESETS[name], rng, kinds, turn_limit=12)
    assert kinds["truncated"] and kinds["truncated"] < kinds.total(), kinds  # showdowns too
    assert not kinds["dead"], kinds  # 12 draws never empty the stock
