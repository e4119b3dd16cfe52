"""The evaluation harness: duplicate deals between agents, played in parallel, resumable.

This module owns *playing* evaluations; :mod:`ginenv.experiments.eval.stats` owns the statistics and
:mod:`ginenv.experiments.eval.report` the outputs. Agents are driven through the env's AEC API only
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
A stop by Ctrl-C or SIGTERM (:mod:`ginenv.experiments.stopping`) ends the workers at once and raises
:class:`~ginenv.experiments.stopping.Stopped` naming the folder that keeps the finished deals.

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
the deck; ``seed="random"`` (:func:`random_seed`, from the OS) is for untrusted agents, and the drawn
seed is recorded with the results so the run can be reproduced afterwards. A ``checkpoint:PATH``
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
import hashlib
import json
import os
import re
import secrets
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ginenv.agents import registry, specs
from ginenv.agents.arena import AgentError, GameRecord, agent_seed, deal_seed, is_legal_action, play_game
from ginenv.agents.registry import UnknownAgentError
from ginenv.agents.specs import CHECKPOINT_PREFIX, Spec
from ginenv.experiments.errors import UsageError
from ginenv.experiments.stopping import Stopped

from ginenv.engine import DEFAULT_TURN_LIMIT, check_turn_limit
from ginenv.rules import Rules
from ginenv.validation import as_int, is_int

# Re-exported: the arena owns them, the harness's users have always found them here.
__all__ = ["AgentError", "agent_seed", "deal_seed", "is_legal_action"]

Format = Literal["round_robin", "gauntlet", "adjacent"]
Unit = Literal["hand", "match"]
Backend = Literal["local", "ray"]

#: Most duplicate deals per pairing. Every finished deal is kept in memory (about 1 KB) for the
#: statistics, so a larger run would exhaust memory long before it finished; split it into runs.
MAX_DEALS = 1_000_000

#: Most local worker processes (far above any machine's cores; a typo must not fork thousands).
MAX_WORKERS = 1024

#: Default seconds an ``exec:`` agent may take for one decision before it forfeits the game.
DEFAULT_TIME_LIMIT = 10.0


#: A harness configuration or run folder that cannot be used, with what is allowed: the one usage
#: error (:class:`ginenv.experiments.errors.UsageError`) under the name the harness has always used.
HarnessError = UsageError


def check_seed(seed: object, what: str = "seed", random_ok: bool = False) -> int:
    """``seed`` as a non-negative int (any integer type); anything else raises HarnessError.

    With ``random_ok`` the string ``"random"`` is accepted too and draws :func:`random_seed`.
    """
    if random_ok and seed == "random":
        return random_seed()
    number = as_int(seed)
    if number is None or number < 0:
        allowed = "a non-negative integer or 'random'" if random_ok else "a non-negative integer"
        raise HarnessError(f"{what} must be {allowed}, got {seed!r}")
    return number


def check_time_limit(limit: object, what: str = "time_limit") -> float:
    """``limit`` as seconds in (0, 3600] for an ``exec:`` agent's decision; else HarnessError."""
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 < limit <= 3600:
        raise HarnessError(
            f"{what} must be a number of seconds in (0, 3600] (for exec: agents), got {limit!r}"
        )
    return float(limit)


def random_seed() -> int:
    """A master seed drawn from the OS (``secrets``): deals nobody can predict from a public seed."""
    return secrets.randbits(63)


