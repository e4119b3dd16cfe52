"""The hand record read through the core's functions (ginenv.kernels.hand): the readers say what the
record holds, the one take-top rule is the legal actions', the meld-partner relation is the one the
levels used to spell out, and the layers above that read a record (the batched engine and its
compiled opponents, the compiled hard, master's rollouts, the luck) play exactly as pinned."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from ginenv.agents.levels.hard_compiled import hard_moves
from ginenv.agents.levels.heuristics import interest_cards, partner_cards
from ginenv.agents.levels.heuristics_compiled import danger_table
from ginenv.agents.levels.master import rollout
from ginenv.agents.levels.master_rollout import rollout_rules
from ginenv.experiments.eval.luck import deal_delta, load_value

from ginenv.actions import DRAW_DISCARD
from ginenv.cards import FULL_DECK, NUM_CARDS
from ginenv.engine import HandState
from ginenv.kernels import MELD_PARTNERS, RUN_PARTNERS, SET_PARTNERS
from ginenv.kernels import hand as H
from ginenv.rules import Rules
from ginenv.vector import OpponentVectorGinRummy, VectorGinRummy


def digest(*arrays: np.ndarray) -> str:
    """The first 16 hex digits of the sha256 of the arrays as int64."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=np.int64).tobytes())
    return h.hexdigest()[:16]


def random_hands(seed: int, rules: Rules, hands: int) -> list[HandState]:
    """States met while playing ``hands`` hands of uniformly random legal actions, every decision."""
    rng = np.random.default_rng(seed)
    seen = []
    for k in range(hands):
        state = HandState(rules, dealer=k % 2, deck=rng.permutation(NUM_CARDS).tolist())
        while not state.is_over:
            seen.append(state.clone())
            state.step(int(rng.choice(state.legal_actions())))
        seen.append(state)
    return seen


@pytest.mark.parametrize("rules", [Rules(), Rules(oklahoma=True, discard_taken_card=True)])
def test_the_readers_say_what_the_hand_holds(rules: Rules) -> None:
    for state in random_hands(3, rules, 12):
        s = state.record
        me = state.player
        assert H.phase_of(s, 0) == state.phase
        assert (H.mover(s, 0), H.dealer_of(s, 0)) == (me, state.dealer)
        assert (H.hand_of(s, 0, 0), H.hand_of(s, 0, 1)) == state.hands
        assert H.knock_limit_of(s, 0) == state.knock_limit
        assert list(H.deck_order(s, 0)) == list(state.deck)
        assert list(H.stock_cards(s, 0)) == list(state.stock[::-1])  # stock[-1] is drawn next
        assert H.count_stock(s, 0) == len(state.stock)
        if state.stock:
            assert H.next_stock_card(s, 0) == state.stock[-1]
        pile = sum(1 << c for c in state.discard_pile)
        # Every card is in a hand, in the discard pile or in the stock.
        assert H.stock_mask(s, 0) == FULL_DECK ^ (state.hands[0] | state.hands[1] | pile)
        # The take-top rule is the legal actions'.
        assert H.may_take_top(s, 0) == (not state.is_over and DRAW_DISCARD in state.legal_actions())
        if state.is_over:
            result = state.result
            assert result is not None
            for seat in (0, 1):
                want = 0 if result.winner is None else result.points * (1 if result.winner == seat else -1)
                assert H.points_for(s, 0, seat) == want


