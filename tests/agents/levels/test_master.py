"""The master level: the simulation's fast paths proven equal to the engine's showdown, rollouts that
follow the rules, and its knock / play-on decisions on scripted positions."""

from __future__ import annotations

import numpy as np
import pytest
from ginenv.agents.arena import play_game
from ginenv.agents.levels.belief import Knock
from ginenv.agents.levels.master import MasterAgent, Option, meld_rate, rollout, simulate_options
from ginenv.agents.levels.master_rollout import policy_discard, policy_discard_safe, rollout_rules
from levels.scripted_play import late_position
from scenarios import cards

from ginenv import agents, gin_rummy_v0
from ginenv.actions import DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, action_name
from ginenv.cards import CARD_NAMES, cards_of, mask_of, parse_cards
from ginenv.melds import best_arrangements, deadwood_of_mask
from ginenv.observation import (
    SeatView,
    decode,
)
from ginenv.rules import Rules, preset
from ginenv.scoring import score_knock

#: The rule array of master's worlds under the standard rules.
STANDARD = rollout_rules(Rules())


def meld_rich(rng: np.random.Generator, size: int = 10) -> int:
    """A random hand of ``size`` cards made mostly of sets and runs."""
    while True:
        mask = 0
        while mask.bit_count() < size - 2:
            if rng.random() < 0.5:
                r = int(rng.integers(13))
                for s in rng.choice(4, 3, replace=False):
                    mask |= 1 << (int(s) * 13 + r)
            else:
                s, start = int(rng.integers(4)), int(rng.integers(0, 10))
                mask |= sum(1 << (s * 13 + start + i) for i in range(int(rng.integers(3, 5))))
        if mask.bit_count() > size:
            continue
        rest = [c for c in range(52) if not mask >> c & 1]
        return mask | mask_of(int(c) for c in rng.choice(rest, size - mask.bit_count(), replace=False))


def signed(knocker: int, defender: int) -> int:
    """The engine's points of a knock for the knocker (negative when undercut)."""
    ref = score_knock(knocker, defender)
    return ref.points if ref.winner == "knocker" else -ref.points


def random_defender(rng: np.random.Generator, knocker: int) -> int:
    rest = [c for c in range(52) if not knocker >> c & 1]
    return mask_of(int(c) for c in rng.choice(rest, 10, replace=False))


def test_rollout_knocks_score_as_the_engines_showdown() -> None:
    """A rollout whose first stock card lets me knock ends in exactly the engine's showdown, also
    when the knocker has several least-deadwood arrangements (the tie-break decides the layoffs)."""
    rng = np.random.default_rng(1)
    checked = tied = 0
    traps = np.zeros(2, dtype=np.int64)
    while checked < 800:
        grown = meld_rich(rng, 11)
        card, left = policy_discard(grown, -1)
        drawn = int(rng.choice(cards_of(grown ^ 1 << card)))
        if left > 10:
            continue
        knocker = grown ^ 1 << card
        defender = random_defender(rng, grown)
        stock = np.array([drawn], dtype=np.int64)
        points = rollout(grown ^ 1 << drawn, defender, stock, -1, 0, 10, STANDARD, traps, 0, 0.0, 0.0)
        assert points == signed(knocker, defender), f"{cards_of(knocker)} vs {cards_of(defender)}"
        checked += 1
        tied += len(best_arrangements(knocker)) > 1
    assert tied > 50  # many knocks where the arrangement's tie-break matters


