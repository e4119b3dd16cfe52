"""
# Gin Rummy

| Import             | `from ginenv import gin_rummy_v0`                          |
|--------------------|------------------------------------------------------------|
| Actions            | Discrete                                                   |
| Parallel API       | Yes: `parallel_env()` (one agent moves per step)           |
| Manual Control     | No                                                         |
| Agents             | `agents= ['player_0', 'player_1']`                         |
| Agents             | 2                                                          |
| Action Shape       | Discrete(108)                                              |
| Action Values      | Discrete(108)                                              |
| Observation Shape  | (532,); (584,) with `oracle=True`                          |
| Observation Values | [0, 1] except the first 5 entries (counts, see below)      |
| State Shape        | (692,): `state()`, `state_space` (the full state)          |

Two-player gin rummy with the rules of `docs/RULES.md` (the rule options are the fields of
`ginenv.rules.Rules`). Each player holds 10 cards; on a turn a player draws the top card of the
stock or of the discard pile, then discards, and may knock when the deadwood of the 10 cards kept is
at most the knock limit. The first upcard is offered to the non-dealer, then to the dealer, before
anyone draws. The hand ends with a knock (scored as knock, undercut or gin), with big gin when the
rules allow it, or dead when a plain discard leaves 2 cards in the stock. Every episode is finite:
a hand whose draws reach `turn_limit` is truncated at the next discard (see Truncation).

```python
from ginenv import gin_rummy_v0
from ginenv.rules import Rules

env = gin_rummy_v0.env(rules=Rules(), mode="hand", render_mode="ansi")
env.reset(seed=42)
for agent in env.agent_iter():
    observation, reward, termination, truncation, info = env.last()
    if termination or truncation:
        action = None
    else:
        action = env.action_space(agent).sample(observation["action_mask"])
    env.step(action)
```

### Arguments

``` python
gin_rummy_v0.env(rules=None, mode="hand", render_mode=None, reward_scale=1.0, oracle=False,
                 dealer=None, illegal_reward=-1.0, turn_limit=100)
gin_rummy_v0.raw_env(...)       # the same arguments but illegal_reward
gin_rummy_v0.parallel_env(...)  # the same arguments but illegal_reward
```

`rules`: a `ginenv.rules.Rules` (default: the standard rules, `Rules()`).

`mode`: `"hand"`, one hand per episode; or `"match"`, hands until a player reaches `rules.target`.

`render_mode`: `None`, `"ansi"` (`render()` returns the text) or `"human"` (printed after each step).

`reward_scale`: rewards are points multiplied by this (e.g. `0.01` for a network).

`oracle`: also show each seat the opponent's hand (research only; changes the observation space).

`dealer`: `0` or `1` to fix who deals (the first hand, in match mode); `None` (default) draws the
dealer of each episode from the seeded random generator.

`illegal_reward` (`env()` only): the reward of an agent whose action is illegal (see below); a
finite number, checked when the env is built.

`turn_limit`: draws per hand (stock, discard pile or upcard) after which the hand is truncated
(default `ginenv.engine.DEFAULT_TURN_LIMIT` = 100; a real hand has at most 29 stock draws, so only
players who keep cycling cards through the discard pile reach it).

`hand_limit` (match mode): hands after which a match nobody has won is truncated (default
`ginenv.match.DEFAULT_HAND_LIMIT` = 200; a match to 100 takes some 5 to 15 hands, so only players
who never knock, playing dead hand after dead hand, reach it).

Every argument is kept by the env and applies to every `reset()`, seeded or not.

### Resetting

`reset(seed=None, options=None)`: `seed` (an integer of any type, numpy's included) seeds the deck
shuffles and the dealer draw (without a seed, the generator carries on). `options` is `None` or a
dict (anything else is refused with a `TypeError` naming the keys), which may hold:

- `"deck"`: 52 card names or ids (ints of any type, or a numpy array) in dealing order: cards
  0-9 to the non-dealer, 10-19 to the dealer, card 20 is the upcard, 21 onwards is the stock, 21
  drawn first. A deck that is not 52 distinct known cards raises `ginenv.engine.DeckError` (wrong
  size, duplicates, unknown names), and the env is left as it was.
- `"decks"`: match mode, a list of such decks dealt to the successive hands (shuffled after them).
- `"dealer"`: `0`, `1`, `"player_0"` or `"player_1"` for this episode.

Other keys are ignored with a warning.

### Observation Space

The observation is a dictionary with an `"observation"` vector (`float32`, seat-relative: "own" is
the observing seat) and an `"action_mask"`. It holds everything the seat may know and nothing else:
never the opponent's unknown cards (unless `oracle=True`), never the stock order.

| index        | meaning                                                                       |
|--------------|-------------------------------------------------------------------------------|
| 0            | stock size (0..31)                                                            |
| 1            | knock limit of this hand (Oklahoma: the first upcard's value)                 |
| 2, 3         | own and opponent's running points (match mode; 0 in hand mode)                |
| 4            | the match target (match mode; 0 in hand mode)                                 |
| 5..9         | phase one-hot: upcard offer to the non-dealer, to the dealer, draw, discard, over |
| 10           | 1 if this seat decides now                                                    |
| 11           | 1 if this seat dealt this hand                                                |
| 12..63       | own hand                                                                      |
| 64..115      | top card of the discard pile                                                  |
| 116..167     | the cards under it                                                            |
| 168..219     | cards the opponent took from the discard pile and still holds                 |
| 220..271     | cards the opponent discarded this hand                                        |
| 272..323     | cards the opponent passed over (declined upcard; top discard left for a stock draw) |
| 324..375     | own cards taken from the discard pile and still held (what the opponent knows)|
| 376..427     | cards this seat discarded                                                     |
| 428..479     | cards this seat passed over                                                   |
| 480..531     | unseen cards: not in the own hand, the discard pile, or known opponent cards  |
| 532..583     | `oracle=True` only: the opponent's hand                                       |

Each 52-entry plane has one entry per card id `suit * 13 + rank` (suits `s c d h`, ranks `A..K`).
The layout constants live in `ginenv.observation` (`PLANES`, `plane_slice`, `OBS_SIZE`, ...), and
`ginenv.observation.decode` reads a vector back as card bitmasks.

#### Legal Actions Mask

`"action_mask"` is a 1-D `int8` vector over the 108 action ids: 1 for each legal action of the agent
to move, all zeros for the other agent and once the episode has ended.

### Action Space

| ids     | name            | meaning                                                          |
|---------|-----------------|------------------------------------------------------------------|
| 0       | `draw_stock`    | draw the top card of the stock                                   |
| 1       | `draw_discard`  | take the top of the discard pile (or the upcard when offered)    |
| 2       | `pass`          | decline the offered upcard                                       |
| 3       | `big_gin`       | lay down 11 melded cards (when `rules.big_gin_bonus` is set)     |
| 4..55   | `discard XX`    | discard card `id - 4`                                            |
| 56..107 | `knock XX`      | discard card `id - 56` and knock (gin at deadwood 0)             |

`env.unwrapped.action_name(a)` and `env.unwrapped.action_id("discard 7h")` convert; the constants
(`DRAW_STOCK`, `DISCARD_BASE`, ...) are re-exported here from `ginenv.actions`.

### Rewards

Zero-sum, in points times `reward_scale`, given on the step that ends a hand (a truncated hand
gives 0 to both):

| mode    | when a hand ends                                     | at the end of the match                  |
|---------|------------------------------------------------------|------------------------------------------|
| `hand`  | winner `+points`, loser `-points`, dead hand 0 and 0 | (the episode is the hand)                |
| `match` | winner `+points`, loser `-points`, dead hand 0 and 0 | plus own match bonuses minus the other's |

The final hand's rewards carry the match bonuses (`Rules.game_bonus`, `line_bonus`, shutout), so a
match's return is each seat's total (points plus bonuses) minus the opponent's: the winner
gets `+margin` and the loser `-margin`. Every other step rewards 0.

### Infos

`infos[agent]` holds only public facts: `"hand_index"` (the current hand, from 0) and `"dealer"`
(its dealer's seat); in match mode `"scores"` (running points, `[player_0, player_1]`). Once a hand
has ended, `"result"` describes the latest finished hand (kept until the next one ends):
`kind` (`"knock"`, `"undercut"`, `"gin"`, `"big_gin"`, `"dead"` or `"truncated"`), `winner` and
`knocker` (agent names or `None`), `points` (to the winner), `deadwood` (per seat, after layoffs),
`layoffs`, `showdown` (the melds and deadwood cards each seat laid down; `None` for a dead or
truncated hand), `hand_index` and `dealer`; at the end of a match also `match_result` (winner,
points, hands won, bonuses, totals, shutout, hands played, margin). Per-seat values are lists
indexed by seat. Only a showdown (knock, gin, big gin) shows the other seat's cards: after a dead or
truncated hand each agent's `deadwood` holds its own value and `None` for the other seat.

### Truncation

Every episode ends. When a hand's draws reach `turn_limit`, the hand ends at the next discard
without a knock: `truncations` is `True` for both agents and `terminations` `False`, both rewards
are 0, and `infos[a]["result"]["kind"] == "truncated"` (no winner, no showdown). In match mode the
whole match episode truncates there (no `match_result`), and a match also truncates when its
`hand_limit`-th hand ends without a winner (that last hand's own `result` is whatever it was, a dead
hand usually; the rewards are its points). A learner should bootstrap from its value estimate at a
truncation rather than treat it as a game result.

### State

`state()` returns the full state as a `float32` vector of `STATE_SIZE` (692) entries inside
`state_space`, for centralised critics and analysis (never for an agent's policy): both hands, the
stock in drawing order, the discard pile in order, the public record of both seats, the card just
taken from the pile, the phase, the seat to move, the dealer, the scores, the draws and the turn
limit, laid out by absolute seat (`player_0` first). The layout is documented in
`ginenv.observation` (`STATE_PLANES`, `state_slice`, `encode_state`).

### Copies

`copy.deepcopy(env)` (wrapped or raw) gives an independent copy of the env mid-episode, for search:
the hands, stock order, match, public record, generator, rewards and infos are copied, and stepping
the copy leaves the original unchanged. `pickle` instead rebuilds a fresh env from the constructor
arguments (as PettingZoo's classic envs do).

### Parallel API

`parallel_env()` gives the same game through PettingZoo's Parallel API. Gin rummy is turn-based (the
same seat draws, then discards), so each `step(actions)` applies only the action of the agent to
move (`infos[a]["active_agent"]`, the only agent whose `action_mask` is non-zero) and ignores the
other entry. An illegal action raises `IllegalActionError` and changes nothing.

### Illegal actions

`raw_env.step` refuses an illegal action (or a non-integer one) with `ginenv.engine.IllegalActionError`
(`ginenv.actions.UnknownActionError` for an id outside 0..107) naming the legal actions, and changes
nothing. `env()` follows PettingZoo's wrapper conventions instead: an out-of-range action fails an
assertion, and an illegal action ends the episode for both agents (terminated and truncated) with
`illegal_reward` for the offender and 0 for the other. Once every agent has stepped `None` after
the end of an episode, `step` and `last` raise `EpisodeOverError` (call `reset()`).

### Rendering

`"ansi"` returns and `"human"` prints the table: both hands sorted with their melds framed and their
deadwood shown, the discard pile, the stock size, the scores (match mode), the last action and, once
a hand ends, the showdown with the layoffs (`ginenv.render`). Rendering is a spectator's view (both
hands); a dead or truncated hand's end line says there was no showdown and shows no deadwood.

### Version History

* v0: Initial release (ginenv 0.1.0). Within v0, added without changing any existing observation,
  action or reward: `turn_limit`, `hand_limit` and truncation, the seat-private deadwood of dead
  hands in infos, `state()` / `state_space`, `parallel_env()`, `copy.deepcopy` mid-episode,
  `EpisodeOverError`.
"""

