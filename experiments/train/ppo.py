"""Masked PPO for gin rummy against a league, in the CleanRL manner: the algorithm reads here.

``ginenv train --config ppo [--set key=value ...] [--resume PATH]`` runs :func:`train`
with the settings of :class:`Args` (:mod:`ginenv.experiments.train.args`, one field a setting);
``--resume`` continues a run with the settings its checkpoint holds (a few, such as
``total_steps``, may change: :data:`ginenv.experiments.train.training_checkpoints.RESUME_MAY_CHANGE`).

Read from the top, this module is the algorithm, one update after another (:func:`train`, at the
bottom, is the loop):

1. **Collect** (:meth:`ginenv.experiments.train.rollouts.RolloutWorker.collect`): ``num_envs``
   hands in lockstep in the batched engine :class:`ginenv.vector.VectorGinRummy`, ``num_steps``
   env steps, the opponents inside the env loop: per slot and hand a seat and an opponent drawn
   from the league (:mod:`ginenv.experiments.train.league`: the compiled ``greedy`` and ``random``
   policies and frozen snapshots of the learner, a new one every ``snapshot_every`` updates). Only
   the learner's decisions are recorded. ``workers`` rollout workers each step an equal shard of
   the slots, in this process or as Ray actors (``backend``:
   :mod:`ginenv.experiments.train.distributed`); for a seed and a number of workers both backends
   train the same network.
2. **Advantages** (:func:`learner_batch`): GAE per slot over the learner's own decisions
   (:func:`learner_gae`), plus optional potential-based shaping on the own deadwood
   (:func:`potential_shaping`, ``shaping``).
3. **Update** (:func:`ppo_update`, :func:`minibatch_loss`): ``update_epochs`` passes of
   ``num_minibatches`` minibatches; clipped policy loss, clipped value loss, the entropy bonus, the
   auxiliary opponent-hand loss and, while kickstarting, the teacher's cross-entropy. A stop
   (Ctrl-C, SIGTERM) abandons it at its next minibatch, said at once (:func:`abandonable`).
4. **Log** (:func:`log_update`): TensorBoard scalars; then the checkpoints
   (:func:`save_checkpoints`) and the periodic evaluation (:func:`evaluate_and_log`).

The networks (:mod:`ginenv.experiments.train.actor_critic`) are a
:class:`ginenv.agents.neural.MaskedPolicy` with a card head (so a checkpoint plays in the harness as
``checkpoint:PATH``), a separate value MLP and an auxiliary head predicting the opponent's hand
from the policy's last hidden layer (a training loss only, logged as ``losses/aux_opponent_hand``).
Illegal actions are masked out of the logits: never sampled, exactly zero probability, no share of
the entropy.

Kickstarting (``kickstart``, ``kickstart_steps``; Schmitt et al. 2018): for the first env steps the
loss adds the policy's cross-entropy against the compiled ``greedy`` policy's action at each
learner decision, with a weight annealed linearly to 0. Without it the network took millions of
steps to stop discarding meld cards and passing up useful discards, and plateaued below greedy;
with it, it plays at greedy's level within a few million steps and PPO improves from there.

TensorBoard scalars go to ``runs/{experiment}__{seed}__{time}``; checkpoints to its
``checkpoints/`` folder (:mod:`ginenv.experiments.train.training_checkpoints`: resuming, ``init``, the
opponent-hand reader); a periodic duplicate-deal evaluation through the harness
(:mod:`ginenv.experiments.eval.harness`) logs ``eval/<level>`` (points per hand, learner minus
level); what the run prints and its progress bar: :mod:`ginenv.experiments.train.progress`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ginenv.agents.neural.threads import recheck_threads, use_threads
from ginenv.agents.specs import CHECKPOINT_PREFIX
from ginenv.experiments.stopping import Stopped, abandon_on_signal, finish_first, stop_on_signals
from ginenv.experiments.train.actor_critic import (
    ActorCritic,
    masked_log_probs,
    matmul_precision,
    network_weights,
    resolved_precision,
    unseen_card_loss,
)
from ginenv.experiments.train.args import Args
from ginenv.experiments.train.distributed import RolloutWorkers
from ginenv.experiments.train.progress import Phases, Tally, banner, throughput
from ginenv.experiments.train.rollouts import Decisions, Rollout
from ginenv.experiments.train.training_checkpoints import (
    kept_state,
    load_training_checkpoint,
    restore_state,
    save_training_checkpoint,
    start_from,
)
from torch import nn

from ginenv.rules import resolve_rules

# Re-exported: the settings have always been found here.
__all__ = ["Args", "evaluate_checkpoint", "learner_batch", "learner_gae", "ppo_update", "train"]


# --------------------------------------------------------------------------- 1. collect
# RolloutWorker.collect (rollouts.py) plays num_steps env steps in its slots against the league
# (league.py); RolloutWorkers (distributed.py) runs the workers here or as Ray actors. Each worker
# returns a Rollout: its learner decisions, and per env step and slot what their advantages need.


# --------------------------------------------------------------------------- 2. advantages


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


@dataclass
class Batch(Decisions):
    """What the update trains on: every worker's learner decisions, flat (worker after worker, each
    in (env step, slot) order), with their values, advantages and returns."""

    values: torch.Tensor  # (B,)
    advantages: torch.Tensor  # (B,)
    returns: torch.Tensor  # (B,) advantages + values


def advantages_of(rollout: Rollout, args: Args) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The values, advantages and returns of one worker's decisions, flat like them: GAE over each
    slot's decisions (per worker: it needs only the worker's own slots), the rewards shaped first
    with ``args.shaping``."""
    rewards = rollout.rewards
    if args.shaping:
        over = rollout.terminated | rollout.truncated
        rewards = rewards + potential_shaping(
            rollout.potential, rollout.valid, over, rollout.end_potential, args.gamma
        )
    advantages = learner_gae(
        rewards, rollout.values, rollout.valid, rollout.terminated, rollout.truncated,
        rollout.truncated_value, rollout.next_value, args.gamma, args.gae_lambda,
    )  # fmt: skip
    returns = advantages + rollout.values
    flat = rollout.valid.flatten().nonzero().squeeze(1)
    return rollout.values.flatten()[flat], advantages.flatten()[flat], returns.flatten()[flat]


