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
traceback; finished deals stay in the run folder.
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
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ginenv.engine import DEFAULT_TURN_LIMIT, check_turn_limit
from ginenv.rules import Rules

Format = Literal["round_robin", "gauntlet", "adjacent"]
Unit = Literal["hand", "match"]
Backend = Literal["local", "ray"]

#: Most duplicate deals per pairing. Every finished deal is kept in memory (about 1 KB) for the
#: statistics, so a larger run would exhaust memory long before it finished; split it into runs.
MAX_DEALS = 1_000_000

#: Most local worker processes (far above any machine's cores; a typo must not fork thousands).
MAX_WORKERS = 1024

CHECKPOINT_PREFIX = "checkpoint:"


class HarnessError(ValueError):
    """A harness configuration or run folder that cannot be used, with what is allowed."""


class AgentError(RuntimeError):
    """An agent raised (in ``make``, ``reset`` or ``act``) or returned an illegal action.

    Not a usage error: the agent's own code failed. ``agent`` is its name, ``detail`` says what it
    did and where, ``agent_traceback`` is the formatted traceback of its exception (empty for an
    illegal action). It pickles with its traceback text, so worker processes can report it.
    """

    def __init__(self, agent: str, detail: str, agent_traceback: str = "") -> None:
        super().__init__(agent, detail, agent_traceback)
        self.agent = agent
        self.detail = detail
        self.agent_traceback = agent_traceback

    def __str__(self) -> str:
        return f"agent {self.agent} {self.detail}"


def check_seed(seed: object, what: str = "seed", random_ok: bool = False) -> int:
    """``seed`` as a non-negative int (any integer type); anything else raises HarnessError.

    With ``random_ok`` the string ``"random"`` is accepted too and draws :func:`random_seed`.
    """
    if random_ok and seed == "random":
        return random_seed()
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        allowed = "a non-negative integer or 'random'" if random_ok else "a non-negative integer"
        raise HarnessError(f"{what} must be {allowed}, got {seed!r}")
    return int(seed)


def random_seed() -> int:
    """A master seed drawn from the OS (``secrets``): deals nobody can predict from a public seed."""
    return secrets.randbits(63)


@dataclass(frozen=True)
class EvalConfig:
    """What to evaluate. Every field changes the results, so all of them key the run folder."""

    #: Agent names (registry names, or ``checkpoint:PATH`` / baseline names when registered).
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

    def __post_init__(self) -> None:
        if not isinstance(self.agents, (list, tuple)) or not all(isinstance(a, str) for a in self.agents):
            raise HarnessError(f"agents must be a list of agent names, got {self.agents!r}")
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
        if isinstance(self.deals, bool) or not isinstance(self.deals, int) or self.deals < 1:
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
    """SHA-256 of the file of each ``checkpoint:PATH`` name; an unreadable file raises HarnessError."""
    hashes: dict[str, str] = {}
    for name in names:
        if not name.startswith(CHECKPOINT_PREFIX):
            continue
        path = Path(name[len(CHECKPOINT_PREFIX) :])
        digest = hashlib.sha256()
        try:
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        except OSError as err:
            raise HarnessError(f"cannot read checkpoint {path}: {err.strerror or err}") from None
        hashes[name] = digest.hexdigest()
    return hashes


def deal_seed(seed: int, deal: int) -> int:
    """The env seed of deal ``deal`` (deck, and later hands of a match), independent of the pairing."""
    return int(np.random.SeedSequence([seed, deal, 0x6D]).generate_state(1, dtype=np.uint32)[0])


def agent_seed(seed: int, deal: int, hand: int, role: int) -> int:
    """Per-hand seed of the agent in ``role`` (0 non-dealer, 1 dealer) of a deal's ``hand``."""
    return int(np.random.SeedSequence([seed, deal, hand, role, 0xA6]).generate_state(1, dtype=np.uint32)[0])


# ---------------------------------------------------------------------------- playing

#: Builds a fresh agent from its name: ``agents.make`` unless the caller passes its own factory
#: (a module-level function, so that worker processes can unpickle it).
AgentFactory = Callable[[str], Any]


