"""Rule options, presets and their dict form against docs/RULES.md (ginenv.rules)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from ginenv.rules import PRESETS, Rules, RulesError, preset

# docs/RULES.md, "Options and presets", plus the dead-hand rule (stock down to 2 cards).
DEFAULT_COLUMN: dict[str, Any] = {
    "knock_limit": 10,
    "gin_bonus": 25,
    "undercut_bonus": 25,
    "big_gin_bonus": None,
    "discard_taken_card": False,
    "oklahoma": False,
    "dead_hand_stock": 2,
    "target": 100,
    "game_bonus": 0,
    "line_bonus": 0,
    "shutout_multiplier": 1,
    "next_dealer": "alternate",
}
SEED000_BONUSES = {"game_bonus": 100, "line_bonus": 25, "shutout_multiplier": 2}
PRESET_TABLE: dict[str, dict[str, Any]] = {
    "standard": DEFAULT_COLUMN,
    "seed000": {**DEFAULT_COLUMN, "big_gin_bonus": 31, **SEED000_BONUSES},
    "seed000_short": {**DEFAULT_COLUMN, "big_gin_bonus": 31, "target": 50, **SEED000_BONUSES},
    # Seed 004 states no match bonuses: they stay off. Big gin is gin's 25 plus a 6-point big gin
    # bonus (31, as seed 000); the card just taken from the discard pile may be thrown back.
    "seed004": {**DEFAULT_COLUMN, "undercut_bonus": 20, "big_gin_bonus": 31, "discard_taken_card": True},
    "oklahoma": {**DEFAULT_COLUMN, "oklahoma": True},
}


def test_defaults_are_the_default_column() -> None:
    rules = Rules()
    assert rules.to_dict() == DEFAULT_COLUMN
    assert rules.big_gin is False
    assert Rules.from_dict({}) == rules


@pytest.mark.parametrize("name", sorted(PRESET_TABLE))
def test_preset_matches_rules_table(name: str) -> None:
    rules = preset(name)
    assert rules is PRESETS[name]
    assert rules.to_dict() == PRESET_TABLE[name]
    assert rules.big_gin is (PRESET_TABLE[name]["big_gin_bonus"] is not None)


def test_every_preset_is_in_the_table() -> None:
    assert set(PRESETS) == set(PRESET_TABLE)


def test_rules_are_frozen_and_hashable() -> None:
    rules = Rules()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.knock_limit = 5  # type: ignore[misc]
    assert hash(rules) == hash(Rules())
    assert len(set(PRESETS.values())) == len(PRESETS)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("knock_limit", -1),
        ("knock_limit", 101),
        ("knock_limit", 10.0),
        ("knock_limit", True),
        ("knock_limit", "10"),
        ("gin_bonus", -5),
        ("undercut_bonus", -1),
        ("undercut_bonus", None),
        ("big_gin_bonus", -1),
        ("big_gin_bonus", 3.5),
        ("big_gin_bonus", False),
        ("big_gin_bonus", 24),  # below gin_bonus: big gin would score less than gin
        ("discard_taken_card", 1),
        ("discard_taken_card", "yes"),
        ("discard_taken_card", None),
        ("oklahoma", 1),
        ("oklahoma", "yes"),
        ("dead_hand_stock", -1),
        ("dead_hand_stock", 31),
        ("target", 0),
        ("game_bonus", -100),
        ("line_bonus", -25),
        ("shutout_multiplier", 0),
        ("next_dealer", "dealer"),
        ("next_dealer", None),
    ],
)
def test_invalid_value_is_refused_naming_the_field(field: str, value: object) -> None:
    with pytest.raises(RulesError, match=field) as info:
        Rules(**{field: value})
    assert isinstance(info.value, ValueError)
    with pytest.raises(RulesError, match=field):
        Rules.from_dict({field: value})
    with pytest.raises(RulesError, match=field):
        Rules().replace(**{field: value})


@pytest.mark.parametrize(
    "changes",
    [
        {"knock_limit": 0},
        {"knock_limit": 100},
        {"big_gin_bonus": 25},
        {"gin_bonus": 0, "big_gin_bonus": 0},
        {"discard_taken_card": True},
        {"dead_hand_stock": 0},
        {"dead_hand_stock": 30},
        {"target": 1},
        {"next_dealer": "winner"},
        {"next_dealer": "loser"},
    ],
)
def test_boundary_values_are_accepted(changes: dict[str, Any]) -> None:
    rules = Rules(**changes)
    assert {k: getattr(rules, k) for k in changes} == changes


def test_from_dict_rejects_unknown_keys_naming_them() -> None:
    with pytest.raises(RulesError, match="knock_limt") as info:
        Rules.from_dict({"knock_limt": 5, "target": 50})
    assert "knock_limit" in str(info.value)  # the known options are listed
    with pytest.raises(RulesError, match="colour"):
        Rules.from_dict({"preset": "seed004", "colour": "red"})


def test_from_dict_rejects_non_mappings() -> None:
    with pytest.raises(RulesError):
        Rules.from_dict([("knock_limit", 5)])  # type: ignore[arg-type]


def test_from_dict_accepts_a_preset_and_overrides() -> None:
    assert Rules.from_dict({"preset": "seed004"}) == PRESETS["seed004"]
    rules = Rules.from_dict({"preset": "seed000", "target": 50})
    assert rules == PRESETS["seed000_short"]
    assert Rules.from_dict({"preset": "oklahoma", "knock_limit": 7}).to_dict() == {
        **PRESET_TABLE["oklahoma"],
        "knock_limit": 7,
    }


def test_from_dict_does_not_mutate_its_argument() -> None:
    data = {"preset": "seed004", "target": 50}
    Rules.from_dict(data)
    assert data == {"preset": "seed004", "target": 50}


@pytest.mark.parametrize("name", ["nope", "Standard", None])
def test_unknown_preset_is_refused(name: object) -> None:
    with pytest.raises(RulesError, match="standard"):  # the known presets are listed
        preset(name)  # type: ignore[arg-type]
    with pytest.raises(RulesError):
        Rules.from_dict({"preset": name})


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_dict_round_trip(name: str) -> None:
    rules = PRESETS[name]
    assert Rules.from_dict(rules.to_dict()) == rules
    assert rules.replace() == rules
    assert rules.replace(target=77).target == 77
    assert rules.replace(target=77).replace(target=rules.target) == rules


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_big_gin_never_scores_less_than_gin_in_any_preset(name: str) -> None:
    rules = PRESETS[name]
    assert rules.big_gin_bonus is None or rules.big_gin_bonus >= rules.gin_bonus


def test_big_gin_bonus_below_gin_bonus_is_refused_saying_why() -> None:
    with pytest.raises(RulesError) as info:
        Rules(big_gin_bonus=6)
    message = str(info.value)
    assert "big_gin_bonus=6" in message
    assert "gin_bonus (25)" in message  # what is allowed: at least the gin bonus
    # The bound follows the gin bonus of the same rules.
    assert Rules(gin_bonus=10, big_gin_bonus=10).big_gin_bonus == 10
    with pytest.raises(RulesError, match=r"gin_bonus \(30\)"):
        Rules(gin_bonus=30, big_gin_bonus=29)
    with pytest.raises(RulesError, match="big_gin_bonus"):
        PRESETS["seed004"].replace(gin_bonus=32)


def test_discard_taken_card_is_on_in_seed004_only() -> None:
    assert {name for name, rules in PRESETS.items() if rules.discard_taken_card} == {"seed004"}


@pytest.mark.parametrize("kind", [np.int8, np.int32, np.int64, np.uint8, np.uint64])
def test_numpy_integers_are_plain_integers(kind: type) -> None:
    rules = Rules(knock_limit=kind(5), big_gin_bonus=kind(31), target=kind(50))
    assert rules == Rules(knock_limit=5, big_gin_bonus=31, target=50)
    assert type(rules.knock_limit) is int and type(rules.big_gin_bonus) is int
    assert Rules.from_dict({"knock_limit": kind(7)}).knock_limit == 7
    assert hash(rules) == hash(Rules(knock_limit=5, big_gin_bonus=31, target=50))


def test_numpy_bools_are_bools_and_numpy_floats_are_refused() -> None:
    rules = Rules(oklahoma=np.bool_(True), discard_taken_card=np.bool_(False))
    assert rules.oklahoma is True and rules.discard_taken_card is False
    with pytest.raises(RulesError, match="knock_limit"):
        Rules(knock_limit=np.float64(5))
    with pytest.raises(RulesError, match="knock_limit"):
        Rules(knock_limit=np.bool_(True))


def test_from_dict_refuses_non_string_keys() -> None:
    with pytest.raises(RulesError, match="must be strings, got 1"):
        Rules.from_dict({1: 2})  # type: ignore[dict-item]


def test_messages_about_huge_values_stay_short() -> None:
    nested: list[object] = []
    for _ in range(500):
        nested = [nested]
    with pytest.raises(RulesError, match="knock_limit") as info:
        Rules.from_dict({"knock_limit": nested})
    assert len(str(info.value)) < 200
    with pytest.raises(RulesError) as info:
        Rules.from_dict({"preset": "x" * 10_000})
    assert len(str(info.value)) < 300