@dataclass(frozen=True)
class EvalConfig:
    """What to evaluate. Every field changes the results, so all of them key the run folder."""

    #: Agent specs (:mod:`ginenv.agents.specs`): registered names, ``checkpoint:PATH``,
    #: ``package.module:Name``, ``path/to/file.py:Name``, ``exec:COMMAND``.
    agents: tuple[str, ...]
    #: ``round_robin``: every pair; ``gauntlet``: the first agent against each of the others;
    #: ``adjacent``: each agent against the next one in the list (a ladder's neighbours).
    format: Format = "round_robin"
    #: Duplicate deals per pairing (each is played twice, seats swapped); at most MAX_DEALS.
    deals: int = 100
    #: ``hand``: a deal is one hand; ``match``: a deal is a match to ``rules.target``.
    unit: Unit = "hand"
    #: Rule options (a preset name resolved by the caller).
    rules: Rules = field(default_factory=Rules)
    #: Master seed of the deals and of the agents' per-hand seeds (non-negative).
    seed: int = 0
    #: Draws per hand after which the hand (in match units, the match) is truncated: 0 points.
    turn_limit: int = DEFAULT_TURN_LIMIT
    #: Seconds an ``exec:COMMAND`` agent may take for one decision before it forfeits the game.
    time_limit: float = DEFAULT_TIME_LIMIT

    def __post_init__(self) -> None:
        if not isinstance(self.agents, (list, tuple)) or not all(isinstance(a, str) for a in self.agents):
            raise HarnessError(f"agents must be a list of agent specs (strings), got {self.agents!r}")
        object.__setattr__(self, "agents", tuple(self.agents))
        if len(self.agents) < 2:
            raise HarnessError(f"an evaluation needs at least two agents, got {list(self.agents)}")
        if len(set(self.agents)) != len(self.agents):
            raise HarnessError(f"agent names must be distinct, got {list(self.agents)}")
        if self.format not in ("round_robin", "gauntlet", "adjacent"):
            raise HarnessError(f"format must be 'round_robin', 'gauntlet' or 'adjacent', got {self.format!r}")
        if self.unit not in ("hand", "match"):
            raise HarnessError(f"unit must be 'hand' or 'match', got {self.unit!r}")
        # bool is an int in Python: `deals: true` must not pass as 1.
        if not is_int(self.deals) or self.deals < 1:
            raise HarnessError(f"deals must be a positive integer, got {self.deals!r}")
        if self.deals > MAX_DEALS:
            raise HarnessError(
                f"deals must be at most {MAX_DEALS:,} duplicate deals per pairing "
                f"({2 * MAX_DEALS:,} games; every finished deal is held in memory), got {self.deals:,}; "
                "split a bigger evaluation into several runs (--out folders, other seeds)"
            )
        if not isinstance(self.rules, Rules):
            raise HarnessError(f"rules must be a ginenv.rules.Rules, got {type(self.rules).__name__}")
        object.__setattr__(self, "seed", check_seed(self.seed))
        try:
            object.__setattr__(self, "turn_limit", check_turn_limit(self.turn_limit))
        except ValueError as err:
            raise HarnessError(str(err)) from None
        object.__setattr__(self, "time_limit", check_time_limit(self.time_limit))

    def pairings(self) -> list[tuple[str, str]]:
        """The (A, B) pairs to play, in a fixed order."""
        a = self.agents
        if self.format == "gauntlet":
            return [(a[0], b) for b in a[1:]]
        if self.format == "adjacent":
            return [(a[i + 1], a[i]) for i in range(len(a) - 1)]
        return [(a[i], a[j]) for i in range(len(a)) for j in range(i + 1, len(a))]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (rules as a dict). ``time_limit`` is left out unless an ``exec:`` agent
        plays, so it keys only the runs it can change."""
        d = dataclasses.asdict(self)
        d["agents"] = list(self.agents)
        d["rules"] = self.rules.to_dict()
        if not any(a.startswith(specs.EXEC_PREFIX) for a in self.agents):
            del d["time_limit"]
        return d

    def checkpoints(self) -> dict[str, str]:
        """SHA-256 of each ``checkpoint:PATH`` agent's file, by agent name (read now)."""
        return checkpoint_hashes(self.agents)

    def fingerprint(self, checkpoints: dict[str, str] | None = None) -> str:
        """Short hash of the configuration and of every checkpoint file's content.

        Stored in the run folder to refuse mismatched resumes: a checkpoint rewritten at the same
        path is another network, so it must not resume a run of the old one.
        """
        key = self.to_dict()
        hashes = self.checkpoints() if checkpoints is None else checkpoints
        if hashes:
            key["checkpoints"] = hashes
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def checkpoint_hashes(names: Iterable[str]) -> dict[str, str]:
    """SHA-256 of the file of each ``checkpoint:PATH`` name and of the weights registered with a
    name (``neural``: the shipped network); an unreadable file raises HarnessError."""
    hashes: dict[str, str] = {}
    for name in names:
        if name.startswith(CHECKPOINT_PREFIX):
            path = Path(name[len(CHECKPOINT_PREFIX) :])
        else:
            weights = registry.weights_of(name)
            if weights is None:
                continue
            path = weights
        digest = hashlib.sha256()
        try:
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        except OSError as err:
            raise HarnessError(f"cannot read checkpoint {path}: {err.strerror or err}") from None
        hashes[name] = digest.hexdigest()
    return hashes


# ---------------------------------------------------------------------------- playing