from __future__ import annotations

import copy
import random
import warnings
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any, ClassVar, Literal

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.wrappers import (
    AssertOutOfBoundsWrapper,
    OrderEnforcingWrapper,
    TerminateIllegalWrapper,
)

from ginenv import actions as _actions
from ginenv.actions import (
    ACTION_NAMES,
    BIG_GIN,
    DISCARD_BASE,
    DRAW_DISCARD,
    DRAW_STOCK,
    KNOCK_BASE,
    NUM_ACTIONS,
    PASS,
    UnknownActionError,
)
from ginenv.cards import CARD_NAMES, cards_of
from ginenv.engine import (
    DEFAULT_TURN_LIMIT,
    DeckError,
    HandResult,
    HandState,
    IllegalActionError,
    check_turn_limit,
    parse_deck,
)
from ginenv.match import DEFAULT_HAND_LIMIT, Match, check_hand_limit
from ginenv.observation import (
    OBS_SIZE,
    ORACLE_OBS_SIZE,
    STATE_SIZE,
    Knowledge,
    Tracker,
    encode_state,
    observation_high,
    state_high,
)
from ginenv.render import render_table
from ginenv.rules import Rules
from ginenv.validation import finite_number, optional_seed

__all__ = [
    "ACTION_NAMES",
    "AGENTS",
    "BIG_GIN",
    "DEFAULT_TURN_LIMIT",
    "DISCARD_BASE",
    "DRAW_DISCARD",
    "DRAW_STOCK",
    "KNOCK_BASE",
    "NUM_ACTIONS",
    "OBS_SIZE",
    "ORACLE_OBS_SIZE",
    "PASS",
    "STATE_SIZE",
    "DeckError",
    "EpisodeOverError",
    "IllegalActionError",
    "ParallelGinRummy",
    "UnknownActionError",
    "env",
    "parallel_env",
    "raw_env",
]

