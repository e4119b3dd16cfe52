"""The batched engine (ginenv.vector) plays exactly the AEC env's game, and refuses bad batches.

The equivalence test steps N slots of :class:`VectorGinRummy` and, beside each slot, a
``gin_rummy_v0.raw_env`` dealt the same deck and dealer, applying the same action to both; at every
step the observation, the mask, the seat to move, the rewards, the results and the truncations must
be identical. ``GINENV_EQUIVALENCE_HANDS`` sets how many hands per rule preset (100 here, a few
seconds of CPU each; ``benchmarks/bench_vector.py --equivalence`` runs a large one).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from cut_hands import aec_for, cut_position
from numba import njit

from ginenv import agents, kernels
from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_STOCK, KNOCK_BASE, NUM_ACTIONS, action_id, action_name
from ginenv.cards import CARD_NAMES, NUM_CARDS, mask_of, parse_cards
from ginenv.engine import DeckError
from ginenv.kernels import hand as H
from ginenv.kernels import policies
from ginenv.observation import IS_DEALER, OBS_SIZE, PHASE_BASE, TO_MOVE
from ginenv.rules import PRESETS, Rules
from ginenv.vector import (
    RESULT_KINDS,
    OpponentVectorGinRummy,
    VectorError,
    VectorGinRummy,
    play_random_hands,
    policy_names,
)

HANDS = int(os.environ.get("GINENV_EQUIVALENCE_HANDS", "100"))


def biased_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random legal actions that often throw the card leaving the least deadwood and knock when they
    can, so that showdowns, layoffs and undercuts are exercised, not only dead hands."""
    out = np.empty(len(masks), dtype=np.int64)
    for i, mask in enumerate(masks):
        legal = np.flatnonzero(mask)
        knocks = legal[legal >= KNOCK_BASE]
        discards = legal[(legal >= DISCARD_BASE) & (legal < KNOCK_BASE)]
        if mask[BIG_GIN]:
            out[i] = BIG_GIN
        elif knocks.size and rng.random() < 0.7:
            out[i] = rng.choice(knocks)
        elif discards.size and rng.random() < 0.8:
            hand = mask_of(int(a - DISCARD_BASE) for a in discards)
            out[i] = min(discards, key=lambda a: kernels.min_deadwood(hand ^ 1 << int(a - DISCARD_BASE)))
        else:
            out[i] = rng.choice(legal)
    return out


def play_both(rules: Rules, hands: int, turn_limit: int, seed: int, slots: int = 32) -> dict[str, int]:
    """Play ``hands`` hands through both engines side by side; returns the result kinds seen."""
    rng = np.random.default_rng(seed)
    venv = VectorGinRummy(slots, rules=rules, seed=seed, turn_limit=turn_limit)
    obs, mask, player = venv.reset()
    decks, dealers = venv.deals()
    envs = [aec_for(rules, turn_limit, decks[i], dealers[i]) for i in range(slots)]
    kinds: dict[str, int] = {}
    finished = 0
    while finished < hands:
        waiting = venv.observe(1 - player)  # the seat not to move sees the same as in the AEC env
        for i, env in enumerate(envs):
            agent = env.agent_selection
            assert agent == f"player_{player[i]}"
            seen = env.observe(agent)
            np.testing.assert_array_equal(seen["observation"], obs[i])
            np.testing.assert_array_equal(seen["action_mask"], mask[i])
            np.testing.assert_array_equal(env.observe(f"player_{1 - player[i]}")["observation"], waiting[i])
        actions = biased_actions(mask, rng)
        obs, mask, player, rewards, terminated, truncated = venv.step(actions)
        results = venv.results
        finals = venv.final_observations
        decks, dealers = venv.deals()
        for i, env in enumerate(envs):
            env.step(int(actions[i]))
            assert (env.rewards["player_0"], env.rewards["player_1"]) == tuple(rewards[i])
            assert env.terminations["player_0"] == terminated[i]
            assert env.truncations["player_0"] == truncated[i]
            if not (terminated[i] or truncated[i]):
                assert results.kind[i] == -1
                continue
            for seat in (0, 1):  # each seat's last view of the ended hand
                np.testing.assert_array_equal(env.observe(f"player_{seat}")["observation"], finals[i, seat])
            info = env.infos["player_0"]["result"]
            winner = None if results.winner[i] < 0 else f"player_{results.winner[i]}"
            assert (RESULT_KINDS[results.kind[i]], winner, int(results.points[i])) == (
                info["kind"],
                info["winner"],
                info["points"],
            )
            if info["showdown"] is not None:
                assert list(results.deadwood[i]) == info["deadwood"]
            else:
                assert list(results.deadwood[i]) == [-1, -1]
            kinds[info["kind"]] = kinds.get(info["kind"], 0) + 1
            finished += 1
            envs[i] = aec_for(rules, turn_limit, decks[i], dealers[i])
    return kinds


