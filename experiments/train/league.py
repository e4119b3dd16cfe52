"""The league a PPO learner trains against: who it faces in each slot of a rollout, and in which seat.

At every new hand of a slot the learner's seat is drawn (so it plays both seats, dealer and
non-dealer) and so is its opponent, from the mix of ``Args.opponents``: the batched engine's
compiled ``greedy`` or ``random`` policies, the ``hard`` level compiled over the engine's record
(:mod:`ginenv.agents.levels.hard_compiled`, move for move the level; about 150 times greedy's cost
per decision), ``easy``, ``normal`` and ``expert`` compiled the same way
(:mod:`~ginenv.agents.levels.easy_compiled`, :mod:`~ginenv.agents.levels.normal_compiled`,
:mod:`~ginenv.agents.levels.expert_compiled`), the ``master`` level compiled the same way at its
shipped width or another (``master@worlds=64``: :mod:`ginenv.agents.levels.master_compiled`,
:func:`level_width`), a fixed network (``checkpoint:PATH``, e.g. a clone of master: a strong member
the learner cannot outgrow by beating its own past), or a frozen snapshot of the learner drawn
uniformly from the pool of the most recent ``snapshot_pool`` ones. An opponent is a *league code*
per slot: ``0 .. C - 1`` name a compiled member (:data:`COMPILED_OPPONENTS`, then the mix's master
widths in its order: ``C = len(League.compiled)``), ``C .. C + F - 1`` the ``F`` fixed networks in
the mix's order, ``C + F + j`` snapshot ``j`` of the pool. Fixed networks play their most likely
legal action, as they do in the harness; snapshots sample theirs, as the learner does.

With prioritized fictitious self-play (``Args.pfsp``, AlphaStar's PFSP) a member's share is its mix
weight times ``f(x)``, ``x`` the learner's recent *point share* against it: the points it scored over
the points scored in its hands against the member (running means over about :data:`PFSP_HANDS`
hands; all snapshots count as one member). Points, not hands won: in gin rummy the weaker side
still wins about half the hands (a network from scratch won 49% of its hands against ``neural``
while losing 4.5 points a hand), so a won-hand rate reads every member as level and the tilt goes
nowhere. ``variance``, ``x (1 - x)``, favours the members the learner scores about as much against
as they score, so a strong member's share grows as the learner catches up with it (a curriculum)
and a beaten one's shrinks; ``hard``, ``(1 - x)^2``, favours the members it loses to. The scores
start at 1/2 and live in the worker, so a resumed run starts them again.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
from ginenv.agents.levels.easy_compiled import easy_moves
from ginenv.agents.levels.expert_compiled import expert_moves
from ginenv.agents.levels.hard_compiled import hard_moves
from ginenv.agents.levels.master_compiled import WORLDS, check_worlds, master_moves
from ginenv.agents.levels.normal_compiled import normal_moves
from ginenv.agents.neural import MaskedPolicy
from ginenv.agents.specs import CHECKPOINT_PREFIX

from ginenv.kernels.policies import parse_policy_name
from ginenv.vector import VectorGinRummy

#: League members besides snapshots: the batched engine's compiled policies, then the compiled levels.
COMPILED_OPPONENTS = ("greedy", "random", "hard", "easy", "normal", "expert")
#: The compiled levels: each one's moves in the given slots (indices) of the batched engine. The
#: engine's own policies are computed in every slot (greedy is also the kickstarting teacher); a
#: level only where it is to move, its decisions costing about 150 times greedy's.
LEVEL_MOVES = {"hard": hard_moves, "easy": easy_moves, "normal": normal_moves, "expert": expert_moves}
#: The compiled level a mix may name with parameters, each once per width: ``master`` (the shipped
#: width) or ``master@worlds=N`` (:mod:`ginenv.agents.levels.master_compiled`).
WIDE_LEVEL = "master"
LEAGUE_KINDS = (*COMPILED_OPPONENTS, "snapshot")
#: The weightings of prioritized fictitious self-play (Args.pfsp): the factor on a member's mix weight
#: for the learner's recent score ``x`` against it.
PFSP_WEIGHTINGS = {
    "variance": lambda x: x * (1.0 - x),
    "hard": lambda x: (1.0 - x) ** 2,
}
#: Hands the running score against a member remembers (its mean's time constant).
PFSP_HANDS = 2000
#: The least share factor: a member the learner always beats (or never) is still drawn now and then,
#: so its score can move again.
PFSP_FLOOR = 0.01


def is_fixed(member: str) -> bool:
    """Whether a league member's name is a fixed network's: a ``checkpoint:PATH`` agent spec."""
    return member.startswith(CHECKPOINT_PREFIX) and len(member) > len(CHECKPOINT_PREFIX)


def level_width(member: str) -> int | None:
    """The worlds of a ``master`` / ``master@worlds=N`` member (None: not such a member); a bad
    width or parameter: ValueError, one line saying what is allowed."""
    base, params = parse_policy_name(member)
    if base != WIDE_LEVEL:
        return None
    unknown = sorted(set(params) - {"worlds"})
    if unknown:
        raise ValueError(
            f"league member {member!r}: master takes worlds only (master@worlds=N), not {unknown[0]!r}"
        )
    return check_worlds(params.get("worlds", WORLDS))


def drawn_levels(mix: dict[str, float]) -> list[str]:
    """The ``master`` members of ``mix`` (:func:`level_width`) that the league draws (a positive
    weight), in the mix's order: compiled levels after :data:`COMPILED_OPPONENTS`."""
    return [k for k in mix if mix[k] > 0 and level_width(k) is not None]


