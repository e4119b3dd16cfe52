"""The ``ginenv play`` command: a person against an agent, or a friend, in the browser.

It checks what the server needs before starting it (the agent, the folders, the port), serves the
page (:mod:`ginenv.experiments.play.server`) until Ctrl-C or SIGTERM, and then saves every open game.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ginenv.agents.sandbox import undumpable
from ginenv.experiments.cli.inputs import PACE_MS, PORT, RULES_HELP, checked, within
from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.harness import single_thread_torch
from ginenv.experiments.play.guards import REQUEST_TIMEOUT, check_host_name

#: Where ``ginenv play`` keeps its tables, and where ``ginenv people`` reads them, unless told.
DEFAULT_STATE_DIR = str(Path("~") / ".ginenv" / "tables")


def lan_address(host: str) -> str | None:
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


def cmd_play(args: argparse.Namespace) -> int:
    """``ginenv play``: serve the play page until Ctrl-C or SIGTERM, then save the open games."""
    single_thread_torch()  # one decision at a time; torch's threads would only spin
    # Before the store opens: it holds every table's deal key and the server's secret, which no
    # process of this user (an exec: opponent among them) may read from this one's memory.
    undumpable()
    from ginenv.experiments.play.server import serve_in_background

    autostart, allow_hosts, replay_dir, state_dir = _checked_options(args)
    _check_port(args.host, args.port)
    lan = lan_address(args.host)
    app = _build_app(args, replay_dir, state_dir, autostart)
    previous = _stop_on_sigterm()
    _freeze_loaded()
    server = serve_in_background(
        app,
        host=args.host,
        port=args.port,
        # A friend's device names this machine by its network address in the invitation link.
        allow_hosts=[*allow_hosts, *([lan] if lan is not None else [])],
        request_timeout=args.request_timeout,
        max_connections=args.max_connections,
    )
    try:
        _announce(args, app, server.url, lan, replay_dir, state_dir, autostart)
        while server.thread.is_alive():
            server.thread.join(timeout=0.5)
    except KeyboardInterrupt:
        pass  # Ctrl-C (or SIGTERM) is how the server is meant to stop
    finally:
        saved = _stop_and_save(server, app, previous)
    if saved:
        print(
            f"ginenv play: stopped; {len(saved)} unfinished match(es) saved in {replay_dir} "
            f"(they resume from {state_dir} when the server starts again)"
        )
    else:
        print("ginenv play: stopped")
    return 0


def _checked_options(args: argparse.Namespace) -> tuple[bool, list[str], Path, Path]:
    """Whether the match starts at once, the allowed host names and the two folders (created 0700)."""
    from ginenv.experiments.eval.ladder_config import check_agent_names

    # Named on the command line: that match starts at once; otherwise the page asks first.
    autostart = bool(args.daily or args.opponent is not None or args.rules is not None)
    args.opponent = args.opponent or "normal"
    args.rules = args.rules or "standard"
    check_agent_names([args.opponent])
    try:
        allow_hosts = [check_host_name(name) for name in args.allow_host]
    except ValueError as err:
        raise UsageError(str(err)) from None
    replay_dir = Path(args.replay_dir).expanduser()
    state_dir = Path(args.state_dir).expanduser()
    for flag, folder in (("--replay-dir", replay_dir), ("--state-dir", state_dir)):
        try:
            # Both hold what only the server may read (keys, decks of finished matches): 0700.
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as err:
            raise UsageError(f"{flag} {folder}: cannot create it ({err.strerror or err})") from None
    return autostart, allow_hosts, replay_dir, state_dir


def _check_port(host: str, port: int) -> None:
    """A port that is taken is said plainly, before uvicorn logs its own traceback-like lines.

    The probe binds as uvicorn does (SO_REUSEADDR): a port whose last server just stopped holds
    connections in TIME_WAIT for a minute, which must not read as taken; a listener still does."""
    import socket

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as err:
            raise UsageError(
                f"cannot listen on {host}:{port} ({err.strerror or err}); choose another --port"
            ) from None


def _build_app(args: argparse.Namespace, replay_dir: Path, state_dir: Path, autostart: bool) -> Any:
    """The play server's application for these options (its refusals said as usage errors)."""
    from ginenv.experiments.play.people import warm_up
    from ginenv.experiments.play.server import create_app
    from ginenv.experiments.play.table import PlayError

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
        raise UsageError(str(err)) from None
    warm_up()  # every finished hand's luck is computed as it ends (its person's record)
    return app


def _stop_on_sigterm() -> dict[int, Any]:
    """SIGTERM stops the server the way Ctrl-C does; returns the handlers it replaces."""
    import contextlib
    import signal

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous: dict[int, Any] = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    with contextlib.suppress(ValueError):  # not the main thread: only Ctrl-C stops it
        signal.signal(signal.SIGTERM, stop)
    return previous


def _freeze_loaded() -> None:
    """What was loaded to start (modules, the app, the agents' tables) lives as long as the server:
    frozen, Python's full garbage collections no longer walk it. Measured under the load test
    (benchmarks/bench_play_load.py), each such collection stopped the server for 60-200 ms before
    and 25-117 ms after, the largest part of a move's slowest times."""
    import gc

    gc.collect()
    gc.freeze()


