"""The one implementation of a hand's rules: a compiled state record and its step.

A hand lives in one row of an int64 array, its *record* (:data:`RECORD_SIZE` entries; a batch of
hands is a 2-D array, one row per slot): both hands as card bitmasks, the deck in dealing order, the
discard pile as a stack plus its bitmask, the next stock position, the public card record of each
seat (taken from the pile and still held, discarded, passed over: what
:class:`ginenv.observation.Knowledge` names), the phase, the player to move, the dealer, the card
just taken from the pile, the draws made, the knock limit, whether both players passed the upcard,
and once the hand ends its result. The rule options travel beside it as one small int array
(:func:`rules_array`).

Everything that plays a hand goes through the functions here: :class:`ginenv.engine.HandState` (one
slot, and so the AEC env, :class:`ginenv.match.Match` and replays), the batched engine
(:mod:`ginenv.vector`) and master's rollouts (:mod:`ginenv.agents.levels.master`). :func:`deal` deals
a row (:func:`set_position` writes a made-up position in mid-hand), :func:`legal_into` /
:func:`discard_options` say what is legal, :func:`apply` applies a legal action (:func:`try_apply`
checks it first), :func:`encode` writes what one seat observes (the layout of :mod:`ginenv.layout`)
and :func:`write_view` the view and the mask of the seat to move (:func:`step_view`: an action and
then that view, in one call).

The columns of the record are this module's: every other module, of the core and of the layers
above it, reads a record through its functions (:func:`phase_of`, :func:`mover`, :func:`hand_of`,
:func:`top_card`, :func:`may_take_top`, :func:`stock_cards`, :func:`knock_limit_of`,
:func:`result_of`, ...), writes one through :func:`deal`, :func:`set_position` (then
:func:`set_table`, :func:`set_public_cards`, :func:`set_just_taken` for a position's public past),
:func:`set_hand` and :func:`apply`, and reads a rule array through :func:`bonuses` and
:func:`discard_taken` (``tools/archcheck.py``, rule ``record-columns``, holds every module to it).

Deal order (``docs/RULES.md``): cards 0-9 to the non-dealer, 10-19 to the dealer, card 20 is the
upcard, 21 onwards is the stock, 21 drawn first.
"""

from __future__ import annotations

import enum
import functools

import numpy as np
from numba import njit

from ginenv.actions import BIG_GIN, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, NUM_ACTIONS, PASS
from ginenv.kernels.meld_search import (
    CARD_VALUE,
    FULL_DECK,
    KNOCK_KINDS,
    KnockKind,
    knock_discards,
    knock_outcome,
    lowest_card,
    min_deadwood,
)
from ginenv.kernels.planes import write_plane
from ginenv.layout import (
    IS_DEALER,
    KNOCK_LIMIT,
    NUM_CARDS,
    OBS_SIZE,
    OPPONENT_SCORE,
    OWN_SCORE,
    PHASE_BASE,
    PLANE_BASE,
    STOCK_SIZE,
    TARGET,
    TO_MOVE,
)
from ginenv.rules import Rules

# Columns of the record: scalars first, then the deck and the discard pile (52 entries each).
HAND0, HAND1, PILE_MASK, PILE_LEN, STOCK_POS = 0, 1, 2, 3, 4
TAKEN0, TAKEN1, DISCARDED0, DISCARDED1, PASSED0, PASSED1 = 5, 6, 7, 8, 9, 10
PHASE, PLAYER, DEALER, BANNED, DRAWS, KNOCK_LIMIT_COL, FORCED, JUST_TOOK = 11, 12, 13, 14, 15, 16, 17, 18
#: The result of an ended hand: kind (:data:`RESULT_KINDS` index, -1 while it goes on), the seat that
#: scored (-1: none), its points, each seat's deadwood after a showdown (-1 when no cards are shown).
RESULT, WINNER, POINTS, DEADWOOD0, DEADWOOD1 = 19, 20, 21, 22, 23
DECK = 24
PILE = DECK + NUM_CARDS
RECORD_SIZE = PILE + NUM_CARDS


