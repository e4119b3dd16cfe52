"""The evaluation commands of ``ginenv``: ``ladder``, ``match``, ``rate`` and ``compare``.

Each takes typed values from its options (:mod:`ginenv.experiments.cli.inputs`), builds one
:class:`~ginenv.experiments.eval.harness.EvalConfig` (``ladder`` and ``rate`` through the ladder
file's loader, :mod:`ginenv.experiments.eval.ladder_config`), runs the harness and prints the report.

``ladder``, ``match`` and ``rate`` play on secret deals with ``--secret`` (a fresh key) or
``--key-file PATH`` (a given one, from a file or standard input; never on the command line, which
every user of the machine reads): the key's commitment is printed to stderr when the run starts,
the key to stderr when it ends (and on a stop, with how to resume), and the results record both
(:func:`secret_deals`). ``--seed`` then seeds the agents only. The process is non-dumpable before
any key exists, ``exec:`` agents run in the strict sandbox (:func:`run_sandbox`), and a run with an
agent that runs inside the harness's processes is marked not publishable (:func:`publishable`).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ginenv.agents.sandbox import Sandbox, choose, undumpable
from ginenv.agents.specs import EXEC_PREFIX
from ginenv.experiments.cli.inputs import (
    AGENT_SPECS,
    CONFIG_HELP,
    DEALS,
    DEFAULT_CONFIG,
    HANDS,
    MATCHES,
    RULES_HELP,
    SEED_HELP,
    add_run_options,
    add_seed,
    checked,
    parse_rules,
)
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.harness import (
    DEFAULT_TIME_LIMIT,
    AgentError,
    EvalConfig,
    disclose_key,
    evaluate,
    publishable,
    single_thread_torch,
)
from ginenv.experiments.stopping import Stopped

from ginenv.engine import DEFAULT_TURN_LIMIT
from ginenv.secret_deals import DealKey


def registered() -> list[str]:
    """The registered agents' names (what a ladder config's ``agents: all`` means)."""
    from ginenv import agents

    return agents.available()


def say(line: str) -> None:
    """One line of the run's own news on stderr (neither --json's output nor the agents')."""
    print(f"ginenv: {line}", file=sys.stderr, flush=True)


def run_sandbox(args: argparse.Namespace, agents: Iterable[str], key: DealKey | None) -> Sandbox:
    """The sandbox of the run's ``exec:`` agents: ``--sandbox`` (auto: strict on secret deals), the
    key's file hidden from them; says in one line when strict is not available and what stands in."""
    mode, note = choose(getattr(args, "sandbox", "auto"), secret=key is not None)
    if note is not None and any(a.startswith(EXEC_PREFIX) for a in agents):
        say(note)
    sandbox = Sandbox(mode)
    key_file = getattr(args, "key_file", None)
    return sandbox.hiding(key_file) if key_file else sandbox


def warn_in_process(agents: Iterable[str], key: DealKey | None) -> None:
    """On secret deals, say in one line which agents could read the key, and that the run is not
    publishable."""
    verdict = publishable(agents, key)
    if key is not None and not verdict["publishable"]:
        say(
            f"not publishable: {verdict['not_publishable_because']} (Python code there can read "
            "anything in its process); run it as exec:COMMAND for a rating you publish"
        )