#: The two agents; ``dealer`` and per-seat lists index them.
AGENTS = ("player_0", "player_1")
_SEAT = {"player_0": 0, "player_1": 1}
Mode = Literal["hand", "match"]
_RESET_OPTIONS = frozenset({"deck", "decks", "dealer"})
# Bytes of a legal-action bitmask (108 bits) for np.unpackbits.
_MASK_BYTES = (NUM_ACTIONS + 7) // 8
# Legal masks below this use only the draw / pass / big gin ids: precomputed, copied on demand.
_LOW_ACTIONS = 1 << DISCARD_BASE
_LOW_MASKS = tuple(
    np.array([m >> a & 1 for a in range(NUM_ACTIONS)], dtype=np.int8) for m in range(_LOW_ACTIONS)
)
# The most a seat's running score can reach: just under the target, plus one hand's points (the
# largest bonus plus at most 100 deadwood points).
_MAX_HAND_DEADWOOD = 100


class EpisodeOverError(RuntimeError):
    """``step`` or ``last`` called after every agent has left a finished episode: call ``reset()``."""


def _seat_of(dealer: object) -> int:
    if isinstance(dealer, str) and dealer in _SEAT:
        return _SEAT[dealer]
    if isinstance(dealer, (int, np.integer)) and not isinstance(dealer, bool) and dealer in (0, 1):
        return int(dealer)
    raise ValueError(f"dealer must be 0, 1, 'player_0' or 'player_1', got {dealer!r}")


def _deck_value(deck: object) -> object:
    # A numpy array of card ids reads as the list of its ints (parse_deck checks the rest).
    return deck.tolist() if isinstance(deck, np.ndarray) else deck


