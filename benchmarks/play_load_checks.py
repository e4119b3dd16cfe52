"""What the play server's load test (``bench_play_load.py``) checks and prints, apart from Locust.

- **Leaks.** :func:`seen_of` reduces a seat's view to what it shows (:class:`Seen`); :func:`leaks`
  compares the two seats' views of one version: while a hand is in play, a view may name no card
  of the other hand except those the seat saw the other take from the discard pile.
- **The creation limit.** :func:`over_limit` counts creations accepted beyond the limit in any window.
- **The moves** both seats play (:func:`choose_move`) and the loopback addresses they come from.
- **The server process**: its memory and CPU time from ``/proc``.
- **The report**: :func:`problems` (the checks that failed) and :func:`print_table`.

No import of gevent or Locust here: the test imports this module into pytest's process.
"""

from __future__ import annotations

import os
import random
import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The aims of the load test on the 2-core development machine.
AIM_TABLES = 200
AIM_MOVES_PER_S = 50.0
AIM_P99_MS = 250.0
#: New tables one address may create per minute: the server's ``CREATE_PER_MINUTE`` (the test checks
#: that the two agree).
CREATE_LIMIT = 10
CREATE_WINDOW_S = 60.0
#: A card name as the play API writes it, and the fields holding random keys (which may spell one).
CARD_TOKEN = re.compile(r"\b([A2-9TJQK][scdh])\b")
OPAQUE_FIELDS = frozenset({"id", "tag", "table", "invite", "watch", "replay"})

# ---------------------------------------------------------------------------- what a view tells


def card_names(value: Any) -> set[str]:
    """Every card name a JSON value mentions (strings and keys), except inside random keys."""
    if isinstance(value, str):
        return set(CARD_TOKEN.findall(value))
    if isinstance(value, dict):
        found: set[str] = set()
        for k, v in value.items():
            if not (k in OPAQUE_FIELDS and isinstance(v, str)):
                found |= card_names(k) | card_names(v)
        return found
    if isinstance(value, list):
        return set().union(*(card_names(v) for v in value))
    return set()


@dataclass(frozen=True)
class Seen:
    """What one view of a seat shows: the stage, every card it names, the seat's own hand, and the
    cards the seat knows the other holds (taken from the discard pile)."""

    stage: str
    named: frozenset[str]
    hand: frozenset[str]
    known: frozenset[str]


def seen_of(view: dict[str, Any]) -> Seen:
    """The :class:`Seen` of a seat's view (as ``GET /api/seats/{seat}`` and its stream give it)."""
    hand = view.get("hand") or {}
    return Seen(
        stage=str(view.get("stage")),
        named=frozenset(card_names(view)),
        hand=frozenset(hand.get("cards", [])),
        known=frozenset(view.get("opponent_known") or []),
    )


def leaks(views: tuple[dict[int, Seen], dict[int, Seen]]) -> list[str]:
    """The cards a seat was shown that it may not know: for every version both seats have a view of,
    while the hand is in play, the cards of the other hand that the seat's view names although they
    are not among those it knows the other took. ``views[seat][version]``."""
    found = []
    for seat in (0, 1):
        mine, theirs = views[seat], views[1 - seat]
        for version in sorted(mine.keys() & theirs.keys()):
            a, b = mine[version], theirs[version]
            if a.stage != "play" or b.stage != "play":
                continue  # a showdown shows both hands to both seats
            bad = a.named & (b.hand - a.known)
            if bad:
                found.append(f"seat {seat} at version {version} was shown {' '.join(sorted(bad))}")
    return found


def over_limit(times: Iterable[float], limit: int, window: float, slack: float = 0.5) -> int:
    """How many of the accepted events at ``times`` (seconds) came when ``limit`` others had already
    been accepted in the ``window`` before (``slack``: the client's clock against the server's)."""
    accepted = sorted(times)
    return sum(1 for i in range(limit, len(accepted)) if accepted[i] - accepted[i - limit] < window - slack)


def choose_move(view: dict[str, Any], rng: random.Random) -> str:
    """A legal move from a seat's view: knock mostly when it can, else mostly the discard that keeps
    the least deadwood, else any legal move (quick hands, so showdowns and new deals happen)."""
    legal = view["legal"]
    knocks = [a for a in legal if a.startswith("knock") or a == "big_gin"]
    if knocks and rng.random() < 0.8:
        return rng.choice(knocks)
    hints = view.get("discard_hints") or {}
    if hints and rng.random() < 0.7:
        best = min(hints, key=lambda card: hints[card])
        if f"discard {best}" in legal:
            return f"discard {best}"
    return rng.choice([a for a in legal if a not in knocks] or legal)


def host_address(index: int) -> str:
    """The loopback address table ``index``'s host connects from (127.1.x.y)."""
    return f"127.1.{index // 250}.{index % 250 + 1}"


def guest_address(index: int) -> str:
    """The loopback address table ``index``'s guest connects from (127.2.x.y)."""
    return f"127.2.{index // 250}.{index % 250 + 1}"