def run_and_report(cfg: EvalConfig, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """Play (or resume) ``cfg`` in ``out``, write its report files, and return the summary."""
    from ginenv.experiments.eval.report import summarise, write_outputs

    args.run_folder = out  # named by the Ctrl-C message
    warn_in_process(cfg.agents, cfg.key)
    records = evaluate(
        cfg,
        out,
        backend=args.backend,
        workers=args.workers,
        progress=not args.quiet,
        replays=args.replays,
        log=say,
    )
    summary = summarise(records, cfg.agents, cfg.unit)
    summary["config"] = cfg.to_dict()
    summary["seed"] = cfg.seed
    summary["seed_drawn"] = bool(args.seed_drawn)
    # Every game is over: the key may now be written beside the results it dealt.
    summary.update(key_fields(cfg.key))
    summary.update(publishable(cfg.agents, cfg.key))
    if cfg.key is not None:
        disclose_key(out, cfg.key)
    write_outputs(summary, out, plots=not args.no_plots, tensorboard=not args.no_plots)
    return summary


def key_fields(key: DealKey | None) -> dict[str, str | None]:
    """``deal_commitment`` and ``deal_key`` of a finished run's results (None on public deals)."""
    return {
        "deal_commitment": None if key is None else key.commitment(),
        "deal_key": None if key is None else key.hex(),
    }


def deal_key(args: argparse.Namespace) -> DealKey | None:
    """The run's deal key: a fresh one for ``--secret`` (this process made non-dumpable first), the
    one read by ``--key-file``, else None."""
    if args.secret:
        undumpable()
        return DealKey.new()
    return args.key


@contextlib.contextmanager
def secret_deals(args: argparse.Namespace, key: DealKey | None) -> Iterator[None]:
    """Around a run on secret deals: its commitment printed at the start, its key at the end.

    Both go to stderr, as :func:`announce_seed` does (neither --json's output nor the agents'). A
    run stopped by Ctrl-C, SIGTERM or an agent's error prints its key too (the deals played so far
    can be checked) and, for a fresh ``--secret`` key, how to resume: ``--key-file`` in its place.
    """
    if key is None:
        yield
        return
    say(f"secret deals, commitment {key.commitment()} (the key is printed when the run ends)")
    resume = "--key-file FILE in place of --secret, FILE holding that key and readable by you only"
    try:
        yield
    except (KeyboardInterrupt, AgentError) as err:
        # The finished deals are in the run folder: their key lets anyone check them, and a fresh
        # --secret key must be given back for the same command to resume them.
        stopped = isinstance(err, KeyboardInterrupt)
        hint = f"; to resume, give {resume}" if args.secret and not stopped else ""
        say(f"deal key {key.hex()}: the deals played so far can be checked with it{hint}")
        if stopped:
            # The command's one stop line says how to resume: with the key, not a fresh one.
            stop = Stopped.of(err)
            if args.secret and stop.kept:
                stop.kept += f" (with {resume})"
            raise stop from None
        raise
    say(
        f"deal key {key.hex()} (commitment {key.commitment()}): publish it with the results; "
        "--key-file FILE holding it replays the same deals"
    )


def announce_seed(args: argparse.Namespace, seed: int) -> None:
    """Say a seed drawn from the OS, so that the run can be reproduced or resumed."""
    if args.seed_drawn:
        # stderr: the one channel that is neither --json's output nor visible to the agents.
        print(
            f"ginenv: seed drawn from the OS: {seed} (give --seed {seed} to reproduce or resume)",
            file=sys.stderr,
        )


def cmd_ladder(args: argparse.Namespace) -> int:
    """``ginenv ladder``: the difficulty-ladder benchmark of a config."""
    single_thread_torch()  # games are played one at a time; torch's threads only spin
    from ginenv.experiments.eval.ladder_config import load_ladder_file, to_eval_config
    from ginenv.experiments.eval.report import format_table

    spec = load_ladder_file(args.config)
    # The options are parsed already (a drawn --seed included): they replace the file's values.
    for name in ("deals", "seed", "turn_limit", "time_limit"):
        if getattr(args, name) is not None:
            setattr(spec, name, getattr(args, name))
    args.seed_drawn = args.seed_drawn or spec.seed == "random"  # a config's own `seed: random`
    key = deal_key(args)
    cfg = to_eval_config(spec, registered())
    cfg = dataclasses.replace(cfg, key=key, sandbox=run_sandbox(args, cfg.agents, key))
    announce_seed(args, cfg.seed)
    out = Path(args.out or f"results/ladder-{cfg.fingerprint()}")
    n_pairs = len(cfg.pairings())
    if not args.quiet:
        dealt = f"seed {cfg.seed}" if key is None else f"secret deals (agents' seed {cfg.seed})"
        print(
            f"ginenv ladder: {len(cfg.agents)} agents ({', '.join(cfg.agents)}), {cfg.format}, "
            f"{n_pairs} pairings x {cfg.deals} duplicate deals = {2 * n_pairs * cfg.deals} games, "
            f"{dealt}; results in {out}",
            flush=True,
        )
    with secret_deals(args, key):
        summary = run_and_report(cfg, args, out)
        print(format_table(summary))
        print(
            f"\nwritten: {out}/summary.json, pairs.csv, ratings.csv"
            + ", ratings_bt.csv"
            + ("" if key is None else ", deal_key.json")
            + ("" if args.no_plots else ", ratings.png, head_to_head.png, tensorboard/")
        )
    return 0


def cmd_match(args: argparse.Namespace) -> int:
    """``ginenv match A B``: one head-to-head of duplicate deals."""
    single_thread_torch()  # games are played one at a time; torch's threads only spin
    from ginenv.experiments.eval.ladder_config import check_agent_names

    check_agent_names([args.a, args.b])
    if args.matches is not None:
        unit, deals = "match", max(1, math.ceil(args.matches / 2))
    else:
        unit, deals = "hand", max(1, math.ceil(args.hands / 2))
    cfg = EvalConfig(
        agents=(args.a, args.b),
        format="round_robin",
        deals=deals,
        unit=unit,  # type: ignore[arg-type]
        rules=parse_rules(args.rules),
        seed=args.seed,
        turn_limit=DEFAULT_TURN_LIMIT if args.turn_limit is None else args.turn_limit,
        time_limit=DEFAULT_TIME_LIMIT if args.time_limit is None else args.time_limit,
        key=deal_key(args),
    )
    cfg = dataclasses.replace(cfg, sandbox=run_sandbox(args, cfg.agents, cfg.key))
    announce_seed(args, cfg.seed)
    out = Path(args.out or f"results/match-{cfg.fingerprint()}")
    args.quiet = args.quiet or args.json
    with secret_deals(args, cfg.key):
        _report_match(args, cfg, out, unit)
    return 0


def _report_match(args: argparse.Namespace, cfg: EvalConfig, out: Path, unit: str) -> None:
    """Play ``match``'s run and print its table or its one JSON object."""
    from ginenv.experiments.eval.report import format_table, strict_json

    summary = run_and_report(cfg, args, out)
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
            "seed": cfg.seed,
            "seed_drawn": args.seed_drawn,
            "turn_limit": cfg.turn_limit,
            **key_fields(cfg.key),
            "publishable": summary["publishable"],
            "not_publishable_because": summary["not_publishable_because"],
            "results": str(out),
        }
        print(json.dumps(strict_json(doc), indent=1, allow_nan=False))
    else:
        print(format_table(summary))


