"""The showdown: every row of the scoring table, layoffs, and score_knock against brute force."""

from __future__ import annotations

import pytest
import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st

from ginenv import kernels
from ginenv.cards import CARD_NAMES, NUM_CARDS, CardError, cards_of, mask_of, parse_cards
from ginenv.melds import best_arrangement
from ginenv.rules import PRESETS, Rules
from ginenv.scoring import IllegalKnockError, KnockResult, knock_layout, score_knock

STANDARD = PRESETS["standard"]
# Deadwood 5: As2s3s, 4c5c6c, 7d8d9d and 5h. Layoff targets: 4s, 3c, 7c, 6d, Td.
KNOCKER_5 = "As 2s 3s 4c 5c 6c 7d 8d 9d 5h"
KNOCK_DEFENDER = "Ks Qc Jd Th 9s 8c 2h 4h 6h Kc"  # no melds, nothing to lay off: 79


def laid(result: KnockResult) -> str:
    return " ".join(CARD_NAMES[c] for c in result.layoffs)


def test_knock_scores_the_difference() -> None:
    result = score_knock(KNOCKER_5, KNOCK_DEFENDER)
    assert (result.kind, result.winner, result.points) == ("knock", "knocker", 74)
    assert (result.knocker_deadwood, result.defender_deadwood) == (5, 79)
    assert result.layoffs == ()
    assert result.defender_deadwood_before_layoffs == 79
    assert cards_of(result.knocker_deadwood_cards) == parse_cards("5h")
    assert "knock: knocker scores 74" in result.describe()


def test_undercut_scores_difference_plus_bonus() -> None:
    defender = "Ks Kc Kd Qh Jh Th 8s 8c 8h 3h"  # deadwood 3
    result = score_knock(KNOCKER_5, defender)
    assert (result.kind, result.winner, result.points) == ("undercut", "defender", 5 - 3 + 25)
    assert result.defender_deadwood == 3


def test_equal_deadwood_is_an_undercut() -> None:
    defender = "Ks Kc Kd Qh Jh Th 8s 8c 8h 5s"  # deadwood 5, like the knocker
    result = score_knock(KNOCKER_5, defender)
    assert (result.kind, result.winner, result.points) == ("undercut", "defender", 25)


def test_seed004_undercut_bonus_is_20() -> None:
    defender = "Ks Kc Kd Qh Jh Th 8s 8c 8h 3h"
    result = score_knock(KNOCKER_5, defender, PRESETS["seed004"])
    assert (result.kind, result.winner, result.points) == ("undercut", "defender", 2 + 20)


GIN = "As 2s 3s 4c 5c 6c 7d 8d 9d Td"
# 4s, 3c and Jd would lay off on the knocker's melds, but there are no layoffs against gin: 78.
GIN_DEFENDER = "4s Jd 3c Kh Qh 9h 7h 5h Ks Qs"


def test_gin_scores_bonus_plus_deadwood_without_layoffs() -> None:
    result = score_knock(GIN, GIN_DEFENDER)
    assert (result.kind, result.winner, result.points) == ("gin", "knocker", 25 + 78)
    assert (result.knocker_deadwood, result.defender_deadwood) == (0, 78)
    assert result.layoffs == ()
    assert result.layoff_targets == ()


def test_gin_is_allowed_at_knock_limit_zero() -> None:
    assert score_knock(GIN, GIN_DEFENDER, knock_limit=0).kind == "gin"
    with pytest.raises(IllegalKnockError):
        score_knock(KNOCKER_5, KNOCK_DEFENDER, knock_limit=0)


BIG_GIN = "As 2s 3s 4s 4c 5c 6c 7d 8d 9d Td"
BIG_GIN_DEFENDER = "Jd Kh Qh 9h 7h 5h Ks Qs 2c 3c"  # Jd and 3c would lay off: 76 all the same


@pytest.mark.parametrize(("name", "bonus"), [("seed000", 31), ("seed000_short", 31), ("seed004", 31)])
def test_big_gin_scores_its_bonus_plus_deadwood(name: str, bonus: int) -> None:
    result = score_knock(BIG_GIN, BIG_GIN_DEFENDER, PRESETS[name])
    assert (result.kind, result.winner, result.points) == ("big_gin", "knocker", bonus + 76)
    assert (result.knocker_deadwood, result.defender_deadwood) == (0, 76)
    assert result.layoffs == ()


