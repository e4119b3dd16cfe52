"""master: the expert's estimate, turned into decisions by simulating the rest of the hand.

The seeds' "Master" / "Maître" (000): it decides to knock by simulating hundreds of plausible opponent
hands drawn from the Bayesian estimate, undercut risk included; it never sees the opponent's cards.

Strategy, precisely. Each decision feeds the observation to the :class:`.belief.OpponentModel`
(as the expert does) and draws ``N`` *worlds*: an opponent hand sampled from the estimate with the
hand-quality tilt (:meth:`OpponentModel.sample_hands`), and an order of the stock (the unseen cards
that hand leaves, shuffled). Every option of the decision is then scored in the same worlds (common
random numbers, so the options' differences are measured far more precisely than their values):

* **knock with discard d**: the exact showdown against the world's opponent hand (the engine's
  arrangement of the knocker and the defender's best melds and layoffs,
  :class:`.belief.Knock`): the knock's points, negative when undercut, gin bonus at 0.
* **discard d and play on**: a *rollout*, the rest of the hand played out in the world by a fast
  numba policy for both players (:mod:`.master_rollout`): take the top discard when it goes into a
  meld and lowers the deadwood (so the rollouts cannot cycle cards through the pile either),
  otherwise draw from the stock; discard the card leaving the least deadwood (the higher card on
  ties; a discard that does not knock also pays :attr:`MasterAgent.feed_cost` if it goes into a
  meld with the world's opponent hand and :attr:`MasterAgent.partner_cost` per card of the hand it
  could share a meld with, :func:`policy_discard_safe`); knock as soon as the deadwood allows; the
  dead-hand rule applies. The world is a hand record (:func:`ginenv.kernels.hand.set_position`)
  stepped by the engine's kernel under the table's rules less big gin, and the rollout's showdown is
  the engine's (:func:`ginenv.kernels.knock_outcome`: the knocker's arrangement with the fewest
  layoff targets, the defender's joint melds and layoffs).
  Playing on for gin is this option when a knock was legal. Whether the card just taken may be
  thrown back follows the rules master is given (``Rules.discard_taken_card``, the ``rules``
  argument; it is not in the observation); the policy's take is never worth it for a card it would
  throw back, so the rule changes no rollout's result.
* **take the top discard / draw from the stock**: a rollout that starts with that draw (after a
  take, the policy's discard; the take is scored against the stock draw in the same worlds).
* **No cycling.** Only a take that lowers the deadwood is ever considered
  (:func:`.heuristics.take_is_useful`; any other top discard is passed over without
  simulating), and after a take only a card that keeps the deadwood lower than before may be thrown
  (:class:`.level_base.TakeGuard`); the simulated candidates after a take are those cards
  only. Without it, master and expert passed Ah, Ac and Ad back and forth through the pile forever
  on some deals.

The option with the best mean points is played: every draw with a useful take
(:attr:`MasterAgent.simulate_draws`) and every discard (:attr:`MasterAgent.simulate_discards`) is
searched this way, not only the knock. The candidates are pruned first with the expert's
evaluation (:mod:`.expert`): every legal knock (the least deadwood for each distinct deadwood
value, at most :attr:`MasterAgent.knock_candidates`) and the :attr:`MasterAgent.discard_candidates`
plain discards with the best expert score ``S`` (with a knock legal, also the knock's own discard,
to keep the knockable hand and play on). A plain discard is preferred over a knock only if
it wins by more than :attr:`MasterAgent.play_on_margin` points (rollouts play both sides simply, so
the play-on values carry a small bias). Worlds: :attr:`MasterAgent.worlds_knock` when a knock is
legal (the knock decision is the one the seeds name), :attr:`MasterAgent.worlds` otherwise.
Without a legal knock, a card that certainly goes into a meld with cards the opponent took from the
pile is simulated only when it is the expert's first choice (:attr:`MasterAgent.skip_shown_melds`:
the rollouts play the opponent too simply to see what feeding it costs, so near-ties went to the
feeding card). With only one candidate left the decision needs no simulation. Gin and big gin are
always taken.

Time: the draws of worlds and the rollouts are numba code. Measured with
``benchmarks/bench_master.py`` (2000 duplicate hands, one worker on the shared 2-core machine,
2026-11-30): median decision 6.5 ms, 99th percentile 15 ms against ``openspiel_simple`` and 24 ms
against master without the rollouts' meld partners (targets 30 and 250 ms). Random
only through the worlds, drawn from the generator that ``reset(seed)`` seeds.
"""

from __future__ import annotations

import enum