@pytest.mark.parametrize("preset", list(PRESETS))
def test_vector_env_equals_aec_env(preset: str) -> None:
    kinds = play_both(PRESETS[preset], HANDS, turn_limit=100, seed=len(preset))
    # The biased policy reaches showdowns: the scoring path is compared, not only dead hands.
    assert kinds.get("knock", 0) + kinds.get("undercut", 0) + kinds.get("gin", 0) > HANDS // 4


def test_vector_env_equals_aec_env_at_the_turn_limit() -> None:
    kinds = play_both(Rules(), max(HANDS // 3, 40), turn_limit=12, seed=7)
    assert kinds.get("truncated", 0) > 0


@pytest.mark.parametrize("preset", ["standard", "seed004", "oklahoma"])
def test_the_mask_is_the_legal_parts_and_is_legal(preset: str) -> None:
    # legal_into writes the mask per phase itself (for speed): it must say what legal_parts and
    # is_legal (the AEC env's check) say, in every phase, upcard offers and forced draws included.
    venv = VectorGinRummy(64, rules=PRESETS[preset], seed=11, turn_limit=40)
    _, mask, _ = venv.reset()
    rng = np.random.default_rng(11)
    cfg = venv.rule_array
    phases: set[int] = set()
    for _ in range(150):
        state = venv.batch.state
        for i in range(venv.num_envs):
            low, allowed, knocks = H.legal_parts(state, i, cfg)
            want = np.zeros(NUM_ACTIONS, dtype=np.int8)
            want[[a for a in range(DISCARD_BASE) if low >> a & 1]] = 1
            want[[DISCARD_BASE + c for c in range(NUM_CARDS) if allowed >> c & 1]] = 1
            want[[KNOCK_BASE + c for c in range(NUM_CARDS) if knocks >> c & 1]] = 1
            assert np.array_equal(mask[i], want)
            legal = [a for a in range(NUM_ACTIONS) if H.is_legal(state, i, a, cfg)]
            assert legal == np.flatnonzero(want).tolist()
            phases.add(int(state[i, H.PHASE]))
        _, mask, *_ = venv.step(biased_actions(mask, rng))
    assert phases == {H.Phase.UPCARD_NON_DEALER, H.Phase.UPCARD_DEALER, H.Phase.DRAW, H.Phase.DISCARD}


def test_reset_from_given_decks_and_dealers() -> None:
    order = parse_cards(
        "Jc 8c 2h Ad 7d 8s 4c 6c 9s 4s 3h 8d 3s 9d 7s 6d Qh Tc Ac Qc Th 7c Qd 3d 6h Kd Jd 2c 2s "
        "Qs Kc 8h Ah 4d Ts 5d 5c Ks As 3c Jh 2d Kh 7h Td 6s 4h 5s 9c Js 5h 9h"
    )
    venv = VectorGinRummy(2, seed=0)
    obs, mask, player = venv.reset(decks=np.array([order, order]), dealers=np.array([0, 1]))
    # The non-dealer decides first on the upcard Th.
    assert player.tolist() == [1, 0]
    for i in range(2):
        env = aec_for(Rules(), 100, np.array(order), i)
        np.testing.assert_array_equal(env.observe(env.agent_selection)["observation"], obs[i])
    assert obs.shape == (2, OBS_SIZE) and mask.shape == (2, NUM_ACTIONS)
    assert set(np.flatnonzero(mask[0])) == {action_id("draw_discard"), action_id("pass")}


def test_the_stock_tops_are_the_next_cards_to_draw() -> None:
    order = parse_cards(
        "Jc 8c 2h Ad 7d 8s 4c 6c 9s 4s 3h 8d 3s 9d 7s 6d Qh Tc Ac Qc Th 7c Qd 3d 6h Kd Jd 2c 2s "
        "Qs Kc 8h Ah 4d Ts 5d 5c Ks As 3c Jh 2d Kh 7h Td 6s 4h 5s 9c Js 5h 9h"
    )
    venv = VectorGinRummy(1, seed=0)
    venv.reset(decks=np.array([order]), dealers=np.array([0]))
    assert [CARD_NAMES[c] for c in venv.stock_tops(3)[0]] == ["7c", "Qd", "3d"]
    # Both pass the upcard Th; the non-dealer then draws 7c from the stock.
    for name in ("pass", "pass", "draw_stock"):
        venv.step(np.array([action_id(name)]))
    assert [CARD_NAMES[c] for c in venv.stock_tops(2)[0]] == ["Qd", "3d"]
    # 30 cards are left in the stock: past them, -1.
    deep = venv.stock_tops(32)[0]
    assert CARD_NAMES[deep[29]] == "9h" and deep[30:].tolist() == [-1, -1]
    assert venv.stock_tops(0).shape == (1, 0)
    for bad in (-1, 1.5, "2"):
        with pytest.raises(VectorError, match="k must be an integer >= 0"):
            venv.stock_tops(bad)  # type: ignore[arg-type]


def test_determinism_under_a_seed() -> None:
    def run(seed: int) -> list[np.ndarray]:
        venv = VectorGinRummy(16, seed=seed)
        out = list(venv.reset())
        rng = np.random.default_rng(0)
        for _ in range(300):
            step = venv.step(biased_actions(out[1], rng))
            out = list(step[:3])
        return [*out, venv.deals()[0]]

    first, again, other = run(5), run(5), run(6)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not np.array_equal(first[-1], other[-1])


def snapshot(venv: VectorGinRummy) -> tuple[np.ndarray, ...]:
    return (*venv.deals(), venv.hands(), venv.observe())


def test_bad_batches_are_refused_and_change_nothing() -> None:
    venv = VectorGinRummy(4, seed=1)
    with pytest.raises(VectorError, match="call reset"):
        venv.step(np.zeros(4, dtype=np.int64))
    _, mask, _ = venv.reset()
    before = snapshot(venv)
    legal = mask.argmax(axis=1)
    illegal = legal.copy()
    illegal[2] = action_id("discard As") if not mask[2, action_id("discard As")] else action_id("big_gin")
    for bad, message in [
        (legal[:3], r"shape \(4,\)"),
        (legal.reshape(2, 2), r"shape \(4,\)"),
        (legal.astype(np.float64), "integer action ids"),
        (np.array(["1"] * 4), "integer action ids"),
        (np.full(4, NUM_ACTIONS), "outside 0..107"),
        (np.full(4, -1), "outside 0..107"),
        (illegal, "slot 2"),
    ]:
        with pytest.raises(VectorError, match=message):
            venv.step(bad)
        assert all(np.array_equal(a, b) for a, b in zip(before, snapshot(venv), strict=True))
    venv.step(legal)  # the slots still play on


def test_bad_construction_and_decks_are_refused() -> None:
    for n in (0, -3, 2.5, True, "8"):
        with pytest.raises(VectorError, match="num_envs"):
            VectorGinRummy(n)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="turn_limit"):
        VectorGinRummy(2, turn_limit=0)
    venv = VectorGinRummy(2)
    deck = np.arange(52)
    with pytest.raises(DeckError, match=r"shape \(2, 52\)"):
        venv.reset(decks=np.array([deck]))
    with pytest.raises(DeckError, match="deck 1"):
        venv.reset(decks=np.array([deck, np.r_[deck[:-1], 0]]))
    with pytest.raises(VectorError, match="dealers"):
        venv.reset(dealers=np.array([0, 2]))


def test_random_hands_in_compiled_code_end_as_the_game_allows() -> None:
    results = play_random_hands(2000, seed=3)
    names = [RESULT_KINDS[k] for k in results.kind]
    assert len(names) == 2000 and set(names) <= set(RESULT_KINDS)
    # Random play rarely knocks (few of the legal discards are knocks): most hands die.
    assert names.count("dead") > 1500
    assert np.all(results.points[results.winner < 0] == 0)
    assert play_random_hands(50, seed=3).kind.tolist() == results.kind[:50].tolist()
    truncated = play_random_hands(200, seed=3, turn_limit=5)
    assert (truncated.kind == RESULT_KINDS.index("truncated")).sum() > 100


@pytest.mark.parametrize("preset", ["standard", "seed004", "oklahoma"])
def test_compiled_greedy_plays_exactly_like_the_greedy_agent(preset: str) -> None:
    rules = PRESETS[preset]
    slots = 16
    venv = VectorGinRummy(slots, rules=rules, seed=11)
    venv.reset()
    decks, dealers = venv.deals()
    envs = [aec_for(rules, 100, decks[i], dealers[i]) for i in range(slots)]
    players = [[agents.make("greedy"), agents.make("greedy")] for _ in range(slots)]
    hands = 0
    while hands < 120:
        compiled = venv.policy_actions("greedy")
        for i, env in enumerate(envs):
            agent = env.agent_selection
            expected = players[i][int(agent[-1])].act(env.observe(agent))
            assert compiled[i] == expected, (preset, i, action_name(compiled[i]), action_name(expected))
            env.step(int(expected))
        *_, terminated, truncated = venv.step(compiled)
        decks, dealers = venv.deals()
        for i in np.flatnonzero(terminated | truncated):
            hands += 1
            envs[i] = aec_for(rules, 100, decks[i], dealers[i])
            players[i] = [agents.make("greedy"), agents.make("greedy")]


def test_learner_against_compiled_opponents() -> None:
    rng = np.random.default_rng(0)
    for opponent in ("greedy", "random"):
        venv = OpponentVectorGinRummy(32, opponent=opponent, seed=3)
        obs, mask = venv.reset()
        total, hands = 0.0, 0
        for _ in range(400):
            seats = venv.seats
            # Every observation is the learner's own, at its own decision.
            assert np.all(obs[:, TO_MOVE] == 1) and mask.any(axis=1).all()
            assert np.all(obs[:, IS_DEALER] == (venv.dealers == seats))
            obs, mask, rewards, terminated, truncated, final = venv.step(biased_actions(mask, rng))
            ended = terminated | truncated
            hands += int(ended.sum())
            total += float(rewards.sum())
            assert np.all(rewards[~ended] == 0)
            assert np.all(final[ended, PHASE_BASE + 4] == 1)  # the final observation shows the end
        assert hands > 100
        if opponent == "random":
            assert total / hands > 10  # a knocking learner beats random play
    OpponentVectorGinRummy(2, opponent="master@worlds=2")  # a loaded width is not a name of its own
    names = r"opponent must name a compiled policy \(easy, expert, greedy, hard, master, normal, random\)"
    with pytest.raises(VectorError, match=names):
        OpponentVectorGinRummy(2, opponent="openspiel_simple")


@njit
def _lowest_legal(s: np.ndarray, i: int, cfg: np.ndarray) -> int:
    # A policy of the test's own: the legal action with the smallest id.
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    H.legal_into(s, i, mask, cfg)
    return int(np.flatnonzero(mask)[0])


def test_a_registered_policy_is_an_opponent_without_the_core_knowing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The core names no strategy: a policy registered by name plays in the same compiled loops.
    monkeypatch.setattr(policies, "_TABLE", dict(policies._TABLE))  # the registration ends with the test
    policies.register_policy("lowest_legal", _lowest_legal)
    assert "lowest_legal" in policy_names()
    venv = VectorGinRummy(8, seed=2)
    _, mask, _ = venv.reset()
    rng = np.random.default_rng(2)
    for _ in range(40):
        chosen = venv.policy_actions("lowest_legal")
        assert chosen.tolist() == [int(np.flatnonzero(row)[0]) for row in mask]
        _, mask, *_ = venv.step(biased_actions(mask, rng))
    learner = OpponentVectorGinRummy(8, opponent="lowest_legal", seed=2)
    obs, mask = learner.reset()
    for _ in range(40):
        obs, mask, *_ = learner.step(biased_actions(mask, rng))
        assert np.all(obs[:, TO_MOVE] == 1)
    with pytest.raises(ValueError, match="a compiled policy needs a new non-empty name other than 'random'"):
        policies.register_policy("random", _lowest_legal)
    with pytest.raises(TypeError, match="must be a numba njit function"):
        policies.register_policy("plain", lambda s, i, cfg: 0)


@pytest.mark.parametrize("policy", ["greedy", "hard"])
def test_threads_choose_the_same_policy_actions(policy: str) -> None:
    one, two = VectorGinRummy(64, seed=9), VectorGinRummy(64, seed=9, threads=2)
    _, mask, _ = one.reset()
    two.reset()
    rng = np.random.default_rng(9)
    some = rng.random(64) < 0.5
    for _ in range(60):
        np.testing.assert_array_equal(one.policy_actions(policy), two.policy_actions(policy))
        np.testing.assert_array_equal(one.policy_actions(policy, some), two.policy_actions(policy, some))
        actions = biased_actions(mask, rng)
        _, mask, *_ = one.step(actions)
        two.step(actions)


def test_policy_actions_for_chosen_slots() -> None:
    venv = VectorGinRummy(16, seed=4)
    _, mask, _ = venv.reset()
    rng = np.random.default_rng(4)
    only = np.zeros(16, dtype=np.bool_)
    only[::3] = True
    for _ in range(50):
        picked = venv.policy_actions("greedy", slots=only)
        assert np.all(picked[~only] == -1) and np.all(mask[only, picked[only]] == 1)
        np.testing.assert_array_equal(picked[only], venv.policy_actions("greedy")[only])
        _, mask, *_ = venv.step(biased_actions(mask, rng))
    with pytest.raises(VectorError, match="slots must be a bool array"):
        venv.policy_actions("greedy", slots=np.zeros(3, dtype=np.bool_))


def test_slots_started_from_positions_play_on_as_the_aec_env() -> None:
    # Each slot starts from a mid-hand record (one of them at a discard) and must then show and
    # play exactly what the AEC env does from the same hand and history.
    cuts = [p for p, _ in (cut_position(seed, 6 + seed) for seed in range(8)) if not p.is_over]
    cuts[0].step(DRAW_STOCK)  # this slot starts in the discard phase
    venv = VectorGinRummy(len(cuts), seed=1)
    obs, mask, player = venv.start_from(np.concatenate([p.record for p in cuts]))
    envs = []
    for k, p in enumerate(cuts):
        env = aec_for(p.rules, p.turn_limit, np.array(p.deck), p.dealer)
        for _, action in p.history:
            env.step(action)
        envs.append(env)
        seat = env.agent_selection
        assert player[k] == int(seat[-1]) == p.player
        np.testing.assert_array_equal(obs[k], env.observe(seat)["observation"])
        np.testing.assert_array_equal(mask[k], env.observe(seat)["action_mask"])
    greedy = [agents.make("greedy") for _ in cuts]
    done = np.zeros(len(cuts), bool)
    while not done.all():
        acts = np.array([greedy[k].act(envs[k].observe(envs[k].agent_selection)) if not done[k] else 0
                         for k in range(len(cuts))])  # fmt: skip
        acts = np.where(done, venv.batch.masks.argmax(1), acts)
        obs, mask, player, rewards, term, trunc = venv.step(acts)
        for k in np.flatnonzero(~done):
            envs[k].step(int(acts[k]))
            if term[k] or trunc[k]:
                assert envs[k].terminations["player_0"] or envs[k].truncations["player_0"]
                assert rewards[k, 0] == envs[k].rewards["player_0"]
                done[k] = True
            else:
                np.testing.assert_array_equal(obs[k], envs[k].observe(envs[k].agent_selection)["observation"])
    with pytest.raises(VectorError, match=r"records must be \(2, "):
        VectorGinRummy(2).start_from(cuts[0].record)
    ended, _ = cut_position(0, 500)  # played to its end
    assert ended.is_over
    with pytest.raises(VectorError, match="slot 0's position is over"):
        VectorGinRummy(1).start_from(ended.record)


def _trajectory(rules: Rules, threads: int, steps: int = 150) -> list[np.ndarray]:
    """Everything a threaded step could get wrong, over ``steps`` steps of 96 slots (hands end
    and are dealt again in them): each step's outputs, the results, the final views, the deals."""
    venv = VectorGinRummy(96, rules=rules, seed=7, turn_limit=40, threads=threads)
    out = list(venv.reset())
    rng = np.random.default_rng(3)
    seen = []
    for _ in range(steps):
        step = venv.step(biased_actions(out[1], rng))
        out = list(step[:3])
        ended = step[4] | step[5]
        r = venv.results
        seen += [*step, r.kind, r.winner, r.points, r.deadwood, venv.final_observations[ended]]
    return [*seen, *venv.deals()]


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_thread_count_gives_the_same_results(preset: str) -> None:
    import numba

    threads = int(numba.config.NUMBA_NUM_THREADS)
    assert threads >= 2, "run with NUMBA_NUM_THREADS >= 2 (numba's default: the machine's cores)"
    one = _trajectory(PRESETS[preset], threads=1)
    many = _trajectory(PRESETS[preset], threads=threads)
    assert sum(int(np.count_nonzero(a)) for a in one[4::11]) > 50  # many hands ended (terminated)
    assert all(np.array_equal(a, b) for a, b in zip(one, many, strict=True))


def test_a_thread_count_the_process_cannot_have_is_refused() -> None:
    import numba

    for bad in (0, -1, 1.5, "2", int(numba.config.NUMBA_NUM_THREADS) + 1):
        with pytest.raises(VectorError, match="threads must be an integer from 1 to"):
            VectorGinRummy(4, threads=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_returned_observation_array_is_never_written_again(threads: int) -> None:
    # step, reset and start_from return the observations without a copy: each call writes a new
    # array, so what a caller kept (a rollout buffer holding references) stays as it was given.
    venv = VectorGinRummy(32, seed=4, threads=threads)
    kept = [venv.reset()[0]]
    rng = np.random.default_rng(1)
    mask = venv.batch.masks
    for _ in range(30):
        obs, mask, *_ = venv.step(biased_actions(mask, rng))
        kept.append(obs)
    frozen = [a.copy() for a in kept]
    for _ in range(5):
        venv.step(biased_actions(mask, rng))
        mask = venv.batch.masks
    venv.reset(seed=9)
    venv.start_from(venv.batch.state.copy())
    assert all(np.array_equal(a, b) for a, b in zip(kept, frozen, strict=True))
    assert len({id(a) for a in kept}) == len(kept)
    assert np.array_equal(venv.observe(), venv.batch.obs)  # the batch holds the latest


@pytest.mark.parametrize("threads", [1, 2])
def test_a_learners_observation_array_is_never_written_again(threads: int) -> None:
    # The opponent engine returns its observations without a copy too: a new array each call.
    venv = OpponentVectorGinRummy(32, opponent="greedy", seed=4, threads=threads)
    obs, mask = venv.reset()
    kept = [obs]
    rng = np.random.default_rng(1)
    for _ in range(30):
        obs, mask, *_ = venv.step(biased_actions(mask, rng))
        kept.append(obs)
    frozen = [a.copy() for a in kept]
    for _ in range(5):
        _, mask, *_ = venv.step(biased_actions(mask, rng))
    venv.reset(seed=9)
    assert all(np.array_equal(a, b) for a, b in zip(kept, frozen, strict=True))
    assert len({id(a) for a in kept}) == len(kept)


def _learner_trajectory(rules: Rules, opponent: str, threads: int, seat: int | None) -> list[np.ndarray]:
    """Everything a threaded opponent step could get wrong, over 120 steps of 64 slots against
    ``opponent``: each step's outputs, the results, the seats, and the last dealers."""
    venv = OpponentVectorGinRummy(
        64, opponent=opponent, seat=seat, rules=rules, seed=7, turn_limit=30, threads=threads
    )
    obs, mask = venv.reset()
    seen = [obs, mask, venv.seats]
    rng = np.random.default_rng(3)
    for _ in range(120):
        step = venv.step(biased_actions(mask, rng))
        mask = step[1]
        r = venv.results
        seen += [*step, venv.seats, r.kind, r.winner, r.points, r.deadwood]
    return [*seen, venv.dealers, venv.action_masks()]


@pytest.mark.parametrize("opponent", ["greedy", "hard"])
@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_thread_count_plays_the_opponents_the_same(preset: str, opponent: str) -> None:
    # The serial loop's results (pinned by test_record_access) for 2 threads, and 3 where numba has them.
    import numba

    most = int(numba.config.NUMBA_NUM_THREADS)
    assert most >= 2, "run with NUMBA_NUM_THREADS >= 2 (numba's default: the machine's cores)"
    seat = None if preset != "oklahoma" else 1
    one = _learner_trajectory(PRESETS[preset], opponent, 1, seat)
    assert sum(int(np.count_nonzero(a)) for a in one[6::11]) > 40  # many hands ended (terminated)
    for threads in [k for k in (2, 3) if k <= most]:
        many = _learner_trajectory(PRESETS[preset], opponent, threads, seat)
        assert all(np.array_equal(a, b) for a, b in zip(one, many, strict=True)), threads


def test_the_random_opponent_plays_on_one_thread() -> None:
    # random draws from the generator as it plays: threads would change the draws' order.
    one = _learner_trajectory(Rules(), "random", 1, None)
    venv = OpponentVectorGinRummy(4, opponent="random", threads=2)
    assert venv.threads == 1 and OpponentVectorGinRummy(4, threads=2).threads == 2
    two = _learner_trajectory(Rules(), "random", 2, None)
    assert all(np.array_equal(a, b) for a, b in zip(one, two, strict=True))
    with pytest.raises(VectorError, match="threads must be an integer from 1 to"):
        OpponentVectorGinRummy(4, threads=0)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_uint8_observations_are_the_float32_ones(preset: str) -> None:
    # The compact observation holds the same values; everything else of a step is the same too.
    for threads in (1, 2):
        wide = VectorGinRummy(32, rules=PRESETS[preset], seed=8, threads=threads)
        narrow = VectorGinRummy(32, rules=PRESETS[preset], seed=8, threads=threads, obs_dtype="uint8")
        obs, mask, _ = wide.reset()
        small, _, _ = narrow.reset()
        assert small.dtype == np.uint8
        np.testing.assert_array_equal(small.astype(np.float32), obs)
        rng = np.random.default_rng(8)
        for _ in range(150):
            actions = biased_actions(mask, rng)
            (obs, mask, *rest), (small, *others) = wide.step(actions), narrow.step(actions)
            np.testing.assert_array_equal(small.astype(np.float32), obs)
            for mine, theirs in zip([mask, *rest], others, strict=True):
                np.testing.assert_array_equal(mine, theirs)
    with pytest.raises(VectorError, match="obs_dtype must be one of float32, uint8"):
        VectorGinRummy(2, obs_dtype="float16")


def test_the_engines_compiled_calls_release_the_gil() -> None:
    # A trainer steps an engine on one Python thread while its network runs on another
    # (experiments.train.rollouts.collect_overlapped): every compiled call of a step, the compiled
    # opponents' and the network inputs' must let go of the GIL.
    from ginenv import features, vector
    from ginenv.kernels import opponent_loops

    calls = [
        vector._step_all, vector._step_threaded, vector._count_refused, vector._policy_actions,
        vector._policy_actions_threaded, opponent_loops.step_learners,
        opponent_loops.step_learners_threaded, features.hand_features_many,
    ]  # fmt: skip
    assert [c.py_func.__name__ for c in calls if not c.targetoptions.get("nogil")] == []
