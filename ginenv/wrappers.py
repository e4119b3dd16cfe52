"""A Gymnasium single-agent view of the env: one seat learns, an opponent plays the other.

:class:`SingleAgentEnv` owns the loop that lets the opponent move between the learner's decisions.
It is a ``gymnasium.Env`` whose observation is the seat's ``"observation"`` vector (a ``Box``) and
whose action is an action id (``Discrete(108)``); the legal actions are in ``info["action_mask"]``
and in :meth:`SingleAgentEnv.action_masks`, the method sb3-contrib's ``MaskablePPO`` calls.
``import ginenv`` registers it with Gymnasium as ``"ginenv/GinRummy-v0"``, whose default opponent is
:data:`DEFAULT_OPPONENT` (``"normal"``) whether it is built by ``make`` or ``make_vec`` (which copies
it, ``"sync"`` or ``"async"``)::

    env = gymnasium.make("ginenv/GinRummy-v0", opponent="hard", seat=None, reward_scale=0.01)
    envs = gymnasium.make_vec("ginenv/GinRummy-v0", num_envs=8, opponent="hard")

The batched engine's Gymnasium vector env (:mod:`ginenv.vector_env`) plays compiled opponents only,
so it has its own id, ``"ginenv/GinRummyBatched-v0"``: its default opponent is ``"greedy"`` and its
seat random, with ``make`` (this class, one slot's game) and ``make_vec`` (the batched env) alike.

**The opponent** receives exactly what ``observe()`` gives its seat (``{"observation",
"action_mask"}``), nothing more. It is one of:

- an agent spec of :mod:`ginenv.agents` (``"normal"``, ``"hard"``, ``"checkpoint:PATH"``, ...),
  built with ``agents.make(spec)`` when the wrapper is built; the agents layer sits above the env, so
  this module never imports it: it loads the factory the package metadata names
  (:func:`agent_factory`);
- an agent object: anything with ``act(observation) -> action id`` and, optionally,
  ``reset(seed)``;
- a plain callable ``policy(observation) -> action id`` (e.g. :class:`RandomPolicy`).

An opponent with a ``reset`` method is reset at the start of every hand (every episode in hand mode,
every deal of a match in match mode) with a seed drawn from the wrapper's generator, so that
``reset(seed=s)`` reproduces the whole episode.

**The default opponent is ``"normal"``** (:class:`ginenv.agents.levels.normal.NormalAgent`), not a random
player: against uniformly random play about 97% of hands are dead (nobody ever knocks) and a
learner gets almost no reward signal. ``normal`` knocks as soon as it can and takes only useful
discards, so hands end by knocks, its decisions are fast (no sampling or search), and it is
beatable (``hard`` and above beat it by 2 to 4 points a hand in the README's ladder). Pass
``opponent="random"`` or :class:`RandomPolicy` for the old behaviour.

**Rewards** are the learner's rewards of the AEC env (points times ``reward_scale``), summed over the
opponent's moves that follow its action. **Episodes end** with ``terminated`` when the hand (hand
mode) or the match (match mode) ends by the rules, and with ``truncated`` when a hand reaches the
env's turn limit (``turn_limit`` draws; :data:`ginenv.engine.DEFAULT_TURN_LIMIT`): no points, and
``info["result"]["kind"] == "truncated"``.

**The mask in the observation.** ``mask_in_observation=True`` makes the observation a ``Dict`` of
``"observation"`` (the vector) and ``"action_mask"`` (int8, 108), as the AEC env's observations
are, so that masked-action wrappers that read the mask from the observation work (TorchRL's
``ActionMask`` transform, RLlib's action-masking models); ``info["action_mask"]`` and
:meth:`action_masks` stay as they are.

**Action masks.** During an episode the mask holds the learner's legal actions. On the step that
ends an episode no action is legal, but Gymnasium's default vector autoreset (``NEXT_STEP``) still
asks the policy for one action on the final observation, and discards it; an all-zero mask there
would turn a masked softmax into NaN. So the final mask is all ones (a placeholder: ``step`` is
refused until ``reset``), and after every reset, the autoresets of Gymnasium's and Stable
Baselines3's vector envs included, the mask is the new hand's real one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import gymnasium
import numpy as np
from gymnasium import spaces

from ginenv.actions import NUM_ACTIONS
from ginenv.aec import as_action, raw_env
from ginenv.engine import HandState
from ginenv.plugins import installed
from ginenv.rules import Rules
from ginenv.settings import AGENTS, RENDER_MODES, EnvSettings
from ginenv.validation import as_int, finite_number

if TYPE_CHECKING:
    from typing import Unpack

    from ginenv.settings import EnvKwargs

#: A policy: maps the observation dict of its seat to a legal action id.
Policy = Callable[[Mapping[str, np.ndarray]], int]
#: The opponent when none is given (see the module docstring for why).
DEFAULT_OPPONENT = "normal"
# The final observation's placeholder mask (see the module docstring).
_ALL_ACTIONS = np.ones(NUM_ACTIONS, dtype=np.int8)


@runtime_checkable
class AgentLike(Protocol):
    """An opponent object: ``act`` per decision (``reset(seed)`` per hand, if it has one)."""

    def act(self, observation: Mapping[str, np.ndarray]) -> int:
        """A legal action id for the observation dict of its seat."""
        ...


class RandomPolicy:
    """Uniform choice among the legal actions of an observation's ``action_mask``."""

    def __init__(self, rng: np.random.Generator | int | None = None) -> None:
        """``rng``: a generator, or a seed for a new one."""
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    def reset(self, seed: int | None = None) -> None:
        """Start of a hand: reseed (``None`` keeps the generator)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def __call__(self, observation: Mapping[str, np.ndarray]) -> int:
        """A legal action id drawn uniformly."""
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("no legal action in this observation's action_mask")
        return int(legal[self.rng.integers(legal.size)])

    act = __call__


AGENT_FACTORY_GROUP = "ginenv.agent_factory"
"""The entry-point group that names the function building an agent from its spec (``ginenv``'s own
package metadata names ``ginenv.agents:make``)."""


def agent_factory() -> Callable[..., Any]:
    """The function that builds an agent from a spec (``"normal"``, ``"checkpoint:PATH"``, ...).

    The agents layer sits above this package, so the core never imports it: the installed package's
    metadata names the factory (entry point ``ginenv`` of the group :data:`AGENT_FACTORY_GROUP`), and it is
    loaded here on first use (half a second: the agents layer and its compiled kernels).
    """
    found = installed(AGENT_FACTORY_GROUP).get("ginenv")
    if found is None:
        raise LookupError(
            f"no agent factory is installed (entry-point group {AGENT_FACTORY_GROUP!r}), so an opponent "
            "cannot be named by a spec: install ginenv (pip install . in a checkout, or pip install "
            "the wheel file), or pass an agent object or a callable policy(observation)"
        )
    return found.load()


def _resolve_opponent(
    opponent: object, rules: Rules | None = None
) -> tuple[Policy, Callable[[int | None], Any] | None]:
    """The opponent's action function and its per-hand ``reset`` (or ``None``); a registry name is
    built for the table's ``rules``."""
    if isinstance(opponent, str):
        opponent = agent_factory()(opponent, rules=rules)
    act = getattr(opponent, "act", None)
    if callable(act):
        reset = getattr(opponent, "reset", None)
        return act, reset if callable(reset) else None
    if callable(opponent):
        return opponent, None  # type: ignore[return-value]
    raise TypeError(
        "opponent must be an agent registry name (e.g. 'normal'), an object with act(observation) "
        f"(and optionally reset(seed)), or a callable policy(observation); got {opponent!r}"
    )