@pytest.mark.parametrize("name", ["seed000", "seed004"])
def test_big_gin_and_gin_against_a_defender_holding_79(name: str) -> None:
    """Hand-computed (docs/RULES.md): big gin 31 + 79 = 110 (seed 000's 31; seed 004's gin 25 + big gin
    bonus 6), gin 25 + 79 = 104. Issue 8 found seed004 scoring big gin 85, below gin's 104."""
    rules = PRESETS[name]
    big = score_knock(BIG_GIN, KNOCK_DEFENDER, rules)
    gin = score_knock(GIN, KNOCK_DEFENDER, rules)
    assert (big.kind, big.winner, big.points, big.defender_deadwood) == ("big_gin", "knocker", 110, 79)
    assert (gin.kind, gin.winner, gin.points, gin.defender_deadwood) == ("gin", "knocker", 104, 79)
    assert big.points >= gin.points


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_big_gin_never_scores_less_than_gin(name: str) -> None:
    rules = PRESETS[name]
    gin = score_knock(GIN, KNOCK_DEFENDER, rules)
    if rules.big_gin:
        assert score_knock(BIG_GIN, KNOCK_DEFENDER, rules).points >= gin.points
    else:
        with pytest.raises(IllegalKnockError, match="big gin"):
            score_knock(BIG_GIN, KNOCK_DEFENDER, rules)


@pytest.mark.parametrize("name", ["standard", "oklahoma"])
def test_big_gin_is_refused_when_disabled(name: str) -> None:
    with pytest.raises(IllegalKnockError, match="big gin"):
        score_knock(BIG_GIN, BIG_GIN_DEFENDER, PRESETS[name])


def test_big_gin_needs_all_eleven_cards_melded() -> None:
    with pytest.raises(IllegalKnockError, match="deadwood"):
        score_knock("As 2s 3s 4s 4c 5c 6c 7d 8d 9d Kd", BIG_GIN_DEFENDER, PRESETS["seed000"])


def test_knock_over_the_limit_is_refused() -> None:
    # As2s3s and 4c5c6c melded; Ah 2d 3h meld nothing (A-2-3 of mixed suits, no third ace or 2 or 3).
    at_limit = "As 2s 3s 4c 5c 6c Ah 2d 3h 4d"
    over = "As 2s 3s 4c 5c 6c Ah 2d 3h 5d"
    assert score_knock(at_limit, GIN_DEFENDER).knocker_deadwood == 10
    with pytest.raises(IllegalKnockError, match="11") as info:
        score_knock(over, GIN_DEFENDER)
    assert "10" in str(info.value)
    with pytest.raises(IllegalKnockError):
        score_knock(KNOCKER_5, KNOCK_DEFENDER, knock_limit=4)
    assert score_knock(KNOCKER_5, KNOCK_DEFENDER, knock_limit=5).knocker_deadwood == 5
    with pytest.raises(IllegalKnockError):
        score_knock(KNOCKER_5, KNOCK_DEFENDER, Rules(knock_limit=4))
    # The explicit limit wins over the rules' (an Oklahoma hand's limit comes from its upcard).
    assert score_knock(over, GIN_DEFENDER, Rules(knock_limit=4), knock_limit=11).kind == "knock"


# Knocker: 7s7c7d, As2s3s, JhQhKh and 2c (deadwood 2). Layoff targets: 7h, 4s, Th.
SET_KNOCKER = "7s 7c 7d As 2s 3s Jh Qh Kh 2c"


def test_fourth_card_of_a_set_is_laid_off() -> None:
    result = score_knock(SET_KNOCKER, "7h Ks Kc Qd Jd 9c 8c 5d 3d 2d")
    assert laid(result) == "7h"
    assert (result.defender_deadwood_before_layoffs, result.defender_deadwood) == (74, 67)
    assert (result.kind, result.points) == ("knock", 65)
    seven_set = result.knocker_melds.index(mask_of(parse_cards("7s 7c 7d")))
    assert result.layoff_targets == ((parse_cards("7h")[0], seven_set),)


