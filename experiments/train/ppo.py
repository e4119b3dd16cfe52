"""Masked PPO for gin rummy against a league, in the CleanRL manner: the algorithm reads here.

``ginenv train --config ppo [--set key=value ...] [--resume PATH]`` runs :func:`train`
with the settings of :class:`Args` (:mod:`ginenv.experiments.train.args`, one field a setting);
``--resume`` continues a run with the settings its checkpoint holds (a few, such as
``total_steps``, may change: :data:`ginenv.experiments.train.checkpoints.RESUME_MAY_CHANGE`).

Each update collects a rollout, then runs the clipped-PPO update on it. The learner plays in the
batched engine :class:`ginenv.vector.VectorGinRummy`, ``num_envs`` hands in lockstep, with its
opponents inside the env loop: per slot and hand a seat and an opponent drawn from the league
(:mod:`ginenv.experiments.train.league`: the compiled ``greedy`` and ``random`` policies and
frozen snapshots of the learner, a new one every ``snapshot_every`` updates). Only the learner's
decisions are recorded, each with its advantage (GAE over the learner's own decisions per slot) and
return: :mod:`ginenv.experiments.train.rollouts`. ``workers`` rollout workers each step an equal
shard of the slots, in this process or as Ray actors (``backend``:
:mod:`ginenv.experiments.train.distributed`); for a seed and a number of workers both backends
train the same network.

The networks (:mod:`ginenv.experiments.train.networks`) are a
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
Optional potential-based reward shaping on the own deadwood is available (``shaping``).

TensorBoard scalars go to ``runs/{experiment}__{seed}__{time}``; checkpoints to its
``checkpoints/`` folder (:mod:`ginenv.experiments.train.checkpoints`: resuming, ``init``, the
opponent-hand reader); a periodic duplicate-deal evaluation through the harness
(:mod:`ginenv.experiments.eval.harness`) logs ``eval/<level>`` (points per hand, learner minus level).
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from ginenv.agents.specs import CHECKPOINT_PREFIX
from ginenv.experiments.stopping import Stopped, finish_first
from ginenv.experiments.train.args import Args
from ginenv.experiments.train.checkpoints import (
    load_training_checkpoint,
    save_training_checkpoint,
    start_from,
)
from ginenv.experiments.train.distributed import RolloutWorkers
from ginenv.experiments.train.networks import (
    ActorCritic,
    masked_log_probs,
    matmul_precision,
    network_weights,
    resolved_precision,
    unseen_card_loss,
)
from ginenv.experiments.train.progress import Phases, banner, throughput
from ginenv.experiments.train.rollouts import Rollout
from torch import nn

from ginenv.rules import resolve_rules

# Re-exported: the settings and the opponent-hand reader have always been found here.
__all__ = ["Args", "evaluate_checkpoint", "ppo_update", "train"]


# --------------------------------------------------------------------------- the update


def ppo_update(
    net: ActorCritic,
    optimizer: torch.optim.Optimizer,
    rollout: Rollout,
    args: Args,
    ks_coef: float,
    shuffle: torch.Generator,
    device: torch.device,
) -> dict[str, float]:
    """``args.update_epochs`` passes of clipped PPO over the rollout's learner decisions (plus the
    kickstarting loss of weight ``ks_coef``); the losses' means over every minibatch by name, and
    ``clipfrac``. ``shuffle`` orders the minibatches."""
    f_obs, f_mask, f_opp = rollout.obs, rollout.mask, rollout.opp
    f_act, f_logp, f_val = rollout.actions, rollout.logp, rollout.values
    f_adv, f_ret = rollout.advantages, rollout.returns
    batch = f_act.numel()
    net.train()
    sums: dict[str, float] = {"clipfrac": 0.0}
    minibatches = 0
    for _epoch in range(args.update_epochs):
        order = torch.randperm(batch, generator=shuffle)
        epoch_kl = 0.0
        # Exactly num_minibatches equal shares: the learner's decision count varies per rollout,
        # and a leftover chunk of a few decisions would take a full, noisy optimizer step.
        chunks = torch.tensor_split(order, min(args.num_minibatches, max(1, batch // 2)))
        for mb in chunks:
            o, m = f_obs[mb].to(device), f_mask[mb].to(device)
            oracle = rollout.oracle[mb].to(device) if net.oracle else None
            with matmul_precision(args.precision, device):
                logits, value, aux_logits = net(o, oracle)
            logits, value, aux_logits = logits.float(), value.float(), aux_logits.float()
            logp_all, entropy = masked_log_probs(logits, m)
            new_logp = logp_all.gather(1, f_act[mb, None].to(device)).squeeze(1)
            log_ratio = new_logp - f_logp[mb].to(device)
            ratio = log_ratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean()
                sums["clipfrac"] += ((ratio - 1.0).abs() > args.clip_coef).float().mean().item()
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
            for key, figure in figs.items():
                sums[key] = sums.get(key, 0.0) + figure
            minibatches += 1
            epoch_kl += figs["approx_kl"] / len(chunks)
        if args.target_kl is not None and epoch_kl > args.target_kl:
            break
    # Means over every minibatch of the update, not the last one's figures.
    return {key: total / max(minibatches, 1) for key, total in sums.items()}


# --------------------------------------------------------------------------- evaluation


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


# --------------------------------------------------------------------------- training


def train(args: Args, resume: str | None = None, branch: str | None = None) -> Path:
    """Run PPO with ``args`` (optionally resuming a checkpoint); returns the run folder.

    ``branch``: a training checkpoint whose network, optimizer and progress this run continues
    from, with ``args`` as its settings and a folder of its own (a run carried on with other
    settings, e.g. another league or learning rate); ``resume`` keeps the checkpoint's settings
    and folder.

    Stopped by Ctrl-C or SIGTERM (:mod:`ginenv.experiments.stopping`), it writes the run's state as of
    its last finished update to ``checkpoints/latest.pt`` and raises
    :class:`~ginenv.experiments.stopping.Stopped` with ``resume`` set to that file: ``train(args,
    resume=...)`` (``ginenv train --resume PATH``) continues from there. An update in progress is
    finished before the stop; a rollout in progress is dropped.
    """
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
    if resume is not None or branch is not None:
        progress = load_training_checkpoint(resume or branch or "", net, optimizer)
    elif args.init is not None:
        loaded = start_from(args.init, net)
        print(f"ginenv train: starting from {args.init} ({', '.join(loaded)})", flush=True)

    run_dir = _run_folder(args, resume)
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
    print(
        banner(args, run_dir, str(device), resolved_precision(args.precision, device), progress["update"]),
        flush=True,
    )
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

    num_updates = max(1, math.ceil(args.total_steps / args.batch_envs_steps))
    start_update = progress["update"]
    bar = tqdm(total=num_updates, initial=start_update, disable=not args.progress, unit="update", desc="ppo")
    # The bar names what is running (starting, rollout, update, evaluation) and a heartbeat keeps its
    # clock moving, through a first run's compilation of the engine too.
    phases = Phases(bar)
    phases.phase("starting the rollout workers", redraw_s=0.0)
    # The rollout workers; their league starts with a snapshot of the network as it is now.
    try:
        workers = RolloutWorkers(args, network_weights(net), device)
    except BaseException:
        phases.close()
        raise
    snapshot_due = False
    eval_seconds, evaluations = 0.0, 0
    # Worker seconds per parallel lane; gather: the rest of collecting (shipping weights and batches,
    # waiting for the slowest worker).
    timing = {"env": 0.0, "inference": 0.0, "gather": 0.0, "update": 0.0}
    ep_returns: list[float] = []
    ep_points: list[float] = []
    ep_wins: list[float] = []
    figures: dict[str, float] = {}
    started = time.perf_counter()
    steps_at_start = progress["global_step"]

    latest = run_dir / "checkpoints" / "latest.pt"
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
            # A stop (Ctrl-C, SIGTERM) during the rollout loses the rollout only; from here to the
            # checkpoint it waits, so the network, Adam and the progress always agree.
            phases.phase(f"rollout {update}/{num_updates}")
            rollout = Rollout.concat(workers.collect(network_weights(net), snapshot_due, ks_coef > 0))
            with finish_first():
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
                phases.phase(f"update {update}/{num_updates}")
                stats = ppo_update(net, optimizer, rollout, args, ks_coef, shuffle, device)
                timing["update"] += time.perf_counter() - tick
                progress["update"] = update
                # A snapshot of the network as updated joins the league before the next rollout.
                snapshot_due = update % args.snapshot_every == 0

                # Logging.
                step = progress["global_step"]
                batch = rollout.actions.numel()
                var_y = rollout.returns.var().item() if batch > 1 else float("nan")
                residual = rollout.returns - rollout.values
                explained = float("nan") if not var_y > 0 else 1 - residual.var().item() / var_y
                elapsed = time.perf_counter() - started
                # Training alone: the evaluations are timed apart (the closing line says both).
                sps = (step - steps_at_start) / max(elapsed - eval_seconds, 1e-9)
                for key, value in stats.items():
                    writer.add_scalar(f"losses/{key}", value, step)
                writer.add_scalar("losses/explained_variance", explained, step)
                writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], step)
                writer.add_scalar("charts/SPS", sps, step)
                writer.add_scalar("charts/learner_decisions", batch, step)
                for member, score in rollout.member_scores.items():
                    writer.add_scalar(f"league/score_{member}", score, step)
                for key, seconds in timing.items():
                    writer.add_scalar(f"timing/{key}_share", seconds / max(elapsed, 1e-9), step)
                if ep_returns:
                    figures["return"] = float(np.mean(ep_returns))
                    # Against the training mix (the league), not a level: the eval figures are vs_<level>.
                    figures["mix_points"] = float(np.mean(ep_points))
                    writer.add_scalar("charts/episodic_return", figures["return"], step)
                    writer.add_scalar("charts/points_per_hand", figures["mix_points"], step)
                    writer.add_scalar("charts/hand_win_rate", float(np.mean(ep_wins)), step)
                    ep_returns.clear()
                    ep_points.clear()
                    ep_wins.clear()
                figures["sps"] = sps
                figures["kl"] = stats.get("approx_kl", float("nan"))
                last_update = update == num_updates
                evaluate_now = args.eval_every and (update % args.eval_every == 0 or last_update)
                periodic = args.checkpoint_every and update % args.checkpoint_every == 0
                if last_update or evaluate_now or periodic:
                    save_training_checkpoint(latest, net, optimizer, args, progress)
                frozen = run_dir / "checkpoints" / f"update_{update}.pt"
                if evaluate_now:
                    save_training_checkpoint(frozen, net, optimizer, args, progress)
            if evaluate_now:
                tick = time.perf_counter()
                phases.phase("evaluating")
                results = evaluate_checkpoint(
                    frozen,
                    args,
                    run_dir / "eval" / f"update_{update}",
                    lambda done, total: phases.phase(f"evaluating {done}/{total} deals"),
                )
                eval_seconds += time.perf_counter() - tick
                evaluations += 1
                step = progress["global_step"]
                for level, figs in results.items():
                    writer.add_scalar(f"eval/{level}", figs["points_per_hand"], step)
                    writer.add_scalar(f"eval/{level}_ci_low", figs["ci_low"], step)
                    writer.add_scalar(f"eval/{level}_ci_high", figs["ci_high"], step)
                    writer.add_scalar(f"eval/{level}_win_rate", figs["win_rate"], step)
                    figures[f"vs_{level}"] = figs["points_per_hand"]
            writer.flush()
            phases.step(**{k: f"{v:.3g}" for k, v in figures.items()})
    except KeyboardInterrupt as err:
        stop = Stopped.of(err)
        phases.close()
        with finish_first():  # a second Ctrl-C must not tear the checkpoint of the first
            save_training_checkpoint(latest, net, optimizer, args, progress)
            writer.close()
        stop.kept = f"update {progress['update']} of {num_updates} saved in {latest}"
        stop.resume = str(latest)
        raise stop from None
    finally:
        phases.close()
        workers.close()
    total = sum(timing.values()) or 1.0
    summary = ", ".join(f"{k} {v:.1f} s ({100 * v / total:.0f}%)" for k, v in timing.items())
    writer.add_text("timing", summary)
    writer.close()
    steps = progress["global_step"] - steps_at_start
    wall = time.perf_counter() - started
    print(throughput(steps, wall - eval_seconds, eval_seconds, evaluations), flush=True)
    (run_dir / "timing.txt").write_text(
        f"env steps {steps} in {wall:.1f} s ({steps / wall:.0f}/s); {summary}\n"
    )
    return run_dir