class Phase(enum.IntEnum):
    """Whose decision it is, and of what kind: the values of the record's ``PHASE`` column, the one
    definition of the phases (the compiled code reads the members as constants; the observation's
    phase one-hot is indexed by them; :class:`ginenv.engine.Phase` is this enum)."""

    UPCARD_NON_DEALER = 0  # non-dealer: take the upcard or pass
    UPCARD_DEALER = 1  # dealer: take the upcard or pass (the non-dealer passed)
    DRAW = 2  # draw from the stock or the discard pile
    DISCARD = 3  # discard (maybe knocking), or big gin
    OVER = 4  # the hand has ended

    @property
    def offers_upcard(self) -> bool:
        """Whether this is one of the upcard offer's two phases (take the upcard or pass)."""
        return self in (Phase.UPCARD_NON_DEALER, Phase.UPCARD_DEALER)


# Entries of the rule-option array (the last one is the knock limit).
GIN_BONUS, UNDERCUT_BONUS, BIG_GIN_BONUS, OKLAHOMA, DEAD_HAND_STOCK, DISCARD_TAKEN, TURN_LIMIT = range(7)
NUM_RULE_ENTRIES = 8

#: Result kinds by code: :class:`ginenv.kernels.meld_search.KnockKind`'s four, then a dead and a
#: truncated hand.
RESULT_KINDS = (*KNOCK_KINDS, "dead", "truncated")
NO_RESULT, DEAD, TRUNCATED = -1, len(KNOCK_KINDS), len(KNOCK_KINDS) + 1

# Planes of the observation vector (ginenv.layout.PLANES, in order).
_PLANE_HAND = PLANE_BASE
_PLANE_TOP = PLANE_BASE + NUM_CARDS
_PLANE_PILE = PLANE_BASE + 2 * NUM_CARDS
_PLANE_OPP_TAKEN = PLANE_BASE + 3 * NUM_CARDS
_PLANE_OPP_DISCARDED = PLANE_BASE + 4 * NUM_CARDS
_PLANE_OPP_PASSED = PLANE_BASE + 5 * NUM_CARDS
_PLANE_OWN_TAKEN = PLANE_BASE + 6 * NUM_CARDS
_PLANE_OWN_DISCARDED = PLANE_BASE + 7 * NUM_CARDS
_PLANE_OWN_PASSED = PLANE_BASE + 8 * NUM_CARDS
_PLANE_UNSEEN = PLANE_BASE + 9 * NUM_CARDS
_PLANE_ORACLE = OBS_SIZE


def rules_array(rules: Rules, turn_limit: int) -> np.ndarray:
    """The rule options as the int64 array the compiled code reads (last entry: the knock limit)."""
    cfg = np.zeros(NUM_RULE_ENTRIES, dtype=np.int64)
    cfg[GIN_BONUS] = rules.gin_bonus
    cfg[UNDERCUT_BONUS] = rules.undercut_bonus
    cfg[BIG_GIN_BONUS] = -1 if rules.big_gin_bonus is None else rules.big_gin_bonus
    cfg[OKLAHOMA] = int(rules.oklahoma)
    cfg[DEAD_HAND_STOCK] = rules.dead_hand_stock
    cfg[DISCARD_TAKEN] = int(rules.discard_taken_card)
    cfg[TURN_LIMIT] = turn_limit
    cfg[-1] = rules.knock_limit
    return cfg


@functools.lru_cache(maxsize=256)
def shared_rules_array(rules: Rules, turn_limit: int) -> np.ndarray:
    """:func:`rules_array`, read-only and made once per (rules, turn limit): every hand of a match,
    every clone of a hand and every replay of a recorder shares it."""
    cfg = rules_array(rules, turn_limit)
    cfg.flags.writeable = False
    return cfg


@njit(cache=True)
def deal(s: np.ndarray, i: int, deck: np.ndarray, dealer: int, cfg: np.ndarray) -> None:
    """Deal row ``i`` of ``s`` from ``deck`` (52 card ids in dealing order) with ``dealer`` dealing."""
    non_dealer = 1 - dealer
    first = 0
    second = 0
    for k in range(10):
        first |= np.int64(1) << deck[k]
        second |= np.int64(1) << deck[10 + k]
    for k in range(NUM_CARDS):
        s[i, DECK + k] = deck[k]
    upcard = deck[20]
    s[i, HAND0 + non_dealer] = first
    s[i, HAND0 + dealer] = second
    s[i, PILE] = upcard
    s[i, PILE_LEN] = 1
    s[i, PILE_MASK] = np.int64(1) << upcard
    s[i, STOCK_POS] = 21
    for c in range(TAKEN0, PASSED1 + 1):
        s[i, c] = 0
    s[i, PHASE] = Phase.UPCARD_NON_DEALER
    s[i, PLAYER] = non_dealer
    s[i, DEALER] = dealer
    s[i, BANNED] = -1
    s[i, DRAWS] = 0
    s[i, FORCED] = 0
    s[i, JUST_TOOK] = -1
    s[i, RESULT] = NO_RESULT
    s[i, WINNER] = -1
    s[i, POINTS] = 0
    s[i, DEADWOOD0] = -1
    s[i, DEADWOOD1] = -1
    if cfg[OKLAHOMA]:
        # Oklahoma: the upcard's value is the knock limit; an ace means gin only.
        s[i, KNOCK_LIMIT_COL] = 0 if upcard % 13 == 0 else CARD_VALUE[upcard]
    else:
        s[i, KNOCK_LIMIT_COL] = cfg[-1]


