"""What an evaluation plays: :class:`EvalConfig` (agents, format, deals, unit, rules, seed, limits,
and an optional secret deal key), the checks of its values (one validator each, used wherever such a
value enters), and the key that names a run: the config's fingerprint with the content hash of every
checkpoint it plays, and the commitment of its deal key (never the key itself).

:mod:`ginenv.experiments.eval.harness` plays it; its users find every name of this module there too.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ginenv.agents import registry, specs
from ginenv.agents.sandbox import Sandbox
from ginenv.agents.specs import CHECKPOINT_PREFIX
from ginenv.experiments.errors import UsageError

from ginenv.engine import DEFAULT_TURN_LIMIT, check_turn_limit
from ginenv.rules import Rules
from ginenv.secret_deals import MAX_KEY_BYTES, MIN_KEY_BYTES, DealKey, DealKeyError
from ginenv.validation import as_int, is_int

Format = Literal["round_robin", "gauntlet", "adjacent"]
Unit = Literal["hand", "match"]

#: Most duplicate deals per pairing. Every finished deal is kept in memory (about 1 KB) for the
#: statistics, so a larger run would exhaust memory long before it finished; split it into runs.
MAX_DEALS = 1_000_000

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


def check_key(text: object, what: str = "--key") -> DealKey:
    """A deal key written as hex (what a secret run printed) as a :class:`DealKey`; else HarnessError
    (which says how long the text was, never the text: it may be a real key with a typo)."""
    try:
        return DealKey.from_hex(str(text))
    except DealKeyError:
        raise HarnessError(
            f"{what} must be a deal key of {2 * MIN_KEY_BYTES} to {2 * MAX_KEY_BYTES} hex digits "
            f"(the key a secret run printed), got {len(str(text).strip())} characters"
        ) from None


def random_seed() -> int:
    """A master seed drawn from the OS (``secrets``): deals nobody can predict from a public seed."""
    return secrets.randbits(63)


@dataclass(frozen=True)
class EvalConfig:
    """What to evaluate. Every field but ``sandbox`` changes the results, so they key the run folder."""

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
    #: Master seed of the deals and of the agents' per-hand seeds (non-negative); with a ``key``,
    #: of the agents' seeds only.
    seed: int = 0
    #: Draws per hand after which the hand (in match units, the match) is truncated: 0 points.
    turn_limit: int = DEFAULT_TURN_LIMIT
    #: Seconds an ``exec:COMMAND`` agent may take for one decision before it forfeits the game.
    time_limit: float = DEFAULT_TIME_LIMIT
    #: Secret deals: hand ``h`` of deal ``k`` is ``key.deck(k, h)`` (:mod:`ginenv.secret_deals`)
    #: instead of a deck derived from the public seed. Never written anywhere by the harness: the run
    #: is keyed by the key's commitment (``deal_commitment`` in :meth:`to_dict`).
    key: DealKey | None = None
    #: Where ``exec:`` agents run (:mod:`ginenv.agents.sandbox`; None: the basic sandbox). It
    #: changes what an agent can reach, not the games: it neither keys the run folder nor is stored.
    sandbox: Sandbox | None = None

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
        if self.key is not None and not isinstance(self.key, DealKey):
            raise HarnessError(
                f"key must be a ginenv.secret_deals.DealKey or None, got {type(self.key).__name__}"
            )
        if self.sandbox is not None and not isinstance(self.sandbox, Sandbox):
            raise HarnessError(
                f"sandbox must be a ginenv.agents.sandbox.Sandbox or None, got {type(self.sandbox).__name__}"
            )

    @property
    def commitment(self) -> str | None:
        """The deal key's commitment (safe to publish), or None on the seed's public deals."""
        return None if self.key is None else self.key.commitment()

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
        plays, so it keys only the runs it can change. A deal key appears as its commitment
        (``deal_commitment``) only: this dict is written to the run folder while the run goes on,
        where an agent could read it; without a key the dict is as before, so old folders resume."""
        d = dataclasses.asdict(dataclasses.replace(self, key=None, sandbox=None))
        del d["key"], d["sandbox"]
        if self.key is not None:
            d["deal_commitment"] = self.key.commitment()
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


def config_from_dict(d: dict[str, Any], key: DealKey | None = None) -> EvalConfig:
    """Inverse of :meth:`EvalConfig.to_dict`. A config of secret deals (``deal_commitment``) needs
    its ``key`` back, and a key that does not match the commitment is refused (HarnessError)."""
    d = dict(d)
    commitment = d.pop("deal_commitment", None)
    if (key.commitment() if key is not None else None) != commitment:
        raise HarnessError(
            "the config was played on the seed's public deals: give no key"
            if commitment is None
            else f"the config was played on secret deals of commitment {commitment}: give its key"
        )
    d["key"] = key
    d["agents"] = tuple(d["agents"])
    d["rules"] = Rules.from_dict(d["rules"])
    return EvalConfig(**d)