# Knocker: 5h6h7h, As2s3s, KsKcKd and 2c (deadwood 2). Layoff targets: 4h, 8h, 4s, Kh.
RUN_KNOCKER = "5h 6h 7h As 2s 3s Kc Kd Ks 2c"


def test_run_extensions_chain() -> None:
    # 9h only touches the run once 8h is on it.
    result = score_knock(RUN_KNOCKER, "8h 9h Qc Jd 9c 7c 5d 3d 4c Td")
    assert laid(result) == "8h 9h"
    assert (result.defender_deadwood_before_layoffs, result.defender_deadwood) == (75, 58)
    assert result.points == 56


def test_a_card_two_away_from_a_run_is_not_laid_off() -> None:
    result = score_knock(RUN_KNOCKER, "9h Th Qc Jd 9c 7c 5d 3d 4c 2d")
    assert result.layoffs == ()
    assert result.defender_deadwood == result.defender_deadwood_before_layoffs == 69


def test_layoffs_at_both_ends_of_a_run() -> None:
    result = score_knock(RUN_KNOCKER, "3h 4h 8h Qc Jd 9c 7c 5d 2d Td")
    assert laid(result) == "3h 4h 8h"
    assert (result.defender_deadwood_before_layoffs, result.defender_deadwood) == (68, 53)
    run = result.knocker_melds.index(mask_of(parse_cards("5h 6h 7h")))
    assert {meld for _, meld in result.layoff_targets} == {run}


def test_defender_breaks_a_meld_to_lay_off() -> None:
    # Alone, the defender's best is the four eights with 7h dead (7). Jointly, 8s8c8d stay a set and
    # 8h then 7h go down on the knocker's 9h-Th-Jh run: laying off only deadwood would miss this.
    knocker = "9h Th Jh As 2s 3s Kc Kd Ks 2c"
    result = score_knock(knocker, "8s 8c 8d 8h 7h Qd Jd 9c 5d 3c")
    assert laid(result) == "7h 8h"
    assert (result.defender_deadwood_before_layoffs, result.defender_deadwood) == (44, 37)
    assert result.defender_melds == (mask_of(parse_cards("8s 8c 8d")),)
    assert (result.kind, result.points) == ("knock", 35)


def test_defender_keeps_a_card_in_their_own_meld_when_better() -> None:
    # 8h could be the fourth eight, but it is worth more in the defender's 8h-9h-Th run.
    knocker = "8s 8c 8d As 2s 3s Kc Kd Ks 2c"
    result = score_knock(knocker, "8h 9h Th Qd Jd 9c 5d 3c 4d 6c")
    assert result.layoffs == ()
    assert result.defender_deadwood == 10 + 10 + 9 + 5 + 3 + 4 + 6


def test_layoffs_can_turn_a_knock_into_an_undercut() -> None:
    # Defender: two sets and 3h 4h 8h 9h, 24 alone; all four go on the knocker's 5h-6h-7h.
    result = score_knock(RUN_KNOCKER, "3h 4h 8h 9h Qs Qc Qd Js Jc Jd")
    assert result.defender_deadwood_before_layoffs == 24
    assert (result.kind, result.winner, result.defender_deadwood, result.points) == (
        "undercut",
        "defender",
        0,
        2 + 25,
    )


@pytest.mark.parametrize(
    ("knocker", "defender", "error"),
    [
        (KNOCKER_5, "As Kc Kd Qh Jh Th 8s 8c 8h 3h", "share"),
        (KNOCKER_5, "Kc Kd Qh Jh Th 8s 8c 8h 3h", "10 defender cards"),
        ("As 2s 3s", GIN_DEFENDER, "10 knocker cards"),
    ],
)
def test_malformed_hands_are_refused(knocker: str, defender: str, error: str) -> None:
    with pytest.raises(CardError, match=error):
        score_knock(knocker, defender)