@njit(cache=True)
def deal_random(s: np.ndarray, i: int, cfg: np.ndarray, rng: np.random.Generator) -> None:
    """Deal row ``i`` from ``rng``: a shuffled deck, then a random dealer."""
    deal(s, i, rng.permutation(52), int(rng.integers(0, 2)), cfg)


@njit(cache=True)
def set_position(
    s: np.ndarray,
    i: int,
    hand0: int,
    hand1: int,
    stock: np.ndarray,
    top: int,
    phase: int,
    player: int,
    knock_limit: int,
) -> None:
    """Write a position in mid-hand into row ``i``, for a search that plays a hand on from a world
    it made up (master's rollouts): seat 0 holds ``hand0`` and seat 1 ``hand1``; ``stock`` (card ids
    in drawing order) is the stock, at the end of the deck; ``top`` (-1: none) is the whole discard
    pile; ``player`` is to move in ``phase`` (a draw or a discard phase: a draw from an empty pile
    must be from the stock); ``knock_limit`` is the hand's. Nothing else of a hand's past is written:
    no public card record, no draws counted, dealer 0, and no card just taken (a discard phase is
    one after a stock draw: any card may be thrown)."""
    s[i, :] = 0
    s[i, HAND0] = hand0
    s[i, HAND1] = hand1
    n = stock.size
    s[i, STOCK_POS] = NUM_CARDS - n
    for k in range(n):
        s[i, DECK + NUM_CARDS - n + k] = stock[k]
    if top >= 0:
        s[i, PILE] = top
        s[i, PILE_LEN] = 1
        s[i, PILE_MASK] = np.int64(1) << top
    s[i, PHASE] = phase
    s[i, PLAYER] = player
    s[i, BANNED] = -1
    s[i, JUST_TOOK] = -1
    s[i, KNOCK_LIMIT_COL] = knock_limit
    s[i, FORCED] = 1 if phase == Phase.DRAW and top < 0 else 0
    s[i, RESULT] = NO_RESULT
    s[i, WINNER] = -1
    s[i, DEADWOOD0] = -1
    s[i, DEADWOOD1] = -1


@njit(cache=True)
def top_card(s: np.ndarray, i: int) -> int:
    """The top of row ``i``'s discard pile, or -1 when it is empty."""
    n = s[i, PILE_LEN]
    return s[i, PILE + n - 1] if n > 0 else -1


@njit(cache=True)
def unseen(s: np.ndarray, i: int, seat: int) -> int:
    """The cards ``seat`` of row ``i`` has not seen: neither in its hand, nor in the pile, nor taken
    from the pile by the opponent (and still held). The observation's unseen plane."""
    return FULL_DECK ^ (s[i, HAND0 + seat] | s[i, PILE_MASK] | s[i, TAKEN0 + 1 - seat])


@njit(cache=True)
def discard_options(s: np.ndarray, i: int, cfg: np.ndarray) -> tuple[int, int, bool]:
    """The discard phase's legal moves in row ``i``: (cards that may be discarded, those whose discard
    may knock, whether big gin is legal)."""
    hand = s[i, HAND0 + s[i, PLAYER]]
    allowed = hand
    if s[i, BANNED] >= 0:
        allowed &= ~(np.int64(1) << s[i, BANNED])
    knocks = knock_discards(hand, s[i, KNOCK_LIMIT_COL]) & allowed
    return allowed, knocks, cfg[BIG_GIN_BONUS] >= 0 and min_deadwood(hand) == 0