def test_simulated_knocks_are_scored_exactly() -> None:
    """Master's simulated knock points equal ``ginenv.scoring.score_knock`` on random hands."""
    rng = np.random.default_rng(2)
    tied = 0
    for _ in range(150):
        hand = meld_rich(rng, 11)
        knocks = [c for c in cards_of(hand) if deadwood_of_mask(hand ^ 1 << c) <= 10]
        if not knocks:
            continue
        # Prefer knocks with several least-deadwood arrangements: there the tie-break decides layoffs.
        tied_knocks = [c for c in knocks if len(best_arrangements(hand ^ 1 << c)) > 1]
        kc = int(rng.choice(tied_knocks or knocks))
        knocker = hand ^ 1 << kc
        tied += len(best_arrangements(knocker)) > 1
        unseen_ids = np.array([c for c in range(52) if not hand >> c & 1], dtype=np.int64)
        opps = np.array(
            [mask_of(int(c) for c in rng.choice(unseen_ids, 10, replace=False)) for _ in range(20)]
        )
        knock = Knock.of(knocker)
        melds = np.zeros((2, 4), dtype=np.int64)
        melds[0, : knock.melds.size] = knock.melds
        points = simulate_options(
            hand,
            np.array([Option.KNOCK, Option.PLAY_ON]),
            np.array([kc, kc]),
            opps,
            unseen_ids,
            rng.random((opps.size, unseen_ids.size)),
            -1,
            10,
            STANDARD,
            melds,
            np.array([knock.deadwood, 0]),
            np.zeros((opps.size, 2), dtype=np.int64),
            0,
            0.0,
            0.0,
        )
        assert points[:, 0].tolist() == [signed(knocker, int(opp)) for opp in opps]
        assert np.array_equal(points[:, 0], knock.points(opps))
    assert tied > 5


def test_rollouts_end_by_the_rules() -> None:
    traps = np.zeros(2, dtype=np.int64)
    # Nobody can come near a knock: the hand is dead once 2 cards are left in the stock.
    me, opp = cards("As 3s 5s 7s 9s Jc Kc 2d 4d 6d"), cards("8d Td Qd Ah 3h 5h 7h 9h Jh Ks")
    stock = np.array(parse_cards("Kh Qh Ts 8s 6c 4c"), dtype=np.int64)
    assert rollout(me, opp, stock, -1, 0, 10, STANDARD, traps, 0, 0.0, 0.0) == 0
    # I draw the card that gives me gin at once: gin bonus plus the opponent's deadwood.
    me = cards("As 2s 3s 4h 5h 6h 7c 7d 7h Kc")
    stock = np.array(parse_cards("7s 2d 2h"), dtype=np.int64)
    points = rollout(me, opp, stock, -1, 0, 10, STANDARD, traps, 0, 0.0, 0.0)
    assert points == 25 + deadwood_of_mask(opp)
    card, left = policy_discard(me | cards("7s"), -1)
    assert CARD_NAMES[card] == "Kc" and left == 0


def test_rollout_discards_can_avoid_the_opponents_melds_and_keep_meld_partners() -> None:
    hand = cards("Js Qs Ks 4c 5c 6c 7h 8h 9h Kd 2d")
    card, left = policy_discard(hand, -1)
    assert (CARD_NAMES[card], left) == ("Kd", 2)
    # Without costs the shaped discard is the plain one, whatever the opponent holds.
    assert policy_discard_safe(hand, -1, cards("Kc Kh"), 0.0, 0.0) == (card, left)
    # The opponent holds Kc Kh: throwing Kd would complete their set.
    card, left = policy_discard_safe(hand, -1, cards("Kc Kh 3c"), 9.0, 0.0)
    assert (CARD_NAMES[card], left) == ("2d", 10)
    card, left = policy_discard_safe(hand, -1, cards("Qc Qh 3c"), 9.0, 0.0)
    assert CARD_NAMES[card] == "Kd"
    # Kd could join Ks in a set; 2d has no partner in the hand.
    card, left = policy_discard_safe(hand, -1, 0, 0.0, 9.0)
    assert (CARD_NAMES[card], left) == ("2d", 10)
    # The banned card (just taken) is never thrown.
    card, _ = policy_discard_safe(hand, parse_cards("2d")[0], 0, 0.0, 9.0)
    assert CARD_NAMES[card] == "Kd"


def test_meld_rate_counts_sampled_hands() -> None:
    hands = np.array([cards("Js Jh 2c 4d 6h 8s Tc Qd Kh As"), cards("Ts Th 2c 4d 6h 8s 3c Qd Kh As")])
    rate = meld_rate(hands)
    assert rate[parse_cards("Jd")[0]] == 0.5 and rate[parse_cards("Td")[0]] == 0.5
    assert rate[parse_cards("9c")[0]] == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_knocks_or_plays_on_by_the_stage(seed: int) -> None:
    """One point of deadwood: knock while the opponent's hand is still poor, play on for gin (or an
    undercut) in mid-hand, knock again when the stock is nearly gone (a dead hand pays nothing)."""
    hand = "As 2s 3s 4h 5h 6h 7c 7d 7h Ac Kc"
    master = agents.make("master", seed=seed)
    decisions = {}
    for stock in (27, 16, 2):
        master.reset(seed)
        decisions[stock] = action_name(master.act(late_position(hand, stock)))
    assert decisions == {27: "knock Kc", 16: "discard Kc", 2: "knock Kc"}


