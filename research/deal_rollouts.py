"""All-action policy improvement from rollouts in the true deal, in one file.

Expert iteration on master's option values gained nothing, and neither did the network's own
rollouts in sampled worlds (docs/reports/ of 2026-12-02): both judge an option in worlds drawn from a model
of the opponent's hand, and those worlds are biased; with the true hand in every world the same
greedy step wins by 13 points a hand, but an agent cannot see that hand. A training target can:

* **record**: the network plays itself in ``--games`` hands in lockstep on the batched engine. At a
  share of its decisions (:data:`LABEL_SHARE`), its options (:func:`choose_options`: its move and
  its second choice, or a random legal action) are each played out ``--worlds`` times to the end
  of the hand, the network moving for both seats, each copy with the *true* hands and a freshly
  drawn stock order (:func:`restocked`), the same orders for every option. The mean
  points are ``Q(deal, a)``, the option's value in this deal under the network's own play;
  ``q_luck`` beside them takes off each play-out's luck of the stock (:func:`seat_luck`, the
  harness's zero-mean control variate), which keeps them unbiased with less variance.
* **record --opponent SPEC** (:func:`record_against`): the network plays real games against
  another player (``master``) in the AEC env, and its decisions there are labelled the same way.
  The positions, and the hidden cards given the observation, are then those of games against that
  player; the play-outs after each option are still the network's own. With ``--stand-in CKPT``
  another network (a clone of the opponent) plays the opponent's seat in the play-outs, so the
  values are those of the options against a fast stand-in for the opponent, not against the
  network itself: the step is then toward a best response to that player.
* **train**: given the observation, the true deal is a draw from the exact posterior of the
  deals (the network's own self-play made it), so ``Q(deal, a)`` is an unbiased sample of the
  value ``Q(o, a)`` of option ``a`` at observation ``o``, the quantity a policy improvement step
  needs. The policy ``pi`` (from ``--init``, frozen as ``pi0``) minimises, per labelled decision,

      - sum_{a in S} pi(a) (Q(deal, a) - b) / beta + KL(pi || pi0),   b = sum_S pi0 Q / sum_S pi0,

  which is linear in the sampled values, so its expectation over the deals is the same loss with
  ``Q(o, a)``: the optimum is ``pi0 * exp(A(o, a) / beta)`` (``beta`` in points per nat), one step of
  policy improvement over the network, with no model of the opponent's hand anywhere. (A target
  tilted by ``exp(Q(deal, a) / beta)`` instead would average the tilts over the deals and learn to
  play as if it could see the hand.)

The held-out decisions measure the step without playing a game: ``gain`` is the mean of
``Q(deal, new move) - Q(deal, old move)`` over the held-out decisions where the new move is one
of the scored options, an unbiased estimate of what the new argmax gains per decision over the
network, in the network's own games. The agent never reads hidden cards; only the recorded
targets do (as the oracle critic of :mod:`ginenv.experiments.train.ppo`).

``python -m research.deal_rollouts record --out DIR --seconds S --seed K
[--opponent master [--stand-in CKPT]] [--rules PRESET]`` (one process per core) and ``... train
DIR [DIR ...] --out step.pt --beta 1``. The games, the play-outs and the luck all follow the
table's rules (``--rules``, a preset of :data:`ginenv.rules.PRESETS`; standard by default); the
luck's value weights were fitted under the standard rules, so under others the luck stays zero-mean
and only removes less variance.
Shards hold plain arrays only and are read with ``allow_pickle=False``.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from ginenv.agents.arena import play_game
from ginenv.agents.base import Observation
from ginenv.agents.neural import (
    SHIPPED_CHECKPOINT,
    MaskedPolicy,
    check_state,
    read_checkpoint,
    save_checkpoint,
)
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.luck import deal_delta, load_value

from ginenv import agents, gin_rummy_v0
from ginenv.actions import NUM_ACTIONS
from ginenv.engine import DEFAULT_TURN_LIMIT
from ginenv.kernels import hand as H
from ginenv.observation import OBS_SIZE
from ginenv.rules import PRESETS, Rules, preset
from ginenv.vector import VectorGinRummy
from research.bc import (
    FitArgs,
    aux_head,
    last_shards,
    minibatch_epochs,
    refit_aux_head,
    shard_files,
    starting_head_targets,
)
from research.worlds import restocked

#: Most options scored per decision (the network's likeliest, then one random other action).
OPTION_SLOTS = 4
#: The network's likeliest actions scored per decision (the cost of a decision grows with them, and
#: its third choice is worse than its move by 2 points on average).
NETWORK_OPTIONS = 2
#: The network's options are those it gives at least this probability.
MIN_PROB = 0.02
#: Share of the decisions labelled, where the network is unsure (its top action < 0.98) and sure.
LABEL_SHARE = (0.5, 0.02)
#: The same against another player (:func:`record_against`), whose decisions cost far more than the
#: labels: every unsure decision and a twentieth of the others.
AGAINST_SHARE = (1.0, 0.05)
#: Games against another player are games of master seed ``AGAINST_SEED + seed``: far from the
#: small seeds evaluations use.
AGAINST_SEED = 0xD7_0000
#: Decisions labelled together against another player (the play-outs are batched over them).
AGAINST_BATCH = 256
#: Most actions of one hand (draws, discards and the upcard passes) under the default turn limit.
MAX_ACTIONS = 2 * DEFAULT_TURN_LIMIT + 8
#: Decisions per shard file.
SHARD_ROWS = 20_000
#: The arrays of a shard, one row per labelled decision.
SHARD_KEYS = ("obs", "mask", "action", "options", "q", "q_luck")


def network_probs(policy: MaskedPolicy, obs: np.ndarray, mask: np.ndarray, bf16: bool) -> np.ndarray:
    """The network's action probabilities for each row (bfloat16 matrix products when ``bf16``:
    twice as fast on a CPU with AVX512-BF16, and the argmax agrees on 99.9% of positions)."""
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        logits = policy(policy.prepare(obs.astype(np.float32)), torch.from_numpy(mask.astype(np.int8)))
    return logits.float().softmax(1).numpy()


def play_out(
    policy: MaskedPolicy,
    records: np.ndarray,
    first: np.ndarray,
    seats: np.ndarray,
    rules: Rules | None,
    bf16: bool,
    seed: int,
    rival: MaskedPolicy | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Points for ``seats[i]`` of each record once ``first[i]`` is played and the network plays both
    seats to the end of the hand (or ``rival`` the other seat, when given), and the actions played
    from the record on, (N, L) padded with -1. Finished slots are dropped as the batch shrinks."""
    n = len(records)
    points = np.zeros(n)
    done = np.zeros(n, dtype=bool)
    played = np.full((n, MAX_ACTIONS), -1, dtype=np.int64)
    count = np.zeros(n, dtype=np.int64)
    rows = np.arange(n)  # the record each slot plays
    venv = VectorGinRummy(n, rules=rules, seed=seed)
    venv.start_from(records)
    acts = first.astype(np.int64)
    live = np.ones(n, dtype=bool)
    while True:
        mine = rows[live]
        played[mine, count[mine]] = acts[live]
        count[mine] += 1
        obs, mask, player, rewards, term, trunc = venv.step(acts)
        ended = (term | trunc) & ~done[rows]
        points[rows[ended]] = rewards[ended, seats[rows[ended]]]
        done[rows[ended]] = True
        live = ~done[rows]
        if not live.any():
            return points, played
        if live.sum() < 0.6 * len(rows):  # a finished slot is dealt a new hand: drop them
            state = venv.batch.state[live]
            rows = rows[live]
            venv = VectorGinRummy(len(rows), rules=rules, seed=seed + len(rows))
            obs, mask, player = venv.start_from(state)
            live = np.ones(len(rows), dtype=bool)
        acts = mask.argmax(1).astype(np.int64)  # any legal move for finished slots: never read
        ours = live if rival is None else live & (player == seats[rows])
        if ours.any():
            acts[ours] = network_probs(policy, obs[ours], mask[ours], bf16).argmax(1)
        theirs = live & ~ours
        if theirs.any() and rival is not None:
            acts[theirs] = network_probs(rival, obs[theirs], mask[theirs], bf16).argmax(1)


