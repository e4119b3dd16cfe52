"""What one step of policy improvement over the shipped network could gain, by the network's own rollouts.

Expert iteration from master's option values gained nothing
(docs/reports/2026-12-02-soft-targets-from-master.md): master's rollouts play both sides simply,
so its values judge an option by how it would turn out under that simple play. This measures the
alternative, the network's own values: at each
decision of hands the network plays against itself (labelled by ``master_net``, as ``bc record
--driver neural`` does), the options ``master_net`` scored plus the network's move are each played
out in ``--worlds`` worlds (opponent hands and stock orders drawn by ``master_net``'s world sampler
from what the deciding seat has seen), the network moving for both seats to the end of the hand in
the batched engine (:meth:`ginenv.vector.VectorGinRummy.start_from`). The mean points of an option
are its value ``Q`` under the network's own play.

Printed per seat and hand, summed over the decisions (the performance-difference lemma: the
advantage of a better move, summed along the games, is what playing it would gain):

* ``greedy gain``: ``Q(best option) - Q(network's move)``, the best chosen on half the worlds and
  scored on the other half (cross-fitted, so the noise of the worlds does not pass as gain): what a
  network trained on these values' choices could gain over itself, one step of policy improvement;
* ``master gain``: ``Q(master_net's move) - Q(network's move)`` over all the worlds: whether the
  search's choices are better by the network's own continuation;
* the same two by master's values (master's rollouts), for comparison.

``--play N`` instead plays N duplicate deals (both seatings, master seed :data:`PLAY_SEED`) of
:class:`NetSearch`, the network with that greedy step taken at every decision where ``master_net``
scored two or more options, against the network itself, and prints the paired points per hand
with a 95% interval: whether the network's own values make a stronger player, the condition for
expert iteration on them to help. ``--oracle`` (diagnosis only) gives the search the true
opponent hand in every world, the stock order still drawn: whether the sampled hands or the
rollouts carry a bias; ``--oracle-swaps K`` replaces K of the true hand's hidden cards by other
unseen cards in each world (how right must the worlds be for the step to win?). ``--sampler``
draws the worlds' opponent hands another way (uniform over the unseen cards, the Bayesian model's
card factors, the head's odds, each without master's hand-quality tilt, or ``policy``:
:class:`research.beliefs.PolicyBelief`, ``--proposals`` hands from ``--proposal``
weighted by the likelihood of the opponent's last ``--max-turns`` turns under the
network); the stock orders stay uniform.

The true hidden cards are read from the env's engine only to build the rollout records' layout; the
worlds replace them (a measurement, not an agent for the harness: the records' public part comes
from the engine instead of being rebuilt from the observation). Hand ``h`` is game ``h`` of the
recording seed, so ``--start`` and ``--hands`` pick the same hands as ``bc record``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ginenv.agents.arena import play_game
from ginenv.agents.base import Agent, Observation
from ginenv.agents.neural import SHIPPED_CHECKPOINT, MaskedPolicy, opponent_hand_predictor, read_checkpoint

from ginenv import agents, gin_rummy_v0
from ginenv.cards import cards_of
from ginenv.engine import HandState
from ginenv.vector import VectorError, VectorGinRummy

# research/ is not installed (the wheel leaves it out): run as `python benchmarks/bench_net_rollouts.py`
# from a checkout, the script's folder is on the path but the repository root is not. Last, not
# first: the root's ginenv/ (without ginenv.agents) must not shadow an installed ginenv.
sys.path.append(str(Path(__file__).resolve().parents[1]))
from research.bc import RECORD_SEED, Labelled
from research.beliefs import PolicyBelief
from research.worlds import world_records

#: Master seed of the played deals (``--play``): neither the harness's nor the recording's.
PLAY_SEED = 0x5EA


def net_moves(policy: MaskedPolicy, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The network's most likely action for each row."""
    with torch.no_grad():
        return (
            policy(policy.prepare(obs.astype(np.float32)), torch.from_numpy(mask.astype(np.int8)))
            .argmax(1)
            .numpy()
        )


