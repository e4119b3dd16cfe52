"""The inputs of learned policies (ginenv.features): the deadwood features equal the brute-force
reference, are read from the observation alone, and the raw kind is the observation itself."""

from __future__ import annotations

import numpy as np
import pytest
import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from test_melds import meld_rich_hands

from ginenv import gin_rummy_v0, kernels
from ginenv.cards import NUM_CARDS, mask_of, parse_cards
from ginenv.features import FEATURE_SIZE, POINTS, hand_features_many, hand_masks, input_size, policy_inputs
from ginenv.observation import OBS_SIZE, plane_slice

hands_10_or_11 = st.one_of(
    st.lists(st.integers(0, NUM_CARDS - 1), unique=True, min_size=10, max_size=11),
    meld_rich_hands(min_size=10, max_size=11),
)


@settings(max_examples=60, deadline=None)
@given(hands_10_or_11)
def test_hand_features_equal_the_reference(hand: list[int]) -> None:
    feats = hand_features_many(np.array([mask_of(hand)], dtype=np.int64))[0]
    after_discard, after_draw, meldable = feats[:52], feats[52:104], feats[104:156]
    in_melds = {c for meld in ref.all_melds(hand) for c in meld}
    for card in range(NUM_CARDS):
        held = card in hand
        if len(hand) == 11 and held:
            assert after_discard[card] == ref.min_deadwood([c for c in hand if c != card])
        else:
            assert after_discard[card] == 0
        if len(hand) == 10 and not held:
            assert after_draw[card] == ref.best_discard([*hand, card])
        else:
            assert after_draw[card] == 0
        assert meldable[card] == (held and card in in_melds)
    own = ref.best_discard(hand) if len(hand) == 11 else ref.min_deadwood(hand)
    assert feats[-1] == own == kernels.own_deadwood_many(np.array([mask_of(hand)], dtype=np.int64))[0]


def test_a_scripted_hand_reads_as_a_player_would() -> None:
    # 10 cards: a run of hearts, a set of sevens, four loose cards (deadwood 9 + 10 + 2 + 5 = 26).
    hand = parse_cards("Ah 2h 3h 7c 7d 7s 9c Kd 2s 5c")
    feats = hand_features_many(np.array([mask_of(hand)], dtype=np.int64))[0]
    assert feats[-1] == 26
    # Drawing the 4h extends the run and lets the king go: 26 - 10 = 16 left.
    assert feats[52 + parse_cards("4h")[0]] == 16
    assert feats[104 + parse_cards("Ah")[0]] == 1 and feats[104 + parse_cards("Kd")[0]] == 0


def test_policy_inputs_read_only_the_observation() -> None:
    env = gin_rummy_v0.env()
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)["observation"]
    batch = np.stack([obs, obs])
    assert policy_inputs(batch, "observation").shape == (2, OBS_SIZE) == (2, input_size("observation"))
    x = policy_inputs(batch, "features")
    assert x.shape == (2, OBS_SIZE + FEATURE_SIZE) == (2, input_size("features"))
    hand = hand_masks(batch)[0]
    assert hand == sum(1 << int(c) for c in np.flatnonzero(obs[plane_slice("hand")]))
    expected = hand_features_many(np.array([hand], dtype=np.int64))[0]
    np.testing.assert_allclose(x[0, OBS_SIZE + 52 * 3] * POINTS, expected[-1])
    # Cards are 0/1 planes already; the scalars (cards left in the stock) are brought near [0, 1].
    assert 0 < x[0, 0] <= 1 and obs[0] > 1


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown policy input 'pixels'; allowed: observation, features"):
        input_size("pixels")
    with pytest.raises(ValueError, match=rf"shape \(batch, {OBS_SIZE}\)"):
        policy_inputs(np.zeros((2, 7), dtype=np.float32), "features")
