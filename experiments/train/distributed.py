"""Where PPO's rollout workers run: in the learner's process, or as Ray actors.

Each rollout, the learner sends the current weights (and whether a new snapshot joins the league:
the snapshot is those same weights, so no extra traffic) and gets back each worker's
:class:`~ginenv.experiments.train.rollouts.Rollout`: its learner decisions, flat, and what their
advantages are computed from (the learner computes them per worker: GAE needs only the worker's
own slots). ``backend`` (``--backend`` of ``ginenv train``) says where the workers run: ``local`` in
the learner's process, one after another (one worker: the plain single-process trainer), or with
``overlap`` their env steps interleaved so that one worker's engine steps on a thread of its own
while the next one's networks choose (:func:`~ginenv.experiments.train.rollouts.collect_overlapped`:
the rollouts are exactly those of one worker after another); ``ray``
as Ray actors (a CPU per engine thread, ``engine_threads``, each; inference on CPU) collecting in
parallel, on a local Ray instance, the Ray already initialised in this process, or the cluster that
``RAY_ADDRESS`` names (its nodes need ``ginenv`` installed). A worker's deals, league draws and
action samples follow from ``(seed, worker index)``: for a seed and a number of workers, both
backends train the same network, whatever ``engine_threads`` is.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import torch
from ginenv.experiments.errors import UsageError
from ginenv.experiments.train.args import RAY_MISSING, Args
from ginenv.experiments.train.rollouts import Rollout, RolloutWorker, collect_overlapped


class RolloutWorkers:
    """``args.workers`` :class:`RolloutWorker` objects splitting ``args.num_envs`` evenly: in this
    process, one after another or overlapped (backend ``local``, ``overlap``), or as Ray actors collecting in
    parallel (``ray``, ``engine_threads`` CPUs each, inference on CPU). :meth:`close` ends them."""

    def __init__(self, args: Args, weights: dict[str, torch.Tensor], device: torch.device) -> None:
        shard = args.num_envs // args.workers
        self.local: list[RolloutWorker] = []
        self.actors: list[Any] = []
        self.started_ray = False
        #: Whether the local workers' env steps interleave (Args.overlap).
        self.overlap = args.overlap
        #: Workers collecting at the same time (their seconds are summed, then divided by this).
        self.parallel = 1
        if args.backend == "local":
            self.local = [RolloutWorker(args, i, shard, weights, str(device)) for i in range(args.workers)]
            return
        self.ray, self.started_ray = init_ray(args.workers, args.engine_threads)
        # An actor's engine steps on engine_threads threads: as many CPUs are its own.
        actor = self.ray.remote(num_cpus=args.engine_threads)(RolloutWorker)
        first = self.ray.put(weights)
        self.actors = [actor.remote(args, i, shard, first, "cpu") for i in range(args.workers)]
        self.parallel = args.workers

    def collect(self, weights: dict[str, torch.Tensor], snapshot: bool, teach: bool = False) -> list[Rollout]:
        """Every worker's rollout with these weights, in worker order (see RolloutWorker.collect)."""
        if self.overlap:
            return collect_overlapped(self.local, weights, snapshot, teach)
        if self.local:
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


def init_ray(workers: int, cpus_each: int = 1) -> tuple[Any, bool]:
    """Ray, initialised, and whether this call did it: the Ray already initialised in this process,
    else the cluster named by ``RAY_ADDRESS``, else a new local instance (with ``cpus_each`` CPUs
    per worker at least, so that every actor starts even on a small machine)."""
    wanted = workers * cpus_each
    try:
        import ray
    except ImportError:
        raise UsageError(RAY_MISSING) from None
    if ray.is_initialized():
        started = False
    elif os.environ.get("RAY_ADDRESS"):
        ray.init(address=os.environ["RAY_ADDRESS"], log_to_driver=False)
        started = True
    else:
        ray.init(num_cpus=max(os.cpu_count() or 1, wanted), include_dashboard=False, log_to_driver=False)
        started = True
    cpus = ray.cluster_resources().get("CPU", 0)
    if cpus < wanted:
        warnings.warn(
            f"Ray has {cpus:g} CPUs for {workers} rollout workers of {cpus_each} CPU(s) each "
            "(engine_threads): the run waits until the cluster has them",
            stacklevel=2,
        )
    return ray, started