class SingleAgentEnv(gymnasium.Env[Any, np.int64]):
    """One seat of ``gin_rummy_v0`` as a Gymnasium env, the other seat played by ``opponent``.

    ``opponent``: a registry name, an agent object or a policy callable (module docstring); the
    default is :data:`DEFAULT_OPPONENT` (``"normal"``). ``seat`` is 0 or 1 (``player_0`` /
    ``player_1``), or ``None`` to draw it at every reset. ``illegal_reward``: an illegal action ends
    the episode with this reward (as PettingZoo's ``env()`` does); ``None`` raises
    :class:`ginenv.engine.IllegalActionError` instead. The other keyword arguments are the table's
    settings, as ``gin_rummy_v0.env()`` takes them (the fields of
    :class:`ginenv.settings.EnvSettings` one by one, ``settings=EnvSettings(...)``, or both); they
    configure the underlying :class:`ginenv.gin_rummy_v0.raw_env` and survive resets.
    """

    metadata: dict[str, Any] = {"render_modes": list(RENDER_MODES), "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        opponent: str | AgentLike | Policy | None = DEFAULT_OPPONENT,
        seat: int | None = 0,
        *,
        illegal_reward: float | None = -1.0,
        mask_in_observation: bool = False,
        settings: EnvSettings | None = None,
        **kwargs: Unpack[EnvKwargs],
    ) -> None:
        """Build the AEC env underneath, the opponent and the spaces; see the class docstring."""
        seat_number = None if seat is None else as_int(seat)
        if seat is not None and seat_number not in (0, 1):
            raise ValueError(f"seat must be 0, 1 or None (random at each reset), got {seat!r}")
        if illegal_reward is not None:
            illegal_reward = finite_number("illegal_reward", illegal_reward)
        if not isinstance(mask_in_observation, bool):
            raise TypeError(f"mask_in_observation must be True or False, got {mask_in_observation!r}")
        self.env = raw_env(settings=settings, **kwargs)
        self.mask_in_observation = mask_in_observation
        self.render_mode = self.env.render_mode
        self.seat_option = seat_number
        self.seat = 0 if seat_number is None else seat_number
        self.illegal_reward = illegal_reward
        self.opponent = DEFAULT_OPPONENT if opponent is None else opponent
        self._act, self._reset_opponent = _resolve_opponent(self.opponent, self.env.rules)
        inner = self.env.observation_space(AGENTS[0])
        assert isinstance(inner, spaces.Dict)
        # Either the vector alone (the mask in info and action_masks()) or, for libraries whose
        # masked-action wrappers read the mask from the observation (TorchRL, RLlib), both.
        self.observation_space: spaces.Space[Any] = inner if mask_in_observation else inner["observation"]
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._pending_reward = 0.0
        self._done = True
        self._opponent_hand: HandState | None = None  # the hand the opponent was last reset for

    @property
    def agent(self) -> str:
        """The learner's agent name in the AEC env."""
        return AGENTS[self.seat]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Deal a new episode and play the opponent until the learner's first decision.

        ``options`` go to the AEC env's ``reset`` (``deck``, ``decks``, ``dealer``). In hand mode, a
        hand that ends before the learner's first decision (the opponent takes the upcard and
        knocks at once) is dealt again, since the learner had no say in it; in match mode the
        points of such a hand are added to the reward of the learner's first step.
        """
        super().reset(seed=seed)
        # Every random choice below flows from self.np_random, so reset(seed=s) is reproducible.
        if self.seat_option is None:
            self.seat = int(self.np_random.integers(2))
        for _ in range(100):
            self.env.reset(seed=int(self.np_random.integers(2**63)), options=options)
            self._opponent_hand = None
            self._pending_reward = self._play_opponent()
            if not self._episode_over():
                break
            if options and (options.get("deck") is not None or options.get("decks") is not None):
                raise RuntimeError(
                    "the given deal ends before the learner's first decision; choose another deck"
                )
        else:  # pragma: no cover - needs 100 deals in a row ended by the opponent
            raise RuntimeError("the opponent ended 100 deals in a row before the learner could move")
        self._done = False
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Apply the learner's action (an integer id of any integer type), then the opponent's
        moves until the learner decides again or the episode ends."""
        if self._done:
            raise RuntimeError("the episode is over: call reset()")
        action = as_action(action)
        env = self.env
        reward = self._pending_reward
        self._pending_reward = 0.0
        if not (0 <= action < NUM_ACTIONS and self._mask[action]):
            penalty = self.illegal_reward
            if penalty is None:
                env.step(action)  # raises IllegalActionError (or UnknownActionError) naming the legal ones
                raise AssertionError("unreachable: the env accepted an action outside the mask")
            self._done = True
            self._mask = _ALL_ACTIONS.copy()
            info = self._info()
            info["illegal_action"] = action
            return self._shown(env.observe(self.agent)["observation"]), reward + penalty, True, False, info
        env.step(action)
        reward += float(env.rewards[self.agent])
        reward += self._play_opponent()
        terminated = bool(env.terminations[self.agent])
        truncated = bool(env.truncations[self.agent])
        self._done = terminated or truncated
        return self._observation(), reward, terminated, truncated, self._info()

    def _episode_over(self) -> bool:
        me = self.agent
        return bool(self.env.terminations[me] or self.env.truncations[me])

    def _play_opponent(self) -> float:
        """Let the opponent move until the learner's turn or the end; the learner's rewards meanwhile."""
        env = self.env
        me = self.agent
        reward = 0.0
        while not (env.terminations[me] or env.truncations[me]) and env.agent_selection != me:
            hand = env.hand
            if hand is not self._opponent_hand:
                # A new hand (a reset, or the next deal of a match): the opponent starts afresh.
                self._opponent_hand = hand
                if self._reset_opponent is not None:
                    self._reset_opponent(int(self.np_random.integers(2**63)))
            env.step(self._act(env.observe(env.agent_selection)))
            reward += float(env.rewards[me])
        return reward

    def _observation(self) -> Any:
        obs = self.env.observe(self.agent)
        # The final observation gets the placeholder mask (module docstring), never all zeros.
        self._mask = _ALL_ACTIONS.copy() if self._episode_over() else obs["action_mask"]
        return self._shown(obs["observation"])

    def _shown(self, vector: np.ndarray) -> Any:
        if self.mask_in_observation:
            return {"observation": vector, "action_mask": self._mask.copy()}
        return vector

    def _info(self) -> dict[str, Any]:
        info = dict(self.env.infos[self.agent])
        info["action_mask"] = self._mask.copy()
        return info

    def action_masks(self) -> np.ndarray:
        """Boolean mask of the learner's legal actions (what ``MaskablePPO`` asks for)."""
        return self._mask.astype(bool)

    def render(self) -> str | None:  # type: ignore[override]
        """Render the AEC env (``ansi`` returns the text, ``human`` prints it)."""
        return self.env.render()

    def close(self) -> None:
        """Close the AEC env."""
        self.env.close()
