"""Behaviour cloning: a policy network trained to copy a computer level's decisions, in one file.

PPO from scratch, or kickstarted from the compiled ``greedy`` policy, reaches greedy's level and
stalls there (docs/reports/2026-12-01-ppo-recipe-and-no-teacher.md); the stronger levels are
Python agents far too slow to teach online at every one of PPO's decisions. So their decisions are
recorded once and cloned:

1. ``python -m research.bc record --level expert --seconds 900 --out DIR``: the level plays
   itself on games ``start, start + 1, ...`` of master seed :data:`RECORD_SEED`, dealt and seeded by
   the arena (:func:`ginenv.agents.arena.play_game`) as the harness deals them; every decision of
   both seats is stored as the seat's observation (what the level saw), its legal-action mask and
   the action, in ``.npz`` shards of :data:`SHARD_HANDS` hands. A level that simulates its options
   (master, :attr:`ginenv.agents.levels.master.MasterAgent.option_values`) also leaves each
   option's mean points, ``values`` and ``value_actions`` (:data:`VALUE_SLOTS` per decision, NaN
   and -1 where there is none): its whole ranking, for soft targets.
   The same start and number of hands give the same data.
2. ``python -m research.bc train DIR --out neural_bc.pt``: a
   :class:`ginenv.agents.neural.MaskedPolicy` (the PPO trainer's network: features input, card head)
   minimises the cross-entropy of the level's action under the masked policy; a held-out share of the
   hands reports the accuracy. The result is a policy checkpoint (it plays as
   ``checkpoint:PATH``) whose ``config`` records the data and settings. When ``--init`` carries
   the opponent-hand head (``training['aux']``, which ``master_net`` and ``bench_belief`` read),
   the result carries one too, refitted by :func:`refit_aux_head` to the fine-tuned trunk.
   With ``--value-temperature T`` the targets are soft where the level scored two or more options
   (:func:`value_targets`): the starting network's policy (``--init``, frozen) tilted by
   ``exp(value / T)`` over the scored options, ``T`` in points per nat. That is one step of
   policy improvement with the level's values as the critic: the clone keeps what the network
   already plays well and moves only where the level's search disagrees by more than ``T`` points
   a nat. Decisions with no scored option learn the recorded action (``--unscored label``) or keep
   the starting network's policy (``--unscored prior``). ``--sharpen-values`` learns the soft
   target's most likely option as a label instead (``master_prior``'s move at that temperature).
3. PPO continues from it (``init`` and ``kickstart_teacher`` of :mod:`ginenv.experiments.train.ppo`).

Shards hold plain arrays only and are read with ``allow_pickle=False``.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from ginenv.agents.arena import play_game
from ginenv.agents.base import Agent, Observation
from ginenv.agents.neural import (
    MaskedPolicy,
    check_state,
    opponent_hand_predictor,
    read_checkpoint,
    save_checkpoint,
)
from ginenv.experiments.errors import UsageError
from ginenv.experiments.train.actor_critic import unseen_card_loss
from ginenv.experiments.train.training_checkpoints import check_same_network
from torch import nn

from ginenv import agents, gin_rummy_v0
from ginenv.actions import NUM_ACTIONS
from ginenv.cards import NUM_CARDS
from ginenv.observation import OBS_SIZE, plane_slice

#: Hands per shard file.
SHARD_HANDS = 200

#: Options per decision whose simulated values a shard keeps (master scores at most 6: two knocks
#: and four plain discards).
VALUE_SLOTS = 8

#: Master seed of the recorded hands: not the harness's default seed 0, so that no evaluation on
#: the standard deals replays a hand the network was trained on.
RECORD_SEED = 0xBC

#: Where an observation marks the cards this seat has not seen (the opponent-hand head's targets).
UNSEEN = plane_slice("unseen")


class Labelled(Agent):
    """DAgger's player: ``teacher`` is asked at every decision and its answer recorded, while the
    move played is ``driver``'s with probability ``share`` (else the teacher's).

    The positions are then those the driver (the clone being improved) reaches itself, so the
    clone learns the teacher's answer where its own errors lead, not only along the teacher's
    games. Both players see every decision of the seat, so a teacher that follows the hand (master's
    opponent model) sees the whole history it would have seen as the player.
    """

    def __init__(
        self,
        teacher: Agent,
        driver: Agent,
        share: float,
        seed: int,
        seat: int,
        keep: Callable[[int, Observation, int], None],
    ) -> None:
        """``keep(seat, observation, teacher's action)`` is called at every decision, as the arena's
        ``on_decision`` hook is (both seats may share one)."""
        super().__init__(seed)
        self.teacher, self.driver, self.share = teacher, driver, share
        self.seat, self.keep = seat, keep

    def reset(self, seed: int | None = None) -> None:
        """Reset both players (the same seed) and the choice of who moves."""
        super().reset(seed)
        self.teacher.reset(seed)
        self.driver.reset(seed)

    def act(self, observation: Observation) -> int:
        """The teacher's label is kept; the driver's move (or, at ``1 - share``, the teacher's) is played."""
        label = self.teacher.act(observation)
        self.keep(self.seat, observation, label)
        if self.share >= 1.0 or self.rng.random() < self.share:
            return self.driver.act(observation)
        return label


def record(
    level: str,
    out: Path,
    start: int = 100_000,
    hands: int | None = None,
    seconds: float | None = None,
    driver: str | None = None,
    share: float = 1.0,
) -> int:
    """Play ``level`` against itself from hand ``start`` on, for ``hands`` hands or until ``seconds``
    have passed (whichever is given; both: the first reached), saving its decisions in shards under
    ``out``. Returns the number of hands played.

    With a ``driver`` (an agent spec, e.g. ``checkpoint:clone.pt``), the hands are DAgger's: both
    seats are :class:`Labelled`, the driver moving at a ``share`` of the decisions, and the shards
    hold ``level``'s answer at every position reached."""
    if hands is None and seconds is None:
        raise UsageError("give hands or seconds (or both)")
    if not 0.0 <= share <= 1.0:
        raise UsageError(f"share must lie in [0, 1], not {share}")
    out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    # A level that simulates its options (master) leaves their values in ``option_values``; the
    # shards keep them beside the choice, for soft targets (NaN and -1 where there is none).
    value_rows: list[np.ndarray] = []
    value_ids: list[np.ndarray] = []
    played = shard = 0
    players: list[Agent] = []  # the hand's two seats, which keep() asks for their option values

    def flush() -> None:
        nonlocal shard
        if actions:
            np.savez(
                out / f"shard_{start}_{shard:03d}.npz",
                obs=np.array(observations),
                mask=np.array(masks),
                action=np.array(actions, dtype=np.int16),
                values=np.array(value_rows, dtype=np.float32).reshape(-1, VALUE_SLOTS),
                value_actions=np.array(value_ids, dtype=np.int16).reshape(-1, VALUE_SLOTS),
            )
            for done in (observations, masks, actions, value_rows, value_ids):
                done.clear()
            shard += 1

    env = gin_rummy_v0.raw_env()

    def keep(seat: int, obs: Observation, action: int) -> None:
        # Observations are small non-negative integers in hand mode (cards left: at most 31).
        observations.append(obs["observation"].astype(np.uint8))
        masks.append(obs["action_mask"].astype(bool))
        actions.append(action)
        player = players[seat]
        scored: dict[int, float] = getattr(
            player.teacher if isinstance(player, Labelled) else player, "option_values", {}
        )
        if len(scored) > VALUE_SLOTS:
            raise RuntimeError(f"{level} scored {len(scored)} options, more than VALUE_SLOTS={VALUE_SLOTS}")
        row = np.full(VALUE_SLOTS, np.nan, dtype=np.float32)
        ids = np.full(VALUE_SLOTS, -1, dtype=np.int16)
        row[: len(scored)] = list(scored.values())
        ids[: len(scored)] = list(scored)
        value_rows.append(row)
        value_ids.append(ids)

    while (hands is None or played < hands) and (seconds is None or time.perf_counter() - began < seconds):
        # Hand h is game h of RECORD_SEED, dealt and seeded by the arena as the harness does.
        h = start + played
        if driver is None:
            players = [agents.make(level), agents.make(level)]
            hook: Callable[[int, Observation, int], None] | None = keep
        else:  # DAgger: the Labelled seats keep the level's answers themselves
            players = [
                Labelled(agents.make(level), agents.make(driver), share, h * 2 + i, i, keep) for i in range(2)
            ]
            hook = None
        play_game(env, players, seed=RECORD_SEED, deal=h, names=[driver or level] * 2, on_decision=hook)
        played += 1
        if played % SHARD_HANDS == 0:
            flush()
    flush()
    return played


def shard_files(folder: Path) -> list[Path]:
    """The shard files of ``folder`` in recording order; none is an error."""
    files = sorted(folder.glob("shard_*.npz"))
    if not files:
        raise FileNotFoundError(f"no shard_*.npz files in {folder}")
    return files


def load_values(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """The simulated option values of every shard of ``folder``, row for row with :func:`load_shards`:
    ``values`` (float32, NaN-padded) and ``value_actions`` (int64, -1-padded), ``VALUE_SLOTS`` a row;
    a shard recorded without them (a level that does not simulate, or an older recording) reads as
    no scored option."""
    parts = []
    for path in shard_files(folder):
        with np.load(path, allow_pickle=False) as data:
            rows = len(data["action"])
            if "values" in data.files:
                values, ids = data["values"].astype(np.float32), data["value_actions"].astype(np.int64)
            else:
                values = np.full((rows, VALUE_SLOTS), np.nan, dtype=np.float32)
                ids = np.full((rows, VALUE_SLOTS), -1, dtype=np.int64)
        if values.shape != (rows, VALUE_SLOTS) or ids.shape != (rows, VALUE_SLOTS):
            raise ValueError(f"{path}: values of unexpected shapes {values.shape}, {ids.shape}")
        parts.append((values, ids))
    values, ids = (np.concatenate(p) for p in zip(*parts, strict=True))
    return values, ids


def last_shards(shard: np.ndarray, share: float) -> np.ndarray:
    """Which rows lie in their folder's last ``share`` of shards (at least one shard when the folder
    has two or more, none when it has one), from each row's shard index: the held-out rows."""
    shards = int(shard.max()) + 1
    held = max(1, math.ceil(share * shards)) if shards > 1 else 0
    return shard >= shards - held


def value_targets(
    mask: np.ndarray,
    action: np.ndarray,
    values: np.ndarray,
    ids: np.ndarray,
    temperature: float,
    prior: np.ndarray | None = None,
    unscored: str = "label",
    sharpen: bool = False,
) -> np.ndarray:
    """Soft targets (rows of probabilities over the actions) from the recorded option values.

    ``prior``: the starting network's log-probabilities (``-inf`` where illegal), or None for a
    uniform prior over the scored options. Where a row has two or more scored options ``S``, the
    target keeps the prior's mass off ``S`` and shares the prior's mass on ``S`` in proportion to
    ``prior(a) * exp(value(a) / temperature)``; its most likely option in ``S`` is the one with the
    best ``value + temperature * log prior``. Other rows: the recorded action (``unscored="label"``)
    or the prior itself (``"prior"``, which needs one). ``sharpen``: each scored row's target is
    one-hot at that most likely option instead (the search's move, learned as a label)."""
    if not temperature > 0:
        raise ValueError(f"the value temperature must be a number of points > 0, not {temperature}")
    if unscored not in ("label", "prior"):
        raise ValueError(f"unscored must be 'label' or 'prior', not {unscored!r}")
    if unscored == "prior" and prior is None:
        raise ValueError("unscored 'prior' keeps the starting network's policy: give a prior")
    n = len(action)
    target = np.zeros((n, NUM_ACTIONS), dtype=np.float32)
    valid = ids >= 0
    scored = valid.sum(axis=1) >= 2
    if prior is not None:
        p = np.exp(prior.astype(np.float64)) * mask
        p /= p.sum(axis=1, keepdims=True)
        if unscored == "prior":
            target[~scored] = p[~scored]
        target[scored] = p[scored]
    if unscored == "label":
        hard = np.flatnonzero(~scored)
        target[hard, action[hard]] = 1.0
    rows = np.flatnonzero(scored)
    # Padding slots point at the row's first option (scored rows have one), with its share, so
    # that one scatter writes every slot.
    ok = valid[rows]
    slot_ids = np.where(ok, ids[rows], ids[rows, :1])
    z = np.where(ok, values[rows].astype(np.float64) / temperature, -np.inf)
    if prior is None:
        mass = np.ones(len(rows))
    else:
        on_options = np.take_along_axis(p[rows], slot_ids, axis=1)
        z = z + np.log(np.maximum(on_options, 1e-300))
        mass = np.where(ok, on_options, 0.0).sum(axis=1)
    if sharpen:
        target[rows] = 0.0
        target[rows, np.take_along_axis(slot_ids, z.argmax(axis=1)[:, None], axis=1)[:, 0]] = 1.0
        return target
    share = np.exp(z - z.max(axis=1, keepdims=True))
    share *= mass[:, None] / share.sum(axis=1, keepdims=True)
    sub = target[rows]
    np.put_along_axis(sub, slot_ids, np.where(ok, share, share[:, :1]).astype(np.float32), axis=1)
    target[rows] = sub
    return target


def load_shards(folder: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every shard of ``folder``: observations (uint8, as stored), masks, actions, and each row's
    shard index."""
    parts = []
    for k, path in enumerate(shard_files(folder)):
        with np.load(path, allow_pickle=False) as data:
            obs, mask, action = data["obs"], data["mask"], data["action"].astype(np.int64)
        if obs.ndim != 2 or obs.shape[1] != OBS_SIZE or mask.shape != (len(obs), NUM_ACTIONS):
            raise ValueError(f"{path}: arrays of unexpected shapes {obs.shape}, {mask.shape}")
        if not bool(mask[np.arange(len(action)), action].all()):
            raise ValueError(f"{path}: a recorded action is not legal under its mask")
        parts.append((obs, mask, action, np.full(len(action), k)))
    return tuple(np.concatenate(p) for p in zip(*parts, strict=True))  # type: ignore[return-value]


@dataclass
class FitArgs:
    """The minibatch settings every fine-tuning script here shares (:func:`minibatch_epochs`)."""

    epochs: int = 6
    """Passes over the training decisions."""
    batch_size: int = 1024
    """Decisions per optimizer step."""
    learning_rate: float = 1e-3
    """Adam's learning rate, decayed linearly to 0."""
    holdout: float = 0.05
    """Share of each data folder's shards (its last ones) kept out of training, to measure on."""
    seed: int = 1
    """Seeds the initial weights and the shuffling."""
    threads: int = 1
    """torch threads."""

    def __post_init__(self) -> None:
        # Refused here, before any data is read: 0 epochs would divide by zero in the schedule.
        if self.epochs < 1 or self.batch_size < 1 or self.threads < 1:
            raise UsageError(
                f"epochs, batch_size and threads must be >= 1, "
                f"got {self.epochs}, {self.batch_size} and {self.threads}"
            )
        if not self.learning_rate > 0:
            raise UsageError(f"learning_rate must be > 0, not {self.learning_rate}")
        if not 0 <= self.holdout < 1:
            raise UsageError(f"holdout must lie in [0, 1), not {self.holdout}")


@dataclass
class BCArgs(FitArgs):
    """Settings of a behaviour-cloning run."""

    hidden: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layers (the PPO trainer's default, so PPO can continue from the result)."""
    card_hidden: int = 64
    """Width of the card head."""
    inputs: str = "features"
    """The network input (:mod:`ginenv.features`)."""
    init: str | None = None
    """A policy checkpoint to start from (fine-tuning, e.g. ``neural`` on a stronger level's
    decisions; its shape must match ``hidden``, ``card_hidden`` and ``inputs``), or None."""
    value_temperature: float | None = None
    """Points per nat of the soft targets from the recorded option values (:func:`value_targets`,
    with ``init`` as the prior when given), or None for the recorded actions alone."""
    unscored: str = "label"
    """Target of the decisions with no scored option: ``label`` (the recorded action) or ``prior``
    (the ``init`` network's own policy)."""
    sharpen_values: bool = False
    """With ``value_temperature``: learn each scored decision's most likely option under the
    soft target as a label (``master_prior``'s move at the same temperature) instead of the soft
    target itself."""


def train_bc(folder: Path | list[Path], out: Path, args: BCArgs) -> dict[str, float]:
    """Clone the decisions in ``folder`` (or in several folders together, e.g. self-play and DAgger
    rounds) into a policy checkpoint at ``out``; returns the figures. The held-out share is taken
    from each folder's last shards, so the accuracy reads every source."""
    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    folders = folder if isinstance(folder, list) else [folder]
    if args.value_temperature is not None and args.unscored == "prior" and args.init is None:
        raise UsageError("unscored 'prior' keeps the starting network's policy: give init too")
    parts, held_out = [], []
    for source in folders:
        rows = load_shards(source)
        parts.append(rows[:3] + (load_values(source) if args.value_temperature is not None else ()))
        held_out.append(last_shards(rows[3], args.holdout))
    obs, mask, action, *scored = (np.concatenate(p) for p in zip(*parts, strict=True))
    test = np.concatenate(held_out)
    held = int(test.any())
    policy = MaskedPolicy(None, args.hidden, NUM_ACTIONS, inputs=args.inputs, card_hidden=args.card_hidden)
    aux: dict[str, torch.Tensor] | None = None
    head_targets: torch.Tensor | None = None
    if args.init is not None:
        init = read_checkpoint(args.init)
        check_same_network(init.policy, policy, args.init)
        policy.load_state_dict(init.policy.state_dict())
        if init.training is not None and "aux" in init.training:
            aux = check_state(aux_head(policy), init.training["aux"], "aux", args.init)
            head_targets = starting_head_targets(args.init, obs)

    # Inputs are prepared batch by batch: millions of float32 feature rows would not fit in memory.
    def x(rows: torch.Tensor) -> torch.Tensor:
        return policy.prepare(obs[rows.numpy()].astype(np.float32))

    m = torch.from_numpy(mask)
    y = torch.from_numpy(action)
    # The soft targets (rows of probabilities) replace the recorded actions as what is learned; the
    # accuracy still reads the recorded action.
    soft: torch.Tensor | None = None
    if args.value_temperature is not None:
        prior = None
        if args.init is not None:
            with torch.no_grad():
                prior = torch.cat(
                    [policy(x(c), m[c]).log_softmax(1) for c in torch.arange(len(y)).split(8192)]
                ).numpy()
        soft = torch.from_numpy(
            value_targets(
                mask,
                action,
                scored[0],
                scored[1],
                args.value_temperature,
                prior,
                args.unscored,
                args.sharpen_values,
            )
        )

    def loss_of(logits: torch.Tensor, rows: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
        if soft is None:
            return nn.functional.cross_entropy(logits, y[rows], reduction=reduction)
        t = soft[rows]
        # Illegal actions have -inf logits and no target mass: they add nothing (not 0 * -inf).
        per_row = -torch.where(t > 0, t * logits.log_softmax(1), 0.0).sum(1)
        return per_row.mean() if reduction == "mean" else per_row.sum()

    train_idx = torch.from_numpy(np.flatnonzero(~test))
    test_idx = torch.from_numpy(np.flatnonzero(test))

    def accuracy(idx: torch.Tensor) -> tuple[float, float]:
        policy.eval()
        right, loss = 0, 0.0
        with torch.no_grad():
            for chunk in idx.split(8192):
                logits = policy(x(chunk), m[chunk])
                loss += loss_of(logits, chunk, "sum").item()
                right += int((logits.argmax(1) == y[chunk]).sum())
        policy.train()
        return right / max(len(idx), 1), loss / max(len(idx), 1)

    began = time.perf_counter()
    epochs = minibatch_epochs(
        policy,
        train_idx,
        lambda batch: loss_of(policy(x(batch), m[batch]), batch),
        args.epochs,
        args.batch_size,
        args.learning_rate,
        args.seed,
    )
    for epoch in epochs:
        acc, nll = accuracy(test_idx) if held else accuracy(train_idx)
        print(f"epoch {epoch + 1}: held-out accuracy {acc:.4f}, cross-entropy {nll:.4f}", flush=True)
    figures = {
        "decisions": float(len(y)),
        "train_decisions": float(len(train_idx)),
        "heldout_accuracy": acc,
        "heldout_cross_entropy": nll,
        "seconds": time.perf_counter() - began,
    }
    training = None
    if aux is not None and head_targets is not None:
        head, figures["aux_heldout_gap"] = refit_aux_head(policy, aux, head_targets, x, train_idx, test_idx)
        training = {"aux": head}
    data = ", ".join(str(f) for f in folders)
    config = {"algorithm": "behaviour cloning", "data": data, **dataclasses.asdict(args), **figures}
    save_checkpoint(policy.eval(), out, config=config, training=training)
    return figures


def starting_head_targets(init: str, obs: np.ndarray) -> torch.Tensor:
    """What the opponent-hand head of checkpoint ``init`` says at every observation row (through
    its own trunk, before fine-tuning moves it): :func:`refit_aux_head`'s targets, as float16 to
    spare memory."""
    predict = opponent_hand_predictor(init)
    chunks = [predict(obs[i : i + 8192].astype(np.float32)) for i in range(0, len(obs), 8192)]
    return torch.cat([torch.from_numpy(c).half() for c in chunks])


def minibatch_epochs(
    policy: nn.Module,
    rows: torch.Tensor,
    loss_of: Callable[[torch.Tensor], torch.Tensor],
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
) -> Iterator[int]:
    """Adam on ``loss_of(batch)`` over ``rows`` shuffled into minibatches each epoch, the learning
    rate decayed linearly to 0; yields each epoch's index once it is done, so the caller measures
    between epochs."""
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    steps = epochs * math.ceil(len(rows) / batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: 1.0 - k / steps)
    generator = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        order = rows[torch.randperm(len(rows), generator=generator)]
        for batch in order.split(batch_size):
            loss = loss_of(batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
        yield epoch


def aux_head(policy: MaskedPolicy, state: dict[str, torch.Tensor] | None = None) -> nn.Linear:
    """The opponent-hand head's layer for ``policy``'s last hidden layer (loaded from ``state``)."""
    head = nn.Linear(policy.hidden[-1], NUM_CARDS)
    if state is not None:
        head.load_state_dict(state)
    return head


def refit_aux_head(
    policy: MaskedPolicy,
    state: dict[str, torch.Tensor],
    targets: torch.Tensor,
    inputs: Callable[[torch.Tensor], torch.Tensor],
    train_idx: torch.Tensor,
    test_idx: torch.Tensor,
    epochs: int = 2,
    min_steps: int = 500,
) -> tuple[dict[str, torch.Tensor], float]:
    """The opponent-hand head refitted to a fine-tuned trunk: the head reads the policy's last
    hidden layer, which fine-tuning moved, and the shards hold no opponent hands to learn from, so
    the head (started from its old weights) learns to give at each decision the probabilities the
    old head gave through the old trunk (:func:`ginenv.agents.neural.opponent_hand_predictor`), which
    were calibrated. The trunk
    is frozen here: the policy is already trained. Returns the head's weights and its held-out gap:
    the mean cross-entropy over the unseen cards minus the targets' own entropy (0 when the new
    head reproduces the old one; on the training rows when none is held out)."""
    head = aux_head(policy, state)
    trunk = policy.net[:-1]
    optimizer = torch.optim.Adam(head.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(0)
    # At least ``min_steps`` Adam steps, so a small data set still moves the head.
    batches = max(1, math.ceil(len(train_idx) / 4096))
    for step in range(max(epochs * batches, min_steps)):
        if step % batches == 0:
            order = train_idx[torch.randperm(len(train_idx), generator=generator)].split(4096)
        batch = order[step % batches]
        x = inputs(batch)
        with torch.no_grad():
            feats = trunk(x)
        loss = unseen_card_loss(head(feats), targets[batch].float(), x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    gap, cards = 0.0, 0.0
    with torch.no_grad():
        for chunk in (test_idx if len(test_idx) else train_idx).split(8192):
            x = inputs(chunk)
            t = targets[chunk].float()
            unseen = (x[:, UNSEEN] > 0.5).float()
            excess = nn.functional.binary_cross_entropy_with_logits(
                head(trunk(x)), t, reduction="none"
            ) - nn.functional.binary_cross_entropy(t, t, reduction="none")
            gap += float((excess * unseen).sum())
            cards += float(unseen.sum())
    return {k: v.detach().clone() for k, v in head.state_dict().items()}, gap / max(cards, 1.0)


def main(argv: list[str] | None = None) -> int:
    """``record`` or ``train`` (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m research.bc", description="behaviour cloning")
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record a level's self-play decisions")
    rec.add_argument("--level", default="expert")
    rec.add_argument("--out", type=Path, required=True)
    rec.add_argument("--start", type=int, default=100_000)
    rec.add_argument("--hands", type=int)
    rec.add_argument("--seconds", type=float)
    rec.add_argument(
        "--driver", help="DAgger: an agent spec (e.g. checkpoint:clone.pt) that moves while --level labels"
    )
    rec.add_argument(
        "--share", type=float, default=1.0, help="DAgger: share of the decisions the driver plays"
    )
    fit = sub.add_parser("train", help="clone recorded decisions into a checkpoint")
    fit.add_argument("data", type=Path, nargs="+", help="folders of shards (their decisions are pooled)")
    fit.add_argument("--out", type=Path, required=True)
    fit.add_argument("--epochs", type=int, default=BCArgs.epochs)
    fit.add_argument("--seed", type=int, default=BCArgs.seed)
    fit.add_argument("--batch-size", type=int, default=BCArgs.batch_size)
    fit.add_argument("--learning-rate", type=float, default=BCArgs.learning_rate)
    fit.add_argument("--threads", type=int, default=BCArgs.threads)
    fit.add_argument(
        "--hidden", type=int, nargs="+", default=BCArgs().hidden, help="hidden layer widths (default 256 256)"
    )
    fit.add_argument("--card-hidden", type=int, default=BCArgs.card_hidden, help="width of the card head")
    fit.add_argument(
        "--init", help="a policy checkpoint to start from (fine-tuning), e.g. the shipped neural"
    )
    fit.add_argument(
        "--value-temperature",
        type=float,
        help="soft targets from the recorded option values, in points per nat (the --init network as prior)",
    )
    fit.add_argument(
        "--unscored",
        choices=["label", "prior"],
        default=BCArgs.unscored,
        help="target where no option was scored: the recorded action, or the --init network's policy",
    )
    fit.add_argument(
        "--sharpen-values",
        action="store_true",
        help="learn the soft target's most likely option as a label where options were scored",
    )
    ns = parser.parse_args(argv)
    try:
        if ns.command == "record":
            if not agents.specs.is_known(ns.level):
                raise UsageError(f"unknown level {ns.level!r}; known: {', '.join(agents.available())}")
            if ns.driver is not None and not agents.specs.is_known(ns.driver):
                raise UsageError(f"unknown driver {ns.driver!r}; known: {', '.join(agents.available())}")
            played = record(ns.level, ns.out, ns.start, ns.hands, ns.seconds, ns.driver, ns.share)
            labelled = f" labelled by {ns.level}, played by {ns.driver}" if ns.driver else f" of {ns.level}"
            print(f"recorded {played} hands{labelled} under {ns.out}")
        else:
            figures = train_bc(
                ns.data,
                ns.out,
                BCArgs(
                    epochs=ns.epochs,
                    seed=ns.seed,
                    batch_size=ns.batch_size,
                    learning_rate=ns.learning_rate,
                    threads=ns.threads,
                    init=ns.init,
                    value_temperature=ns.value_temperature,
                    unscored=ns.unscored,
                    sharpen_values=ns.sharpen_values,
                    hidden=ns.hidden,
                    card_hidden=ns.card_hidden,
                ),
            )
            print(", ".join(f"{k} {v:.4g}" for k, v in figures.items()))
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