@pytest.mark.parametrize(
    ("knocker", "defender"),
    [
        (KNOCKER_5, KNOCK_DEFENDER),  # a knock
        ("As 2s 3s 4c 5c 6c 7d 8d 9d 2h", "4s 3c 7c 6d Td Ac Ah Qh Kh Jc"),  # five layoffs
        (KNOCKER_5, "Ks Kh Kd Qc Qh Qd Jc Jh Jd 4h"),  # an undercut
        ("As 2s 3s 4c 5c 6c 7d 8d 9d Td", KNOCK_DEFENDER),  # gin
    ],
)
def test_a_kernel_scored_showdown_lays_out_as_score_knock_does(knocker: str, defender: str) -> None:
    # The engine scores in the kernel, then lays the cards out with knock_layout.
    k, d = mask_of(parse_cards(knocker)), mask_of(parse_cards(defender))
    code, points, k_dw, d_dw = kernels.knock_outcome(
        k, d, STANDARD.gin_bonus, STANDARD.undercut_bonus, STANDARD.big_gin_bonus or 0
    )
    assert knock_layout(k, d, code, abs(points), k_dw, d_dw) == score_knock(knocker, defender, STANDARD)


def test_knocker_melds_do_not_depend_on_the_defender() -> None:
    # 4s..7s with four fours: two least arrangements; the choice must be the same against anyone.
    knocker = "4s 4c 4d 4h 5s 6s 7s Ac 2c 3d"
    first = score_knock(knocker, "8s 3s Kc Kd Qh Jh Th 9d 8h 3h")
    second = score_knock(knocker, "Ks Qs Js 9c 9h 5d 6d 7d 2h 2d")
    assert first.knocker_melds == second.knocker_melds == best_arrangement(knocker).melds


# ---------------------------------------------------------------------------- against brute force

SMALL_MELDS = [m for m in ref.ALL_MELDS if len(m) <= 5]


@st.composite
def knock_deals(draw: st.DrawFn) -> tuple[list[int], list[int], list[int]]:
    """(knocker, defender, second defender): knocker from melds plus low cards, defenders biased to
    cards that touch the knocker's (layoffs, chains, broken melds)."""
    knocker: set[int] = set()
    for meld in draw(st.lists(st.sampled_from(SMALL_MELDS), min_size=1, max_size=4)):
        if not meld & knocker and len(knocker | meld) <= 10:
            knocker |= meld
    low = [c for c in range(NUM_CARDS) if c not in knocker and ref.value(c) <= 4]
    need = 10 - len(knocker)
    knocker |= set(draw(st.lists(st.sampled_from(low), unique=True, min_size=need, max_size=need)))
    rest = [c for c in range(NUM_CARDS) if c not in knocker]
    touching = [
        c
        for c in rest
        if any(
            ref.rank(c) == ref.rank(x) or (ref.suit(c) == ref.suit(x) and abs(c - x) <= 3) for x in knocker
        )
    ]
    # Melds of the defender's own make undercuts and meld-or-lay-off choices common.
    defender: list[int] = []
    for meld in draw(st.lists(st.sampled_from(SMALL_MELDS), max_size=3)):
        if not meld & knocker and not meld & set(defender) and len(defender) + len(meld) <= 10:
            defender += sorted(meld)
    touching = [c for c in touching if c not in defender]
    k = draw(st.integers(0, min(7, len(touching), 10 - len(defender))))
    defender += draw(st.lists(st.sampled_from(touching), unique=True, min_size=k, max_size=k))
    others = [c for c in rest if c not in defender]
    need = 10 - len(defender)
    defender += draw(st.lists(st.sampled_from(others), unique=True, min_size=need, max_size=need))
    second = draw(st.permutations(rest))[:10]
    return sorted(knocker), defender, second


def check_melds(melds: tuple[int, ...], cards: set[int], deadwood_cards: int, deadwood: int) -> None:
    used: set[int] = set()
    for meld in melds:
        meld_cards = set(cards_of(meld))
        assert ref.is_meld(meld_cards)
        assert meld_cards <= cards
        assert not meld_cards & used
        used |= meld_cards
    assert set(cards_of(deadwood_cards)) == cards - used
    assert ref.total(cards - used) == deadwood