def _announce(
    args: argparse.Namespace,
    app: Any,
    served_at: str,
    lan: str | None,
    replay_dir: Path,
    state_dir: Path,
    autostart: bool,
) -> None:
    """Print where the page is and what it plays, warn when others can reach it, open the browser."""
    import ipaddress
    import socket
    import webbrowser

    url = served_at if ":" not in args.host else served_at.replace(args.host, f"[{args.host}]")
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


def _stop_and_save(server: Any, app: Any, previous: dict[int, Any]) -> list[str]:
    """Stop the server with no signal interrupting it, save every open game, restore the handlers."""
    import contextlib
    import signal

    from ginenv.experiments.play.server import save_open_games

    for sig in previous:
        with contextlib.suppress(ValueError):
            signal.signal(sig, signal.SIG_IGN)  # nothing interrupts the saving
    server.stop()
    # Matches left unfinished are saved too: every game is kept as a replay, every table resumes.
    saved = save_open_games(app)
    for sig, handler in previous.items():
        with contextlib.suppress(ValueError, TypeError):
            signal.signal(sig, handler)
    return saved


def add_parser(sub: Any) -> None:
    """The subcommand ``play`` of the parser's ``sub``."""
    play = sub.add_parser("play", help="play a match against an agent in the browser (a local web page)")
    play.add_argument(
        "--opponent",
        help="the computer player: a registered agent or checkpoint:PATH (default normal); with "
        "--opponent, --rules or --daily the match starts at once, else the page asks first",
    )
    play.add_argument("--rules", help=f"{RULES_HELP} (default standard)")
    play.add_argument(
        "--port",
        type=int,
        action=checked(PORT),
        default=8765,
        help="port to listen on (default 8765; 0: any free)",
    )
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
        default=DEFAULT_STATE_DIR,
        help="where the tables are kept, so that a reload or a restart resumes them "
        "(default ~/.ginenv/tables)",
    )
    play.add_argument(
        "--pace-ms",
        type=int,
        action=checked(PACE_MS),
        default=800,
        help="milliseconds shown per computer move (default 800)",
    )
    play.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        help="the reverse proxies (IPs or networks, comma-separated, or *) whose X-Forwarded-For names "
        "the client (default: none, the header is ignored; each connection is its own address)",
    )
    play.add_argument(
        "--allow-host",
        metavar="NAME",
        action="append",
        default=[],
        help="a name clients may reach the server by besides localhost, 127.0.0.1, [::1] and --host "
        "(repeatable; * for any): requests naming another Host are refused, so that no other web "
        "page can read the API through a name pointed at this machine",
    )
    play.add_argument(
        "--request-timeout",
        metavar="SECONDS",
        type=float,
        action=checked(_request_timeout),
        default=REQUEST_TIMEOUT,
        help=f"seconds a client has to send a whole request before its connection is closed "
        f"(default {REQUEST_TIMEOUT:g})",
    )
    play.add_argument(
        "--max-connections",
        metavar="N",
        type=int,
        action=checked(MAX_CONNECTIONS),
        help="connections held open at once, push streams at most half of them; beyond, the one "
        "waiting longest for a request is closed to make room, or the new one is answered 503 "
        "(default: the open-file limit less a sixteenth of it or 32, whichever is larger)",
    )
    play.set_defaults(func=cmd_play)

    people = sub.add_parser(
        "people", help="how hard each computer level is for the people who played it on a play server"
    )
    people.add_argument(
        "--state-dir",
        default=DEFAULT_STATE_DIR,
        help="the play server's state folder (default ~/.ginenv/tables, ginenv play's)",
    )
    people.add_argument(
        "--rules",
        default="standard",
        help=f"the preset whose hands to report: {RULES_HELP} (default standard)",
    )
    people.add_argument("--out", help="also write people.csv and people.png into this folder")
    people.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    people.set_defaults(func=cmd_people)


def cmd_people(args: argparse.Namespace) -> int:
    """``ginenv people``: the difficulty report of a play server's store (read only)."""
    import json

    from ginenv.agents import available
    from ginenv.experiments.play.difficulty import difficulty, format_report, read_hands, write_report

    from ginenv.rules import PRESETS

    if args.rules not in PRESETS:
        raise UsageError(f"--rules: unknown preset {args.rules!r}; known presets: {', '.join(PRESETS)}")
    report = difficulty(read_hands(Path(args.state_dir), args.rules), args.rules, set(available()))
    if args.out:
        report["written"] = [str(p) for p in write_report(report, Path(args.out))]
    print(json.dumps(report, indent=1) if args.json else format_report(report))
    return 0


MAX_CONNECTIONS = within(8, 1 << 20, " connections")


def _request_timeout(value: float, option: str) -> float:
    if not 0.1 <= value <= 600:
        raise UsageError(f"{option} must be between 0.1 and 600 seconds, got {value:g}")
    return value
