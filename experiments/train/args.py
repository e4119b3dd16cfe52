"""The settings of a masked-PPO run (:mod:`ginenv.experiments.train.ppo`): :class:`Args`.

The shipped config ``ppo`` holds the defaults, one key per field; ``ginenv train --set key=value``
overrides any of them. The config loader (:mod:`ginenv.experiments.config_loader`) checks each
value's type; :meth:`Args.validate` checks the ranges and what the settings name (league members,
checkpoint files, levels), refusing a bad one with :class:`ginenv.experiments.errors.UsageError`.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ginenv.agents.neural.threads import check_threads_setting
from ginenv.agents.specs import CHECKPOINT_PREFIX
from ginenv.experiments.errors import UsageError
from ginenv.experiments.train.league import LEAGUE_KINDS, PFSP_WEIGHTINGS, is_fixed, level_width

from ginenv.engine import DEFAULT_TURN_LIMIT
from ginenv.features import INPUT_KINDS
from ginenv.rules import RulesError, resolve_rules
from ginenv.vector import most_threads

#: The values of Args.precision.
PRECISIONS = ("auto", "fp32", "bf16")
#: The values of Args.critic_inputs: what the value MLP reads besides the learner's inputs.
CRITIC_INPUTS = ("observation", "oracle")

RAY_MISSING = "backend ray needs Ray: pip install 'ray>=2.9'"


@dataclass
class Args:
    """Every setting of a training run (the shipped config ``ppo``; ``--set key=value`` overrides).

    A resumed run (``ginenv train --resume PATH``) takes every setting from its checkpoint; only
    ``total_steps``, ``eval_every``, ``eval_deals``, ``eval_levels``, ``eval_workers``,
    ``checkpoint_every``, ``progress``, ``threads``, ``engine_threads``, ``overlap``, ``device``,
    ``backend`` and ``runs_dir`` may be given new values (``RESUME_MAY_CHANGE`` of
    :mod:`ginenv.experiments.train.training_checkpoints`); any other change would make it another run and is
    refused.
    """

    experiment: str = "ppo"
    """Name of the run; the TensorBoard folder is ``{runs_dir}/{experiment}__{seed}__{time}``."""
    seed: int = 1
    """Seeds Python, numpy, torch and the minibatch order; each rollout worker's deals, league draws
    and action samples follow from it and the worker's index."""
    torch_deterministic: bool = True
    """``torch.use_deterministic_algorithms``-style determinism for cuDNN (no effect on CPU)."""
    device: str = "cpu"
    """``cpu``, ``cuda`` or ``auto`` (cuda when available)."""
    threads: int | str = "auto"
    """torch intra-op threads: ``auto`` (the default) or a number used as given for the whole run
    (0: torch's default). ``auto`` runs as many as the cores other processes leave free, looked at
    when the run starts and re-checked between rollouts and updates (one line says each change;
    :mod:`ginenv.agents.neural.threads`): two on this project's idle 2-core machine, where the
    update, two thirds of a run's time, runs 1.5x faster on both cores than on one, and one beside
    a busy process, where two threads spin-waiting for a core the other process holds ran 15x
    slower than one (measured: ``benchmarks/bench_contention.py``)."""
    engine_threads: int = 1
    """Threads each rollout worker's batched engine steps its hands on (``threads`` of
    :class:`ginenv.vector.VectorGinRummy`, a Ray actor included), from 1 to numba's threads (the
    cores the process may use). Every count trains the same network; one (the default) leaves the
    cores to torch's ``threads`` and keeps numba's OpenMP threads out of a process that forks."""
    precision: str = "auto"
    """``auto``, ``fp32`` or ``bf16``: with bf16 the networks' matrix products are in bfloat16
    (``torch.autocast``) in the rollouts and in the update alike, so the PPO ratio compares like with
    like; weights, optimizer, losses and log-probabilities stay fp32. ``auto`` (the default) is bf16
    where the device computes it natively (a CPU with AVX512-BF16 or AMX, a CUDA GPU with bf16) and
    fp32 elsewhere: over 48 M steps bf16 learned as well as fp32 (level head to head) at 1.23x the
    steps/s (docs/reports/2026-12-05-league-with-the-shipped-network-and-bf16.md)."""
    total_steps: int = 20_000_000
    """Env steps to train for (every seat's decisions, the opponent's included)."""
    num_envs: int = 1024
    """Hands stepped in lockstep by the batched engine."""
    num_steps: int = 64
    """Env steps per slot per rollout (about half of them are the learner's decisions)."""
    backend: str = "local"
    """Where the rollout workers run: ``local`` (in this process, one after another, or overlapped:
    ``overlap``) or ``ray``
    (Ray actors collecting in parallel: a local Ray instance, or the cluster named by
    ``RAY_ADDRESS``)."""
    workers: int = 1
    """Rollout workers; each steps ``num_envs // workers`` slots (``num_envs`` must divide evenly)."""
    overlap: bool = False
    """With ``local`` workers (two or more): their env steps interleaved, EnvPool-style, so that one
    worker's engine steps, and prepares its network inputs, on a thread of its own while the next
    worker's networks choose (:func:`ginenv.experiments.train.rollouts.collect_overlapped`). The
    rollouts are exactly those of the workers one after another (tested). It pays where the
    networks and the engine do not share the cores: a GPU's inference, or cores beyond torch's
    ``threads``. On this project's 2-core machine with ``threads: 2`` the three threads contend and
    the rollout is slower (docs/training.md has the figures)."""
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
    behaviour clone of ``expert`` made by ``research/bc.py`` of the repository) whose most likely
    legal action teaches; it must read the same ``inputs``."""
    init: str | None = None
    """A policy checkpoint whose weights start the policy (a behaviour clone, say); its ``inputs``,
    ``hidden`` and ``card_hidden`` must be this run's. A training checkpoint also starts the value
    and auxiliary heads (an oracle critic from a plain one: the oracle's weights start at 0, so it
    starts as the plain critic); from a policy-only file they start fresh. The optimizer and the
    progress start fresh (``--resume`` continues a run instead). Ignored when resuming."""
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
    critic_inputs: str = "observation"
    """What the value MLP reads: ``observation``, the learner's inputs, or ``oracle``, those plus the
    opponent's hand with its deadwood features and the next cards of the stock (an asymmetric actor-critic,
    :mod:`ginenv.experiments.train.actor_critic`). The oracle is a training baseline only: the policy,
    its checkpoints and every agent still see only the seat's observation. It takes the deal's luck
    out of the advantages."""
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
    """League mix, drawn per slot at every new hand: weights of greedy, random, hard, easy, normal,
    expert (the levels, compiled), master or master@worlds=N (the level compiled, at its shipped
    width or N worlds), snapshot and of any fixed network ``checkpoint:PATH`` (a policy checkpoint
    reading the learner's ``inputs``)."""
    pfsp: str | None = None
    """Prioritized fictitious self-play: null draws the mix as its weights say; ``variance`` tilts
    each member's weight by ``x (1 - x)`` and ``hard`` by ``(1 - x)^2``, ``x`` the learner's recent
    score against it (:mod:`ginenv.experiments.train.league`): a curriculum toward the members it
    beats about half the time, or toward those it loses to."""
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
        """Refuse values out of range with UsageError (types are checked by the config loader)."""
        positive = ("total_steps", "num_envs", "num_steps", "num_minibatches", "update_epochs", "workers")
        for name in (*positive, "turn_limit", "snapshot_every", "snapshot_pool", "eval_deals"):
            if getattr(self, name) < 1:
                raise self._bad(name, "a positive integer")
        problem = check_threads_setting(self.threads)
        if problem is not None:
            raise UsageError(f"threads must be {problem}")
        for name in ("seed", "eval_every", "checkpoint_every", "eval_workers"):
            if getattr(self, name) < 0:
                raise self._bad(name, "a non-negative integer")
        for name in ("learning_rate", "clip_coef", "max_grad_norm", "reward_scale"):
            if not getattr(self, name) > 0:
                raise self._bad(name, "a positive number")
        for name in ("gamma", "gae_lambda"):
            if not 0 <= getattr(self, name) <= 1:
                raise self._bad(name, "a number from 0 to 1")
        for name in ("ent_coef", "vf_coef", "aux_coef", "shaping", "kickstart", "kickstart_steps"):
            if getattr(self, name) < 0:
                raise self._bad(name, "a number >= 0")
        most = most_threads()
        if not 1 <= self.engine_threads <= most:
            raise self._bad("engine_threads", f"an integer from 1 to {most} (numba's threads)")
        if self.target_kl is not None and not self.target_kl > 0:
            raise self._bad("target_kl", "a positive number or null")
        if self.card_hidden < 0:
            raise self._bad("card_hidden", "an integer >= 0")
        if not self.hidden or any(h < 1 for h in self.hidden):
            raise self._bad("hidden", "a non-empty list of positive layer widths")
        if self.inputs not in INPUT_KINDS:
            raise self._bad("inputs", " or ".join(INPUT_KINDS))
        if self.critic_inputs not in CRITIC_INPUTS:
            raise self._bad("critic_inputs", " or ".join(CRITIC_INPUTS))
        if self.pfsp is not None and self.pfsp not in PFSP_WEIGHTINGS:
            raise self._bad("pfsp", f"null or {' or '.join(PFSP_WEIGHTINGS)}")
        if self.precision not in PRECISIONS:
            raise self._bad("precision", " or ".join(PRECISIONS))
        if self.device not in ("cpu", "cuda", "auto"):
            raise self._bad("device", "cpu, cuda or auto")
        if self.device == "cuda":
            import torch

            if not torch.cuda.is_available():
                raise UsageError(
                    f"device: cuda, but this torch ({torch.__version__}) sees no CUDA device; "
                    "use device: cpu, or auto (cuda when there is one)"
                )
        self._validate_workers()
        self._validate_league()
        try:
            resolve_rules(self.rules)
        except RulesError as err:
            raise UsageError(f"rules: {err}") from None
        for name, allowed in (
            ("init", "a file"),
            ("kickstart_teacher", "greedy or a policy checkpoint file"),
        ):
            path = getattr(self, name)
            if path not in (None, "greedy") and not Path(path).is_file():
                raise UsageError(f"{name}: no such checkpoint file {path!r} (allowed: {allowed})")
        if self.eval_every:
            from ginenv import agents

            odd = [n for n in self.eval_levels if n not in agents.available()]
            if odd:
                raise UsageError(
                    f"eval_levels: unknown agent(s) {', '.join(odd)}; known: {', '.join(agents.available())}"
                )

    def _bad(self, name: str, allowed: str) -> UsageError:
        """The refusal of setting ``name``: what it must be, and what it is."""
        return UsageError(f"{name} must be {allowed}, got {getattr(self, name)!r}")

    def _validate_workers(self) -> None:
        """Refuse a backend, worker count or overlap that cannot run."""
        if self.backend not in ("local", "ray"):
            raise self._bad("backend", "local or ray")
        if self.backend == "ray" and importlib.util.find_spec("ray") is None:
            raise UsageError(RAY_MISSING)
        if self.overlap and (self.backend != "local" or self.workers < 2):
            raise UsageError(
                f"overlap needs backend local and workers >= 2 (the workers' steps interleave), "
                f"got backend {self.backend!r} and workers {self.workers}"
            )
        if self.num_envs % self.workers:
            raise self._bad(
                "workers", f"a divisor of num_envs ({self.num_envs}), so every worker steps as many slots"
            )

    def _validate_league(self) -> None:
        """Refuse a league mix naming an unknown member or a missing checkpoint, or without a
        positive weight (UsageError)."""
        levels = []
        for k in self.opponents:
            try:
                if level_width(k) is not None:
                    levels.append(k)
            except ValueError as err:
                raise UsageError(f"opponents: {err}") from None
        unknown = sorted(
            k for k in self.opponents if k not in LEAGUE_KINDS and k not in levels and not is_fixed(k)
        )
        if unknown:
            raise UsageError(
                f"opponents: unknown league member(s) {', '.join(unknown)}; allowed: "
                f"{', '.join(LEAGUE_KINDS)}, master, master@worlds=N, "
                f"{CHECKPOINT_PREFIX}PATH (a policy checkpoint)"
            )
        missing = [
            k for k in self.opponents if is_fixed(k) and not Path(k.removeprefix(CHECKPOINT_PREFIX)).is_file()
        ]
        if missing:
            raise UsageError(f"opponents: no such checkpoint file for {', '.join(missing)} (allowed: a file)")
        weights = list(self.opponents.values())
        if any(w < 0 for w in weights) or not sum(weights) > 0:
            raise UsageError(
                "opponents must be weights >= 0 with a positive sum, e.g. {greedy: 0.3, snapshot: 0.7}, "
                f"got {self.opponents!r}"
            )

    @property
    def batch_envs_steps(self) -> int:
        """Env steps per rollout (all slots)."""
        return self.num_envs * self.num_steps
