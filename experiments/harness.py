"""The evaluation harness: duplicate deals between agents, played in parallel, resumable.

This module owns *playing* evaluations; :mod:`ginenv.experiments.stats` owns the statistics and
:mod:`ginenv.experiments.report` the outputs. Agents are driven through the env's AEC API only
(``observe()`` for their seat), exactly as a user's agent would be.

**Duplicate deals.** Every deal (one hand, or one match's sequence of hands) is played twice with the
seats swapped and the dealer index kept, so each agent holds in the second game exactly the cards
its opponent held in the first: the luck of the deal cancels in the pair's sum. Deal ``k`` of a run
is the same for every pairing (common random numbers), derived from ``(seed, k)`` alone. An agent is
reseeded at every hand from ``(seed, k, hand, role)`` where ``role`` is dealer or non-dealer, so a
deterministic or seeded agent playing itself scores exactly zero on every duplicate pair.

**Units of work** are ``(pairing, deal)``; each finishes as one JSON line appended to
``results.jsonl`` in the run folder. A run started again with the same arguments skips the units
already there (a torn last line from a kill is dropped), so its totals equal an uninterrupted run's.

**Backends**: ``local`` (a process pool over every core) and ``ray`` (tasks on the cluster named by
the usual ``RAY_ADDRESS``, or a local Ray instance); both return identical records for a seed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ginenv.rules import Rules

Format = Literal["round_robin", "gauntlet", "adjacent"]
Unit = Literal["hand", "match"]
Backend = Literal["local", "ray"]


class HarnessError(ValueError):
    """A harness configuration or run folder that cannot be used, with what is allowed."""


@dataclass(frozen=True)
class EvalConfig:
    """What to evaluate. Every field changes the results, so all of them key the run folder."""

    #: Agent names (registry names, or ``checkpoint:PATH`` / baseline names when registered).
    agents: tuple[str, ...]
    #: ``round_robin``: every pair; ``gauntlet``: the first agent against each of the others;
    #: ``adjacent``: each agent against the next one in the list (a ladder's neighbours).
    format: Format = "round_robin"
    #: Duplicate deals per pairing (each is played twice, seats swapped).
    deals: int = 100
    #: ``hand``: a deal is one hand; ``match``: a deal is a match to ``rules.target``.
    unit: Unit = "hand"
    #: Rule options (a preset name resolved by the caller).
    rules: Rules = field(default_factory=Rules)
    #: Master seed of the deals and of the agents' per-hand seeds.
    seed: int = 0

    def __post_init__(self) -> None:
        if len(self.agents) < 2:
            raise HarnessError(f"an evaluation needs at least two agents, got {list(self.agents)}")
        if len(set(self.agents)) != len(self.agents):
            raise HarnessError(f"agent names must be distinct, got {list(self.agents)}")
        if self.format not in ("round_robin", "gauntlet", "adjacent"):
            raise HarnessError(f"format must be 'round_robin', 'gauntlet' or 'adjacent', got {self.format!r}")
        if self.unit not in ("hand", "match"):
            raise HarnessError(f"unit must be 'hand' or 'match', got {self.unit!r}")
        if not isinstance(self.deals, int) or self.deals < 1:
            raise HarnessError(f"deals must be a positive integer, got {self.deals!r}")

    def pairings(self) -> list[tuple[str, str]]:
        """The (A, B) pairs to play, in a fixed order."""
        a = self.agents
        if self.format == "gauntlet":
            return [(a[0], b) for b in a[1:]]
        if self.format == "adjacent":
            return [(a[i + 1], a[i]) for i in range(len(a) - 1)]
        return [(a[i], a[j]) for i in range(len(a)) for j in range(i + 1, len(a))]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (rules as a dict)."""
        d = dataclasses.asdict(self)
        d["agents"] = list(self.agents)
        d["rules"] = self.rules.to_dict()
        return d

    def fingerprint(self) -> str:
        """Short hash of the configuration, stored in the run folder to refuse mismatched resumes."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:16]


def deal_seed(seed: int, deal: int) -> int:
    """The env seed of deal ``deal`` (deck, and later hands of a match), independent of the pairing."""
    return int(np.random.SeedSequence([seed, deal, 0x6D]).generate_state(1, dtype=np.uint32)[0])


def agent_seed(seed: int, deal: int, hand: int, role: int) -> int:
    """Per-hand seed of the agent in ``role`` (0 non-dealer, 1 dealer) of a deal's ``hand``."""
    return int(np.random.SeedSequence([seed, deal, hand, role, 0xA6]).generate_state(1, dtype=np.uint32)[0])


# ---------------------------------------------------------------------------- playing


def _make_agents(names: Iterable[str]) -> dict[str, Any]:
    from ginenv import agents

    return {name: agents.make(name) for name in names}


def _seat(value: Any) -> int:
    """Seat index from an agent name (``player_1``) or an int."""
    return value if isinstance(value, int) else int(str(value).rsplit("_", 1)[-1])