class raw_env(AECEnv[str, dict[str, np.ndarray], int], EzPickle):
    """Gin rummy as a PettingZoo AEC environment; see the module docstring (the env card)."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human"],
        "name": "gin_rummy_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        rules: Rules | None = None,
        mode: Mode = "hand",
        render_mode: str | None = None,
        reward_scale: float = 1.0,
        oracle: bool = False,
        dealer: int | None = None,
        turn_limit: int = DEFAULT_TURN_LIMIT,
        hand_limit: int = DEFAULT_HAND_LIMIT,
    ) -> None:
        """Configure the env; every argument survives ``reset()`` (see the module docstring)."""
        EzPickle.__init__(
            self, rules, mode, render_mode, reward_scale, oracle, dealer, turn_limit, hand_limit
        )
        super().__init__()
        if rules is not None and not isinstance(rules, Rules):
            raise TypeError(f"rules must be a ginenv.rules.Rules, got {type(rules).__name__}")
        if mode not in ("hand", "match"):
            raise ValueError(f"mode must be 'hand' or 'match', got {mode!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None, 'ansi' or 'human', got {render_mode!r}")
        reward_scale = finite_number("reward_scale", reward_scale)
        if not isinstance(oracle, bool):
            raise TypeError(f"oracle must be True or False, got {oracle!r}")
        self.rules = rules if rules is not None else Rules()
        self.mode: Mode = mode
        self.render_mode = render_mode
        self.reward_scale = reward_scale
        self.oracle = oracle
        self.dealer = None if dealer is None else _seat_of(dealer)
        self.turn_limit = check_turn_limit(turn_limit)
        self.hand_limit = check_hand_limit(hand_limit)

        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in AGENTS}
        bonuses = (self.rules.gin_bonus, self.rules.undercut_bonus, self.rules.big_gin_bonus or 0)
        score_high = self.rules.target + max(bonuses) + _MAX_HAND_DEADWOOD
        knock_high = max(self.rules.knock_limit, 10)
        high = observation_high(knock_high, score_high, self.rules.target, oracle)
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(low=0.0, high=high, dtype=np.float32),
                    "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
                }
            )
            for a in AGENTS
        }
        #: The space of :meth:`state` (the full state, for centralised critics; see the env card).
        self.state_space = spaces.Box(
            low=0.0, high=state_high(knock_high, score_high, self.rules.target, self.turn_limit)
        )
        self._tracker = Tracker(oracle)
        self._rng: random.Random | None = None
        self._match: Match | None = None
        self._state: HandState | None = None
        self._finished: HandState | None = None  # the latest finished hand (for render)
        self._hand_index = 0
        self._rewards_dirty = False

    # ------------------------------------------------------------------ spaces and names

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The (cached) observation space of ``agent``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """The (cached) action space of ``agent``: ``Discrete(108)``."""
        return self.action_spaces[agent]

    @staticmethod
    def action_name(action: int) -> str:
        """Name of an action id: ``"draw_stock"``, ``"discard 7h"``, ``"knock Td"``, ``"big_gin"``."""
        return _actions.action_name(int(action) if isinstance(action, np.integer) else action)

    @staticmethod
    def action_id(name: str) -> int:
        """Action id of a name (inverse of :meth:`action_name`; ``"knock 10h"`` is read too)."""
        return _actions.action_id(name)

    # ------------------------------------------------------------------ state access

    @property
    def hand(self) -> HandState:
        """The engine state of the current hand (for tests, rendering and analysis, not for agents)."""
        if self._state is None:
            raise RuntimeError("call reset() before reading the hand")
        return self._state

    @property
    def match(self) -> Match | None:
        """The engine match in match mode (``None`` in hand mode or before ``reset()``)."""
        return self._match

    @property
    def knowledge(self) -> Knowledge:
        """The public record of the current hand (what both seats have seen moved)."""
        if self._state is None:
            raise RuntimeError("call reset() before reading the knowledge")
        return self._tracker.knowledge

    # ------------------------------------------------------------------ reset

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new episode: shuffled from the seeded generator, or ``options["deck"]``.

        ``seed`` is ``None`` or an integer of any type; ``options`` is ``None`` or a dict (see the
        env card). Bad arguments raise and leave the env as it was.
        """
        seed = optional_seed(seed)
        if options is not None and not isinstance(options, Mapping):
            raise TypeError(
                "options must be a dict with the keys 'deck' (52 cards), 'decks' (match mode) and "
                f"'dealer', e.g. {{'deck': [...], 'dealer': 0}}; got {type(options).__name__} {options!r}"
            )
        options = dict(options or {})
        unknown = sorted(set(options) - _RESET_OPTIONS, key=str)
        if unknown:
            warnings.warn(
                f"gin_rummy_v0.reset ignores unknown option(s) {unknown}; known options: deck, decks, dealer",
                stacklevel=2,
            )
        decks: list[list[int]] = []
        # Parse everything before touching the env, so that a bad option leaves it as it was.
        if options.get("deck") is not None:
            decks.append(parse_deck(_deck_value(options["deck"])))  # type: ignore[arg-type]
        if options.get("decks") is not None:
            given = _deck_value(options["decks"])
            if isinstance(given, str) or not isinstance(given, Sequence):
                raise DeckError("options['decks'] must be a list of decks (each 52 card names or ids)")
            if self.mode == "hand" and len(given) + len(decks) > 1:
                raise DeckError("hand mode plays one hand: give one deck ('deck'), not several")
            decks.extend(parse_deck(_deck_value(d)) for d in given)  # type: ignore[arg-type]
        dealer_option = options.get("dealer")
        dealer = None if dealer_option is None else _seat_of(dealer_option)

        if seed is not None or self._rng is None:
            self._rng = random.Random(seed)
        if dealer is None:
            dealer = self.dealer if self.dealer is not None else self._rng.randrange(2)

        if self.mode == "match":
            self._match = Match(
                self.rules,
                dealer,
                rng=self._rng,
                decks=decks,
                turn_limit=self.turn_limit,
                hand_limit=self.hand_limit,
            )
            self._state = self._match.hand
        else:
            self._match = None
            self._state = HandState(
                self.rules,
                dealer,
                deck=decks[0] if decks else None,
                rng=self._rng,
                turn_limit=self.turn_limit,
            )
        self._tracker.deal(self._state, *self._scores())
        self._finished = None
        self._hand_index = 0

        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self._rewards_dirty = False
        self.infos = self._public_infos(None)
        self.agent_selection = AGENTS[self._state.player]

    # ------------------------------------------------------------------ observe

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """What ``agent`` sees now: ``{"observation": float32 vector, "action_mask": int8 vector}``."""
        state = self._state
        if state is None:
            raise RuntimeError("call reset() before observe()")
        vec = self._tracker.observe(_SEAT[agent])
        if agent == self.agent_selection and not (self.terminations[agent] or self.truncations[agent]):
            legal = state.legal_mask()
            if legal < _LOW_ACTIONS:
                # Upcard offers and draws: one of a few masks, copied from a table.
                mask = _LOW_MASKS[legal].copy()
            else:
                mask = np.unpackbits(
                    np.frombuffer(legal.to_bytes(_MASK_BYTES, "little"), dtype=np.uint8),
                    count=NUM_ACTIONS,
                    bitorder="little",
                ).view(np.int8)
        else:
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        return {"observation": vec, "action_mask": mask}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last``; after every agent has left a finished episode it raises
        :class:`EpisodeOverError` (call ``reset()``)."""
        self._check_running("last")
        return super().last(observe)

    def state(self) -> np.ndarray:
        """The full state as one ``float32`` vector of :data:`STATE_SIZE` (see the env card).

        Both hands, the stock in drawing order, the discard pile in order, the public record, the
        phase and the scores: everything, for a centralised critic or for analysis, never for an
        agent's policy. Laid out by absolute seat (``player_0`` first), not seat-relative.
        """
        state = self._state
        if state is None:
            raise RuntimeError("call reset() before state()")
        scores, target = self._scores()
        return encode_state(state, scores, target)

    def _check_running(self, what: str) -> None:
        if self._state is None:
            raise RuntimeError(f"call reset() before {what}()")
        if not self.agents:
            raise EpisodeOverError(
                f"{what}() after the episode ended (every agent has stepped None); call reset() to deal again"
            )

    def _scores(self) -> tuple[list[int] | None, int]:
        match = self._match
        return (None, 0) if match is None else (match.scores, self.rules.target)

    # ------------------------------------------------------------------ step

    def step(self, action: int | np.integer | None) -> None:
        """Apply the action of ``agent_selection``; illegal actions raise and change nothing."""
        if not self.agents or self._state is None:
            self._check_running("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self._state
        assert state is not None
        if type(action) is not int:
            action = self._as_action(action)
        pile = state.discard_pile
        top = pile[-1] if pile else -1
        player = state.player
        hand_before = state.hands[player]
        try:
            if self._match is None:
                state.step(action)
                result = state.result
            else:
                result = self._match.step(action)
        except IllegalActionError as err:
            raise IllegalActionError(f"{agent}: {err}") from None
        # The action is applied: from here on the env changes.
        if self._rewards_dirty:
            for a in self.rewards:
                self.rewards[a] = 0.0
            self._rewards_dirty = False
        self._cumulative_rewards[agent] = 0.0
        if result is None:
            self._tracker.record(state, player, action, top, hand_before)
            self.agent_selection = AGENTS[state.player]
        else:
            self._tracker.knowledge.record(player, action, top)
            self._end_of_hand(state, result)
        if self.render_mode == "human":
            self.render()

    @staticmethod
    def _as_action(action: object) -> int:
        if isinstance(action, np.integer) or (
            isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer)
        ):
            action = int(action)
        if isinstance(action, bool) or not isinstance(action, int):
            raise UnknownActionError(f"an action must be an integer id 0..{NUM_ACTIONS - 1}, got {action!r}")
        return action

    def _end_of_hand(self, state: HandState, result: HandResult) -> None:
        scale = self.reward_scale
        d0, d1 = result.score_deltas()
        rewards = [d0 * scale, d1 * scale]
        info_result = self._result_info(state, result)
        self._finished = state
        match = self._match
        if result.truncated or (match is not None and match.truncated):
            # The turn limit ended the hand (and so the match), or the match reached its hand limit
            # without a winner: a truncation in the Gymnasium sense, not a result of the game, so
            # learners bootstrap instead of scoring it. A dead last hand still scores nothing.
            self.truncations = {a: True for a in AGENTS}
            self.agent_selection = AGENTS[1 - state.player]
            self._tracker.refresh(state, *self._scores())
        elif match is None:
            self.terminations = {a: True for a in AGENTS}
            self.agent_selection = AGENTS[1 - state.player]
            self._tracker.refresh(state)
        elif match.result is not None:
            # The match is over: the final hand's rewards also carry the bonus difference, so that
            # a match's return is each seat's total minus the opponent's.
            b0, b1 = match.result.bonuses
            rewards[0] += (b0 - b1) * scale
            rewards[1] += (b1 - b0) * scale
            final = match.result.to_dict()
            final["winner"] = AGENTS[match.result.winner]
            info_result["match_result"] = final
            self.terminations = {a: True for a in AGENTS}
            self.agent_selection = AGENTS[1 - state.player]
            self._tracker.refresh(state, match.scores, self.rules.target)
        else:
            self._hand_index += 1
            self._state = match.hand
            self._tracker.deal(match.hand, match.scores, self.rules.target)
            self.agent_selection = AGENTS[match.hand.player]
        self.rewards = {AGENTS[0]: rewards[0], AGENTS[1]: rewards[1]}
        self._rewards_dirty = True
        self._accumulate_rewards()
        self.infos = self._public_infos(info_result)

    def _public_infos(self, result: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
        """Per-agent infos: only public facts (current hand, dealer, scores, latest result)."""
        state = self._state
        assert state is not None
        infos: dict[str, dict[str, Any]] = {}
        for a in AGENTS:
            info: dict[str, Any] = {"hand_index": self._hand_index, "dealer": state.dealer}
            if self._match is not None:
                info["scores"] = list(self._match.scores)
            if result is not None:
                info["result"] = _copy_result(result, _SEAT[a])
            infos[a] = info
        return infos

    def _result_info(self, state: HandState, result: HandResult) -> dict[str, Any]:
        """The public description of a finished hand (the showdown is public)."""
        knock = result.knock
        showdown: list[dict[str, list[Any]]] | None = None
        if knock is not None and result.knocker is not None:
            knocker = result.knocker
            sides: list[dict[str, list[Any]]] = [
                {
                    "melds": [[CARD_NAMES[c] for c in cards_of(m)] for m in knock.knocker_melds],
                    "deadwood_cards": [CARD_NAMES[c] for c in cards_of(knock.knocker_deadwood_cards)],
                },
                {
                    "melds": [[CARD_NAMES[c] for c in cards_of(m)] for m in knock.defender_melds],
                    "deadwood_cards": [CARD_NAMES[c] for c in cards_of(knock.defender_deadwood_cards)],
                },
            ]
            showdown = [sides[0], sides[1]] if knocker == 0 else [sides[1], sides[0]]
        return {
            "hand_index": self._hand_index,
            "dealer": state.dealer,
            "kind": result.kind,
            "winner": None if result.winner is None else AGENTS[result.winner],
            "knocker": None if result.knocker is None else AGENTS[result.knocker],
            "points": result.points,
            "deadwood": list(result.deadwood),
            "layoffs": [CARD_NAMES[c] for c in knock.layoffs] if knock is not None else [],
            "showdown": showdown,
        }

    # ------------------------------------------------------------------ render / close

    def render(self) -> str | None:
        """The table as text (``ansi`` returns it, ``human`` prints it); see :mod:`ginenv.render`."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode. "
                "Pass render_mode='ansi' or 'human' to gin_rummy_v0.env()."
            )
            return None
        if self._state is None:
            raise RuntimeError("call reset() before render()")
        text = self._render_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _render_text(self) -> str:
        state = self._state
        assert state is not None
        match = self._match
        parts = []
        finished = self._finished
        # In match mode, a hand that just ended is shown (with its showdown) above the next deal.
        if finished is not None and finished is not state and not state.history:
            parts.append(render_table(finished, AGENTS, hand_number=self._hand_index - 1))
        scores = match.scores if match is not None else None
        target = self.rules.target if match is not None else None
        parts.append(
            render_table(
                state,
                AGENTS,
                scores=scores,
                target=target,
                hand_number=self._hand_index if match is not None else None,
            )
        )
        if match is not None and match.result is not None:
            r = match.result
            parts.append(
                f"match over: {AGENTS[r.winner]} wins; points {list(r.points)}, bonuses "
                f"{list(r.bonuses)}, totals {list(r.totals)}" + (" (shutout)" if r.shutout else "")
            )
        elif match is not None and match.truncated:
            parts.append("match truncated: a hand reached the turn limit; no winner, no bonuses")
        return "\n".join(parts)

    def close(self) -> None:
        """Nothing to release (text rendering only)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> raw_env:
        """An independent copy of the env mid-episode (for search): stepping one leaves the other as it was.

        ``pickle`` still rebuilds a fresh env from the constructor arguments (EzPickle, for
        subprocess vector envs); ``copy.deepcopy`` copies the game: the hands, the stock order, the
        match, the public record, the generator, rewards and infos.
        """
        cls = type(self)
        other = cls.__new__(cls)
        memo[id(self)] = other
        # Hands are copied with HandState.clone (fast; rules and results are immutable and shared);
        # the memo makes the match's current hand and the env's the same object in the copy too.
        for hand in (self._state, self._finished):
            if hand is not None and id(hand) not in memo:
                memo[id(hand)] = hand.clone()
        for name, value in self.__dict__.items():
            other.__dict__[name] = copy.deepcopy(value, memo)
        return other

    def __str__(self) -> str:
        return "gin_rummy_v0"


def _copy_result(result: dict[str, Any], seat: int) -> dict[str, Any]:
    """``seat``'s copy of a hand's result.

    Each agent gets its own copy, so that one agent's code mutating its info cannot touch the
    other's. Without a showdown (dead or truncated hand) no cards were shown: the other seat's
    deadwood is ``None``.
    """
    out = dict(result)
    deadwood = list(result["deadwood"])
    if result["showdown"] is None:
        deadwood[1 - seat] = None
    out["deadwood"] = deadwood
    out["layoffs"] = list(result["layoffs"])
    if result["showdown"] is not None:
        out["showdown"] = [
            {"melds": [list(m) for m in side["melds"]], "deadwood_cards": list(side["deadwood_cards"])}
            for side in result["showdown"]
        ]
    if "match_result" in result:
        out["match_result"] = {
            k: (list(v) if isinstance(v, list) else v) for k, v in result["match_result"].items()
        }
    return out


# ---------------------------------------------------------------------------- env() wrappers
#
# env() wraps raw_env in PettingZoo's three standard wrappers (TerminateIllegalWrapper,
# AssertOutOfBoundsWrapper, OrderEnforcingWrapper), with their behaviour unchanged. The subclasses
# below only make attribute reads cheap: a PettingZoo wrapper finds `agents`, `agent_selection`,
# `terminations`, ... through BaseWrapper.__getattr__, one Python call per wrapper level, which cost
# about 30 µs per decision (more than the whole game). Here each of those names is a property whose
# getter is a C-level ``attrgetter("_raw.<name>")`` reading the unwrapped env directly.

_FORWARDED = ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos")


class _NotReset:
    """Stands in for the unwrapped env until the first reset(): reading state raises, as
    OrderEnforcingWrapper does before reset."""

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"{name} cannot be accessed before reset")


def _forwarding(cls: type) -> type:
    for name in (*_FORWARDED, "_cumulative_rewards"):
        setattr(cls, name, property(attrgetter(f"_raw.{name}"), doc=f"The unwrapped env's ``{name}``."))
    return cls


@_forwarding
class _TerminateIllegal(TerminateIllegalWrapper):  # type: ignore[misc]
    """PettingZoo's TerminateIllegalWrapper with direct attribute reads."""

    def __init__(self, env: raw_env, illegal_reward: float) -> None:
        self._raw = env.unwrapped
        super().__init__(env, illegal_reward)


