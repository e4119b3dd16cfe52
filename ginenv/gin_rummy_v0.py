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
                 dealer=None, turn_limit=100, hand_limit=200, infos="full", illegal_reward=-1.0,
                 settings=None)
gin_rummy_v0.raw_env(...)       # the same arguments but illegal_reward
gin_rummy_v0.parallel_env(...)  # the same arguments
```

Every argument is a keyword argument. All but `illegal_reward` are the settings of the table: the
fields of `EnvSettings` (`ginenv.settings`, re-exported here), a frozen dataclass that holds their
defaults and checks once for every face of the env (`ginenv.wrappers.SingleAgentEnv` takes them
too). Give them one by one, as `settings=EnvSettings(...)`, or both: keyword arguments then replace
those fields of `settings`. A bad value raises when the env is built; an unknown setting raises
`TypeError` naming the settings. `env.unwrapped.settings` is the env's.

`rules`: a `ginenv.rules.Rules` (default: the standard rules, `Rules()`).

`mode`: `"hand"`, one hand per episode; or `"match"`, hands until a player reaches `rules.target`.

`render_mode`: `None`, `"ansi"` (`render()` returns the text) or `"human"` (printed after each step).

`reward_scale`: rewards are points multiplied by this (e.g. `0.01` for a network).

`oracle`: also show each seat the opponent's hand (research only; changes the observation space).

`dealer`: `0` or `1` to fix who deals (the first hand, in match mode); `None` (default) draws the
dealer of each episode from the seeded random generator.

`illegal_reward` (`env()` and `parallel_env()`): the reward of an agent whose action is illegal
(see below); a finite number, checked when the env is built (`parallel_env(illegal_reward=None)`
raises on an illegal action instead).

`infos`: `"full"` (default) or `"numeric"`, the form of the infos (see Infos): numeric infos are
numbers and arrays only, for libraries that turn infos into tensors (TorchRL's `PettingZooWrapper`).

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
to move, all zeros for the other agent and once the episode has ended. On the Parallel API (below)
a seat that cannot act has instead exactly one legal action, the no-op `NOOP` (id 2, `pass`).

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

With `infos="numeric"` every agent's infos hold numbers and arrays only, with the same keys at every
step: `hand_index`, `dealer`, `scores` (an int64 array of both seats' running points; zeros in hand
mode), and of the latest finished hand `result_kind` (its index in `ginenv.aec.RESULT_KINDS`:
knock, undercut, gin, big_gin, dead, truncated), `result_winner` (seat) and `result_points` (to the
winner), which are -1, -1 and 0 until a hand ends; the Parallel API adds `active_seat` (-1 once the
episode is over). The text and the nested showdown are then read from `env.unwrapped.full_infos`,
which holds the full infos in either form.

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
the copy leaves the original unchanged. `pickle` instead rebuilds a fresh env from its settings (as
PettingZoo's classic envs rebuild theirs from the constructor arguments).

### Parallel API

`parallel_env()` gives the same game through PettingZoo's Parallel API. Gin rummy is turn-based (the
same seat draws, then discards), so each `step(actions)` applies only the action of the agent to
move (`infos[a]["active_agent"]`; its seat is `infos[a]["active_seat"]`). An illegal action ends
the episode as on `env()` (below); `parallel_env(illegal_reward=None)` raises `IllegalActionError`
instead and changes nothing.

**The no-op.** Libraries sample an action for every agent at every step, from each agent's mask,
and an all-zero mask leaves nothing to sample (TorchRL's random and masked samplers fail on it). So
on the Parallel API a seat that cannot act (the seat not to move, and both seats once the episode
has ended) has exactly one legal action, `gin_rummy_v0.NOOP`, as multi-agent libraries give a unit
that cannot act its no-op (SMAC's for dead units). The no-op reuses id 2 (`pass`) rather than adding
an id: the action space stays `Discrete(108)` and the mask `(108,)`, the same as `env()`'s, so one
network serves both APIs, and Gymnasium's `Discrete.sample(mask)`, PettingZoo's
`parallel_api_test`, TorchRL's `PettingZooWrapper`, RLlib's `ParallelPettingZooEnv` and
Tianshou's masked random policy (through PettingZoo's `parallel_to_aec`) all sample it (tested). The
rule for that seat's entry in `actions`: it is ignored, whatever it holds (the no-op, any other id,
legal-looking or not, or no entry at all), and never ends the episode as an illegal action would;
send the no-op. To tell the seats apart read `active_seat` or entry 10 of the observation ("this
seat decides now"), not the mask: during the upcard offer the mover's mask holds `pass` too. The
observation vectors and rewards are `env()`'s; only the masks of seats that cannot act differ.

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
  `EpisodeOverError`, `settings=EnvSettings(...)`; `infos="numeric"`, `full_infos`, the infos'
  `active_seat` on the Parallel API. Changed within v0, nothing an agent observes: on the Parallel API
  an illegal action ends the episode with `illegal_reward` (as on `env()` and PettingZoo's classic
  envs) where it raised before (`illegal_reward=None` keeps the old behaviour).
* v0, Parallel API masks: the mask of a seat that cannot act holds the no-op `NOOP` (id 2, `pass`)
  where it was all zero, so that every library's sampler can draw an action for it. The action
  space, every observation vector, reward and deal, and `env()`'s and the batched engine's masks are
  unchanged; the seat's action was ignored before and still is, so every seeded hand plays and
  scores as before (hence no new version). A program that found the mover by a non-zero mask reads
  `infos[a]["active_seat"]` instead.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from pettingzoo import AECEnv

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
from ginenv.aec import AGENTS, EpisodeOverError, raw_env
from ginenv.aec_wrappers import wrap
from ginenv.engine import DEFAULT_TURN_LIMIT, DeckError, IllegalActionError
from ginenv.match import DEFAULT_HAND_LIMIT
from ginenv.observation import OBS_SIZE, ORACLE_OBS_SIZE, STATE_SIZE
from ginenv.parallel import NOOP, ParallelGinRummy, parallel_env
from ginenv.settings import EnvSettings, InfoForm, Mode

if TYPE_CHECKING:
    from ginenv.rules import Rules
    from ginenv.settings import EnvKwargs

__all__ = [
    "ACTION_NAMES",
    "AGENTS",
    "BIG_GIN",
    "DEFAULT_HAND_LIMIT",
    "DEFAULT_TURN_LIMIT",
    "DISCARD_BASE",
    "DRAW_DISCARD",
    "DRAW_STOCK",
    "KNOCK_BASE",
    "NOOP",
    "NUM_ACTIONS",
    "OBS_SIZE",
    "ORACLE_OBS_SIZE",
    "PASS",
    "STATE_SIZE",
    "DeckError",
    "EnvSettings",
    "EpisodeOverError",
    "IllegalActionError",
    "Mode",
    "ParallelGinRummy",
    "UnknownActionError",
    "env",
    "parallel_env",
    "raw_env",
]


class _Keep(enum.Enum):
    """The default of :func:`env`'s setting keywords: a keyword left out keeps ``settings``' value
    (without ``settings``, the :class:`~ginenv.settings.EnvSettings` default)."""

    KEEP = "keep"

    def __repr__(self) -> str:
        return "KEEP"


#: A setting keyword of :func:`env` left out: ``settings``' value, else the default.
KEEP = _Keep.KEEP


def env(
    *,
    settings: EnvSettings | None = None,
    rules: Rules | _Keep | None = KEEP,
    mode: Mode | _Keep = KEEP,
    render_mode: str | _Keep | None = KEEP,
    reward_scale: float | _Keep = KEEP,
    oracle: bool | _Keep = KEEP,
    dealer: int | str | _Keep | None = KEEP,
    turn_limit: int | _Keep = KEEP,
    hand_limit: int | _Keep = KEEP,
    infos: InfoForm | _Keep = KEEP,
    illegal_reward: float = -1.0,
    **unknown: Any,
) -> AECEnv[str, dict[str, np.ndarray], int]:
    """The wrapped env, as PettingZoo's classic envs build it (see the module docstring).

    :class:`raw_env` wrapped in the behaviour of PettingZoo's ``TerminateIllegalWrapper`` (an
    illegal action ends the episode with ``illegal_reward`` for the offender),
    ``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper`` (:mod:`ginenv.aec_wrappers`).
    ``illegal_reward`` must be a finite number (checked here, not at the first illegal action).

    The settings (:class:`~ginenv.settings.EnvSettings`, which documents and checks each):
    ``settings``, with every keyword given replacing its field. Left out, a keyword keeps
    ``settings``' value, or without ``settings`` the default: ``rules`` the standard rules
    (:data:`ginenv.rules.PRESETS` names others), ``mode`` ``"hand"`` (or ``"match"``, to the
    rules' target), ``render_mode`` None (or ``"ansi"``, ``"human"``), ``reward_scale`` 1.0,
    ``oracle`` False, ``dealer`` None (drawn from the reset seed; or 0, 1, ``"player_0"``,
    ``"player_1"``), ``turn_limit`` :data:`DEFAULT_TURN_LIMIT`, ``hand_limit``
    :data:`DEFAULT_HAND_LIMIT` and ``infos`` ``"full"`` (or ``"numeric"``). Any other keyword
    (``unknown``): ``TypeError`` naming the settings, as every face of the env says it.
    """
    given = {
        "rules": rules,
        "mode": mode,
        "render_mode": render_mode,
        "reward_scale": reward_scale,
        "oracle": oracle,
        "dealer": dealer,
        "turn_limit": turn_limit,
        "hand_limit": hand_limit,
        "infos": infos,
    }
    kwargs = cast("EnvKwargs", {**{k: v for k, v in given.items() if v is not KEEP}, **unknown})
    inner = raw_env(settings=settings, **kwargs)
    return wrap(inner, illegal_reward)
