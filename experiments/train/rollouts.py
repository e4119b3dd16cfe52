"""Rollout collection for PPO: the learner's decisions in its slots of the batched engine, with GAE.

The environment is the batched engine :class:`ginenv.vector.VectorGinRummy`: hands in lockstep,
each step applying one action per slot for the seat to move there. Per slot a
:class:`RolloutWorker` keeps which seat the learner plays in the current hand and which opponent it
faces (:class:`ginenv.experiments.train.league.League`, both drawn at every new hand). Every env
step, the learner acts in the slots where its seat is to move and the opponents act in the others;
only the learner's decisions are recorded.

A learner trajectory is its own decisions in a slot, in order. A hand's reward
(``rewards[:, seat] * reward_scale``) belongs to the learner's last decision of that hand; GAE runs
over each slot's decision sequence (:func:`learner_gae`). A terminated hand does not bootstrap; a
truncated hand (the turn limit) bootstraps from the value of the learner's final view of that hand
(``venv.final_observations``: the batched engine deals the next hand at once). At the end of a
rollout the open hands bootstrap from the value of the learner's current view
(``venv.observe(seats)``). Optional potential-based shaping on the own deadwood adds to the rewards
(:func:`potential_shaping`).

Each decision also records the opponent's true hand (from ``venv.hands()``), the target of the
auxiliary opponent-hand head, and, while kickstarting, the teacher's action. With an oracle critic
(``Args.critic_inputs``) it records the critic's oracle inputs too (the opponent's hand, its
deadwood features and the stock's next cards, :func:`oracle_inputs`), which only the value
MLP reads; a
truncated hand (rare: the turn limit) bootstraps with the oracle inputs of the learner's last
decision in it, the engine having dealt the next hand already.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from ginenv.agents.neural import MaskedPolicy
from ginenv.experiments.train.args import Args
from ginenv.experiments.train.checkpoints import fixed_member, policy_from
from ginenv.experiments.train.league import League, drawn_fixed
from ginenv.experiments.train.networks import (
    ORACLE_SIZE,
    ORACLE_STOCK,
    ActorCritic,
    masked_log_probs,
    matmul_precision,
    sample_actions,
)

from ginenv import kernels
from ginenv.actions import NUM_ACTIONS
from ginenv.cards import NUM_CARDS
from ginenv.features import input_size, policy_inputs, scaled_hand_features
from ginenv.rules import resolve_rules
from ginenv.vector import VectorGinRummy


def learner_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    valid: torch.Tensor,
    terminated: torch.Tensor,
    truncated: torch.Tensor,
    truncated_value: torch.Tensor,
    next_value: torch.Tensor,
    gamma: float,
    lam: float,
) -> torch.Tensor:
    """GAE per slot over the learner's own decisions, (T, N) in env-step order.

    ``valid[t, i]``: slot ``i`` holds a learner decision at step ``t`` (other entries are skipped
    and get advantage 0); ``rewards``, ``terminated`` and ``truncated`` are set at the learner's last
    decision of a hand that ended. After a terminated hand nothing is bootstrapped; after a
    truncated one, from ``truncated_value`` (T, N: the value of the learner's final view of that
    hand, set where ``truncated`` is); a decision whose hand is still open at the end bootstraps from
    ``next_value`` (N,). The chain never crosses from one hand into the next.
    """
    steps = rewards.shape[0]
    advantages = torch.zeros_like(rewards)
    next_adv = torch.zeros_like(next_value)
    for t in reversed(range(steps)):
        term, trunc = terminated[t].float(), truncated[t].float()
        boot = torch.where(truncated[t], truncated_value[t], next_value) * (1.0 - term)
        delta = rewards[t] + gamma * boot - values[t]
        adv = delta + gamma * lam * (1.0 - term) * (1.0 - trunc) * next_adv
        advantages[t] = torch.where(valid[t], adv, 0.0)
        next_value = torch.where(valid[t], values[t], next_value)
        next_adv = torch.where(valid[t], adv, next_adv)
    return advantages


def potential_shaping(
    potential: torch.Tensor,
    valid: torch.Tensor,
    ended: torch.Tensor,
    end_potential: torch.Tensor,
    gamma: float,
) -> torch.Tensor:
    """Shaping rewards ``gamma * potential(next decision) - potential(decision)``, (T, N).

    Per slot over the learner's decisions (``valid``) in env-step order, as in :func:`learner_gae`:
    the next decision's potential is 0 after a decision whose hand ended (``ended``), and
    ``end_potential`` (N,) for a hand still open at the end of the rollout.
    """
    shaped = torch.zeros_like(potential)
    following = end_potential.clone()
    for t in reversed(range(potential.shape[0])):
        after = torch.where(ended[t], 0.0, following)
        shaped[t] = torch.where(valid[t], gamma * after - potential[t], 0.0)
        following = torch.where(valid[t], potential[t], following)
    return shaped


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
class Rollout:
    """One worker's learner decisions of one rollout, flat in (env step, slot) order, with GAE done;
    plus per hand that ended the learner's figures, and the worker's seconds."""

    obs: torch.Tensor  # (B, input_size) float32: network inputs
    mask: torch.Tensor  # (B, NUM_ACTIONS) bool: the legal actions
    opp: torch.Tensor  # (B, 52) float32 0/1: the opponent's hand (the auxiliary head's target)
    oracle: torch.Tensor  # (B, ORACLE_SIZE) float32: an oracle critic's inputs ((B, 0) without one)
    actions: torch.Tensor  # (B,) int64
    teacher: torch.Tensor  # (B,) int64: the kickstarting teacher's action (when teaching, else 0)
    logp: torch.Tensor  # (B,) log-probability of the action under the policy that sampled it
    values: torch.Tensor  # (B,)
    advantages: torch.Tensor  # (B,)
    returns: torch.Tensor  # (B,) advantages + values
    hand_returns: list[float]  # per hand that ended: the learner's reward (points * reward_scale)
    hand_points: list[float]  # its points
    hand_wins: list[float]  # 1.0 where the learner won the hand
    env_seconds: float  # stepping the engine, drawing the league, preparing inputs
    inference_seconds: float  # the networks' forward passes, bootstrap and GAE
    member_scores: dict[str, float]  # the learner's running score against each league member (PFSP)

    @classmethod
    def concat(cls, parts: list[Rollout]) -> Rollout:
        """The workers' rollouts as one batch, worker after worker; seconds summed."""
        if len(parts) == 1:
            return parts[0]
        joined: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            items = [getattr(p, f.name) for p in parts]
            if isinstance(items[0], torch.Tensor):
                joined[f.name] = torch.cat(items)
            elif isinstance(items[0], list):
                joined[f.name] = [x for item in items for x in item]
            elif isinstance(items[0], dict):  # the workers' scores: their mean
                joined[f.name] = {k: float(np.mean([item[k] for item in items])) for k in items[0]}
            else:
                joined[f.name] = sum(items)
        return cls(**joined)


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
        if args.threads:
            torch.set_num_threads(args.threads)  # a Ray actor is a process of its own
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

        N, T = num_envs, args.num_steps
        league_rng = np.random.default_rng(league_seed)
        rules = resolve_rules(args.rules)
        self.venv = VectorGinRummy(N, rules=rules, seed=deal_seed, turn_limit=args.turn_limit)
        self.obs_np, self.mask_np, self.player = self.venv.reset()
        fixed = {k: fixed_member(k, args.inputs).to(self.device) for k in drawn_fixed(args.opponents)}
        self.league = League(
            args.opponents, args.snapshot_pool, self.net.actor, N, league_rng, fixed, args.pfsp
        )

        # Rollout storage, (T, N): entry (t, i) is the learner's decision at env step t in slot i, if any.
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
        teacher's (compiled greedy's) action at every learner decision."""
        args, venv, net, device, league = self.args, self.venv, self.net, self.device, self.league
        # The same matrix precision as the update (Args.precision), so the PPO ratio compares like with like.
        precision = matmul_precision(args.precision, device)
        if weights is not None:
            net.load_state_dict(weights)
        if snapshot:
            league.add_snapshot(net.actor)
        seats, last = league.seats, self.last
        obs_np, mask_np, player = self.obs_np, self.mask_np, self.player
        N, T = len(seats), args.num_steps
        hand_returns: list[float] = []
        hand_points: list[float] = []
        hand_wins: list[float] = []
        env_s = inference_s = 0.0
        for buffer in (self.b_valid, self.b_rew, self.b_term, self.b_trunc, self.b_trunc_val, self.b_teacher):
            buffer.zero_()
        last[:] = -1
        for t in range(T):
            tick = time.perf_counter()
            learner = player == seats
            li = np.flatnonzero(learner)
            actions = np.zeros(N, dtype=np.int64)
            opponents = venv.hands()[li, 1 - seats[li]]
            opp_hand = unpack_card_masks(opponents)
            oracle = self.oracle_now(li, opponents)
            # Network inputs only where a network moves: the learner's slots and the snapshots'.
            netted = np.flatnonzero(learner | league.plays_a_network())
            obs_t = torch.zeros((N, self.width), dtype=torch.float32)
            obs_t[netted] = self.prepare(obs_np[netted])
            mask_t = torch.from_numpy(mask_np.astype(np.bool_))
            tock = time.perf_counter()
            env_s += tock - tick
            with torch.no_grad(), precision:
                if li.size:
                    o, m = obs_t[li].to(device), mask_t[li].to(device)
                    logits, value, _ = net(o, None if oracle is None else oracle.to(device))
                    logits, value = logits.float(), value.float()
                    a = sample_actions(logits, m, self.sampler)
                    logp, _ = masked_log_probs(logits, m)
                    actions[li] = a.cpu().numpy()
                    self.b_obs[t, li] = obs_t[li]
                    self.b_mask[t, li] = mask_t[li]
                    self.b_opp[t, li] = torch.from_numpy(opp_hand)
                    if oracle is not None:
                        self.b_oracle[t, li] = oracle
                    self.b_act[t, li] = a.cpu()
                    if teach and self.teacher is not None:
                        self.b_teacher[t, li] = self.teacher(o, m).float().argmax(1).cpu()
                    self.b_logp[t, li] = logp.gather(1, a[:, None]).squeeze(1).cpu()
                    self.b_val[t, li] = value.cpu()
                    self.b_valid[t, li] = True
                    last[li] = t
                    if args.shaping:
                        dead = own_deadwood(venv.hands()[li, seats[li]])
                        self.b_phi[t, li] = torch.from_numpy(-args.shaping * args.reward_scale * dead)
                for member, sj, argmax in league.network_turns(~learner):
                    o, m = obs_t[sj].to(device), mask_t[sj].to(device)
                    if argmax:  # a fixed network's logits are masked by its own forward
                        actions[sj] = member(o, m).float().argmax(1).cpu().numpy()
                    else:
                        actions[sj] = sample_actions(member(o).float(), m, self.sampler).cpu().numpy()
            tick = time.perf_counter()
            inference_s += tick - tock
            taught = teach and self.teacher is None and li.size > 0
            greedy = league.compiled_moves(venv, actions, ~learner, "greedy" if taught else None)
            if greedy is not None:
                self.b_teacher[t, li] = torch.from_numpy(greedy[li])
            obs_np, mask_np, player, rewards, terminated, truncated = venv.step(actions)
            ended = np.flatnonzero(terminated | truncated)
            if ended.size:
                r = rewards[ended, seats[ended]] * args.reward_scale
                hand_returns.extend(r.tolist())
                hand_points.extend((r / args.reward_scale).tolist())
                hand_wins.extend((r > 0).astype(float).tolist())
                # The hand's reward belongs to the learner's last decision of that hand.
                own = ended[last[ended] >= 0]
                lt = last[own]
                self.b_rew[lt, own] += torch.from_numpy(rewards[own, seats[own]] * args.reward_scale)
                self.b_term[lt, own] = torch.from_numpy(terminated[own])
                self.b_trunc[lt, own] = torch.from_numpy(truncated[own])
                cut = own[truncated[own]]
                if cut.size:
                    final = venv.final_observations[cut, seats[cut]]
                    seen = self.b_oracle[last[cut], cut].to(device) if self.oracle_width else None
                    with torch.no_grad(), precision:
                        value = net.value(self.prepare(final).to(device), seen)
                    self.b_trunc_val[last[cut], cut] = value.float().cpu()
                last[ended] = -1
                league.score(ended, rewards[ended, seats[ended]])
                league.new_hands(ended)
            env_s += time.perf_counter() - tick
        self.obs_np, self.mask_np, self.player = obs_np, mask_np, player

        # Bootstrap: the open hands' value from the learner's current view of its hand.
        tick = time.perf_counter()
        with torch.no_grad(), precision:
            view = self.prepare(venv.observe(seats)).to(device)
            every, hands = np.arange(N), venv.hands()
            now = self.oracle_now(every, hands[every, 1 - seats])
            next_value = net.value(view, None if now is None else now.to(device)).float().cpu()
            if args.shaping:
                dead = own_deadwood(hands[every, seats])
                end_phi = torch.from_numpy(-args.shaping * args.reward_scale * dead)
                over = self.b_term | self.b_trunc
                self.b_rew += potential_shaping(self.b_phi, self.b_valid, over, end_phi, args.gamma)
            advantages = learner_gae(
                self.b_rew, self.b_val, self.b_valid, self.b_term, self.b_trunc, self.b_trunc_val,
                next_value, args.gamma, args.gae_lambda,
            )  # fmt: skip
            returns = advantages + self.b_val
        inference_s += time.perf_counter() - tick

        flat = self.b_valid.flatten().nonzero().squeeze(1)
        return Rollout(
            obs=self.b_obs.flatten(0, 1)[flat],
            mask=self.b_mask.flatten(0, 1)[flat],
            opp=self.b_opp.flatten(0, 1)[flat],
            oracle=self.b_oracle.flatten(0, 1)[flat],
            actions=self.b_act.flatten()[flat],
            teacher=self.b_teacher.flatten()[flat],
            logp=self.b_logp.flatten()[flat],
            values=self.b_val.flatten()[flat],
            advantages=advantages.flatten()[flat],
            returns=returns.flatten()[flat],
            hand_returns=hand_returns,
            hand_points=hand_points,
            hand_wins=hand_wins,
            env_seconds=env_s,
            inference_seconds=inference_s,
            member_scores=league.member_scores(),
        )