def check_specs(names: Sequence[str], rules: Rules | None = None, workers: int = 1) -> dict[str, Spec]:
    """Resolve and build once every agent spec of ``names``, before any game is played.

    Returns each spec's portable form (what worker processes rebuild agents from). A spec that
    cannot be built raises HarnessError with one line naming the spec and the cause.
    """
    resolved: dict[str, Spec] = {}
    for name in names:
        try:
            resolved[name] = specs.check(name, rules=rules, workers=workers)
        except UnknownAgentError as err:  # AgentSpecError included
            raise HarnessError(str(err)) from None
    return resolved


def resolve_agents(cfg: EvalConfig, workers: int = 1) -> dict[str, Spec]:
    """:func:`check_specs` of every agent of ``cfg``, told its rules."""
    return check_specs(cfg.agents, cfg.rules, workers)


def make_agent(
    name: str | Spec, digest: str | None = None, rules: Rules | None = None, time_limit: float | None = None
) -> Any:
    """A new, untouched agent of spec ``name`` built by the one protocol (:func:`ginenv.agents.make`),
    told the ``rules`` of the table.

    ``digest``, for a ``checkpoint:PATH`` spec, is the sha256 the run was keyed by: a file whose
    content changed since is refused (HarnessError) rather than mixing two networks in one run.
    """
    spec = specs.resolve(name)
    if spec.kind != "checkpoint" or not digest:
        return specs.make(spec, rules=rules, time_limit=time_limit)
    from ginenv.agents.neural import CheckpointError

    try:
        return specs.make(spec, rules=rules, digest=digest)
    except CheckpointError as err:
        raise HarnessError(f"{err}; the run was keyed by the earlier content, choose another --out") from None


def fresh_agents(
    names: Sequence[str],
    rules: Rules,
    time_limit: float = DEFAULT_TIME_LIMIT,
    resolved: dict[str, Spec] | None = None,
    digests: dict[str, str] | None = None,
) -> list[Any]:
    """New agents of ``names`` for one game (:func:`make_agent` each, from the ``resolved`` spec when
    given); a constructor that raises is the agent's :class:`AgentError`, with its traceback."""
    players = []
    for name in names:
        try:
            players.append(
                make_agent((resolved or {}).get(name, name), (digests or {}).get(name), rules, time_limit)
            )
        except HarnessError:
            raise
        except Exception as err:
            raise AgentError(
                name, f"could not be built: {type(err).__name__}: {err}", traceback.format_exc()
            ) from err
    return players


def _seat(value: Any) -> int:
    """Seat index from an agent name (``player_1``) or an int."""
    return value if isinstance(value, int) else int(str(value).rsplit("_", 1)[-1])


def _game_luck(record: GameRecord) -> float:
    """Seat 0's luck over the game's hands (the control variate of :mod:`ginenv.experiments.eval.luck`).

    Every hand counts as it stands, a truncated or forfeited one included: whether a game ends
    that way depends on later draws, so zeroing its luck would bias the adjusted points, while
    points minus luck stays unbiased whatever the points are (0 for a truncation included).
    """
    from ginenv.experiments.eval.luck import state_luck

    return float(sum(state_luck(state) for state in record.states))


def play_unit(
    pairing: tuple[str, str],
    deal: int,
    cfg: EvalConfig,
    cache: dict[str, Any],
    resolved: dict[str, Spec] | None = None,
    digests: dict[str, str] | None = None,
    replay_dir: str | None = None,
) -> dict[str, Any]:
    """Both games of one duplicate deal between ``pairing = (A, B)``: one JSON-ready record.

    ``cache`` keeps the env between units (its state is dealt afresh by every ``reset``); agents are
    never cached: each game gets new ones built from their ``resolved`` specs (with the checkpoint
    ``digests`` the run is keyed by). Each game is played by :func:`ginenv.agents.arena.play_game`.
    With ``replay_dir``, each game is also written there as a replay (:func:`replay_name`).
    """
    from ginenv import gin_rummy_v0

    env = cache.get("_env")
    if env is None:
        env = gin_rummy_v0.raw_env(rules=cfg.rules, mode=cfg.unit, turn_limit=cfg.turn_limit)
        cache["_env"] = env
    a_name, b_name = pairing
    games = []
    luck = 0.0
    for game in (0, 1):
        seats = (a_name, b_name) if game == 0 else (b_name, a_name)
        players = fresh_agents(seats, cfg.rules, cfg.time_limit, resolved, digests)
        record = play_game(env, players, seed=cfg.seed, deal=deal, names=seats)
        games.append(summarise_game(record, a_seat=game))
        # The luck is seat 0's: A's in the first game, minus it in the second (zero-sum).
        luck += _game_luck(record) * (1.0 if game == 0 else -1.0)
        if replay_dir is not None and record.forfeit is None:
            from ginenv.replay import hand_replay, match_replay, save_replay

            data = match_replay(env.match) if env.match is not None else hand_replay(env.hand)
            save_replay(data, Path(replay_dir) / replay_name(seats, deal))
    return {
        "a": a_name,
        "b": b_name,
        "deal": deal,
        "games": games,
        "pair_sum": games[0]["a_points"] + games[1]["a_points"],
        "pair_luck": round(luck, 6),
        "truncated": sum(g["truncated"] for g in games),
        "forfeits": sum(g["a_forfeits"] + g["b_forfeits"] for g in games),
    }


