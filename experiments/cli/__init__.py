"""The ``ginenv`` command, the project's front door.

Subcommands: ``ladder`` (the main job: the difficulty-ladder benchmark of the shipped config ``ladder``),
``match A B`` (one head-to-head), ``rate SPEC`` (one agent placed on the standard ladder,
:mod:`ginenv.experiments.eval.rate`), ``compare NEW BASE`` (two runs against one opponent, paired
on their shared deals, :mod:`ginenv.experiments.eval.compare`), ``demo`` (one printed hand or
match), ``replay FILE`` (check a replay), ``train`` (masked PPO,
:mod:`ginenv.experiments.train.ppo`), ``export-sb3 MODEL.zip OUT.pt`` (a Stable-Baselines3
MaskablePPO save file as a checkpoint, :func:`ginenv.experiments.train.sb3.export_maskable_ppo`),
``exploit SPEC`` (a best response trained against an agent, and its margin over it: a lower bound on
the agent's exploitability, :mod:`ginenv.experiments.train.exploit`),
``play`` (a person against an agent in the browser, :mod:`ginenv.experiments.play.server`),
``config`` (list, print or copy out the shipped configs, :mod:`ginenv.experiments.config_loader`).

``ginenv --version`` prints the package's version, ``ginenv.__version__`` (``ginenv 0.2.0.dev0``
while 0.2.0 is in development: docs/versioning.md), and exits 0.

Exit statuses: 0 done; 2 bad arguments, configs, run folders or replays (one line saying what was
wrong and what is allowed, never a traceback); 1 an agent's own code failed (its traceback, then
``agent X raised ...``: not a usage error); 130 interrupted by Ctrl-C, 143 stopped by SIGTERM (one
line; a run folder keeps every finished deal, and the same command resumes it; ``train`` saves a
checkpoint and prints the command that resumes from it, ``ginenv train --resume PATH``).

The package holds one module per command group (``evaluation``: ladder, match, rate, compare;
``games``: demo, replay; ``training``: train, export-sb3, exploit; ``play``; ``configs``), each with its
subcommands' parsers and what they run; ``inputs`` parses the options' values once, as argparse
reads them. This module assembles the parser and maps every way a command can end to its exit
status (:func:`main`).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from typing import NoReturn

from ginenv.experiments.cli import configs, evaluation, games, play_command, training
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.harness import AgentError
from ginenv.experiments.stopping import Stopped, exit_promptly, stop_on_signals

from ginenv import __version__

__all__ = ["build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors on one line (no usage block) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


#: The commands that play games (and so may compile the engine first); compare, config and
#: export-sb3 read files only.
ENGINE_COMMANDS = frozenset({"ladder", "match", "rate", "demo", "train", "exploit", "play", "replay"})


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``ginenv`` command (the subcommands in the order --help lists)."""
    parser = _Parser(prog="ginenv", description="Gin rummy for RL research.")
    # `ginenv --version`: the package's version (ginenv.__version__, which the wheel's metadata reads).
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(
        dest="command",
        required=True,
        metavar="COMMAND",
        parser_class=_Parser,
        help="what to do; ginenv COMMAND -h for its arguments",
    )
    evaluation.add_parsers(sub)  # ladder, match, rate, compare
    games.add_demo_parser(sub)
    training.add_parsers(sub)  # train, export-sb3, exploit
    play_command.add_parser(sub)
    configs.add_parser(sub)
    games.add_replay_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ginenv`` console script (returns the exit status)."""
    from ginenv.replay import ReplayError
    from ginenv.rules import RulesError

    args: argparse.Namespace | None = None
    try:
        # A bad option value stops here, as argparse reads it (ginenv.experiments.cli.inputs).
        args = build_parser().parse_args(argv)
        args.run_folder = None
        if args.command in ENGINE_COMMANDS:
            # Whatever the command runs that is not compiled yet (the engine, an agent's compiled code, the
            # harness's) compiles when first called: the note is said just before (ginenv.compiling).
            from ginenv.compiling import note_once

            note_once()
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
            # A resumed run takes its settings from the checkpoint: no option needs repeating.
            kept = f"{kept}: resume with {shlex.join(['ginenv', 'train', '--resume', stop.resume])}"
        elif kept is not None and stop.rerun:
            kept += ": run the same command again to resume"
        what = "interrupted" if stop.by == "Ctrl-C" else f"stopped by {stop.by}"
        if stop.again:  # a second signal: stopped at once, maybe before anything was saved
            what += " again"
            kept = kept or "nothing saved"
        print(f"ginenv: {what}" + (f"; {kept}" if kept else ""), file=sys.stderr)
        exit_promptly()
        return stop.status
