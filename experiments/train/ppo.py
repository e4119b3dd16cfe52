"""Masked PPO for gin rummy against a league, in one file (the CleanRL manner).

``ginenv train --config configs/ppo.yaml [--set key=value ...] [--resume PATH]`` runs :func:`train`.

The environment is the batched engine :class:`ginenv.vector.VectorGinRummy`: ``num_envs`` hands in
lockstep, each step applying one action per slot for the seat to move there. Per slot the trainer
keeps which seat the learner plays in the current hand (drawn at every new hand, so the learner
plays both seats, dealer and non-dealer) and which opponent it faces (drawn from the league mix at
every new hand: the compiled ``greedy`` or ``random`` policies, or a frozen snapshot of the learner
evaluated on the batch). Every env step, the learner acts in the slots where its seat is to move and
the opponents act in the others; only the learner's decisions are recorded.

A learner trajectory is its own decisions in a slot, in order. A hand's reward
(``rewards[:, seat] * reward_scale``) belongs to the learner's last decision of that hand; GAE runs
over each slot's decision sequence. A terminated hand does not bootstrap; a truncated hand (the
turn limit) bootstraps from the value of the learner's final view of that hand
(``venv.final_observations``: the batched engine deals the next hand at once). At the end of a
rollout the open hands bootstrap from the value of the learner's current view
(``venv.observe(seats)``).

Rollouts are collected by :class:`RolloutWorker` objects, each owning an equal shard of the slots
(``num_envs // workers``): its own vector env, league draws, snapshot networks and a copy of the
network. Each rollout, the learner sends the current weights (and whether a new snapshot joins
the league: the snapshot is those same weights, so no extra traffic) and gets back each worker's
learner decisions, flat, with advantages and returns already computed (GAE needs only the worker's
own slots); it concatenates them and runs the PPO update. ``backend`` (``--backend`` of
``ginenv train``) says where the workers run: ``local`` in the learner's process, one after
another (one worker: the plain single-process trainer); ``ray`` as Ray actors (one CPU each, on
CPU) collecting in parallel, on a local Ray instance, the Ray already initialised in this process,
or the cluster that ``RAY_ADDRESS`` names (its nodes need ``ginenv`` installed). A worker's deals,
league draws and action samples follow from ``(seed, worker index)``: for a seed and a number of
workers, both backends train the same network.

Illegal actions are masked out of the logits (``-inf``): they are never sampled, have exactly zero
probability, and are left out of the entropy (see :func:`masked_log_probs`).

The networks read the observation with per-card deadwood features (:mod:`ginenv.features`,
``inputs``). The policy is a :class:`ginenv.agents.neural.MaskedPolicy` (so a checkpoint plays in
the harness as ``checkpoint:PATH``): an MLP plus a card head, one small MLP shared by the 52 cards
over their columns of the 4x13 planes, which adds to the logits of discarding, knocking with and
taking each card (``card_hidden``). The value function is a separate MLP, and an auxiliary head on
the policy's last hidden layer predicts the opponent's hand (52 logits, binary cross-entropy on the
unseen cards against the opponent's true cards at each decision, from ``venv.hands()``): a
training loss only, never an input. Its log-loss is logged as ``losses/aux_opponent_hand``.

Kickstarting (``kickstart``, ``kickstart_steps``; Schmitt et al. 2018): for the first env steps the
loss adds the policy's cross-entropy against the compiled ``greedy`` policy's action at each
learner decision, with a weight annealed linearly to 0. Without it the network took millions of
steps to stop discarding meld cards and passing up useful discards, and plateaued below greedy;
with it, it plays at greedy's level within a few million steps and PPO improves from there.
Optional potential-based reward shaping on the own deadwood is available (``shaping``).

TensorBoard scalars go to ``runs/{experiment}__{seed}__{time}``; checkpoints to its
``checkpoints/`` folder; a periodic duplicate-deal evaluation through the harness
(:mod:`ginenv.experiments.eval.harness`) logs ``eval/<level>`` (points per hand, learner minus level).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import math
import os
import random
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ginenv.agents.neural import (
    CheckpointError,
    MaskedPolicy,
    read_checkpoint,
    save_checkpoint,
)
from ginenv.experiments.eval.config import resolve_rules
from ginenv.experiments.eval.harness import HarnessError
from torch import nn

from ginenv import kernels
from ginenv.actions import NUM_ACTIONS
from ginenv.cards import NUM_CARDS
from ginenv.engine import DEFAULT_TURN_LIMIT
from ginenv.features import INPUT_KINDS, input_size, policy_inputs
from ginenv.observation import plane_slice
from ginenv.vector import VectorGinRummy

_UNSEEN = plane_slice("unseen")
_OPPONENT_TAKEN = plane_slice("opponent_taken")

#: League members besides snapshots: the batched engine's compiled policies.
COMPILED_OPPONENTS = ("greedy", "random")
LEAGUE_KINDS = (*COMPILED_OPPONENTS, "snapshot")
RAY_MISSING = "backend ray needs Ray: pip install 'ray>=2.9'"


@dataclass
class Args:
    """Every setting of a training run (``configs/ppo.yaml``; ``--set key=value`` overrides)."""

    experiment: str = "ppo"
    """Name of the run; the TensorBoard folder is ``{runs_dir}/{experiment}__{seed}__{time}``."""
    seed: int = 1
    """Seeds Python, numpy, torch and the minibatch order; each rollout worker's deals, league draws
    and action samples follow from it and the worker's index."""
    torch_deterministic: bool = True
    """``torch.use_deterministic_algorithms``-style determinism for cuDNN (no effect on CPU)."""
    device: str = "cpu"
    """``cpu``, ``cuda`` or ``auto`` (cuda when available)."""
    threads: int = 1
    """torch intra-op threads (0: torch's default). One thread: on 2 shared cores, torch's threads
    spin-waiting beside the env and other processes made a forward pass 20x slower (measured)."""
    total_steps: int = 20_000_000
    """Env steps to train for (every seat's decisions, the opponent's included)."""
    num_envs: int = 1024
    """Hands stepped in lockstep by the batched engine."""
    num_steps: int = 64
    """Env steps per slot per rollout (about half of them are the learner's decisions)."""
    backend: str = "local"
    """Where the rollout workers run: ``local`` (in this process, one after another) or ``ray``
    (Ray actors collecting in parallel: a local Ray instance, or the cluster named by
    ``RAY_ADDRESS``)."""
    workers: int = 1
    """Rollout workers; each steps ``num_envs // workers`` slots (``num_envs`` must divide evenly)."""
    learning_rate: float = 3e-4
    """Adam's learning rate."""
    anneal_lr: bool = True
    """Decay the learning rate linearly to 0 over ``total_steps``."""
    gamma: float = 0.995
    """Discount per learner decision."""
    gae_lambda: float = 0.95
    """GAE's lambda."""
    num_minibatches: int = 32
    """Minibatches per epoch over a rollout's learner decisions."""
    update_epochs: int = 2
    """Passes over each rollout."""
    norm_adv: bool = True
    """Normalise advantages per minibatch."""
    clip_coef: float = 0.2
    """PPO's ratio clip."""
    clip_vloss: bool = True
    """Clip the value loss like the ratio."""
    ent_coef: float = 0.01
    """Weight of the (masked) entropy bonus."""
    vf_coef: float = 0.5
    """Weight of the value loss."""
    aux_coef: float = 0.1
    """Weight of the auxiliary opponent-hand loss (0 turns it off; its log-loss is still logged)."""
    kickstart: float = 1.0
    """Weight of the kickstarting loss (Schmitt et al. 2018): cross-entropy of the policy against the
    compiled ``greedy`` policy's action at each learner decision, a teacher that gets the learner
    past discarding meld cards and ignoring useful discard-pile cards in minutes instead of hours.
    Annealed linearly to 0 over ``kickstart_steps``, after which PPO alone drives the policy (0: off)."""
    kickstart_steps: int = 10_000_000
    """Env steps over which the kickstarting weight decays to 0."""
    kickstart_teacher: str = "greedy"
    """The teacher: ``greedy`` (the compiled policy) or the path of a policy checkpoint (say, a
    behaviour clone of ``expert`` from :mod:`ginenv.experiments.train.bc`) whose most likely legal action
    teaches; it must read the same ``inputs``."""
    init: str | None = None
    """A policy checkpoint whose weights start the policy (a behaviour clone, say); its ``inputs``,
    ``hidden`` and ``card_hidden`` must be this run's. The value and auxiliary heads start fresh.
    Ignored when resuming."""
    max_grad_norm: float = 0.5
    """Gradient-norm clip."""
    target_kl: float | None = None
    """Stop an update's epochs early once the approximate KL exceeds this (None: never)."""
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    """Hidden layer widths of the policy and of the value MLP."""
    card_hidden: int = 64
    """Width of the policy's card head (:class:`ginenv.agents.neural.MaskedPolicy`): one small MLP
    shared by the 52 cards that adds to the logits of discarding, knocking with and taking each
    card (0: a plain MLP)."""
    inputs: str = "features"
    """What the networks read (:mod:`ginenv.features`): ``features`` (the observation plus per-card
    deadwood features of the own hand) or ``observation`` (the raw vector)."""
    reward_scale: float = 0.01
    """Reward per point won (hands score up to about 100 points)."""
    shaping: float = 0.0
    """Potential-based reward shaping (Ng, Harada and Russell 1999): the potential of a learner
    decision is ``-shaping * reward_scale * own deadwood`` and 0 once the hand is over, so each
    decision earns ``gamma * potential(next) - potential(now)``. Lowering deadwood pays at once
    instead of only at the showdown; the optimal policy is unchanged (0: off)."""
    rules: str | dict[str, Any] = "standard"
    """A rules preset name or a mapping of Rules fields."""
    turn_limit: int = DEFAULT_TURN_LIMIT
    """Draws per hand before it is truncated (0 points; bootstrapped)."""
    opponents: dict[str, float] = field(
        default_factory=lambda: {"greedy": 0.5, "random": 0.05, "snapshot": 0.45}
    )
    """League mix, drawn per slot at every new hand: weights of greedy, random and snapshot."""
    snapshot_every: int = 10
    """Updates between snapshots of the learner joining the league."""
    snapshot_pool: int = 10
    """Most recent snapshots kept in the league (a slot's snapshot is drawn uniformly among them)."""
    eval_every: int = 100
    """Updates between duplicate-deal evaluations through the harness (0: none)."""
    eval_deals: int = 100
    """Duplicate deals per level in each evaluation."""
    eval_levels: list[str] = field(default_factory=lambda: ["greedy", "normal", "hard"])
    """The registered agents the learner is evaluated against."""
    eval_workers: int = 1
    """Processes for the evaluation (0: every core)."""
    checkpoint_every: int = 25
    """Updates between checkpoints (``checkpoints/latest.pt``; one is always written at the end)."""
    runs_dir: str = "runs"
    """Folder of the run folders."""
    progress: bool = True
    """Show a progress bar with the current figures."""

    def validate(self) -> None:
        """Refuse values out of range with HarnessError (types are checked by the config loader)."""

        def bad(name: str, allowed: str) -> HarnessError:
            return HarnessError(f"{name} must be {allowed}, got {getattr(self, name)!r}")

        positive = ("total_steps", "num_envs", "num_steps", "num_minibatches", "update_epochs", "workers")
        for name in (*positive, "turn_limit", "snapshot_every", "snapshot_pool", "eval_deals"):
            if getattr(self, name) < 1:
                raise bad(name, "a positive integer")
        for name in ("seed", "threads", "eval_every", "checkpoint_every", "eval_workers"):
            if getattr(self, name) < 0:
                raise bad(name, "a non-negative integer")
        for name in ("learning_rate", "clip_coef", "max_grad_norm", "reward_scale"):
            if not getattr(self, name) > 0:
                raise bad(name, "a positive number")
        for name in ("gamma", "gae_lambda"):
            if not 0 <= getattr(self, name) <= 1:
                raise bad(name, "a number from 0 to 1")
        for name in ("ent_coef", "vf_coef", "aux_coef", "shaping", "kickstart", "kickstart_steps"):
            if getattr(self, name) < 0:
                raise bad(name, "a number >= 0")
        if self.target_kl is not None and not self.target_kl > 0:
            raise bad("target_kl", "a positive number or null")
        if self.card_hidden < 0:
            raise bad("card_hidden", "an integer >= 0")
        if not self.hidden or any(h < 1 for h in self.hidden):
            raise bad("hidden", "a non-empty list of positive layer widths")
        if self.inputs not in INPUT_KINDS:
            raise bad("inputs", " or ".join(INPUT_KINDS))
        if self.device not in ("cpu", "cuda", "auto"):
            raise bad("device", "cpu, cuda or auto")
        if self.backend not in ("local", "ray"):
            raise bad("backend", "local or ray")
        if self.backend == "ray" and importlib.util.find_spec("ray") is None:
            raise HarnessError(RAY_MISSING)
        if self.num_envs % self.workers:
            raise bad(
                "workers", f"a divisor of num_envs ({self.num_envs}), so every worker steps as many slots"
            )
        unknown = sorted(set(self.opponents) - set(LEAGUE_KINDS))
        if unknown:
            raise HarnessError(
                f"opponents: unknown league member(s) {', '.join(unknown)}; "
                f"allowed: {', '.join(LEAGUE_KINDS)}"
            )
        weights = list(self.opponents.values())
        if any(w < 0 for w in weights) or not sum(weights) > 0:
            raise bad("opponents", "weights >= 0 with a positive sum, e.g. {greedy: 0.3, snapshot: 0.7}")
        resolve_rules(self.rules)
        for name, allowed in (
            ("init", "a file"),
            ("kickstart_teacher", "greedy or a policy checkpoint file"),
        ):
            path = getattr(self, name)
            if path not in (None, "greedy") and not Path(path).is_file():
                raise HarnessError(f"{name}: no such checkpoint file {path!r} (allowed: {allowed})")
        if self.eval_every:
            from ginenv import agents

            odd = [n for n in self.eval_levels if n not in agents.available()]
            if odd:
                raise HarnessError(
                    f"eval_levels: unknown agent(s) {', '.join(odd)}; known: {', '.join(agents.available())}"
                )

    @property
    def batch_envs_steps(self) -> int:
        """Env steps per rollout (all slots)."""
        return self.num_envs * self.num_steps