@njit(cache=True)
def may_take_top(s: np.ndarray, i: int) -> bool:
    """Whether the seat to move in row ``i`` may take the top discard now: always in the upcard offer,
    in a draw unless it must be from the stock (the non-dealer's first draw after both passed the
    upcard, or a made-up position with no discard pile), never in a discard or after the hand.

    The one statement of the rule: the legal actions hold ``DRAW_DISCARD`` exactly when it is true,
    and every compiled policy asks it before weighing a take."""
    phase = s[i, PHASE]
    if phase == Phase.DRAW:
        return not s[i, FORCED]
    return phase <= Phase.UPCARD_DEALER


@njit(cache=True)
def legal_parts(s: np.ndarray, i: int, cfg: np.ndarray) -> tuple[int, int, int]:
    """Row ``i``'s legal actions as three bitmasks: the low actions (ids 0-3: draws, pass, big gin),
    the cards that may be discarded and those whose discard may knock."""
    phase = s[i, PHASE]
    if phase == Phase.DISCARD:
        allowed, knocks, big = discard_options(s, i, cfg)
        return (1 << BIG_GIN) if big else 0, allowed, knocks
    if phase == Phase.OVER:
        return 0, 0, 0
    low = (1 << DRAW_STOCK) if phase == Phase.DRAW else (1 << PASS)
    if may_take_top(s, i):
        low |= 1 << DRAW_DISCARD
    return low, 0, 0


@njit(cache=True)
def is_legal(s: np.ndarray, i: int, action: int, cfg: np.ndarray) -> bool:
    """Whether ``action`` may be applied to row ``i`` now (any id; outside 0..107 never is)."""
    if action < 0 or action >= NUM_ACTIONS:
        return False
    low, allowed, knocks = legal_parts(s, i, cfg)
    if action < DISCARD_BASE:
        return bool((low >> action) & 1)
    if action < KNOCK_BASE:
        return bool((allowed >> (action - DISCARD_BASE)) & 1)
    return bool((knocks >> (action - KNOCK_BASE)) & 1)


@njit(cache=True)
def legal_into(s: np.ndarray, i: int, out: np.ndarray, cfg: np.ndarray) -> None:
    """Row ``i``'s legal-action mask, written into ``out`` (108 int8): :func:`legal_parts` as a mask.

    Written out per phase rather than through :func:`legal_parts`' bitmasks, which made this call
    half as slow again (28 -> 43 ns a slot); ``tests/ginenv/test_vector.py`` holds the two equal."""
    out[:] = 0
    phase = s[i, PHASE]
    if phase == Phase.DISCARD:
        allowed, knocks, big = discard_options(s, i, cfg)
        rest = allowed
        while rest:
            bit = rest & -rest
            c = lowest_card(bit)
            out[DISCARD_BASE + c] = 1
            if knocks & bit:
                out[KNOCK_BASE + c] = 1
            rest ^= bit
        if big:
            out[BIG_GIN] = 1
    elif phase != Phase.OVER:
        out[DRAW_STOCK if phase == Phase.DRAW else PASS] = 1
        if may_take_top(s, i):
            out[DRAW_DISCARD] = 1


@njit(cache=True)
def encode(
    s: np.ndarray,
    i: int,
    seat: int,
    out: np.ndarray,
    own_score: int,
    opponent_score: int,
    target: int,
    oracle: bool,
) -> None:
    """What ``seat`` observes of row ``i`` (:mod:`ginenv.layout`), written into ``out``.

    It reads the seat's own hand, the discard pile, the public record, the stock size, the phase,
    whose turn, the dealer and the knock limit; the opponent's hand only with ``oracle`` (an extra
    plane). The scores and target are the match's (0 in hand mode). Every entry of ``out`` is
    written."""
    other = 1 - seat
    out[STOCK_SIZE] = NUM_CARDS - s[i, STOCK_POS]
    out[KNOCK_LIMIT] = s[i, KNOCK_LIMIT_COL]
    out[OWN_SCORE] = own_score
    out[OPPONENT_SCORE] = opponent_score
    out[TARGET] = target
    for k in range(PHASE_BASE, PLANE_BASE):
        out[k] = 0
    out[PHASE_BASE + s[i, PHASE]] = 1
    if s[i, PLAYER] == seat:
        out[TO_MOVE] = 1
    if s[i, DEALER] == seat:
        out[IS_DEALER] = 1
    hand = s[i, HAND0 + seat]
    in_pile = s[i, PILE_MASK]
    top = 0
    if s[i, PILE_LEN] > 0:
        top = np.int64(1) << s[i, PILE + s[i, PILE_LEN] - 1]
    write_plane(out, _PLANE_HAND, hand)
    write_plane(out, _PLANE_TOP, top)
    write_plane(out, _PLANE_PILE, in_pile ^ top)
    write_plane(out, _PLANE_OPP_TAKEN, s[i, TAKEN0 + other])
    write_plane(out, _PLANE_OPP_DISCARDED, s[i, DISCARDED0 + other])
    write_plane(out, _PLANE_OPP_PASSED, s[i, PASSED0 + other])
    write_plane(out, _PLANE_OWN_TAKEN, s[i, TAKEN0 + seat])
    write_plane(out, _PLANE_OWN_DISCARDED, s[i, DISCARDED0 + seat])
    write_plane(out, _PLANE_OWN_PASSED, s[i, PASSED0 + seat])
    write_plane(out, _PLANE_UNSEEN, unseen(s, i, seat))
    if oracle:
        write_plane(out, _PLANE_ORACLE, s[i, HAND0 + other])
    else:
        for k in range(OBS_SIZE, out.shape[0]):
            out[k] = 0


