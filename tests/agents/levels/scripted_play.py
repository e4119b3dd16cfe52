"""Scripted play shared by the level tests (``from levels.scripted_play import ...``).

Built on ``scenarios`` (decks and observations from card names): :func:`late_position`, a position
late in a hand with a random spread of discards; :func:`play_out`, a dealt hand played to its end by
a callback; :func:`play_hand`, one whole hand between freshly seeded agents, every move checked
against the mask; :func:`decision_kind`, what kind of decision a compiled level made in a hand
record row (the compiled-level tests count them); :func:`play_compiled`, whole hands through the
batched engine comparing a compiled level with its Python level at every decision (with
:func:`same_model` for the levels with an opponent model), and :func:`check_engine_policy`, the
engine's policy of a name against the level's moves.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scenarios import position

from ginenv import agents, gin_rummy_v0
from ginenv.actions import BIG_GIN, DRAW_DISCARD, KNOCK_BASE, NUM_ACTIONS, action_name
from ginenv.cards import CARD_NAMES, parse_cards
from ginenv.engine import Phase
from ginenv.kernels import hand as H
from ginenv.observation import decode
from ginenv.rules import PRESETS, Rules


def late_position(
    hand: str, stock: int, seed: int = 5, top: str | None = None, taken: str = ""
) -> dict[str, np.ndarray]:
    """``hand`` (11 cards) to discard with ``stock`` cards left; the pile is a random spread of the
    other cards (``seed``), every other one discarded by the opponent.

    With ``top`` (a card name) and a 10-card ``hand``: the draw phase, that card on the pile.
    ``taken``: cards the opponent took from the pile and holds."""
    used = set(parse_cards(f"{hand} {taken}"))
    rng = np.random.default_rng(seed)
    rest = [int(c) for c in rng.permutation([c for c in range(52) if c not in used])]
    n = 31 - stock
    if top is None:
        top_card = rest[n - 1]
    else:
        top_card = parse_cards(top)[0]
        rest.remove(top_card)

    def names(cards: list[int]) -> str:
        return " ".join(CARD_NAMES[c] for c in cards)

    obs = position(
        hand,
        top=CARD_NAMES[top_card],
        pile=names(rest[: n - 1]),
        opp_taken=taken,
        opp_discarded=names(rest[:n:2]),
        phase=Phase.DISCARD if top is None else Phase.DRAW,
        stock=stock,
    )
    assert decode(obs["observation"]).stock_size == stock
    return obs


def play_out(env: Any, act: Callable[[str, dict], int | None]) -> dict:
    """Play the hand dealt in ``env`` to its end: ``act(agent_id, observation)`` gives each move
    (``None``: stop the hand there). Returns the hand's result (``{}`` when stopped)."""
    result: dict = {}
    for agent_id in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if term or trunc:
            result = info["result"]
            env.step(None)
            continue
        action = act(agent_id, obs)
        if action is None:
            return {}
        env.step(action)
    return result


def play_hand(
    names: tuple[str, str],
    seed: int,
    seeds: tuple[int, int],
    dealer: int,
    deck: list[int] | None = None,
    rules: Rules | None = None,
    watch: Callable[[Any, int, int], None] | None = None,
) -> tuple[list[int], dict]:
    """One hand (dealt from ``seed``, or ``deck``) between fresh agents ``names`` (player_0,
    player_1) reset with ``seeds``: every action, each checked against the mask, and the result.
    ``watch(env, seat, action)`` sees each move before it is played."""
    env = gin_rummy_v0.raw_env() if rules is None else gin_rummy_v0.raw_env(rules=rules)
    env.reset(seed=seed, options={"dealer": dealer} | ({"deck": deck} if deck else {}))
    players = [agents.make(n, seed=s, rules=rules) for n, s in zip(names, seeds, strict=True)]
    for agent, s in zip(players, seeds, strict=True):
        agent.reset(s)
    actions: list[int] = []

    def act(agent_id: str, obs: dict) -> int:
        seat = int(agent_id[-1])
        action = int(players[seat].act(obs))
        assert obs["action_mask"][action] == 1, f"{names[seat]} played an illegal {action_name(action)}"
        if watch is not None:
            watch(env, seat, action)
        actions.append(action)
        return action

    return actions, play_out(env, act)


def decision_kind(row: np.ndarray, mask: np.ndarray, action: int) -> str:
    """What kind of decision ``action`` is in the position ``row`` (a hand record row)."""
    phase = H.phase_of(row[None], 0)
    if phase in (H.Phase.UPCARD_NON_DEALER, H.Phase.UPCARD_DEALER):
        return "upcard take" if action == DRAW_DISCARD else "upcard pass"
    if phase == H.Phase.DRAW:
        if not H.may_take_top(row[None], 0):
            return "forced draw"
        return "take" if action == DRAW_DISCARD else "stock"
    if action == BIG_GIN:
        return "big gin"
    if action >= KNOCK_BASE:
        return "knock"
    if mask[KNOCK_BASE:NUM_ACTIONS].any():
        return "play on for gin"
    return "discard after a take" if H.just_taken(row[None], 0) >= 0 else "discard"


#: The seats of a slot in :func:`play_compiled` (swapped in every other group of slots): the level
#: ("level") against itself, greedy or random (the compiled policies), or "drawer": random draws and
#: the level's discards, so that it must discard after takes it would not have made (where the
#: useful-discard guard decides far more often).
SEATINGS = (("level", "level"), ("level", "greedy"), ("level", "random"), ("drawer", "greedy"))