import numpy as np
from ginenv.agents.base import Observation
from ginenv.agents.levels.belief import Knock, OpponentModel
from ginenv.agents.levels.expert import ExpertAgent, discard_values
from ginenv.agents.levels.heuristics import legal_discards, legal_knocks, take_is_useful
from ginenv.agents.levels.master_rollout import (
    policy_discard,
    policy_discard_safe,
    policy_knocks,
    policy_takes,
    rollout_rules,
)
from ginenv.agents.levels.master_rollout import rollout as compiled_rollout
from numba import njit

from ginenv import compiling
from ginenv.actions import DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.cards import CARD_VALUES, NUM_CARDS, cards_of
from ginenv.kernels import defend_knock, meldable, min_deadwood
from ginenv.kernels import hand as H
from ginenv.observation import SeatView


class Option(enum.IntEnum):
    """The kinds of option master scores in its worlds (the ``kinds`` of :func:`simulate_options`)."""

    #: Knock with a discard.
    KNOCK = 0
    #: Discard a card and play on.
    PLAY_ON = 1
    #: Take the top discard.
    TAKE_TOP = 2
    #: Draw from the stock.
    DRAW = 3


# --------------------------------------------------------------------------- numba simulation
# The rollout policy is master_rollout's; every world is a hand record written by the engine's
# ginenv.kernels.hand.set_position and played by its own step (ginenv.kernels.hand.apply).


@njit(cache=True)
def rollout(
    me: int,
    opp: int,
    stock: np.ndarray,
    top: int,
    mover: int,
    limit: int,
    cfg: np.ndarray,
    traps: np.ndarray,
    trap_stock: int,
    feed_cost: float,
    partner_cost: float,
) -> int:
    """Play a world out from a draw phase with the rollout policy
    (:func:`.master_rollout.rollout`): seat 0 (me) holds ``me`` and seat 1 ``opp``, ``mover`` (0 me,
    1 the opponent) draws next, ``top`` is the top discard (-1: none, the draw is from the stock),
    ``stock`` the stock in drawing order and ``limit`` the hand's knock limit; ``cfg`` the rule
    array (:func:`.master_rollout.rollout_rules`); ``traps[p]`` is player ``p``'s trap deadwood;
    ``feed_cost`` and ``partner_cost`` as in :func:`.master_rollout.policy_discard_safe`. Points
    for me."""
    s = np.empty((1, H.RECORD_SIZE), dtype=np.int64)
    H.set_position(s, 0, me, opp, stock, top, H.Phase.DRAW, mover, limit)
    return compiled_rollout(s, 0, cfg, 0, traps, trap_stock, feed_cost, partner_cost)


@njit(cache=True)
def _shuffled_stock(unseen_ids: np.ndarray, opp: int, u: np.ndarray) -> np.ndarray:
    """The unseen cards not in ``opp``, in the random order given by the uniforms ``u``."""
    out = np.empty(unseen_ids.size, dtype=np.int64)
    n = 0
    for i in range(unseen_ids.size):
        if not (opp >> unseen_ids[i]) & 1:
            out[n] = unseen_ids[i]
            n += 1
    for i in range(n - 1, 0, -1):
        j = int(u[i] * (i + 1))
        out[i], out[j] = out[j], out[i]
    return out[:n]


@njit(cache=True)
def simulate_options(
    hand: int,
    kinds: np.ndarray,
    cards: np.ndarray,
    opps: np.ndarray,
    unseen_ids: np.ndarray,
    u: np.ndarray,
    top: int,
    limit: int,
    cfg: np.ndarray,
    knock_melds: np.ndarray,
    knock_deadwood: np.ndarray,
    traps: np.ndarray,
    trap_stock: int,
    feed_cost: float,
    partner_cost: float,
) -> np.ndarray:
    """Points of each option in each world: ``out[world, option]``.

    Option kinds (:class:`Option`): KNOCK discarding ``cards[i]`` (``knock_melds[i]``/
    ``knock_deadwood[i]``: the engine's arrangement), PLAY_ON: discard ``cards[i]`` and play on
    (``hand`` holds 11 cards), TAKE_TOP: take the top discard, DRAW: draw from the stock (``hand``
    holds 10 cards; ``top`` is the top discard). ``limit`` is the hand's knock limit and ``cfg`` the
    rule array of the worlds (:func:`.master_rollout.rollout_rules`).
    ``traps[world]`` holds the two players' trap deadwoods in that world (:func:`policy_knocks`);
    ``feed_cost`` and ``partner_cost`` as in :func:`rollout`.
    """
    nw = opps.size
    no = kinds.size
    out = np.zeros((nw, no))
    gin_bonus, undercut_bonus, _ = H.bonuses(cfg)
    s = np.empty((1, H.RECORD_SIZE), dtype=np.int64)
    for w in range(nw):
        opp = opps[w]
        stock = _shuffled_stock(unseen_ids, opp, u[w])
        for i in range(no):
            k = kinds[i]
            if k == Option.KNOCK:
                melds = knock_melds[i]
                scored = defend_knock(melds[melds != 0], knock_deadwood[i], opp, gin_bonus, undercut_bonus)
                out[w, i] = scored[1]
                continue
            if k == Option.PLAY_ON:
                # ``hand`` holds 11 cards: discard cards[i] and play on.
                H.set_position(s, 0, hand, opp, stock, -1, H.Phase.DISCARD, 0, limit)
                first = DISCARD_BASE + cards[i]
            else:
                H.set_position(s, 0, hand, opp, stock, top, H.Phase.DRAW, 0, limit)
                first = DRAW_DISCARD if k == Option.TAKE_TOP else DRAW_STOCK
            if H.apply(s, 0, first, cfg):
                out[w, i] = 0.0  # a dead hand at once
            else:
                out[w, i] = compiled_rollout(s, 0, cfg, 0, traps[w], trap_stock, feed_cost, partner_cost)
    return out


