"""The play table in words: hands as the page lays them out, moves, showdowns and match results.

:class:`ginenv.experiments.play.table.Table` decides what a seat may know; this module only puts
it into words for one viewer. ``words[seat]`` is how a viewer names each seat: ``"You"`` for their
own seat, the opponent's name (a person's chosen name, a computer's label) for the other; a
spectator names both. Everything here reads only what it is given, never the hidden cards.
"""

from __future__ import annotations

import re
import reprlib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ginenv.agents import specs

from ginenv import gin_rummy_v0
from ginenv.actions import ACTION_NAMES, BIG_GIN, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS, action_card
from ginenv.aec import RESULT_KINDS
from ginenv.cards import CARD_NAMES, cards_of
from ginenv.engine import HandState, Phase
from ginenv.melds import Arrangement, best_arrangement

#: Labels the page shows for the registered levels (seed 002 calls normal "Moyen", Medium).
LABELS = {
    "random": "Random",
    "greedy": "Greedy",
    "easy": "Easy",
    "normal": "Normal (Medium)",
    "hard": "Hard",
    "expert": "Expert",
    "master": "Master",
    "neural": "Neural network",
    "openspiel_simple": "OpenSpiel simple bot",
    "rlcard_novice": "RLCard novice",
}
#: The longest excerpt of a value an error message quotes.
EXCERPT = 60
_WORDS_OF_KIND = {
    "knock": "knock",
    "undercut": "undercut",
    "gin": "gin",
    "big_gin": "big gin",
    "dead": "dead hand",
    "truncated": "turn limit",
}
#: How the pages name each way a hand ends, keyed by the hand record's own list of them
#: (:data:`ginenv.aec.RESULT_KINDS`: a kind added there and not worded here fails at import). The
#: server sends these words (a showdown's ``kind_words``, a replay's ``kind_words`` table); the pages
#: keep no list of their own and only capitalise them.
KIND_WORDS = {kind: _WORDS_OF_KIND[kind] for kind in RESULT_KINDS}
_AGENTS = gin_rummy_v0.AGENTS
_SHORT = reprlib.Repr()
_SHORT.maxlevel = 2
_SHORT.maxstring = EXCERPT
_SHORT.maxother = EXCERPT
_SHORT.maxlist = 6
_SHORT.maxdict = 6


def excerpt(value: object, limit: int = EXCERPT) -> str:
    """``repr(value)`` cut to about ``limit`` characters (then "…"): what an error may quote of a
    value a request sent, however large it was."""
    text = repr(value[: limit + 1]) if isinstance(value, str) else _SHORT.repr(value)
    return text if len(text) <= limit + 2 else text[:limit] + "…"


def name_slug(name: str, fallback: str) -> str:
    """A person's name as a piece of a file name (ASCII letters, digits, dashes)."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")[:24] or fallback


def clip(text: str, limit: int = EXCERPT) -> str:
    """``text`` cut to ``limit`` characters (then "…"), unquoted: a message that may quote a request."""
    return text if len(text) <= limit else text[:limit] + "…"


def opponent_label(name: str) -> str:
    """How the page names a computer player: a level by its label, ``checkpoint:PATH`` by its file
    name, a module or file spec by its class, ``exec:COMMAND`` by its program."""
    if name in LABELS:
        return LABELS[name]
    try:
        spec = specs.resolve(name)
    except specs.AgentSpecError:
        return name
    if spec.kind == "checkpoint":
        return f"Network {Path(spec.target).name}"
    if spec.kind in ("module", "file"):
        return str(spec.attr)
    if spec.kind == "exec":
        return f"Program {Path(spec.target.split()[0]).name}"
    return name


def card_names(cards: Sequence[int] | int) -> list[str]:
    """Card names of a list of cards or of a card mask."""
    return [CARD_NAMES[c] for c in (cards_of(cards) if isinstance(cards, int) else cards)]


@lru_cache(maxsize=4096)
def arrangement(mask: int) -> Arrangement:
    """The best meld arrangement of a hand (cached: the page asks for the same hands often)."""
    return best_arrangement(mask)


def hand_display(mask: int) -> dict[str, Any]:
    """A hand as the page shows it: melds first (each in order), then the deadwood cards by suit and
    rank; the melds, the deadwood cards and their count."""
    if not mask:
        return {"cards": [], "melds": [], "deadwood_cards": [], "deadwood": 0}
    arr = arrangement(mask)
    melds = sorted(arr.melds, key=lambda m: cards_of(m)[0] % 13 * 4 + cards_of(m)[0] // 13)
    meld_names = [card_names(m) for m in melds]
    loose = card_names(arr.deadwood_cards)
    return {
        "cards": [c for m in meld_names for c in m] + loose,
        "melds": meld_names,
        "deadwood_cards": loose,
        "deadwood": arr.deadwood,
    }


def phase_name(phase: Phase) -> str:
    """The page's name of an engine phase: upcard, draw, discard or over."""
    if phase.offers_upcard:
        return "upcard"
    return {Phase.DRAW: "draw", Phase.DISCARD: "discard"}.get(phase, "over")


