"""``openspiel_simple``: OpenSpiel's simple gin rummy bot as a ginenv agent (:class:`OpenSpielSimpleAgent`).

``pyspiel.make_simple_gin_rummy_bot`` decides on a ``pyspiel`` gin_rummy state seen from its own
player. At each decision the adapter builds such a state from the seat's observations alone:

* :class:`PublicHistory` follows the hand from the seat's successive observations: its initial
  hand (the first observation of a hand comes before the seat's first action, so it shows the 10
  dealt cards), the first upcard, its own actions and stock draws, and the opponent's moves read
  from what changed in between (a card of ours in ``opponent_taken``: it took our discard, else it
  drew from the stock; the new top of the pile: its discard). Every decision checks the record
  against the observation (own hand, pile, stock size, the opponent's known cards).
* The cards the seat never saw are filled in with any cards consistent with the public record:
  each opponent discard that did not come from the pile is given to the stock draw of the same
  turn (else to an unknown card of its initial hand), and the opponent's unknown cards now held are
  filled with cards from the ``unseen`` plane (the choice is kept from one decision to the next
  while it stays consistent). The fill depends on the observations only.
* The deal (OpenSpiel's player 0 is always the non-dealer, who acts first), the upcard and the
  public action history are replayed with ``pyspiel`` (stock draws are chance outcomes there: the
  seat's own draws are the cards it drew, the opponent's the filled-in ones). The state is checked
  against the observation (hand, top card, pile, stock size, player to move), the bot is asked for
  its action, and the action is mapped to ours: draw upcard -> ``draw_discard``, draw stock ->
  ``draw_stock``, pass -> ``pass``, card -> ``discard <card>``. OpenSpiel knocks in two steps
  (knock, then a discard); the adapter applies the knock to a copy and asks the bot again for the
  discard, giving ``knock <card>``. Meld declaration and layoffs do not exist as decisions here:
  the env scores the showdown.

Fidelity: the bot reads only its own observation tensor (own hand, top card, pile, stock size,
knock card, laid melds) and the legal actions, so its decisions are exactly OpenSpiel's on the
same cards. The adapter restarts the bot before each decision (its only memory is the knock flag
and the meld actions queued after a knock, both of which end the hand here). When the replay
cannot be built (OpenSpiel ends a hand after 50 discard-pile draws), a one-decision state with the
seat's current hand and top card is used instead; the tests check that both give the same action.
Where the bot's choice is illegal here, the adapter plays the closest legal action and counts it in
:attr:`OpenSpielSimpleAgent.fallbacks` (see the rule differences below).

Rule differences: ginenv's standard rules (``docs/RULES.md``) against OpenSpiel ``gin_rummy`` (knock_card
10, gin_bonus 25, undercut_bonus 25, oklahoma off: the same numbers as ours; the adapter passes the
hand's knock limit from the observation, so Oklahoma hands play with the right limit; limits above 10
do not exist in OpenSpiel and are refused):

* Same deal order and first-upcard offer (non-dealer, then dealer; if both pass the non-dealer must
  draw from the stock).
* OpenSpiel lets a player discard the card just taken from the pile (the hand ends if it happens twice
  in a row); ours forbids it. The bot can only choose it when the card it took is its highest
  deadwood card, typically after taking the first upcard to knock at once; the adapter then plays the
  legal discard (or knock) leaving the least deadwood, highest card on ties (counted in
  ``fallbacks``; none in thousands of decisions against random, greedy and expert). Two adapters
  playing each other in ginenv make move for move the game two simple bots play in OpenSpiel on the
  same deck (tested), up to OpenSpiel's wall.
* The wall: OpenSpiel lets the next player knock with the upcard when a discard leaves 2 cards in the
  stock, else the hand ends with no score; here the hand is dead at once, so that decision never
  reaches the bot.
* Knock: OpenSpiel's 11-card minimum deadwood is an upper bound on rare hands (``DESIGN.md``), so the
  bot can miss a knock that is legal here. It never uses big gin (OpenSpiel has none): with 11 melded
  cards it knocks with gin.
* Showdown: the bot lays the best meld group and never lays off as defender; here layoffs are chosen
  by the env for both players, which helps the bot as defender. A tie in deadwood scores 0 in
  OpenSpiel and is an undercut here. Matches, targets and match bonuses are ginenv's.
* OpenSpiel ends a hand after 50 draws from the discard pile; ginenv has no such cap (the adapter
  falls back to the one-decision state).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
from ginenv.agents.base import Agent, Observation
from ginenv.agents.baselines.history import (
    ME,
    OPP,
    UNSEEN_CARD,
    Move,
    PublicHistory,
    ReconstructionError,
    track,
)

from ginenv.actions import (
    DISCARD_BASE,
    DRAW_DISCARD,
    DRAW_STOCK,
    KNOCK_BASE,
    NUM_ACTIONS,
    PASS,
    action_name,
)
from ginenv.cards import NUM_CARDS, cards_of
from ginenv.engine import HAND_SIZE, Phase
from ginenv.melds import deadwood_of_mask
from ginenv.observation import SeatView, decode

__all__ = [
    "OS_DRAW_STOCK",
    "OS_DRAW_UPCARD",
    "OS_KNOCK",
    "OS_MAX_DRAW_UPCARD",
    "OS_PASS",
    "OpenSpielSimpleAgent",
    "openspiel_actions",
    "openspiel_installed",
]


def openspiel_installed() -> bool:
    """Whether ``pyspiel`` (the ``open-spiel`` package) can be found, without importing it."""
    return importlib.util.find_spec("pyspiel") is not None


# OpenSpiel gin_rummy action ids (open_spiel/games/gin_rummy/gin_rummy.h): 0..51 cards (discards,
# and chance outcomes), then these.
OS_DRAW_UPCARD = 52
OS_DRAW_STOCK = 53
OS_PASS = 54
OS_KNOCK = 55
#: OpenSpiel ends a hand when a player draws from the discard pile for the 50th time.
OS_MAX_DRAW_UPCARD = 50
_OS_EVENT = {Move.PASS: OS_PASS, Move.TAKE: OS_DRAW_UPCARD, Move.STOCK: OS_DRAW_STOCK}


def openspiel_actions(
    history: PublicHistory, unseen: int, fill: dict[int, int] | None = None
) -> tuple[list[int], dict[int, int]]:
    """A pyspiel gin_rummy action sequence (chance outcomes included) consistent with ``history``.

    The opponent's hidden cards are "slots": its 10 dealt cards, then one per stock draw. A discard
    that did not come from the pile takes the stock draw of the same turn when there is one, else the
    first slot of its hand still unknown. Slots still unknown (the cards it holds unseen) get cards of
    ``unseen``, keeping ``fill`` (slot -> card, from the previous decision) where still possible.
    Returns the actions and the new fill. Uses nothing but the record and ``unseen``.
    """
    known = 0  # the opponent's cards taken from the pile, still held
    held: list[int] = list(range(HAND_SIZE))  # the opponent's slots still unknown
    slot_card: dict[int, int] = {}
    draw_slot: dict[int, int] = {}  # event index -> slot of an opponent stock draw
    slots = HAND_SIZE
    last_draw: int | None = None
    for i, (who, kind, card) in enumerate(history.events):
        if who != OPP:
            last_draw = None
            continue
        if kind == Move.TAKE:
            known |= 1 << card
            last_draw = None
        elif kind == Move.STOCK:
            held.append(slots)
            draw_slot[i] = last_draw = slots
            slots += 1
        elif kind == Move.DISCARD:
            if known >> card & 1:
                known &= ~(1 << card)
            else:
                slot = last_draw if last_draw is not None and last_draw in held else held[0]
                held.remove(slot)
                slot_card[slot] = card
            last_draw = None
        else:
            last_draw = None
    # The slots still held unknown: keep the previous choice where it is still unseen.
    used = 0
    new_fill: dict[int, int] = {}
    old = fill or {}
    for slot in held:
        card = old.get(slot, UNSEEN_CARD)
        if card >= 0 and unseen >> card & 1 and not used >> card & 1:
            new_fill[slot] = card
            used |= 1 << card
    for slot in held:
        if slot not in new_fill:
            free = unseen & ~used
            if not free:
                raise ReconstructionError("not enough unseen cards for the opponent's hand")
            card = (free & -free).bit_length() - 1
            new_fill[slot] = card
            used |= 1 << card
    slot_card.update(new_fill)

    mine = cards_of(history.initial_hand)
    theirs = [slot_card[s] for s in range(HAND_SIZE)]
    actions = (mine + theirs if history.role == 0 else theirs + mine) + [history.upcard]
    for i, (who, kind, card) in enumerate(history.events):
        if kind == Move.DISCARD:
            actions.append(card)
            continue
        actions.append(_OS_EVENT[kind])
        if kind == Move.STOCK:
            actions.append(card if who == ME else slot_card[draw_slot[i]])
    return actions, new_fill


def _openspiel_cards_dealt(actions: list[int]) -> list[int]:
    """The chance outcomes of an action sequence built by :func:`openspiel_actions`."""
    dealt = actions[: 2 * HAND_SIZE + 1]
    dealt += [actions[i + 1] for i in range(2 * HAND_SIZE + 1, len(actions)) if actions[i] == OS_DRAW_STOCK]
    return dealt


class OpenSpielSimpleAgent(Agent):
    """OpenSpiel's ``simple_gin_rummy_bot`` on a pyspiel state rebuilt from this seat's observations.

    See the module docstring for the reconstruction and the rule differences. After each decision,
    :attr:`last_state` is the pyspiel state the bot decided on and :attr:`last_source` says how it was
    built (``"replay"``, ``"minimal"`` or ``"forced"`` for a decision with one legal action);
    :attr:`fallbacks` counts the bot's choices that were illegal here and replaced.
    """

    name = "openspiel_simple"

    def __init__(self, seed: int | None = None, replay: bool = True) -> None:
        """``replay=False`` always decides on the one-decision state (for tests and speed)."""
        super().__init__(seed)
        import pyspiel

        self._pyspiel = pyspiel
        self.replay = replay
        self._games: dict[int, Any] = {}
        self._bots: dict[tuple[int, int], Any] = {}
        self.history: PublicHistory | None = None
        self._fill: dict[int, int] = {}
        self._cache: tuple[list[int], Any] | None = None
        #: The pyspiel state of the latest decision, and how it was built.
        self.last_state: Any = None
        self.last_source = ""
        #: Bot choices that were illegal in ginenv and replaced by the closest legal action.
        self.fallbacks = 0

    def reset(self, seed: int | None = None) -> None:
        """Start of a hand: forget the record (the bot itself is restarted at every decision)."""
        super().reset(seed)
        self.history = None
        self._fill = {}
        self._cache = None

    # -- pyspiel objects

    def _game(self, knock_limit: int) -> Any:
        game = self._games.get(knock_limit)
        if game is None:
            if not 0 <= knock_limit <= 10:
                raise ValueError(
                    f"OpenSpiel's gin_rummy has knock cards 0..10, this hand's limit is {knock_limit}"
                )
            game = self._pyspiel.load_game("gin_rummy", {"knock_card": knock_limit})
            self._games[knock_limit] = game
        return game

    def _bot(self, knock_limit: int, player: int) -> Any:
        bot = self._bots.get((knock_limit, player))
        if bot is None:
            params = self._game(knock_limit).get_parameters()
            bot = self._pyspiel.make_simple_gin_rummy_bot(params, player)
            self._bots[(knock_limit, player)] = bot
        return bot

    # -- states

    def replay_state(self, history: PublicHistory, view: SeatView) -> Any:
        """The pyspiel state of the whole hand so far, rebuilt from ``history`` (see the module doc)."""
        actions, self._fill = openspiel_actions(history, view.unseen, self._fill)
        dealt = _openspiel_cards_dealt(actions)
        if len(set(dealt)) != len(dealt):
            raise ReconstructionError("a card would be dealt twice")
        cache = self._cache
        if cache is not None and actions[: len(cache[0])] == cache[0]:
            state = cache[1].clone()
            rest = actions[len(cache[0]) :]
        else:
            state = self._game(view.knock_limit).new_initial_state()
            rest = actions
        for a in rest:
            if state.is_terminal():
                raise ReconstructionError("OpenSpiel ended the hand during the replay")
            state.apply_action(a)
        self._cache = (actions, state)
        self._check_state(state, history.role, view)
        return state

    def minimal_state(self, view: SeatView, mask: np.ndarray) -> Any:
        """A pyspiel state that shows the bot only this decision: its hand and the top card.

        Draw decisions: the seat holds its 10 cards and the top card is offered as OpenSpiel's first
        upcard (the dealer's seat after the non-dealer passed). Discard decisions: the seat was dealt
        10 of its 11 cards (all but the card it may not discard, else its highest card) and took the
        11th as the upcard. The opponent gets the lowest other cards.
        """
        role = 1 if view.is_dealer else 0
        hand = view.hand
        discarding = view.phase is Phase.DISCARD
        if discarding:
            banned = [c for c in cards_of(hand) if not mask[DISCARD_BASE + c]]
            upcard = banned[0] if banned else hand.bit_length() - 1
            hand &= ~(1 << upcard)
        else:
            if view.top is None:
                raise ReconstructionError("a draw decision without a top card")
            upcard = view.top
        rest = [c for c in range(NUM_CARDS) if not (hand | 1 << upcard) >> c & 1][:HAND_SIZE]
        mine = cards_of(hand)
        deal = (mine + rest if role == 0 else rest + mine) + [upcard]
        state = self._game(view.knock_limit).new_initial_state()
        for a in deal:
            state.apply_action(a)
        if role == 1:
            state.apply_action(OS_PASS)
        if discarding:
            state.apply_action(OS_DRAW_UPCARD)
        return state

    @staticmethod
    def _check_state(state: Any, role: int, view: SeatView) -> None:
        problems = []
        if state.current_player() != role:
            problems.append(f"player to move {state.current_player()} != {role}")
        if sum(1 << c for c in state.hands()[role]) != view.hand:
            problems.append("hand differs")
        upcard = state.upcard()
        pile = list(state.discard_pile()) + ([upcard] if upcard is not None and upcard >= 0 else [])
        if (pile[-1] if pile else None) != view.top or sum(1 << c for c in pile) != view.discard_pile:
            problems.append("discard pile differs")
        if state.stock_size() != view.stock_size:
            problems.append(f"stock size {state.stock_size()} != {view.stock_size}")
        if problems:
            raise ReconstructionError("replayed pyspiel state: " + "; ".join(problems))

    # -- deciding

    def act(self, observation: Observation) -> int:
        """The simple bot's action for this observation (see the module docstring)."""
        view = decode(observation["observation"])
        mask = observation["action_mask"]
        self.history = history = track(self.history, view)
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            # Forced (the stock draw after both passed): the bot's only legal action.
            action = int(legal[0])
            self.last_source = "forced"
        else:
            state = None
            if self.replay:
                try:
                    state = self.replay_state(history, view)
                    self.last_source = "replay"
                except (self._pyspiel.SpielError, ReconstructionError):
                    # Only OpenSpiel's cap on discard-pile draws may stop a replay; anything else is a bug.
                    if not self._replay_capped(history):
                        raise
            if state is None:
                state = self.minimal_state(view, mask)
                self.last_source = "minimal"
            self.last_state = state
            action = self._decide(state, view, mask)
        history.record(action, view)
        return action

    @staticmethod
    def _replay_capped(history: PublicHistory) -> bool:
        # OpenSpiel ends a hand at its 50th draw of a discard (first upcard offer not counted).
        takes = sum(1 for _, kind, _ in history.events if kind == Move.TAKE)
        return takes >= OS_MAX_DRAW_UPCARD

    def _decide(self, state: Any, view: SeatView, mask: np.ndarray) -> int:
        bot = self._bot(view.knock_limit, state.current_player())
        bot.restart()
        choice = int(bot.step(state))
        knock = choice == OS_KNOCK
        if knock:
            after = state.clone()
            after.apply_action(OS_KNOCK)
            card = int(bot.step(after))
            bot.restart()
            action = KNOCK_BASE + card
        elif choice < NUM_CARDS:
            action = DISCARD_BASE + choice
        elif choice == OS_DRAW_UPCARD:
            action = DRAW_DISCARD
        elif choice == OS_DRAW_STOCK:
            action = DRAW_STOCK
        elif choice == OS_PASS:
            # Declining OpenSpiel's upcard offer: a pass here, or a stock draw when our phase is a draw.
            action = PASS if mask[PASS] else DRAW_STOCK
        else:
            raise ReconstructionError(f"unexpected OpenSpiel action {choice}")
        if 0 <= action < NUM_ACTIONS and mask[action]:
            return action
        self.fallbacks += 1
        return _closest_discard(view.hand, mask, knock)


def _closest_discard(hand: int, mask: np.ndarray, knock: bool) -> int:
    """The legal discard (a knock if ``knock`` and one is legal) leaving the least deadwood, highest
    card on ties: the simple bot's rule with the card it may not throw left out."""
    knocks = [c for c in cards_of(hand) if mask[KNOCK_BASE + c]]
    if knock and knocks:
        base, cards = KNOCK_BASE, knocks
    else:
        base, cards = DISCARD_BASE, [c for c in cards_of(hand) if mask[DISCARD_BASE + c]]
    if not cards:
        legal = np.flatnonzero(mask)
        raise ReconstructionError(f"no legal discard; legal: {[action_name(int(a)) for a in legal]}")
    return base + min(cards, key=lambda c: (deadwood_of_mask(hand & ~(1 << c)), -(c % 13), -c))