def agent_slug(name: str) -> str:
    """An agent name as a piece of a file name (``checkpoint:PATH`` by the file's stem)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", Path(name.partition(":")[2]).stem if ":" in name else name)


def replay_name(seats: Sequence[str], deal: int) -> str:
    """File name of the replay of one game: the agents in seat order (``player_0`` first) and the deal."""
    return f"deal{deal:06d}-{agent_slug(seats[0])}-vs-{agent_slug(seats[1])}.json"


def summarise_game(record: GameRecord, a_seat: int) -> dict[str, Any]:
    """Reduce a played game to A's view: points, hands won, kinds, lengths, decision times."""
    b_seat = 1 - a_seat
    kinds: dict[str, int] = {}
    won = [0, 0]
    for hand in record.hands:
        kinds[hand["kind"]] = kinds.get(hand["kind"], 0) + 1
        if hand["winner"] is not None:
            won[_seat(hand["winner"])] += 1
    match_winner = None
    final = record.hands[-1].get("match_result") if record.hands else None
    if final:
        match_winner = "a" if _seat(final["winner"]) == a_seat else "b"
    forfeit = record.forfeit
    forfeits = [0, 0]
    hands = len(record.hands)
    if forfeit is not None:
        # The forfeited hand counts as a hand played, won by the other seat.
        forfeits[forfeit["seat"]] = 1
        won[1 - forfeit["seat"]] += 1
        kinds["forfeit"] = kinds.get("forfeit", 0) + 1
        hands += 1
        match_winner = "b" if forfeit["seat"] == a_seat else "a"
    return {
        "a_seat": a_seat,
        "a_points": round(record.returns[a_seat]),
        "a_hands_won": won[a_seat],
        "b_hands_won": won[b_seat],
        "hands": hands,
        "kinds": kinds,
        "truncated": record.truncated,
        "decisions": record.decisions[0] + record.decisions[1],
        "a_decisions": record.decisions[a_seat],
        "b_decisions": record.decisions[b_seat],
        "a_think_s": record.think[a_seat],
        "b_think_s": record.think[b_seat],
        "match_winner": match_winner,
        "a_forfeits": forfeits[a_seat],
        "b_forfeits": forfeits[b_seat],
        "forfeit_reason": None if forfeit is None else forfeit["reason"],
    }


def _run_chunk(
    cfg_dict: dict[str, Any],
    units: list[tuple[str, str, int]],
    resolved: dict[str, Spec] | None = None,
    digests: dict[str, str] | None = None,
    replay_dir: str | None = None,
) -> list[dict[str, Any]]:
    single_thread_torch()
    cfg = config_from_dict(cfg_dict)
    cache: dict[str, Any] = {}
    return [play_unit((a, b), deal, cfg, cache, resolved, digests, replay_dir) for a, b, deal in units]


