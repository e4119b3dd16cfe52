"""The evaluation harness: duplicate deals between agents, played in parallel, resumable.

This module owns *scheduling* evaluations: units of work over a process pool or Ray, the run folder
resumed, the progress and the stops (:func:`evaluate`, :func:`run_units`). What a run plays is an
:class:`~ginenv.experiments.eval.eval_config.EvalConfig` (:mod:`~ginenv.experiments.eval.eval_config`);
one unit's two games and their record are :mod:`~ginenv.experiments.eval.units`; the folder is
:mod:`~ginenv.experiments.eval.run_folder`. Their names are importable from here as well.
:mod:`ginenv.experiments.eval.stats` owns the statistics and :mod:`ginenv.experiments.eval.report`
the outputs. Agents are driven through the env's AEC API only
(``observe()`` for their seat), exactly as a user's agent would be.

**Duplicate deals.** Every deal (one hand, or one match's sequence of hands) is played twice with the
seats swapped and the dealer index kept, so each agent holds in the second game exactly the cards
its opponent held in the first: the luck of the deal cancels in the pair's sum. Deal ``k`` of a run
is the same for every pairing (common random numbers), derived from ``(seed, k)`` alone (on secret
deals, from ``(key, k)``: see **Integrity**). An agent is
reseeded at every hand from ``(seed, k, hand, role)`` where ``role`` is dealer or non-dealer, so a
deterministic or seeded agent playing itself scores exactly zero on every duplicate pair.

**Units of work** are ``(pairing, deal)``; each finishes as one JSON line appended to
``results.jsonl`` in the run folder. A run started again with the same arguments skips the units
already there (a torn last line from a kill is dropped), so its totals equal an uninterrupted run's.
A stop by Ctrl-C or SIGTERM (:mod:`ginenv.experiments.stopping`) ends the workers at once and raises
:class:`~ginenv.experiments.stopping.Stopped` naming the folder that keeps the finished deals.

**Compiling.** Whatever a game runs that numba's cache lacks (the engine's, the agents' or the
luck's kernels, :mod:`ginenv.compiling`) compiles in this process, on the first deal, before the
progress bar and the workers start: the bar's rate and ETA count games only, the workers load the
compiled code instead of each compiling it, and the note says the wait before it begins.

**Backends**: ``local`` (a process pool over every core) and ``ray`` (tasks on the cluster named by
the usual ``RAY_ADDRESS``, or a local Ray instance); both return identical records for a seed.

**Agents** are named by specs (:mod:`ginenv.agents.specs`: registered names, ``checkpoint:PATH``,
``package.module:Name``, ``path/to/file.py:Name``, ``exec:COMMAND``). Every spec is resolved and
built once before any game (a bad one is a HarnessError naming it); worker processes, local or
Ray, rebuild every game's agents from the resolved specs, so what works with one worker works with
N. Each game is played by :func:`ginenv.agents.arena.play_game`, which also owns the seeding
formulas and the forfeit rule of ``exec:`` agents.

**Luck.** Each record also holds ``pair_luck``, A's share of the stock draws' luck over both games
(:mod:`ginenv.experiments.eval.luck`, a zero-mean control variate); the report subtracts it for the
headline points, which keeps them unbiased and narrows their intervals.

**Integrity.** Every game gets agents that no earlier game touched: a fresh ``agents.make`` per game
(read-only data such as network weights may be shared by the agent's own code), so an agent that
remembers its first game cannot know its opponent's cards in the second game of a duplicate deal.
Deals derive from the master seed by a public function, so with a fixed seed an agent could rebuild
the deck (and a drawn ``seed="random"`` is a 63-bit number that a run records and prints). A rating
that is published plays on **secret deals** instead: ``EvalConfig(key=DealKey.new())`` deals hand
``h`` of deal ``k`` as ``key.deck(k, h)`` (:mod:`ginenv.secret_deals`), the seed then seeds the
agents only. The key travels to the workers (pickled, local or Ray) but is never written to the run
folder while the run goes on: ``config.json`` holds its commitment, which keys the folder, so secret
and seeded results never mix and a resume needs the key given back. Whoever ran it discloses the key
when the run ends (:func:`disclose_key`), and anyone can check the commitment and replay the deals.
The processes that hold the key are non-dumpable (:func:`~ginenv.agents.sandbox.undumpable`: the
caller before the key exists, each local worker before it gets work), so no process of the same
user reads their memory; ``exec:`` agents run in ``cfg.sandbox``, with the run folder hidden from a
strict one. An in-process Python agent that is not ginenv's own (:func:`in_process`) could inspect
the interpreter: such a run is not publishable (:func:`publishable`). Replays are refused on secret
deals (a replay shows a deal's cards to the pairings that still play it).
A ``checkpoint:PATH``
agent keys the run folder by the file's content hash as well as its path, so a resume after the
file changed is refused instead of mixing two networks.

**Truncation.** A hand that reaches the turn limit (``turn_limit`` draws, see :mod:`ginenv.engine`)
ends as ``"truncated"``: that game (in match units, the whole match) counts 0 points for both
agents and is counted in the records (``truncated``) and every report.

**Agent errors.** An exception raised by an agent (``make``, ``reset`` or ``act``), or an illegal
action it returns, stops the run with :class:`AgentError`, naming the agent and carrying its
traceback; finished deals stay in the run folder. An ``exec:`` agent that hangs past
``time_limit``, dies or answers an illegal move forfeits that game instead (the arena's rule) and
the run goes on; records count the forfeits.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from ginenv.agents import specs
from ginenv.agents.arena import AgentError, agent_seed, deal_seed, is_legal_action
from ginenv.agents.registry import is_builtin
from ginenv.agents.sandbox import Sandbox, undumpable
from ginenv.agents.specs import Spec
from ginenv.experiments.eval.eval_config import DEFAULT_TIME_LIMIT as DEFAULT_TIME_LIMIT
from ginenv.experiments.eval.eval_config import MAX_DEALS as MAX_DEALS
from ginenv.experiments.eval.eval_config import EvalConfig, HarnessError
from ginenv.experiments.eval.eval_config import Format as Format
from ginenv.experiments.eval.eval_config import Unit as Unit
from ginenv.experiments.eval.eval_config import check_key as check_key
from ginenv.experiments.eval.eval_config import check_seed as check_seed
from ginenv.experiments.eval.eval_config import check_time_limit as check_time_limit
from ginenv.experiments.eval.eval_config import checkpoint_hashes as checkpoint_hashes
from ginenv.experiments.eval.eval_config import config_from_dict as config_from_dict
from ginenv.experiments.eval.eval_config import random_seed as random_seed
from ginenv.experiments.eval.run_folder import RunFolder
from ginenv.experiments.eval.run_folder import disclose_key as disclose_key
from ginenv.experiments.eval.units import agent_slug as agent_slug
from ginenv.experiments.eval.units import check_specs as check_specs
from ginenv.experiments.eval.units import compiled_owners, play_unit, resolve_agents, run_chunk
from ginenv.experiments.eval.units import fresh_agents as fresh_agents
from ginenv.experiments.eval.units import make_agent as make_agent
from ginenv.experiments.eval.units import replay_name as replay_name
from ginenv.experiments.eval.units import single_thread_torch as single_thread_torch
from ginenv.experiments.eval.units import summarise_game as summarise_game
from ginenv.experiments.stopping import Stopped

from ginenv import compiling
from ginenv.secret_deals import DealKey
from ginenv.validation import is_int

# This module's own public names (evaluate, run_units), then re-exports: the arena owns the rest,
# the harness's users have always found them here (as they find the names of eval_config, run_folder
# and units, imported above).
__all__ = [
    "AgentError",
    "agent_seed",
    "deal_seed",
    "evaluate",
    "in_process",
    "is_legal_action",
    "publishable",
    "run_units",
]

Backend = Literal["local", "ray"]

#: Most local worker processes (far above any machine's cores; a typo must not fork thousands).
MAX_WORKERS = 1024


def _chunks(units: list[tuple[str, str, int]], size: int) -> Iterator[list[tuple[str, str, int]]]:
    for i in range(0, len(units), size):
        yield units[i : i + size]


def _worker_start() -> None:
    # Ctrl-C reaches the whole process group: the parent alone stops the run (one message, the
    # pool terminated), instead of every worker printing its own KeyboardInterrupt traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Before any work (a deal key among it) arrives: the exec: agents this worker starts, and any
    # other process of the user, cannot read its memory.
    undumpable()


def in_process(resolved: dict[str, Spec]) -> list[str]:
    """The agents of a run whose code runs inside the harness's processes and is not ginenv's own
    (a module or file spec, a name registered by another package): such an agent can read anything
    there, a deal key included, so a run on secret deals with one is not publishable. ginenv's own
    levels, networks read from checkpoints and ``exec:`` agents (other processes) are not."""
    return [
        name
        for name, spec in resolved.items()
        if spec.kind in ("module", "file") or (spec.kind == "registered" and not is_builtin(spec.target))
    ]


def publishable(agents: Iterable[str], key: DealKey | None) -> dict[str, Any]:
    """Whether a run's results can be published as a rating nobody could have cheated, and if not
    why: ``{"publishable": bool, "not_publishable_because": str | None}``. Public deals (a seed)
    can be rebuilt by any agent; an agent whose code runs inside the harness's processes
    (:func:`in_process`) can read the deal key there."""
    if key is None:
        return {"publishable": False, "not_publishable_because": "public deals (a seed): play --secret"}
    inside = in_process({name: specs.resolve(name) for name in agents})
    if not inside:
        return {"publishable": True, "not_publishable_because": None}
    where = f"{', '.join(inside)} ran inside the harness's processes, where the deal key is"
    return {"publishable": False, "not_publishable_because": where}


def run_units(
    cfg: EvalConfig,
    units: list[tuple[str, str, int]],
    backend: Backend = "local",
    workers: int = 0,
    chunk: int = 4,
    resolved: dict[str, Spec] | None = None,
    digests: dict[str, str] | None = None,
    replay_dir: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Play units on a backend, yielding records as they finish (in any order).

    ``resolved`` holds each agent's portable spec (:func:`resolve_agents`; resolved here when not
    given), from which every worker process rebuilds its agents; ``digests`` pins each
    ``checkpoint:PATH`` agent to the file content the run was keyed by; ``replay_dir`` (a folder
    every worker can write) receives each game as a replay.
    """
    if not is_int(workers) or not 0 <= workers <= MAX_WORKERS:
        raise HarnessError(
            f"workers must be an integer from 0 (every core) to {MAX_WORKERS}, got {workers!r}"
        )
    if backend not in ("local", "ray"):
        raise HarnessError(f"backend must be 'local' or 'ray', got {backend!r}")
    if not units:
        return
    chunks = list(_chunks(units, chunk))
    n = workers or os.cpu_count() or 1
    many = backend == "ray" or (n > 1 and len(chunks) > 1)
    if resolved is None:
        resolved = resolve_agents(cfg, workers=2 if many else 1)
    if backend == "ray":
        yield from _run_ray(cfg, chunks, resolved, digests, replay_dir)
        return
    if not many:
        cache: dict[str, Any] = {}
        for a, b, deal in units:
            yield play_unit((a, b), deal, cfg, cache, resolved, digests, replay_dir)
        return
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    pool = ctx.Pool(min(n, len(chunks)), initializer=_worker_start)
    try:
        jobs = [(cfg, c, resolved, digests, replay_dir) for c in chunks]
        for records in pool.imap_unordered(_run_chunk_star, jobs):
            yield from records
    except BaseException:
        _stop_pool(pool)
        raise
    pool.close()
    pool.join()


