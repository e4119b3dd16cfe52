"""Step 1 of PPO, collect: the learner's decisions in its slots of the batched engine.

The environment is the batched engine :class:`ginenv.vector.VectorGinRummy`: hands in lockstep,
each step applying one action per slot for the seat to move there. Per slot a
:class:`RolloutWorker` keeps which seat the learner plays in the current hand and which opponent it
faces (:class:`ginenv.experiments.train.league.League`, both drawn at every new hand). Every env
step, the learner acts in the slots where its seat is to move and the opponents act in the others;
only the learner's decisions are recorded (:meth:`RolloutWorker.collect`). An env step is three
calls: :meth:`RolloutWorker.choose` (the networks), :meth:`RolloutWorker.advance` (the compiled
opponents and the engine: no torch, nothing shared with another worker) and
:meth:`RolloutWorker.settle`, so that :func:`collect_overlapped` can run one worker's advance on a
thread of its own while the next worker's networks choose (EnvPool-style).

A learner trajectory is its own decisions in a slot, in order. A hand's reward
(``rewards[:, seat] * reward_scale``) belongs to the learner's last decision of that hand. A
:class:`Rollout` holds what the advantages (step 2, :func:`ginenv.experiments.train.ppo.learner_batch`)
read per env step and slot: which entries are learner decisions, their values and rewards, where a
hand terminated or was truncated, and the values to bootstrap from. A truncated hand (the turn
limit) bootstraps from the value of the learner's final view of that hand
(``venv.final_observations``: the batched engine deals the next hand at once); at the end of a
rollout the open hands bootstrap from the value of the learner's current view
(``venv.observe(seats)``). With shaping (``Args.shaping``) each decision's potential on the own
deadwood is recorded too.

Each decision also records the opponent's true hand (from ``venv.hands()``), the target of the
auxiliary opponent-hand head, and, while kickstarting, the teacher's action. With an oracle critic
(``Args.critic_inputs``) it records the critic's oracle inputs too (the opponent's hand, its
deadwood features and the stock's next cards, :func:`oracle_inputs`), which only the value
MLP reads; a truncated hand (rare: the turn limit) bootstraps with the oracle inputs of the
learner's last decision in it, the engine having dealt the next hand already.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import torch
from ginenv.agents.neural import MaskedPolicy
from ginenv.agents.neural.threads import recheck_threads, use_threads
from ginenv.experiments.train.actor_critic import (
    ORACLE_SIZE,
    ORACLE_STOCK,
    ActorCritic,
    masked_log_probs,
    matmul_precision,
    sample_actions,
)
from ginenv.experiments.train.args import Args
from ginenv.experiments.train.league import League, drawn_fixed
from ginenv.experiments.train.training_checkpoints import fixed_member, policy_from

from ginenv import kernels
from ginenv.actions import NUM_ACTIONS
from ginenv.cards import NUM_CARDS
from ginenv.features import input_size, policy_inputs, scaled_hand_features
from ginenv.rules import resolve_rules
from ginenv.vector import VectorGinRummy


def own_deadwood(hands: np.ndarray) -> np.ndarray:
    """Least deadwood of each hand (int64 masks): of the 10 cards, or after the best discard of 11."""
    return kernels.own_deadwood_many(hands).astype(np.float32)


def unpack_card_masks(masks: np.ndarray) -> np.ndarray:
    """52-bit card masks (N,) int64 unpacked into (N, 52) float32 0/1 columns, card order."""
    return ((masks[:, None] >> np.arange(NUM_CARDS, dtype=np.int64)) & 1).astype(np.float32)


def oracle_inputs(opponent_hands: np.ndarray, stock_tops: np.ndarray) -> np.ndarray:
    """An oracle critic's extra inputs, (N, ORACLE_SIZE) float32: the opponent's hand (N,) int64
    bitmasks as 52 0/1 columns; per stock card of ``stock_tops`` (N, ORACLE_STOCK; -1 past the
    stock's end, an all-zero block) its one-hot block; and the opponent's hand features as the
    policy reads its own (:func:`ginenv.features.scaled_hand_features`: its deadwood and what each
    card would do to it), so the critic need not rediscover the opponent's meld arithmetic."""
    n = len(opponent_hands)
    stock = np.zeros((n, ORACLE_STOCK, NUM_CARDS), dtype=np.float32)
    rows, blocks = np.nonzero(stock_tops >= 0)
    stock[rows, blocks, stock_tops[rows, blocks]] = 1.0
    return np.concatenate(
        [unpack_card_masks(opponent_hands), stock.reshape(n, -1), scaled_hand_features(opponent_hands)],
        axis=1,
    )


@dataclass
class Decisions:
    """The learner's decisions, flat: what a rollout recorded of each and the update trains on."""

    obs: torch.Tensor  # (B, input_size) float32: network inputs
    mask: torch.Tensor  # (B, NUM_ACTIONS) bool: the legal actions
    opp: torch.Tensor  # (B, 52) float32 0/1: the opponent's hand (the auxiliary head's target)
    oracle: torch.Tensor  # (B, ORACLE_SIZE) float32: an oracle critic's inputs ((B, 0) without one)
    actions: torch.Tensor  # (B,) int64
    teacher: torch.Tensor  # (B,) int64: the kickstarting teacher's action (when teaching, else 0)
    logp: torch.Tensor  # (B,) log-probability of the action under the policy that sampled it


@dataclass
class Rollout(Decisions):
    """One worker's rollout of ``T`` env steps in ``N`` slots: the learner's decisions flat in (env
    step, slot) order (:class:`Decisions`, the entries of ``valid``); per (env step, slot) what their
    advantages are computed from; per hand that ended the learner's figures; and the worker's
    seconds."""

    # What the advantages read, (T, N): entry (t, i) is about the learner's decision at env step t
    # in slot i, where ``valid`` says there is one (elsewhere the entries mean nothing).
    valid: torch.Tensor  # (T, N) bool
    values: torch.Tensor  # (T, N) the value of the decision's view
    rewards: torch.Tensor  # (T, N) the hand's reward, at the learner's last decision of a hand that ended
    terminated: torch.Tensor  # (T, N) bool: the hand ended in a result after this decision
    truncated: torch.Tensor  # (T, N) bool: the hand was truncated after it
    truncated_value: torch.Tensor  # (T, N) then: the value of the learner's final view of that hand
    potential: torch.Tensor  # (T, N) the shaping potential of the decision (with Args.shaping)
    next_value: torch.Tensor  # (N,) the value of the learner's view of the hand open at the end
    end_potential: torch.Tensor  # (N,) that view's shaping potential (with Args.shaping, else 0)
    hand_returns: list[float]  # per hand that ended: the learner's reward (points * reward_scale)
    hand_points: list[float]  # its points
    hand_wins: list[float]  # 1.0 where the learner won the hand
    env_seconds: float  # stepping the engine, drawing the league, preparing inputs
    inference_seconds: float  # the networks' forward passes and the bootstrap
    member_scores: dict[str, float]  # the learner's running score against each league member (PFSP)


@dataclass
class Move:
    """One env step of a worker between :meth:`RolloutWorker.choose` and
    :meth:`RolloutWorker.settle`: the actions the engine applies, and what the step's record needs."""

    t: int  # the env step of the rollout
    actions: np.ndarray  # (N,) int64: every slot's action (the compiled opponents' added by advance)
    learner: np.ndarray  # (N,) bool: the slots where the learner moves
    li: np.ndarray  # their indices
    teacher_policy: str | None  # the compiled policy whose every action is recorded as the teacher's
    teacher: np.ndarray | None = None  # (N,) that policy's actions, once advanced
    stepped: tuple[np.ndarray, ...] | None = None  # what the engine's step returned
    inputs: np.ndarray | None = None  # the network inputs of every slot's new view, when prepared ahead
    engine_s: float = 0.0  # seconds of advance()


class RolloutWorker:
    """Collects rollouts on one shard of the training slots, ``num_envs`` hands in lockstep.

    It owns everything a rollout needs: the vector env, the :class:`League` (per slot: the
    learner's seat and its opponent, and the snapshot networks), the open hands' bookkeeping and a
    copy of the ActorCritic for inference. Worker ``index`` of a run draws its deals, league and
    action samples from ``(args.seed, index)``, so its rollouts are the same whether it runs in the
    learner's process or as a Ray actor.
    """

    def __init__(
        self,
        args: Args,
        index: int,
        num_envs: int,
        weights: dict[str, torch.Tensor],
        device: str = "cpu",
    ) -> None:
        """A worker of ``num_envs`` slots playing the network ``weights`` (an ActorCritic state dict,
        also the league's first snapshot) on ``device``."""
        # A Ray actor is a process of its own; local workers find the learner's setting in force
        use_threads(args.threads)
        deal_seed, league_seed, sample_seed = (
            int(s) for s in np.random.SeedSequence([args.seed, index]).generate_state(3)
        )
        self.args = args
        self.device = torch.device(device)
        self.net = ActorCritic.for_args(args).to(self.device).eval().requires_grad_(False)
        self.net.load_state_dict(weights)
        self.width = input_size(args.inputs)
        self.oracle_width = ORACLE_SIZE if self.net.oracle else 0
        self.sampler = torch.Generator(device=self.device).manual_seed(sample_seed)
        self.teacher: MaskedPolicy | None = None
        if args.kickstart and args.kickstart_teacher != "greedy":
            teacher = policy_from(args.kickstart_teacher, self.net.actor, "kickstart_teacher")
            self.teacher = teacher.to(self.device).eval().requires_grad_(False)

        league_rng = np.random.default_rng(league_seed)
        rules = resolve_rules(args.rules)
        self.venv = VectorGinRummy(
            num_envs, rules=rules, seed=deal_seed, turn_limit=args.turn_limit, threads=args.engine_threads
        )
        self.obs_np, self.mask_np, self.player = self.venv.reset()
        #: The network inputs of every slot's current view where the engine's thread prepared them.
        self.inputs: np.ndarray | None = None
        fixed = {k: fixed_member(k, args.inputs).to(self.device) for k in drawn_fixed(args.opponents)}
        self.league = League(
            args.opponents, args.snapshot_pool, self.net.actor, num_envs, league_rng, fixed, args.pfsp
        )
        self._allocate(args.num_steps, num_envs)
        # The same matrix precision as the update (Args.precision), so the PPO ratio compares like with like.
        self.precision = matmul_precision(args.precision, self.device)
        # What a rollout tallies as it goes (collect starts them again).
        self.hand_returns: list[float] = []
        self.hand_points: list[float] = []
        self.hand_wins: list[float] = []
        self.env_s = self.inference_s = 0.0

    def _allocate(self, T: int, N: int) -> None:
        """The rollout's storage, (T, N): entry (t, i) is the learner's decision at env step t in
        slot i, if any (``b_valid``)."""
        self.b_obs = torch.zeros((T, N, self.width), dtype=torch.float32)
        self.b_mask = torch.zeros((T, N, NUM_ACTIONS), dtype=torch.bool)
        self.b_opp = torch.zeros((T, N, NUM_CARDS), dtype=torch.float32)
        self.b_oracle = torch.zeros((T, N, self.oracle_width), dtype=torch.float32)
        self.b_act = torch.zeros((T, N), dtype=torch.int64)
        self.b_teacher = torch.zeros((T, N), dtype=torch.int64)  # the kickstarting teacher's action
        self.b_logp = torch.zeros((T, N))
        self.b_val = torch.zeros((T, N))
        self.b_rew = torch.zeros((T, N))
        self.b_valid = torch.zeros((T, N), dtype=torch.bool)
        self.b_term = torch.zeros((T, N), dtype=torch.bool)  # the hand ended in a terminal result after it
        self.b_trunc = torch.zeros((T, N), dtype=torch.bool)  # the hand was truncated after it
        self.b_trunc_val = torch.zeros((T, N))  # then: the value of the learner's final view of that hand
        self.b_phi = torch.zeros((T, N))  # the shaping potential of the learner's decision
        self.last = np.full(N, -1, dtype=np.int64)  # the learner's last decision of the open hand

    def prepare(self, observations: np.ndarray) -> torch.Tensor:
        """Network inputs of a batch of observations."""
        return torch.from_numpy(policy_inputs(observations, self.args.inputs))

    def oracle_now(self, slots: np.ndarray, opponents: np.ndarray) -> torch.Tensor | None:
        """An oracle critic's inputs in ``slots`` whose opponents hold ``opponents`` (int64 masks),
        the stock as it stands now; None without an oracle critic."""
        if not self.oracle_width:
            return None
        return torch.from_numpy(oracle_inputs(opponents, self.venv.stock_tops(ORACLE_STOCK)[slots]))

    def collect(
        self, weights: dict[str, torch.Tensor] | None, snapshot: bool = False, teach: bool = False
    ) -> Rollout:
        """One rollout of ``num_steps`` env steps with the network ``weights`` (None: unchanged);
        ``snapshot``: these weights join the league first; ``teach``: record the kickstarting
        teacher's (compiled greedy's) action at every learner decision. Each env step is
        :meth:`choose`, :meth:`advance` and :meth:`settle` (:func:`collect_overlapped` runs the
        steps of several workers so that one's engine steps while another's networks choose)."""
        self.begin(weights, snapshot)
        for t in range(self.args.num_steps):
            move = self.advance(self.choose(t, teach))
            self.env_s += move.engine_s
            self.settle(move)
        return self.finish()

    def begin(self, weights: dict[str, torch.Tensor] | None, snapshot: bool) -> None:
        """A rollout begins: the network ``weights`` (None: unchanged), the snapshot joining the
        league, the tallies and the per-rollout buffers cleared."""
        recheck_threads()  # threads auto: the free cores since the last look
        if weights is not None:
            self.net.load_state_dict(weights)
        if snapshot:
            self.league.add_snapshot(self.net.actor)
        self.hand_returns, self.hand_points, self.hand_wins = [], [], []
        self.env_s = self.inference_s = 0.0
        for buffer in (self.b_valid, self.b_rew, self.b_term, self.b_trunc, self.b_trunc_val, self.b_teacher):
            buffer.zero_()
        self.last[:] = -1

    def finish(self) -> Rollout:
        """The rollout, once its ``num_steps`` env steps are settled: the open hands bootstrapped."""
        return self._rollout(*self._bootstrap())

    def choose(self, t: int, teach: bool) -> Move:
        """Env step ``t``, first part: the networks' actions (the learner's, its decisions recorded,
        and the league's networks'); the compiled opponents' come in :meth:`advance`."""
        venv, league, seats = self.venv, self.league, self.league.seats
        tick = time.perf_counter()
        learner = self.player == seats
        li = np.flatnonzero(learner)
        actions = np.zeros(len(seats), dtype=np.int64)
        hands = venv.hands()
        opponents = hands[li, 1 - seats[li]]
        opp_hand = unpack_card_masks(opponents)
        oracle = self.oracle_now(li, opponents)
        # Network inputs only where a network moves: the learner's slots and the snapshots'.
        netted = np.flatnonzero(learner | league.plays_a_network())
        obs_t = torch.zeros((len(seats), self.width), dtype=torch.float32)
        if self.inputs is None:
            obs_t[netted] = self.prepare(self.obs_np[netted])
        else:  # prepared on the engine's thread (collect_overlapped): the same figures row for row
            obs_t[netted] = torch.from_numpy(self.inputs[netted])
        mask_t = torch.from_numpy(self.mask_np.astype(np.bool_))
        tock = time.perf_counter()
        self.env_s += tock - tick
        with torch.no_grad(), self.precision:
            if li.size:
                actions[li] = self._learner_moves(t, li, obs_t[li], mask_t[li], oracle, teach)
                self.b_opp[t, li] = torch.from_numpy(opp_hand)
                if self.args.shaping:
                    dead = own_deadwood(hands[li, seats[li]])
                    self.b_phi[t, li] = torch.from_numpy(-self.args.shaping * self.args.reward_scale * dead)
            self._network_opponents_move(~learner, obs_t, mask_t, actions)
        self.inference_s += time.perf_counter() - tock
        taught = teach and self.teacher is None and li.size > 0
        return Move(t, actions, learner, li, "greedy" if taught else None)

    def advance(self, move: Move, ahead: bool = False) -> Move:
        """Env step ``move.t``, second part: the compiled opponents' moves and the engine's step;
        ``ahead``: also the network inputs of every slot's new view, which the next :meth:`choose`
        would otherwise prepare for the slots where a network moves. Only this worker's engine and
        league are touched and no network runs, so it may run on another thread while another
        worker chooses (the compiled loops release the GIL)."""
        tick = time.perf_counter()
        move.teacher = self.league.compiled_moves(self.venv, move.actions, ~move.learner, move.teacher_policy)
        move.stepped = self.venv.step(move.actions)
        if ahead:
            move.inputs = policy_inputs(move.stepped[0], self.args.inputs)
        move.engine_s = time.perf_counter() - tick
        return move

    def settle(self, move: Move) -> None:
        """Env step ``move.t``, last part: the teacher's actions recorded, the engine's new view
        taken, the hands that ended scored."""
        tick = time.perf_counter()
        if move.teacher is not None:
            self.b_teacher[move.t, move.li] = torch.from_numpy(move.teacher[move.li])
        assert move.stepped is not None, "settle() takes a move that advance() stepped"
        self.obs_np, self.mask_np, self.player, rewards, terminated, truncated = move.stepped
        self.inputs = move.inputs
        self._hands_ended(rewards, terminated, truncated)
        self.env_s += time.perf_counter() - tick

    def _learner_moves(
        self,
        t: int,
        li: np.ndarray,
        obs: torch.Tensor,
        mask: torch.Tensor,
        oracle: torch.Tensor | None,
        teach: bool,
    ) -> np.ndarray:
        """The learner's sampled actions in slots ``li`` (its inputs ``obs`` and ``mask`` there),
        each decision recorded at env step ``t`` with its log-probability and value (and the
        teacher's action, with a checkpoint teacher)."""
        device = self.device
        o, m = obs.to(device), mask.to(device)
        logits, value, _ = self.net(o, None if oracle is None else oracle.to(device))
        logits, value = logits.float(), value.float()
        a = sample_actions(logits, m, self.sampler)
        logp, _ = masked_log_probs(logits, m)
        self.b_obs[t, li] = obs
        self.b_mask[t, li] = mask
        if oracle is not None:
            self.b_oracle[t, li] = oracle
        self.b_act[t, li] = a.cpu()
        if teach and self.teacher is not None:
            self.b_teacher[t, li] = self.teacher(o, m).float().argmax(1).cpu()
        self.b_logp[t, li] = logp.gather(1, a[:, None]).squeeze(1).cpu()
        self.b_val[t, li] = value.cpu()
        self.b_valid[t, li] = True
        self.last[li] = t
        return a.cpu().numpy()

    def _network_opponents_move(
        self, to_move: np.ndarray, obs: torch.Tensor, mask: torch.Tensor, actions: np.ndarray
    ) -> None:
        """The league's networks' actions into ``actions`` where they are to move (``to_move``)."""
        for member, sj, argmax in self.league.network_turns(to_move):
            o, m = obs[sj].to(self.device), mask[sj].to(self.device)
            if argmax:  # a fixed network's logits are masked by its own forward
                actions[sj] = member(o, m).float().argmax(1).cpu().numpy()
            else:
                actions[sj] = sample_actions(member(o).float(), m, self.sampler).cpu().numpy()

    def _hands_ended(self, rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray) -> None:
        """Score the hands that ended on this step: the learner's figures, the reward at its last
        decision of the hand, a truncated hand's bootstrap value, the league's scores and draws."""
        ended = np.flatnonzero(terminated | truncated)
        if not ended.size:
            return
        args, seats, last = self.args, self.league.seats, self.last
        r = rewards[ended, seats[ended]] * args.reward_scale
        self.hand_returns.extend(r.tolist())
        self.hand_points.extend((r / args.reward_scale).tolist())
        self.hand_wins.extend((r > 0).astype(float).tolist())
        # The hand's reward belongs to the learner's last decision of that hand.
        own = ended[last[ended] >= 0]
        lt = last[own]
        self.b_rew[lt, own] += torch.from_numpy(rewards[own, seats[own]] * args.reward_scale)
        self.b_term[lt, own] = torch.from_numpy(terminated[own])
        self.b_trunc[lt, own] = torch.from_numpy(truncated[own])
        cut = own[truncated[own]]
        if cut.size:
            final = self.venv.final_observations[cut, seats[cut]]
            seen = self.b_oracle[last[cut], cut].to(self.device) if self.oracle_width else None
            with torch.no_grad(), self.precision:
                value = self.net.value(self.prepare(final).to(self.device), seen)
            self.b_trunc_val[last[cut], cut] = value.float().cpu()
        last[ended] = -1
        self.league.score(ended, rewards[ended, seats[ended]])
        self.league.new_hands(ended)

    def _bootstrap(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The value of the learner's current view of each open hand, and its shaping potential (0
        without shaping): what the decisions of hands still open at the end bootstrap from."""
        args, seats = self.args, self.league.seats
        tick = time.perf_counter()
        with torch.no_grad(), self.precision:
            view = self.prepare(self.venv.observe(seats)).to(self.device)
            every, hands = np.arange(len(seats)), self.venv.hands()
            now = self.oracle_now(every, hands[every, 1 - seats])
            next_value = self.net.value(view, None if now is None else now.to(self.device)).float().cpu()
            end_phi = torch.zeros(len(seats))
            if args.shaping:
                dead = own_deadwood(hands[every, seats])
                end_phi = torch.from_numpy(-args.shaping * args.reward_scale * dead)
        self.inference_s += time.perf_counter() - tick
        return next_value, end_phi

    def _rollout(self, next_value: torch.Tensor, end_potential: torch.Tensor) -> Rollout:
        """The rollout of the buffers: the decisions flat, the (T, N) entries copied (the buffers
        are the next rollout's)."""
        flat = self.b_valid.flatten().nonzero().squeeze(1)
        return Rollout(
            obs=self.b_obs.flatten(0, 1)[flat],
            mask=self.b_mask.flatten(0, 1)[flat],
            opp=self.b_opp.flatten(0, 1)[flat],
            oracle=self.b_oracle.flatten(0, 1)[flat],
            actions=self.b_act.flatten()[flat],
            teacher=self.b_teacher.flatten()[flat],
            logp=self.b_logp.flatten()[flat],
            valid=self.b_valid.clone(),
            values=self.b_val.clone(),
            rewards=self.b_rew.clone(),
            terminated=self.b_term.clone(),
            truncated=self.b_trunc.clone(),
            truncated_value=self.b_trunc_val.clone(),
            potential=self.b_phi.clone(),
            next_value=next_value,
            end_potential=end_potential,
            hand_returns=self.hand_returns,
            hand_points=self.hand_points,
            hand_wins=self.hand_wins,
            env_seconds=self.env_s,
            inference_seconds=self.inference_s,
            member_scores=self.league.member_scores(),
        )


def collect_overlapped(
    workers: list[RolloutWorker], weights: dict[str, torch.Tensor], snapshot: bool, teach: bool
) -> list[Rollout]:
    """Every worker's rollout, the workers' env steps interleaved so that the engine of one steps
    (on a thread of its own) while the networks of the next choose, EnvPool-style; each worker's
    rollout is exactly what its :meth:`RolloutWorker.collect` gives (nothing is shared between
    workers: each has its engine, league, network copy and generators). A worker's env seconds are
    its own work on this thread and the time this thread waited for its engine."""
    for worker in workers:
        worker.begin(weights, snapshot)
    pending: list[Future[Move] | None] = [None] * len(workers)
    with ThreadPoolExecutor(1, thread_name_prefix="ginenv-engine") as engine:
        for t in range(workers[0].args.num_steps):
            for k, worker in enumerate(workers):
                _settle_pending(worker, pending[k])
                pending[k] = engine.submit(worker.advance, worker.choose(t, teach), True)
        for worker, step in zip(workers, pending, strict=True):
            _settle_pending(worker, step)
    return [worker.finish() for worker in workers]


def _settle_pending(worker: RolloutWorker, step: Future[Move] | None) -> None:
    # Wait for the worker's engine step (the wait counted as its env time), then settle it.
    if step is None:
        return
    tick = time.perf_counter()
    move = step.result()
    worker.env_s += time.perf_counter() - tick
    worker.settle(move)