def points(n: int) -> str:
    """``"1 point"``, ``"12 points"``."""
    return f"{n} point" if n == 1 else f"{n} points"


def move_text(who: str, action: int, card: int | None, offered: bool) -> str:
    """One move in words: ``who`` is "You" or a name; ``card`` the card the viewer may know (a stock
    draw names it only to its drawer); ``offered``: a take or pass of the first upcard."""
    name = None if card is None else CARD_NAMES[card]
    if action == DRAW_STOCK:
        return f"{who} drew {name + ' ' if name else ''}from the stock."
    if action == PASS:
        return f"{who} passed on the upcard {name}."
    if action == DRAW_DISCARD:
        return f"{who} took {name} from {'the upcard' if offered else 'the discard pile'}."
    if action == BIG_GIN:
        return f"{who} laid down big gin."
    if action >= KNOCK_BASE:
        return f"{who} knocked, discarding {name}."
    return f"{who} discarded {name}."


def turn_prompt(phase: str, my_turn: bool, legal: list[str], pile: list[str], other: str) -> str:
    """What a person at the table is asked to do now (``other``: the opponent's name)."""
    if not my_turn:
        return f"{other} is thinking…" if phase != "upcard" else f"{other} is deciding on the upcard…"
    if phase == "upcard":
        return f"The upcard {pile[-1]} is offered to you: take it (D) or pass (P)."
    if phase == "draw":
        if "draw_discard" not in legal:
            return "Both passed on the upcard: draw from the stock (T)."
        return f"Your turn: draw from the stock (T) or take {pile[-1]} from the discard pile (D)."
    text = "Discard a card: tap it twice, or drag it onto the discard pile."
    if any(a.startswith("knock") for a in legal):
        text += " You can knock: select a card and press Knock."
    if "big_gin" in legal:
        text += " You have big gin!"
    return text


def why_illegal(state: HandState, action: int, seat: int) -> str:
    """Why ``seat`` may not make this (illegal) move now, and what is allowed."""
    phase = state.phase
    card = action_card(action)
    if phase.offers_upcard:
        return "the upcard is offered to you: take it (D) or pass (P)"
    if phase == Phase.DRAW:
        if action == DRAW_DISCARD:
            return "both players passed on the upcard, so the first draw is from the stock (T)"
        return "draw first: from the stock (T) or the discard pile (D)"
    # Discard phase.
    if action in (DRAW_STOCK, DRAW_DISCARD, PASS):
        return "you have already drawn: discard a card (tap it twice or drag it onto the discard pile)"
    if action == BIG_GIN:
        return "big gin needs all 11 cards melded" + (
            "" if state.rules.big_gin else ", and these rules have no big gin"
        )
    assert card is not None
    name = CARD_NAMES[card]
    hand = state.hands[seat]
    if not hand >> card & 1:
        return f"{name} is not in your hand"
    if card == state.banned:
        return f"you cannot discard {name}: you just took it from the discard pile; discard another card"
    if action >= KNOCK_BASE:
        left = arrangement(hand & ~(1 << card)).deadwood
        return (
            f"you cannot knock discarding {name}: your deadwood would be {left}, above the knock "
            f"limit {state.knock_limit}"
        )
    return f"{ACTION_NAMES[action]} is not allowed now"