def _stop_pool(pool: Any) -> None:
    """Stop a run's workers at once (Ctrl-C, an error, a consumer that stopped reading).

    ``Pool.terminate`` alone was seen to wait forever under load after a Ctrl-C (its handler
    threads blocked on a pipe to workers that had gone), which turned an interrupt into a hang. So
    the pool's workers are killed first, and terminate gets a few seconds in a daemon thread; the
    records already written are fsynced, so nothing is lost.
    """
    import multiprocessing as mp

    for child in mp.active_children():
        if child.name.startswith("SpawnPoolWorker"):
            child.kill()
    stopper = threading.Thread(target=pool.terminate, daemon=True)
    stopper.start()
    stopper.join(timeout=5)


def _run_chunk_star(
    args: tuple[
        EvalConfig, list[tuple[str, str, int]], dict[str, Spec] | None, dict[str, str] | None, str | None
    ],
) -> list[dict[str, Any]]:
    return run_chunk(*args)


def _run_ray(
    cfg: EvalConfig,
    chunks: list[list[tuple[str, str, int]]],
    resolved: dict[str, Spec],
    digests: dict[str, str] | None,
    replay_dir: str | None = None,
) -> Iterator[dict[str, Any]]:
    try:
        import ray
    except ImportError:
        raise HarnessError("the ray backend needs Ray: pip install 'ray>=2.9'") from None
    if not ray.is_initialized():
        # RAY_ADDRESS (the usual Ray setting) names a cluster; without it Ray starts a local instance.
        ray.init(address=os.environ.get("RAY_ADDRESS") or None, ignore_reinit_error=True, log_to_driver=False)
    remote = ray.remote(run_chunk)
    pending = [remote.remote(cfg, c, resolved, digests, replay_dir) for c in chunks]
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            try:
                records = ray.get(ref)
            except ray.exceptions.RayTaskError as err:
                cause = getattr(err, "cause", None)
                if isinstance(cause, (AgentError, HarnessError)):
                    raise cause from None
                raise
            yield from records