@njit(cache=True)
def _take_top(s: np.ndarray, i: int, player: int, cfg: np.ndarray) -> None:
    n = s[i, PILE_LEN] - 1
    card = s[i, PILE + n]
    bit = np.int64(1) << card
    s[i, PILE_LEN] = n
    s[i, PILE_MASK] &= ~bit
    s[i, HAND0 + player] |= bit
    s[i, TAKEN0 + player] |= bit
    set_just_taken(s, i, card, cfg)
    s[i, DRAWS] += 1
    s[i, PHASE] = Phase.DISCARD


@njit(cache=True)
def _showdown(s: np.ndarray, i: int, knocker: int, cfg: np.ndarray) -> None:
    defender = 1 - knocker
    kind, points, kdw, ddw = knock_outcome(
        s[i, HAND0 + knocker], s[i, HAND0 + defender], cfg[GIN_BONUS], cfg[UNDERCUT_BONUS], cfg[BIG_GIN_BONUS]
    )
    s[i, RESULT] = kind
    if kind == KnockKind.UNDERCUT:
        s[i, WINNER] = defender
        s[i, POINTS] = -points
    else:
        s[i, WINNER] = knocker
        s[i, POINTS] = points
    s[i, DEADWOOD0 + knocker] = kdw
    s[i, DEADWOOD0 + defender] = ddw
    s[i, PHASE] = Phase.OVER


@njit(cache=True)
def apply(s: np.ndarray, i: int, action: int, cfg: np.ndarray) -> bool:
    """Apply a legal ``action`` to row ``i``; True when it ends the hand (the result columns are
    then filled). An illegal action is undefined here: check with :func:`is_legal` first."""
    phase = s[i, PHASE]
    player = s[i, PLAYER]
    top = top_card(s, i)
    if phase <= Phase.UPCARD_DEALER:  # the upcard offer
        if action == DRAW_DISCARD:
            _take_top(s, i, player, cfg)
        else:
            s[i, PASSED0 + player] |= np.int64(1) << top
            if phase == Phase.UPCARD_NON_DEALER:
                s[i, PHASE] = Phase.UPCARD_DEALER
                s[i, PLAYER] = s[i, DEALER]
            else:
                # Both passed: the non-dealer's first draw must be from the stock.
                s[i, PHASE] = Phase.DRAW
                s[i, PLAYER] = 1 - s[i, DEALER]
                s[i, FORCED] = 1
        return False
    if phase == Phase.DRAW:
        s[i, FORCED] = 0
        if action == DRAW_DISCARD:
            _take_top(s, i, player, cfg)
        else:
            if top >= 0:
                s[i, PASSED0 + player] |= np.int64(1) << top
            s[i, HAND0 + player] |= np.int64(1) << s[i, DECK + s[i, STOCK_POS]]
            s[i, STOCK_POS] += 1
            s[i, BANNED] = -1
            s[i, JUST_TOOK] = -1
            s[i, DRAWS] += 1
            s[i, PHASE] = Phase.DISCARD
        return False
    # The discard phase: big gin, a knock, or a plain discard.
    if action != BIG_GIN:
        card = action - KNOCK_BASE if action >= KNOCK_BASE else action - DISCARD_BASE
        bit = np.int64(1) << card
        s[i, HAND0 + player] ^= bit
        s[i, DISCARDED0 + player] |= bit
        s[i, TAKEN0 + player] &= ~bit
        s[i, PILE + s[i, PILE_LEN]] = card
        s[i, PILE_LEN] += 1
        s[i, PILE_MASK] |= bit
    if action == BIG_GIN or action >= KNOCK_BASE:
        _showdown(s, i, player, cfg)
        return True
    s[i, BANNED] = -1
    s[i, JUST_TOOK] = -1
    dead = NUM_CARDS - s[i, STOCK_POS] <= cfg[DEAD_HAND_STOCK]
    if dead or s[i, DRAWS] >= cfg[TURN_LIMIT]:
        # No cards are shown: neither deadwood is public.
        s[i, RESULT] = DEAD if dead else TRUNCATED
        s[i, WINNER] = -1
        s[i, POINTS] = 0
        s[i, PHASE] = Phase.OVER
        return True
    s[i, PLAYER] = 1 - player
    s[i, PHASE] = Phase.DRAW
    return False


