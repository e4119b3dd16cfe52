"""The engine-level subcommands of the ``ginenv`` command: ``demo`` and ``replay``.

``demo`` plays and prints one seeded hand or match between two simple built-in players reading only
their own cards and the top discard; ``replay FILE`` plays a replay back and checks it. The command
itself (with ``ladder`` and ``match``) lives in :mod:`experiments.cli`, above the agents.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from typing import Any

from ginenv.actions import ACTION_NAMES, BIG_GIN, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, KNOCK_BASE, PASS
from ginenv.cards import CARD_VALUES, names
from ginenv.engine import HandState, Phase
from ginenv.match import Match
from ginenv.melds import best_arrangement, deadwood_of_mask
from ginenv.replay import ReplayError, hand_replay, load_replay, match_replay, play_replay, save_replay
from ginenv.rules import PRESETS, preset


def greedy_action(state: HandState) -> int:
    """A simple built-in player reading only its own hand and the top discard.

    Takes the upcard or discard only if it lowers its deadwood, discards the card that leaves the
    least deadwood (the highest one on ties), knocks as soon as it may, big gin when it can.
    """
    legal = state.legal_mask()
    hand = state.hands[state.player]
    if state.phase in (Phase.UPCARD_NON_DEALER, Phase.UPCARD_DEALER, Phase.DRAW):
        top = state.discard_pile[-1]
        if legal >> DRAW_DISCARD & 1:
            with_top = hand | 1 << top
            best_after = min(
                deadwood_of_mask(with_top ^ 1 << c) for c in range(52) if with_top >> c & 1 and c != top
            )
            if best_after < deadwood_of_mask(hand):
                return DRAW_DISCARD
        return PASS if legal >> PASS & 1 else DRAW_STOCK
    if legal >> BIG_GIN & 1:
        return BIG_GIN
    options = [
        (deadwood_of_mask(hand ^ 1 << c), -CARD_VALUES[c], c)
        for c in range(52)
        if legal >> (DISCARD_BASE + c) & 1
    ]
    _, _, card = min(options)
    if legal >> (KNOCK_BASE + card) & 1:
        return KNOCK_BASE + card
    return DISCARD_BASE + card


def _print_hand_play(state: HandState, names_of: Sequence[str]) -> None:
    print(f"dealer: {names_of[state.dealer]}   upcard: {names(state.deck[20:21])}")
    for p in (0, 1):
        print(f"  {names_of[p]:>8} holds {best_arrangement(state.hands[p])}")


def _cmd_demo(args: argparse.Namespace) -> int:
    rules = preset(args.rules)
    rng = random.Random(args.seed)
    players = ("greedy_0", "greedy_1")
    if args.mode == "hand":
        state = HandState(rules, dealer=args.seed % 2, rng=rng)
        print(f"ginenv demo: one hand, seed {args.seed}, rules {args.rules!r}")
        _print_hand_play(state, players)
        while not state.is_over:
            player = state.player
            action = greedy_action(state)
            state.step(action)
            print(f"  {players[player]:>8}: {ACTION_NAMES[action]}")
        _print_result(state, players)
        if args.save:
            save_replay(hand_replay(state), args.save)
            print(f"replay written to {args.save}")
        return 0
    match = Match(rules, dealer=args.seed % 2, rng=rng)
    print(f"ginenv demo: one match to {rules.target}, seed {args.seed}, rules {args.rules!r}")
    while not match.is_over:
        result = match.step(greedy_action(match.hand))
        if result is not None:
            n = len(match.records)
            winner = "nobody" if result.winner is None else players[result.winner]
            print(f"  hand {n:>2}: {result.kind:<8} {winner:>8} +{result.points:<3} scores {match.scores}")
    assert match.result is not None
    r = match.result
    print(
        f"{players[r.winner]} wins the match: points {list(r.points)}, bonuses {list(r.bonuses)}, "
        f"totals {list(r.totals)}{' (shutout)' if r.shutout else ''}"
    )
    if args.save:
        save_replay(match_replay(match), args.save)
        print(f"replay written to {args.save}")
    return 0


def _print_result(state: HandState, players: Sequence[str]) -> None:
    result = state.result
    assert result is not None
    if result.kind == "dead":
        print(f"dead hand: the stock is down to {len(state.stock)} cards, nobody scores")
        return
    assert result.knock is not None and result.knocker is not None
    k = result.knock
    print(f"{players[result.knocker]} ends the hand ({result.kind})")
    print(
        f"  knocker melds: {' '.join('[' + names(m) + ']' for m in k.knocker_melds)}"
        f"  deadwood {names(k.knocker_deadwood_cards) or '-'} = {k.knocker_deadwood}"
    )
    print(
        f"  defender melds: {' '.join('[' + names(m) + ']' for m in k.defender_melds)}"
        f"  layoffs {names(list(k.layoffs)) or '-'}"
        f"  deadwood {names(k.defender_deadwood_cards) or '-'} = {k.defender_deadwood}"
    )
    print(f"{players[result.winner] if result.winner is not None else 'nobody'} scores {result.points}")


def _cmd_replay(args: argparse.Namespace) -> int:
    try:
        game = play_replay(load_replay(args.file))
    except ReplayError as err:
        print(f"ginenv replay: {err}", file=sys.stderr)
        return 2
    if isinstance(game, Match):
        print(f"replayed a match of {len(game.records)} hands: scores {game.scores}")
        if game.result:
            print(f"player {game.result.winner} wins: totals {list(game.result.totals)}")
    else:
        print(f"replayed one hand of {len(game.history)} actions")
        if game.result:
            print(f"result: {game.result.to_dict()}")
    print("every recorded result matches")
    return 0


def add_subcommands(sub: Any) -> None:
    """Add ``demo`` and ``replay`` to the ``ginenv`` command's subparsers."""
    demo = sub.add_parser("demo", help="play and print one seeded hand (or match) between greedy players")
    demo.add_argument("--seed", type=int, default=0, help="deal seed (default 0)")
    demo.add_argument("--mode", choices=("hand", "match"), default="hand")
    demo.add_argument("--rules", default="standard", help=f"rules preset: {', '.join(PRESETS)}")
    demo.add_argument("--save", metavar="FILE", help="write the replay as JSON")
    demo.set_defaults(func=_cmd_demo)
    rep = sub.add_parser("replay", help="play a replay file back and check its results")
    rep.add_argument("file")
    rep.set_defaults(func=_cmd_replay)