@dataclass
class Event:
    """One move of the hand: ``action`` is an action id, or ``"forfeit"`` / ``"left"``; ``card`` the
    card every seat saw (discarded, taken, passed on); ``secret`` a card drawn from the stock, which
    only its drawer knows."""

    n: int
    seat: int
    action: int | str
    card: int | None = None
    secret: int | None = None
    offered: bool = False
    reason: str = ""


def event_view(e: Event, viewer: int | None, rel: tuple[str, str], words: Sequence[str]) -> dict[str, Any]:
    """A move as ``viewer`` may know it (``rel``: "you"/"opponent" per seat)."""
    if isinstance(e.action, str):
        if e.action == "left":
            text = f"{words[e.seat]} left the match."
        else:
            text = f"{words[e.seat]} forfeits the match: {e.reason}."
        return {"n": e.n, "who": rel[e.seat], "action": e.action, "card": None, "text": text}
    card = e.secret if e.action == DRAW_STOCK and viewer == e.seat else e.card
    return {
        "n": e.n,
        "who": rel[e.seat],
        "action": ACTION_NAMES[e.action],
        "card": None if card is None else CARD_NAMES[card],
        "text": move_text(words[e.seat], e.action, card, e.offered),
    }


def _seat(agent: str | None) -> int | None:
    return None if agent is None else _AGENTS.index(agent)


def showdown_view(
    info: dict[str, Any], own_hand: int | None, perspective: int, viewer: int | None, words: Sequence[str]
) -> dict[str, Any]:
    """The end of a hand as ``viewer`` sees it (``None``: a spectator, who sees ``perspective``'s
    side as "you"); ``info`` is the env's public result as that seat got it, ``own_hand`` the
    viewer's final cards (shown to them after a dead hand, where nobody's cards are public)."""
    kind = info["kind"]
    winner, knocker = _seat(info["winner"]), _seat(info["knocker"])
    rel = ("you", "opponent") if perspective == 0 else ("opponent", "you")
    sides: dict[str, Any] = {"you": None, "opponent": None}
    if info["showdown"] is not None:
        for seat, side in enumerate(info["showdown"]):
            sides[rel[seat]] = {
                "melds": side["melds"],
                "deadwood_cards": side["deadwood_cards"],
                "layoffs": list(info["layoffs"]) if seat != knocker else [],
                "deadwood": info["deadwood"][seat],
            }
    elif own_hand is not None:
        own = hand_display(own_hand)
        sides["you"] = {
            "melds": own["melds"],
            "deadwood_cards": own["deadwood_cards"],
            "layoffs": [],
            "deadwood": info["deadwood"][perspective],
        }
    if kind == "dead":
        title = "Dead hand: the stock is down to two cards and nobody knocked. No points."
    elif kind == "truncated":
        title = "The hand reached the turn limit and ends the match with no result."
    else:
        assert knocker is not None and winner is not None
        you = knocker == viewer
        deadwood = info["deadwood"][knocker]
        verb = {
            "gin": "go gin" if you else "goes gin",
            "big_gin": "lay down big gin" if you else "lays down big gin",
        }.get(kind, f"{'knock' if you else 'knocks'} with {deadwood} deadwood")
        scores = "score" if winner == viewer else "scores"
        undercut = " undercut!" if kind == "undercut" else ""
        title = f"{words[knocker]} {verb}:{undercut} {words[winner]} {scores} {points(info['points'])}."
    return {
        "kind": kind,
        "kind_words": KIND_WORDS[kind],
        "title": title,
        "winner": None if winner is None else rel[winner],
        "knocker": None if knocker is None else rel[knocker],
        "points": info["points"],
        "you": sides["you"],
        "opponent": sides["opponent"],
    }


def match_line(result: dict[str, Any] | None, viewer: int | None, words: Sequence[str]) -> str:
    """The end of a match in one line, for ``viewer`` (``result``: the table's, per seat)."""
    if result is None:
        return ""
    if result.get("left") is not None:
        return f"{words[result['left']]} left the match."
    if result.get("forfeit"):
        return f"{words[1 - result['winner']]} forfeits the match: {result['forfeit']}."
    if result["truncated"]:
        return "The match ends without a winner."
    winner = result["winner"]
    totals = result["totals"]
    verb = "win" if winner == viewer else "wins"
    return f"{words[winner]} {verb} the match, {totals[winner]} to {totals[1 - winner]}."