@settings(max_examples=300, deadline=None)
@given(knock_deals(), st.sampled_from(sorted(PRESETS)), st.one_of(st.none(), st.integers(0, 10)))
def test_score_knock_equals_brute_force(
    deal: tuple[list[int], list[int], list[int]], preset: str, limit: int | None
) -> None:
    knocker, defender, second = deal
    rules = PRESETS[preset]
    knock_limit = rules.knock_limit if limit is None else limit
    k_dw = ref.min_deadwood(knocker)
    if k_dw > knock_limit:
        with pytest.raises(IllegalKnockError):
            score_knock(knocker, defender, rules, limit)
        return
    result = score_knock(knocker, defender, rules, limit)
    assert result.knocker_deadwood == k_dw
    check_melds(result.knocker_melds, set(knocker), result.knocker_deadwood_cards, k_dw)
    assert result.defender_deadwood_before_layoffs == ref.min_deadwood(defender)
    # The knocker's arrangement is chosen from the knocker's cards alone.
    assert score_knock(knocker, second, rules, limit).knocker_melds == result.knocker_melds

    if k_dw == 0:
        assert (result.kind, result.winner) == ("gin", "knocker")
        assert result.layoffs == ()
        assert result.defender_deadwood == ref.min_deadwood(defender)
        assert result.points == rules.gin_bonus + result.defender_deadwood
        check_melds(
            result.defender_melds, set(defender), result.defender_deadwood_cards, result.defender_deadwood
        )
        return

    melds = [set(cards_of(m)) for m in result.knocker_melds]
    expected = ref.defender_deadwood(melds, defender)
    assert result.defender_deadwood == expected
    layoffs = set(result.layoffs)
    assert layoffs <= set(defender)
    assert ref.can_lay_off(melds, layoffs)
    # Each reported target meld takes its cards: the meld plus them is still a meld.
    assert sorted(card for card, _ in result.layoff_targets) == sorted(layoffs)
    for i, meld in enumerate(melds):
        extra = {card for card, target in result.layoff_targets if target == i}
        assert ref.is_meld(meld | extra)
    kept = set(defender) - layoffs
    assert ref.min_deadwood(kept) == expected
    check_melds(result.defender_melds, kept, result.defender_deadwood_cards, expected)

    if expected > k_dw:
        assert (result.kind, result.winner, result.points) == ("knock", "knocker", expected - k_dw)
    else:
        assert (result.kind, result.winner) == ("undercut", "defender")
        assert result.points == k_dw - expected + rules.undercut_bonus


@st.composite
def big_gin_deals(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    """(eleven cards that all meld, defender)."""
    # Longest first: a four-set drawn first could leave no room for a run of 7.
    sizes = draw(st.sampled_from([(5, 3, 3), (4, 4, 3), (8, 3), (7, 4), (6, 5), (11,)]))
    cards: set[int] = set()
    for size in sizes:
        cards |= draw(st.sampled_from([m for m in ref.ALL_MELDS if len(m) == size and not m & cards]))
    rest = [c for c in range(NUM_CARDS) if c not in cards]
    return sorted(cards), draw(st.permutations(rest))[:10]


@settings(max_examples=100, deadline=None)
@given(big_gin_deals(), st.sampled_from(sorted(PRESETS)), st.data())
def test_big_gin_equals_brute_force(
    deal: tuple[list[int], list[int]], preset: str, data: st.DataObject
) -> None:
    eleven, defender = deal
    rules = PRESETS[preset]
    spoil: bool = data.draw(st.booleans())
    if spoil:
        # Swap one card for an unseen one: big gin only if the new eleven still all meld.
        out = data.draw(st.sampled_from(eleven))
        new = data.draw(
            st.sampled_from([c for c in range(NUM_CARDS) if c not in eleven and c not in defender])
        )
        eleven = sorted({*eleven, new} - {out})
    if not rules.big_gin or ref.min_deadwood(eleven) > 0:
        with pytest.raises(IllegalKnockError):
            score_knock(eleven, defender, rules)
        return
    result = score_knock(eleven, defender, rules)
    assert (result.kind, result.winner, result.layoffs) == ("big_gin", "knocker", ())
    assert result.knocker_deadwood == 0
    assert result.defender_deadwood == ref.min_deadwood(defender)
    assert result.points == rules.big_gin_bonus + result.defender_deadwood


def test_knock_kinds_have_one_spelling() -> None:
    """``score_knock``'s ``ResultKind`` names the kernel's ``KnockKind`` codes, in their order."""
    from typing import get_args

    from ginenv.kernels import KNOCK_KINDS, KnockKind
    from ginenv.scoring import ResultKind

    assert get_args(ResultKind) == KNOCK_KINDS
    assert [KNOCK_KINDS[k] for k in KnockKind] == [k.name.lower() for k in KnockKind]