#: What :func:`try_apply` returns for an illegal action (the row is unchanged).
ILLEGAL = -1


@njit(cache=True)
def try_apply(s: np.ndarray, i: int, action: int, cfg: np.ndarray) -> int:
    """Apply ``action`` to row ``i`` if it is legal: :data:`ILLEGAL` (nothing changed), else the new
    phase plus 8 times the player to move (the Python face mirrors both without reading the row)."""
    if not is_legal(s, i, action, cfg):
        return ILLEGAL
    apply(s, i, action, cfg)
    return s[i, PHASE] + 8 * s[i, PLAYER]


@njit(cache=True)
def write_view(
    s: np.ndarray, i: int, cfg: np.ndarray, views: np.ndarray, mask: np.ndarray, scores: np.ndarray
) -> None:
    """What the seat to move in row ``i`` observes into ``views[seat]`` and its legal mask into ``mask``.

    ``scores`` holds seat 0's and seat 1's running points and the match target (zeros in hand
    mode); ``views`` has a row per seat, of the oracle size when the opponent's hand is shown. The
    other seat's row is left as it was: the AEC env encodes it (:func:`encode`) only when asked."""
    seat = s[i, PLAYER]
    oracle = views.shape[1] > OBS_SIZE
    if seat == 0:
        encode(s, i, 0, views[0], scores[0], scores[1], scores[2], oracle)
    else:
        encode(s, i, 1, views[1], scores[1], scores[0], scores[2], oracle)
    legal_into(s, i, mask, cfg)


@njit(cache=True)
def step_view(
    s: np.ndarray,
    i: int,
    action: int,
    cfg: np.ndarray,
    views: np.ndarray,
    mask: np.ndarray,
    scores: np.ndarray,
) -> int:
    """:func:`try_apply`, then when the action was legal :func:`write_view`: the AEC env's whole
    step in one call (each call from Python costs more than the work of either)."""
    code = try_apply(s, i, action, cfg)
    if code != ILLEGAL:
        write_view(s, i, cfg, views, mask, scores)
    return code


@njit(cache=True)
def end_rewards(s: np.ndarray, i: int, scale: float, rewards: np.ndarray) -> None:
    """The zero-sum rewards of row ``i``'s ended hand for seats 0 and 1 (0 and 0 without a winner)."""
    winner = s[i, WINNER]
    rewards[0] = 0.0
    rewards[1] = 0.0
    if winner >= 0:
        rewards[winner] = s[i, POINTS] * scale
        rewards[1 - winner] = -s[i, POINTS] * scale


@njit(cache=True)
def note_result(
    state: np.ndarray, i: int, results: np.ndarray, terminated: np.ndarray, truncated: np.ndarray
) -> None:
    """How row ``i``'s hand ended (its result columns, terminated or truncated), before it is
    dealt again."""
    for k, value in enumerate(result_of(state, i)):
        results[i, k] = value
    if state[i, RESULT] == TRUNCATED:
        truncated[i] = True
    else:
        terminated[i] = True


# --------------------------------------------------------------------------- reading a record
# Every other module reads and writes a record only through the functions below and those above
# (top_card, unseen, discard_options, set_position, ...): its columns are this module's layout, named
# nowhere else (tools/archcheck.py, rule record-columns). Each is a column read or two, which numba
# inlines into the compiled caller.