def _say_folder(log: Callable[[str], None], out: str | Path, total: int, left: int) -> None:
    """The lines naming a run's folder before any game: where it writes, and what it held."""
    log(f"writing results to {os.path.join(out, '')}")
    if not left:
        log(f"reused the {total} finished deals in {out}: nothing left to play (another --out plays anew)")
    elif left < total:
        log(f"resuming {out}: {total - left} of {total} deals already finished, {left} to play")


def _compile_first(
    cfg: EvalConfig,
    unit: tuple[str, str, int],
    resolved: dict[str, Spec],
    digests: dict[str, str],
    replay_dir: str | None,
    log: Callable[[str], None] | None,
) -> dict[str, Any]:
    """Play ``unit`` in this process while something a game runs compiles: before the progress bar
    (whose rate and ETA then count games, not the compilation) and before any worker starts (each
    would compile the same kernels at once, then load them from the cache filled here)."""
    spent = compiling.compile_seconds()
    a, b, deal = unit
    record = play_unit((a, b), deal, cfg, {}, resolved, digests, replay_dir)
    if log is not None and compiling.compile_seconds() > spent:
        log(compiling.COMPILED.format(seconds=compiling.compile_seconds() - spent))
    return record


def _guarded(cfg: EvalConfig, out: str | Path, replays: bool) -> EvalConfig:
    """``cfg`` with the run folder hidden from strict ``exec:`` agents (what it holds of finished
    deals is the harness's, not theirs); on secret deals this process is made non-dumpable, as the
    caller should have done before the key existed (see **Integrity**), and replays are refused."""
    if replays and cfg.key is not None:
        raise HarnessError(
            "replays cannot be written on secret deals: a replay in the run folder shows a deal's cards "
            "to the games that still play it; leave out --replays"
        )
    if cfg.key is not None:
        undumpable()
    return dataclasses.replace(cfg, sandbox=(cfg.sandbox or Sandbox()).hiding(out))


