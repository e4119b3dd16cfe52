"""The training commands of ``ginenv``: ``train`` (masked PPO, :mod:`ginenv.experiments.train.ppo`),
``export-sb3`` (a Stable-Baselines3 MaskablePPO save file as a checkpoint) and ``exploit`` (a best
response to an agent and its margin, :mod:`ginenv.experiments.train.exploit`)."""

from __future__ import annotations

import argparse
from typing import Any

from ginenv.agents.specs import CHECKPOINT_PREFIX
from ginenv.experiments.cli.configs import needs_clause
from ginenv.experiments.cli.inputs import CONFIG_HELP, DEFAULT_TRAIN_CONFIG, HANDS, WORKERS, checked
from ginenv.experiments.errors import UsageError


def parse_threads(text: str, option: str) -> int | str:
    """A ``--threads`` value: ``auto`` or an integer >= 0 (0: torch's default); else UsageError."""
    from ginenv.agents.neural.threads import check_threads_setting

    value: int | str = int(text) if text.strip().isascii() and text.strip().isdigit() else text
    problem = check_threads_setting(value)
    if problem is not None:
        raise UsageError(f"{option} must be {problem}")
    return value


#: The agents ``ginenv exploit`` takes, in words: ginenv.experiments.train.exploit.EXPLOITABLE_KINDS,
#: written out so that building the parser imports no trainer (tests/experiments/train/test_exploit.py
#: checks the two agree, and that they name every compiled policy of the engine's table).
EXPLOIT_SPECS = (
    "greedy, random, hard, easy, normal, expert, master, master@worlds=N, neural or checkpoint:PATH "
    "(a policy checkpoint)"
)
#: The options of ``train`` that replace the config's setting of the same name (typed by argparse).
TRAIN_FLAGS = ("seed", "total_steps", "num_envs", "experiment", "device", "backend", "workers")


def cmd_train(args: argparse.Namespace) -> int:
    """``ginenv train``: load the settings (config, ``--set``, the flags), check them, train."""
    from ginenv.agents.neural import CheckpointError
    from ginenv.experiments.config_loader import apply_overrides, load_dataclass_yaml, replace_checked
    from ginenv.experiments.train.ppo import Args, train
    from ginenv.experiments.train.training_checkpoints import resumed_args, training_args

    saved = None
    if args.resume is not None:
        # A resumed run is the same run: the checkpoint's settings, a few of them changeable.
        try:
            saved = training_args(args.resume)
        except CheckpointError as err:
            raise UsageError(f"--resume: {err}") from None
    config = args.config or (None if saved else DEFAULT_TRAIN_CONFIG)
    spec = load_dataclass_yaml(config, Args) if config else (saved or Args())
    spec = apply_overrides(spec, list(args.set or []))
    # The flags are typed already (argparse): they replace the settings without a second parse.
    flags: dict[str, Any] = {n: getattr(args, n) for n in TRAIN_FLAGS if getattr(args, n) is not None}
    if args.quiet:
        flags["progress"] = False
    spec = replace_checked(spec, flags, "--set")
    if saved is not None:
        sources = {
            item.partition("=")[0].strip().replace("-", "_"): f"--set {item}" for item in args.set or []
        }
        sources.update({n: f"--{n.replace('_', '-')} {v}" for n, v in flags.items() if n != "progress"})
        spec = resumed_args(saved, spec, sources, f"--config {config}")
    try:
        spec.validate()
    except UsageError as err:
        # A shipped config that starts from a file no install brings: say what makes it, in the line.
        raise UsageError(f"{err}{needs_clause(config, str(err))}") from None
    if args.branch is not None and spec.init is not None:
        raise UsageError(f"--branch {args.branch} continues that run's network: drop init ({spec.init})")
    try:
        run_dir = train(spec, resume=args.resume, branch=args.branch)
    except CheckpointError as err:
        raise UsageError(f"{'--resume' if args.resume else '--branch'}: {err}") from None
    print(f"ginenv train: done; TensorBoard scalars and checkpoints in {run_dir}")
    print(
        f"  play it: ginenv match {CHECKPOINT_PREFIX}{run_dir / 'checkpoints' / 'latest.pt'} hard --hands 400"
    )
    return 0


