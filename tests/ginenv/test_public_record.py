"""The public record (ginenv.public_record): whole hands scripted by card names, read from one seat's
observations; the moves of both seats in play order, one rule for a new hand, and the opponent's past
observations and masks rebuilt exactly as the env gave them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ginenv import gin_rummy_v0
from ginenv.cards import CARD_NAMES, mask_of, parse_cards
from ginenv.engine import Phase
from ginenv.layout import MAX_STOCK
from ginenv.observation import SeatView, decode
from ginenv.public_record import ME, OPP, UNSEEN_CARD, Event, Move, PublicRecord, new_hand
from ginenv.rules import Rules

# player_0 deals, so player_1 is the non-dealer and answers the upcard offer first.
NON_DEALER = "As 2s 3s 4c 5c 6c 7d 8d 9d Qh"
DEALER = "Ac 2c 3c 4d 5d 6d 7s 8s 9s Jh"


def deck_with(non_dealer: str, dealer: str, upcard: str, stock: str = "") -> list[str]:
    """A full deck: the named cards in dealing order, then every other card."""
    used = parse_cards(f"{non_dealer} {dealer} {upcard} {stock}")
    return [CARD_NAMES[c] for c in used + [c for c in range(52) if c not in used]]


def card(name: str) -> int:
    return parse_cards(name)[0]


def moves(text: str) -> list[Event]:
    """Events written by card names, e.g. ``"me pass Kh, opp stock, opp discard Ks"`` (a stock draw
    without a card: one the seat did not see)."""
    out = []
    for item in text.split(","):
        who, kind, *name = item.split()
        out.append(
            Event(ME if who == "me" else OPP, Move[kind.upper()], card(name[0]) if name else UNSEEN_CARD)
        )
    return out


class Table:
    """An env dealt a scripted deck, both seats' records fed at each of their decisions, and every
    observation and mask the env gave each seat kept (to compare the rebuilt ones with)."""

    def __init__(self, deck: Any, mode: str = "hand", rules: Rules | None = None) -> None:
        self.rules = rules or Rules()
        self.env = gin_rummy_v0.raw_env(mode=mode, rules=self.rules)
        options = {"decks": deck, "dealer": 0} if mode == "match" else {"deck": deck, "dealer": 0}
        self.env.reset(seed=0, options=options)
        self.records = {"player_0": PublicRecord(), "player_1": PublicRecord()}
        self.given: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {"player_0": [], "player_1": []}
        self.started: list[bool] = []
        self._see()

    def _see(self) -> None:
        seat = self.env.agent_selection
        obs = self.env.observe(seat)
        self.started.append(self.records[seat].update(obs["observation"]))
        self.given[seat].append((obs["observation"].copy(), obs["action_mask"].copy()))

    def play(self, *actions: str) -> None:
        for name in actions:
            self.env.step(self.env.action_id(name))
            if not any(self.env.terminations.values()):
                self._see()

    def view(self, seat: str) -> SeatView:
        return decode(self.env.observe(seat)["observation"])

    def play_randomly(self, rng: np.random.Generator) -> None:
        """Random legal moves to the end of the hand (the last legal one, a knock where there is one,
        a tenth of the time), every past move of the opponent checked at each decision."""
        while not any(self.env.terminations.values()):
            self.check_rebuilt(self.env.agent_selection)
            legal = np.flatnonzero(self.env.observe(self.env.agent_selection)["action_mask"])
            self.env.step(int(legal[-1] if rng.random() < 0.1 else rng.choice(legal)))
            if not any(self.env.terminations.values()):
                self._see()

    def check_rebuilt(self, seat: str) -> int:
        """Every move of ``seat``'s opponent that ``seat``'s record holds is rebuilt, through the kernel's
        encoder, as the observation and mask the env gave the opponent then; returns how many."""
        record = self.records[seat]
        other = "player_1" if seat == "player_0" else "player_0"
        assert record.complete and record.table is not None and record.view is not None
        assert record.table.shows(record.view)
        moved = [i for i, event in enumerate(record.events) if event.who == OPP]
        given = self.given[other][: len(moved)]
        assert len(given) == len(moved)
        for i, (obs, mask) in zip(moved, given, strict=True):
            rebuilt, legal = record.decision(i).observe(np.array([decode(obs).hand]), self.rules)
            assert np.array_equal(rebuilt[0], obs), (seat, record.events[i])
            assert np.array_equal(legal[0], mask), (seat, record.events[i])
        return len(moved)


def test_both_seats_pass_the_upcard_then_the_non_dealer_draws_from_the_stock() -> None:
    table = Table(deck_with(NON_DEALER, DEALER, "Kh", stock="Ks"))
    table.play("pass", "pass")
    nd = table.records["player_1"]
    assert nd.events == moves("me pass Kh, opp pass Kh")
    assert nd.table is not None and nd.table.forced and nd.complete
    table.play("draw_stock", "discard Ks")
    dealer = table.records["player_0"]
    # The dealer saw the offer passed to it, passed too, then the non-dealer's forced draw and discard.
    assert dealer.events == moves("opp pass Kh, me pass Kh, opp stock, opp discard Ks")
    assert dealer.upcard == card("Kh") and dealer.dealt == mask_of(parse_cards(DEALER))
    assert dealer.stock_size == MAX_STOCK - 1 and dealer.opponent_turns == 1
    assert dealer.opponent_held == 0 and dealer.opponent_hidden == 10


def test_a_take_from_the_pile_a_stock_draw_and_a_discard() -> None:
    table = Table(deck_with(NON_DEALER, DEALER, "Kh", stock="Kc Kd"))
    table.play("pass", "draw_discard", "discard Jh")  # the dealer takes the upcard
    table.play("draw_discard", "discard Qh")  # the non-dealer takes Jh
    table.play("draw_stock", "discard Kc")  # the dealer draws Kc from the stock
    table.play("draw_stock")  # the non-dealer draws Kd
    nd = table.records["player_1"]
    # Its own stock draw shows the card it saw; the opponent's does not.
    assert nd.events == moves(
        "me pass Kh, opp take Kh, opp discard Jh, me take Jh, me discard Qh, opp stock, opp discard Kc, "
        "me stock Kd"
    )
    assert nd.complete and nd.opponent_held == mask_of(parse_cards("Kh"))
    assert nd.table is not None and nd.table.pile == (card("Qh"), card("Kc"))
    # The dealer's stock draw passed over Qh, its record of the pile before each move says so.
    state = nd.states[5]
    assert state is not None and state.top == card("Qh") and state.mover == OPP
    assert nd.states[6] is not None and nd.states[6].passed[OPP] >> card("Qh") & 1
    dealer = table.records["player_0"]
    assert dealer.events[-1:] == moves("me stock Kc")  # seen at its discard decision
    assert dealer.opponent_held == mask_of(parse_cards("Jh"))


def test_the_opponents_past_observations_and_masks_are_the_ones_the_env_gave() -> None:
    table = Table(deck_with(NON_DEALER, DEALER, "Kh", stock="Kc Kd Ks"))
    table.play("pass", "draw_discard", "discard Jh", "draw_discard", "discard Qh", "draw_stock", "discard Kc")
    table.play("draw_stock", "discard Kd", "draw_discard")
    assert table.check_rebuilt("player_0") == 5 and table.check_rebuilt("player_1") == 4


@pytest.mark.parametrize(
    "rules", [Rules(), Rules(discard_taken_card=True, big_gin_bonus=31), Rules(oklahoma=True)]
)
def test_every_past_decision_of_random_hands_is_rebuilt(rules: Rules) -> None:
    rng = np.random.default_rng(7)
    for _ in range(8):
        table = Table([CARD_NAMES[c] for c in rng.permutation(52)], rules=rules)
        table.play_randomly(rng)


def test_a_matchs_next_hand_starts_a_new_record_even_at_the_same_stock_size() -> None:
    first = deck_with(NON_DEALER, DEALER, "Kh")
    second = deck_with("Ah 2h 3h 4s 5s 6s 7c 8c 9c Qd", "Ad 2d 3d 4h 5h 6h 7h 8h 9h Jd", "Kd")
    table = Table([first, second], mode="match")
    table.play("draw_discard", "knock Qh")  # the non-dealer takes the upcard and knocks at once
    # Hand 2: player_1 deals; player_0 passes the offer on to it. Its last view of hand 1 had the same
    # stock size (31) and its passes and discards did not shrink: still a new hand (it had not moved).
    table.play("pass")
    record = table.records["player_1"]
    assert table.started == [True, False, True, True]
    assert record.events == moves("opp pass Kd")
    assert record.upcard == card("Kd") and record.stock_size == MAX_STOCK and record.complete


def test_repeats_change_nothing_and_reset_forgets_the_hand() -> None:
    table = Table(deck_with(NON_DEALER, DEALER, "Kh"))
    table.play("pass", "pass")
    record = table.records["player_1"]
    events = list(record.events)
    vector = table.env.observe("player_1")["observation"]
    assert record.update(vector) is False and record.events == events
    record.reset()
    assert record.view is None and record.events == []
    assert record.update(vector) is True and record.events == events


def test_the_new_hand_rule() -> None:
    table = Table(deck_with(NON_DEALER, DEALER, "Kh", stock="Kc"))
    start = table.view("player_1")
    table.play("pass", "pass")
    drawing = table.view("player_1")
    table.play("draw_stock", "discard Kc")
    later = table.view("player_1")
    assert not new_hand(drawing, later)
    assert new_hand(later, start)  # no move of the seat yet: a hand's first decision
    assert new_hand(later, drawing)  # its discards shrank
    grown = SeatView(**{**later.__dict__, "stock_size": later.stock_size + 1})
    assert new_hand(later, grown)


def test_a_hand_joined_midway_is_read_from_the_planes() -> None:
    table = Table(deck_with(NON_DEALER, DEALER, "Kh", stock="Kc Kd"))
    table.play("pass", "draw_discard", "discard Jh", "draw_discard", "discard Qh", "draw_stock", "discard Kc")
    record = PublicRecord()
    assert record.update(table.env.observe("player_1")["observation"])
    assert not record.complete and record.since == len(record.events) and record.upcard is None
    # What the planes show, each seat's passes, takes and discards in turn; the stock draws unknown.
    discards = ", ".join(f"opp discard {CARD_NAMES[c]}" for c in sorted(parse_cards("Jh Kc")))  # card order
    assert record.events == moves(
        f"me pass Kh, me take Jh, me discard Qh, opp pass Qh, opp take Kh, {discards}"
    )
    with pytest.raises(ValueError, match="planes alone"):
        record.decision(0)
    # Read move by move from here on.
    for move in ("draw_stock", "discard Kd"):
        table.play(move)
        record.update(table.env.observe("player_1")["observation"])
    assert record.events[record.since :] == moves("me stock Kd, me discard Kd")
    assert record.table is not None and record.table.phase == Phase.DRAW