def learner_batch(rollouts: list[Rollout], args: Args) -> Batch:
    """Step 2: the workers' rollouts as one batch, each decision with its advantage and return."""
    values, advantages, returns = zip(*(advantages_of(r, args) for r in rollouts), strict=True)

    def joined(name: str) -> torch.Tensor:
        return torch.cat([getattr(r, name) for r in rollouts])

    return Batch(
        obs=joined("obs"), mask=joined("mask"), opp=joined("opp"), oracle=joined("oracle"),
        actions=joined("actions"), teacher=joined("teacher"), logp=joined("logp"),
        values=torch.cat(values), advantages=torch.cat(advantages), returns=torch.cat(returns),
    )  # fmt: skip


# --------------------------------------------------------------------------- 3. the update


def minibatch_loss(
    net: ActorCritic, batch: Batch, mb: torch.Tensor, args: Args, ks_coef: float, device: torch.device
) -> tuple[torch.Tensor, dict[str, float]]:
    """The PPO loss of the decisions ``mb`` (indices into ``batch``) and its parts' figures:
    clipped policy loss, value loss (clipped with ``clip_vloss``), entropy bonus, opponent-hand
    loss and, with ``ks_coef``, the kickstarting teacher's cross-entropy."""
    o, m = batch.obs[mb].to(device), batch.mask[mb].to(device)
    oracle = batch.oracle[mb].to(device) if net.oracle else None
    with matmul_precision(args.precision, device):
        logits, value, aux_logits = net(o, oracle)
    logits, value, aux_logits = logits.float(), value.float(), aux_logits.float()
    logp_all, entropy = masked_log_probs(logits, m)
    new_logp = logp_all.gather(1, batch.actions[mb, None].to(device)).squeeze(1)
    log_ratio = new_logp - batch.logp[mb].to(device)
    ratio = log_ratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - log_ratio).mean()
        figures = {"clipfrac": ((ratio - 1.0).abs() > args.clip_coef).float().mean().item()}
    adv = batch.advantages[mb].to(device)
    if args.norm_adv:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg_loss = torch.max(
        -adv * ratio, -adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
    ).mean()
    ret, old_v = batch.returns[mb].to(device), batch.values[mb].to(device)
    if args.clip_vloss:
        clipped = old_v + torch.clamp(value - old_v, -args.clip_coef, args.clip_coef)
        v_loss = 0.5 * torch.max((value - ret) ** 2, (clipped - ret) ** 2).mean()
    else:
        v_loss = 0.5 * ((value - ret) ** 2).mean()
    ent = entropy.mean()
    aux_loss = unseen_card_loss(aux_logits, batch.opp[mb].to(device), o)
    loss = pg_loss - args.ent_coef * ent + args.vf_coef * v_loss + args.aux_coef * aux_loss
    if ks_coef > 0:
        teacher_nll = -logp_all.gather(1, batch.teacher[mb, None].to(device)).mean()
        loss = loss + ks_coef * teacher_nll
        figures["kickstart"] = teacher_nll.item()
    figures.update(
        policy=pg_loss.item(),
        value=v_loss.item(),
        entropy=ent.item(),
        approx_kl=approx_kl.item(),
        aux_opponent_hand=aux_loss.item(),
    )
    return loss, figures


