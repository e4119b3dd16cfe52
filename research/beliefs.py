"""Policy-weighted beliefs: opponent hands weighted by how likely the opponent's own moves were.

This module owns the world sampler that reads the opponent's *moves*, not only the cards they
touched. :class:`PolicyBelief` follows one seat through a hand (:meth:`PolicyBelief.update` with each
of that seat's observation vectors, nothing else) and, when asked, draws ``proposals`` candidate
opponent hands from a proposal (uniform over the unseen cards, the Bayesian model's card weights
of :mod:`ginenv.agents.levels.belief`, or the network's opponent-hand head), weights each by the
likelihood of the opponent's observed moves under a policy network used as the model of the
opponent, and resamples worlds from the weighted particles (:meth:`PolicyBelief.sample_hands`) or
gives their card marginals (:meth:`PolicyBelief.probabilities`).

The target is ``P(H | what the seat saw) ∝ prior(H) * prod_t pi(a_t | o_t(H))``: the prior is
uniform over the hands the public record allows (a shuffled deck), ``a_t`` the opponent's move at
its decision ``t`` and ``o_t(H)`` the observation the opponent had then, rebuilt from the public
record and the candidate hand: the seat's :class:`ginenv.public_record.PublicRecord` reads the
moves, and writes each past decision's observation and legal mask with the kernel's own encoder
(:meth:`ginenv.public_record.Decision.observe`), so a replayed decision is the one the env showed.
The proposals are conditional-Bernoulli draws (``P(H) ∝ prod_{c in H} w_c`` over the unseen cards,
exact, so ``log q(H)`` is known up to a constant) and the importance weight is ``pi-likelihood / q``.

Replaying a past decision needs the opponent's hand then. Going back from the candidate hand, each
turn's discard is put back and its draw taken out; a draw from the discard pile is public, a draw
from the stock is not, so the stock card is drawn uniformly from the cards of that turn's hand that
the seat could not see then (given the hand now, every consistent history of stock draws is
equally likely under the shuffled deck, so this is exact sampling of the latent draws, one per
particle).

What is replayed, and what is capped (to keep the cost a search can pay):

* only the opponent's **regular turns** (draw, then discard, between the seat's discard and its
  next draw): the upcard offers of the first turn are not replayed, and the replay stops at the
  first turn it cannot read (so it is always a contiguous run of the latest turns);
* at most ``max_turns`` turns (two decisions each: the draw and the discard), the latest ones;
* the decisions are judged under the standard rules (:data:`REPLAY_RULES`): big gin, rare and
  rule-dependent, is left out of the discard decision's mask.

The network is evaluated once per call on ``proposals * decisions`` observation rows in one batch.
Everything here reads one seat's observations only (:func:`ginenv.observation.decode`); it never
sees the opponent's cards.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from ginenv.agents.levels.belief import OpponentModel, sample_subsets, subset_marginals
from ginenv.agents.neural.network import MaskedPolicy

from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, NUM_ACTIONS
from ginenv.cards import NUM_CARDS, cards_of
from ginenv.observation import OBS_SIZE, SeatView, decode
from ginenv.public_record import ME, OPP, Decision, Move, PublicRecord
from ginenv.rules import Rules

__all__ = [
    "PROPOSALS",
    "WEIGHTINGS",
    "OpponentTurn",
    "PolicyBelief",
    "conditional_hands",
    "conditional_marginals",
    "opponent_observations",
    "opponent_turns",
]

#: The proposal distributions :class:`PolicyBelief` can draw candidate hands from.
PROPOSALS = ("uniform", "model", "head")

#: How the particles are weighted (see :class:`PolicyBelief`).
WEIGHTINGS = ("exact", "product")

#: Probabilities of the head are kept inside [EPS, 1 - EPS] before they become odds.
EPS = 1e-3

_CARD_BITS = np.int64(1) << np.arange(NUM_CARDS, dtype=np.int64)


def _bits(masks: np.ndarray | np.int64 | int) -> np.ndarray:
    """Card masks (any shape) as booleans with a trailing axis of 52."""
    return (np.asarray(masks, dtype=np.int64)[..., None] & _CARD_BITS) != 0


def _masks(bits: np.ndarray) -> np.ndarray:
    """The inverse of :func:`_bits`: booleans (..., 52) to int64 card masks."""
    return (bits.astype(np.int64) * _CARD_BITS).sum(-1)


#: The rules the replayed decisions are judged under: the standard ones (big gin, rare and
#: rule-dependent, is left out of the discard decision's mask; a card just taken may not be thrown back).
REPLAY_RULES = Rules()


@dataclass(frozen=True)
class OpponentTurn:
    """One regular turn of the opponent (draw, then discard), as the seat's public record holds it.

    ``draw`` and ``discard`` are the public moments of the opponent's two decisions
    (:class:`ginenv.public_record.Decision`: its observation and mask there, for any hand it may have
    held, come from the kernel's encoder).
    """

    draw: Decision
    discard: Decision
    #: The card on top of the pile at the opponent's draw (the seat's discard).
    offered: int
    #: Whether the opponent took it (else it drew from the stock).
    took: bool
    #: The card the opponent discarded.
    discarded: int
    #: Cards the seat could not see at the turn (what a stock draw could have been).
    hidden: int


def opponent_turns(record: PublicRecord) -> list[OpponentTurn]:
    """The latest contiguous run of the opponent's regular turns in ``record``, oldest first: a draw
    (the seat's discard taken, or a stock draw over it) and a discard, right after the seat's discard
    (the upcard offers of the first turn are not regular turns)."""
    events = record.events
    turns: list[OpponentTurn] = []
    for i in range(record.since + 1, len(events) - 1):
        mine, draw, discard = events[i - 1], events[i], events[i + 1]
        if draw.who != OPP or draw.kind not in (Move.TAKE, Move.STOCK):
            continue
        before = record.states[i - 1]
        if mine.who != ME or mine.kind != Move.DISCARD or discard.kind != Move.DISCARD or before is None:
            turns = []  # replay only a contiguous run of the latest turns
            continue
        turns.append(
            OpponentTurn(
                draw=record.decision(i),
                discard=record.decision(i + 1),
                offered=mine.card,
                took=draw.kind == Move.TAKE,
                discarded=discard.card,
                hidden=before.unseen,
            )
        )
    return turns


def opponent_observations(
    turns: list[OpponentTurn], hands: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The opponent's observations, legal masks and moves at the decisions of ``turns``, for each
    candidate hand ``hands`` (int64 masks of the opponent's hand now).

    Returns ``(obs (N, 2T, OBS_SIZE) float32, mask (N, 2T, NUM_ACTIONS) bool, actions (2T,))``, the
    decisions in the order draw, discard of each turn, oldest turn first. Going back from the hand
    now, each turn's discard is put back and its draw removed; a stock draw is a uniformly random
    card of that turn's hand among those hidden from the seat then (one draw per candidate, from
    ``rng``).
    """
    hands = np.asarray(hands, dtype=np.int64).reshape(-1)
    n, t_count = hands.size, len(turns)
    obs = np.zeros((n, 2 * t_count, OBS_SIZE), dtype=np.float32)
    mask = np.zeros((n, 2 * t_count, NUM_ACTIONS), dtype=bool)
    actions = np.zeros(2 * t_count, dtype=np.int64)
    after = _bits(hands)
    for j in range(t_count - 1, -1, -1):
        turn = turns[j]
        at_discard = after.copy()
        at_discard[:, turn.discarded] = True
        if turn.took:
            drawn = np.zeros_like(at_discard)
            drawn[:, turn.offered] = True
        else:
            eligible = at_discard & _bits(np.int64(turn.hidden))[None]
            keys = np.where(eligible, rng.random(eligible.shape), -1.0)
            drawn = np.zeros_like(at_discard)
            drawn[np.arange(n), keys.argmax(1)] = True
        at_draw = at_discard & ~drawn
        for k, discard, held in ((2 * j, False, at_draw), (2 * j + 1, True, at_discard)):
            obs[:, k], mask[:, k], actions[k] = _rows(turn, discard, held)
        after = at_draw
    return obs, mask, actions


def _rows(turn: OpponentTurn, discard: bool, held: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The opponent's observation rows (N, OBS_SIZE), legal masks (N, NUM_ACTIONS) and move at one
    decision of ``turn`` (its discard if ``discard``, else its draw), for hands ``held`` (N, 52)."""
    decision = turn.discard if discard else turn.draw
    obs, mask = decision.observe(_masks(held), REPLAY_RULES)
    if discard:
        return obs, mask.astype(bool), DISCARD_BASE + turn.discarded
    return obs, mask.astype(bool), DRAW_DISCARD if turn.took else DRAW_STOCK


def _unseen_weights(log_w: np.ndarray, unseen: int, slots: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(unseen card ids, their log weights centred on 0, the number of cards to draw)."""
    ids = np.array(cards_of(unseen), dtype=np.int64)
    lw = np.asarray(log_w, dtype=np.float64)[ids]
    return ids, lw - (lw.mean() if ids.size else 0.0), min(slots, ids.size)


def conditional_marginals(log_w: np.ndarray, known: int, unseen: int, slots: int) -> np.ndarray:
    """The exact card marginals (52) of :func:`conditional_hands`' distribution: 1 for the
    ``known`` cards, ``P(c in S)`` for the unseen ones (they sum to ``slots``), 0 elsewhere."""
    ids, lw, k = _unseen_weights(log_w, unseen, slots)
    out = _bits(np.int64(known)).astype(np.float64)
    if k > 0:
        out[ids] = subset_marginals(np.exp(lw), k)
    return out


def conditional_hands(
    log_w: np.ndarray, known: int, unseen: int, slots: int, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` exact draws of ``slots`` unseen cards with ``P(S) ∝ prod_{c in S} exp(log_w[c])``, each
    returned as a hand mask with the ``known`` cards, and ``log q`` of each draw (up to one constant
    shared by all draws: the sum of the drawn cards' log weights)."""
    ids, lw, k = _unseen_weights(log_w, unseen, slots)
    # The levels' exact sequential draw (one row of uniforms a hand, the cards in id order).
    hands = sample_subsets(np.exp(lw), k, ids, rng.random((n, ids.size)), known)
    chosen = _bits(hands & ~np.int64(known))[:, ids]
    return hands, (chosen * lw).sum(1)


def _normalised(log_w: np.ndarray) -> np.ndarray:
    w = np.exp(log_w - log_w.max())
    return w / w.sum()  # type: ignore[no-any-return]


class PolicyBelief:
    """Opponent hands weighted by the likelihood of the opponent's moves under a policy network.

    ``policy`` is the model of the opponent (the shipped network for ``neural``); ``proposal`` one
    of :data:`PROPOSALS` (``head`` needs ``head``, a function of observation vectors to the 52
    probabilities, :func:`ginenv.agents.neural.opponent_hand_predictor`); ``proposals`` the
    candidate hands drawn per call; ``max_turns`` the most opponent turns replayed (the latest);
    ``temperature`` divides the network's logits (1: its own probabilities); ``weighting``:
    ``exact`` weighs each candidate by ``likelihood / q`` (the target is the uniform prior times the
    likelihood of the replayed moves: the proposal only proposes), ``product`` by the likelihood
    alone (the target is the proposal times the likelihood: the proposal's reading of the whole
    history is kept as a prior, and the evidence of the replayed moves it already used counts
    twice); ``adapt``: how the unknown stock draws of the replay are handled (see
    :meth:`log_likelihood`); ``ess_floor`` > 0 tempers the weights (raises them to the largest
    power in [0, 1]) so that their effective sample size is at least that share of the proposals
    (0: never; tempered weights are no longer the exact posterior, a compromise against a
    collapse onto a few hands).
    """

    def __init__(
        self,
        policy: MaskedPolicy,
        proposal: str = "head",
        proposals: int = 256,
        max_turns: int = 6,
        temperature: float = 1.0,
        head: Callable[[np.ndarray], np.ndarray] | None = None,
        weighting: str = "exact",
        adapt: bool = True,
        ess_floor: float = 0.0,
    ) -> None:
        """See the class docstring."""
        if weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {', '.join(WEIGHTINGS)}, got {weighting!r}")
        if proposal not in PROPOSALS:
            raise ValueError(f"proposal must be one of {', '.join(PROPOSALS)}, got {proposal!r}")
        if proposal == "head" and head is None:
            raise ValueError("the head proposal needs head=, a predictor of the opponent's cards")
        if proposals < 1 or max_turns < 0 or not temperature > 0:
            raise ValueError("proposals must be >= 1, max_turns >= 0 and temperature > 0")
        self.policy, self.proposal, self.proposals = policy, proposal, int(proposals)
        self.max_turns, self.temperature, self.head = int(max_turns), float(temperature), head
        self.weighting, self.adapt, self.ess_floor = weighting, bool(adapt), float(ess_floor)
        #: The Bayesian model of the levels (a proposal); its public record is the seat's.
        self.model = OpponentModel()
        #: The opponent's latest contiguous run of regular turns (see :func:`opponent_turns`).
        self.turns: list[OpponentTurn] = []
        self._vector: np.ndarray | None = None
        #: Effective sample size of the last call's weights (1 .. proposals).
        self.ess = float("nan")
        #: The power the last call's weights were tempered to (1: not tempered).
        self.power = 1.0

    def reset(self) -> None:
        """Forget the hand."""
        self.model.reset()
        self.turns = []
        self._vector = None

    def update(self, observation: np.ndarray) -> None:
        """Read one observation vector of the seat (call it with each of the seat's observations)."""
        vector = np.asarray(observation, dtype=np.float32)
        self.model.update(decode(vector))
        self.turns = opponent_turns(self.record)
        self._vector = vector

    @property
    def record(self) -> PublicRecord:
        """The seat's public record of the hand."""
        return self.model.record

    def _view(self) -> SeatView:
        if self.record.view is None or self._vector is None:
            raise RuntimeError("PolicyBelief.update() has not been given an observation yet")
        return self.record.view

    def _slots(self) -> int:
        self._view()
        return self.record.opponent_hidden

    def proposal_probabilities(self) -> np.ndarray:
        """The proposal's exact probability that the opponent holds each of the 52 cards (facts
        included; the unseen cards' sum to the opponent's unknown slots)."""
        view = self._view()
        return conditional_marginals(
            self._proposal_log_weights(), view.opponent_taken, view.unseen, self._slots()
        )

    def _proposal_log_weights(self) -> np.ndarray:
        if self.proposal == "model":
            return self.model.log_weights()
        if self.proposal == "uniform":
            return np.zeros(NUM_CARDS)
        assert self.head is not None and self._vector is not None
        p = np.clip(np.asarray(self.head(self._vector[None])[0], dtype=np.float64), EPS, 1.0 - EPS)
        return np.log(p) - np.log1p(-p)

    def _draw(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        view = self._view()
        log_w = self._proposal_log_weights()
        return conditional_hands(log_w, view.opponent_taken, view.unseen, self._slots(), n, rng)

    def _replayed(self) -> list[OpponentTurn]:
        return self.turns[-self.max_turns :] if self.max_turns else []

    def particles(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(``proposals`` candidate hands, their normalised importance weights)."""
        hands, log_q = self._draw(self.proposals, rng)
        log_w = self.log_likelihood(hands, rng) - (log_q if self.weighting == "exact" else 0.0)
        w = _normalised(log_w)
        self.power = 1.0
        if self.ess_floor > 0 and 1.0 / (w**2).sum() < self.ess_floor * hands.size:
            # Temper: the largest power of the weights whose effective sample size reaches the floor.
            low, high = 0.0, 1.0
            for _ in range(30):
                mid = 0.5 * (low + high)
                ok = 1.0 / (_normalised(mid * log_w) ** 2).sum() >= self.ess_floor * hands.size
                low, high = (mid, high) if ok else (low, mid)
            self.power = low
            w = _normalised(low * log_w)
        self.ess = float(1.0 / (w**2).sum())
        return hands, w

    def _log_probs(self, rows: list[tuple[np.ndarray, np.ndarray, int]]) -> list[np.ndarray]:
        """The policy's log-probability of the move of each block of rows, one batch for all."""
        obs = np.concatenate([r[0] for r in rows])
        mask = torch.from_numpy(np.concatenate([r[1] for r in rows]))
        moves = torch.from_numpy(np.concatenate([np.full(len(r[0]), r[2]) for r in rows]))
        logits = self.policy(self.policy.prepare(obs)).double() / self.temperature
        logp = logits.masked_fill(~mask, float("-inf")).log_softmax(-1)
        chosen = logp[torch.arange(len(obs)), moves].numpy()
        return np.split(chosen, np.cumsum([len(r[0]) for r in rows])[:-1])

    @torch.no_grad()
    def log_likelihood(self, hands: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Log-probability of the opponent's replayed moves under the policy, for each candidate hand
        (0 for all when there is no turn to replay).

        With :attr:`adapt` (the default), each stock draw is chosen, going back turn by turn, among
        the cards it could have been in proportion to how well it explains that turn's draw and the
        previous turn's discard, and the likelihood averages over the choices (an unbiased estimate
        of the likelihood summed over the unknown draws, far less noisy than one uniform draw);
        else one uniform draw per stock draw (:func:`opponent_observations`).
        """
        turns = self._replayed()
        hands = np.asarray(hands, dtype=np.int64).reshape(-1)
        if not turns:
            return np.zeros(hands.size)
        if not self.adapt:
            obs, mask, actions = opponent_observations(turns, hands, rng)
            n, d = obs.shape[:2]
            rows = [(obs[:, k], mask[:, k], int(actions[k])) for k in range(d)]
            return np.sum(self._log_probs(rows), axis=0)  # type: ignore[no-any-return]
        n = hands.size
        after = _bits(hands)
        last = turns[-1]
        held = after.copy()
        held[:, last.discarded] = True
        total = self._log_probs([_rows(last, True, held)])[0]
        for j in range(len(turns) - 1, -1, -1):
            turn = turns[j]
            at_discard = after.copy()
            at_discard[:, turn.discarded] = True
            if turn.took:
                choices = np.full((n, 1), turn.offered)
                valid = np.ones((n, 1), dtype=bool)
            else:
                eligible = at_discard & _bits(turn.hidden)[None]
                width = max(1, int(eligible.sum(1).max()))
                order = np.argsort(~eligible, axis=1, kind="stable")[:, :width]
                choices = order
                valid = np.take_along_axis(eligible, order, 1)
            width = choices.shape[1]
            flat = np.repeat(at_discard, width, axis=0)
            flat[np.arange(n * width), choices.reshape(-1)] = False  # the hand at the draw
            rows = [_rows(turn, False, flat)]
            if j > 0:
                before = flat.copy()
                before[:, turns[j - 1].discarded] = True  # the previous turn's discard decision
                rows.append(_rows(turns[j - 1], True, before))
            score = np.sum(self._log_probs(rows), axis=0).reshape(n, width)
            score = np.where(valid, score, -np.inf)
            top = score.max(1, keepdims=True)
            p = np.exp(score - top)
            mass = p.sum(1)
            total = total + top[:, 0] + np.log(mass) - np.log(valid.sum(1))
            pick = (p.cumsum(1) < rng.random((n, 1)) * mass[:, None]).sum(1)
            pick = np.minimum(pick, width - 1)
            after = flat.reshape(n, width, NUM_CARDS)[np.arange(n), pick]
        return total  # type: ignore[no-any-return]

    def sample_hands(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` opponent hands (int64 masks) resampled from the weighted particles (systematic); with
        no turn to replay (none yet, or ``max_turns`` 0), ``n`` fresh draws of the proposal."""
        if not self._replayed():
            self.ess = float(n)
            return self._draw(n, rng)[0]
        hands, w = self.particles(rng)
        positions = (rng.random() + np.arange(n)) / n
        index = np.minimum(np.searchsorted(np.cumsum(w), positions), hands.size - 1)
        return hands[rng.permutation(index)]

    def probabilities(self, rng: np.random.Generator, prior_weight: float = 8.0) -> np.ndarray:
        """P(opponent holds card) for the 52 cards: the weighted particles' card frequencies, pulled
        towards the proposal's marginals by ``prior_weight`` pseudo-particles against the effective
        sample size (so that a card no particle holds keeps a probability above 0)."""
        hands, w = self.particles(rng)
        freq = (w[:, None] * _bits(hands)).sum(0)
        prior = self.proposal_probabilities()
        return (freq * self.ess + prior * prior_weight) / (self.ess + prior_weight)  # type: ignore[no-any-return]