def single_thread_torch() -> None:
    """Run torch on one thread in this process (set before torch loads, or on it if loaded).

    For processes that play games: each plays one game at a time, so torch's threads only spin.
    """
    # A worker process plays one game at a time and the parallelism is across workers: a neural
    # agent's one-observation forward pass on several torch threads spun against the other workers
    # and took 40 ms instead of 1.5 ms (measured on 2 cores). Set before torch loads, or on it.
    os.environ["OMP_NUM_THREADS"] = "1"
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


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
    #: sha256 of each ``checkpoint:PATH`` agent's file, read by :meth:`open` (the run's key).
    checkpoints: dict[str, str] = field(default_factory=dict)

    @property
    def results_path(self) -> Path:
        """Where finished units are appended."""
        return self.path / "results.jsonl"

    def open(self, cfg: EvalConfig) -> dict[tuple[str, str, int], dict[str, Any]]:
        """Create or reopen the folder for ``cfg``; returns the units already finished.

        A path that is a file, or a folder that cannot be written, raises HarnessError before any
        game is played.
        """
        if self.path.exists() and not self.path.is_dir():
            raise HarnessError(f"--out {self.path} is a file, not a folder; choose a folder for the run")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise HarnessError(f"cannot create the run folder {self.path}: {err.strerror or err}") from None
        if not os.access(self.path, os.W_OK | os.X_OK):
            raise HarnessError(f"the run folder {self.path} is not writable; choose another --out")
        meta = self.path / "config.json"
        hashes = cfg.checkpoints()
        self.checkpoints = hashes
        fingerprint = cfg.fingerprint(hashes)
        if meta.exists():
            try:
                stored = json.loads(meta.read_text())
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                raise HarnessError(
                    f"{meta} is corrupt; delete the run folder or pick another --out"
                ) from None
            if not isinstance(stored, dict):
                raise HarnessError(f"{meta} is corrupt; delete the run folder or pick another --out")
            if stored.get("fingerprint") != fingerprint:
                changed = [
                    name
                    for name, digest in hashes.items()
                    if name in (stored.get("checkpoints") or {}) and stored["checkpoints"][name] != digest
                ]
                if changed and stored.get("config") == cfg.to_dict():
                    raise HarnessError(
                        f"{self.path} holds a run of other networks: {', '.join(changed)} changed since "
                        "the run began (its file's content differs); choose another --out"
                    )
                raise HarnessError(
                    f"{self.path} holds a run with other settings ({stored.get('config')}); "
                    "resume with the same arguments, or choose another --out"
                )
        else:
            doc = {"fingerprint": fingerprint, "config": cfg.to_dict(), "checkpoints": hashes}
            try:
                meta.write_text(json.dumps(doc, indent=1))
            except OSError as err:
                raise HarnessError(
                    f"cannot write {meta}: {err.strerror or err}; choose another --out"
                ) from None
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


def _ignore_sigint() -> None:
    # Ctrl-C reaches the whole process group: the parent alone stops the run (one message, the
    # pool terminated), instead of every worker printing its own KeyboardInterrupt traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


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
    cfg_dict = cfg.to_dict()
    chunks = list(_chunks(units, chunk))
    n = workers or os.cpu_count() or 1
    many = backend == "ray" or (n > 1 and len(chunks) > 1)
    if resolved is None:
        resolved = resolve_agents(cfg, workers=2 if many else 1)
    if backend == "ray":
        yield from _run_ray(cfg_dict, chunks, resolved, digests, replay_dir)
        return
    if not many:
        cache: dict[str, Any] = {}
        for a, b, deal in units:
            yield play_unit((a, b), deal, cfg, cache, resolved, digests, replay_dir)
        return
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    pool = ctx.Pool(min(n, len(chunks)), initializer=_ignore_sigint)
    try:
        jobs = [(cfg_dict, c, resolved, digests, replay_dir) for c in chunks]
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
        dict[str, Any], list[tuple[str, str, int]], dict[str, Spec] | None, dict[str, str] | None, str | None
    ],
) -> list[dict[str, Any]]:
    return _run_chunk(*args)


def _run_ray(
    cfg_dict: dict[str, Any],
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
    remote = ray.remote(_run_chunk)
    pending = [remote.remote(cfg_dict, c, resolved, digests, replay_dir) for c in chunks]
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
    change the results. ``log`` receives one line when the folder already held finished deals.
    """
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
    if log is not None and len(todo) < total:
        if not todo:
            log(
                f"reused the {total} finished deals in {out}: nothing left to play (another --out plays anew)"
            )
        else:
            log(f"resuming {out}: {total - len(todo)} of {total} deals already finished, {len(todo)} to play")
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=total, initial=total - len(todo), unit="deal", desc="duplicate deals", smoothing=0.05
        )
    try:
        for record in run_units(
            cfg,
            todo,
            backend=backend,
            workers=workers,
            resolved=resolved,
            digests=folder.checkpoints,
            replay_dir=replay_dir,
        ):
            folder.append(record)
            done[(record["a"], record["b"], record["deal"])] = record
            if on_record:
                on_record(record)
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
