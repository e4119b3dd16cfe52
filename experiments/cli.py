"""The ``ginenv`` command, the project's front door.

Subcommands: ``ladder`` (the main job: the difficulty-ladder benchmark of the shipped config ``ladder``),
``match A B`` (one head-to-head), ``rate SPEC`` (one agent placed on the standard ladder,
:mod:`ginenv.experiments.eval.rate`), ``compare NEW BASE`` (two runs against one opponent, paired
on their shared deals, :mod:`ginenv.experiments.eval.compare`), ``demo`` (one printed hand or
match), ``replay FILE`` (check a replay), ``train`` (masked PPO,
:mod:`ginenv.experiments.train.ppo`), ``export-sb3 MODEL.zip OUT.pt`` (a Stable-Baselines3
MaskablePPO save file as a checkpoint, :func:`ginenv.experiments.train.sb3.export_maskable_ppo`),
``play`` (a person against an agent in the browser, :mod:`ginenv.experiments.play.server`),
``config`` (list, print or copy out the shipped configs, :mod:`ginenv.experiments.eval.config`).

Exit statuses: 0 done; 2 bad arguments, configs, run folders or replays (one line saying what was
wrong and what is allowed, never a traceback); 1 an agent's own code failed (its traceback, then
``agent X raised ...``: not a usage error); 130 interrupted by Ctrl-C, 143 stopped by SIGTERM (one
line; a run folder keeps every finished deal, and the same command resumes it; ``train`` saves a
checkpoint and prints the command that resumes from it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from ginenv.agents.specs import CHECKPOINT_PREFIX
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.harness import (
    DEFAULT_TIME_LIMIT,
    MAX_DEALS,
    MAX_WORKERS,
    AgentError,
    EvalConfig,
    HarnessError,
    check_seed,
    check_time_limit,
    evaluate,
    single_thread_torch,
)
from ginenv.experiments.stopping import Stopped, stop_on_signals

from ginenv.engine import DEFAULT_TURN_LIMIT

#: Shipped configs by name (package data, :func:`ginenv.experiments.eval.config.shipped_configs`).
DEFAULT_CONFIG = "ladder"
DEFAULT_TRAIN_CONFIG = "ppo"
CONFIG_HELP = "a shipped config's name (ginenv config list) or a YAML file's path"


def _registered() -> list[str]:
    from ginenv import agents

    return agents.available()


def _seed_arg(args: argparse.Namespace, option: str = "--seed") -> int:
    """The ``--seed`` value as an int; ``random`` draws one from the OS (announced by the caller)."""
    value = args.seed
    if value == "random":
        return check_seed("random", option, random_ok=True)
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = -1
    if number < 0 or str(value).strip() != str(number):
        raise HarnessError(f"{option} must be a non-negative integer or 'random', got {value!r}")
    return number


def _turn_limit_arg(args: argparse.Namespace) -> int:
    if args.turn_limit is not None and args.turn_limit < 1:
        raise HarnessError(
            f"--turn-limit must be a positive integer (draws per hand; default {DEFAULT_TURN_LIMIT}), "
            f"got {args.turn_limit}"
        )
    return DEFAULT_TURN_LIMIT if args.turn_limit is None else int(args.turn_limit)


def _time_limit_arg(args: argparse.Namespace) -> float:
    limit = getattr(args, "time_limit", None)
    return DEFAULT_TIME_LIMIT if limit is None else check_time_limit(limit, "--time-limit")


def _run_and_report(cfg: EvalConfig, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    from ginenv.experiments.eval.report import summarise, write_outputs

    args.run_folder = out  # named by the Ctrl-C message
    records = evaluate(
        cfg,
        out,
        backend=args.backend,
        workers=args.workers,
        progress=not args.quiet,
        replays=args.replays,
        log=lambda line: print(f"ginenv: {line}", file=sys.stderr, flush=True),
    )
    summary = summarise(records, cfg.agents, cfg.unit)
    summary["config"] = cfg.to_dict()
    summary["seed"] = cfg.seed
    summary["seed_drawn"] = bool(args.seed_drawn)
    write_outputs(summary, out, plots=not args.no_plots, tensorboard=not args.no_plots)
    return summary


def _announce_seed(args: argparse.Namespace, seed: int) -> None:
    if args.seed_drawn:
        # stderr: the one channel that is neither --json's output nor visible to the agents.
        print(
            f"ginenv: seed drawn from the OS: {seed} (give --seed {seed} to reproduce or resume)",
            file=sys.stderr,
        )


def _cmd_ladder(args: argparse.Namespace) -> int:
    single_thread_torch()  # games are played one at a time; torch's threads only spin
    from ginenv.experiments.eval.config import load_ladder_file, to_eval_config
    from ginenv.experiments.eval.report import format_table

    spec = load_ladder_file(args.config)
    if args.deals is not None:
        spec.deals = args.deals
    if args.seed is not None:
        # "random" is drawn once, by to_eval_config, like a config's own `seed: random`.
        spec.seed = "random" if args.seed == "random" else _seed_arg(args)
    if args.turn_limit is not None:
        spec.turn_limit = _turn_limit_arg(args)
    if args.time_limit is not None:
        spec.time_limit = _time_limit_arg(args)
    args.seed_drawn = spec.seed == "random"
    cfg = to_eval_config(spec, _registered())
    _announce_seed(args, cfg.seed)
    out = Path(args.out or f"results/ladder-{cfg.fingerprint()}")
    n_pairs = len(cfg.pairings())
    if not args.quiet:
        print(
            f"ginenv ladder: {len(cfg.agents)} agents ({', '.join(cfg.agents)}), {cfg.format}, "
            f"{n_pairs} pairings x {cfg.deals} duplicate deals = {2 * n_pairs * cfg.deals} games, "
            f"seed {cfg.seed}; results in {out}",
            flush=True,
        )
    summary = _run_and_report(cfg, args, out)
    print(format_table(summary))
    print(
        f"\nwritten: {out}/summary.json, pairs.csv, ratings.csv"
        + ", ratings_bt.csv"
        + ("" if args.no_plots else ", ratings.png, head_to_head.png, tensorboard/")
    )
    return 0


def _cmd_match(args: argparse.Namespace) -> int:
    single_thread_torch()  # games are played one at a time; torch's threads only spin
    from ginenv.experiments.eval.config import check_agent_names, resolve_rules
    from ginenv.experiments.eval.report import format_table, strict_json

    check_agent_names([args.a, args.b])
    if args.matches is not None:
        unit, deals = "match", max(1, math.ceil(args.matches / 2))
    else:
        unit, deals = "hand", max(1, math.ceil(args.hands / 2))
    args.seed_drawn = args.seed == "random"
    seed = _seed_arg(args)
    cfg = EvalConfig(
        agents=(args.a, args.b),
        format="round_robin",
        deals=deals,
        unit=unit,  # type: ignore[arg-type]
        rules=resolve_rules(args.rules),
        seed=seed,
        turn_limit=_turn_limit_arg(args),
        time_limit=_time_limit_arg(args),
    )
    _announce_seed(args, seed)
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
            "truncated_games": pair["truncated_games"],
            "forfeits": pair["forfeits"],
            "forfeit_reasons": pair["forfeit_reasons"],
            "decisions_per_hand": pair["decisions_per_hand"],
            "ms_per_decision": {args.a: pair["a_ms_per_decision"], args.b: pair["b_ms_per_decision"]},
            "seed": seed,
            "seed_drawn": args.seed_drawn,
            "turn_limit": cfg.turn_limit,
            "results": str(out),
        }
        print(json.dumps(strict_json(doc), indent=1, allow_nan=False))
    else:
        print(format_table(summary))
    return 0


def _cmd_rate(args: argparse.Namespace) -> int:
    single_thread_torch()  # games are played one at a time; torch's threads only spin
    from ginenv.experiments.eval.rate import format_rate, rate
    from ginenv.experiments.eval.report import strict_json

    args.quiet = args.quiet or args.json
    result = rate(
        args.spec,
        args.config,
        deals=args.deals,
        time_limit=_time_limit_arg(args) if args.time_limit is not None else None,
        out=args.out,
        backend=args.backend,
        workers=args.workers,
        progress=not args.quiet,
        log=lambda line: print(f"ginenv rate: {line}", file=sys.stderr, flush=True),
    )
    if args.json:
        print(json.dumps(strict_json(result), indent=1, allow_nan=False))
    else:
        print(format_rate(result))
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from ginenv.experiments.eval.compare import compare_runs, format_compare, load_run
    from ginenv.experiments.eval.report import strict_json

    if len(args.runs) % 2:
        raise UsageError(
            f"compare takes run folders in pairs, NEW BASE [NEW BASE ...]; "
            f"got {len(args.runs)}, an odd number"
        )
    runs = [load_run(folder) for folder in args.runs]
    result = compare_runs(list(zip(runs[::2], runs[1::2], strict=True)), against=args.against, raw=args.raw)
    if args.json:
        print(json.dumps(strict_json(result), indent=1, allow_nan=False))
    else:
        print(format_compare(result))
    return 0


def _check_save_path(path: str) -> Path:
    """Refuse a ``--save`` target that cannot be written, before the game is played."""
    target = Path(path)
    parent = target.parent
    if target.is_dir():
        raise HarnessError(f"--save {path} is a folder; give a file name, e.g. {target / 'replay.json'}")
    if not parent.is_dir():
        raise HarnessError(f"--save {path}: the folder {parent} does not exist; create it first")
    if not os.access(parent, os.W_OK | os.X_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise HarnessError(f"--save {path}: cannot write there (permission denied)")
    return target


def _cmd_demo(args: argparse.Namespace) -> int:
    single_thread_torch()  # games are played one at a time; torch's threads only spin
    from ginenv.agents.arena import Game
    from ginenv.experiments.eval.config import check_agent_names, resolve_rules
    from ginenv.experiments.eval.harness import fresh_agents

    from ginenv import gin_rummy_v0
    from ginenv.replay import hand_replay, match_replay, save_replay

    check_agent_names(list(args.players))
    save = _check_save_path(args.save) if args.save else None
    args.seed_drawn = args.seed == "random"
    seed = _seed_arg(args)
    turn_limit = _turn_limit_arg(args)
    rules = resolve_rules(args.rules)
    env = gin_rummy_v0.raw_env(rules=rules, mode=args.mode, render_mode="ansi", turn_limit=turn_limit)
    players = fresh_agents(args.players, rules, _time_limit_arg(args))
    # Game 0 of the master seed, as the harness deals it: `ginenv match` with the same seed plays
    # this deal first.
    game = Game(env, players, seed=seed, deal=0, names=list(args.players))
    seats = game.seats
    labels = [f"{seat} ({name})" for seat, name in zip(seats, args.players, strict=True)]
    print(f"ginenv demo: one {args.mode}, seed {seed}, rules {args.rules!r}: {labels[0]} vs {labels[1]}")
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


def _cmd_replay(args: argparse.Namespace) -> int:
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


def _cmd_config(args: argparse.Namespace) -> int:
    from ginenv.experiments.eval.config import config_command

    print(config_command(args.action, getattr(args, "name", None), getattr(args, "dest", None)))
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    from ginenv.agents.neural import CheckpointError
    from ginenv.experiments.eval.config import apply_overrides, load_dataclass_yaml
    from ginenv.experiments.train.ppo import Args, train

    spec = load_dataclass_yaml(args.config, Args) if args.config else Args()
    overrides = list(args.set or [])
    for flag in ("seed", "total_steps", "num_envs", "experiment", "device", "backend", "workers"):
        value = getattr(args, flag)
        if value is not None:
            overrides.append(f"{flag}={value}")
    if args.quiet:
        overrides.append("progress=false")
    spec = apply_overrides(spec, overrides)
    spec.validate()
    try:
        run_dir = train(spec, resume=args.resume)
    except CheckpointError as err:
        raise UsageError(f"--resume: {err}") from None
    print(f"ginenv train: done; TensorBoard scalars and checkpoints in {run_dir}")
    print(
        f"  play it: ginenv match {CHECKPOINT_PREFIX}{run_dir / 'checkpoints' / 'latest.pt'} hard --hands 400"
    )
    return 0


def _cmd_export_sb3(args: argparse.Namespace) -> int:
    try:
        from ginenv.experiments.train.sb3 import SB3ExportError, export_maskable_ppo
    except ImportError as err:
        raise HarnessError(f"export-sb3 needs stable-baselines3 (pip install 'ginenv[dev]'): {err}") from None
    try:
        policy = export_maskable_ppo(args.model, args.out, activation=args.activation)
    except SB3ExportError as err:
        raise HarnessError(str(err)) from None
    except OSError as err:
        raise HarnessError(f"cannot write {args.out}: {err.strerror or err}") from None
    print(f"ginenv export-sb3: wrote {args.out} (hidden layers {list(policy.hidden)}, {policy.activation})")
    print(f"  play it: ginenv match {CHECKPOINT_PREFIX}{args.out} hard --hands 400")
    return 0


def _lan_address(host: str) -> str | None:
    """The address other machines reach this one at when listening on every interface, else None."""
    import socket

    if host not in ("0.0.0.0", "::", ""):
        return None
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))  # no packet is sent: this only picks the interface
            return str(probe.getsockname()[0])
    except OSError:
        return None


def _cmd_play(args: argparse.Namespace) -> int:
    single_thread_torch()  # one decision at a time; torch's threads would only spin
    import contextlib
    import ipaddress
    import signal
    import socket
    import webbrowser

    from ginenv.experiments.eval.config import check_agent_names
    from ginenv.experiments.play.server import create_app, save_open_games, serve_in_background
    from ginenv.experiments.play.table import PlayError

    if args.port is not None and not 0 <= args.port <= 65535:
        raise HarnessError(f"--port must be between 0 and 65535 (0: any free port), got {args.port}")
    if args.pace_ms < 0 or args.pace_ms > 10_000:
        raise HarnessError(f"--pace-ms must be between 0 and 10000 milliseconds, got {args.pace_ms}")
    # Named on the command line: that match starts at once; otherwise the page asks first.
    autostart = args.daily or args.opponent is not None or args.rules is not None
    args.opponent = args.opponent or "normal"
    args.rules = args.rules or "standard"
    check_agent_names([args.opponent])
    replay_dir = Path(args.replay_dir).expanduser()
    state_dir = Path(args.state_dir).expanduser()
    for flag, folder in (("--replay-dir", replay_dir), ("--state-dir", state_dir)):
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700 if flag == "--state-dir" else 0o777)
        except OSError as err:
            raise HarnessError(f"{flag} {folder}: cannot create it ({err.strerror or err})") from None
    # A port that is taken is said plainly, before uvicorn logs its own traceback-like lines.
    with socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET) as probe:
        try:
            probe.bind((args.host, args.port))
        except OSError as err:
            raise HarnessError(
                f"cannot listen on {args.host}:{args.port} ({err.strerror or err}); choose another --port"
            ) from None
    lan = _lan_address(args.host)
    try:
        app = create_app(
            replay_dir=replay_dir,
            state_dir=state_dir,
            pace_ms=args.pace_ms,
            opponent=args.opponent,
            preset=args.rules,
            daily=args.daily,
            autostart=autostart,
            forwarded_allow_ips=args.forwarded_allow_ips,
        )
    except PlayError as err:
        raise HarnessError(str(err)) from None

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM stops the server the way Ctrl-C does

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    with contextlib.suppress(ValueError):  # not the main thread: only Ctrl-C stops it
        signal.signal(signal.SIGTERM, stop)
    server = serve_in_background(app, host=args.host, port=args.port)
    try:
        url = server.url if ":" not in args.host else server.url.replace(args.host, f"[{args.host}]")
        if lan is not None:
            # Invitation links must name an address the friend's device can reach.
            app.state.share_base = f"http://{lan}:{url.rsplit(':', 1)[1]}"
        if args.daily:
            what = "the game of the day against normal"
        elif autostart:
            what = f"{args.opponent}, rules {args.rules!r}"
        else:
            what = "choose an opponent and the rules"
        print(f"ginenv play: {what} at {url}  (replays in {replay_dir}; Ctrl-C stops)", flush=True)
        kept = len(app.state.store)
        if kept:
            print(f"ginenv play: {kept} table(s) kept in {state_dir} resume where they stopped", flush=True)
        try:
            loopback = ipaddress.ip_address(socket.gethostbyname(args.host)).is_loopback
        except (OSError, ValueError):
            loopback = False
        if not loopback:
            print(
                f"ginenv play: warning: listening on {args.host}: anyone on this network can reach the page"
                + (f" (at {app.state.share_base})" if lan is not None else "")
                + "; only an invitation link gives a seat at a friend's table",
                flush=True,
            )
        if not args.no_browser:
            webbrowser.open(url)
        while server.thread.is_alive():
            server.thread.join(timeout=0.5)
    except KeyboardInterrupt:
        pass  # Ctrl-C (or SIGTERM) is how the server is meant to stop
    finally:
        for sig in previous:
            with contextlib.suppress(ValueError):
                signal.signal(sig, signal.SIG_IGN)  # nothing interrupts the saving
        server.stop()
        # Matches left unfinished are saved too: every game is kept as a replay, every table resumes.
        saved = save_open_games(app)
        for sig, handler in previous.items():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(sig, handler)
    if saved:
        print(
            f"ginenv play: stopped; {len(saved)} unfinished match(es) saved in {replay_dir} "
            f"(they resume from {state_dir} when the server starts again)"
        )
    else:
        print("ginenv play: stopped")
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (no usage block) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``ginenv`` command."""
    parser = _Parser(prog="ginenv", description="Gin rummy for RL research.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    seed_help = (
        "master seed: a non-negative integer, or 'random' (drawn from the OS and recorded; for "
        "untrusted agents, which could rebuild the deals of a public seed)"
    )
    limit_help = f"draws per hand before it is truncated with no score (default {DEFAULT_TURN_LIMIT})"
    time_help = (
        f"seconds an exec:COMMAND agent may take for one decision before it forfeits the game "
        f"(default {DEFAULT_TIME_LIMIT:g})"
    )

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
        p.add_argument("--turn-limit", type=int, help=limit_help)
        p.add_argument("--time-limit", type=float, help=time_help)
        p.add_argument(
            "--replays",
            action="store_true",
            help="also write every game as a replay file in the run folder's replays/ (see ginenv play)",
        )

    lad = sub.add_parser("ladder", help="the difficulty-ladder benchmark (the main job)")
    lad.add_argument("--config", default=DEFAULT_CONFIG, help=f"{CONFIG_HELP} (default {DEFAULT_CONFIG})")
    lad.add_argument("--deals", type=int, help="override the duplicate deals per pairing")
    lad.add_argument("--seed", help="override the config's seed; " + seed_help)
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
    mat.add_argument("--seed", default="0", help=seed_help + " (default 0)")
    mat.add_argument("--rules", default="standard", help="rules preset")
    mat.add_argument("--json", action="store_true", help="print one JSON object")
    run_options(mat)
    mat.set_defaults(func=_cmd_match)

    rate = sub.add_parser(
        "rate", help="place one agent on the standard ladder's scale (the ladder's own results are kept)"
    )
    rate.add_argument(
        "spec",
        help="the agent: a registered name, checkpoint:PATH, package.module:Name, path/to/file.py:Name "
        "or exec:COMMAND",
    )
    rate.add_argument(
        "--config", default=DEFAULT_CONFIG, help=f"the ladder to rate against: {CONFIG_HELP} (default ladder)"
    )
    rate.add_argument("--deals", type=int, help="duplicate deals per opponent (default: the ladder's)")
    rate.add_argument("--json", action="store_true", help="print one JSON object")
    run_options(rate)
    rate.set_defaults(func=_cmd_rate)

    cmp = sub.add_parser(
        "compare",
        help="paired difference of two agents' runs against one opponent on the same deals (no games played)",
    )
    cmp.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="run folders (--out of ginenv match) in pairs, NEW BASE [NEW BASE ...], each pair of one seed",
    )
    cmp.add_argument("--against", help="the common opponent (default: the one agent both runs share)")
    cmp.add_argument("--raw", action="store_true", help="raw points, without the luck adjustment")
    cmp.add_argument("--json", action="store_true", help="print one JSON object")
    cmp.set_defaults(func=_cmd_compare)

    demo = sub.add_parser("demo", help="play and print one seeded hand (or match) between two agents")
    demo.add_argument("--seed", default="0", help="deal seed: a non-negative integer or 'random' (default 0)")
    demo.add_argument("--mode", choices=("hand", "match"), default="hand")
    demo.add_argument("--rules", default="standard", help="rules preset")
    demo.add_argument(
        "--players",
        nargs=2,
        default=["greedy", "greedy"],
        metavar=("P0", "P1"),
        help="agents in seats player_0 and player_1 (default greedy greedy; or checkpoint:PATH)",
    )
    demo.add_argument("--turn-limit", type=int, help=limit_help)
    demo.add_argument("--save", metavar="FILE", help="write the replay as JSON")
    demo.set_defaults(func=_cmd_demo)

    tr = sub.add_parser(
        "train", help="train a policy with masked PPO against a league (TensorBoard in runs/)"
    )
    tr.add_argument(
        "--config", default=DEFAULT_TRAIN_CONFIG, help=f"{CONFIG_HELP} (default {DEFAULT_TRAIN_CONFIG})"
    )
    tr.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a config setting (value read as YAML, e.g. --set hidden=[64,64]); repeatable",
    )
    tr.add_argument("--resume", metavar="PATH", help="continue the run saved in this checkpoint")
    tr.add_argument("--seed", type=int, help="override the config's seed")
    tr.add_argument("--total-steps", type=int, help="override the env steps to train for")
    tr.add_argument("--num-envs", type=int, help="override the hands stepped in lockstep")
    tr.add_argument("--experiment", help="override the run's name")
    tr.add_argument("--device", help="cpu, cuda or auto")
    tr.add_argument(
        "--backend",
        choices=("local", "ray"),
        help="where the rollout workers run: local (this process) or ray (Ray actors; a local Ray "
        "instance, or the cluster named by RAY_ADDRESS)",
    )
    tr.add_argument(
        "--workers", type=int, help="rollout workers, each stepping num_envs / workers hands (default 1)"
    )
    tr.add_argument("--quiet", action="store_true", help="no progress bar")
    tr.set_defaults(func=_cmd_train)

    exp = sub.add_parser(
        "export-sb3", help="write a Stable-Baselines3 MaskablePPO save file as a checkpoint (no unpickling)"
    )
    exp.add_argument("model", metavar="MODEL.zip", help="the file model.save() wrote")
    exp.add_argument("out", metavar="OUT.pt", help="the checkpoint to write (play it as checkpoint:OUT.pt)")
    exp.add_argument(
        "--activation",
        choices=("tanh", "relu"),
        help="the policy's activation_fn (default: what the save file's plain-text description says, "
        "else tanh, SB3's MlpPolicy default)",
    )
    exp.set_defaults(func=_cmd_export_sb3)

    play = sub.add_parser("play", help="play a match against an agent in the browser (a local web page)")
    play.add_argument(
        "--opponent",
        help="the computer player: a registered agent or checkpoint:PATH (default normal); with "
        "--opponent, --rules or --daily the match starts at once, else the page asks first",
    )
    play.add_argument("--rules", help="rules preset (default standard)")
    play.add_argument("--port", type=int, default=8765, help="port to listen on (default 8765; 0: any free)")
    play.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: a friend on your "
        "network can join through an invitation link)",
    )
    play.add_argument("--no-browser", action="store_true", help="print the address, do not open a browser")
    play.add_argument(
        "--daily",
        action="store_true",
        help="the game of the day: the same deals for everyone today, vs normal",
    )
    play.add_argument(
        "--replay-dir",
        default=str(Path("~") / ".ginenv" / "replays"),
        help="where every game is saved as a replay (default ~/.ginenv/replays)",
    )
    play.add_argument(
        "--state-dir",
        default=str(Path("~") / ".ginenv" / "tables"),
        help="where the tables are kept, so that a reload or a restart resumes them "
        "(default ~/.ginenv/tables)",
    )
    play.add_argument(
        "--pace-ms", type=int, default=800, help="milliseconds shown per computer move (default 800)"
    )
    play.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        help="the reverse proxies (IPs or networks, comma-separated, or *) whose X-Forwarded-For names "
        "the client (default: none, the header is ignored; each connection is its own address)",
    )
    play.set_defaults(func=_cmd_play)

    conf = sub.add_parser("config", help="list the shipped configs, print one, or copy one out to edit")
    conf_sub = conf.add_subparsers(dest="action", required=True, metavar="ACTION")
    conf_sub.add_parser("list", help="the shipped configs' names and what each is for")
    conf_sub.add_parser("show", help="print a shipped config's YAML").add_argument("name")
    copy = conf_sub.add_parser("copy", help="write a shipped config to a file to edit (then --config FILE)")
    copy.add_argument("name")
    copy.add_argument("dest", nargs="?", help="file or folder to write (default ./NAME.yaml)")
    conf.set_defaults(func=_cmd_config)

    rep = sub.add_parser("replay", help="play a replay file back and check its results")
    rep.add_argument("file")
    rep.set_defaults(func=_cmd_replay)
    return parser