@pytest.mark.parametrize("taken_back", [False, True])
def test_the_writers_write_what_the_readers_read(taken_back: bool) -> None:
    rules = Rules(discard_taken_card=taken_back)
    cfg = H.rules_array(rules, 100)
    for state in random_hands(5, rules, 4)[::7]:
        s = state.record.copy()
        pile = np.array(state.discard_pile[::-1], dtype=np.int64)  # another pile, to see it written
        H.set_table(s, 0, pile, 1 - state.dealer, False)
        assert list(H.discard_pile(s, 0)) == list(pile)
        assert H.pile_mask(s, 0) == sum(1 << int(c) for c in pile)
        assert H.dealer_of(s, 0) == 1 - state.dealer
        H.set_public_cards(s, 0, 1, 0b101, 0b1000, 1 << 51)
        assert H.public_cards(s, 0, 1) == (0b101, 0b1000, 1 << 51)
        H.set_just_taken(s, 0, 17, cfg)
        # The card just taken is remembered; it may not go back unless the rules say it may.
        assert H.just_taken(s, 0) == 17 and H.banned_card(s, 0) == (-1 if taken_back else 17)
        H.set_just_taken(s, 0, -1, cfg)
        assert H.just_taken(s, 0) == -1 and H.banned_card(s, 0) == -1
        # Nothing else of the row moved.
        assert (H.hand_of(s, 0, 0), H.hand_of(s, 0, 1)) == state.hands
        assert H.draws_of(s, 0) == H.draws_of(state.record, 0)
        assert H.result_of(s, 0) == H.result_of(state.record, 0)


def test_the_stock_is_a_view_a_search_may_reorder() -> None:
    state = HandState(Rules(), deck=list(range(NUM_CARDS)))
    s = state.record.copy()
    H.stock_cards(s, 0)[:] = H.stock_cards(s, 0)[::-1].copy()
    assert H.next_stock_card(s, 0) == NUM_CARDS - 1
    H.set_hand(s, 0, 1, 7)
    assert H.hand_of(s, 0, 1) == 7


def test_the_rule_array_is_read_through_the_core() -> None:
    cfg = H.rules_array(Rules(gin_bonus=20, undercut_bonus=15, big_gin_bonus=50), 100)
    assert H.bonuses(cfg) == (20, 15, 50)
    assert H.bonuses(H.rules_array(Rules(big_gin_bonus=None), 100))[2] == -1
    assert not H.discard_taken(cfg) and H.discard_taken(H.rules_array(Rules(discard_taken_card=True), 9))
    shared = H.shared_rules_array(Rules(), 100)
    assert shared is H.shared_rules_array(Rules(), 100) and not shared.flags.writeable
    assert shared is HandState(Rules()).rule_array


def test_meld_partners_are_the_cards_that_make_a_meld_of_three_with_one_more() -> None:
    for c in range(NUM_CARDS):
        r, s = c % 13, c // 13
        assert SET_PARTNERS[c] == sum(1 << (t * 13 + r) for t in range(4) if t != s)
        assert RUN_PARTNERS[c] == sum(1 << (s * 13 + r + d) for d in (-2, -1, 1, 2) if 0 <= r + d <= 12)
        assert MELD_PARTNERS[c] == SET_PARTNERS[c] | RUN_PARTNERS[c]
    # The levels' figures and danger, pinned from when each spelled the relation out for itself.
    assert levels_digests() == PINNED["levels"]


def levels_digests() -> dict[str, str]:
    """Digests of the levels' partner and interest cards and of the danger table on random masks."""
    rng = np.random.default_rng(0)
    masks = [
        sum(1 << int(c) for c in rng.choice(NUM_CARDS, int(rng.integers(0, 20)), replace=False))
        for _ in range(600)
    ]
    danger = [
        danger_table(a | b, a & ~b, c) for a, b, c in zip(masks[::3], masks[1::3], masks[2::3], strict=True)
    ]
    return {
        "partner": digest(np.array([partner_cards(m) for m in masks])),
        "interest": digest(np.array([interest_cards(m) for m in masks])),
        "danger": digest((np.array(danger) * 1024).round()),
    }


def test_the_batched_engine_its_opponents_and_the_compiled_hard_play_as_pinned() -> None:
    """Pinned from before the layers above read the record through the core: any change to a step,
    a compiled policy's move or hard's moves changes the digest."""
    assert engine_digests() == PINNED["engine"]