def make_agent(name: str, digest: str | None = None, rules: Rules | None = None) -> Any:
    """A new, untouched agent of ``name`` (the harness's default factory: ``agents.make``), told the
    ``rules`` of the table.

    ``digest``, for a ``checkpoint:PATH`` name, is the sha256 the run was keyed by: a file whose
    content changed since is refused (HarnessError) rather than mixing two networks in one run.
    """
    from ginenv import agents

    if not name.startswith(CHECKPOINT_PREFIX):
        return agents.make(name, rules=rules)
    from ginenv.agents.neural import CheckpointError

    try:
        return agents.make(name, rules=rules, digest=digest) if digest else agents.make(name, rules=rules)
    except CheckpointError as err:
        raise HarnessError(f"{err}; the run was keyed by the earlier content, choose another --out") from None


def _fresh_agents(
    names: Sequence[str],
    factory: AgentFactory | None,
    digests: dict[str, str] | None = None,
    rules: Rules | None = None,
) -> list[Any]:
    players = []
    for name in names:
        try:
            if factory is None:
                players.append(make_agent(name, (digests or {}).get(name), rules))
            else:
                players.append(factory(name))
        except HarnessError:
            raise
        except Exception as err:
            raise AgentError(
                name, f"could not be built: {type(err).__name__}: {err}", traceback.format_exc()
            ) from err
    return players


