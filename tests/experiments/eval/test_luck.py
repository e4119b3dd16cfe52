"""The luck control variate (ginenv.experiments.eval.luck): exactly zero mean over the stock at every draw,
near zero on many hands, correlated with the points, consistent across its entry points, equal to a
plain Python recomputation that steps the engine (and to values pinned for hands named by cards), and
a value file that is refused when malformed."""

from __future__ import annotations

import json
import math
import random
import re

import numpy as np
import pytest
from ginenv.experiments.eval import luck
from ginenv.experiments.eval.luck import (
    FEATURES,
    LOOSE_DISCARD,
    NUM_WEIGHTS,
    STAGES,
    LuckValue,
    LuckValueError,
    deal_delta,
    draw_values,
    hand_luck,
    load_value,
    parse_value,
    state_delta,
    state_luck,
    value_document,
)

from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS, action_id
from ginenv.cards import CARD_VALUES, cards_of, mask_of, parse_cards
from ginenv.engine import HandState, IllegalActionError, Phase
from ginenv.kernels import best_discard_deadwood, min_deadwood
from ginenv.melds import deadwood_of_mask
from ginenv.rules import Rules
from ginenv.scoring import score_knock


def greedy_action(state: HandState, rng: random.Random, noise: float) -> int:
    """A legal action: at random with probability ``noise``, else a greedy player's (knock when it
    can, take the discard when it lowers the deadwood, discard to the least deadwood)."""
    legal = state.legal_actions()
    if rng.random() < noise:
        return rng.choice(legal)
    knocks = [a for a in legal if a >= KNOCK_BASE or a == BIG_GIN]
    if knocks:
        return max(knocks)
    hand = state.hands[state.player]
    if DRAW_DISCARD in legal:
        top = state.discard_pile[-1]
        if best_discard_deadwood(hand | (1 << top)) < min_deadwood(hand):
            return DRAW_DISCARD
        return PASS if PASS in legal else DRAW_STOCK
    if legal == [DRAW_STOCK]:
        return DRAW_STOCK
    return min(legal, key=lambda a: (min_deadwood(hand ^ (1 << (a - DISCARD_BASE))), -a))


def play(rng: random.Random, rules: Rules, noise: float, stop_at_draw: int | None = None) -> HandState:
    """A seeded hand played to its end, or stopped before its ``stop_at_draw``-th stock draw."""
    state = HandState(rules, dealer=rng.randrange(2), rng=rng)
    draws = 0
    while not state.is_over:
        action = greedy_action(state, rng, noise)
        if action == DRAW_STOCK and state.phase is Phase.DRAW:
            if draws == stop_at_draw:
                return state
            draws += 1
        state.step(action)
    return state