def cmd_rate(args: argparse.Namespace) -> int:
    """``ginenv rate SPEC``: one agent placed on the ladder's scale."""
    single_thread_torch()  # games are played one at a time; torch's threads only spin
    from ginenv.experiments.eval.rate import format_rate, rate
    from ginenv.experiments.eval.report import strict_json

    args.quiet = args.quiet or args.json
    key = deal_key(args)
    warn_in_process([args.spec], key)
    with secret_deals(args, key):
        result = rate(
            args.spec,
            args.config,
            deals=args.deals,
            time_limit=args.time_limit,
            out=args.out,
            backend=args.backend,
            workers=args.workers,
            progress=not args.quiet,
            log=lambda line: print(f"ginenv rate: {line}", file=sys.stderr, flush=True),
            key=key,
            sandbox=run_sandbox(args, [args.spec], key),
        )
        if args.json:
            print(json.dumps(strict_json(result), indent=1, allow_nan=False))
        else:
            print(format_rate(result))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """``ginenv compare NEW BASE [...]``: two runs against one opponent, paired on shared deals."""
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


def add_parsers(sub: Any) -> None:
    """The subcommands ``ladder``, ``match``, ``rate`` and ``compare`` of the parser's ``sub``."""
    lad = sub.add_parser("ladder", help="the difficulty-ladder benchmark (the main job)")
    lad.add_argument("--config", default=DEFAULT_CONFIG, help=f"{CONFIG_HELP} (default {DEFAULT_CONFIG})")
    lad.add_argument(
        "--deals", type=int, action=checked(DEALS), help="override the duplicate deals per pairing"
    )
    add_seed(lad, "override the config's seed; " + SEED_HELP)
    add_run_options(lad)
    lad.set_defaults(func=cmd_ladder)

    mat = sub.add_parser("match", help="one head-to-head of duplicate deals between agents A and B")
    mat.add_argument("a", metavar="A", help=f"the first agent: {AGENT_SPECS}")
    mat.add_argument("b", metavar="B", help="the second agent, any spec A takes")
    size = mat.add_mutually_exclusive_group()
    size.add_argument(
        "--hands",
        type=int,
        action=checked(HANDS),
        default=200,
        help="hands to play (rounded up to whole duplicate deals)",
    )
    size.add_argument(
        "--matches",
        type=int,
        action=checked(MATCHES),
        help="play matches to the target instead (rounded up to pairs)",
    )
    add_seed(mat, SEED_HELP + " (default 0)", default=0)
    mat.add_argument("--rules", default="standard", help=f"{RULES_HELP} (default standard)")
    mat.add_argument("--json", action="store_true", help="print one JSON object")
    add_run_options(mat)
    mat.set_defaults(func=cmd_match)

    rate = sub.add_parser(
        "rate", help="place one agent on the standard ladder's scale (the ladder's own results are kept)"
    )
    rate.add_argument(
        "spec",
        help=f"the agent: {AGENT_SPECS}",
    )
    rate.add_argument(
        "--config", default=DEFAULT_CONFIG, help=f"the ladder to rate against: {CONFIG_HELP} (default ladder)"
    )
    rate.add_argument(
        "--deals",
        type=int,
        action=checked(DEALS),
        help="duplicate deals per opponent (default: the ladder's)",
    )
    rate.add_argument("--json", action="store_true", help="print one JSON object")
    add_run_options(rate)
    rate.set_defaults(func=cmd_rate)

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
    cmp.set_defaults(func=cmd_compare)