def evaluate(
    cfg: EvalConfig,
    out: str | Path,
    backend: Backend = "local",
    workers: int = 0,
    progress: bool = True,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    replays: bool = False,
    log: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Run (or resume) an evaluation in folder ``out``; returns every record, sorted by unit.

    Every agent spec of ``cfg`` is resolved and built once before anything else (a bad spec raises
    HarnessError naming it); each game's agents are then built afresh from those specs, in this
    process or in the workers. ``replays``: also write every game played now as a replay in
    ``out/replays/`` (for the replay page of ``ginenv play`` or ``ginenv replay``); replays do not
    change the results. ``log`` receives the lines naming the folder (what it held) and the compile time.
    A ``cfg.key`` (secret deals) is never written here: the caller discloses it when everything that
    plays on those deals has ended (:func:`disclose_key`); ``replays`` are refused with it.
    """
    cfg = _guarded(cfg, out, replays)
    n = workers or os.cpu_count() or 1
    resolved = resolve_agents(cfg, workers=2 if backend == "ray" or n > 1 else 1)
    folder = RunFolder(Path(out))
    done = folder.open(cfg)
    replay_dir = None
    if replays:
        (Path(out) / "replays").mkdir(exist_ok=True)
        replay_dir = str(Path(out).resolve() / "replays")
    todo = [(a, b, k) for a, b in cfg.pairings() for k in range(cfg.deals) if (a, b, k) not in done]
    total = len(cfg.pairings()) * cfg.deals
    if log is not None:
        _say_folder(log, out, total, len(todo))
    # Say the note as this process starts compiling anything (ginenv.compiling), the warm-up below
    # included: the first deal of a fresh install then waits on the compiler, not on the games.
    compiling.note_once()

    def keep(record: dict[str, Any]) -> None:
        folder.append(record)
        done[(record["a"], record["b"], record["deal"])] = record
        if on_record:
            on_record(record)

    bar = None
    try:
        if todo and compiling.pending(*compiled_owners(cfg, resolved, folder.checkpoints)):
            keep(_compile_first(cfg, todo.pop(0), resolved, folder.checkpoints, replay_dir, log))
        if progress:
            from tqdm import tqdm

            bar = tqdm(
                total=total, initial=total - len(todo), unit="deal", desc="duplicate deals", smoothing=0.05
            )
        for record in run_units(
            cfg,
            todo,
            backend=backend,
            workers=workers,
            resolved=resolved,
            digests=folder.checkpoints,
            replay_dir=replay_dir,
        ):
            keep(record)
            if bar:
                bar.update(1)
    except KeyboardInterrupt as err:
        # Ctrl-C or SIGTERM (ginenv.experiments.stopping): the workers are stopped, every finished
        # deal is already on disk; the stop says where, for the one line the command prints.
        stop = Stopped.of(err)
        stop.kept = f"finished deals are kept in {out}"
        raise stop from None
    finally:
        if bar:
            bar.close()
    order = {p: i for i, p in enumerate(cfg.pairings())}
    return sorted(done.values(), key=lambda r: (order.get((r["a"], r["b"]), 1 << 30), r["deal"]))