def seat_luck(
    records: np.ndarray,
    prefixes: list[list[int]],
    played: np.ndarray,
    seats: np.ndarray,
    rules: Rules,
    weights: np.ndarray,
) -> np.ndarray:
    """The luck of each play-out's stock draws for ``seats[i]``, in points (the harness's control
    variate, :mod:`ginenv.experiments.eval.luck`): the hand replayed from its deal by the actions
    before the record (``prefixes[i]``) and after it (``played[i]``). Its mean is zero whatever
    was played, so subtracting it from the points keeps each value unbiased; within one deal it
    removes about a third of the variance the stock order adds."""
    out = np.empty(len(records))
    for i in range(len(records)):
        actions = prefixes[i] + [a for a in played[i].tolist() if a >= 0]
        delta = deal_delta(
            H.deck_order(records, i),
            H.dealer_of(records, i),
            actions,
            rules,
            H.knock_limit_of(records, i),
        )
        out[i] = float(delta @ weights)
    return np.where(seats == 0, out, -out)


def choose_options(probs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each row's options, (N, :data:`OPTION_SLOTS`) action ids padded with -1: the network's
    likeliest :data:`NETWORK_OPTIONS` actions with probability >= :data:`MIN_PROB` (at least its
    move), and where that leaves one, another legal action drawn at random, so that every row
    compares two and actions the network never plays are judged too."""
    out = np.full((len(probs), OPTION_SLOTS), -1, dtype=np.int64)
    ranked = np.argsort(-probs, axis=1, kind="stable")  # ties: the first, as argmax takes it
    for i in range(len(probs)):
        mine = [int(ranked[i, 0])]
        mine += [int(a) for a in ranked[i, 1:NETWORK_OPTIONS] if probs[i, a] >= MIN_PROB]
        others = np.setdiff1d(np.flatnonzero(mask[i]), mine)
        if len(mine) == 1 and others.size:
            mine.append(int(rng.choice(others)))
        out[i, : len(mine)] = mine
    return out


def label(
    policy: MaskedPolicy,
    rows: np.ndarray,
    states: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    probs: np.ndarray,
    seats: np.ndarray,
    histories: list[list[int]],
    worlds: int,
    rng: np.random.Generator,
    bf16: bool,
    weights: np.ndarray,
    rival: MaskedPolicy | None = None,
    rules: Rules | None = None,
) -> dict[str, np.ndarray]:
    """The shard rows of the decisions ``rows`` picks out of the arrays: each decision's hand record
    (``states``, the true deal), what the seat to move (``seats``) observes, the network's
    probabilities there and the hand's actions since its deal (``histories``, for the luck). Its
    options (:func:`choose_options`) are played out ``worlds`` times each from the true deal,
    restocked, the network moving for both seats (or ``rival`` for the other seat), under the
    table's ``rules`` (default: the standard rules), which the luck follows too."""
    rules = Rules() if rules is None else rules
    states, obs, mask, probs, seats = (x[rows] for x in (states, obs, mask, probs, seats))
    histories = [histories[r] for r in rows.tolist()]
    n = len(states)
    moves = probs.argmax(1)
    options = choose_options(probs, mask, rng)
    valid = options >= 0
    # Slot (row r, option o, world w) at index (r * OPTION_SLOTS + o) * worlds + w; every
    # option of a row meets the same stock orders, so their differences carry less noise.
    deals = restocked(states, worlds, rng).reshape(n, 1, worlds, -1)
    records = np.broadcast_to(deals, (n, OPTION_SLOTS, worlds, deals.shape[-1]))
    records = records.reshape(-1, deals.shape[-1])
    first = np.repeat(np.where(valid, options, moves[:, None]).reshape(-1), worlds)
    slot_seats = np.repeat(seats, OPTION_SLOTS * worlds)
    keep = np.repeat(valid.reshape(-1), worlds)
    points = np.full(len(first), np.nan)
    luck = np.full(len(first), np.nan)
    points[keep], played = play_out(
        policy,
        records[keep],
        first[keep],
        slot_seats[keep],
        rules,
        bf16,
        int(rng.integers(1 << 30)),
        rival,
    )
    owners = np.repeat(np.arange(n), OPTION_SLOTS * worlds)[keep]
    prefixes = [histories[r] for r in owners.tolist()]
    luck[keep] = seat_luck(records[keep], prefixes, played, slot_seats[keep], rules, weights)
    return {
        "obs": obs.astype(np.uint8),
        "mask": mask.astype(bool),
        "action": moves.astype(np.int16),
        "options": options.astype(np.int16),
        "q": points.reshape(n, OPTION_SLOTS, worlds).mean(2).astype(np.float32),
        "q_luck": (points - luck).reshape(n, OPTION_SLOTS, worlds).mean(2).astype(np.float32),
    }


class ShardWriter:
    """Labelled decisions gathered into shard files ``shard_{seed}_{k:04d}.npz`` under ``out``, one
    each time :data:`SHARD_ROWS` are held; ``labelled`` counts every row added."""

    def __init__(self, out: Path, seed: int) -> None:
        self.out, self.seed = out, seed
        self.kept: dict[str, list[np.ndarray]] = {k: [] for k in SHARD_KEYS}
        self.shards = self.labelled = 0

    def add(self, rows: dict[str, np.ndarray]) -> None:
        """Keep a block of rows (one array per :data:`SHARD_KEYS` name); write a shard when full."""
        for k, block in rows.items():
            self.kept[k].append(block)
        self.labelled += len(rows["obs"])
        if sum(len(a) for a in self.kept["obs"]) >= SHARD_ROWS:
            self.flush()

    def flush(self) -> None:
        """Write the rows held, if any, as the next shard."""
        if self.kept["obs"]:
            arrays = {k: np.concatenate(v) for k, v in self.kept.items()}
            np.savez(self.out / f"shard_{self.seed}_{self.shards:04d}.npz", **arrays)  # type: ignore[arg-type]
            for v in self.kept.values():
                v.clear()
            self.shards += 1


def record(
    out: Path,
    checkpoint: str = str(SHIPPED_CHECKPOINT),
    seconds: float = 600.0,
    games: int = 256,
    worlds: int = 8,
    seed: int = 0,
    bf16: bool = True,
    decisions: int | None = None,
    rules: Rules | None = None,
) -> int:
    """Let the network play itself for ``seconds`` (or until ``decisions`` are labelled) and save
    its labelled decisions (observation, mask, its move, the options and their mean points over
    ``worlds`` restocked copies of the true deal) in shards under ``out``; the games, play-outs and
    luck under ``rules`` (default: the standard rules). Returns the number of decisions labelled."""
    if worlds < 1 or games < 1:
        raise UsageError(f"worlds and games must be >= 1, got {worlds} and {games}")
    out.mkdir(parents=True, exist_ok=True)
    policy = read_checkpoint(checkpoint).policy.eval()
    rng = np.random.default_rng(seed)
    venv = VectorGinRummy(games, rules=rules, seed=seed)
    obs, mask, player = venv.reset()
    writer = ShardWriter(out, seed)
    history: list[list[int]] = [[] for _ in range(games)]  # each slot's actions since its deal
    weights = load_value().flat
    began = time.perf_counter()
    while time.perf_counter() - began < seconds and (decisions is None or writer.labelled < decisions):
        probs = network_probs(policy, obs, mask, bf16)
        moves = probs.argmax(1)
        unsure = probs.max(1) < 0.98
        pick = (rng.random(games) < np.where(unsure, *LABEL_SHARE)) & (mask.sum(1) >= 2)
        rows = np.flatnonzero(pick)
        if rows.size:
            writer.add(
                label(
                    policy,
                    rows,
                    venv.batch.state,
                    obs,
                    mask,
                    probs,
                    player,
                    history,
                    worlds,
                    rng,
                    bf16,
                    weights,
                    rules=rules,
                )
            )
        for slot, move in enumerate(moves.tolist()):
            history[slot].append(move)
        obs, mask, player, _, term, trunc = venv.step(moves)
        for slot in np.flatnonzero(term | trunc).tolist():
            history[slot] = []  # the slot was dealt a new hand
    writer.flush()
    return writer.labelled


def record_against(
    out: Path,
    opponent: str,
    checkpoint: str = str(SHIPPED_CHECKPOINT),
    seconds: float = 600.0,
    worlds: int = 4,
    seed: int = 0,
    bf16: bool = True,
    decisions: int | None = None,
    stand_in: str | None = None,
    rules: Rules | None = None,
) -> int:
    """Let the network play ``opponent`` (an agent spec: ``master``) in real games, one hand each,
    its seat drawn at random, for ``seconds`` (or until ``decisions`` are labelled), and save its
    decisions (:data:`AGAINST_SHARE` of them) labelled as :func:`record` labels them: the options
    played out in the true deal, the network moving for both seats. The positions, and given the
    observation the hidden cards, are then those of games against ``opponent``, whose moves they
    reflect; only the continuation after the option is the network's, or with ``stand_in`` (a
    policy checkpoint, e.g. a clone of ``opponent``) that network's in the opponent's seat, so that
    the values are those of the options against a fast stand-in for ``opponent`` rather than against
    the network itself. The games, the play-outs and the luck follow ``rules`` (default: the
    standard rules), which ``opponent`` is given too. Returns the number of decisions labelled."""
    if worlds < 1:
        raise UsageError(f"worlds must be >= 1, got {worlds}")
    policy = read_checkpoint(checkpoint).policy.eval()
    stand_in_policy = None if stand_in is None else read_checkpoint(stand_in).policy.eval()
    network = agents.make(f"checkpoint:{checkpoint}", rules=rules)
    rival = agents.make(opponent, rules=rules)  # an unknown spec is refused before anything is written
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    weights = load_value().flat
    env = gin_rummy_v0.raw_env(rules=Rules() if rules is None else rules)
    players = [network, rival]
    pending: dict[str, list[np.ndarray]] = {k: [] for k in ("state", "obs", "mask", "seat")}
    histories: list[list[int]] = []
    writer = ShardWriter(out, seed)
    hands = 0
    began = time.perf_counter()

    def keep(seat: int, obs: Observation, action: int) -> None:
        if players[seat] is not network or obs["action_mask"].sum() < 2:
            return
        # The recorder's own env: the true deal goes to the targets only; agents saw observe().
        hand = env.hand
        pending["state"].append(hand.record[0].copy())
        pending["obs"].append(np.asarray(obs["observation"]))
        pending["mask"].append(np.asarray(obs["action_mask"]))
        pending["seat"].append(np.array(seat))
        histories.append([a for _, a in hand.history])

    def label_pending() -> None:
        if not histories:
            return
        arrays = {k: np.stack(v) for k, v in pending.items()}
        probs = network_probs(policy, arrays["obs"], arrays["mask"], bf16)
        unsure = probs.max(1) < 0.98
        rows = np.flatnonzero(rng.random(len(probs)) < np.where(unsure, *AGAINST_SHARE))
        if rows.size:
            state, obs, mask, seat = (arrays[k] for k in ("state", "obs", "mask", "seat"))
            writer.add(
                label(
                    policy,
                    rows,
                    state,
                    obs,
                    mask,
                    probs,
                    seat,
                    histories,
                    worlds,
                    rng,
                    bf16,
                    weights,
                    stand_in_policy,
                    rules,
                )
            )
        for column in pending.values():
            column.clear()
        histories.clear()

    while time.perf_counter() - began < seconds and (decisions is None or writer.labelled < decisions):
        players[:] = [network, rival] if rng.random() < 0.5 else [rival, network]
        play_game(env, players, seed=AGAINST_SEED + seed, deal=hands, on_decision=keep)
        hands += 1
        if len(histories) >= AGAINST_BATCH:
            label_pending()
    label_pending()
    writer.flush()
    return writer.labelled


def load(folder: Path) -> dict[str, np.ndarray]:
    """Every shard of ``folder`` (recording order), checked, with each row's shard index. ``q_luck``
    (the values less the luck of the stock) reads as ``q`` in a shard recorded without it, and
    ``has_luck`` says which rows have their own."""
    files = shard_files(folder)
    parts: dict[str, list[np.ndarray]] = {
        k: [] for k in ("obs", "mask", "action", "options", "q", "q_luck", "has_luck", "shard")
    }
    for k, path in enumerate(files):
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in ("obs", "mask", "action", "options", "q")}
            luck = "q_luck" in data.files
            arrays["q_luck"] = data["q_luck"] if luck else arrays["q"]
        n = len(arrays["obs"])
        shapes = {"obs": (n, OBS_SIZE), "mask": (n, NUM_ACTIONS), "action": (n,)}
        shapes |= {"options": (n, OPTION_SLOTS), "q": (n, OPTION_SLOTS), "q_luck": (n, OPTION_SLOTS)}
        wrong = [name for name, shape in shapes.items() if arrays[name].shape != shape]
        if wrong:
            raise ValueError(f"{path}: {', '.join(wrong)} of unexpected shape (want {shapes})")
        options = arrays["options"].astype(np.int64)
        valid = options >= 0
        legal = np.take_along_axis(arrays["mask"], np.maximum(options, 0), axis=1)
        if not (legal | ~valid).all() or not (options[:, 0] == arrays["action"]).all():
            raise ValueError(f"{path}: an option is illegal under its mask, or option 0 is not the move")
        if np.isnan(arrays["q"][valid]).any() or np.isnan(arrays["q_luck"][valid]).any():
            raise ValueError(f"{path}: an option has no value")
        for name, arr in arrays.items():
            parts[name].append(arr)
        parts["has_luck"].append(np.full(n, luck))
        parts["shard"].append(np.full(n, k))
    return {k: np.concatenate(v) for k, v in parts.items()}