@njit(cache=True)
def meld_rate(hands: np.ndarray) -> np.ndarray:
    """For every card: the share of the sampled opponent ``hands`` it would go into a meld with."""
    out = np.zeros(NUM_CARDS)
    for h in hands:
        for c in range(NUM_CARDS):
            bit = 1 << c
            if not h & bit and meldable(h | bit) & bit:
                out[c] += 1.0
    return out / max(1, hands.size)


def _action_of(kind: int, card: int, decline: int) -> int:
    """The action id of a simulated option (``decline``: the action that leaves the top discard)."""
    if kind == Option.KNOCK:
        return KNOCK_BASE + card
    if kind == Option.PLAY_ON:
        return DISCARD_BASE + card
    return DRAW_DISCARD if kind == Option.TAKE_TOP else decline


class MasterAgent(ExpertAgent):
    """Simulates its knock decisions in worlds drawn from the opponent estimate."""

    name = "master"

    #: Worlds simulated for a knock decision.
    worlds_knock: int = 512
    #: Worlds for the other simulated decisions (discards, draws) when those are switched on.
    worlds: int = 512
    #: Opponent hands sampled for the feeding risk of discards (:func:`meld_rate`).
    feed_samples: int = 128
    #: Knocks simulated (the least deadwood for each distinct deadwood left).
    knock_candidates: int = 2
    #: Plain discards simulated against the knocks (the best by the expert's score).
    discard_candidates: int = 3
    #: A plain discard must beat the best knock by this many points to be preferred.
    play_on_margin: float = 0.0
    #: Simulate plain discards when no knock is legal (else the expert's score decides).
    simulate_discards: bool = True
    #: Simulated plain discards leave out a card that certainly goes into a meld with cards the
    #: opponent took from the pile, unless it is the expert's first choice (rollouts play the
    #: opponent too simply to see what such a card costs).
    skip_shown_melds: bool = True
    #: Simulate the draw decision (else the expert's draw rule).
    simulate_draws: bool = True
    #: Own trap deadwood in the rollouts after the decision (:func:`policy_knocks`).
    own_trap: int = 5
    #: The opponent's trap deadwood, one value per share of the worlds (a mixture of styles).
    opponent_traps: tuple[int, ...] = (0, 8)
    #: Traps are sprung (knock anyway) once the stock holds fewer cards than this.
    trap_stock: int = 0
    #: Rollouts: deadwood points a discard into the opponent's melds costs (0: least deadwood only).
    feed_cost: float = 0.0
    #: Rollouts: deadwood points per meld partner in the hand that a discard gives up.
    partner_cost: float = 1.0

    #: Action id -> mean points over the worlds of each option simulated for the last decision
    #: (empty when it was not simulated: one candidate, gin, a useless take). Master's whole
    #: ranking, not only its choice, is what soft targets in behaviour cloning learn from
    #: (``research/bc.py`` of the repository).
    option_values: dict[int, float]

    def see(self, view: SeatView) -> None:
        """The expert's model update; the new decision has no simulated values yet."""
        super().see(view)
        self.option_values = {}

    # ------------------------------------------------------------------ worlds

    def draw_worlds(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(opponent hands, unseen card ids, uniforms for the stock orders, traps) of ``n`` worlds."""
        styles = self.opponent_traps
        share = -(-n // len(styles))
        opps = np.concatenate([self.model.sample_hands(share, self.rng, trap=t) for t in styles])[:n]
        traps = np.array([[self.own_trap, t] for t in styles for _ in range(share)], dtype=np.int64)[:n]
        unseen_ids = np.array(cards_of(self.model.unknown), dtype=np.int64)
        u = self.rng.random((n, max(1, unseen_ids.size)))
        return opps, unseen_ids, u, traps

    def simulate(self, view: SeatView, options: list[tuple[Option, int]], n: int) -> np.ndarray:
        """Mean points of each ``(kind, card)`` option over ``n`` worlds."""
        kinds = np.array([k for k, _ in options], dtype=np.int64)
        cards = np.array([c for _, c in options], dtype=np.int64)
        knock_melds = np.zeros((len(options), 4), dtype=np.int64)
        knock_dw = np.zeros(len(options), dtype=np.int64)
        for i, (k, c) in enumerate(options):
            if k == Option.KNOCK:
                kn = Knock.of(view.hand ^ 1 << c)
                knock_melds[i, : kn.melds.size] = kn.melds
                knock_dw[i] = kn.deadwood
        opps, unseen_ids, u, traps = self.draw_worlds(n)
        top = -1 if view.top is None else view.top
        points = simulate_options(
            view.hand,
            kinds,
            cards,
            opps,
            unseen_ids,
            u,
            top,
            view.knock_limit,
            rollout_rules(self.rules),
            knock_melds,
            knock_dw,
            traps,
            self.trap_stock,
            self.feed_cost,
            self.partner_cost,
        )
        means = points.mean(axis=0)
        decline = PASS if view.phase.offers_upcard else DRAW_STOCK
        self.option_values = {
            _action_of(k, c, decline): float(m) for (k, c), m in zip(options, means, strict=True)
        }
        return means  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ decisions

    def penalty(self, view: SeatView) -> np.ndarray:
        """``w * M(d)`` with ``M(d)`` the share of sampled opponent hands ``d`` melds with."""
        rate = self.model.memo(
            "master_penalty", lambda: meld_rate(self.model.sample_hands(self.feed_samples, self.rng))
        )
        return self.feed_weight(view) * rate

    def choose_discard(self, observation: Observation, view: SeatView) -> tuple[int, bool]:
        """(card, knock?) for the discard phase; knock or play on by simulation."""
        hand = view.hand
        knocks = legal_knocks(observation)
        allowed = self.useful_only(hand, legal_discards(observation))
        values = discard_values(hand, allowed | knocks, self.stock_odds(), self.penalty(view), -1)
        ranked = sorted(cards_of(allowed), key=lambda c: (values[c], -CARD_VALUES[c], c))
        options: list[tuple[Option, int]] = []
        if knocks:
            by_left: dict[int, int] = {}
            for c in sorted(cards_of(knocks), key=lambda c: (values[c], -CARD_VALUES[c], c)):
                by_left.setdefault(int(min_deadwood(hand ^ 1 << c)), c)
            if 0 in by_left:
                return by_left[0], True
            knock_options = [
                (Option.KNOCK, by_left[left]) for left in sorted(by_left)[: self.knock_candidates]
            ]
            plain = ranked[: self.discard_candidates]
            # Playing on with the knock's own discard keeps the knockable hand for later.
            for _, c in knock_options[:1]:
                if c not in plain and allowed >> c & 1:
                    plain.append(c)
            options = knock_options + [(Option.PLAY_ON, c) for c in plain]
            means = self.simulate(view, options, self.worlds_knock)
            means -= np.array([self.play_on_margin if k == Option.PLAY_ON else 0.0 for k, _ in options])
        elif self.simulate_discards and len(ranked) > 1:
            pool = ranked
            if self.skip_shown_melds:
                shown = view.opponent_taken
                pool = ranked[:1] + [c for c in ranked[1:] if not meldable(shown | 1 << c) >> c & 1]
            options = [(Option.PLAY_ON, c) for c in pool[: max(2, self.discard_candidates)]]
            if len(options) == 1:
                return options[0][1], False
            means = self.simulate(view, options, self.worlds)
        else:
            return ranked[0], False
        kind, card = options[int(np.argmax(means))]
        return card, kind == Option.KNOCK

    def wants_top(self, view: SeatView) -> bool:
        """Take the top discard or draw from the stock (simulated only with ``simulate_draws``)."""
        if not self.simulate_draws:
            return super().wants_top(view)
        assert view.top is not None
        if not take_is_useful(view.hand, view.top):
            return False  # a wasted turn, and the way two players cycle cards through the pile
        means = self.simulate(view, [(Option.TAKE_TOP, view.top), (Option.DRAW, -1)], self.worlds)
        return bool(means[0] > means[1])


# The compiled entry points MasterAgent calls (ginenv.compiling) besides the expert level's: its
# simulations and the hands its opponent model samples for them.
compiling.register(MasterAgent, simulate_options, meld_rate, OpponentModel.sample_hands)

__all__ = [
    "MasterAgent",
    "Option",
    "meld_rate",
    "policy_discard",
    "policy_discard_safe",
    "policy_knocks",
    "policy_takes",
    "rollout",
    "simulate_options",
]