def play_game(env: Any, players: Sequence[Any], cfg: EvalConfig, deal: int) -> dict[str, Any]:
    """Play one game of a deal with ``players[i]`` in seat ``player_i``; returns per-seat facts.

    The dealer index is ``deal % 2`` in both games of a deal, so swapping the players swaps hands.
    Returns are summed from ``last()``, the rewards each agent is shown (points, and in match mode
    the bonuses on the final hand), so A's total is what an RL agent in its seat would collect.
    """
    dealer = deal % 2
    env.reset(seed=deal_seed(cfg.seed, deal), options={"dealer": dealer})
    seats = list(env.possible_agents)
    returns = [0.0, 0.0]
    decisions = [0, 0]
    think = [0.0, 0.0]
    hands: list[dict[str, Any]] = []

    def reseed(hand_index: int, hand_dealer: int) -> None:
        for p in (0, 1):
            players[p].reset(agent_seed(cfg.seed, deal, hand_index, 1 if p == hand_dealer else 0))

    reseed(0, dealer)
    for agent_id in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        p = seats.index(agent_id)
        returns[p] += reward
        if termination or truncation:
            env.step(None)
            continue
        t0 = time.perf_counter()
        action = players[p].act(obs)
        think[p] += time.perf_counter() - t0
        decisions[p] += 1
        env.step(action)
        info = env.infos.get(seats[0], {})
        result = info.get("result")
        if result is not None and result["hand_index"] == len(hands):
            hands.append(result)
            if cfg.unit == "match" and "match_result" not in result:
                reseed(len(hands), _seat(info["dealer"]))
    return {"hands": hands, "returns": returns, "decisions": decisions, "think": think}


def play_unit(pairing: tuple[str, str], deal: int, cfg: EvalConfig, cache: dict[str, Any]) -> dict[str, Any]:
    """Both games of one duplicate deal between ``pairing = (A, B)``: one JSON-ready record."""
    from ginenv import gin_rummy_v0

    env = cache.get("_env")
    if env is None:
        env = gin_rummy_v0.raw_env(rules=cfg.rules, mode=cfg.unit)
        cache["_env"] = env
    a_name, b_name = pairing
    for name in pairing:
        if name not in cache:
            cache.update(_make_agents([name]))
    games = []
    for game in (0, 1):
        seats = (a_name, b_name) if game == 0 else (b_name, a_name)
        facts = play_game(env, [cache[seats[0]], cache[seats[1]]], cfg, deal)
        games.append(summarise_game(facts, a_seat=game))
    return {
        "a": a_name,
        "b": b_name,
        "deal": deal,
        "games": games,
        "pair_sum": games[0]["a_points"] + games[1]["a_points"],
    }


def summarise_game(facts: dict[str, Any], a_seat: int) -> dict[str, Any]:
    """Reduce a played game to A's view: points, hands won, kinds, lengths, decision times."""
    b_seat = 1 - a_seat
    kinds: dict[str, int] = {}
    won = [0, 0]
    for hand in facts["hands"]:
        kinds[hand["kind"]] = kinds.get(hand["kind"], 0) + 1
        if hand["winner"] is not None:
            won[_seat(hand["winner"])] += 1
    match_winner = None
    final = facts["hands"][-1].get("match_result") if facts["hands"] else None
    if final:
        match_winner = "a" if _seat(final["winner"]) == a_seat else "b"
    return {
        "a_seat": a_seat,
        "a_points": round(facts["returns"][a_seat]),
        "a_hands_won": won[a_seat],
        "b_hands_won": won[b_seat],
        "hands": len(facts["hands"]),
        "kinds": kinds,
        "decisions": facts["decisions"][0] + facts["decisions"][1],
        "a_decisions": facts["decisions"][a_seat],
        "b_decisions": facts["decisions"][b_seat],
        "a_think_s": facts["think"][a_seat],
        "b_think_s": facts["think"][b_seat],
        "match_winner": match_winner,
    }


def _run_chunk(cfg_dict: dict[str, Any], units: list[tuple[str, str, int]]) -> list[dict[str, Any]]:
    cfg = config_from_dict(cfg_dict)
    cache: dict[str, Any] = {}
    return [play_unit((a, b), deal, cfg, cache) for a, b, deal in units]


def config_from_dict(d: dict[str, Any]) -> EvalConfig:
    """Inverse of :meth:`EvalConfig.to_dict`."""
    d = dict(d)
    d["agents"] = tuple(d["agents"])
    d["rules"] = Rules.from_dict(d["rules"])
    return EvalConfig(**d)


# ---------------------------------------------------------------------------- runs


