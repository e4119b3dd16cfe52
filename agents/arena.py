"""The arena: one game between agents, from a deal and a seed, and its record.

Every loop that plays a game between agents calls this module: the evaluation harness (both games
of every duplicate deal), ``ginenv demo``, behaviour cloning's recorder and the play table of
``ginenv play`` (a person in one seat: :class:`Game` stepped move by move). So there is one
seeding formula and one set of rules for what an agent may do:

- **Seeds.** Game ``deal`` of master seed ``seed`` is dealt from :func:`deal_seed` ``(seed, deal)``
  with the dealer index ``deal % 2`` (unless the caller fixes it); the agent in ``role`` (0 non-dealer,
  1 dealer) of the game's hand ``h`` is reset with :func:`agent_seed` ``(seed, deal, h, role)``. So the
  two games of a duplicate deal (seats swapped, same deal) deal the same cards, and a seeded agent
  playing itself scores exactly 0 on the pair.
- **Secret deals.** Given a :class:`~ginenv.secret_deals.DealKey` (``key=``), hand ``h`` of game
  ``deal`` is dealt ``key.deck(deal, h)`` instead: nobody without the key can compute the cards
  (play tables, trusted evaluations). The agents' seeds still come from ``seed``.
- **The door.** An agent is given ``env.observe(seat)`` (its own observation and legal-action mask)
  and nothing else; its answer must be a legal action id.
- **Failures.** An agent that raises (in ``reset`` or ``act``) or returns an illegal action stops the
  game with :class:`AgentError`, naming it, the deal, the hand and the seat, with its traceback. An
  agent in another process that hangs, dies or answers an illegal move raises
  :class:`~ginenv.agents.base.AgentForfeit`: it **forfeits** the game, which ends at once. Forfeit
  rule (``docs/PROTOCOL.md``): in hand units the opponent scores the table's gin bonus plus the
  forfeiting player's deadwood at that moment (as if the opponent had gone gin); in match units the
  forfeiting player loses the match by the target plus the game bonus. The record says who
  forfeited and why, and the run goes on.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ginenv.agents.base import AgentForfeit

from ginenv.engine import HandState
from ginenv.kernels import best_discard_deadwood, min_deadwood, popcount
from ginenv.rules import Rules
from ginenv.secret_deals import DealKey

#: ``on_decision(seat, observation, action)``: called after every agent decision (behaviour cloning).
DecisionHook = Callable[[int, dict[str, Any], int], None]


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


def deal_seed(seed: int, deal: int) -> int:
    """The env seed of game ``deal`` (deck, and later hands of a match), independent of who plays."""
    return int(np.random.SeedSequence([seed, deal, 0x6D]).generate_state(1, dtype=np.uint32)[0])


def secret_decks(env: Any, key: DealKey, deal: int, options: dict[str, Any]) -> dict[str, Any]:
    """The reset options that deal game ``deal`` from ``key``: hand ``h`` gets ``key.deck(deal, h)``.

    Decks the caller scripted (``options``' ``deck`` or ``decks``) come first; the key deals the
    hands after them, up to the match's hand limit (hand mode: the one hand, if none is scripted)."""
    scripted = [options["deck"]] if options.get("deck") is not None else []
    scripted += list(options.get("decks") or [])
    hands = 1 if env.unwrapped.mode == "hand" else env.unwrapped.hand_limit
    decks = scripted + [key.deck(deal, h) for h in range(len(scripted), hands)]
    return {"deck": None, "decks": decks}


def agent_seed(seed: int, deal: int, hand: int, role: int) -> int:
    """Per-hand seed of the agent in ``role`` (0 non-dealer, 1 dealer) of a deal's ``hand``."""
    return int(np.random.SeedSequence([seed, deal, hand, role, 0xA6]).generate_state(1, dtype=np.uint32)[0])


def is_legal_action(action: object, mask: np.ndarray) -> bool:
    """Whether ``action`` is an integer (any integer type, not a bool) marked legal in ``mask``."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        return False
    return bool(0 <= action < len(mask) and mask[action])


def forfeit_points(rules: Rules, unit: str, cards: int) -> int:
    """What a forfeit costs (see the module docstring): ``cards`` is the forfeiting player's hand."""
    if unit == "match":
        return rules.target + rules.game_bonus
    # With 11 cards (mid-turn) the deadwood is the one after its best discard, as at a knock.
    deadwood = best_discard_deadwood(cards) if popcount(cards) == 11 else min_deadwood(cards)
    return rules.gin_bonus + deadwood


@dataclass
class GameRecord:
    """What one game produced, per seat (index 0 is ``player_0``)."""

    #: The env's result of every finished hand (``infos[...]["result"]``), in order.
    hands: list[dict[str, Any]] = field(default_factory=list)
    #: Points collected per seat (the rewards each agent is shown; 0 for a truncated game).
    returns: list[float] = field(default_factory=lambda: [0.0, 0.0])
    decisions: list[int] = field(default_factory=lambda: [0, 0])
    #: Seconds each seat spent deciding.
    think: list[float] = field(default_factory=lambda: [0.0, 0.0])
    truncated: bool = False
    #: ``{"seat", "agent", "reason", "hand", "points"}`` when a seat forfeited the game, else None.
    forfeit: dict[str, Any] | None = None
    #: The hands' states (deck, history), a forfeited one as it stood: for the luck control variate.
    states: list[HandState] = field(default_factory=list, repr=False)


class Game:
    """One game (a hand, or a match in match mode) between ``players`` in seats ``player_0``,
    ``player_1``, stepped decision by decision.

    ``env`` is a :func:`ginenv.gin_rummy_v0.raw_env` (its mode and rules are the game's); it is reset
    here for game ``deal`` of master seed ``seed`` (see the module docstring); ``options`` add to the
    reset options (scripted decks, a fixed dealer); ``key`` (a :class:`~ginenv.secret_deals.DealKey`)
    deals the hands from a secret (:func:`secret_decks`). A player of ``None`` is a seat played from
    outside (a person): its moves come through :meth:`play`. ``names`` label the seats in errors.
    """

    def __init__(
        self,
        env: Any,
        players: Sequence[Any],
        *,
        seed: int,
        deal: int = 0,
        names: Sequence[str] | None = None,
        options: dict[str, Any] | None = None,
        on_decision: DecisionHook | None = None,
        key: DealKey | None = None,
    ) -> None:
        self.env = env
        self.players = list(players)
        self.names = (
            list(names)
            if names is not None
            else [getattr(p, "name", f"player_{i}") for i, p in enumerate(self.players)]
        )
        self.seed = seed
        self.deal = deal
        self.on_decision = on_decision
        reset_options = {"dealer": deal % 2, **(options or {})}
        if key is not None:
            reset_options.update(secret_decks(env, key, deal, reset_options))
        env.reset(seed=deal_seed(seed, deal), options=reset_options)
        self.seats = list(env.possible_agents)
        self.record = GameRecord()
        self._over = False
        self._reseed(0, env.hand.dealer)

    # ------------------------------------------------------------------ state

    @property
    def over(self) -> bool:
        """Whether the game has ended (its last hand scored, truncated or forfeited)."""
        return self._over

    @property
    def to_move(self) -> int | None:
        """The seat index whose decision is due, or None once the game is over."""
        return None if self._over else int(self.env.hand.player)

    @property
    def hand_index(self) -> int:
        """The hand being played (or the last one, once over), from 0."""
        return len(self.record.hands) if not self._over else max(len(self.record.hands) - 1, 0)

    def _where(self, p: int) -> str:
        return f"(deal {self.deal}, hand {len(self.record.hands)}, seat {self.seats[p]})"

    def _blame(self, p: int, what: str, err: BaseException) -> AgentError:
        return AgentError(
            self.names[p],
            f"raised {type(err).__name__}: {err} in {what}() {self._where(p)}",
            traceback.format_exc(),
        )

    def _reseed(self, hand: int, dealer: int) -> None:
        for p, player in enumerate(self.players):
            if player is None:
                continue
            try:
                player.reset(agent_seed(self.seed, self.deal, hand, 1 if p == dealer else 0))
            except AgentForfeit as err:
                self._forfeit(p, err.reason)
                return
            except Exception as err:
                raise self._blame(p, "reset", err) from err

    # ------------------------------------------------------------------ moves

    def advance(self) -> int | None:
        """The agent in the seat to move decides and its move is played; returns the action
        (None if it forfeited instead)."""
        p = self.to_move
        if p is None:
            raise RuntimeError("the game is over")
        player = self.players[p]
        if player is None:
            raise RuntimeError(f"seat {self.seats[p]} is played from outside: use play()")
        obs = self.env.observe(self.seats[p])
        t0 = time.perf_counter()
        try:
            action = player.act(obs)
        except AgentForfeit as err:
            self._forfeit(p, err.reason)
            return None
        except Exception as err:
            raise self._blame(p, "act", err) from err
        self.record.think[p] += time.perf_counter() - t0
        self.record.decisions[p] += 1
        # The env would refuse it too, but as a usage error: it is the agent's fault, say so.
        if not is_legal_action(action, obs["action_mask"]):
            legal = ", ".join(self.env.action_name(int(a)) for a in np.flatnonzero(obs["action_mask"]))
            raise AgentError(
                self.names[p],
                f"returned {action!r}, which is not a legal action here (legal: {legal}) {self._where(p)}",
            )
        if self.on_decision is not None:
            self.on_decision(p, obs, int(action))
        self.play(int(action))
        return int(action)

    def play(self, action: int) -> None:
        """Play ``action`` for the seat to move (the env refuses an illegal one, changing nothing)."""
        if self._over:
            raise RuntimeError("the game is over")
        env = self.env
        state = env.hand
        env.step(action)
        for i, seat in enumerate(self.seats):
            self.record.returns[i] += float(env.rewards.get(seat, 0.0))
        info = env.infos.get(self.seats[0], {})
        result = info.get("result")
        if result is not None and result["hand_index"] == len(self.record.hands):
            self.record.hands.append(result)
            self.record.states.append(state)
            if all(env.terminations.get(s) or env.truncations.get(s) for s in self.seats):
                self._finish()
            elif "match_result" not in result and result["kind"] != "truncated":
                self._reseed(len(self.record.hands), env.hand.dealer)

    def _finish(self) -> None:
        self._over = True
        self.record.truncated = any(h["kind"] == "truncated" for h in self.record.hands)
        if self.record.truncated:
            # A truncated game has no result: points won in earlier hands of its match do not count.
            self.record.returns = [0.0, 0.0]

    def _forfeit(self, p: int, reason: str) -> None:
        """Seat ``p`` forfeits: the game ends now, scored by the forfeit rule."""
        env = self.env
        points = forfeit_points(env.unwrapped.rules, env.unwrapped.mode, env.hand.hands[p])
        self.record.returns = [float(points), float(points)]
        self.record.returns[p] = -float(points)
        self.record.forfeit = {
            "seat": p,
            "agent": self.names[p],
            "reason": reason,
            "hand": len(self.record.hands),
            "points": points,
        }
        self.record.states.append(env.hand)
        self._over = True

    def run(self) -> GameRecord:
        """Play the game to its end (every seat must have an agent); returns its record."""
        try:
            while not self._over:
                self.advance()
        finally:
            self.close()
        return self.record

    def close(self) -> None:
        """Let agents that hold resources (a client process) release them."""
        for player in self.players:
            close = getattr(player, "close", None)
            if callable(close):
                close()


def play_game(env: Any, players: Sequence[Any], **game: Any) -> GameRecord:
    """Play one game between ``players`` (seat ``player_i`` is ``players[i]``) to its end; returns
    its :class:`GameRecord`. ``game`` holds :class:`Game`'s keywords: ``seed`` (required), ``deal``,
    ``names``, ``options``, ``on_decision``, ``key``."""
    return Game(env, players, **game).run()