def test_seeded_decisions_and_fresh_worlds_per_seed() -> None:
    obs = late_position("As 2s 3s 4h 5h 6h 7c 7d 9h Ac Kc", 14)
    a, b = MasterAgent(seed=3), MasterAgent(seed=3)
    assert a.act(obs) == b.act(obs)
    worlds_a = a.draw_worlds(16)[0]
    worlds_b = b.draw_worlds(16)[0]
    assert np.array_equal(worlds_a, worlds_b)
    c = MasterAgent(seed=4)
    c.model.update(decode(obs["observation"]))
    assert not np.array_equal(c.draw_worlds(16)[0], worlds_a)


def spy_on_simulate(master: MasterAgent, monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[Option], int]]:
    """Record the option kinds and world count of every :meth:`MasterAgent.simulate` call."""
    calls: list[tuple[list[Option], int]] = []
    real = master.simulate

    def spy(view: SeatView, options: list[tuple[Option, int]], n: int) -> np.ndarray:
        calls.append(([k for k, _ in options], n))
        return real(view, options, n)

    monkeypatch.setattr(master, "simulate", spy)
    return calls


def test_plain_discards_are_simulated(monkeypatch: pytest.MonkeyPatch) -> None:
    """No knock is legal: the best discards by the expert's score are played out in the worlds."""
    master = MasterAgent(seed=2)
    calls = spy_on_simulate(master, monkeypatch)
    obs = late_position("As 2s 3s 4h 5h 6h 9c Jd Qc Kh 8d", 20)
    action = master.act(obs)
    assert obs["action_mask"][action] and action < KNOCK_BASE
    assert calls == [([Option.PLAY_ON] * master.discard_candidates, master.worlds)]


