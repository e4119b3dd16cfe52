"""The AEC env itself: :class:`raw_env`, gin rummy as a PettingZoo ``AECEnv``.

Its documentation is the env card, ``ginenv.gin_rummy_v0``'s module docstring; import it from there
(``gin_rummy_v0.raw_env``). ``gin_rummy_v0.env()`` wraps it (:mod:`ginenv.aec_wrappers`) and
``gin_rummy_v0.parallel_env()`` turns it into the Parallel API (:mod:`ginenv.parallel`); its
settings are an :class:`ginenv.settings.EnvSettings`.
"""

from __future__ import annotations

import copy
import random
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from ginenv import actions as _actions
from ginenv import compiling
from ginenv.actions import NUM_ACTIONS, UnknownActionError
from ginenv.cards import CARD_NAMES, cards_of
from ginenv.engine import DeckError, HandResult, HandState, IllegalActionError, parse_deck
from ginenv.kernels import hand as H
from ginenv.match import Match
from ginenv.observation import (
    OBS_SIZE,
    ORACLE_OBS_SIZE,
    Knowledge,
    encode_state,
    observation_high,
    state_high,
)
from ginenv.render import render_table
from ginenv.rules import Rules
from ginenv.settings import AGENTS, RENDER_MODES, EnvSettings, Mode, seat_of
from ginenv.validation import as_int, optional_seed

if TYPE_CHECKING:
    from typing import Unpack

    from ginenv.settings import EnvKwargs

__all__ = ["AGENTS", "RESULT_KINDS", "EpisodeOverError", "as_action", "numeric_info", "raw_env"]

_SEAT = {"player_0": 0, "player_1": 1}
_RESET_OPTIONS = frozenset({"deck", "decks", "dealer"})
# The most a seat's running score can reach: just under the target, plus one hand's points (the
# largest bonus plus at most 100 deadwood points).
_MAX_HAND_DEADWOOD = 100


class EpisodeOverError(RuntimeError):
    """``step`` or ``last`` called after every agent has left a finished episode: call ``reset()``."""

    @classmethod
    def after(cls, what: str) -> EpisodeOverError:
        """The error of a call to ``what()`` after the episode has ended."""
        return cls(
            f"{what}() after the episode ended (every agent has stepped None); call reset() to deal again"
        )


def as_action(action: object) -> int:
    """``action`` as an action id's int: any integer type (numpy scalars and 0-d integer arrays
    too); a bool, a float, a string or ``None`` raises :class:`ginenv.actions.UnknownActionError`.
    The range is the engine's to check."""
    number = as_int(action)
    if number is None:
        raise UnknownActionError(
            f"an action must be an integer action id 0..{NUM_ACTIONS - 1}, "
            f"got {action!r} ({type(action).__name__})"
        )
    return number


def _deck_value(deck: object) -> object:
    # A numpy array of card ids reads as the list of its ints (parse_deck checks the rest).
    return deck.tolist() if isinstance(deck, np.ndarray) else deck