@_forwarding
class _AssertOutOfBounds(AssertOutOfBoundsWrapper):  # type: ignore[misc]
    """PettingZoo's AssertOutOfBoundsWrapper with direct attribute reads and a fast range check."""

    def __init__(self, env: Any) -> None:
        self._raw = env.unwrapped
        super().__init__(env)

    def step(self, action: Any) -> None:
        """Assert that ``action`` is in the action space (or ``None`` for a finished agent), then step."""
        if type(action) is int:
            # Same answer as Discrete(108).contains for a plain int, without its numpy round trip.
            assert 0 <= action < NUM_ACTIONS, "action is not in action space"
            self.env.step(action)
        else:
            super().step(action)


@_forwarding
class _OrderEnforcing(OrderEnforcingWrapper):  # type: ignore[misc]
    """PettingZoo's OrderEnforcingWrapper with direct attribute reads (refused before reset)."""

    def __init__(self, env: Any) -> None:
        self._env_after_reset = env.unwrapped
        self._raw = _NotReset()
        super().__init__(env)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Reset the env; from now on its state can be read."""
        super().reset(seed=seed, options=options)
        self._raw = self._env_after_reset

    def step(self, action: Any) -> None:
        """Step the wrapped env; after the episode has ended, raise :class:`EpisodeOverError`."""
        if self._has_reset and not self._raw.agents:
            self._raw._check_running("step")
        super().step(action)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last`` reading the unwrapped env's dicts once."""
        raw = self._raw
        if not raw.agents:
            raw._check_running("last")
        agent = raw.agent_selection
        observation = self.observe(agent) if observe else None
        return (
            observation,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            raw.infos[agent],
        )