def net_values(
    policy: MaskedPolicy,
    position: HandState,
    teacher: Any,
    options: list[int],
    worlds: int,
    seed: int,
    oracle: bool = False,
    sampler: PolicyBelief | None = None,
    swaps: int = 0,
) -> np.ndarray | None:
    """Points of each option (rows) in each of ``worlds`` worlds (columns) for the player to move,
    the network playing both seats to the end; the worlds (opponent hand, stock order) are drawn by
    ``teacher``'s sampler from what the player has seen (or the opponent hands by ``sampler``, fed
    the player's observations, with uniform stock orders) and replace the position's hidden cards.
    None if a world does not fit the position's layout."""
    seat = position.player
    if sampler is None:
        opps, unseen, u, _ = teacher.draw_worlds(worlds)
    else:
        rng = np.random.default_rng(seed)
        opps = sampler.sample_hands(worlds, rng)
        view = sampler.record.view
        assert view is not None
        unseen = np.array(cards_of(view.unseen), dtype=np.int64)
        u = rng.random((worlds, max(1, unseen.size)))
    if oracle:  # diagnosis only: the true opponent hand in every world, the stock order still drawn
        opps = np.full(worlds, position.hands[1 - seat], dtype=np.int64)
        if swaps:  # ... with `swaps` of its hidden cards replaced by other unseen cards in each world
            rng = np.random.default_rng(seed)
            truth = int(opps[0])
            held = [int(c) for c in unseen if truth >> int(c) & 1]
            free = [int(c) for c in unseen if not truth >> int(c) & 1]
            k = min(swaps, len(held), len(free))
            for w in range(worlds):
                hand = truth
                for c in rng.choice(held, k, replace=False):
                    hand ^= 1 << int(c)
                for c in rng.choice(free, k, replace=False):
                    hand |= 1 << int(c)
                opps[w] = hand
    stocks = []
    for k in range(worlds):
        rest = np.array([c for c in unseen if not (int(opps[k]) >> int(c)) & 1])
        stocks.append(rest[np.argsort(u[k, : rest.size])])
    if len({len(st) for st in stocks}) != 1:
        return None
    try:
        records = world_records(position, opps, np.array(stocks))
    except VectorError:
        return None
    n = worlds * len(options)
    venv = VectorGinRummy(n, rules=position.rules, turn_limit=position.turn_limit, seed=seed)
    venv.start_from(np.tile(records, (len(options), 1)))
    acts = np.repeat(np.array(options, dtype=np.int64), worlds)
    points = np.zeros(n)
    done = np.zeros(n, dtype=bool)
    while True:
        obs, mask, _, rewards, term, trunc = venv.step(acts)
        ended = (term | trunc) & ~done
        points[ended] = rewards[ended, seat]
        done |= ended
        if done.all():
            return points.reshape(len(options), worlds)
        acts = net_moves(policy, obs, mask)


def make_sampler(ns: argparse.Namespace, policy: MaskedPolicy) -> PolicyBelief | None:
    """The world sampler of ``--sampler`` (None: ``master_net``'s own, today's)."""
    if ns.sampler == "master_net":
        return None
    head = opponent_hand_predictor(ns.checkpoint) if "head" in (ns.sampler, ns.proposal) else None
    if ns.sampler == "policy":
        return PolicyBelief(
            policy,
            ns.proposal,
            ns.proposals,
            ns.max_turns,
            ns.temperature,
            head,
            ns.weighting,
            not ns.no_adapt,
            ns.ess_floor,
        )
    # The proposal alone, no replay: uniform, the Bayesian model's factors or the head's odds.
    return PolicyBelief(policy, ns.sampler, 1, 0, 1.0, head)