class raw_env(AECEnv[str, dict[str, np.ndarray], int], EzPickle):
    """Gin rummy as a PettingZoo AEC environment; see the module docstring (the env card)."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": list(RENDER_MODES),
        "name": "gin_rummy_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, *, settings: EnvSettings | None = None, **kwargs: Unpack[EnvKwargs]) -> None:
        """Configure the env: ``settings`` and/or its fields as keyword arguments
        (:class:`ginenv.settings.EnvSettings`, which checks them); they survive every ``reset()``."""
        self.settings = EnvSettings.of(settings, **kwargs)
        #: The infos in their full form whatever ``settings.infos`` is (the env card's "Infos").
        self.full_infos: dict[str, dict[str, Any]] = {}
        # The first env of a fresh install compiles the engine's kernels: the note says so just before.
        compiling.note_once()
        # pickle rebuilds the env from its settings (a fresh env; copy.deepcopy copies the game).
        EzPickle.__init__(self, settings=self.settings)
        super().__init__()
        oracle = self.oracle

        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self.action_spaces: dict[str, spaces.Space[Any]] = {a: spaces.Discrete(NUM_ACTIONS) for a in AGENTS}
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
        # The seats' observations (a row each) and the mover's mask, which observe() copies out. A step
        # writes the mover's row and the mask in the call that applies the action
        # (HandState.step_viewing); the other seat's row is encoded when that seat is observed (most
        # loops observe only the mover), from the same state and scores, so it reads the same.
        self._views = np.zeros((2, ORACLE_OBS_SIZE if oracle else OBS_SIZE), dtype=np.float32)
        self._rows = (self._views[0], self._views[1])
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._stale = -1  # the seat whose row is older than the state (-1: none)
        self._score_view = np.zeros(3, dtype=np.int64)  # seat 0's and 1's points, the target
        self._human = self.settings.render_mode == "human"
        self._rng: random.Random | None = None
        self._match: Match | None = None
        self._state: HandState | None = None
        self._finished: HandState | None = None  # the latest finished hand (for render)
        self._hand_index = 0
        self._rewards_dirty = False

    # ------------------------------------------------------------------ settings

    @property
    def rules(self) -> Rules:
        """The rule options (``settings.rules``)."""
        return self.settings.rules

    @property
    def mode(self) -> Mode:
        """``"hand"`` or ``"match"`` (``settings.mode``)."""
        return self.settings.mode

    @property
    def render_mode(self) -> str | None:  # type: ignore[override]
        """``None``, ``"ansi"`` or ``"human"`` (``settings.render_mode``)."""
        return self.settings.render_mode

    @property
    def reward_scale(self) -> float:
        """Rewards are points times this (``settings.reward_scale``)."""
        return self.settings.reward_scale

    @property
    def oracle(self) -> bool:
        """Whether each seat also sees the opponent's hand (``settings.oracle``)."""
        return self.settings.oracle

    @property
    def dealer(self) -> int | None:
        """The fixed dealer's seat, or ``None`` (drawn at each reset; ``settings.dealer``)."""
        return self.settings.dealer

    @property
    def turn_limit(self) -> int:
        """Draws per hand before truncation (``settings.turn_limit``)."""
        return self.settings.turn_limit

    @property
    def hand_limit(self) -> int:
        """Hands per match before truncation (``settings.hand_limit``)."""
        return self.settings.hand_limit

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
        return Knowledge.of(self._state)

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
        dealer = None if dealer_option is None else seat_of(dealer_option)

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
        self._refresh(self._state, *self._scores())
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
        seat = _SEAT[agent]
        if seat == self._stale:
            s0, s1, target = self._score_view.tolist()
            own, other = (s0, s1) if seat == 0 else (s1, s0)
            H.encode(state.record, 0, seat, self._rows[seat], own, other, target, self.oracle)
            self._stale = -1
        vec = self._rows[seat].copy()
        if agent == self.agent_selection and not (self.terminations[agent] or self.truncations[agent]):
            mask = self._mask.copy()
        else:
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        return {"observation": vec, "action_mask": mask}

    def _refresh(self, state: HandState, scores: list[int] | None = None, target: int = 0) -> None:
        """Rewrite the views for a new deal, new scores or the end of a hand."""
        self._score_view[:] = (0, 0, 0) if scores is None else (scores[0], scores[1], target)
        self._write_view(state)

    def _write_view(self, state: HandState) -> None:
        """One kernel call: the mover's view and mask at the scores last set; the other seat's view
        is encoded when observed."""
        H.write_view(state.record, 0, state.rule_array, self._views, self._mask, self._score_view)
        self._stale = 1 - state.player

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
            raise EpisodeOverError.after(what)

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
        self._play(agent, action)

    def _play(self, agent: str, action: int | np.integer | None) -> None:
        """:meth:`step` for ``agent``, the agent to move and still playing (what ``step`` checks
        first, and ``env()``'s wrapper before it calls this)."""
        state = self._state
        assert state is not None
        if type(action) is not int:
            action = as_action(action)
        match = self._match
        try:
            if match is None:
                state.step_viewing(action, self._views, self._mask, self._score_view)
                result = state.result
            else:
                result = match.step(action)
        except IllegalActionError as err:
            raise IllegalActionError(f"{agent}: {err}") from None
        # The action is applied: from here on the env changes.
        if self._rewards_dirty:
            for a in self.rewards:
                self.rewards[a] = 0.0
            self._rewards_dirty = False
        self._cumulative_rewards[agent] = 0.0
        if result is None:
            if match is None:
                self._stale = 1 - state.player  # step_viewing wrote the mover's view
            else:
                self._write_view(state)
            self.agent_selection = AGENTS[state.player]
        else:
            self._end_of_hand(state, result)
        if self._human:
            self.render()

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
            self._refresh(state, *self._scores())
        elif match is None:
            self.terminations = {a: True for a in AGENTS}
            self.agent_selection = AGENTS[1 - state.player]
            self._refresh(state)
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
            self._refresh(state, match.scores, self.rules.target)
        else:
            self._hand_index += 1
            self._state = match.hand
            self._refresh(match.hand, match.scores, self.rules.target)
            self.agent_selection = AGENTS[match.hand.player]
        self.rewards = {AGENTS[0]: rewards[0], AGENTS[1]: rewards[1]}
        self._rewards_dirty = True
        self._accumulate_rewards()
        self.infos = self._public_infos(info_result)

    def _public_infos(self, result: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
        """Per-agent infos in the settings' form (``full`` or ``numeric``); the full ones are
        kept as :attr:`full_infos` either way."""
        self.full_infos = self._full_infos(result)
        if self.settings.infos == "numeric":
            return {a: numeric_info(info) for a, info in self.full_infos.items()}
        return self.full_infos

    def _full_infos(self, result: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
        """Per-agent infos: only public facts (current hand, dealer, scores, latest result).
        (The numeric form, :func:`numeric_info`, reads them, never the state.)"""
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

        ``pickle`` still rebuilds a fresh env from its settings (EzPickle, for
        subprocess vector envs); ``copy.deepcopy`` copies the game: the hands, the stock order, the
        match, the public record, the generator, rewards and infos.
        """
        cls = type(self)
        other = cls.__new__(cls)
        memo[id(self)] = other
        memo[id(self.settings)] = self.settings  # immutable: shared
        # Hands are copied with HandState.clone (fast; rules and results are immutable and shared);
        # the memo makes the match's current hand and the env's the same object in the copy too.
        for hand in (self._state, self._finished):
            if hand is not None and id(hand) not in memo:
                memo[id(hand)] = hand.clone()
        for name, value in self.__dict__.items():
            other.__dict__[name] = copy.deepcopy(value, memo)
        other._rows = (other._views[0], other._views[1])  # views of the copy's rows, not copies
        return other

    def __str__(self) -> str:
        return "gin_rummy_v0"


#: The kinds of a hand's result, by the code ``numeric`` infos give them (``result_kind``; -1: no
#: hand has ended yet): the hand record's codes, which the batched engine's results give too.
RESULT_KINDS = H.RESULT_KINDS


def numeric_info(info: dict[str, Any]) -> dict[str, Any]:
    """An agent's infos as numbers and arrays only (settings ``infos="numeric"``), with the same
    keys at every step: ``hand_index``, ``dealer``, ``scores`` (int64 array of the two seats'
    running points; zeros in hand mode), and of the latest finished hand ``result_kind`` (its
    index in :data:`RESULT_KINDS`), ``result_winner`` (seat) and ``result_points`` (to the
    winner), each -1, -1 and 0 until a hand ends."""
    result = info.get("result")
    winner = None if result is None else result["winner"]
    return {
        "hand_index": int(info["hand_index"]),
        "dealer": int(info["dealer"]),
        "scores": np.asarray(info.get("scores", (0, 0)), dtype=np.int64),
        "result_kind": -1 if result is None else RESULT_KINDS.index(result["kind"]),
        "result_winner": -1 if winner is None else AGENTS.index(winner),
        "result_points": 0 if result is None else int(result["points"]),
    }


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


# The compiled entry points the env runs (ginenv.compiling): its view writer, and its hand's.
compiling.register(raw_env, H.write_view, HandState)