def env(
    rules: Rules | None = None,
    mode: Mode = "hand",
    render_mode: str | None = None,
    reward_scale: float = 1.0,
    oracle: bool = False,
    dealer: int | None = None,
    illegal_reward: float = -1.0,
    turn_limit: int = DEFAULT_TURN_LIMIT,
    hand_limit: int = DEFAULT_HAND_LIMIT,
) -> AECEnv[str, dict[str, np.ndarray], int]:
    """The wrapped env, as PettingZoo's classic envs build it (see the module docstring).

    ``raw_env`` wrapped in PettingZoo's ``TerminateIllegalWrapper`` (an illegal action ends the
    episode with ``illegal_reward`` for the offender), ``AssertOutOfBoundsWrapper`` and
    ``OrderEnforcingWrapper``. ``illegal_reward`` must be a finite number (checked here, not at
    the first illegal action).
    """
    illegal_reward = finite_number("illegal_reward", illegal_reward)
    inner = raw_env(
        rules=rules,
        mode=mode,
        render_mode=render_mode,
        reward_scale=reward_scale,
        oracle=oracle,
        dealer=dealer,
        turn_limit=turn_limit,
        hand_limit=hand_limit,
    )
    wrapped: AECEnv[str, dict[str, np.ndarray], int] = _TerminateIllegal(inner, illegal_reward)
    wrapped = _AssertOutOfBounds(wrapped)
    return _OrderEnforcing(wrapped)


