"""Whole hands scripted by card names through the hand state machine (ginenv.engine)."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest
from policies import cycle_the_pile, deck

from ginenv.actions import ACTION_NAMES, UnknownActionError, action_id
from ginenv.cards import CARD_NAMES, NUM_CARDS, parse_card, parse_cards
from ginenv.engine import DEFAULT_TURN_LIMIT, DeckError, HandState, IllegalActionError, Phase, parse_deck
from ginenv.melds import deadwood
from ginenv.rules import PRESETS, Rules, RulesError


def deal(
    non_dealer: str,
    dealer: str,
    upcard: str,
    stock: str = "",
    rules: Rules | None = None,
    dealer_seat: int = 1,
) -> HandState:
    return HandState(rules, dealer=dealer_seat, deck=deck(non_dealer, dealer, upcard, stock))


def play(state: HandState, *actions: str) -> None:
    for action in actions:
        state.step_name(action)


def legal(state: HandState) -> list[str]:
    return [ACTION_NAMES[a] for a in state.legal_actions()]


def knocks(state: HandState) -> set[str]:
    return {name for name in legal(state) if name.startswith("knock")}


def holding(state: HandState, player: int) -> set[str]:
    return {CARD_NAMES[c] for c in state.hand_cards(player)}


def snapshot(state: HandState) -> tuple[object, ...]:
    return (
        tuple(state.hands),
        list(state.stock),
        list(state.discard_pile),
        state.phase,
        state.player,
        list(state.history),
        state.banned,
        state.result,
        state.legal_actions(),
    )


# Non-dealer: As2s3s, 4c5c6c, 7d8d9d and Kh (deadwood 10): Td makes gin, discarding Kh.
ND_HAND = "As 2s 3s 4c 5c 6c 7d 8d 9d Kh"
# Dealer: no melds, deadwood 70; 3c and 7c would lay off on the non-dealer's 4c5c6c.
D_HAND = "Ks Qs Jc Tc 8h 7c 6h 4h 3c 2d"


# ---------------------------------------------------------------------------- the deal


@pytest.mark.parametrize("dealer_seat", [0, 1])
def test_deal_follows_the_dealing_order(dealer_seat: int) -> None:
    state = deal(ND_HAND, D_HAND, "5h", "Td 2c", dealer_seat=dealer_seat)
    non_dealer = 1 - dealer_seat
    assert state.non_dealer == non_dealer
    assert holding(state, non_dealer) == set(ND_HAND.split())
    assert holding(state, dealer_seat) == set(D_HAND.split())
    assert state.discard_pile == parse_cards("5h")
    assert state.upcard == parse_cards("5h")[0]
    assert len(state.stock) == 31
    assert (state.phase, state.player) == (Phase.UPCARD_NON_DEALER, non_dealer)
    play(state, "pass", "pass", "draw_stock")
    assert "Td" in holding(state, non_dealer)


def test_a_shuffled_deal_is_reproducible() -> None:
    first = HandState(rng=random.Random(7))
    assert first.deck == HandState(rng=random.Random(7)).deck
    assert sorted(first.deck) == list(range(NUM_CARDS))
    assert first.deck != HandState(rng=random.Random(8)).deck


# ---------------------------------------------------------------------------- the upcard offer


def test_non_dealer_takes_the_upcard() -> None:
    state = deal(ND_HAND, D_HAND, "Td")
    assert legal(state) == ["draw_discard", "pass"]
    play(state, "draw_discard")
    assert (state.phase, state.player) == (Phase.DISCARD, 0)
    assert "Td" in holding(state, 0)
    assert state.discard_pile == []
    assert "discard Td" not in legal(state)
    assert "knock Kh" in legal(state)  # gin with the upcard
    play(state, "discard Kh")
    assert (state.phase, state.player) == (Phase.DRAW, 1)
    assert legal(state) == ["draw_stock", "draw_discard"]
    assert state.discard_pile == parse_cards("Kh")
    assert len(state.stock) == 31


def test_non_dealer_passes_and_dealer_takes_the_upcard() -> None:
    state = deal(ND_HAND, D_HAND, "5h")
    play(state, "pass")
    assert (state.phase, state.player) == (Phase.UPCARD_DEALER, 1)
    assert legal(state) == ["draw_discard", "pass"]
    play(state, "draw_discard")
    assert (state.phase, state.player) == (Phase.DISCARD, 1)
    assert "5h" in holding(state, 1)
    assert "discard 5h" not in legal(state)
    play(state, "discard Ks")
    # The other player plays the next turn, free to take the dealer's discard.
    assert (state.phase, state.player) == (Phase.DRAW, 0)
    assert legal(state) == ["draw_stock", "draw_discard"]
    play(state, "draw_discard")
    assert "Ks" in holding(state, 0)


def test_both_pass_then_the_non_dealer_must_draw_from_the_stock() -> None:
    state = deal(ND_HAND, D_HAND, "5h", "Td")
    play(state, "pass", "pass")
    assert (state.phase, state.player) == (Phase.DRAW, 0)
    assert legal(state) == ["draw_stock"]
    with pytest.raises(IllegalActionError, match="draw_discard"):
        state.step_name("draw_discard")
    play(state, "draw_stock")
    assert "Td" in holding(state, 0)
    assert state.discard_pile == parse_cards("5h")
    play(state, "discard Kh")
    # From then on both piles are open again.
    assert legal(state) == ["draw_stock", "draw_discard"]


# ---------------------------------------------------------------------------- the re-discard ban


def test_a_card_taken_from_the_discard_pile_cannot_be_discarded_that_turn() -> None:
    state = deal(ND_HAND, D_HAND, "5h", "Qd 2c 3d")
    play(state, "pass", "pass", "draw_stock", "discard Qd", "draw_discard")
    assert (state.phase, state.player) == (Phase.DISCARD, 1)
    assert "discard Qd" not in legal(state)
    with pytest.raises(IllegalActionError, match="discard Qd"):
        state.step_name("discard Qd")
    play(state, "discard Ks", "draw_stock", "discard 2c", "draw_stock")
    # A turn later the dealer may throw it.
    assert "discard Qd" in legal(state)
    play(state, "discard Qd")
    assert state.top_discard() == parse_cards("Qd")[0]


def test_the_upcard_taken_by_the_dealer_is_banned_only_that_turn() -> None:
    state = deal(ND_HAND, D_HAND, "5h", "Qd 2c")
    play(state, "pass", "draw_discard")
    assert "discard 5h" not in legal(state)
    assert all(not name.endswith("5h") for name in legal(state))
    play(state, "discard Ks", "draw_stock", "discard Qd", "draw_stock")
    assert "discard 5h" in legal(state)


# ---------------------------------------------------------------------------- knocking

# 2s3s4s5s and 6d7d8d9d melded; with Kh drawn: discarding Kh leaves 9c + Ah = 10, discarding 9c leaves
# Kh + Ah = 11.
LIMIT_HAND = "2s 3s 4s 5s 6d 7d 8d 9d 9c Ah"


def test_knock_at_exactly_the_limit_is_legal_and_one_over_is_not() -> None:
    state = deal(LIMIT_HAND, D_HAND, "5h", "Kh")
    play(state, "pass", "pass", "draw_stock")
    assert knocks(state) == {"knock Kh"}
    before = snapshot(state)
    with pytest.raises(IllegalActionError, match="knock 9c"):
        state.step_name("knock 9c")
    assert snapshot(state) == before
    play(state, "knock Kh")
    assert state.is_over
    assert legal(state) == []
    result = state.result
    assert result is not None
    assert (result.kind, result.winner, result.knocker) == ("knock", 0, 0)
    assert result.deadwood == (10, 70)
    assert result.points == 60
    assert result.score_deltas() == (60, -60)
    assert result.to_dict()["layoffs"] == []
    assert state.top_discard() == parse_cards("Kh")[0]


def test_knocking_is_optional() -> None:
    state = deal(LIMIT_HAND, D_HAND, "5h", "Kh")
    play(state, "pass", "pass", "draw_stock", "discard Kh")
    assert not state.is_over
    assert (state.phase, state.player) == (Phase.DRAW, 1)


def test_knock_result_counts_the_defenders_layoffs() -> None:
    # The dealer holds 3c and 7c, both layoffs on the knocker's 4c5c6c: 70 - 10 = 60 left.
    state = deal("As 2s 3s 4c 5c 6c 7d 8d 9d 2h", D_HAND, "5h", "Kd")
    play(state, "pass", "pass", "draw_stock", "knock Kd")
    result = state.result
    assert result is not None
    assert result.kind == "knock"
    assert result.to_dict()["layoffs"] == ["3c", "7c"]
    assert result.deadwood == (2, 60)
    assert result.points == 58


def test_undercut_goes_to_the_defender() -> None:
    # Dealer: KsKcKd, QhJhTh, 8s8c8h and 3h: deadwood 3 against the knocker's 10.
    state = deal(LIMIT_HAND, "Ks Kc Kd Qh Jh Th 8s 8c 8h 3h", "5h", "Qd")
    play(state, "pass", "pass", "draw_stock", "knock Qd")
    result = state.result
    assert result is not None
    assert (result.kind, result.winner, result.knocker, result.points) == ("undercut", 1, 0, 10 - 3 + 25)
    assert result.score_deltas() == (-32, 32)


def test_gin_ignores_layoffs() -> None:
    state = deal(ND_HAND, D_HAND, "5h", "Td")
    play(state, "pass", "pass", "draw_stock")
    assert "big_gin" not in legal(state)
    play(state, "knock Kh")
    result = state.result
    assert result is not None
    # 3c and 7c stay deadwood: no layoffs against gin.
    assert (result.kind, result.winner, result.points, result.deadwood) == ("gin", 0, 25 + 70, (0, 70))


# Ten cards already melded: As2s3s4s, 4c5c6c, 7d8d9d; with Td all eleven meld.
BIG_GIN_HAND = "As 2s 3s 4s 4c 5c 6c 7d 8d 9d"


@pytest.mark.parametrize(("name", "bonus"), [("seed000", 31), ("seed000_short", 31), ("seed004", 31)])
def test_big_gin_when_enabled(name: str, bonus: int) -> None:
    state = deal(BIG_GIN_HAND, D_HAND, "5h", "Td", PRESETS[name])
    play(state, "pass", "pass", "draw_stock")
    assert "big_gin" in legal(state)
    pile = list(state.discard_pile)
    play(state, "big_gin")
    result = state.result
    assert result is not None
    assert (result.kind, result.winner, result.points) == ("big_gin", 0, bonus + 70)
    # Big gin lays down all eleven cards: nothing is discarded.
    assert len(state.hand_cards(0)) == 11
    assert state.discard_pile == pile


def test_big_gin_is_not_offered_when_disabled() -> None:
    state = deal(BIG_GIN_HAND, D_HAND, "5h", "Td")
    play(state, "pass", "pass", "draw_stock")
    assert "big_gin" not in legal(state)
    before = snapshot(state)
    with pytest.raises(IllegalActionError, match="big_gin"):
        state.step_name("big_gin")
    assert snapshot(state) == before
    # Gin by discarding is still there.
    play(state, "knock As")
    assert state.result is not None
    assert state.result.kind == "gin"


def test_big_gin_is_not_offered_with_deadwood() -> None:
    state = deal(BIG_GIN_HAND, D_HAND, "5h", "Kd", PRESETS["seed000"])
    play(state, "pass", "pass", "draw_stock")
    assert "big_gin" not in legal(state)
    assert "knock Kd" in legal(state)


# ---------------------------------------------------------------------------- the dead hand


def draw_and_throw(state: HandState, cards: list[str], draws: int) -> None:
    """Both players pass the upcard, then each draws from the stock and throws the card drawn."""
    play(state, "pass", "pass")
    for i in range(draws):
        play(state, "draw_stock", f"discard {cards[21 + i]}")


@pytest.mark.parametrize("dead_hand_stock", [2, 10, 0])
def test_dead_hand_when_the_stock_runs_down(dead_hand_stock: int) -> None:
    rules = Rules(dead_hand_stock=dead_hand_stock)
    cards = deck(ND_HAND, D_HAND, "5h", "2c")
    state = HandState(rules, dealer=1, deck=cards)
    last = 31 - dead_hand_stock  # the draw after which the stock is down to the limit
    draw_and_throw(state, cards, last - 1)
    assert not state.is_over
    assert len(state.stock) == dead_hand_stock + 1
    play(state, "draw_stock")
    assert len(state.stock) == dead_hand_stock
    assert not state.is_over
    play(state, f"discard {cards[21 + last - 1]}")
    assert state.is_over
    assert legal(state) == []
    result = state.result
    assert result is not None
    assert (result.kind, result.winner, result.points, result.knocker) == ("dead", None, 0, None)
    assert result.score_deltas() == (0, 0)
    assert result.deadwood == (10, 70)


def test_the_last_drawer_may_still_knock() -> None:
    cards = deck(ND_HAND, D_HAND, "5h", "2c")
    # The 29th draw (the non-dealer's, leaving 2 cards) is the Td that makes gin.
    cards.remove("Td")
    cards.insert(21 + 28, "Td")
    state = HandState(dealer=1, deck=cards)
    draw_and_throw(state, cards, 28)
    play(state, "draw_stock")
    assert len(state.stock) == 2
    assert "knock Kh" in legal(state)
    play(state, "knock Kh")
    assert state.result is not None
    assert state.result.kind == "gin"


# ---------------------------------------------------------------------------- Oklahoma

OKLAHOMA = PRESETS["oklahoma"]


@pytest.mark.parametrize(("upcard", "limit"), [("Ac", 0), ("2h", 2), ("5h", 5), ("Th", 10), ("Kd", 10)])
def test_oklahoma_knock_limit_is_the_upcard_value(upcard: str, limit: int) -> None:
    assert deal(ND_HAND, D_HAND, upcard, rules=OKLAHOMA).knock_limit == limit
    assert deal(ND_HAND, D_HAND, upcard).knock_limit == 10


def test_oklahoma_ace_upcard_means_gin_only() -> None:
    # As2s3s4s5s, 6d7d8d9d and Kc; with Td, only discarding Kc gives gin, others leave deadwood 10.
    hand = "As 2s 3s 4s 5s 6d 7d 8d 9d Kc"
    standard = deal(hand, D_HAND, "Ah", "Td")
    play(standard, "pass", "pass", "draw_stock")
    assert {"knock Kc", "knock As", "knock Td"} <= knocks(standard)
    state = deal(hand, D_HAND, "Ah", "Td", OKLAHOMA)
    play(state, "pass", "pass", "draw_stock")
    assert knocks(state) == {"knock Kc"}
    with pytest.raises(IllegalActionError):
        state.step_name("knock As")
    play(state, "knock Kc")
    assert state.result is not None
    assert state.result.kind == "gin"


@pytest.mark.parametrize(("loose", "can_knock"), [("Ac", True), ("2c", False)])
def test_oklahoma_limit_from_a_five(loose: str, can_knock: bool) -> None:
    # 2s3s4s5s and 6d7d8d9d melded, then Kc drawn: discarding it leaves 4d + the loose card (5 or 6).
    state = deal(f"2s 3s 4s 5s 6d 7d 8d 9d 4d {loose}", D_HAND, "5h", "Kc", OKLAHOMA)
    play(state, "pass", "pass", "draw_stock")
    if can_knock:
        assert knocks(state) == {"knock Kc"}
        play(state, "knock Kc")
        assert state.result is not None
        assert (state.result.kind, state.result.deadwood[0]) == ("knock", 5)
    else:
        assert knocks(state) == set()
        with pytest.raises(IllegalActionError, match="knock Kc"):
            state.step_name("knock Kc")


# ---------------------------------------------------------------------------- illegal actions


@pytest.mark.parametrize(
    ("setup", "action", "legal_now"),
    [
        ((), "draw_stock", "draw_discard, pass"),
        ((), "discard As", "draw_discard, pass"),
        ((), "big_gin", "draw_discard, pass"),
        (("pass",), "draw_stock", "draw_discard, pass"),
        (("pass", "pass"), "pass", "draw_stock"),
        (("pass", "pass"), "discard As", "draw_stock"),
        (("pass", "pass", "draw_stock"), "draw_stock", "discard As"),
        (("pass", "pass", "draw_stock"), "discard Qh", "discard As"),  # not in hand
        (("pass", "pass", "draw_stock"), "knock 9d", "discard As"),  # deadwood far over
        (("pass", "pass", "draw_stock", "discard Qd"), "pass", "draw_stock, draw_discard"),
        (("draw_discard",), "discard 5h", "discard As"),
    ],
)
def test_illegal_action_raises_and_changes_nothing(
    setup: tuple[str, ...], action: str, legal_now: str
) -> None:
    state = deal(ND_HAND, D_HAND, "5h", "Qd 2c")
    play(state, *setup)
    before = snapshot(state)
    with pytest.raises(IllegalActionError) as info:
        state.step_name(action)
    message = str(info.value)
    assert repr(action) in message
    assert legal_now in message
    assert snapshot(state) == before
    assert isinstance(info.value, ValueError)


def test_actions_after_the_hand_is_over_are_refused() -> None:
    state = deal(ND_HAND, D_HAND, "Td")
    play(state, "draw_discard", "knock Kh")
    assert state.is_over
    before = snapshot(state)
    with pytest.raises(IllegalActionError, match="over"):
        state.step_name("draw_stock")
    assert snapshot(state) == before


@pytest.mark.parametrize("action", [-1, 108, 1000])
def test_unknown_action_ids_are_refused(action: int) -> None:
    state = deal(ND_HAND, D_HAND, "5h")
    before = snapshot(state)
    with pytest.raises(UnknownActionError, match=str(action)):
        state.step(action)
    assert snapshot(state) == before


def test_unknown_action_names_are_refused() -> None:
    state = deal(ND_HAND, D_HAND, "5h")
    before = snapshot(state)
    with pytest.raises(UnknownActionError, match="fly"):
        state.step_name("fly")
    with pytest.raises(UnknownActionError, match="Zz"):
        state.step_name("discard Zz")
    assert snapshot(state) == before


# ---------------------------------------------------------------------------- malformed decks


def good_deck() -> list[str]:
    return deck(ND_HAND, D_HAND, "5h")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d[:51], "51"),
        (lambda d: [*d, d[0]], "twice"),
        (lambda d: [*d[:51], d[0]], "twice"),
        (lambda d: [*d[:51], "Zz"], "Zz"),
        (lambda d: [*d[:51], 52], "52"),
        (lambda d: [], "0"),
        (lambda d: " ".join(d), "list"),
    ],
)
def test_malformed_deck_is_refused(make: Callable[[list[str]], object], message: str) -> None:
    with pytest.raises(DeckError, match=message):
        HandState(deck=make(good_deck()))  # type: ignore[arg-type]


def test_deck_of_ids_is_accepted() -> None:
    ids = parse_cards(good_deck())
    assert HandState(deck=ids).deck == HandState(deck=good_deck()).deck


def test_dealer_must_be_a_seat() -> None:
    with pytest.raises(ValueError, match="dealer"):
        HandState(dealer=2)


def test_clone_is_independent() -> None:
    state = deal(ND_HAND, D_HAND, "5h", "Qd")
    play(state, "pass", "pass")
    copy = state.clone()
    play(copy, "draw_stock", "discard Qd")
    assert (state.phase, len(state.stock), state.discard_pile) == (Phase.DRAW, 31, parse_cards("5h"))
    assert len(state.history) == 2
    assert len(copy.history) == 4


# ---------------------------------------------------------------------------- seed 004: the card just taken


@pytest.mark.parametrize(("rules", "allowed"), [(PRESETS["standard"], False), (PRESETS["seed004"], True)])
def test_the_card_just_taken_from_the_pile_is_discardable_only_under_seed004(
    rules: Rules, allowed: bool
) -> None:
    state = deal(ND_HAND, D_HAND, "5h", "Qd 2c 3d", rules)
    play(state, "pass", "pass", "draw_stock", "discard Qd", "draw_discard")
    assert (state.phase, state.player) == (Phase.DISCARD, 1)
    assert ("discard Qd" in legal(state)) is allowed
    assert state.is_legal(action_id("discard Qd")) is allowed
    if not allowed:
        before = snapshot(state)
        with pytest.raises(IllegalActionError, match="discard Qd"):
            state.step_name("discard Qd")
        assert snapshot(state) == before
        return
    # Seed 004: "cela peut être celle qu'il vient de piocher": Qd goes straight back on the pile.
    play(state, "discard Qd")
    assert state.top_discard() == parse_card("Qd")
    assert "Qd" not in holding(state, 1)
    assert (state.phase, state.player) == (Phase.DRAW, 0)


@pytest.mark.parametrize(("rules", "allowed"), [(PRESETS["standard"], False), (PRESETS["seed004"], True)])
def test_the_upcard_taken_is_discardable_only_under_seed004(rules: Rules, allowed: bool) -> None:
    state = deal(ND_HAND, D_HAND, "5h", "Qd", rules)
    play(state, "pass", "draw_discard")
    assert ("discard 5h" in legal(state)) is allowed
    if allowed:
        play(state, "discard 5h")
        assert state.discard_pile == parse_cards("5h")
    else:
        with pytest.raises(IllegalActionError, match="discard 5h"):
            state.step_name("discard 5h")


@pytest.mark.parametrize(
    ("rules", "expected"),
    [(PRESETS["standard"], {"knock Kh"}), (PRESETS["seed004"], {"knock Kh", "knock Kd"})],
)
def test_knocking_with_the_card_just_taken_only_under_seed004(rules: Rules, expected: set[str]) -> None:
    # The non-dealer takes the upcard Kd: throwing either king leaves deadwood 10.
    state = deal(ND_HAND, D_HAND, "Kd", rules=rules)
    play(state, "draw_discard")
    assert knocks(state) == expected
    if "knock Kd" in expected:
        play(state, "knock Kd")
        assert state.result is not None
        assert (state.result.kind, state.result.deadwood[0]) == ("knock", 10)
        assert state.top_discard() == parse_card("Kd")


# ---------------------------------------------------------------------------- the turn limit


def play_out(state: HandState, policy: Callable[[HandState], int]) -> None:
    while not state.is_over:
        state.step(policy(state))


@pytest.mark.parametrize("turn_limit", [None, 1, 7, 40])
def test_a_hand_cycling_the_discard_pile_is_truncated_at_the_turn_limit(turn_limit: int | None) -> None:
    cards = deck(ND_HAND, D_HAND, "5h")
    state = (
        HandState(dealer=1, deck=cards)
        if turn_limit is None
        else HandState(dealer=1, deck=cards, turn_limit=turn_limit)
    )
    limit = DEFAULT_TURN_LIMIT if turn_limit is None else turn_limit
    assert state.turn_limit == limit
    play_out(state, cycle_the_pile)
    draws = [a for _, a in state.history if ACTION_NAMES[a] == "draw_discard"]
    assert len(draws) == state.draws == limit
    # Every draw was followed by a discard: the hand ended at the limit-th draw's discard.
    assert len(state.history) == 2 * limit
    assert len(state.stock) == 31
    result = state.result
    assert result is not None
    assert (result.kind, result.winner, result.points, result.knocker) == ("truncated", None, 0, None)
    assert result.truncated and not result.showdown
    assert result.score_deltas() == (0, 0)
    assert result.deadwood == (deadwood(state.hand_cards(0)), deadwood(state.hand_cards(1)))
    assert result.to_dict()["kind"] == "truncated"


def test_default_turn_limit_is_far_above_a_real_hand() -> None:
    # 29 stock draws at most before a dead hand; the limit leaves room for many discard-pile draws.
    assert DEFAULT_TURN_LIMIT >= 3 * 29


def test_the_last_draw_before_the_limit_may_still_knock() -> None:
    state = HandState(dealer=1, deck=deck(LIMIT_HAND, D_HAND, "5h", "Kh"), turn_limit=1)
    play(state, "pass", "pass", "draw_stock")
    assert state.draws == 1 and not state.is_over
    play(state, "knock Kh")
    assert state.result is not None
    assert state.result.kind == "knock"


def test_a_discard_at_the_turn_limit_ends_the_hand_not_before() -> None:
    state = HandState(dealer=1, deck=deck(ND_HAND, D_HAND, "5h", "Qd 2c 3d"), turn_limit=3)
    play(state, "pass", "pass", "draw_stock", "discard Qd", "draw_stock", "discard 2c", "draw_stock")
    assert (state.draws, state.is_over) == (3, False)
    play(state, "discard 3d")
    assert state.result is not None
    assert state.result.kind == "truncated"
    assert state.result.deadwood == (deadwood(ND_HAND), deadwood(D_HAND))


def test_stepping_a_truncated_hand_is_refused_clearly() -> None:
    state = HandState(dealer=1, deck=deck(ND_HAND, D_HAND, "5h"), turn_limit=2)
    play_out(state, cycle_the_pile)
    before = snapshot(state)
    for name in ("draw_stock", "draw_discard", "discard As"):
        with pytest.raises(IllegalActionError, match="turn limit of 2 draws") as info:
            state.step_name(name)
        assert "over" in str(info.value) and "truncated" in str(info.value)
    assert snapshot(state) == before
    assert state.legal_actions() == [] and state.legal_mask() == 0


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "x", None, np.float64(3)])
def test_bad_turn_limits_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="turn_limit must be a positive integer") as info:
        HandState(turn_limit=bad)  # type: ignore[arg-type]
    assert repr(bad) in str(info.value)


def test_numpy_turn_limit_is_accepted() -> None:
    state = HandState(turn_limit=np.int64(5))  # type: ignore[arg-type]
    assert state.turn_limit == 5 and type(state.turn_limit) is int


def test_clone_keeps_the_draw_count_and_the_limit() -> None:
    state = HandState(dealer=1, deck=deck(ND_HAND, D_HAND, "5h"), turn_limit=6)
    play(state, "draw_discard", "discard As", "draw_discard")
    copy = state.clone()
    assert (copy.draws, copy.turn_limit) == (2, 6)
    play_out(copy, cycle_the_pile)
    assert copy.draws == 6 and copy.result is not None and copy.result.truncated
    assert state.draws == 2 and not state.is_over


# ---------------------------------------------------------------------------- integer types

INT_TYPES = [int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.intp]


@pytest.mark.parametrize("kind", INT_TYPES)
def test_actions_of_every_integer_type_are_accepted(kind: type) -> None:
    state = deal(LIMIT_HAND, D_HAND, "5h", "Kh")
    for name in ("pass", "pass", "draw_stock"):
        assert state.is_legal(kind(action_id(name)))
        state.step(kind(action_id(name)))
    # The knock's id is over 63: the legal mask is wider than 64 bits (numpy ints overflowed on it).
    knock = action_id("knock Kh")
    assert knock >= 63
    assert state.is_legal(kind(knock))
    state.step(kind(knock))
    assert state.result is not None
    assert state.result.kind == "knock"
    assert all(type(a) is int for _, a in state.history)
    assert [ACTION_NAMES[a] for _, a in state.history] == ["pass", "pass", "draw_stock", "knock Kh"]


@pytest.mark.parametrize("bad", [1.0, np.float64(1), "1", "pass", True, False, np.bool_(True), None, [1]])
def test_non_integer_actions_are_refused_and_change_nothing(bad: object) -> None:
    state = deal(ND_HAND, D_HAND, "5h")
    before = snapshot(state)
    with pytest.raises(UnknownActionError, match="must be an integer action id") as info:
        state.step(bad)  # type: ignore[arg-type]
    message = str(info.value)
    assert repr(bad) in message
    assert "draw_discard, pass" in message  # what is legal now
    assert snapshot(state) == before
    assert state.is_legal(bad) is False  # type: ignore[arg-type]


def test_numpy_decks_are_accepted() -> None:
    names = good_deck()
    ids = parse_cards(names)
    expected = HandState(deck=names).deck
    for given in (np.array(ids), np.array(ids, dtype=np.uint8), [np.int64(c) for c in ids], np.array(names)):
        assert HandState(deck=given).deck == expected  # type: ignore[arg-type]
        assert parse_deck(given) == ids  # type: ignore[arg-type]
        assert all(type(c) is int for c in HandState(deck=given).deck)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (np.arange(52).reshape(4, 13), "1-D"),
        (np.arange(52, dtype=np.float64), "cannot read a card"),
        (np.arange(51), "51"),
        (np.array([True] * 52), "cannot read a card"),
    ],
)
def test_bad_numpy_decks_are_refused(bad: np.ndarray, message: str) -> None:
    with pytest.raises(DeckError, match=message):
        HandState(deck=bad)


@pytest.mark.parametrize("dealer", [np.int64(1), np.uint8(1)])
def test_numpy_dealer_is_accepted(dealer: object) -> None:
    assert HandState(dealer=dealer).dealer == 1  # type: ignore[arg-type]


@pytest.mark.parametrize("dealer", [1.0, True, "1", None, -1])
def test_bad_dealer_is_refused(dealer: object) -> None:
    with pytest.raises(ValueError, match="dealer must be 0 or 1"):
        HandState(dealer=dealer)  # type: ignore[arg-type]


def test_rules_must_be_rules() -> None:
    with pytest.raises(RulesError, match="Rules"):
        HandState(rules={"knock_limit": 5})  # type: ignore[arg-type]


def test_result_kinds_have_one_spelling() -> None:
    """The engine's ``ResultKind`` names the kernel's result codes in their order, and a hand's end
    codes are the knock kinds then a dead and a truncated hand."""
    from typing import get_args

    from ginenv.engine import ResultKind
    from ginenv.kernels import KNOCK_KINDS
    from ginenv.kernels import hand as H

    assert get_args(ResultKind) == H.RESULT_KINDS
    assert H.RESULT_KINDS[: len(KNOCK_KINDS)] == KNOCK_KINDS
    assert (H.RESULT_KINDS[H.DEAD], H.RESULT_KINDS[H.TRUNCATED]) == ("dead", "truncated")


def test_phases_have_one_definition() -> None:
    """``ginenv.engine.Phase`` is the kernel's enum (the record's phase codes), the observation's phase
    one-hot has one entry per phase, and the phase the kernel reports is the engine's."""
    from ginenv.kernels import hand as H
    from ginenv.layout import NUM_PHASES

    assert Phase is H.Phase
    assert [p.value for p in Phase] == list(range(NUM_PHASES))
    assert [p for p in Phase if p.offers_upcard] == [Phase.UPCARD_NON_DEALER, Phase.UPCARD_DEALER]
    state = HandState(Rules(), dealer=1, rng=random.Random(0))
    assert state.phase is Phase.UPCARD_NON_DEALER and state.record[0, H.PHASE] == Phase.UPCARD_NON_DEALER
    for action, phase in (("pass", Phase.UPCARD_DEALER), ("pass", Phase.DRAW), ("draw_stock", Phase.DISCARD)):
        state.step_name(action)
        assert state.phase is phase and int(state.record[0, H.PHASE]) == phase
