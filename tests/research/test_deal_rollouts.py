"""Policy improvement from rollouts in the true deal (research.deal_rollouts): the
rollouts are the network's own continuation of the real hand, the recorded decisions are the
network's, and training moves the policy toward the options the values favour, by as much as
``beta`` allows."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from ginenv.agents.neural import SHIPPED_CHECKPOINT, read_checkpoint
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.luck import hand_luck, load_value

from ginenv import agents, gin_rummy_v0
from ginenv.actions import DRAW_DISCARD, DRAW_STOCK
from ginenv.cards import CARD_NAMES
from ginenv.engine import HandState, Phase
from ginenv.layout import KNOCK_LIMIT
from ginenv.rules import Rules
from research import deal_rollouts
from research.deal_rollouts import (
    OPTION_SLOTS,
    TrainArgs,
    load,
    main,
    measure,
    network_probs,
    play_out,
    record,
    record_against,
    seat_luck,
    train,
)


@pytest.fixture(scope="module")
def policy() -> torch.nn.Module:
    return read_checkpoint(SHIPPED_CHECKPOINT).policy.eval()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dr") / "data"
    assert record(out, seconds=600, games=6, worlds=2, seed=3, bf16=False, decisions=60) >= 60
    return out


def position(seed: int, steps: int) -> HandState:
    """A hand after ``steps`` random legal actions (never a knock), at a draw."""
    rng = random.Random(seed)
    state = HandState(Rules(), dealer=seed % 2, rng=rng)
    while len(state.history) < steps or state.phase is not Phase.DRAW:
        state.step(rng.choice([a for a in state.legal_actions() if a < 60]))
    return state


def test_a_play_out_is_the_networks_own_continuation_of_the_real_hand(policy: torch.nn.Module) -> None:
    # With the true stock order (no restocking), the play-out of taking the upcard or drawing from
    # the stock is exactly the hand the network then plays against itself in the AEC env.
    cuts = [position(seed, 4 + 2 * seed) for seed in range(4)]
    firsts = [DRAW_DISCARD, DRAW_STOCK] * 2
    records = np.concatenate([p.record for p in cuts])
    seats = np.array([p.player for p in cuts])
    points, played = play_out(policy, records, np.array(firsts), seats, None, bf16=False, seed=0)
    # The luck of each play-out is the harness's luck of the whole hand, for the seat that decided.
    prefixes = [[a for _, a in p.history] for p in cuts]
    lucks = seat_luck(records, prefixes, played, seats, Rules(), load_value().flat)
    for k, p in enumerate(cuts):
        actions = prefixes[k] + [a for a in played[k].tolist() if a >= 0]
        assert played[k, 0] == firsts[k]
        luck0 = hand_luck(p.deck, p.dealer, actions, Rules())
        assert lucks[k] == pytest.approx(luck0 if p.player == 0 else -luck0)
    assert (lucks != 0).any()
    for p, first, got in zip(cuts, firsts, points, strict=True):
        env = gin_rummy_v0.raw_env()
        env.reset(options={"deck": [CARD_NAMES[c] for c in p.deck], "dealer": p.dealer})
        for _, action in p.history:
            env.step(action)
        me = env.agent_selection
        env.step(first)
        net = agents.make("neural")
        while not (env.terminations[me] or env.truncations[me]):
            env.step(net.act(env.observe(env.agent_selection)))
        assert got == env.rewards[me]


def test_a_stand_in_plays_the_other_seat_of_the_play_out(policy: torch.nn.Module) -> None:
    # With a rival, the play-out is the hand the network plays for the seat that decided and the
    # rival plays for the other, move for move as in the AEC env.
    rival = copy.deepcopy(policy)
    with torch.no_grad():
        for weights in rival.parameters():
            weights.add_(torch.randn_like(weights) * 0.5)  # another player, still legal moves only
    cuts = [position(seed, 4 + 2 * seed) for seed in range(4)]
    firsts = [DRAW_DISCARD, DRAW_STOCK] * 2
    records = np.concatenate([p.record for p in cuts])
    seats = np.array([p.player for p in cuts])
    points, played = play_out(policy, records, np.array(firsts), seats, None, False, 0, rival)
    _, alone = play_out(policy, records, np.array(firsts), seats, None, False, 0)
    assert (played != alone).any()  # the rival's moves are not the network's
    for k, p in enumerate(cuts):
        env = gin_rummy_v0.raw_env()
        env.reset(options={"deck": [CARD_NAMES[c] for c in p.deck], "dealer": p.dealer})
        for _, action in p.history:
            env.step(action)
        me = env.agent_selection
        moves = [firsts[k]]
        env.step(firsts[k])
        while not (env.terminations[me] or env.truncations[me]):
            seen = env.observe(env.agent_selection)
            who = policy if env.agent_selection == me else rival
            obs, mask = seen["observation"][None].astype(np.float32), seen["action_mask"][None]
            moves.append(int(network_probs(who, obs, mask, bf16=False).argmax(1)[0]))
            env.step(moves[-1])
        assert moves == [a for a in played[k].tolist() if a >= 0]
        assert points[k] == env.rewards[me]


def test_the_recorded_decisions_are_the_networks_with_their_options(
    recorded: Path, policy: torch.nn.Module
) -> None:
    d = load(recorded)
    n = len(d["obs"])
    assert n >= 60 and d["options"].shape == d["q"].shape == (n, OPTION_SLOTS)
    probs = network_probs(policy, d["obs"].astype(np.float32), d["mask"], bf16=False)
    assert (probs.argmax(1) == d["action"]).all()  # option 0 is the network's own move
    valid = d["options"] >= 0
    assert valid.sum(1).min() >= 2  # the move and at least one other
    # The other options: the network's likely ones, then one it would rarely play.
    p_opt = np.take_along_axis(probs, np.maximum(d["options"], 0), axis=1)
    assert (p_opt[:, 0] >= p_opt[:, 1]).all()
    assert np.isfinite(d["q"][valid]).all() and np.isnan(d["q"][~valid]).all()
    assert d["has_luck"].all() and np.isfinite(d["q_luck"][valid]).all()
    assert (d["q_luck"][valid] != d["q"][valid]).any()  # the luck was taken off
    assert np.abs(d["q"][valid]).max() <= 150  # points of one hand
    assert (d["q"][:, 0] != d["q"][:, 1]).any()  # the options do not all come out the same


def test_training_moves_toward_better_options_as_far_as_beta_allows(recorded: Path, tmp_path: Path) -> None:
    # Make the values favour each row's second option by far: the argmax follows at a small beta,
    # barely at a huge one, and the held-out gain counts it.
    edited = tmp_path / "edited"
    edited.mkdir()
    d = load(recorded)
    q = np.where(d["options"] >= 0, 0.0, np.nan).astype(np.float32)
    q[:, 1] = 30.0
    np.savez(edited / "shard_0_0000.npz", **{k: d[k] for k in ("obs", "mask", "action", "options")}, q=q)
    small = train(
        [edited],
        tmp_path / "small.pt",
        TrainArgs(beta=1.0, epochs=30, batch_size=8, learning_rate=1e-3, threads=1),
    )
    large = train(
        [edited],
        tmp_path / "large.pt",
        TrainArgs(beta=1e6, epochs=30, batch_size=8, learning_rate=1e-3, threads=1),
    )
    assert small["changed"] > 0.6 and small["heldout_gain"] > 0.6 * 30.0
    assert large["changed"] < 0.1
    assert read_checkpoint(tmp_path / "small.pt").training is not None  # the head is kept


def test_measure_counts_the_gain_of_the_new_argmax_only_where_it_was_scored() -> None:
    # A stand-in policy whose argmax is fixed per row, on three decisions with made-up values.
    def inputs(rows: torch.Tensor) -> torch.Tensor:
        return torch.zeros(len(rows), 1)

    class Fixed(torch.nn.Module):
        def __init__(self, moves: list[int]) -> None:
            super().__init__()
            self.moves = moves

        def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            out = torch.full((len(x), mask.shape[1]), -1.0)
            out[torch.arange(len(x)), torch.tensor(self.moves)] = 1.0
            return out

    mask = torch.ones(3, 108, dtype=torch.bool)
    options = torch.tensor([[1, 2, -1, -1], [1, 2, 5, -1], [1, 2, -1, -1]])
    q = torch.tensor([[0.0, 4.0, 0.0, 0.0], [1.0, -2.0, 7.0, 0.0], [3.0, 1.0, 0.0, 0.0]], dtype=torch.float64)
    got = measure(Fixed([2, 5, 9]), inputs, mask, options, q, torch.arange(3))  # type: ignore[arg-type]
    # Row 0 gains 4, row 1 gains 6, row 2 changes to an unscored action: no gain counted.
    assert got["heldout_gain"] == pytest.approx(10 / 3)
    assert got["changed"] == 1.0 and got["unscored"] == pytest.approx(1 / 3)


def test_bad_settings_and_shards_are_refused(recorded: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="beta must be"):
        train([recorded], tmp_path / "x.pt", TrainArgs(beta=0.0))
    # The shared minibatch settings are refused before any data is read (0 epochs once divided by 0).
    for bad_setting, message in [
        ({"epochs": 0}, "epochs, batch_size and threads"),
        ({"learning_rate": 0.0}, "learning_rate must be"),
        ({"holdout": 1.0}, "holdout must lie"),
    ]:
        with pytest.raises(UsageError, match=message):
            TrainArgs(**bad_setting)  # type: ignore[arg-type]
    assert main(["train", str(recorded), "--out", str(tmp_path / "z.pt"), "--epochs", "0"]) == 2
    assert not (tmp_path / "z.pt").exists()
    d = load(recorded)
    bad = tmp_path / "bad"
    bad.mkdir()
    options = d["options"].copy()
    options[0, 1] = int(np.flatnonzero(~d["mask"][0])[0])  # an illegal option
    np.savez(bad / "shard_0_0000.npz", **{k: d[k] for k in ("obs", "mask", "action", "q")}, options=options)
    with pytest.raises(ValueError, match="illegal under its mask"):
        load(bad)
    assert main(["train", str(bad), "--out", str(tmp_path / "y.pt")]) == 2
    with pytest.raises(FileNotFoundError, match="no shard"):
        load(tmp_path)


def test_decisions_recorded_against_another_player_come_from_real_games_against_it(
    tmp_path: Path, policy: torch.nn.Module
) -> None:
    out = tmp_path / "against"
    assert record_against(out, "random", seconds=600, worlds=2, seed=4, bf16=False, decisions=60) >= 60
    d = load(out)
    probs = network_probs(policy, d["obs"].astype(np.float32), d["mask"], bf16=False)
    assert (probs.argmax(1) == d["action"]).all()  # the observations are the network's seat's
    valid = d["options"] >= 0
    assert valid.sum(1).min() >= 2 and np.isfinite(d["q_luck"][valid]).all()
    # The play-outs start from positions of games against a random player, so the network's seat
    # is far ahead in them (about +20 points a hand; in self-play about 0), and seen from its seat.
    assert d["q_luck"][:, 0].mean() > 8


def test_an_unknown_opponent_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "nothing"
    assert main(["record", "--out", str(out), "--opponent", "nobody", "--seconds", "1"]) == 2
    assert not out.exists()
    # A stand-in plays the opponent's seat of games against an opponent: self-play has none.
    assert main(["record", "--out", str(out), "--stand-in", str(SHIPPED_CHECKPOINT), "--seconds", "1"]) == 2
    assert not out.exists()


def test_recording_follows_the_tables_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Oklahoma's knock limits (the upcard's value) and seed 004's rules: the games, the play-outs,
    # the luck and the opponent all get them (they were the standard rules whatever the table's).
    rules = Rules(oklahoma=True, discard_taken_card=True, undercut_bonus=20, big_gin_bonus=31)
    seen: list[tuple[str, object]] = []
    real_play_out, real_luck, real_make = deal_rollouts.play_out, deal_rollouts.seat_luck, agents.make

    def spy_play_out(*args: Any, **kwargs: Any) -> Any:
        seen.append(("play_out", args[4]))
        return real_play_out(*args, **kwargs)

    def spy_luck(*args: Any, **kwargs: Any) -> Any:
        seen.append(("luck", args[4]))
        return real_luck(*args, **kwargs)

    def spy_make(*args: Any, **kwargs: Any) -> Any:
        seen.append(("make", kwargs.get("rules")))
        return real_make(*args, **kwargs)

    monkeypatch.setattr(deal_rollouts, "play_out", spy_play_out)
    monkeypatch.setattr(deal_rollouts, "seat_luck", spy_luck)
    monkeypatch.setattr(agents, "make", spy_make)
    out = tmp_path / "self"
    assert record(out, games=6, worlds=1, seed=5, bf16=False, decisions=20, rules=rules) >= 20
    against = tmp_path / "against"
    assert record_against(against, "random", worlds=1, seed=5, bf16=False, decisions=20, rules=rules) >= 20
    assert {what for what, _ in seen} == {"play_out", "luck", "make"}
    assert all(got == rules for _, got in seen)
    for folder in (out, against):
        limits = set(load(folder)["obs"][:, KNOCK_LIMIT].tolist())
        assert len(limits) > 1 and limits <= set(range(11))  # the upcards' values, not always 10
    # On the command line the rules are a preset's name; another name is refused before any game.
    nowhere = tmp_path / "nowhere"
    assert main(["record", "--out", str(nowhere), "--rules", "nonsense", "--seconds", "1"]) == 2
    assert not nowhere.exists()