# --------------------------------------------------------------------------- network


class ActorCritic(nn.Module):
    """The policy (a MaskedPolicy), a separate value MLP and the opponent-hand head."""

    def __init__(
        self, hidden: list[int] | tuple[int, ...], inputs: str = "features", card_hidden: int = 0
    ) -> None:
        """MLPs ``input -> hidden... -> 108`` (policy, with a card head of ``card_hidden`` units) and
        ``-> 1`` (value); aux ``hidden[-1] -> 52``; ``inputs`` is the input kind of
        :mod:`ginenv.features` both read."""
        super().__init__()
        self.actor = MaskedPolicy(None, hidden, NUM_ACTIONS, inputs=inputs, card_hidden=card_hidden)
        layers: list[nn.Module] = []
        width = input_size(inputs)
        for h in hidden:
            layers += [nn.Linear(width, h), nn.Tanh()]
            width = h
        layers.append(nn.Linear(width, 1))
        self.critic = nn.Sequential(*layers)
        # Reads the policy's features, so predicting the opponent's cards shapes what the policy sees.
        self.aux = nn.Linear(hidden[-1], NUM_CARDS)

    @classmethod
    def for_args(cls, args: Args) -> ActorCritic:
        """The networks a run with ``args`` trains."""
        return cls(args.hidden, args.inputs, args.card_hidden)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(logits, value, aux_logits)``: raw logits (mask them), value (B,), 52 card logits."""
        logits, feats = self.actor.logits_and_features(obs)
        return logits, self.critic(obs).squeeze(-1), self.aux(feats)


def masked_log_probs(logits: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probabilities over the legal actions only, and the entropy over them.

    Illegal actions (``mask`` False) get ``-inf`` logits, so exactly zero probability; their terms
    are dropped from the entropy (``0 * -inf`` would be NaN). Every row needs a legal action.
    """
    logp = torch.log_softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)
    probs = logp.exp()
    entropy = -(probs * logp.masked_fill(~mask, 0.0)).sum(-1)
    return logp, entropy