class NetSearch(Agent):
    """The network, except where ``master_net`` scored two or more options: there the option (or
    the network's own move) with the best value under the network's rollouts. Reads the env's
    position for the rollout records' layout only; the worlds replace its hidden cards. The
    opponent hands come from ``master_net``'s sampler, or from ``sampler`` (fed this seat's
    observations only)."""

    def __init__(
        self,
        env: Any,
        policy: MaskedPolicy,
        worlds: int,
        seed: int,
        oracle: bool = False,
        sampler: PolicyBelief | None = None,
        swaps: int = 0,
    ) -> None:
        super().__init__(seed)
        self.swaps = swaps
        self.env, self.policy, self.worlds, self.oracle = env, policy, worlds, oracle
        self.teacher = agents.make("master_net")
        self.sampler = sampler

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.teacher.reset(seed)
        if self.sampler is not None:
            self.sampler.reset()

    def act(self, observation: Observation) -> int:
        if self.sampler is not None:
            self.sampler.update(observation["observation"])
        self.teacher.act(observation)
        scored = list(getattr(self.teacher, "option_values", {}))
        mine = int(
            net_moves(self.policy, observation["observation"][None], observation["action_mask"][None])[0]
        )
        if len(scored) < 2:
            return mine
        options = scored + ([] if mine in scored else [mine])
        q = net_values(
            self.policy,
            self.env.hand,
            self.teacher,
            options,
            self.worlds,
            int(self.rng.integers(1 << 30)),
            self.oracle,
            self.sampler,
            self.swaps,
        )
        return mine if q is None else options[int(q.mean(1).argmax())]