def level_moves(member: str) -> Callable[[VectorGinRummy, np.ndarray], np.ndarray] | None:
    """The moves of compiled level ``member`` in given slots of the batched engine (None: the
    member is not a compiled level)."""
    if member in LEVEL_MOVES:
        return LEVEL_MOVES[member]
    width = level_width(member)
    if width is None:
        return None
    return lambda venv, slots: master_moves(venv, slots, width)


def drawn_fixed(mix: dict[str, float]) -> list[str]:
    """The fixed networks of ``mix`` that the league draws (a positive weight), in the mix's order:
    the ones a worker loads and the league gives codes to."""
    return [k for k in mix if is_fixed(k) and mix[k] > 0]


class League:
    """The per-slot seats and opponents of one rollout worker's ``slots`` hands, and the snapshot pool.

    ``seats[i]`` is the learner's seat in slot ``i`` and ``opponent[i]`` the league code of its
    opponent there; both are drawn from ``rng`` when the league starts and again by
    :meth:`new_hands`, in that order, so a worker's draws follow from its seed alone.
    """

    def __init__(
        self,
        mix: dict[str, float],
        pool: int,
        first: MaskedPolicy,
        slots: int,
        rng: np.random.Generator,
        fixed: dict[str, MaskedPolicy] | None = None,
        pfsp: str | None = None,
    ) -> None:
        """A league of the members of ``mix`` with a positive weight (weights need not sum to 1),
        keeping the ``pool`` most recent snapshots, the first of them ``first``; ``fixed`` holds the
        network of each ``checkpoint:PATH`` member of the mix; ``pfsp`` names the weighting of
        :data:`PFSP_WEIGHTINGS` that tilts the mix toward some members by the learner's scores
        (None: the mix as it is)."""
        fixed = fixed or {}
        self.fixed = [(k, fixed[k].eval().requires_grad_(False)) for k in drawn_fixed(mix)]
        #: The compiled members' codes: the engine's policies and the levels, then master's widths drawn.
        self.compiled = (*COMPILED_OPPONENTS, *drawn_levels(mix))
        self.moves = {k: level_moves(k) for k in self.compiled}
        self.codes = {k: i for i, k in enumerate(self.compiled)}
        self.codes.update({k: len(self.compiled) + j for j, (k, _) in enumerate(self.fixed)})
        self.first_snapshot = len(self.compiled) + len(self.fixed)
        self.kinds = (
            [k for k in LEAGUE_KINDS if mix.get(k, 0) > 0]
            + list(self.compiled[len(COMPILED_OPPONENTS) :])
            + [k for k, _ in self.fixed]
        )
        self.weights = np.array([mix[k] for k in self.kinds], dtype=np.float64)
        self.weighting = None if pfsp is None else PFSP_WEIGHTINGS[pfsp]
        #: Running means of the points the learner won and lost a hand against each member of ``kinds``
        #: (equal at first: every score starts at 1/2); :attr:`scores` derives the point shares.
        self.won = np.ones(len(self.kinds))
        self.lost = np.ones(len(self.kinds))
        # Each league code's member (its index in ``kinds``); every snapshot code maps to "snapshot".
        self.member_of = np.array(
            [self.kinds.index(k) if k in self.kinds else -1 for k in self.compiled]
            + [self.kinds.index(k) for k, _ in self.fixed]
            + [self.kinds.index("snapshot") if "snapshot" in self.kinds else -1] * pool,
            dtype=np.int64,
        )
        self.p = self.shares()
        self.pool = pool
        self.rng = rng
        #: Whether snapshots are drawn (a positive ``snapshot`` weight); a league without them keeps
        #: none (exploit's best response faces the frozen agent alone).
        self.draws_snapshots = "snapshot" in self.kinds
        self.snapshots: list[MaskedPolicy] = []
        self.add_snapshot(first)
        self.seats = rng.integers(0, 2, size=slots)
        self.opponent = self.draw_opponents(slots)

    def add_snapshot(self, policy: MaskedPolicy) -> None:
        """A frozen copy of ``policy`` joins the pool (the oldest leaves beyond ``pool``); none when
        the mix draws no snapshot."""
        if not self.draws_snapshots:
            return
        self.snapshots.append(copy.deepcopy(policy).eval().requires_grad_(False))
        del self.snapshots[: -self.pool]

    def draw_opponents(self, k: int) -> np.ndarray:
        """League codes of ``k`` new hands' opponents."""
        picked = self.rng.choice(len(self.kinds), size=k, p=self.p)
        codes = np.array([self.codes.get(self.kinds[p], -1) for p in picked], dtype=np.int64)
        is_snap = codes == -1
        found = len(self.snapshots)
        codes[is_snap] = self.first_snapshot + self.rng.integers(0, found, size=int(is_snap.sum()))
        return codes

    def shares(self) -> np.ndarray:
        """Each member's share of new hands (over ``kinds``): its mix weight, tilted by ``pfsp``."""
        if self.weighting is None:
            return self.weights / self.weights.sum()
        tilted = self.weights * np.maximum(self.weighting(self.scores), PFSP_FLOOR)
        return tilted / tilted.sum()

    def score(self, slots: np.ndarray, points: np.ndarray) -> None:
        """The hands in ``slots`` ended with ``points`` for the learner: each member's running means of
        the points won and lost move toward its hands' means, as far as a running mean over
        :data:`PFSP_HANDS` hands does for that many hands; its score and the shares follow."""
        member = self.member_of[self.opponent[slots]]
        for m in np.unique(member):
            mine = points[member == m]
            step = 1.0 - (1.0 - 1.0 / PFSP_HANDS) ** mine.size
            self.won[m] += step * (np.maximum(mine, 0.0).mean() - self.won[m])
            self.lost[m] += step * (np.maximum(-mine, 0.0).mean() - self.lost[m])
        self.p = self.shares()

    @property
    def scores(self) -> np.ndarray:
        """The learner's point share ``won / (won + lost)`` against each member of ``kinds``."""
        total = self.won + self.lost
        return np.divide(self.won, total, out=np.full_like(total, 0.5), where=total > 0)

    def member_scores(self) -> dict[str, float]:
        """The learner's running point share against each member, by name (for the logs)."""
        return {k: float(x) for k, x in zip(self.kinds, self.scores, strict=True)}

    def new_hands(self, slots: np.ndarray) -> None:
        """Draw the learner's seat and its opponent again in ``slots`` (indices), dealt new hands."""
        self.seats[slots] = self.rng.integers(0, 2, size=slots.size)
        self.opponent[slots] = self.draw_opponents(slots.size)

    def plays_a_network(self) -> np.ndarray:
        """(N,) bool: the slots whose opponent is a network, fixed or a snapshot (its moves need
        network inputs)."""
        return self.opponent >= len(self.compiled)

    def network_turns(self, to_move: np.ndarray) -> list[tuple[MaskedPolicy, np.ndarray, bool]]:
        """Each network member (fixed ones, then snapshots) with the slots (indices) where it is to
        move (``to_move`` (N,) bool) and whether it plays its most likely action (a fixed network)
        rather than a sample, for the members that move somewhere."""
        turns = []
        members = [(net, True) for _, net in self.fixed] + [(snap, False) for snap in self.snapshots]
        for code, (net, argmax) in enumerate(members, start=len(self.compiled)):
            slots = np.flatnonzero(to_move & (self.opponent == code))
            if slots.size:
                turns.append((net, slots, argmax))
        return turns

    def compiled_moves(
        self, venv: VectorGinRummy, actions: np.ndarray, to_move: np.ndarray, wanted: str | None = None
    ) -> np.ndarray | None:
        """The compiled opponents' moves into ``actions`` where they are to move (``to_move``), in
        league order; returns every slot's action of the compiled policy ``wanted`` (computed even
        where it moves nowhere: the kickstarting teacher), else None."""
        chosen_by_wanted = None
        for code, policy in enumerate(self.compiled):
            slots = to_move & (self.opponent == code)
            moves = self.moves[policy]
            if moves is not None:
                where = np.flatnonzero(slots)
                if where.size:
                    actions[where] = moves(venv, where)
            elif slots.any() or policy == wanted:
                chosen = venv.policy_actions(policy)
                actions[slots] = chosen[slots]
                if policy == wanted:
                    chosen_by_wanted = chosen
        return chosen_by_wanted