def engine_digests() -> dict[str, str]:
    """Digests of the batched engine's steps under the compiled policies and the compiled hard, and
    of the opponent engine's, under two rule sets."""
    found = {}
    for name, rules in (("standard", Rules()), ("oklahoma", Rules(oklahoma=True, discard_taken_card=True))):
        venv = VectorGinRummy(16, rules=rules, seed=11, turn_limit=60)
        venv.reset()
        seen = []
        for step in range(120):
            hard = hard_moves(venv, np.arange(16))
            kind = ("greedy", "random", "hard")[step % 3]
            acts = hard if kind == "hard" else venv.policy_actions(kind)
            _, mask, player, rewards, terminated, _ = venv.step(acts)
            seen += [hard, acts, player, (rewards * 1000).round(), terminated, mask.sum(axis=1)]
        seen.append(venv.batch.state)
        opp = OpponentVectorGinRummy(8, opponent="greedy", rules=rules, seed=3)
        _, mask = opp.reset()
        rng = np.random.default_rng(9)
        for _ in range(40):
            acts = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
            obs, mask, rewards, terminated, _, _ = opp.step(acts)
            seen += [obs.sum(axis=1), rewards.round(), terminated]
        found[name] = digest(*seen)
    return found


def test_masters_rollouts_score_as_pinned() -> None:
    assert rollout_digest() == PINNED["rollouts"]


def rollout_digest() -> str:
    """Digest of master's rollouts from 60 deals under two rule sets, with and without its costs."""
    rng = np.random.default_rng(0)
    points = []
    for rules in (Rules(), Rules(oklahoma=True, big_gin_bonus=31, discard_taken_card=True)):
        cfg = rollout_rules(rules)
        for k in range(30):
            deck = rng.permutation(NUM_CARDS)
            me = sum(1 << int(c) for c in deck[:10])
            opp = sum(1 << int(c) for c in deck[10:20])
            traps = np.array([k % 4, (k + 1) % 5], dtype=np.int64)
            stock = deck[21:].astype(np.int64)
            points.append(rollout(me, opp, stock, int(deck[20]), k % 2, 10, cfg, traps, 10, 0.0, 0.0))
            points.append(rollout(me, opp, stock, int(deck[20]), k % 2, 10, cfg, traps, 8, 3.0, 0.5))
    return digest(np.array(points))


def test_the_luck_with_a_big_gin_bonus_of_its_own_is_as_pinned() -> None:
    # The knock features score a 10-card knock, which never reads the big gin bonus: with a bonus
    # other than gin's the luck is what it was when the gin bonus was passed in its place.
    assert big_bonus_lucks() == pytest.approx(PINNED["luck"], abs=1e-12)


def big_bonus_lucks() -> list[float]:
    """The luck of six hands under a big gin bonus other than the gin bonus."""
    rules = Rules(gin_bonus=20, big_gin_bonus=50, undercut_bonus=15)
    rng = np.random.default_rng(4)
    weights = load_value().flat
    lucks = []
    for k in range(6):
        state = HandState(rules, dealer=k % 2, deck=rng.permutation(NUM_CARDS).tolist())
        while not state.is_over:
            legal = state.legal_actions()
            knocks = [a for a in legal if a >= 56 or a == 3]
            state.step(max(knocks) if knocks else int(rng.choice(legal)))
        delta = deal_delta(state.deck, state.dealer, [a for _, a in state.history], rules)
        lucks.append(float(delta @ weights))
    return lucks


#: Computed by the code before the layers above read the record through the core's functions.
PINNED: dict = {
    "levels": {"partner": "314e746c657eb8da", "interest": "1ffdbf63aca2b2e6", "danger": "4c5a3128a865e925"},
    "engine": {"standard": "e1acbfac23432c58", "oklahoma": "c4cea373fd54d92f"},
    "rollouts": "a5dd9e156b337b42",
    "luck": [
        9.078221398305612,
        2.018538411755863,
        -12.852186285664061,
        -3.7640159937593127,
        -7.829934909618059,
        3.020313627280201,
    ],
}