@njit(cache=True)
def phase_of(s: np.ndarray, i: int) -> int:
    """Row ``i``'s phase (a :class:`Phase` value)."""
    return s[i, PHASE]


@njit(cache=True)
def mover(s: np.ndarray, i: int) -> int:
    """The seat to move in row ``i`` (0 or 1)."""
    return s[i, PLAYER]


@njit(cache=True)
def dealer_of(s: np.ndarray, i: int) -> int:
    """The seat that dealt row ``i``'s hand."""
    return s[i, DEALER]


@njit(cache=True)
def hand_of(s: np.ndarray, i: int, seat: int) -> int:
    """The cards ``seat`` holds in row ``i``, as a bitmask."""
    return s[i, HAND0 + seat]


@njit(cache=True)
def set_hand(s: np.ndarray, i: int, seat: int, cards: int) -> None:
    """Give ``seat`` of row ``i`` the hand ``cards`` (a bitmask), for a search that replaces what a
    seat cannot see; the caller keeps the deal whole (the stock holds the cards no hand does)."""
    s[i, HAND0 + seat] = cards


@njit(cache=True)
def public_cards(s: np.ndarray, i: int, seat: int) -> tuple[int, int, int]:
    """``seat``'s public card record in row ``i``, as bitmasks: the cards it took from the pile and
    still holds, those it discarded, those it passed over (the observation's record planes)."""
    return s[i, TAKEN0 + seat], s[i, DISCARDED0 + seat], s[i, PASSED0 + seat]


@njit(cache=True)
def set_public_cards(s: np.ndarray, i: int, seat: int, taken: int, discarded: int, passed: int) -> None:
    """Write ``seat``'s public card record in row ``i`` (bitmasks, as :func:`public_cards` reads them)."""
    s[i, TAKEN0 + seat] = taken
    s[i, DISCARDED0 + seat] = discarded
    s[i, PASSED0 + seat] = passed


@njit(cache=True)
def knock_limit_of(s: np.ndarray, i: int) -> int:
    """The most deadwood a knock may leave in row ``i``'s hand (Oklahoma's, dealt from the upcard)."""
    return s[i, KNOCK_LIMIT_COL]


@njit(cache=True)
def banned_card(s: np.ndarray, i: int) -> int:
    """The card the seat to move may not discard now (the one just taken from the pile), or -1."""
    return s[i, BANNED]


@njit(cache=True)
def just_taken(s: np.ndarray, i: int) -> int:
    """The card the seat to move took from the pile this turn (-1: none; it may still be thrown back
    when the rules allow), the memory a policy's useful-discard guard reads."""
    return s[i, JUST_TOOK]


@njit(cache=True)
def set_just_taken(s: np.ndarray, i: int, card: int, cfg: np.ndarray) -> None:
    """Note ``card`` (-1: none) as taken from the pile this turn by the seat to move in row ``i``; it
    may not be thrown back this turn, unless the rules of ``cfg`` allow it (seed 004)."""
    s[i, BANNED] = -1 if cfg[DISCARD_TAKEN] else card
    s[i, JUST_TOOK] = card


@njit(cache=True)
def draws_of(s: np.ndarray, i: int) -> int:
    """Draws made in row ``i``'s hand (stock, discard pile or upcard)."""
    return s[i, DRAWS]


@njit(cache=True)
def discard_pile(s: np.ndarray, i: int) -> np.ndarray:
    """Row ``i``'s discard pile, card ids bottom first (a view of the record)."""
    return s[i, PILE : PILE + s[i, PILE_LEN]]


@njit(cache=True)
def pile_mask(s: np.ndarray, i: int) -> int:
    """Row ``i``'s discard pile as a card bitmask."""
    return s[i, PILE_MASK]


@njit(cache=True)
def set_table(s: np.ndarray, i: int, pile: np.ndarray, dealer: int, forced: bool) -> None:
    """Write the public table over a position :func:`set_position` wrote into row ``i``: the whole
    discard pile (``pile``, card ids bottom first), the seat that dealt, and whether the seat to move
    must draw from the stock (``forced``: the non-dealer's first draw after both passed the upcard)."""
    mask = 0
    for k in range(pile.size):
        s[i, PILE + k] = pile[k]
        mask |= np.int64(1) << pile[k]
    s[i, PILE_LEN] = pile.size
    s[i, PILE_MASK] = mask
    s[i, DEALER] = dealer
    s[i, FORCED] = 1 if forced else 0