def random_value(seed: int) -> LuckValue:
    """Weights that are not the shipped ones: the zero mean must hold for any V."""
    return LuckValue(np.random.default_rng(seed).normal(size=(NUM_WEIGHTS // 13, 13)), {}, "random")


def drawn(state: HandState, card: int) -> HandState:
    """``state``'s hand replayed on a deck where ``card`` is the next stock card, then drawn."""
    deck = list(state.deck)
    nxt = 51 - len(state.stock) + 1  # the deck position of the next stock card (stock[-1])
    assert deck[nxt] == state.stock[-1]
    j = deck.index(card)
    deck[nxt], deck[j] = deck[j], deck[nxt]
    other = HandState(state.rules, dealer=state.dealer, deck=deck, turn_limit=state.turn_limit)
    for _, action in state.history:
        other.step(action)
    other.step(DRAW_STOCK)
    return other


@pytest.mark.parametrize(
    "rules",
    [Rules(), Rules(oklahoma=True, big_gin_bonus=31, discard_taken_card=True)],
    ids=["standard", "oklahoma"],
)
@pytest.mark.parametrize("value", [None, random_value(1)], ids=["shipped", "random-weights"])
def test_the_luck_of_a_draw_averages_exactly_zero_over_the_stock(
    rules: Rules, value: LuckValue | None
) -> None:
    rng = random.Random(3)
    checked = 0
    for stop in (0, 1, 4, 9, 15):
        state = play(rng, rules, noise=0.2, stop_at_draw=stop)
        if state.is_over:
            continue
        before = state_luck(state, value)
        values = draw_values(state, value)
        assert sorted(values) == sorted(state.stock)
        mean = sum(values.values()) / len(values)
        terms = []
        for card in state.stock:
            # The luck of drawing `card`, as the whole hand's luck sees it, is V(card) - mean V.
            term = state_luck(drawn(state, card), value) - before
            assert term == pytest.approx(values[card] - mean, abs=1e-9)
            terms.append(term)
        assert abs(sum(terms) / len(terms)) < 1e-9
        assert max(abs(t) for t in terms) > 0  # V tells the cards apart: the check is not vacuous
        checked += 1
    assert checked >= 3


def test_luck_is_near_zero_on_random_hands_and_follows_the_points() -> None:
    rng = random.Random(11)
    lucks, points = [], []
    for _ in range(800):
        state = play(rng, Rules(), noise=0.2)
        assert state.result is not None
        lucks.append(state_luck(state))
        points.append(state.result.score_deltas()[0])
    x = np.array(lucks)
    z = x.mean() / (x.std(ddof=1) / math.sqrt(len(x)))
    assert abs(z) < 4, f"mean luck {x.mean():.3f} is {z:.1f} standard errors from 0"
    assert np.corrcoef(x, points)[0, 1] > 0.3  # V predicts the points (0.5 measured)
    # Random legal play (mostly dead hands): still mean zero.
    rng = random.Random(12)
    x = np.array([state_luck(play(rng, Rules(), noise=1.0)) for _ in range(300)])
    assert abs(x.mean() / (x.std(ddof=1) / math.sqrt(len(x)))) < 4


def test_hand_luck_equals_state_luck_and_is_deterministic() -> None:
    rng = random.Random(5)
    for _ in range(20):
        state = play(rng, Rules(), noise=0.3)
        actions = [a for _, a in state.history]
        value = state_luck(state)
        assert hand_luck(state.deck, state.dealer, actions, state.rules, state.turn_limit) == value
        assert hand_luck(list(state.deck), state.dealer, actions, state.rules) == value
        assert state_luck(state) == value
        assert float(state_delta(state) @ load_value().flat) == pytest.approx(value, abs=1e-12)


def test_a_hand_without_a_stock_draw_has_no_luck() -> None:
    # The non-dealer (player 1) holds As-9s and Kh, takes the upcard Ts and goes gin at once.
    front = [*range(9), 51]
    deck = front + [c for c in range(52) if c not in front and c != 9]
    deck.insert(20, 9)
    state = HandState(Rules(), dealer=0, deck=deck)
    assert state_luck(state) == 0.0  # nothing played yet
    state.step(DRAW_DISCARD)
    state.step(KNOCK_BASE + 51)
    assert state.result is not None and state.result.kind == "gin"
    assert state_luck(state) == 0.0
    assert hand_luck(deck, 0, [DRAW_DISCARD, KNOCK_BASE + 51], Rules()) == 0.0


def test_the_seats_are_antisymmetric() -> None:
    # The same deck and actions with the other dealer: the same roles, seats swapped, so the luck
    # (player 0's view) changes sign exactly.
    rng = random.Random(8)
    for _ in range(10):
        state = play(rng, Rules(), noise=0.2)
        actions = [a for _, a in state.history]
        mine = hand_luck(state.deck, state.dealer, actions, Rules())
        theirs = hand_luck(state.deck, 1 - state.dealer, actions, Rules())
        assert theirs == -mine


def test_dead_and_truncated_hands_have_the_luck_of_their_draws() -> None:
    rng = random.Random(2)
    for kind, turn_limit in (("dead", 100), ("truncated", 4)):
        for _ in range(200):
            state = HandState(Rules(), dealer=0, rng=rng, turn_limit=turn_limit)
            while not state.is_over:
                legal = state.legal_actions()
                # Never knock: every hand ends dead (or at the turn limit).
                state.step(rng.choice([a for a in legal if a < KNOCK_BASE and a != BIG_GIN]))
            assert state.result is not None
            if state.result.kind == kind:
                break
        assert state.result is not None and state.result.kind == kind
        actions = [a for _, a in state.history]
        value = hand_luck(state.deck, state.dealer, actions, Rules(), turn_limit)
        assert math.isfinite(value) and value == state_luck(state)


# ---------------------------------------------------------------------------- a plain recomputation


def reference_features(hand: int, opp: int, card: int, limit: int, rules: Rules, waiter: bool) -> list[float]:
    """The :data:`FEATURES` of drawing ``card`` into ``hand`` (drawer's view), written out plainly from
    the readable API (deadwood by mask, :func:`score_knock`), as the module docstring defines them."""
    held = hand | 1 << card
    after = {d: deadwood_of_mask(held ^ 1 << d) for d in cards_of(held)}
    dw = min(after.values())
    # The least-deadwood discard, the highest card among ties (the lowest id among equal values).
    discard = max((d for d in after if after[d] == dw), key=lambda d: (CARD_VALUES[d], -d))
    kept = held ^ 1 << discard
    points = 0.0
    knocker = None
    if rules.big_gin_bonus is not None and deadwood_of_mask(held) == 0:
        knocker = held
    elif dw <= limit:
        knocker = kept
    if knocker is not None:
        res = score_knock(knocker, opp, rules, knock_limit=limit)
        points = float(res.points if res.winner == "knocker" else -res.points)
    melded = 0
    for r in range(13):  # sets: three or four of a rank
        same = [c for c in cards_of(kept) if c % 13 == r]
        if len(same) >= 3:
            melded |= mask_of(same)
    for base in range(0, 52, 13):  # runs: any three in a row of a suit (longer runs overlap them)
        for start in range(11):
            run = mask_of(range(base + start, base + start + 3))
            if kept & run == run:
                melded |= run
    can_knock = 1.0 if dw <= limit else 0.0
    gin = 1.0 if dw == 0 else 0.0
    opp_close = math.exp(-deadwood_of_mask(opp) / 10.0)
    feeds = 1.0 if best_discard_deadwood(opp | 1 << discard) <= limit else 0.0
    near_gin = math.exp(-dw / 5.0)
    values = {
        "near_gin": near_gin,
        "near_knock": math.exp(-dw / 15.0),
        "deadwood": dw / 30.0,
        "can_knock": can_knock,
        "knock_points": points,
        "knock_points_eager": 0.0 if waiter else points,
        "gin": gin,
        "melded": bin(melded).count("1") / 10.0,
        "feeds_knock": feeds,
        "near_gin_vs_opponent": near_gin * opp_close,
        "can_knock_waiter": can_knock if waiter else 0.0,
        "gin_waiter": gin if waiter else 0.0,
        "knock_points_vs_opponent": points * opp_close,
    }
    return [values[name] for name in FEATURES]


def reference_delta(state: HandState) -> tuple[np.ndarray, dict[int, list[float]], int]:
    """:func:`state_delta` recomputed by stepping a fresh :class:`HandState` through ``state``'s
    history, plus (when the hand waits for a draw) each stock card's features and their block."""
    replay = HandState(state.rules, dealer=state.dealer, deck=state.deck, turn_limit=state.turn_limit)
    limit = replay.knock_limit
    delta = np.zeros(NUM_WEIGHTS)
    waited, loose = [0, 0], [0, 0]

    def candidates() -> tuple[dict[int, list[float]], int]:
        me = replay.player
        hand, opp = replay.hands[me], replay.hands[1 - me]
        feats = {
            c: reference_features(hand, opp, c, limit, replay.rules, waited[me] > 0) for c in replay.stock
        }
        left = replay.stock_size - 1  # the stock after the draw
        stage = next(k for k, (lo, hi) in enumerate(STAGES) if lo <= left <= hi)
        table = 0 if loose == [0, 0] else 1
        return feats, (table * len(STAGES) + stage) * len(FEATURES)

    for player, action in state.history:
        if replay.phase is Phase.DRAW and action == DRAW_STOCK:
            feats, block = candidates()
            mean = np.mean([feats[c] for c in sorted(feats)], axis=0)
            sign = 1.0 if player == 0 else -1.0
            delta[block : block + len(FEATURES)] += sign * (np.array(feats[replay.stock[-1]]) - mean)
        elif replay.phase is Phase.DISCARD and action != BIG_GIN:
            card = action - (KNOCK_BASE if action >= KNOCK_BASE else DISCARD_BASE)
            hand = replay.hands[player]
            if deadwood_of_mask(hand ^ 1 << card) >= best_discard_deadwood(hand) + LOOSE_DISCARD:
                loose[player] += 1
            if action < KNOCK_BASE and best_discard_deadwood(hand) <= limit:
                waited[player] += 1  # a knock was legal and was passed up
        replay.step(action)
    if replay.phase is Phase.DRAW:
        feats, block = candidates()
        return delta, feats, block
    return delta, {}, -1


@pytest.mark.parametrize(
    ("rules", "turn_limit"),
    [
        (Rules(), 100),
        (Rules(oklahoma=True, big_gin_bonus=31, discard_taken_card=True), 100),
        (Rules(dead_hand_stock=0, knock_limit=6, undercut_bonus=10), 7),
    ],
    ids=["standard", "oklahoma-taken-big-gin", "no-dead-hand-turn-limit"],
)
def test_the_compiled_replay_equals_a_plain_recomputation(rules: Rules, turn_limit: int) -> None:
    # The compiled replay steps the hand kernel; the reference steps the engine and computes every
    # figure in plain Python: a wrong phase, stage, table, sign, stock or knock limit shows here.
    rng = random.Random(17)
    value = load_value()
    kinds = set()
    for k in range(8):
        state = HandState(rules, dealer=k % 2, rng=rng, turn_limit=turn_limit)
        noise = (0.1, 0.5)[k % 2]
        stop = rng.randrange(3, 12) if k % 3 == 0 else None
        draws = 0
        while not state.is_over:
            action = greedy_action(state, rng, noise)
            hand = state.hands[state.player]
            if k % 2 and action >= KNOCK_BASE and min_deadwood(hand ^ 1 << (action - KNOCK_BASE)) > 0:
                action -= KNOCK_BASE - DISCARD_BASE  # waits for gin: the same card, without knocking
            if action == DRAW_STOCK and state.phase is Phase.DRAW:
                if draws == stop:
                    break
                draws += 1
            state.step(action)
        kinds.add(state.result.kind if state.result else "waiting")
        expected, feats, block = reference_delta(state)
        assert np.abs(expected).sum() > 0
        assert state_delta(state) == pytest.approx(expected, abs=1e-9)
        if feats:  # a hand waiting for a draw: V of each stock card
            w = value.flat[block : block + len(FEATURES)]
            sign = 1.0 if state.player == 0 else -1.0
            want = {c: sign * float(np.dot(f, w)) for c, f in feats.items()}
            assert draw_values(state) == pytest.approx(want, abs=1e-9)
    assert len(kinds) >= 2  # the hands end in more than one way


# Hands named by cards, with the luck the replay gave before it stepped the hand kernel (pinned).
SCRIPTED = {
    "standard": (
        Rules(),
        100,
        0,
        "3d Kc 8c 2c Qh 5d 3h Ks Jd 6c Qd 7d 2s 8h As 9h Kh Kd Ah 8s Ts 4s Jc 4d Qs 6h Ad 4c 7c 8d 7h Th "
        "Jh 2h Js 9s 6s 3s 5s 3c 4h 6d 9d Tc Td Qc 7s 5h 5c Ac 2d 9c",
        "pass|pass|draw_stock|discard Qh|draw_stock|discard 7d|draw_stock|discard Jd|draw_stock|"
        "discard 2s|draw_discard|discard Kc|draw_discard|discard Qd|draw_stock|discard Ks|draw_discard|"
        "discard Jc|draw_stock|discard 8c|draw_discard|discard Qs|draw_stock|discard 6h|draw_discard|"
        "knock 9h",
        -4.440624090118503,
    ),
    # Oklahoma (upcard 5d: knock limit 5), and the card just taken thrown back at once (Th).
    "oklahoma": (
        Rules(oklahoma=True, discard_taken_card=True, big_gin_bonus=31),
        100,
        1,
        "2d Kh Th 9s 5s 6s 9d 5h 5c Tc Qh 8c 9c 8d 7h 7c Ad Ts 7d Ks 5d Jd Jc As 2s 3s 9h 4s Qd Kd 2h 4c "
        "4h Ac 3h Td 4d 6c 3c Jh Js Qc 3d 6d 8h Kc 2c 7s Qs 6h Ah 8s",
        "draw_discard|discard Kh|draw_stock|discard Qh|draw_stock|discard Th|draw_discard|discard Th|"
        "draw_stock|discard Jc|draw_stock|discard 8c|draw_discard|discard Tc|draw_stock|discard Jd|"
        "draw_stock|discard 8c|draw_discard|discard Ks|draw_stock|knock 2d",
        7.1175005871539705,
    ),
    # Truncated at a turn limit of 6 draws.
    "truncated": (
        Rules(),
        6,
        0,
        "3s Kd Qs Kc 7c Ts 6c Jh 3c 4d Tc 6s 4s 9s Qd 7d 9h Qh Jc 5h Ah 9c Ks Ad 8d 8c Kh 6h Td Js 9d 2h "
        "2c 5c 7h As 2d 4h 2s 8h 7s Ac Qc 3h 5d 3d 6d 8s 4c 5s Th Jd",
        "pass|draw_discard|discard Qh|draw_stock|discard Jh|draw_stock|discard Qd|draw_stock|discard Kd|"
        "draw_stock|discard Jc|draw_stock|discard Kc",
        -5.704778791475743,
    ),
}


@pytest.mark.parametrize("name", sorted(SCRIPTED))
def test_hands_named_by_cards_keep_their_pinned_luck(name: str) -> None:
    rules, turn_limit, dealer, deck_text, actions_text, pinned = SCRIPTED[name]
    deck = parse_cards(deck_text)
    actions = [action_id(a) for a in actions_text.split("|")]
    state = HandState(rules, dealer=dealer, deck=deck, turn_limit=turn_limit)
    for a in actions:
        state.step(a)
    assert state.is_over
    assert state_luck(state) == pytest.approx(pinned, abs=1e-12)
    assert hand_luck(deck, dealer, actions, rules, turn_limit) == pytest.approx(pinned, abs=1e-12)
    delta = deal_delta(deck, dealer, actions, rules, state.knock_limit, turn_limit)
    assert float(delta @ load_value().flat) == pytest.approx(pinned, abs=1e-12)
    assert delta == pytest.approx(reference_delta(state)[0], abs=1e-9)


def test_deal_delta_refuses_what_the_kernel_refuses() -> None:
    deck = parse_cards(SCRIPTED["oklahoma"][3])
    rules = SCRIPTED["oklahoma"][0]
    assert deal_delta(deck, 1, [PASS], rules).sum() == 0.0  # no stock draw yet
    with pytest.raises(ValueError, match=r"knock_limit 10 is not this deal's: .* knock limit of 5"):
        deal_delta(deck, 1, [PASS], rules, 10)
    with pytest.raises(
        ValueError, match=r"its action 0, 'draw_stock' \(id 0\), is not legal in phase UPCARD"
    ):
        deal_delta(deck, 1, [DRAW_STOCK], rules)
    # Both passed: the first draw must be from the stock.
    with pytest.raises(ValueError, match=r"its action 2, 'draw_discard' .* in phase DRAW"):
        deal_delta(deck, 1, [PASS, PASS, DRAW_DISCARD], rules)
    # A knock with any deadwood (limit 99) ends the hand; nothing may follow it.
    knock = action_id("knock Kh")
    assert deal_delta(deck, 1, [DRAW_DISCARD, knock], Rules(knock_limit=99)).sum() == 0.0
    with pytest.raises(ValueError, match=r"its action 2, .* after the hand ended"):
        deal_delta(deck, 1, [DRAW_DISCARD, knock, DRAW_STOCK], Rules(knock_limit=99))
    with pytest.raises(ValueError, match="id 999"):
        deal_delta(deck, 1, [999], rules)
    with pytest.raises(ValueError, match="52 card ids"):
        deal_delta(deck[:51], 1, [PASS], rules)


def test_illegal_actions_are_refused() -> None:
    state = HandState(Rules(), dealer=0, rng=random.Random(1))
    with pytest.raises(IllegalActionError):
        hand_luck(state.deck, 0, [DRAW_STOCK], Rules())  # the upcard is offered first
    with pytest.raises(ValueError, match="draw_values needs a hand waiting for a draw"):
        draw_values(state)


def test_the_shipped_value_loads_and_was_fit_away_from_the_evaluation_seed() -> None:
    value = load_value()
    assert value.flat.shape == (NUM_WEIGHTS,) and np.isfinite(value.flat).all()
    assert value.fit["seed"] != 0  # the harness's default seed is for evaluations
    doc = json.loads(luck.DEFAULT_VALUE_PATH.read_text())
    assert np.array_equal(parse_value(doc).weights, value.weights)


def _doc() -> dict:
    return json.loads(luck.DEFAULT_VALUE_PATH.read_text())


def _broken(change) -> dict:
    doc = _doc()
    change(doc)
    return doc


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "must hold a JSON object"),
        (_broken(lambda d: d.update(format="other")), "'format' must be"),
        (_broken(lambda d: d.update(version=2)), "unsupported 'version'"),
        (_broken(lambda d: d.update(version=True)), "unsupported 'version'"),
        (_broken(lambda d: d.update(extra=1)), "unknown key"),
        (_broken(lambda d: d["features"].reverse()), "'features' must be"),
        (_broken(lambda d: d.update(stages=[[0, 31]])), "'stages' must be"),
        (_broken(lambda d: d.update(loose_discard=4)), "'loose_discard' must be"),
        (_broken(lambda d: d["weights"].pop("loose")), "'weights' must map"),
        (_broken(lambda d: d["weights"]["sound"].pop()), r"weights\['sound'\] must be 5 lists"),
        (_broken(lambda d: d["weights"]["sound"][2].pop()), r"weights\['sound'\]\[2\] must be 13 finite"),
        (_broken(lambda d: d["weights"]["loose"][0].__setitem__(3, float("nan"))), "finite numbers"),
        (_broken(lambda d: d["weights"]["loose"][0].__setitem__(3, True)), "not bools"),
        (_broken(lambda d: d["weights"]["loose"][0].__setitem__(3, "1.0")), "finite numbers"),
        (_broken(lambda d: d.update(fit=[])), "'fit'"),
    ],
)
def test_a_malformed_value_file_is_refused(doc: object, message: str, tmp_path) -> None:
    with pytest.raises(LuckValueError, match=message):
        parse_value(doc)
    path = tmp_path / "value.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(LuckValueError, match=re.escape(f"luck value file {path}")):
        load_value(path)


def test_an_unreadable_value_file_is_refused(tmp_path) -> None:
    with pytest.raises(LuckValueError, match=r"cannot read luck value file .*fit_luck_value\.py"):
        load_value(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(LuckValueError, match="is not valid JSON"):
        load_value(bad)


def test_value_document_round_trips() -> None:
    w = random_value(4)
    again = parse_value(value_document(w.flat, {"seed": 9}))
    assert np.array_equal(again.weights, w.weights) and again.fit == {"seed": 9}