def play(ns: argparse.Namespace, policy: MaskedPolicy) -> None:
    """Duplicate deals of :class:`NetSearch` against the network (seats swapped), paired."""
    env = gin_rummy_v0.raw_env()
    values = []
    print(f"sampler {ns.sampler}" + (f", {vars(ns)}" if ns.sampler == "policy" else ""), flush=True)
    began = time.perf_counter()
    for d in range(ns.start, ns.start + ns.play):
        pair = 0.0
        for me in (0, 1):
            seats: list[Agent] = [agents.make("neural"), agents.make("neural")]
            seats[me] = NetSearch(
                env, policy, ns.worlds, d * 2 + me, ns.oracle, make_sampler(ns, policy), ns.oracle_swaps
            )
            record = play_game(env, seats, seed=PLAY_SEED, deal=d, names=["a", "b"])
            pair += record.returns[me]
        values.append(pair / 2)
        print(f"deal {d}: {pair / 2:+.1f}", flush=True)
    v = np.array(values)
    half = 1.96 * v.std(ddof=1) / np.sqrt(len(v))
    low, high, took = v.mean() - half, v.mean() + half, time.perf_counter() - began
    print(
        f"NetSearch - network, {len(v)} deals: {v.mean():+.2f} [{low:+.2f}, {high:+.2f}] a hand, {took:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=int, default=40)
    parser.add_argument("--start", type=int, default=3_500_000)
    parser.add_argument("--worlds", type=int, default=32, help="worlds per option (even)")
    parser.add_argument("--checkpoint", default=str(SHIPPED_CHECKPOINT))
    parser.add_argument(
        "--play", type=int, default=0, help="instead: play this many duplicate deals of the search"
    )
    parser.add_argument(
        "--oracle",
        action="store_true",
        help="with --play: worlds hold the true opponent hand (diagnosis only)",
    )
    parser.add_argument(
        "--oracle-swaps",
        type=int,
        default=0,
        help="with --oracle: replace this many of the true hand's hidden cards in each world (diagnosis)",
    )
    parser.add_argument(
        "--sampler",
        default="master_net",
        choices=("master_net", "uniform", "model", "head", "policy"),
        help="with --play: the opponent hands of the worlds: master_net's sampler (today's), the "
        "proposal alone (uniform over the unseen cards, the Bayesian model's factors, the head's odds) "
        "or the policy-weighted sampler (research.beliefs)",
    )
    parser.add_argument("--proposal", default="head", choices=("uniform", "model", "head"))
    parser.add_argument("--proposals", type=int, default=256, help="--sampler policy: candidate hands")
    parser.add_argument("--max-turns", type=int, default=6, help="--sampler policy: opponent turns replayed")
    parser.add_argument("--temperature", type=float, default=1.0, help="--sampler policy: divides the logits")
    parser.add_argument("--weighting", default="exact", choices=("exact", "product"))
    parser.add_argument(
        "--no-adapt", action="store_true", help="--sampler policy: one uniform draw per stock draw"
    )
    parser.add_argument(
        "--ess-floor", type=float, default=0.0, help="--sampler policy: temper to this ESS share"
    )
    ns = parser.parse_args()
    torch.set_num_threads(1)
    policy = read_checkpoint(ns.checkpoint).policy.eval()
    if ns.play:
        play(ns, policy)
        return
    env = gin_rummy_v0.raw_env()
    w = ns.worlds - ns.worlds % 2
    names = ("greedy_net", "master_net", "greedy_master", "master_master")
    per_hand: list[np.ndarray] = []  # each hand: the four sums, both seats together
    sums = np.zeros(4)
    decisions, began = 0, time.perf_counter()
    players: list[Labelled] = []

    def keep(seat: int, observation: Observation, label: int) -> None:
        nonlocal decisions
        teacher = players[seat].teacher
        scored: dict[int, float] = dict(getattr(teacher, "option_values", {}))
        if len(scored) < 2:
            return
        mine = int(net_moves(policy, observation["observation"][None], observation["action_mask"][None])[0])
        options = list(scored) + ([] if mine in scored else [mine])
        q = net_values(policy, env.hand, teacher, options, w, decisions)
        if q is None:
            return
        i_mine = options.index(mine)
        i_master = options.index(label) if label in options else i_mine
        half_a, half_b = q[:, : w // 2].mean(1), q[:, w // 2 :].mean(1)
        cross = 0.5 * (half_b[half_a.argmax()] - half_b[i_mine] + half_a[half_b.argmax()] - half_a[i_mine])
        sums[0] += cross
        sums[1] += q[i_master].mean() - q[i_mine].mean()
        mv = np.array([scored.get(a, np.nan) for a in options])
        if mine in scored:
            sums[2] += np.nanmax(mv) - scored[mine]
            sums[3] += scored.get(label, scored[mine]) - scored[mine]
        decisions += 1

    for h in range(ns.start, ns.start + ns.hands):
        players = [
            Labelled(agents.make("master_net"), agents.make("neural"), 1.0, h * 2 + i, i, keep)
            for i in range(2)
        ]
        sums[:] = 0.0
        play_game(env, players, seed=RECORD_SEED, deal=h, names=["neural"] * 2)
        per_hand.append(sums / 2)  # per seat
    table = np.array(per_hand)
    mean = dict(zip(names, table.mean(0), strict=True))
    half = dict(zip(names, 1.96 * table.std(0, ddof=1) / np.sqrt(len(table)), strict=True))
    took = time.perf_counter() - began
    print(
        f"{ns.hands} hands, {decisions} decisions with two or more scored options, {w} worlds, {took:.0f} s"
    )
    print("points per seat and hand, summed over the decisions (95% intervals over the hands):")
    for source, g, m in (
        ("network's rollouts", "greedy_net", "master_net"),
        ("master's values", "greedy_master", "master_master"),
    ):
        greedy, chosen = f"{mean[g]:+.2f} ± {half[g]:.2f}", f"{mean[m]:+.2f} ± {half[m]:.2f}"
        print(f"  {source}: greedy gain {greedy}, master_net's move {chosen}")


if __name__ == "__main__":
    main()