@dataclass
class RunFolder:
    """A run's folder: ``config.json`` (the fingerprint) and ``results.jsonl`` (one line a unit)."""

    path: Path

    @property
    def results_path(self) -> Path:
        """Where finished units are appended."""
        return self.path / "results.jsonl"

    def open(self, cfg: EvalConfig) -> dict[tuple[str, str, int], dict[str, Any]]:
        """Create or reopen the folder for ``cfg``; returns the units already finished."""
        self.path.mkdir(parents=True, exist_ok=True)
        meta = self.path / "config.json"
        if meta.exists():
            try:
                stored = json.loads(meta.read_text())
            except json.JSONDecodeError:
                raise HarnessError(
                    f"{meta} is corrupt; delete the run folder or pick another --out"
                ) from None
            if stored.get("fingerprint") != cfg.fingerprint():
                raise HarnessError(
                    f"{self.path} holds a run with other settings ({stored.get('config')}); "
                    "resume with the same arguments, or choose another --out"
                )
        else:
            meta.write_text(json.dumps({"fingerprint": cfg.fingerprint(), "config": cfg.to_dict()}, indent=1))
        return self._read_done()

    def _read_done(self) -> dict[tuple[str, str, int], dict[str, Any]]:
        done: dict[tuple[str, str, int], dict[str, Any]] = {}
        path = self.results_path
        if not path.exists():
            return done
        raw = path.read_bytes()
        good_upto = 0
        for line in raw.splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break  # torn write from a kill: dropped, the unit is replayed
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                break
            done[(rec["a"], rec["b"], rec["deal"])] = rec
            good_upto += len(line)
        if good_upto != len(raw):
            with path.open("r+b") as fh:
                fh.truncate(good_upto)
        return done

    def append(self, record: dict[str, Any]) -> None:
        """Append one finished unit durably."""
        with self.results_path.open("a") as fh:
            fh.write(json.dumps(record, sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())


def _chunks(units: list[tuple[str, str, int]], size: int) -> Iterator[list[tuple[str, str, int]]]:
    for i in range(0, len(units), size):
        yield units[i : i + size]


def run_units(
    cfg: EvalConfig,
    units: list[tuple[str, str, int]],
    backend: Backend = "local",
    workers: int = 0,
    chunk: int = 4,
) -> Iterator[dict[str, Any]]:
    """Play units on a backend, yielding records as they finish (in any order)."""
    if not units:
        return
    cfg_dict = cfg.to_dict()
    chunks = list(_chunks(units, chunk))
    if backend == "ray":
        yield from _run_ray(cfg_dict, chunks)
        return
    if backend != "local":
        raise HarnessError(f"backend must be 'local' or 'ray', got {backend!r}")
    n = workers or os.cpu_count() or 1
    if n == 1 or len(chunks) == 1:
        cache: dict[str, Any] = {}
        for a, b, deal in units:
            yield play_unit((a, b), deal, cfg, cache)
        return
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    with ctx.Pool(min(n, len(chunks))) as pool:
        for records in pool.imap_unordered(_run_chunk_star, [(cfg_dict, c) for c in chunks]):
            yield from records


def _run_chunk_star(args: tuple[dict[str, Any], list[tuple[str, str, int]]]) -> list[dict[str, Any]]:
    return _run_chunk(*args)


def _run_ray(cfg_dict: dict[str, Any], chunks: list[list[tuple[str, str, int]]]) -> Iterator[dict[str, Any]]:
    try:
        import ray
    except ImportError:
        raise HarnessError("the ray backend needs Ray: pip install 'ray>=2.9'") from None
    if not ray.is_initialized():
        # RAY_ADDRESS (the usual Ray setting) names a cluster; without it Ray starts a local instance.
        ray.init(address=os.environ.get("RAY_ADDRESS") or None, ignore_reinit_error=True, log_to_driver=False)
    remote = ray.remote(_run_chunk)
    pending = [remote.remote(cfg_dict, c) for c in chunks]
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            yield from ray.get(ref)


def evaluate(
    cfg: EvalConfig,
    out: str | Path,
    backend: Backend = "local",
    workers: int = 0,
    progress: bool = True,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Run (or resume) an evaluation in folder ``out``; returns every record, sorted by unit."""
    folder = RunFolder(Path(out))
    done = folder.open(cfg)
    todo = [(a, b, k) for a, b in cfg.pairings() for k in range(cfg.deals) if (a, b, k) not in done]
    bar = None
    if progress:
        from tqdm import tqdm

        total = len(cfg.pairings()) * cfg.deals
        bar = tqdm(
            total=total, initial=total - len(todo), unit="deal", desc="duplicate deals", smoothing=0.05
        )
    for record in run_units(cfg, todo, backend=backend, workers=workers):
        folder.append(record)
        done[(record["a"], record["b"], record["deal"])] = record
        if on_record:
            on_record(record)
        if bar:
            bar.update(1)
    if bar:
        bar.close()
    order = {p: i for i, p in enumerate(cfg.pairings())}
    return sorted(done.values(), key=lambda r: (order.get((r["a"], r["b"]), 1 << 30), r["deal"]))