@dataclass
class TrainArgs(FitArgs):
    """Settings of a training run on recorded decisions (and :class:`FitArgs`' minibatch ones)."""

    init: str = str(SHIPPED_CHECKPOINT)
    """The network to improve (its policy is ``pi0``; its opponent-hand head is kept, refitted)."""
    beta: float = 2.0
    """Points per nat: the weight of the KL to ``pi0`` against the values."""
    luck: bool = True
    """Learn and measure from the values less the luck of the stock (``q_luck``, where the shards
    have it): unbiased as the raw values are, with less variance."""
    # A fine-tuning step from a trained network: fewer passes, a smaller rate, both cores.
    epochs: int = 2
    learning_rate: float = 3e-4
    threads: int = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.beta > 0:
            raise UsageError(f"beta must be a number of points per nat > 0, not {self.beta}")


def train(folders: list[Path], out: Path, args: TrainArgs) -> dict[str, float]:
    """One policy improvement step from the decisions in ``folders``, saved as a policy checkpoint
    at ``out``; returns the figures (``heldout_gain``: points per labelled decision, see the module
    docstring, with its 95% half-width ``heldout_gain_ci``)."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    datas, held_parts = [], []
    for folder in folders:
        data = load(folder)
        datas.append(data)
        held_parts.append(last_shards(data["shard"], args.holdout))
    d = {k: np.concatenate([x[k] for x in datas]) for k in datas[0]}
    test = np.concatenate(held_parts)
    init = read_checkpoint(args.init)
    policy = init.policy
    policy.train()
    obs = d["obs"]

    def x(rows: torch.Tensor) -> torch.Tensor:
        return policy.prepare(obs[rows.numpy()].astype(np.float32))

    m = torch.from_numpy(d["mask"])
    options = torch.from_numpy(d["options"].astype(np.int64))
    valid = options >= 0
    slots = options.clamp(min=0)
    q = torch.from_numpy(np.nan_to_num(d["q_luck" if args.luck else "q"])).double()
    everything = torch.arange(len(obs))
    with torch.no_grad():
        logp0 = torch.cat([policy(x(c), m[c]).log_softmax(1) for c in everything.split(8192)])
    p0 = logp0.exp().double()
    # The baseline: pi0's mean value over the options (mass off them keeps its place).
    on = p0.gather(1, slots) * valid
    base = (on * q).sum(1) / on.sum(1).clamp(min=1e-12)
    adv = torch.where(valid, q - base[:, None], 0.0).float()
    aux = None
    if init.training is not None and "aux" in init.training:
        aux = check_state(aux_head(policy), init.training["aux"], "aux", args.init)
        head_targets = starting_head_targets(args.init, obs)

    def loss_of(rows: torch.Tensor) -> torch.Tensor:
        logp = policy(x(rows), m[rows]).log_softmax(1)
        p = logp.exp()
        improve = (p.gather(1, slots[rows]) * adv[rows]).sum(1) / args.beta
        # Illegal actions (-inf log-probabilities, zero mass) are zeroed before any product, so
        # that no nan reaches the gradient.
        legal = m[rows] > 0
        kl = (p * (torch.where(legal, logp, 0.0) - torch.where(legal, logp0[rows], 0.0))).sum(1)
        return (kl - improve).mean()

    train_idx = torch.from_numpy(np.flatnonzero(~test))
    test_idx = torch.from_numpy(np.flatnonzero(test))
    began = time.perf_counter()
    figures: dict[str, float] = {"decisions": float(len(obs)), "heldout_decisions": float(len(test_idx))}
    epochs = minibatch_epochs(
        policy, train_idx, loss_of, args.epochs, args.batch_size, args.learning_rate, args.seed
    )
    for epoch in epochs:
        figures |= measure(policy, x, m, options, q, test_idx if len(test_idx) else train_idx)
        print(f"epoch {epoch + 1}: " + ", ".join(f"{k} {v:.4g}" for k, v in figures.items()), flush=True)
    figures["seconds"] = time.perf_counter() - began
    training = None
    if aux is not None:
        head, figures["aux_heldout_gap"] = refit_aux_head(policy, aux, head_targets, x, train_idx, test_idx)
        training = {"aux": head}
    config = {
        "algorithm": "policy improvement from rollouts in the true deal",
        "data": ", ".join(map(str, folders)),
        **dataclasses.asdict(args),
        **figures,
    }
    save_checkpoint(policy.eval(), out, config=config, training=training)
    return figures


def measure(
    policy: MaskedPolicy,
    inputs: Callable[[torch.Tensor], torch.Tensor],
    mask: torch.Tensor,
    options: torch.Tensor,
    q: torch.Tensor,
    rows: torch.Tensor,
) -> dict[str, float]:
    """What the policy's argmax gains over the recorded move on ``rows``, by the recorded values:
    ``heldout_gain`` (points per decision, 0 where the move is kept) with its 95% half-width,
    ``changed`` (share of moves changed) and ``unscored`` (share changed to an unscored action,
    counted as no gain)."""
    policy.eval()
    with torch.no_grad():
        new = torch.cat([policy(inputs(c), mask[c]).argmax(1) for c in rows.split(8192)])
    policy.train()
    opts, vals = options[rows], q[rows]
    hit = opts == new[:, None]
    scored = hit.any(1)
    gain = torch.where(scored, (vals * hit).sum(1) - vals[:, 0], 0.0).numpy()
    changed = new != opts[:, 0]
    half = 1.96 * gain.std(ddof=1) / math.sqrt(len(gain)) if len(gain) > 1 else math.nan
    return {
        "heldout_gain": float(gain.mean()),
        "heldout_gain_ci": float(half),
        "changed": float(changed.float().mean()),
        "unscored": float((changed & ~scored).float().mean()),
    }


def main(argv: list[str] | None = None) -> int:
    """``record`` or ``train`` (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m research.deal_rollouts", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser(
        "record", help="label the network's self-play decisions by rollouts in the true deal"
    )
    rec.add_argument("--out", type=Path, required=True, help="folder for the shards")
    rec.add_argument("--checkpoint", default=str(SHIPPED_CHECKPOINT), help="the network that plays")
    rec.add_argument("--seconds", type=float, default=600.0, help="how long to record (default 600)")
    rec.add_argument("--games", type=int, default=256, help="hands in lockstep")
    rec.add_argument("--worlds", type=int, default=4, help="stock orders per labelled decision")
    rec.add_argument("--seed", type=int, default=0, help="seeds the games and the play-outs (default 0)")
    rec.add_argument("--fp32", action="store_true", help="float32 inference instead of bfloat16")
    rec.add_argument(
        "--opponent",
        help="play real games against this agent (e.g. master) instead of self-play (--games unused)",
    )
    rec.add_argument(
        "--stand-in",
        help="with --opponent: a policy checkpoint that plays the opponent's seat in the play-outs "
        "(default: the network plays both seats)",
    )
    rec.add_argument(
        "--rules",
        default="standard",
        help="the table's rules preset, which the games, the play-outs and the luck follow "
        f"({', '.join(PRESETS)}; default standard)",
    )
    fit = sub.add_parser("train", help="one policy improvement step from recorded decisions")
    fit.add_argument("data", type=Path, nargs="+", help="folders of shards (pooled)")
    fit.add_argument("--out", type=Path, required=True, help="where to save the improved policy checkpoint")
    defaults = TrainArgs()
    helps = {
        "init": "the network to improve, the KL's pi0",
        "beta": "points per nat: the weight of the KL to pi0 against the values",
        "epochs": "passes over the training decisions",
        "batch_size": "decisions per optimizer step",
        "learning_rate": "Adam's learning rate, decayed linearly to 0",
        "holdout": "share of each folder's last shards kept out of training, to measure on",
        "seed": "seeds the shuffling",
        "threads": "torch threads",
    }
    for name, text in helps.items():
        value = getattr(defaults, name)
        fit.add_argument(
            "--" + name.replace("_", "-"), type=type(value), default=value, help=f"{text} (default {value})"
        )
    fit.add_argument("--no-luck", dest="luck", action="store_false", help="learn from the raw values")
    ns = parser.parse_args(argv)
    torch.set_num_threads(1)
    try:
        if ns.command == "record":
            rules = preset(ns.rules)  # an unknown preset is refused before anything is written
            if ns.opponent is None:
                if ns.stand_in is not None:
                    raise UsageError("--stand-in plays the opponent's seat: it needs --opponent")
                n = record(
                    ns.out, ns.checkpoint, ns.seconds, ns.games, ns.worlds, ns.seed, not ns.fp32, rules=rules
                )
            else:
                n = record_against(
                    ns.out,
                    ns.opponent,
                    ns.checkpoint,
                    ns.seconds,
                    ns.worlds,
                    ns.seed,
                    not ns.fp32,
                    stand_in=ns.stand_in,
                    rules=rules,
                )
            print(f"labelled {n} decisions under {ns.out}")
        else:
            settings = {f.name: getattr(ns, f.name) for f in dataclasses.fields(TrainArgs)}
            figures = train(ns.data, ns.out, TrainArgs(**settings))
            print(", ".join(f"{k} {v:.4g}" for k, v in figures.items()))
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