def cmd_export_sb3(args: argparse.Namespace) -> int:
    """``ginenv export-sb3 MODEL.zip OUT.pt``: write a MaskablePPO save file as a checkpoint."""
    try:
        from ginenv.experiments.train.sb3 import SB3ExportError, export_maskable_ppo
    except ImportError as err:
        raise UsageError(
            f"export-sb3 needs stable-baselines3, the sb3 extra (pip install '.[sb3]' in a checkout): {err}"
        ) from None
    try:
        policy = export_maskable_ppo(args.model, args.out, activation=args.activation)
    except SB3ExportError as err:
        raise UsageError(str(err)) from None
    except OSError as err:
        raise UsageError(f"cannot write {args.out}: {err.strerror or err}") from None
    print(f"ginenv export-sb3: wrote {args.out} (hidden layers {list(policy.hidden)}, {policy.activation})")
    print(f"  play it: ginenv match {CHECKPOINT_PREFIX}{args.out} hard --hands 400")
    return 0


def cmd_exploit(args: argparse.Namespace) -> int:
    """``ginenv exploit SPEC``: train a best response to SPEC, then its margin over SPEC
    (:mod:`ginenv.experiments.train.exploit`)."""
    import contextlib
    import json
    import sys

    from ginenv.experiments.eval.report import strict_json
    from ginenv.experiments.train.exploit import exploit, format_exploit, league_member

    league_member(args.agent)  # refuse an agent the batched engine cannot step before any work
    out = args.out or f"results/exploit-{args.agent.replace('/', '_').replace(':', '_')}"
    # --json: stdout holds the one JSON object; training's own lines go to stderr.
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        result = exploit(
            args.agent,
            args.steps,
            args.seed,
            args.hands,
            out,
            args.init,
            progress=not (args.quiet or args.json),
            threads=args.threads,
        )
    if args.json:
        print(json.dumps(strict_json(result), indent=1, allow_nan=False))
        return 0
    print(format_exploit(result))
    return 0


def add_parsers(sub: Any) -> None:
    """The subcommands ``train``, ``export-sb3`` and ``exploit`` of the parser's ``sub``."""
    tr = sub.add_parser(
        "train", help="train a policy with masked PPO against a league (TensorBoard in runs/)"
    )
    tr.add_argument(
        "--config",
        help=f"{CONFIG_HELP} (default {DEFAULT_TRAIN_CONFIG}; with --resume, the checkpoint's settings)",
    )
    tr.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a config setting (value read as YAML, e.g. --set hidden=[64,64]); repeatable",
    )
    start = tr.add_mutually_exclusive_group()
    start.add_argument(
        "--resume",
        metavar="PATH",
        help="continue the run saved in this checkpoint, with its settings; only "
        "total_steps, eval_*, checkpoint_every, progress, threads, device, backend and runs_dir "
        "may be changed (anything else is refused)",
    )
    start.add_argument(
        "--branch",
        metavar="PATH",
        help="start a new run (its own folder) from this training checkpoint's network, optimizer "
        "and progress, with the settings of --config and --set: a run continued with other settings",
    )
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
        "--workers",
        type=int,
        action=checked(WORKERS),
        help="rollout workers, each stepping num_envs / workers hands (default 1)",
    )
    tr.add_argument("--quiet", action="store_true", help="no progress bar")
    tr.set_defaults(func=cmd_train)

    ex = sub.add_parser(
        "exploit",
        help="train a best response to an agent (PPO against it alone) and report its margin: "
        "a lower bound on the agent's exploitability",
    )
    ex.add_argument("agent", metavar="SPEC", help=f"an agent the batched engine steps: {EXPLOIT_SPECS}")
    ex.add_argument("--steps", type=int, default=2_000_000, help="env steps to train (default 2000000)")
    ex.add_argument("--seed", type=int, default=0, help="training and deal seed (default 0)")
    ex.add_argument(
        "--hands",
        type=int,
        action=checked(HANDS),
        default=2000,
        help="duplicate hands measured (default 2000)",
    )
    ex.add_argument(
        "--out", help="folder of the training run and its evaluation (default results/exploit-SPEC)"
    )
    ex.add_argument(
        "--init",
        metavar="PATH",
        help="start the best response from this policy checkpoint; none: from scratch (default: the "
        "shipped network where it reads the agent's inputs, a bound that means something in fewer steps)",
    )
    ex.add_argument(
        "--threads",
        action=checked(parse_threads),
        metavar="auto|N",
        help="torch threads while training (default: the ppo config's, auto: as many as the cores other "
        "processes leave free, re-checked as it trains, so 1 beside a busy process); N: exactly N",
    )
    ex.add_argument("--json", action="store_true", help="print one JSON object")
    ex.add_argument("--quiet", action="store_true", help="no progress bars")
    ex.set_defaults(func=cmd_exploit)

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
    exp.set_defaults(func=cmd_export_sb3)
