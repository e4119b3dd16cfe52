"""The ``ginenv`` command, the project's front door.

Subcommands: ``ladder`` (the main job: the difficulty-ladder benchmark of ``configs/ladder.yaml``),
``match A B`` (one head-to-head), ``demo`` (one printed hand or match), ``replay FILE`` (check a
replay). Training and interactive play will join as ``train`` and ``play``. Bad arguments and
configs end with a one-line message and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ginenv.experiments.harness import EvalConfig, HarnessError, evaluate

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "configs" / "ladder.yaml"


def _registered() -> list[str]:
    from ginenv import agents

    return agents.available()


def _run_and_report(cfg: EvalConfig, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    from ginenv.experiments.report import summarise, write_outputs

    records = evaluate(cfg, out, backend=args.backend, workers=args.workers, progress=not args.quiet)
    summary = summarise(records, cfg.agents, cfg.unit)
    summary["config"] = cfg.to_dict()
    write_outputs(summary, out, plots=not args.no_plots, tensorboard=not args.no_plots)
    return summary


def _cmd_ladder(args: argparse.Namespace) -> int:
    from ginenv.experiments.config import load_ladder_file, to_eval_config
    from ginenv.experiments.report import format_table

    spec = load_ladder_file(args.config)
    if args.deals is not None:
        spec.deals = args.deals
    if args.seed is not None:
        spec.seed = args.seed
    cfg = to_eval_config(spec, _registered())
    out = Path(args.out or f"results/ladder-{cfg.fingerprint()}")
    n_pairs = len(cfg.pairings())
    if not args.quiet:
        print(
            f"ginenv ladder: {len(cfg.agents)} agents ({', '.join(cfg.agents)}), {cfg.format}, "
            f"{n_pairs} pairings x {cfg.deals} duplicate deals = {2 * n_pairs * cfg.deals} games; "
            f"results in {out}",
            flush=True,
        )
    summary = _run_and_report(cfg, args, out)
    print(format_table(summary))
    print(
        f"\nwritten: {out}/summary.json, pairs.csv, ratings.csv"
        + ("" if args.no_plots else ", ratings.png, head_to_head.png, tensorboard/")
    )
    return 0


def _cmd_match(args: argparse.Namespace) -> int:
    from ginenv.experiments.config import check_agent_names, resolve_rules
    from ginenv.experiments.report import format_table

    check_agent_names([args.a, args.b], _registered())
    if args.matches is not None:
        unit, deals = "match", max(1, math.ceil(args.matches / 2))
    else:
        unit, deals = "hand", max(1, math.ceil(args.hands / 2))
    cfg = EvalConfig(
        agents=(args.a, args.b),
        format="round_robin",
        deals=deals,
        unit=unit,  # type: ignore[arg-type]
        rules=resolve_rules(args.rules),
        seed=args.seed,
    )
    out = Path(args.out or f"results/match-{cfg.fingerprint()}")
    args.quiet = args.quiet or args.json
    summary = _run_and_report(cfg, args, out)
    pair = summary["pairs"][0]
    if args.json:
        doc = {
            "agents": [args.a, args.b],
            "unit": unit,
            "deals": pair["deals"],
            "hands_played": pair["hands"],
            f"points_per_{unit}_a_minus_b": pair[f"points_per_{unit}"],
            "p_value": pair["p_value"],
            "a_hand_win_rate": pair["a_hand_win_rate"],
            "a_match_win_rate": pair.get("a_match_win_rate"),
            "rates": pair["rates"],
            "decisions_per_hand": pair["decisions_per_hand"],
            "ms_per_decision": {args.a: pair["a_ms_per_decision"], args.b: pair["b_ms_per_decision"]},
            "seed": args.seed,
            "results": str(out),
        }
        print(json.dumps(doc, indent=1, default=float))
    else:
        print(format_table(summary))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from ginenv.experiments.config import resolve_rules

    from ginenv import agents, gin_rummy_v0
    from ginenv.replay import hand_replay, match_replay, save_replay

    registered = _registered()
    for name in args.players:
        if name not in registered:
            raise HarnessError(f"unknown agent {name!r}; known agents: {', '.join(registered)}")
    env = gin_rummy_v0.raw_env(rules=resolve_rules(args.rules), mode=args.mode, render_mode="ansi")
    env.reset(seed=args.seed)
    seats = list(env.possible_agents)
    players = [agents.make(name, seed=args.seed + i) for i, name in enumerate(args.players)]
    labels = [f"{seat} ({name})" for seat, name in zip(seats, args.players, strict=True)]
    print(f"ginenv demo: one {args.mode}, seed {args.seed}, rules {args.rules!r}: {labels[0]} vs {labels[1]}")
    print(env.render())
    hand = -1
    for seat in env.agent_iter():
        obs, _, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        if info["hand_index"] != hand:
            hand = info["hand_index"]
            for i, player in enumerate(players):
                player.reset(args.seed * 1000 + 2 * hand + i)
            if hand:
                print(env.render())
        action = players[seats.index(seat)].act(obs)
        print(f"  {labels[seats.index(seat)]}: {env.action_name(action)}")
        env.step(action)
    print(env.render())
    if args.save:
        match = env.match
        save_replay(match_replay(match) if match is not None else hand_replay(env.hand), args.save)
        print(f"replay written to {args.save}")
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from ginenv.match import Match
    from ginenv.replay import load_replay, play_replay

    game = play_replay(load_replay(args.file))
    if isinstance(game, Match):
        print(f"replayed a match of {len(game.records)} hands: scores {game.scores}")
        if game.result:
            print(f"player_{game.result.winner} wins: totals {list(game.result.totals)}")
    else:
        print(f"replayed one hand of {len(game.history)} actions")
        if game.result:
            print(f"result: {game.result.to_dict()}")
    print("every recorded result matches")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``ginenv`` command."""
    parser = argparse.ArgumentParser(prog="ginenv", description="Gin rummy for RL research.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def run_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--out", help="run folder (results, plots); rerunning it resumes")
        p.add_argument(
            "--backend",
            choices=("local", "ray"),
            default="local",
            help="local processes (default) or Ray (RAY_ADDRESS names a cluster)",
        )
        p.add_argument("--workers", type=int, default=0, help="local processes (default: every core)")
        p.add_argument("--no-plots", action="store_true", help="skip PNG plots and TensorBoard scalars")
        p.add_argument("--quiet", action="store_true", help="no progress bar")

    lad = sub.add_parser("ladder", help="the difficulty-ladder benchmark (the main job)")
    lad.add_argument(
        "--config", default=str(DEFAULT_CONFIG), help="YAML config (default configs/ladder.yaml)"
    )
    lad.add_argument("--deals", type=int, help="override the duplicate deals per pairing")
    lad.add_argument("--seed", type=int, help="override the seed")
    run_options(lad)
    lad.set_defaults(func=_cmd_ladder)

    mat = sub.add_parser("match", help="one head-to-head of duplicate deals between agents A and B")
    mat.add_argument("a")
    mat.add_argument("b")
    size = mat.add_mutually_exclusive_group()
    size.add_argument(
        "--hands", type=int, default=200, help="hands to play (rounded up to whole duplicate deals)"
    )
    size.add_argument("--matches", type=int, help="play matches to the target instead (rounded up to pairs)")
    mat.add_argument("--seed", type=int, default=0)
    mat.add_argument("--rules", default="standard", help="rules preset")
    mat.add_argument("--json", action="store_true", help="print one JSON object")
    run_options(mat)
    mat.set_defaults(func=_cmd_match)

    demo = sub.add_parser("demo", help="play and print one seeded hand (or match) between two agents")
    demo.add_argument("--seed", type=int, default=0, help="deal seed (default 0)")
    demo.add_argument("--mode", choices=("hand", "match"), default="hand")
    demo.add_argument("--rules", default="standard", help="rules preset")
    demo.add_argument(
        "--players",
        nargs=2,
        default=["greedy", "greedy"],
        metavar=("P0", "P1"),
        help="agents in seats player_0 and player_1 (default greedy greedy)",
    )
    demo.add_argument("--save", metavar="FILE", help="write the replay as JSON")
    demo.set_defaults(func=_cmd_demo)

    rep = sub.add_parser("replay", help="play a replay file back and check its results")
    rep.add_argument("file")
    rep.set_defaults(func=_cmd_replay)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ginenv`` console script."""
    from ginenv.replay import ReplayError
    from ginenv.rules import RulesError

    args = build_parser().parse_args(argv)
    for name in ("hands", "matches", "deals", "workers"):
        value = getattr(args, name, None)
        if value is not None and value < (0 if name == "workers" else 1):
            print(
                f"ginenv: --{name} must be {'>= 0' if name == 'workers' else 'a positive integer'}, "
                f"got {value}",
                file=sys.stderr,
            )
            return 2
    try:
        return int(args.func(args))
    except (HarnessError, RulesError, ReplayError, ValueError) as err:
        print(f"ginenv: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
