"""The ``ginenv`` commands about single games: ``demo`` (one printed hand or match) and ``replay``
(a replay file played back and its results checked)."""

from __future__ import annotations

import argparse
from typing import Any

from ginenv.experiments.cli.inputs import (
    RULES_HELP,
    add_seed,
    add_turn_limit,
    check_save_path,
    parse_rules,
)
from ginenv.experiments.eval.harness import DEFAULT_TIME_LIMIT, single_thread_torch

from ginenv.engine import DEFAULT_TURN_LIMIT


def cmd_demo(args: argparse.Namespace) -> int:
    """``ginenv demo``: play and print one seeded hand (or match) between two agents."""
    single_thread_torch()  # games are played one at a time; torch's threads only spin
    from ginenv.agents.arena import Game
    from ginenv.experiments.eval.harness import fresh_agents
    from ginenv.experiments.eval.ladder_config import check_agent_names

    from ginenv import gin_rummy_v0
    from ginenv.replay import hand_replay, match_replay, save_replay

    check_agent_names(list(args.players))
    save = check_save_path(args.save) if args.save else None
    turn_limit = DEFAULT_TURN_LIMIT if args.turn_limit is None else args.turn_limit
    rules = parse_rules(args.rules)
    env = gin_rummy_v0.raw_env(rules=rules, mode=args.mode, render_mode="ansi", turn_limit=turn_limit)
    players = fresh_agents(args.players, rules, DEFAULT_TIME_LIMIT)
    # Game 0 of the master seed, as the harness deals it: `ginenv match` with the same seed plays
    # this deal first.
    game = Game(env, players, seed=args.seed, deal=0, names=list(args.players))
    seats = game.seats
    labels = [f"{seat} ({name})" for seat, name in zip(seats, args.players, strict=True)]
    print(f"ginenv demo: one {args.mode}, seed {args.seed}, rules {args.rules!r}: {labels[0]} vs {labels[1]}")
    print(env.render())
    hand = 0
    try:
        while not game.over:
            p = game.to_move
            assert p is not None
            action = game.advance()
            if action is not None:
                print(f"  {labels[p]}: {env.action_name(action)}")
            if not game.over and game.hand_index != hand:
                hand = game.hand_index
                print(env.render())
    finally:
        game.close()
    forfeit = game.record.forfeit
    if forfeit is not None:
        print(
            f"{labels[forfeit['seat']]} forfeits the {args.mode}: {forfeit['reason']} "
            f"({forfeit['points']} points to its opponent)"
        )
    else:
        # The final rendering says how the game ended, a truncation at the turn limit included.
        print(env.render())
    if save is not None:
        match = env.match
        save_replay(match_replay(match) if match is not None else hand_replay(env.hand), save)
        print(f"replay written to {save}")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    """``ginenv replay FILE``: play a replay back; every recorded result must match."""
    from ginenv.match import Match
    from ginenv.replay import ReplayError, load_replay, play_replay

    try:
        game = play_replay(load_replay(args.file))
    except RecursionError:
        raise ReplayError(f"{args.file} is not a ginenv replay: nested too deeply") from None
    if isinstance(game, Match):
        print(f"replayed a match of {len(game.records)} hands: scores {game.scores}")
        if game.result:
            print(f"player_{game.result.winner} wins: totals {list(game.result.totals)}")
        elif getattr(game, "truncated", False):
            print("truncated: a hand reached the turn limit; the match has no result")
    else:
        print(f"replayed one hand of {len(game.history)} actions")
        if game.result:
            print(f"result: {game.result.to_dict()}")
    print("every recorded result matches")
    return 0


def add_demo_parser(sub: Any) -> None:
    """The subcommand ``demo`` of the parser's ``sub``."""
    demo = sub.add_parser("demo", help="play and print one seeded hand (or match) between two agents")
    add_seed(demo, "deal seed: a non-negative integer or 'random' (default 0)", default=0)
    demo.add_argument(
        "--mode",
        choices=("hand", "match"),
        default="hand",
        help="play one hand, or a whole match to the rules' target score (default hand)",
    )
    demo.add_argument("--rules", default="standard", help=f"{RULES_HELP} (default standard)")
    demo.add_argument(
        "--players",
        nargs=2,
        default=["greedy", "greedy"],
        metavar=("P0", "P1"),
        help="agents in seats player_0 and player_1 (default greedy greedy; or checkpoint:PATH)",
    )
    add_turn_limit(demo)
    demo.add_argument("--save", metavar="FILE", help="write the replay as JSON")
    demo.set_defaults(func=cmd_demo)


def add_replay_parser(sub: Any) -> None:
    """The subcommand ``replay`` of the parser's ``sub``."""
    rep = sub.add_parser("replay", help="play a replay file back and check its results")
    rep.add_argument(
        "file", metavar="FILE", help="a replay JSON file, as demo --save or the browser game writes"
    )
    rep.set_defaults(func=cmd_replay)