def ppo_update(
    net: ActorCritic,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    args: Args,
    ks_coef: float,
    shuffle: torch.Generator,
    device: torch.device,
    between: Callable[[], None] | None = None,
) -> dict[str, float]:
    """Step 3: ``args.update_epochs`` passes of clipped PPO over the batch (plus the kickstarting
    loss of weight ``ks_coef``); the losses' means over every minibatch by name, and ``clipfrac``.
    ``shuffle`` orders the minibatches; ``between`` is called before each minibatch (where a stop
    may abandon the update: :func:`ginenv.experiments.stopping.abandon_on_signal`'s poll)."""
    recheck_threads()  # threads auto: a process that started since the rollout takes a core
    size = batch.actions.numel()
    net.train()
    sums: dict[str, float] = {"clipfrac": 0.0}
    minibatches = 0
    for _epoch in range(args.update_epochs):
        order = torch.randperm(size, generator=shuffle)
        epoch_kl = 0.0
        # Exactly num_minibatches equal shares: the learner's decision count varies per rollout,
        # and a leftover chunk of a few decisions would take a full, noisy optimizer step.
        chunks = torch.tensor_split(order, min(args.num_minibatches, max(1, size // 2)))
        for mb in chunks:
            if between is not None:
                between()
            loss, figures = minibatch_loss(net, batch, mb, args, ks_coef, device)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
            for key, figure in figures.items():
                sums[key] = sums.get(key, 0.0) + figure
            minibatches += 1
            epoch_kl += figures["approx_kl"] / len(chunks)
        if args.target_kl is not None and epoch_kl > args.target_kl:
            break
    # Means over every minibatch of the update, not the last one's figures.
    return {key: total / max(minibatches, 1) for key, total in sums.items()}


@contextlib.contextmanager
def abandonable(
    net: ActorCritic, optimizer: torch.optim.Optimizer, note: Callable[[Stopped], str]
) -> Iterator[Callable[[], None]]:
    """Around an update that a stop abandons (:func:`ginenv.experiments.stopping.abandon_on_signal`:
    ``note`` is the line it says at once; the poll it yields goes to :func:`ppo_update`): the
    networks' and Adam's state is kept before the update and put back when it is abandoned, so
    the stop saves the last complete update. Entered within :func:`finish_first`, whose hold then
    covers what follows the update up to its checkpoint, and the putting back."""
    kept = None
    try:
        with abandon_on_signal(note) as poll:
            # Copied once the signals are watched: a stop during the copy is said at once too.
            kept = kept_state(net, optimizer)
            yield poll
    except KeyboardInterrupt:
        if kept is not None:  # else nothing had changed yet
            restore_state(net, optimizer, kept)
        raise


# --------------------------------------------------------------------------- 4. logging


def log_update(
    writer: Any,
    step: int,
    rollouts: list[Rollout],
    batch: Batch,
    stats: dict[str, float],
    learning_rate: float,
    tally: Tally,
) -> None:
    """Step 4: the update's TensorBoard scalars at env step ``step`` (losses, explained variance,
    speed and its split, the league's scores, the ended hands' figures); the bar's figures too."""
    decisions = batch.actions.numel()
    var_y = batch.returns.var().item() if decisions > 1 else float("nan")
    residual = batch.returns - batch.values
    explained = float("nan") if not var_y > 0 else 1 - residual.var().item() / var_y
    elapsed = tally.elapsed()
    sps = tally.steps_per_second(step, elapsed)
    for key, value in stats.items():
        writer.add_scalar(f"losses/{key}", value, step)
    writer.add_scalar("losses/explained_variance", explained, step)
    writer.add_scalar("charts/learning_rate", learning_rate, step)
    writer.add_scalar("charts/SPS", sps, step)
    writer.add_scalar("charts/learner_decisions", decisions, step)
    for member, score in member_scores(rollouts).items():
        writer.add_scalar(f"league/score_{member}", score, step)
    for key, seconds in tally.timing.items():
        writer.add_scalar(f"timing/{key}_share", seconds / max(elapsed, 1e-9), step)
    returns = [x for r in rollouts for x in r.hand_returns]
    if returns:
        tally.figures["return"] = float(np.mean(returns))
        # Against the training mix (the league), not a level: the eval figures are vs_<level>.
        tally.figures["mix_points"] = float(np.mean([x for r in rollouts for x in r.hand_points]))
        writer.add_scalar("charts/episodic_return", tally.figures["return"], step)
        writer.add_scalar("charts/points_per_hand", tally.figures["mix_points"], step)
        wins = [x for r in rollouts for x in r.hand_wins]
        writer.add_scalar("charts/hand_win_rate", float(np.mean(wins)), step)
    tally.figures["sps"] = sps
    tally.figures["kl"] = stats.get("approx_kl", float("nan"))


def member_scores(rollouts: list[Rollout]) -> dict[str, float]:
    """The learner's score against each league member: the workers' mean."""
    if len(rollouts) == 1:
        return rollouts[0].member_scores
    first = rollouts[0].member_scores
    return {k: float(np.mean([r.member_scores[k] for r in rollouts])) for k in first}


def open_writer(
    args: Args, run_dir: Path, device: torch.device, progress: dict[str, int], resume: bool
) -> Any:
    """The run's TensorBoard writer, the settings and the arithmetic written first."""
    from torch.utils.tensorboard import SummaryWriter

    # purge_step: events a killed run logged after its last checkpoint are dropped, so the curves
    # of a resumed run stay one run.
    writer = SummaryWriter(str(run_dir), purge_step=progress["global_step"] + 1 if resume else None)
    writer.add_text(
        "hyperparameters",
        "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()),
    )
    # What `auto` became on this machine: a run's record says which arithmetic it trained with.
    writer.add_text(
        "precision", f"{args.precision} on {device}: {resolved_precision(args.precision, device)}"
    )
    return writer


# --------------------------------------------------------------------------- checkpoints, evaluation


def save_checkpoints(
    run_dir: Path,
    update: int,
    num_updates: int,
    net: ActorCritic,
    optimizer: torch.optim.Optimizer,
    args: Args,
    progress: dict[str, int],
) -> Path | None:
    """After update ``update``: ``checkpoints/latest.pt`` every ``checkpoint_every`` updates, before
    an evaluation and after the last update; before an evaluation also ``update_<n>.pt``, the file
    evaluated, returned (else None)."""
    last_update = update == num_updates
    evaluate_now = args.eval_every and (update % args.eval_every == 0 or last_update)
    periodic = args.checkpoint_every and update % args.checkpoint_every == 0
    if last_update or evaluate_now or periodic:
        save_training_checkpoint(run_dir / "checkpoints" / "latest.pt", net, optimizer, args, progress)
    if not evaluate_now:
        return None
    frozen = run_dir / "checkpoints" / f"update_{update}.pt"
    save_training_checkpoint(frozen, net, optimizer, args, progress)
    return frozen


def evaluate_checkpoint(
    path: Path, args: Args, out: Path, on_deal: Callable[[int, int], None] | None = None
) -> dict[str, dict[str, float]]:
    """Duplicate deals of the checkpoint against each of ``args.eval_levels`` through the harness:
    per level, points per hand (learner minus level) and the learner's hand win rate.
    ``on_deal(done, total)`` hears of every deal played (the training bar shows it)."""
    from ginenv.experiments.eval.harness import EvalConfig, evaluate
    from ginenv.experiments.eval.report import summarise

    name = f"{CHECKPOINT_PREFIX}{path}"
    cfg = EvalConfig(
        agents=(name, *args.eval_levels),
        format="gauntlet",
        deals=args.eval_deals,
        rules=resolve_rules(args.rules),
        seed=args.seed,
        turn_limit=args.turn_limit,
    )
    total = len(cfg.pairings()) * cfg.deals
    played = 0

    def heard(_record: dict[str, object]) -> None:
        nonlocal played
        played += 1
        if on_deal is not None:
            on_deal(played, total)

    records = evaluate(cfg, out, workers=args.eval_workers, progress=False, on_record=heard)
    summary = summarise(records, cfg.agents)
    return {
        pair["b"]: {
            "points_per_hand": pair["points_per_hand"]["mean"],
            "ci_low": pair["points_per_hand"]["low"],
            "ci_high": pair["points_per_hand"]["high"],
            "win_rate": pair["a_hand_win_rate"]["rate"],
        }
        for pair in summary["pairs"]
    }


def evaluate_and_log(
    frozen: Path, args: Args, out: Path, writer: Any, step: int, tally: Tally, phases: Phases
) -> None:
    """Evaluate the checkpoint ``frozen`` (:func:`evaluate_checkpoint`, records in ``out``) and log
    ``eval/<level>`` at env step ``step``; its time is kept apart from training's."""
    tick = time.perf_counter()
    phases.phase("evaluating")
    results = evaluate_checkpoint(
        frozen, args, out, lambda done, total: phases.phase(f"evaluating {done}/{total} deals")
    )
    tally.eval_seconds += time.perf_counter() - tick
    tally.evaluations += 1
    for level, figs in results.items():
        writer.add_scalar(f"eval/{level}", figs["points_per_hand"], step)
        writer.add_scalar(f"eval/{level}_ci_low", figs["ci_low"], step)
        writer.add_scalar(f"eval/{level}_ci_high", figs["ci_high"], step)
        writer.add_scalar(f"eval/{level}_win_rate", figs["win_rate"], step)
        tally.figures[f"vs_{level}"] = figs["points_per_hand"]


# --------------------------------------------------------------------------- setting up


def seeded_device(args: Args) -> tuple[torch.device, torch.Generator]:
    """Seed every source of randomness from ``args.seed`` (the workers' follow from it and their
    index); set torch's threads; the device and the minibatches' generator."""
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    # auto: sized to the cores free now, re-checked before each rollout and update
    use_threads(args.threads, fresh=True)
    shuffle = torch.Generator().manual_seed(args.seed)  # the minibatches (CPU indices on any device)
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else args.device)
    return device, shuffle


def learner_networks(
    args: Args, device: torch.device, resume: str | None, branch: str | None
) -> tuple[ActorCritic, torch.optim.Optimizer, dict[str, int]]:
    """The networks, Adam and the progress: fresh, from ``init``, or as the checkpoint ``resume``
    (or ``branch``) left them."""
    net = ActorCritic.for_args(args).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    progress = {"global_step": 0, "update": 0, "hands": 0}
    if resume is not None or branch is not None:
        progress = load_training_checkpoint(resume or branch or "", net, optimizer)
    elif args.init is not None:
        loaded = start_from(args.init, net)
        print(f"ginenv train: starting from {args.init} ({', '.join(loaded)})", flush=True)
    return net, optimizer, progress


def _run_folder(args: Args, resume: str | None) -> Path:
    """The run folder: a resumed checkpoint's own (``RUN/checkpoints/x.pt``), else a new
    ``runs/{experiment}__{seed}__{time}``."""
    if resume is not None:
        folder = Path(resume).resolve().parent.parent
        # A checkpoint inside a run folder (its TensorBoard events beside checkpoints/) resumes there.
        if Path(resume).resolve().parent.name == "checkpoints" and any(folder.glob("events.out.tfevents*")):
            return folder
    run_name = f"{args.experiment}__{args.seed}__{int(time.time())}"
    run_dir = Path(args.runs_dir) / run_name
    Path(args.runs_dir).mkdir(parents=True, exist_ok=True)
    for extra in range(2, 1000):
        # Two runs started in the same second get their own folders.
        try:
            run_dir.mkdir()
            break
        except FileExistsError:
            run_dir = run_dir.with_name(f"{run_name}-{extra}")
    (run_dir / "checkpoints").mkdir()
    return run_dir


def announce(
    args: Args,
    run_dir: Path,
    device: torch.device,
    progress: dict[str, int],
    resume: str | None,
    branch: str | None,
) -> None:
    """Print where the run goes on from (a resumed or branched one) and the banner."""
    if resume is not None:
        print(
            f"ginenv train: resuming {run_dir} from update {progress['update']} "
            f"(env step {progress['global_step']}, {progress['hands']} hands)",
            flush=True,
        )
    elif branch is not None:
        print(
            f"ginenv train: {run_dir} continues {branch} from update {progress['update']} "
            f"(env step {progress['global_step']}) with its own settings",
            flush=True,
        )
    precision = resolved_precision(args.precision, device)
    print(banner(args, run_dir, str(device), precision, progress["update"]), flush=True)


def start_workers(
    args: Args, net: ActorCritic, device: torch.device, num_updates: int, start_update: int
) -> tuple[RolloutWorkers, Phases]:
    """The rollout workers, their league starting with a snapshot of the network as it is now, and
    the bar: it names what is running (starting, rollout, update, evaluation) and a heartbeat keeps
    its clock moving, through a first run's compilation of the engine too."""
    from tqdm import tqdm

    bar = tqdm(total=num_updates, initial=start_update, disable=not args.progress, unit="update", desc="ppo")
    phases = Phases(bar)
    phases.phase("starting the rollout workers", redraw_s=0.0)
    try:
        return RolloutWorkers(args, network_weights(net), device), phases
    except BaseException:
        phases.close()
        raise


def kickstart_weight(args: Args, global_step: int) -> float:
    """The teacher's loss weight for a rollout after ``global_step`` env steps: ``kickstart``
    decaying linearly to 0 over ``kickstart_steps``."""
    if not (args.kickstart and args.kickstart_steps):
        return 0.0
    return args.kickstart * max(0.0, 1.0 - global_step / args.kickstart_steps)


def finish(writer: Any, tally: Tally, progress: dict[str, int], run_dir: Path) -> None:
    """Close the log with the time's split; print the closing line, write ``timing.txt``."""
    split = tally.split()
    writer.add_text("timing", split)
    writer.close()
    steps = progress["global_step"] - tally.steps_at_start
    wall = tally.elapsed()
    print(throughput(steps, wall - tally.eval_seconds, tally.eval_seconds, tally.evaluations), flush=True)
    (run_dir / "timing.txt").write_text(
        f"env steps {steps} in {wall:.1f} s ({steps / wall:.0f}/s); {split}\n"
    )


# --------------------------------------------------------------------------- training


def abandoning(update: int, bar: bool) -> Callable[[Stopped], str]:
    """The line a stop during update ``update`` prints at once (after a line break where the
    progress ``bar`` is drawn): the update is abandoned, the one before saved."""

    lead = "\n" if bar else ""  # the bar's line is left as it is, unfinished

    def note(stop: Stopped) -> str:
        return (
            f"{lead}ginenv: {stop.by}: abandoning update {update} in flight, saving update {update - 1}; "
            f"{stop.by} again stops at once without saving"
        )

    return note


def train(args: Args, resume: str | None = None, branch: str | None = None) -> Path:
    """Run PPO with ``args`` (optionally resuming a checkpoint); returns the run folder.

    ``branch``: a training checkpoint whose network, optimizer and progress this run continues
    from, with ``args`` as its settings and a folder of its own (a run carried on with other
    settings, e.g. another league or learning rate); ``resume`` keeps the checkpoint's settings
    and folder.

    Stopped by Ctrl-C or SIGTERM (:mod:`ginenv.experiments.stopping`; called from Python too), it
    writes the run's state as of its last complete update to ``checkpoints/latest.pt`` and raises
    :class:`~ginenv.experiments.stopping.Stopped` with ``resume`` set to that file: ``train(args,
    resume=...)`` (``ginenv train --resume PATH``) continues from there. A rollout in progress is
    dropped, and so is an update, at its next minibatch, after a line said so at once
    (:func:`abandonable`). A second signal stops at once without saving (``Stopped.again``).
    """
    args.validate()
    device, shuffle = seeded_device(args)
    net, optimizer, progress = learner_networks(args, device, resume, branch)
    run_dir = _run_folder(args, resume)
    announce(args, run_dir, device, progress, resume, branch)
    writer = open_writer(args, run_dir, device, progress, resume is not None)
    num_updates = max(1, math.ceil(args.total_steps / args.batch_envs_steps))
    workers, phases = start_workers(args, net, device, num_updates, progress["update"])
    tally = Tally(steps_at_start=progress["global_step"])
    latest = run_dir / "checkpoints" / "latest.pt"
    snapshot_due = False
    with stop_on_signals():  # SIGTERM stops the run as Ctrl-C does, where train is called from Python too
        try:
            for update in range(progress["update"] + 1, num_updates + 1):
                if args.anneal_lr:
                    optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - (update - 1) / num_updates)
                # Kickstarting: the teacher's weight decays with the env steps trained before this rollout.
                ks_coef = kickstart_weight(args, progress["global_step"])
                # 1. Collect. A stop (Ctrl-C, SIGTERM) during the rollout loses the rollout only.
                tick = time.perf_counter()
                phases.phase(f"rollout {update}/{num_updates}", redraw_s=0.0)
                rollouts = workers.collect(network_weights(net), snapshot_due, ks_coef > 0)
                tally.collected(
                    sum(r.env_seconds for r in rollouts), sum(r.inference_seconds for r in rollouts),
                    tick, workers.parallel,
                )  # fmt: skip
                # 2. Advantages: GAE over each slot's learner decisions. 3. Update: clipped PPO,
                #    update_epochs passes of num_minibatches minibatches. From here to the checkpoint
                #    a stop waits, so the network, Adam and the progress always agree; but the update,
                #    which may take a minute, it abandons at its next minibatch (going back to before it).
                tick = time.perf_counter()
                phases.phase(f"update {update}/{num_updates}", redraw_s=0.0)
                with finish_first():
                    with abandonable(net, optimizer, abandoning(update, args.progress)) as poll:
                        batch = learner_batch(rollouts, args)
                        stats = ppo_update(net, optimizer, batch, args, ks_coef, shuffle, device, poll)
                    tally.timing["update"] += time.perf_counter() - tick
                    progress["global_step"] += args.num_envs * args.num_steps
                    progress["hands"] += sum(len(r.hand_returns) for r in rollouts)
                    progress["update"] = update
                    # A snapshot of the network as updated joins the league before the next rollout.
                    snapshot_due = update % args.snapshot_every == 0
                    # 4. Log, then save.
                    lr = optimizer.param_groups[0]["lr"]
                    log_update(writer, progress["global_step"], rollouts, batch, stats, lr, tally)
                    frozen = save_checkpoints(run_dir, update, num_updates, net, optimizer, args, progress)
                if frozen is not None:
                    out = run_dir / "eval" / f"update_{update}"
                    evaluate_and_log(frozen, args, out, writer, progress["global_step"], tally, phases)
                writer.flush()
                phases.step(**{k: f"{v:.3g}" for k, v in tally.figures.items()})
        except KeyboardInterrupt as err:
            stop = Stopped.of(err)
            if not stop.again:  # a second stop saves nothing
                # A second stop waits for the checkpoint (milliseconds), never written half.
                with contextlib.suppress(Stopped), finish_first():
                    save_training_checkpoint(latest, net, optimizer, args, progress)
                writer.close()
            raise said_stopped(stop, latest, f"update {progress['update']} of {num_updates}") from None
        finally:
            phases.close()
            workers.close()
    finish(writer, tally, progress, run_dir)
    return run_dir


def said_stopped(stop: Stopped, latest: Path, update: str) -> Stopped:
    """``stop`` saying what it kept: ``update`` (``update 6 of 300``) saved in ``latest``, or for a
    second stop (``again``) that nothing was, and the run's last checkpoint where there is one."""
    if not stop.again:
        stop.kept, stop.resume = f"{update} saved in {latest}", str(latest)
    elif latest.exists():
        stop.kept = f"nothing saved; {latest}, the run's last checkpoint, is as it was"
        stop.resume = str(latest)
    return stop