def _check_counts(args: argparse.Namespace) -> None:
    """Bound the numeric options before anything is built (a huge --hands must not eat the memory)."""
    bounds = {
        "hands": (1, 2 * MAX_DEALS, "hands"),
        "matches": (1, 2 * MAX_DEALS, "matches"),
        "deals": (1, MAX_DEALS, "duplicate deals per pairing"),
        "workers": (0, MAX_WORKERS, "processes; 0 means every core"),
    }
    for name, (low, high, what) in bounds.items():
        value = getattr(args, name, None)
        if value is None:
            continue
        if value < low:
            allowed = ">= 0" if low == 0 else "a positive integer"
            raise HarnessError(f"--{name} must be {allowed}, got {value}")
        if value > high:
            raise HarnessError(
                f"--{name} must be at most {high:,} ({what}; every finished deal is held in memory for the "
                f"statistics), got {value:,}; split a bigger evaluation into several runs"
                if name != "workers"
                else f"--workers must be at most {MAX_WORKERS} ({what}), got {value:,}"
            )


def _resume_command(argv: Sequence[str] | None, checkpoint: str) -> str:
    """The command line that was run (``train``), its ``--resume`` replaced by ``checkpoint``."""
    given = list(sys.argv[1:] if argv is None else argv)
    words = [
        w for i, w in enumerate(given) if not w.startswith("--resume") and given[i - 1 : i] != ["--resume"]
    ]
    return shlex.join(["ginenv", *words, "--resume", checkpoint])


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ginenv`` console script (returns the exit status)."""
    from ginenv.replay import ReplayError
    from ginenv.rules import RulesError

    args: argparse.Namespace | None = None
    try:
        args = build_parser().parse_args(argv)
        args.run_folder = None
        args.seed_drawn = False
        _check_counts(args)
        with stop_on_signals():  # SIGTERM stops a run as Ctrl-C does: one line, deals kept
            return int(args.func(args))
    except AgentError as err:
        # The agent's own code failed: its traceback is what its author needs, then one line.
        if err.agent_traceback:
            print(err.agent_traceback.rstrip(), file=sys.stderr)
        print(f"ginenv: {err}", file=sys.stderr)
        return 1
    except (UsageError, RulesError, ReplayError) as err:
        print(f"ginenv: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`ginenv demo | head`): stop quietly, as a shell tool does on SIGPIPE.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt as err:
        stop = Stopped.of(err)
        folder = getattr(args, "run_folder", None)
        kept = stop.kept or (f"finished deals are kept in {folder}" if folder is not None else None)
        if stop.resume is not None:
            kept = f"{kept}: resume with {_resume_command(argv, stop.resume)}"
        elif kept is not None:
            kept += ": run the same command again to resume"
        what = "interrupted" if stop.by == "Ctrl-C" else f"stopped by {stop.by}"
        print(f"ginenv: {what}" + (f"; {kept}" if kept else ""), file=sys.stderr)
        return stop.status


if __name__ == "__main__":
    sys.exit(main())