@dataclass
class Checked:
    """What :func:`play_compiled` saw: the level's decisions by kind, how many were not checked
    exactly, at how many of those the compiled move differed, and at how many decisions greedy
    would have played otherwise than the level."""

    kinds: Counter[str]
    inexact: int
    unlike: int
    unlike_greedy: int

    @property
    def decisions(self) -> int:
        """The level's decisions."""
        return sum(self.kinds.values())

    def assert_often(self, kinds: tuple[str, ...], least: float) -> None:
        """Each of ``kinds`` came up more than ``least`` times (so that a wrong one cannot hide)."""
        for kind in kinds:
            assert self.kinds[kind] > least, (kind, self.kinds)


def play_compiled(
    fresh: Callable[[], Any],
    compiled: Callable[[np.ndarray, int, np.ndarray, np.random.Generator], int],
    preset: str,
    hands: int,
    seed: int,
    slots: int = 16,
    exact: Callable[[np.ndarray, int, Any], bool] | None = None,
    seatings: tuple[tuple[str, str], ...] = SEATINGS,
) -> Checked:
    """Play ``hands`` hands of ``preset`` in the batched engine, a Python level (``fresh()`` makes
    one, replaced at each new hand) in the seats of ``seatings`` (see :data:`SEATINGS`), and at each
    of its decisions compare ``compiled(state, row, rule_array, generator)``, given a copy of the
    level's generator, with the level's move. Where ``exact(state, row, agent)`` holds (None:
    everywhere) the moves and the generators after them must be equal (asserted here); elsewhere
    they are counted."""
    from ginenv.vector import VectorGinRummy

    venv = VectorGinRummy(slots, rules=PRESETS[preset], seed=seed)
    obs, mask, player = venv.reset()
    seating = [seatings[i % len(seatings)] for i in range(slots)]
    seating = [pair[::-1] if (i // len(seatings)) % 2 else pair for i, pair in enumerate(seating)]
    players = [[fresh(), fresh()] for _ in range(slots)]
    seen = Checked(Counter(), 0, 0, 0)
    ended = 0
    # Random moves only where a seat plays them: drawing them moves the engine's generator (its deals).
    randomly = any(role in ("random", "drawer") for pair in seatings for role in pair)
    while ended < hands:
        s, cfg = venv.batch.state, venv.rule_array
        greedy = venv.policy_actions("greedy")
        actions = venv.policy_actions("random") if randomly else greedy.copy()
        for i in range(slots):
            seat = int(player[i])
            role = seating[i][seat]
            if role == "greedy":
                actions[i] = greedy[i]
            if role in ("greedy", "random"):
                continue
            agent = players[i][seat]
            if role == "drawer" and H.phase_of(s, i) != H.Phase.DISCARD:
                # A random draw; the level sees it (its opponent model) and a take is its own to its
                # memory (TakeGuard) and to the record.
                agent.see(decode(obs[i]))
                if actions[i] == DRAW_DISCARD:
                    agent.note_take(int(H.top_card(s, i)))
                continue
            rng = copy.deepcopy(agent.rng)
            move = int(compiled(s, i, cfg, rng))
            expected = int(agent.act({"observation": obs[i], "action_mask": mask[i]}))
            if exact is None or exact(s, i, agent):
                assert move == expected, (preset, i, seat, action_name(move), action_name(expected))
                assert rng.bit_generator.state == agent.rng.bit_generator.state, (preset, i, seat)
            else:
                seen.inexact += 1
                seen.unlike += int(move != expected)
            seen.kinds[decision_kind(s[i], mask[i], expected)] += 1
            seen.unlike_greedy += int(greedy[i] != expected)
            actions[i] = expected
        obs, mask, player, _, terminated, truncated = venv.step(actions)
        for i in np.flatnonzero(terminated | truncated):
            ended += 1
            players[i] = [fresh(), fresh()]
    return seen


def same_model(s: np.ndarray, i: int, agent: Any) -> bool:
    """Whether the compiled opponent model (:mod:`ginenv.agents.levels.belief_compiled`) of the seat
    to move in row ``i`` holds, bit for bit, the probabilities of the Python level ``agent``'s model
    after its last observation (the ``exact`` of :func:`play_compiled` for the levels that use it)."""
    from ginenv.agents.levels.belief import subset_marginals
    from ginenv.agents.levels.belief_compiled import model_of

    ids, w, _, slots, _ = model_of(s, i, H.mover(s, i))
    return bool(np.array_equal(subset_marginals(w, slots), agent.model.probabilities()[ids]))


def check_engine_policy(name: str, moves: Callable[[Any, np.ndarray], np.ndarray], steps: int = 40) -> None:
    """The batched engine's compiled policy ``name`` is the level whose ``moves(venv, slots)`` is
    given: the same legal moves in any slots, and the same again on the same views (a policy that
    draws seeds its generator from the view), over ``steps`` steps of 16 slots."""
    from ginenv.vector import VectorGinRummy

    venv = VectorGinRummy(16, seed=5)
    venv.reset()
    rng = np.random.default_rng(5)
    every = np.arange(16)
    for _ in range(steps):
        chosen = venv.policy_actions(name)
        rows = rng.permutation(16)[:9]
        np.testing.assert_array_equal(moves(venv, rows), chosen[rows])
        np.testing.assert_array_equal(venv.policy_actions(name), chosen)
        assert np.all(venv.batch.masks[every, chosen] == 1)
        venv.step(np.where(rng.random(16) < 0.5, chosen, venv.policy_actions("random")))