def percentile(values: list[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) of ``values``, linear between ranks; None if empty."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=1000, method="inclusive")[max(0, round(q * 10) - 1)]


def rss_mib(pid: int, key: str = "VmRSS") -> float | None:
    """A process's resident memory (``VmRSS``) or its peak (``VmHWM``) in MiB, from ``/proc``."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def sched_seconds(pid: int) -> tuple[float, float]:
    """Seconds a process's threads have run on a CPU, and waited runnable for one (the kernel's
    ``/proc/PID/task/*/schedstat``; zeros where it cannot be read)."""
    run = wait = 0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            fields = (task / "schedstat").read_text().split()
        except OSError:
            continue
        run, wait = run + int(fields[0]), wait + int(fields[1])
    return run / 1e9, wait / 1e9


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user and system) a process has used, from ``/proc/PID/stat``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------------------- the report


def rounded(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def problems(f: dict[str, Any]) -> list[str]:
    """What went wrong in a run's figures (empty: every check held)."""
    out = []
    c = f["creations"]
    if f["tables"] < f["tables_asked"]:
        out.append(f"only {f['tables']} of {f['tables_asked']} tables were seated")
    if f["missed"]:
        out.append(f"{f['missed']} change(s) never reached the other seat's stream")
    if f["streams_dropped"] or f["load_streams_at_end"] != 2 * f["load_tables"]:
        out.append(f"{f['streams_dropped']} stream(s) closed early")
    probe = f["probe"]
    if probe.get("error") or probe.get("errors") or probe.get("missed") or not probe.get("moves"):
        why = probe.get("error") or (probe.get("errors") or [""])[0]
        out.append(f"the latency probe failed ({probe.get('moves', 0)} moves timed): {why}")
    if f["moves_refused"]:
        out.append(f"{f['moves_refused']} legal move(s) refused")
    if f["lost"]:
        out.append(f"{len(f['lost'])} seat(s) lost: {f['lost'][0]}")
    if f["leaks"]:
        out.append(f"{len(f['leaks'])} leak(s): {f['leaks'][0]}")
    if f["live_replays"]:
        out.append(f"replays of live matches listed: {f['live_replays'][0]}")
    if c["hosts_refused"]:
        out.append(f"{c['hosts_refused']} table creation(s) of separate addresses refused")
    if c["flood_over_limit"] or c["flood_other"] or c["flood_accepted"] > c["flood_allowed"]:
        out.append(
            f"the flood was not held to {CREATE_LIMIT} a minute: {c['flood_accepted']} accepted, "
            f"other answers {c['flood_other']}"
        )
    if not c["flood_sent"]:
        out.append("the flood sent nothing")
    if f["server_exit"] != 0:
        out.append(f"the server exited {f['server_exit']}: {f['server_last_line']}")
    return out


def print_table(f: dict[str, Any]) -> None:
    """The figures as a table, with the aims beside them."""
    lat, rss, c = f["latency_ms"], f["server_rss_mib"], f["creations"]
    probe = f["probe"].get("latency_ms", {"p50": None, "p99": None, "max": None})

    def ms(x: float | None) -> str:
        return "-" if x is None else f"{x:.0f} ms"

    rows = [
        (
            "friend tables",
            f"{f['tables']} of {f['tables_asked']} (seated in {f['ramp_s']} s)",
            f"{AIM_TABLES}",
        ),
        (
            "open event streams",
            f"{f['streams_open']['min']} (at the end {f['streams_open']['at_end']})",
            f"{2 * AIM_TABLES}",
        ),
        (
            "moves a second, all tables",
            f"{f['moves_per_second']} ({f['moves']} in {f['seconds']} s)",
            f"{AIM_MOVES_PER_S:g}",
        ),
        (
            f"move -> other stream, probe ({f['probe'].get('moves', 0)} moves) p50",
            ms(probe["p50"]),
            "",
        ),
        ("move -> other stream, probe p99", ms(probe["p99"]), f"< {AIM_P99_MS:g} ms"),
        ("move -> other stream, probe max", ms(probe["max"]), ""),
        (
            "move -> other stream, as Locust saw it p50 / p99",
            f"{ms(lat['p50'])} / {ms(lat['p99'])}",
            "",
        ),
        (
            "move answered p50 / p99",
            f"{ms(f['move_answer_ms']['p50'])} / {ms(f['move_answer_ms']['p99'])}",
            "",
        ),
        ("server RSS idle / start / peak", f"{rss['idle']} / {rss['start']} / {rss['high_water']} MiB", ""),
        (
            "server CPU / load generator CPU",
            f"{f['server_cpu_percent']} % / {f['load_generator_cpu_percent']} % of a core",
            "",
        ),
        (
            "server threads: ran / waited for a CPU",
            f"{f['server_sched_s']['ran']} s / {f['server_sched_s']['waited']} s",
            "",
        ),
        (
            "load generator late to wake p50 / p99",
            f"{ms(f['load_generator_lag_ms']['p50'])} / {ms(f['load_generator_lag_ms']['p99'])}",
            "",
        ),
        (
            "creations by hosts",
            f"{c['hosts_accepted']} accepted, {c['hosts_refused']} refused",
            "all accepted",
        ),
        (
            "flood from one address",
            f"{c['flood_accepted']} accepted, {c['flood_refused']} refused (429) of {c['flood_sent']}",
            f"<= {c['flood_allowed']}",
        ),
        ("hands dealt / matches over", f"{f['hands_dealt']} / {f['matches_over']}", ""),
        ("changes missed by a stream", f"{f['missed']}", "0"),
        ("moves resent after a broken connection", f"{f['moves_resent']}", ""),
        (
            "seats lost / leaks / live replays",
            f"{len(f['lost'])} / {len(f['leaks'])} / {len(f['live_replays'])}",
            "0 / 0 / 0",
        ),
        ("server exit", f"{f['server_exit']}", "0"),
    ]
    width = max(len(r[0]) for r in rows)
    value = max(len(r[1]) for r in rows)
    load = " / ".join(f"{x:g}" for x in f["load_average"])
    print(
        f"ginenv play under load: Locust {f['locust']}, {f['cores']} cores (load average {load} as the "
        f"window began / ended), {f['seconds']} s measured"
    )
    for what, held, aim in rows:
        print(f"  {what:<{width}}  {held:<{value}}  {aim}")
    for line in f["problems"]:
        print(f"  FAILED: {line}")
    if f["errors"]:
        print("  first errors:")
        for line in f["errors"][:5]:
            print(f"    {line}")