def test_draws_are_simulated_only_for_useful_takes(monkeypatch: pytest.MonkeyPatch) -> None:
    master = MasterAgent(seed=2)
    calls = spy_on_simulate(master, monkeypatch)
    # 7d completes 7c 7h 7s: a useful take, weighed against a stock draw in the worlds.
    hand = "As 2s 3s 4h 5h 6h 7c 7h 7s Kd"
    assert master.act(late_position(hand, 20, top="7d")) in (DRAW_DISCARD, DRAW_STOCK)
    assert calls == [([Option.TAKE_TOP, Option.DRAW], master.worlds)]
    # Qc lowers nothing (Kd for Qc is a wasted turn): never taken, nothing simulated.
    calls.clear()
    master.reset(2)
    assert master.act(late_position(hand, 20, top="Qc")) == DRAW_STOCK
    assert calls == []


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_card_that_completes_a_shown_meld_is_not_simulated(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Jd and Tc are alike for this hand. With Js Jh taken by the opponent, Jd would complete their
    set: it is left out of the simulated discards (the rollouts saw it as a near-tie with Tc)."""
    hand = "As 2s 3s 4h 5h 6h 8c 8d Jd Tc 2d"
    jd = parse_cards("Jd")[0]
    master = MasterAgent(seed=seed)
    cards_simulated: list[list[int]] = []
    real = master.simulate

    def record(view: SeatView, options: list[tuple[Option, int]], n: int) -> np.ndarray:
        cards_simulated.append([c for _, c in options])
        return real(view, options, n)

    monkeypatch.setattr(master, "simulate", record)
    master.reset(seed)
    assert action_name(master.act(late_position(hand, 20, taken="Js Jh"))) == "discard Tc"
    assert cards_simulated and all(jd not in cs for cs in cards_simulated)
    # The opponent shows tens instead: Jd is the expert's first choice and is simulated and played.
    cards_simulated.clear()
    master.reset(seed)
    assert action_name(master.act(late_position(hand, 20, taken="Ts Th"))) == "discard Jd"
    assert cards_simulated and jd in cards_simulated[0]


def test_default_rollouts_keep_meld_partners() -> None:
    """The default rollouts price the meld partners a discard gives up (partner_cost 1): the same
    worlds score differently without it."""
    obs = late_position("As 2s 3s 4h 5h 6h 9c Jd Qc Kh 8d", 20)
    view = decode(obs["observation"])
    options = [(Option.PLAY_ON, c) for c in parse_cards("9c Kh 8d")]
    means = {}
    for cost in (None, 0.0, 1.0):
        master = MasterAgent(seed=3) if cost is None else MasterAgent(seed=3, partner_cost=cost)
        master.reset(3)
        master.see(view)
        means[cost] = master.simulate(view, options, 64)
    assert np.array_equal(means[None], means[1.0])
    assert not np.array_equal(means[None], means[0.0])


#: master's moves (seat ``player_1``) in game 3 of master seed ``seed`` under a rules preset, against
#: ``opponent`` (seeded ``seed + 1003``; master ``seed + 3``), and the points each option of its first
#: simulated decision scored over the 512 worlds: recorded before master's worlds were written by
#: ``ginenv.kernels.hand.set_position`` under ``rules_array`` and its rollout policy moved to
#: ``master_rollout``, and unchanged by that move (nor were 6,742 other decisions of master and
#: master_prior on 350 hands under four presets).
PINNED_HANDS = [
    (
        "standard",
        7,
        "expert",
        "pass draw_stock discard_Tc draw_discard discard_Kc draw_stock discard_Jh draw_stock discard_9h "
        "draw_stock discard_Kh draw_stock discard_8c draw_discard discard_8h draw_stock discard_9c "
        "draw_stock discard_7d draw_stock discard_9s draw_stock discard_3s draw_stock discard_3d",
        {"discard Tc": -2864, "discard Kc": -2880, "discard Jh": -2982},
    ),
    (
        "seed004",
        11,
        "master",
        "pass draw_stock discard_Qc draw_discard discard_Ks draw_stock discard_Jh draw_stock discard_9s "
        "draw_stock discard_9c draw_discard discard_8c draw_stock discard_4c draw_discard discard_Jd "
        "draw_discard knock_8s",
        {"draw_discard": -2319, "pass": -2198},
    ),
    (
        "oklahoma",
        13,
        "expert",
        "pass draw_stock discard_Jc draw_discard discard_6d draw_stock discard_9c draw_stock discard_Ks "
        "draw_stock discard_Th draw_stock discard_Qc draw_stock discard_3c draw_stock discard_8c "
        "draw_stock discard_Jh draw_stock discard_9h draw_stock discard_4c draw_stock discard_Jd "
        "draw_discard knock_3h",
        {"discard 9c": -3374, "discard Jc": -3092, "discard Td": -3479},
    ),
]


@pytest.mark.parametrize(("preset_name", "seed", "opponent", "moves", "first_points"), PINNED_HANDS)
def test_seeded_hands_are_played_move_for_move(
    preset_name: str, seed: int, opponent: str, moves: str, first_points: dict[str, int]
) -> None:
    """Whole hands under three rule sets (the card just taken thrown back, Oklahoma's knock limits)
    in which most of master's decisions are simulated: its moves are pinned, and so are the
    rollouts' points behind its first simulated decision (any change to a world or a rollout moves
    them)."""
    rules = preset(preset_name)
    master = agents.make("master", seed=seed + 3, rules=rules)
    assert isinstance(master, MasterAgent)
    players = [agents.make(opponent, seed=seed + 1003, rules=rules), master]
    played: list[str] = []
    simulated: list[dict[str, int]] = []

    def keep(seat: int, _obs: object, action: int) -> None:
        if players[seat] is master:
            played.append(action_name(action).replace(" ", "_"))
            if len(master.option_values) > 1:
                worlds = (
                    master.worlds_knock
                    if any(a >= KNOCK_BASE for a in master.option_values)
                    else master.worlds
                )
                simulated.append({action_name(a): round(v * worlds) for a, v in master.option_values.items()})

    play_game(gin_rummy_v0.raw_env(rules=rules), players, seed=seed, deal=3, on_decision=keep)
    assert played == moves.split()
    assert len(simulated) >= len(played) // 2
    assert simulated[0] == first_points