@njit(cache=True)
def count_stock(s: np.ndarray, i: int) -> int:
    """Cards left in row ``i``'s stock."""
    return NUM_CARDS - s[i, STOCK_POS]


@njit(cache=True)
def stock_cards(s: np.ndarray, i: int) -> np.ndarray:
    """Row ``i``'s stock, card ids in drawing order: a view of the record (writing it reorders the
    stock; a search draws a world's stock so)."""
    return s[i, DECK + s[i, STOCK_POS] : DECK + NUM_CARDS]


@njit(cache=True)
def next_stock_card(s: np.ndarray, i: int) -> int:
    """The card a stock draw in row ``i`` takes (the stock must not be empty)."""
    return s[i, DECK + s[i, STOCK_POS]]


@njit(cache=True)
def stock_mask(s: np.ndarray, i: int) -> int:
    """Row ``i``'s stock as a card bitmask."""
    out = 0
    for k in range(s[i, STOCK_POS], NUM_CARDS):
        out |= np.int64(1) << s[i, DECK + k]
    return out


@njit(cache=True)
def deck_order(s: np.ndarray, i: int) -> np.ndarray:
    """The 52 card ids row ``i`` was dealt from, in dealing order (a view of the record)."""
    return s[i, DECK : DECK + NUM_CARDS]


@njit(cache=True)
def points_for(s: np.ndarray, i: int, seat: int) -> int:
    """The points of row ``i``'s ended hand for ``seat``: negative when the other seat scored, 0 for
    a hand without a winner (dead, truncated)."""
    winner = s[i, WINNER]
    if winner < 0:
        return 0
    return s[i, POINTS] if winner == seat else -s[i, POINTS]


@njit(cache=True)
def result_of(s: np.ndarray, i: int) -> tuple[int, int, int, int, int]:
    """Row ``i``'s result: its kind (a :data:`RESULT_KINDS` index, :data:`NO_RESULT` while the hand
    goes on), the seat that scored (-1: none), its points and each seat's deadwood (-1: not shown)."""
    return s[i, RESULT], s[i, WINNER], s[i, POINTS], s[i, DEADWOOD0], s[i, DEADWOOD1]


@njit(cache=True)
def bonuses(cfg: np.ndarray) -> tuple[int, int, int]:
    """The bonuses of a rule array (:func:`rules_array`): gin, undercut and big gin (-1: big gin is
    not played)."""
    return cfg[GIN_BONUS], cfg[UNDERCUT_BONUS], cfg[BIG_GIN_BONUS]


@njit(cache=True)
def discard_taken(cfg: np.ndarray) -> bool:
    """Whether a rule array lets the card just taken from the pile be thrown back at once."""
    return cfg[DISCARD_TAKEN] != 0


@njit(cache=True)
def search_rules(cfg: np.ndarray, turn_limit: int) -> np.ndarray:
    """A copy of the rule array ``cfg`` for hands a search plays out: no big gin (its policy knocks
    the 11th card away instead) and the turn limit ``turn_limit``; the other rules as they are."""
    out = cfg.copy()
    out[BIG_GIN_BONUS] = -1
    out[TURN_LIMIT] = turn_limit
    return out


__all__ = [
    "DEAD",
    "ILLEGAL",
    "NO_RESULT",
    "RECORD_SIZE",
    "RESULT_KINDS",
    "TRUNCATED",
    "Phase",
    "apply",
    "banned_card",
    "bonuses",
    "count_stock",
    "deal",
    "deal_random",
    "dealer_of",
    "deck_order",
    "discard_options",
    "discard_pile",
    "discard_taken",
    "draws_of",
    "encode",
    "end_rewards",
    "hand_of",
    "is_legal",
    "just_taken",
    "knock_limit_of",
    "legal_into",
    "legal_parts",
    "may_take_top",
    "mover",
    "next_stock_card",
    "note_result",
    "phase_of",
    "pile_mask",
    "points_for",
    "public_cards",
    "result_of",
    "rules_array",
    "search_rules",
    "set_hand",
    "set_just_taken",
    "set_position",
    "set_public_cards",
    "set_table",
    "shared_rules_array",
    "step_view",
    "stock_cards",
    "stock_mask",
    "top_card",
    "try_apply",
    "unseen",
    "write_view",
]