# ---------------------------------------------------------------------------- parallel API
#
# PettingZoo's aec_to_parallel needs agents that move in a fixed cycle; in gin rummy the same seat
# draws and then discards, so it refuses the game. The class below is the turn-based form instead.


class ParallelGinRummy(ParallelEnv[str, dict[str, np.ndarray], int]):
    """Gin rummy through PettingZoo's Parallel API: at each step only one agent is to move.

    ``step(actions)`` applies ``actions[agent]`` for the agent to move (``infos[a]["active_agent"]``
    names it, and only its ``action_mask`` has legal actions) and ignores the other agent's entry,
    which may be anything or absent. An illegal action raises
    :class:`ginenv.engine.IllegalActionError` and changes nothing (as ``raw_env``). Observations,
    rewards, terminations, truncations and infos are those of :class:`raw_env` after the step; once
    the episode has ended ``agents`` is empty.
    """

    metadata: ClassVar[dict[str, Any]] = {**raw_env.metadata, "is_parallelizable": True}

    def __init__(self, **kwargs: Any) -> None:
        """Build the AEC env underneath; ``kwargs`` are :class:`raw_env`'s."""
        self.aec_env = raw_env(**kwargs)
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self.render_mode = self.aec_env.render_mode
        self.state_space = self.aec_env.state_space

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The observation space of ``agent`` (the AEC env's)."""
        return self.aec_env.observation_space(agent)

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """The action space of ``agent``: ``Discrete(108)``."""
        return self.aec_env.action_space(agent)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, Any]]]:
        """Deal a new episode (see :meth:`raw_env.reset`); both agents' observations and infos."""
        aec = self.aec_env
        aec.reset(seed=seed, options=options)
        self.agents = list(aec.agents)
        return {a: aec.observe(a) for a in self.agents}, self._infos()

    def step(
        self, actions: Mapping[str, Any]
    ) -> tuple[
        dict[str, dict[str, np.ndarray]],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        """Apply the action of the agent to move; the other agent's entry is ignored."""
        aec = self.aec_env
        if not self.agents:
            if aec._state is None:
                raise RuntimeError("call reset() before step()")
            raise EpisodeOverError("step() after the episode ended; call reset() to deal again")
        mover = aec.agent_selection
        if not isinstance(actions, Mapping) or mover not in actions:
            raise ValueError(
                f"actions must be a dict holding the action of {mover!r}, the agent to move "
                f"(the other agent's entry is ignored), got {actions!r}"
            )
        aec.step(actions[mover])
        rewards = {a: float(aec.rewards[a]) for a in AGENTS}
        terminations = dict(aec.terminations)
        truncations = dict(aec.truncations)
        observations = {a: aec.observe(a) for a in AGENTS}
        infos = self._infos()
        if all(terminations[a] or truncations[a] for a in AGENTS):
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _infos(self) -> dict[str, dict[str, Any]]:
        aec = self.aec_env
        infos = {a: dict(aec.infos[a]) for a in AGENTS}
        ended = aec.terminations[aec.agent_selection] or aec.truncations[aec.agent_selection]
        for info in infos.values():
            info["active_agent"] = None if ended else aec.agent_selection
        return infos

    def state(self) -> np.ndarray:
        """The full state (see :meth:`raw_env.state`)."""
        return self.aec_env.state()

    def render(self) -> str | None:
        """Render the AEC env (``ansi`` returns the text, ``human`` prints it)."""
        return self.aec_env.render()

    def close(self) -> None:
        """Close the AEC env."""
        self.aec_env.close()


def parallel_env(
    rules: Rules | None = None,
    mode: Mode = "hand",
    render_mode: str | None = None,
    reward_scale: float = 1.0,
    oracle: bool = False,
    dealer: int | None = None,
    turn_limit: int = DEFAULT_TURN_LIMIT,
    hand_limit: int = DEFAULT_HAND_LIMIT,
) -> ParallelGinRummy:
    """The env through PettingZoo's Parallel API (see :class:`ParallelGinRummy`); arguments as ``env()``."""
    return ParallelGinRummy(
        rules=rules,
        mode=mode,
        render_mode=render_mode,
        reward_scale=reward_scale,
        oracle=oracle,
        dealer=dealer,
        turn_limit=turn_limit,
        hand_limit=hand_limit,
    )