def is_legal_action(action: object, mask: np.ndarray) -> bool:
    """Whether ``action`` is an integer (any integer type, not a bool) marked legal in ``mask``."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        return False
    return bool(0 <= action < len(mask) and mask[action])


def _seat(value: Any) -> int:
    """Seat index from an agent name (``player_1``) or an int."""
    return value if isinstance(value, int) else int(str(value).rsplit("_", 1)[-1])


def play_game(
    env: Any, players: Sequence[Any], cfg: EvalConfig, deal: int, names: Sequence[str] | None = None
) -> dict[str, Any]:
    """Play one game of a deal with ``players[i]`` in seat ``player_i``; returns per-seat facts.

    The dealer index is ``deal % 2`` in both games of a deal, so swapping the players swaps hands.
    Returns are summed from ``last()``, the rewards each agent is shown (points, and in match mode
    the bonuses on the final hand), so A's total is what an RL agent in its seat would collect.
    A truncated game (a hand reached the turn limit) returns 0 for both seats and ``truncated``.
    An exception of an agent, or an illegal action, raises :class:`AgentError` naming
    ``names[i]`` (default: the agents' ``name`` attributes).
    """
    names = (
        list(names)
        if names is not None
        else [getattr(p, "name", f"player_{i}") for i, p in enumerate(players)]
    )
    dealer = deal % 2
    env.reset(seed=deal_seed(cfg.seed, deal), options={"dealer": dealer})
    seats = list(env.possible_agents)
    returns = [0.0, 0.0]
    decisions = [0, 0]
    think = [0.0, 0.0]
    hands: list[dict[str, Any]] = []

    def blame(p: int, what: str, err: BaseException | None = None) -> AgentError:
        where = f"(deal {deal}, hand {len(hands)}, seat {seats[p]})"
        if err is None:
            return AgentError(names[p], f"{what} {where}")
        return AgentError(
            names[p], f"raised {type(err).__name__}: {err} in {what}() {where}", traceback.format_exc()
        )

    def reseed(hand_index: int, hand_dealer: int) -> None:
        for p in (0, 1):
            try:
                players[p].reset(agent_seed(cfg.seed, deal, hand_index, 1 if p == hand_dealer else 0))
            except Exception as err:
                raise blame(p, "reset", err) from err

    reseed(0, dealer)
    for agent_id in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        p = seats.index(agent_id)
        returns[p] += reward
        if termination or truncation:
            env.step(None)
            continue
        t0 = time.perf_counter()
        try:
            action = players[p].act(obs)
        except Exception as err:
            raise blame(p, "act", err) from err
        think[p] += time.perf_counter() - t0
        decisions[p] += 1
        # The env would refuse it too, but as a usage error: it is the agent's fault, say so.
        if not is_legal_action(action, obs["action_mask"]):
            legal = ", ".join(env.action_name(int(a)) for a in np.flatnonzero(obs["action_mask"]))
            raise blame(p, f"returned {action!r}, which is not a legal action here (legal: {legal})")
        env.step(int(action))
        info = env.infos.get(seats[0], {})
        result = info.get("result")
        if result is not None and result["hand_index"] == len(hands):
            hands.append(result)
            if cfg.unit == "match" and "match_result" not in result and result["kind"] != "truncated":
                reseed(len(hands), _seat(info["dealer"]))
    truncated = any(h["kind"] == "truncated" for h in hands)
    if truncated:
        # A truncated game has no result: points won in earlier hands of its match do not count.
        returns = [0.0, 0.0]
    return {
        "hands": hands,
        "returns": returns,
        "decisions": decisions,
        "think": think,
        "truncated": truncated,
    }


def play_unit(
    pairing: tuple[str, str],
    deal: int,
    cfg: EvalConfig,
    cache: dict[str, Any],
    agent_factory: AgentFactory | None = None,
    digests: dict[str, str] | None = None,
    replay_dir: str | None = None,
) -> dict[str, Any]:
    """Both games of one duplicate deal between ``pairing = (A, B)``: one JSON-ready record.

    ``cache`` keeps the env between units (its state is dealt afresh by every ``reset``); agents are
    never cached: each game gets new ones from ``agent_factory`` (default :func:`make_agent`, with
    the checkpoint ``digests`` the run is keyed by). With ``replay_dir``, each game is also written
    there as a replay (:func:`replay_name`).
    """
    from ginenv import gin_rummy_v0

    env = cache.get("_env")
    if env is None:
        env = gin_rummy_v0.raw_env(rules=cfg.rules, mode=cfg.unit, turn_limit=cfg.turn_limit)
        cache["_env"] = env
    a_name, b_name = pairing
    games = []
    for game in (0, 1):
        seats = (a_name, b_name) if game == 0 else (b_name, a_name)
        players = _fresh_agents(seats, agent_factory, digests, cfg.rules)
        facts = play_game(env, players, cfg, deal, names=seats)
        games.append(summarise_game(facts, a_seat=game))
        if replay_dir is not None:
            from ginenv.replay import hand_replay, match_replay, save_replay

            data = match_replay(env.match) if env.match is not None else hand_replay(env.hand)
            save_replay(data, Path(replay_dir) / replay_name(seats, deal))
    return {
        "a": a_name,
        "b": b_name,
        "deal": deal,
        "games": games,
        "pair_sum": games[0]["a_points"] + games[1]["a_points"],
        "truncated": sum(g["truncated"] for g in games),
    }


def agent_slug(name: str) -> str:
    """An agent name as a piece of a file name (``checkpoint:PATH`` by the file's stem)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", Path(name.partition(":")[2]).stem if ":" in name else name)


def replay_name(seats: Sequence[str], deal: int) -> str:
    """File name of the replay of one game: the agents in seat order (``player_0`` first) and the deal."""
    return f"deal{deal:06d}-{agent_slug(seats[0])}-vs-{agent_slug(seats[1])}.json"


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
        "truncated": bool(facts.get("truncated", False)),
        "decisions": facts["decisions"][0] + facts["decisions"][1],
        "a_decisions": facts["decisions"][a_seat],
        "b_decisions": facts["decisions"][b_seat],
        "a_think_s": facts["think"][a_seat],
        "b_think_s": facts["think"][b_seat],
        "match_winner": match_winner,
    }


def _run_chunk(
    cfg_dict: dict[str, Any],
    units: list[tuple[str, str, int]],
    agent_factory: AgentFactory | None = None,
    digests: dict[str, str] | None = None,
    replay_dir: str | None = None,
) -> list[dict[str, Any]]:
    single_thread_torch()
    cfg = config_from_dict(cfg_dict)
    cache: dict[str, Any] = {}
    return [play_unit((a, b), deal, cfg, cache, agent_factory, digests, replay_dir) for a, b, deal in units]


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
    agent_factory: AgentFactory | None = None,
    digests: dict[str, str] | None = None,
    replay_dir: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Play units on a backend, yielding records as they finish (in any order).

    ``digests`` pins each ``checkpoint:PATH`` agent to the file content the run was keyed by;
    ``replay_dir`` (a folder every worker can write) receives each game as a replay.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or not 0 <= workers <= MAX_WORKERS:
        raise HarnessError(
            f"workers must be an integer from 0 (every core) to {MAX_WORKERS}, got {workers!r}"
        )
    if backend not in ("local", "ray"):
        raise HarnessError(f"backend must be 'local' or 'ray', got {backend!r}")
    if not units:
        return
    cfg_dict = cfg.to_dict()
    chunks = list(_chunks(units, chunk))
    if backend == "ray":
        yield from _run_ray(cfg_dict, chunks, agent_factory, digests, replay_dir)
        return
    n = workers or os.cpu_count() or 1
    if n == 1 or len(chunks) == 1:
        cache: dict[str, Any] = {}
        for a, b, deal in units:
            yield play_unit((a, b), deal, cfg, cache, agent_factory, digests, replay_dir)
        return
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    with ctx.Pool(min(n, len(chunks)), initializer=_ignore_sigint) as pool:
        jobs = [(cfg_dict, c, agent_factory, digests, replay_dir) for c in chunks]
        for records in pool.imap_unordered(_run_chunk_star, jobs):
            yield from records


def _run_chunk_star(
    args: tuple[
        dict[str, Any], list[tuple[str, str, int]], AgentFactory | None, dict[str, str] | None, str | None
    ],
) -> list[dict[str, Any]]:
    return _run_chunk(*args)


def _run_ray(
    cfg_dict: dict[str, Any],
    chunks: list[list[tuple[str, str, int]]],
    agent_factory: AgentFactory | None,
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
    pending = [remote.remote(cfg_dict, c, agent_factory, digests, replay_dir) for c in chunks]
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            try:
                records = ray.get(ref)
            except ray.exceptions.RayTaskError as err:
                cause = getattr(err, "cause", None)
                if isinstance(cause, AgentError):
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
    agent_factory: AgentFactory | None = None,
    replays: bool = False,
) -> list[dict[str, Any]]:
    """Run (or resume) an evaluation in folder ``out``; returns every record, sorted by unit.

    ``agent_factory(name)`` builds each game's agents (default :func:`make_agent`); for the local
    process pool and Ray it must be a module-level function, importable by the workers.
    ``replays``: also write every game played now as a replay in ``out/replays/`` (for the replay
    page of ``ginenv play`` or ``ginenv replay``); replays do not change the results.
    """
    folder = RunFolder(Path(out))
    done = folder.open(cfg)
    replay_dir = None
    if replays:
        (Path(out) / "replays").mkdir(exist_ok=True)
        replay_dir = str(Path(out).resolve() / "replays")
    todo = [(a, b, k) for a, b in cfg.pairings() for k in range(cfg.deals) if (a, b, k) not in done]
    bar = None
    if progress:
        from tqdm import tqdm

        total = len(cfg.pairings()) * cfg.deals
        bar = tqdm(
            total=total, initial=total - len(todo), unit="deal", desc="duplicate deals", smoothing=0.05
        )
    try:
        for record in run_units(
            cfg,
            todo,
            backend=backend,
            workers=workers,
            agent_factory=agent_factory,
            digests=folder.checkpoints,
            replay_dir=replay_dir,
        ):
            folder.append(record)
            done[(record["a"], record["b"], record["deal"])] = record
            if on_record:
                on_record(record)
            if bar:
                bar.update(1)
    finally:
        if bar:
            bar.close()
    order = {p: i for i, p in enumerate(cfg.pairings())}
    return sorted(done.values(), key=lambda r: (order.get((r["a"], r["b"]), 1 << 30), r["deal"]))