def sample_actions(logits: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One action per row from the masked policy (never an illegal one: its probability is 0)."""
    logp, _ = masked_log_probs(logits, mask)
    return torch.multinomial(logp.exp(), 1, generator=generator).squeeze(-1)


def learner_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    valid: torch.Tensor,
    terminated: torch.Tensor,
    truncated: torch.Tensor,
    truncated_value: torch.Tensor,
    next_value: torch.Tensor,
    gamma: float,
    lam: float,
) -> torch.Tensor:
    """GAE per slot over the learner's own decisions, (T, N) in env-step order.

    ``valid[t, i]``: slot ``i`` holds a learner decision at step ``t`` (other entries are skipped
    and get advantage 0); ``rewards``, ``terminated`` and ``truncated`` are set at the learner's last
    decision of a hand that ended. After a terminated hand nothing is bootstrapped; after a
    truncated one, from ``truncated_value`` (T, N: the value of the learner's final view of that
    hand, set where ``truncated`` is); a decision whose hand is still open at the end bootstraps from
    ``next_value`` (N,). The chain never crosses from one hand into the next.
    """
    steps = rewards.shape[0]
    advantages = torch.zeros_like(rewards)
    next_adv = torch.zeros_like(next_value)
    for t in reversed(range(steps)):
        term, trunc = terminated[t].float(), truncated[t].float()
        boot = torch.where(truncated[t], truncated_value[t], next_value) * (1.0 - term)
        delta = rewards[t] + gamma * boot - values[t]
        adv = delta + gamma * lam * (1.0 - term) * (1.0 - trunc) * next_adv
        advantages[t] = torch.where(valid[t], adv, 0.0)
        next_value = torch.where(valid[t], values[t], next_value)
        next_adv = torch.where(valid[t], adv, next_adv)
    return advantages


def potential_shaping(
    potential: torch.Tensor,
    valid: torch.Tensor,
    ended: torch.Tensor,
    end_potential: torch.Tensor,
    gamma: float,
) -> torch.Tensor:
    """Shaping rewards ``gamma * potential(next decision) - potential(decision)``, (T, N).

    Per slot over the learner's decisions (``valid``) in env-step order, as in :func:`learner_gae`:
    the next decision's potential is 0 after a decision whose hand ended (``ended``), and
    ``end_potential`` (N,) for a hand still open at the end of the rollout.
    """
    shaped = torch.zeros_like(potential)
    following = end_potential.clone()
    for t in reversed(range(potential.shape[0])):
        after = torch.where(ended[t], 0.0, following)
        shaped[t] = torch.where(valid[t], gamma * after - potential[t], 0.0)
        following = torch.where(valid[t], potential[t], following)
    return shaped


def own_deadwood(hands: np.ndarray) -> np.ndarray:
    """Least deadwood of each hand (int64 masks): of the 10 cards, or after the best discard of 11."""
    return kernels.own_deadwood_many(hands).astype(np.float32)


def unseen_card_loss(aux_logits: torch.Tensor, opponent: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
    """Mean binary cross-entropy of the opponent-hand head over the unseen cards of each input.

    The other cards are known from the observation (own hand and discard pile: not the opponent's;
    cards it took from the pile: its own), so only the unseen ones are worth predicting, and
    :func:`opponent_hand_predictor` fills in the known ones.
    """
    unseen = (inputs[:, _UNSEEN] > 0.5).float()
    each = nn.functional.binary_cross_entropy_with_logits(aux_logits, opponent, reduction="none")
    return (each * unseen).sum() / unseen.sum().clamp(min=1.0)


def card_planes(hands: np.ndarray) -> np.ndarray:
    """52-bit card masks (N,) as (N, 52) float32 0/1."""
    return ((hands[:, None] >> np.arange(NUM_CARDS, dtype=np.int64)) & 1).astype(np.float32)


# --------------------------------------------------------------------------- rollouts


@dataclass
class Rollout:
    """One worker's learner decisions of one rollout, flat in (env step, slot) order, with GAE done;
    plus per hand that ended the learner's figures, and the worker's seconds."""

    obs: torch.Tensor  # (B, input_size) float32: network inputs
    mask: torch.Tensor  # (B, NUM_ACTIONS) bool: the legal actions
    opp: torch.Tensor  # (B, 52) float32 0/1: the opponent's hand (the auxiliary head's target)
    actions: torch.Tensor  # (B,) int64
    teacher: torch.Tensor  # (B,) int64: the kickstarting teacher's action (when teaching, else 0)
    logp: torch.Tensor  # (B,) log-probability of the action under the policy that sampled it
    values: torch.Tensor  # (B,)
    advantages: torch.Tensor  # (B,)
    returns: torch.Tensor  # (B,) advantages + values
    hand_returns: list[float]  # per hand that ended: the learner's reward (points * reward_scale)
    hand_points: list[float]  # its points
    hand_wins: list[float]  # 1.0 where the learner won the hand
    env_seconds: float  # stepping the engine, drawing the league, preparing inputs
    inference_seconds: float  # the networks' forward passes, bootstrap and GAE

    @classmethod
    def concat(cls, parts: list[Rollout]) -> Rollout:
        """The workers' rollouts as one batch, worker after worker; seconds summed."""
        if len(parts) == 1:
            return parts[0]
        joined: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            items = [getattr(p, f.name) for p in parts]
            if isinstance(items[0], torch.Tensor):
                joined[f.name] = torch.cat(items)
            elif isinstance(items[0], list):
                joined[f.name] = [x for item in items for x in item]
            else:
                joined[f.name] = sum(items)
        return cls(**joined)


class RolloutWorker:
    """Collects rollouts on one shard of the training slots, ``num_envs`` hands in lockstep.

    It owns everything a rollout needs: the vector env, the league draws (per slot: the learner's
    seat and its opponent, drawn again at each new hand), the open hands' bookkeeping, the league's
    snapshot networks and a copy of the ActorCritic for inference. Worker ``index`` of a run draws
    its deals, league and action samples from ``(args.seed, index)``, so its rollouts are the same
    whether it runs in the learner's process or as a Ray actor.
    """

    def __init__(
        self,
        args: Args,
        index: int,
        num_envs: int,
        weights: dict[str, torch.Tensor],
        device: str = "cpu",
    ) -> None:
        """A worker of ``num_envs`` slots playing the network ``weights`` (an ActorCritic state dict,
        also the league's first snapshot) on ``device``."""
        if args.threads:
            torch.set_num_threads(args.threads)  # a Ray actor is a process of its own
        deal_seed, league_seed, sample_seed = (
            int(s) for s in np.random.SeedSequence([args.seed, index]).generate_state(3)
        )
        self.args = args
        self.device = torch.device(device)
        self.net = ActorCritic.for_args(args).to(self.device).eval().requires_grad_(False)
        self.net.load_state_dict(weights)
        self.width = input_size(args.inputs)
        self.sampler = torch.Generator(device=self.device).manual_seed(sample_seed)
        self.teacher: MaskedPolicy | None = None
        if args.kickstart and args.kickstart_teacher != "greedy":
            teacher = policy_from(args.kickstart_teacher, self.net.actor, "kickstart_teacher")
            self.teacher = teacher.to(self.device).eval().requires_grad_(False)
        self.league_rng = np.random.default_rng(league_seed)

        # The league: kinds 0..len(COMPILED)-1 are compiled policies, K+j is snapshot j of the pool.
        self.kinds = [k for k in LEAGUE_KINDS if args.opponents.get(k, 0) > 0]
        weights_np = np.array([args.opponents[k] for k in self.kinds], dtype=np.float64)
        self.league_p = weights_np / weights_np.sum()
        self.snapshots: list[MaskedPolicy] = []
        self.take_snapshot()

        N, T = num_envs, args.num_steps
        rules = resolve_rules(args.rules)
        self.venv = VectorGinRummy(N, rules=rules, seed=deal_seed, turn_limit=args.turn_limit)
        self.obs_np, self.mask_np, self.player = self.venv.reset()
        self.seats = self.league_rng.integers(0, 2, size=N)
        self.opponent = self.draw_opponents(N)

        # Rollout storage, (T, N): entry (t, i) is the learner's decision at env step t in slot i, if any.
        self.b_obs = torch.zeros((T, N, self.width), dtype=torch.float32)
        self.b_mask = torch.zeros((T, N, NUM_ACTIONS), dtype=torch.bool)
        self.b_opp = torch.zeros((T, N, NUM_CARDS), dtype=torch.float32)
        self.b_act = torch.zeros((T, N), dtype=torch.int64)
        self.b_teacher = torch.zeros((T, N), dtype=torch.int64)  # the kickstarting teacher's action
        self.b_logp = torch.zeros((T, N))
        self.b_val = torch.zeros((T, N))
        self.b_rew = torch.zeros((T, N))
        self.b_valid = torch.zeros((T, N), dtype=torch.bool)
        self.b_term = torch.zeros((T, N), dtype=torch.bool)  # the hand ended in a terminal result after it
        self.b_trunc = torch.zeros((T, N), dtype=torch.bool)  # the hand was truncated after it
        self.b_trunc_val = torch.zeros((T, N))  # then: the value of the learner's final view of that hand
        self.b_phi = torch.zeros((T, N))  # the shaping potential of the learner's decision
        self.last = np.full(N, -1, dtype=np.int64)  # the learner's last decision of the open hand

    def take_snapshot(self) -> None:
        """The current policy joins the league (the oldest leaves beyond ``snapshot_pool``)."""
        self.snapshots.append(copy.deepcopy(self.net.actor).eval().requires_grad_(False))
        del self.snapshots[: -self.args.snapshot_pool]

    def draw_opponents(self, k: int) -> np.ndarray:
        """League codes of ``k`` new hands' opponents."""
        picked = self.league_rng.choice(len(self.kinds), size=k, p=self.league_p)
        codes = np.array([LEAGUE_KINDS.index(self.kinds[p]) for p in picked], dtype=np.int64)
        is_snap = codes == LEAGUE_KINDS.index("snapshot")
        pool = len(self.snapshots)
        codes[is_snap] = len(COMPILED_OPPONENTS) + self.league_rng.integers(0, pool, size=int(is_snap.sum()))
        return codes

    def prepare(self, observations: np.ndarray) -> torch.Tensor:
        """Network inputs of a batch of observations."""
        return torch.from_numpy(policy_inputs(observations, self.args.inputs))

    def collect(
        self, weights: dict[str, torch.Tensor] | None, snapshot: bool = False, teach: bool = False
    ) -> Rollout:
        """One rollout of ``num_steps`` env steps with the network ``weights`` (None: unchanged);
        ``snapshot``: these weights join the league first; ``teach``: record the kickstarting
        teacher's (compiled greedy's) action at every learner decision."""
        args, venv, net, device = self.args, self.venv, self.net, self.device
        if weights is not None:
            net.load_state_dict(weights)
        if snapshot:
            self.take_snapshot()
        seats, opponent, last = self.seats, self.opponent, self.last
        obs_np, mask_np, player = self.obs_np, self.mask_np, self.player
        N, T = len(seats), args.num_steps
        n_compiled = len(COMPILED_OPPONENTS)
        hand_returns: list[float] = []
        hand_points: list[float] = []
        hand_wins: list[float] = []
        env_s = inference_s = 0.0
        for buffer in (self.b_valid, self.b_rew, self.b_term, self.b_trunc, self.b_trunc_val, self.b_teacher):
            buffer.zero_()
        last[:] = -1
        for t in range(T):
            tick = time.perf_counter()
            learner = player == seats
            li = np.flatnonzero(learner)
            actions = np.zeros(N, dtype=np.int64)
            opp_hand = card_planes(venv.hands()[li, 1 - seats[li]])
            # Network inputs only where a network moves: the learner's slots and the snapshots'.
            netted = np.flatnonzero(learner | (opponent >= n_compiled))
            obs_t = torch.zeros((N, self.width), dtype=torch.float32)
            obs_t[netted] = self.prepare(obs_np[netted])
            mask_t = torch.from_numpy(mask_np.astype(np.bool_))
            tock = time.perf_counter()
            env_s += tock - tick
            with torch.no_grad():
                if li.size:
                    o, m = obs_t[li].to(device), mask_t[li].to(device)
                    logits, value, _ = net(o)
                    a = sample_actions(logits, m, self.sampler)
                    logp, _ = masked_log_probs(logits, m)
                    actions[li] = a.cpu().numpy()
                    self.b_obs[t, li] = obs_t[li]
                    self.b_mask[t, li] = mask_t[li]
                    self.b_opp[t, li] = torch.from_numpy(opp_hand)
                    self.b_act[t, li] = a.cpu()
                    if teach and self.teacher is not None:
                        self.b_teacher[t, li] = self.teacher(o, m).argmax(1).cpu()
                    self.b_logp[t, li] = logp.gather(1, a[:, None]).squeeze(1).cpu()
                    self.b_val[t, li] = value.cpu()
                    self.b_valid[t, li] = True
                    last[li] = t
                    if args.shaping:
                        dead = own_deadwood(venv.hands()[li, seats[li]])
                        self.b_phi[t, li] = torch.from_numpy(-args.shaping * args.reward_scale * dead)
                for j, snap in enumerate(self.snapshots):
                    sj = np.flatnonzero(~learner & (opponent == n_compiled + j))
                    if sj.size:
                        o, m = obs_t[sj].to(device), mask_t[sj].to(device)
                        actions[sj] = sample_actions(snap(o), m, self.sampler).cpu().numpy()
            tick = time.perf_counter()
            inference_s += tick - tock
            for code, policy in enumerate(COMPILED_OPPONENTS):
                sc = ~learner & (opponent == code)
                taught = teach and self.teacher is None and policy == "greedy" and li.size > 0
                if sc.any() or taught:
                    chosen = venv.policy_actions(policy)
                    actions[sc] = chosen[sc]
                    if taught:
                        self.b_teacher[t, li] = torch.from_numpy(chosen[li])
            obs_np, mask_np, player, rewards, terminated, truncated = venv.step(actions)
            ended = np.flatnonzero(terminated | truncated)
            if ended.size:
                r = rewards[ended, seats[ended]] * args.reward_scale
                hand_returns.extend(r.tolist())
                hand_points.extend((r / args.reward_scale).tolist())
                hand_wins.extend((r > 0).astype(float).tolist())
                # The hand's reward belongs to the learner's last decision of that hand.
                own = ended[last[ended] >= 0]
                lt = last[own]
                self.b_rew[lt, own] += torch.from_numpy(rewards[own, seats[own]] * args.reward_scale)
                self.b_term[lt, own] = torch.from_numpy(terminated[own])
                self.b_trunc[lt, own] = torch.from_numpy(truncated[own])
                cut = own[truncated[own]]
                if cut.size:
                    final = venv.final_observations[cut, seats[cut]]
                    with torch.no_grad():
                        self.b_trunc_val[last[cut], cut] = net(self.prepare(final).to(device))[1].cpu()
                last[ended] = -1
                seats[ended] = self.league_rng.integers(0, 2, size=ended.size)
                opponent[ended] = self.draw_opponents(ended.size)
            env_s += time.perf_counter() - tick
        self.obs_np, self.mask_np, self.player = obs_np, mask_np, player

        # Bootstrap: the open hands' value from the learner's current view of its hand.
        tick = time.perf_counter()
        with torch.no_grad():
            view = self.prepare(venv.observe(seats)).to(device)
            next_value = net(view)[1].cpu()
            if args.shaping:
                dead = own_deadwood(venv.hands()[np.arange(N), seats])
                end_phi = torch.from_numpy(-args.shaping * args.reward_scale * dead)
                over = self.b_term | self.b_trunc
                self.b_rew += potential_shaping(self.b_phi, self.b_valid, over, end_phi, args.gamma)
            advantages = learner_gae(
                self.b_rew, self.b_val, self.b_valid, self.b_term, self.b_trunc, self.b_trunc_val,
                next_value, args.gamma, args.gae_lambda,
            )  # fmt: skip
            returns = advantages + self.b_val
        inference_s += time.perf_counter() - tick

        flat = self.b_valid.flatten().nonzero().squeeze(1)
        return Rollout(
            obs=self.b_obs.flatten(0, 1)[flat],
            mask=self.b_mask.flatten(0, 1)[flat],
            opp=self.b_opp.flatten(0, 1)[flat],
            actions=self.b_act.flatten()[flat],
            teacher=self.b_teacher.flatten()[flat],
            logp=self.b_logp.flatten()[flat],
            values=self.b_val.flatten()[flat],
            advantages=advantages.flatten()[flat],
            returns=returns.flatten()[flat],
            hand_returns=hand_returns,
            hand_points=hand_points,
            hand_wins=hand_wins,
            env_seconds=env_s,
            inference_seconds=inference_s,
        )


def network_weights(net: nn.Module) -> dict[str, torch.Tensor]:
    """``net``'s state dict on the CPU (what the learner sends its workers)."""
    return {k: v.detach().cpu() for k, v in net.state_dict().items()}


class RolloutWorkers:
    """``args.workers`` :class:`RolloutWorker` objects splitting ``args.num_envs`` evenly: in this
    process, collecting one after another (backend ``local``), or as Ray actors collecting in
    parallel (``ray``, one CPU each, inference on CPU). :meth:`close` ends them."""

    def __init__(self, args: Args, weights: dict[str, torch.Tensor], device: torch.device) -> None:
        shard = args.num_envs // args.workers
        self.local: list[RolloutWorker] = []
        self.actors: list[Any] = []
        self.started_ray = False
        #: Workers collecting at the same time (their seconds are summed, then divided by this).
        self.parallel = 1
        if args.backend == "local":
            self.local = [RolloutWorker(args, i, shard, weights, str(device)) for i in range(args.workers)]
            return
        self.ray, self.started_ray = init_ray(args.workers)
        actor = self.ray.remote(num_cpus=1)(RolloutWorker)
        first = self.ray.put(weights)
        self.actors = [actor.remote(args, i, shard, first, "cpu") for i in range(args.workers)]
        self.parallel = args.workers

    def collect(self, weights: dict[str, torch.Tensor], snapshot: bool, teach: bool = False) -> list[Rollout]:
        """Every worker's rollout with these weights, in worker order (see RolloutWorker.collect)."""
        if not self.actors:
            return [w.collect(weights, snapshot, teach) for w in self.local]
        shared = self.ray.put(weights)  # stored once, read by every actor
        return list(self.ray.get([a.collect.remote(shared, snapshot, teach) for a in self.actors]))

    def close(self) -> None:
        """End the actors, and the Ray instance if this run started it."""
        for a in self.actors:
            self.ray.kill(a)
        self.actors = []
        if self.started_ray:
            self.ray.shutdown()
            self.started_ray = False


def init_ray(workers: int) -> tuple[Any, bool]:
    """Ray, initialised, and whether this call did it: the Ray already initialised in this process,
    else the cluster named by ``RAY_ADDRESS``, else a new local instance (with a CPU per worker at
    least, so that every actor starts even on a small machine)."""
    try:
        import ray
    except ImportError:
        raise HarnessError(RAY_MISSING) from None
    if ray.is_initialized():
        started = False
    elif os.environ.get("RAY_ADDRESS"):
        ray.init(address=os.environ["RAY_ADDRESS"], log_to_driver=False)
        started = True
    else:
        ray.init(num_cpus=max(os.cpu_count() or 1, workers), include_dashboard=False, log_to_driver=False)
        started = True
    cpus = ray.cluster_resources().get("CPU", 0)
    if cpus < workers:
        warnings.warn(
            f"Ray has {cpus:g} CPUs for {workers} rollout workers of one CPU each: the run waits "
            "until the cluster has them",
            stacklevel=2,
        )
    return ray, started


# --------------------------------------------------------------------------- checkpoints


def _check_state(module: nn.Module, state: Any, what: str, path: str) -> dict[str, torch.Tensor]:
    """``state`` checked against ``module``'s own parameters (names, shapes, finite floats)."""
    own = module.state_dict()
    if not isinstance(state, dict) or set(state) != set(own):
        keys = sorted(state) if isinstance(state, dict) else type(state).__name__
        raise CheckpointError(f"{path}: training[{what!r}] must hold exactly {sorted(own)}, got {keys}")
    for key, ref in own.items():
        t = state[key]
        if not isinstance(t, torch.Tensor) or not t.is_floating_point() or t.shape != ref.shape:
            raise CheckpointError(
                f"{path}: training[{what!r}][{key!r}] must be a float tensor of shape {list(ref.shape)}"
            )
        if not bool(torch.isfinite(t).all()):
            raise CheckpointError(f"{path}: training[{what!r}][{key!r}] holds NaN or infinite values")
    return {k: v.to(torch.float32) for k, v in state.items()}


def _check_optimizer(optimizer: torch.optim.Optimizer, state: Any, path: str) -> None:
    """Load Adam's state after checking every moment has its parameter's shape."""
    params = [p for g in optimizer.param_groups for p in g["params"]]
    try:
        groups, moments = state["param_groups"], state["state"]
        if len(groups) != 1 or list(groups[0]["params"]) != list(range(len(params))):
            raise ValueError("parameter groups differ")
        for idx, entry in moments.items():
            for name in ("exp_avg", "exp_avg_sq"):
                if entry[name].shape != params[idx].shape:
                    raise ValueError(f"state of parameter {idx} has the wrong shape")
        optimizer.load_state_dict(state)
    except (KeyError, TypeError, IndexError, ValueError, AttributeError) as err:
        raise CheckpointError(
            f"{path}: training['optimizer'] does not fit this network's Adam: {err}"
        ) from None


def save_training_checkpoint(
    path: Path, net: ActorCritic, optimizer: torch.optim.Optimizer, args: Args, progress: dict[str, int]
) -> None:
    """The policy plus what resuming needs, in the pickle-free checkpoint format."""
    save_checkpoint(
        net.actor,
        path,
        config=dataclasses.asdict(args),
        training={
            "critic": net.critic.state_dict(),
            "aux": net.aux.state_dict(),
            "optimizer": optimizer.state_dict(),
            "progress": dict(progress),
        },
    )


def check_same_network(found: MaskedPolicy, wanted: MaskedPolicy, where: str) -> None:
    """Refuse (CheckpointError, starting with ``where``) a checkpoint's policy not built like
    ``wanted``, this run's: another input, card head, activation or hidden layers."""
    for key, phrase in (
        ("inputs", "reads inputs"),
        ("card_hidden", "has card_hidden"),
        ("activation", "has activation"),
        ("hidden", "has hidden layers"),
    ):
        have, want = getattr(found, key), getattr(wanted, key)
        if key == "hidden":
            have, want = list(have), list(want)
        if have != want:
            raise CheckpointError(
                f"{where}: its network {phrase} {have!r}, this run {want!r}; set {key} to match"
            )


def policy_from(path: str, wanted: MaskedPolicy, what: str) -> MaskedPolicy:
    """The policy of a checkpoint file (``what``: the setting naming it), refused (CheckpointError)
    unless it is built like ``wanted``, this run's policy."""
    policy = read_checkpoint(path).policy
    check_same_network(policy, wanted, f"{what} {path}")
    return policy


def load_training_checkpoint(path: str, net: ActorCritic, optimizer: torch.optim.Optimizer) -> dict[str, int]:
    """Restore a run from a checkpoint written by :func:`save_training_checkpoint`; its progress.

    A policy-only checkpoint, another network shape or anything malformed: CheckpointError.
    """
    ckpt = read_checkpoint(path)  # refuses another observation format, corrupt files, bad weights
    check_same_network(ckpt.policy, net.actor, path)
    training = ckpt.training
    if training is None:
        raise CheckpointError(
            f"{path} holds a policy only (no value head, optimizer or progress); it cannot resume a run"
        )
    critic = _check_state(net.critic, training.get("critic"), "critic", path)
    aux = _check_state(net.aux, training.get("aux"), "aux", path)
    progress = training.get("progress")
    names = ("global_step", "update", "hands")
    if not isinstance(progress, dict) or not all(
        isinstance(progress.get(k), int) and not isinstance(progress.get(k), bool) and progress[k] >= 0
        for k in names
    ):
        raise CheckpointError(f"{path}: training['progress'] must give {', '.join(names)} as integers >= 0")
    net.actor.load_state_dict(ckpt.policy.state_dict())
    net.critic.load_state_dict(critic)
    net.aux.load_state_dict(aux)
    _check_optimizer(optimizer, training.get("optimizer"), path)
    return {k: int(progress[k]) for k in names}


def opponent_hand_predictor(path: str | Path) -> Callable[[np.ndarray], np.ndarray]:
    """The auxiliary head of a training checkpoint as a function of observations.

    Returns ``predict(observations) -> probabilities``: for a batch of one seat's observation
    vectors (B, OBS_SIZE), the probability (B, 52) that the opponent holds each card: the head's for
    the unseen cards, and the facts of the observation for the others (1 for the cards it took from
    the discard pile, 0 for the own hand and the pile). It reads the observation only, like the
    policy it was trained beside. A policy-only checkpoint (no ``training['aux']``) raises
    CheckpointError.
    """
    ckpt = read_checkpoint(path)
    if ckpt.training is None or "aux" not in ckpt.training:
        raise CheckpointError(f"{path} holds no auxiliary opponent-hand head (a policy-only checkpoint)")
    policy = ckpt.policy.eval().requires_grad_(False)
    head = nn.Linear(policy.hidden[-1], NUM_CARDS)
    head.load_state_dict(_check_state(head, ckpt.training["aux"], "aux", str(path)))
    head.eval().requires_grad_(False)

    def predict(observations: np.ndarray) -> np.ndarray:
        obs = np.asarray(observations, dtype=np.float32)
        with torch.no_grad():
            probs = torch.sigmoid(head(policy.net[:-1](policy.prepare(obs)))).numpy()
        probs = np.where(obs[:, _UNSEEN] > 0.5, probs, 0.0)
        return np.where(obs[:, _OPPONENT_TAKEN] > 0.5, 1.0, probs).astype(np.float32)

    return predict


# --------------------------------------------------------------------------- evaluation


def evaluate_checkpoint(path: Path, args: Args, out: Path) -> dict[str, dict[str, float]]:
    """Duplicate deals of the checkpoint against each of ``args.eval_levels`` through the harness:
    per level, points per hand (learner minus level) and the learner's hand win rate."""
    from ginenv.experiments.eval.harness import EvalConfig, evaluate
    from ginenv.experiments.eval.report import summarise

    name = f"checkpoint:{path}"
    cfg = EvalConfig(
        agents=(name, *args.eval_levels),
        format="gauntlet",
        deals=args.eval_deals,
        rules=resolve_rules(args.rules),
        seed=args.seed,
        turn_limit=args.turn_limit,
    )
    records = evaluate(cfg, out, workers=args.eval_workers, progress=False)
    summary = summarise(records, cfg.agents)
    return {
        pair["b"]: {
            "points_per_hand": pair["points_per_hand"]["mean"],
            "win_rate": pair["a_hand_win_rate"]["rate"],
        }
        for pair in summary["pairs"]
    }


# --------------------------------------------------------------------------- training


def train(args: Args, resume: str | None = None) -> Path:
    """Run PPO with ``args`` (optionally resuming a checkpoint); returns the run folder."""
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    args.validate()

    # Seeding: every source of randomness follows from args.seed (the workers' from it and their index).
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    if args.threads:
        torch.set_num_threads(args.threads)
    shuffle = torch.Generator().manual_seed(args.seed)  # the minibatches (CPU indices on any device)
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else args.device)

    net = ActorCritic.for_args(args).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    progress = {"global_step": 0, "update": 0, "hands": 0}
    if resume is not None:
        progress = load_training_checkpoint(resume, net, optimizer)
    elif args.init is not None:
        net.actor.load_state_dict(policy_from(args.init, net.actor, "init").state_dict())

    run_name = f"{args.experiment}__{args.seed}__{int(time.time())}"
    run_dir = Path(args.runs_dir) / run_name
    Path(args.runs_dir).mkdir(parents=True, exist_ok=True)
    for extra in range(2, 1000):
        # Two runs started in the same second (a resume right after a run) get their own folders.
        try:
            run_dir.mkdir()
            break
        except FileExistsError:
            run_dir = run_dir.with_name(f"{run_name}-{extra}")
    (run_dir / "checkpoints").mkdir()
    writer = SummaryWriter(str(run_dir))
    writer.add_text(
        "hyperparameters",
        "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()),
    )

    # The rollout workers; their league starts with a snapshot of the network as it is now.
    workers = RolloutWorkers(args, network_weights(net), device)
    snapshot_due = False

    num_updates = max(1, math.ceil(args.total_steps / args.batch_envs_steps))
    start_update = progress["update"]
    bar = tqdm(total=num_updates, initial=start_update, disable=not args.progress, unit="update", desc="ppo")
    # Worker seconds per parallel lane; gather: the rest of collecting (shipping weights and batches,
    # waiting for the slowest worker).
    timing = {"env": 0.0, "inference": 0.0, "gather": 0.0, "update": 0.0}
    ep_returns: list[float] = []
    ep_points: list[float] = []
    ep_wins: list[float] = []
    figures: dict[str, float] = {}
    started = time.perf_counter()
    steps_at_start = progress["global_step"]

    try:
        for update in range(start_update + 1, num_updates + 1):
            if args.anneal_lr:
                optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - (update - 1) / num_updates)
            tick = time.perf_counter()
            # Kickstarting: the teacher's weight decays with the env steps trained before this rollout.
            began = progress["global_step"]
            ks_coef = 0.0
            if args.kickstart and args.kickstart_steps:
                ks_coef = args.kickstart * max(0.0, 1.0 - began / args.kickstart_steps)
            rollout = Rollout.concat(workers.collect(network_weights(net), snapshot_due, ks_coef > 0))
            timing["env"] += rollout.env_seconds / workers.parallel
            timing["inference"] += rollout.inference_seconds / workers.parallel
            lanes = (rollout.env_seconds + rollout.inference_seconds) / workers.parallel
            timing["gather"] += max(0.0, time.perf_counter() - tick - lanes)
            progress["global_step"] += args.num_envs * args.num_steps
            progress["hands"] += len(rollout.hand_returns)
            ep_returns.extend(rollout.hand_returns)
            ep_points.extend(rollout.hand_points)
            ep_wins.extend(rollout.hand_wins)

            tick = time.perf_counter()
            f_obs, f_mask, f_opp = rollout.obs, rollout.mask, rollout.opp
            f_act, f_logp, f_val = rollout.actions, rollout.logp, rollout.values
            f_adv, f_ret = rollout.advantages, rollout.returns
            batch = f_act.numel()
            net.train()
            clipfracs: list[float] = []
            sums: dict[str, float] = {}
            stats: dict[str, float] = {}
            minibatches = 0
            for _epoch in range(args.update_epochs):
                order = torch.randperm(batch, generator=shuffle)
                epoch_kl = 0.0
                # Exactly num_minibatches equal shares: the learner's decision count varies per rollout,
                # and a leftover chunk of a few decisions would take a full, noisy optimizer step.
                chunks = torch.tensor_split(order, min(args.num_minibatches, max(1, batch // 2)))
                for mb in chunks:
                    o, m = f_obs[mb].to(device), f_mask[mb].to(device)
                    logits, value, aux_logits = net(o)
                    logp_all, entropy = masked_log_probs(logits, m)
                    new_logp = logp_all.gather(1, f_act[mb, None].to(device)).squeeze(1)
                    log_ratio = new_logp - f_logp[mb].to(device)
                    ratio = log_ratio.exp()
                    with torch.no_grad():
                        approx_kl = ((ratio - 1) - log_ratio).mean()
                        clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                    adv = f_adv[mb].to(device)
                    if args.norm_adv:
                        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                    pg_loss = torch.max(
                        -adv * ratio, -adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
                    ).mean()
                    ret, old_v = f_ret[mb].to(device), f_val[mb].to(device)
                    if args.clip_vloss:
                        clipped = old_v + torch.clamp(value - old_v, -args.clip_coef, args.clip_coef)
                        v_loss = 0.5 * torch.max((value - ret) ** 2, (clipped - ret) ** 2).mean()
                    else:
                        v_loss = 0.5 * ((value - ret) ** 2).mean()
                    ent = entropy.mean()
                    aux_loss = unseen_card_loss(aux_logits, f_opp[mb].to(device), o)
                    loss = pg_loss - args.ent_coef * ent + args.vf_coef * v_loss + args.aux_coef * aux_loss
                    if ks_coef > 0:
                        teacher_nll = -logp_all.gather(1, rollout.teacher[mb, None].to(device)).mean()
                        loss = loss + ks_coef * teacher_nll
                        sums["kickstart"] = sums.get("kickstart", 0.0) + teacher_nll.item()
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                    optimizer.step()
                    figs = {
                        "policy": pg_loss.item(),
                        "value": v_loss.item(),
                        "entropy": ent.item(),
                        "approx_kl": approx_kl.item(),
                        "aux_opponent_hand": aux_loss.item(),
                    }
                    for key, value in figs.items():
                        sums[key] = sums.get(key, 0.0) + value
                    minibatches += 1
                    epoch_kl += figs["approx_kl"] / len(chunks)
                if args.target_kl is not None and epoch_kl > args.target_kl:
                    break
            # Means over every minibatch of the update, not the last one's figures.
            stats = {key: total / max(minibatches, 1) for key, total in sums.items()}
            timing["update"] += time.perf_counter() - tick
            progress["update"] = update
            # A snapshot of the network as updated joins the league before the next rollout.
            snapshot_due = update % args.snapshot_every == 0

            # Logging.
            step = progress["global_step"]
            var_y = f_ret.var().item() if batch > 1 else float("nan")
            explained = float("nan") if not var_y > 0 else 1 - (f_ret - f_val).var().item() / var_y
            elapsed = time.perf_counter() - started
            sps = (step - steps_at_start) / max(elapsed, 1e-9)
            for key, value in stats.items():
                writer.add_scalar(f"losses/{key}", value, step)
            writer.add_scalar("losses/clipfrac", float(np.mean(clipfracs)) if clipfracs else 0.0, step)
            writer.add_scalar("losses/explained_variance", explained, step)
            writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], step)
            writer.add_scalar("charts/SPS", sps, step)
            writer.add_scalar("charts/learner_decisions", batch, step)
            for key, seconds in timing.items():
                writer.add_scalar(f"timing/{key}_share", seconds / max(elapsed, 1e-9), step)
            if ep_returns:
                figures["return"] = float(np.mean(ep_returns))
                figures["points"] = float(np.mean(ep_points))
                writer.add_scalar("charts/episodic_return", figures["return"], step)
                writer.add_scalar("charts/points_per_hand", figures["points"], step)
                writer.add_scalar("charts/hand_win_rate", float(np.mean(ep_wins)), step)
                ep_returns.clear()
                ep_points.clear()
                ep_wins.clear()
            figures["sps"] = sps
            figures["kl"] = stats.get("approx_kl", float("nan"))
            latest = run_dir / "checkpoints" / "latest.pt"
            last_update = update == num_updates
            evaluate_now = args.eval_every and (update % args.eval_every == 0 or last_update)
            if last_update or evaluate_now or (args.checkpoint_every and update % args.checkpoint_every == 0):
                save_training_checkpoint(latest, net, optimizer, args, progress)
            if evaluate_now:
                frozen = run_dir / "checkpoints" / f"update_{update}.pt"
                save_training_checkpoint(frozen, net, optimizer, args, progress)
                results = evaluate_checkpoint(frozen, args, run_dir / "eval" / f"update_{update}")
                for level, figs in results.items():
                    writer.add_scalar(f"eval/{level}", figs["points_per_hand"], step)
                    writer.add_scalar(f"eval/{level}_win_rate", figs["win_rate"], step)
                    figures[f"vs_{level}"] = figs["points_per_hand"]
            writer.flush()
            bar.set_postfix({k: f"{v:.3g}" for k, v in figures.items()}, refresh=False)
            bar.update(1)
    finally:
        workers.close()
    bar.close()
    total = sum(timing.values()) or 1.0
    summary = ", ".join(f"{k} {v:.1f} s ({100 * v / total:.0f}%)" for k, v in timing.items())
    writer.add_text("timing", summary)
    writer.close()
    steps = progress["global_step"] - steps_at_start
    wall = time.perf_counter() - started
    (run_dir / "timing.txt").write_text(
        f"env steps {steps} in {wall:.1f} s ({steps / wall:.0f}/s); {summary}\n"
    )
    return run_dir
