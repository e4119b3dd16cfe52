"""The play server's table budget under the attack that filled it: many addresses, each its share.

    python benchmarks/bench_table_budget.py                  # 520 addresses x 10 friend tables, ~90 s
    python benchmarks/bench_table_budget.py --tables 20      # x 20: a second minute, ~3 min
    python benchmarks/bench_table_budget.py --quick --json   # 40 addresses of one /24 x 6 tables, ~15 s
    python benchmarks/bench_table_budget.py --stored 100000  # RSS and latency at 0, 10k, 100k tables

Both modes start ``ginenv play --no-browser --port 0`` (the real uvicorn server, in its own
process, with temporary state and replay folders) on 127.0.0.1, as ``bench_play_load.py`` does;
the clients are httpx's (the ``test`` extra), sending ``Origin`` and ``Content-Type`` as the page does.

- **The attack** (the default). ``--addresses`` loopback addresses (Linux routes all of 127/8 to
  this machine; each request leaves from its address, bound as the client's source), ``--per-block``
  of them in each /24 and the /24s spread over ``--networks`` /16s, each create ``--tables`` friend
  tables (``POST /api/friends``) and join each through its invitation, as the attack did; with
  ``--play`` both seats of each table then make a move. An address keeps to the creation limit
  (10 a minute): a 429 for it waits out the minute and tries again. Meanwhile an honest client
  from another /16 (a new address each time: other people) creates a table every
  ``--honest-every`` seconds. It reports the attack's creations accepted and refused (429 by which
  budget: address, block, network, rate; 503: a full server), the honest creations (exit status 1
  unless every one is 201) and the server's RSS (idle, after the attack, peak).
- **Stored tables** (``--stored N``). The state folder is filled straight through the database with
  N stored friend tables (real records of joined tables with a few moves, four seat tokens each),
  then the server starts on it, at 0, N/10 and N tables in turn; each time it reports the start
  time, the RSS after the requests, and the latency of creating a table (``POST /api/friends``,
  each from an address of its own) and of opening a stored one (``GET /api/seats/{seat}`` of a
  table not in memory: rebuilt from its row).

``--json`` prints the figures as JSON instead of a table. The test
(``tests/experiments/play/test_budget_bench.py``) runs ``--quick`` of both modes.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

#: Seconds for the server to start answering, and to stop after SIGTERM.
START_DEADLINE_S = 120.0
STOP_DEADLINE_S = 60.0
#: The creation limit's window: a refused address waits it out.
RATE_WINDOW_S = 60.0
#: The honest people's /16 (a new address each table), apart from every attacking one.
HONEST_NETWORK = "127.250"
#: What each 429 names, in the server's words: the budget that refused.
REASONS = (
    ("address", re.compile(r"^this address holds")),
    ("block", re.compile(r"^the addresses of \S+/24 hold")),
    ("network", re.compile(r"^the addresses of \S+/16 hold")),
    ("rate", re.compile(r"^too many new tables")),
)


def rss_mib(pid: int, key: str = "VmRSS") -> float | None:
    """A process's resident memory (``VmRSS``) or its peak (``VmHWM``) in MiB, from ``/proc``."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def start_server(state_dir: Path, replay_dir: Path) -> tuple[subprocess.Popen[str], str, float]:
    """``ginenv play --no-browser --port 0`` in its own process: it, its URL, seconds to answer."""
    began = time.monotonic()
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "ginenv.experiments.cli", "play", "--no-browser", "--port", "0",
            "--state-dir", str(state_dir), "--replay-dir", str(replay_dir),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=state_dir.parent,  # not the repository root: its ginenv/ would shadow the installed one
    )  # fmt: skip
    assert proc.stdout is not None
    first = proc.stdout.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)", first)
    if not found:
        proc.kill()
        raise SystemExit(f"bench_table_budget: ginenv play did not start: {first.strip() or proc.wait()}")
    url = f"http://127.0.0.1:{found.group(1)}"
    threading.Thread(target=lambda: [None for _ in proc.stdout or ()], daemon=True).start()  # drain
    while True:
        try:
            httpx.get(f"{url}/api/options", timeout=5).raise_for_status()
            return proc, url, time.monotonic() - began
        except httpx.HTTPError:
            if time.monotonic() - began > START_DEADLINE_S or proc.poll() is not None:
                proc.kill()
                raise SystemExit(f"bench_table_budget: no answer from {url}") from None
            time.sleep(0.1)


def stop_server(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(STOP_DEADLINE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def client_from(url: str, address: str) -> httpx.Client:
    """An HTTP client whose connections leave from ``address``, sending what the page sends."""
    headers = {"Origin": url, "Content-Type": "application/json"}
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=url, transport=transport, headers=headers, timeout=60)


def reason(response: httpx.Response) -> str:
    """Which budget refused a creation (``other`` if none of :data:`REASONS`)."""
    if response.status_code == 503:
        return "full"
    message = str(response.json().get("error", ""))
    return next((name for name, pattern in REASONS if pattern.match(message)), "other")


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


# ---------------------------------------------------------------------------- the attack


def attack_addresses(count: int, per_block: int, networks: int) -> list[str]:
    """``count`` loopback addresses, ``per_block`` a /24, the /24s spread over ``networks`` /16s."""
    found = []
    for i in range(count):
        block = i // per_block
        found.append(f"127.{10 + block % networks}.{block // networks}.{i % per_block + 1}")
    return found


def play_once(c: httpx.Client, seats: list[str], rng: random.Random) -> bool:
    """Each seat of a friend table makes a move (where the turn lets it); True once both did."""
    moved = [False, False]
    for _ in range(6):
        for index, token in enumerate(seats):
            view = c.get(f"/api/seats/{token}").json()
            legal = [a for a in view.get("legal", []) if not a.startswith("knock")]
            if legal and view.get("stage") == "play":
                moved[index] = c.post(
                    f"/api/seats/{token}/action", json={"action": rng.choice(legal)}
                ).is_success
        if all(moved):
            return True
    return False


@dataclass
class Attacker:
    """One attacking address: how many of its tables are settled (made or refused by a budget),
    and when it last asked for one (the rate limit frees its places a minute later)."""

    address: str
    settled: int = 0
    window: float = 0.0


def attack_round(
    url: str, who: Attacker, tables: int, play: bool, counts: dict[str, int], lock: threading.Lock
) -> None:
    """One round of an address: its friend tables, each joined (and played), until they are all
    settled or the creation rate refuses it (the next round waits out the minute)."""
    time.sleep(max(0.0, who.window + RATE_WINDOW_S + 0.5 - time.monotonic()) if who.window else 0.0)
    rng = random.Random(f"{who.address}-{who.settled}")
    with client_from(url, who.address) as c:
        while who.settled < tables:
            who.window = time.monotonic()  # the rate limit's minute runs from the last creation
            r = c.post("/api/friends", json={"name": "A"})
            if r.status_code == 201:
                host = r.json()
                invite = host["view"]["invite"].removeprefix("/#join=")
                joined = c.post("/api/friends/join", json={"invite": invite, "name": "B"})
                both = play and joined.is_success and play_once(c, [host["seat"], joined.json()["seat"]], rng)
                with lock:
                    counts["accepted"] += 1
                    counts["joined"] += joined.is_success
                    counts["played"] += both
                who.settled += 1
                continue
            why = reason(r)
            with lock:
                counts[why] = counts.get(why, 0) + 1
            if why == "rate":
                return  # this minute's creations are spent
            who.settled += 1  # a budget refused it: this table is not to be had


def honest(url: str, every: float, stop: threading.Event, out: list[tuple[int, float, str]]) -> None:
    """Other people, one table each, from :data:`HONEST_NETWORK`, every ``every`` seconds."""
    n = 0
    while not stop.is_set():
        address = f"{HONEST_NETWORK}.{n // 250}.{n % 250 + 1}"
        with client_from(url, address) as c:
            began = time.perf_counter()
            r = c.post("/api/friends", json={"name": "Honest"})
            ms = (time.perf_counter() - began) * 1000
            out.append((r.status_code, ms, "" if r.is_success else str(r.json().get("error", ""))))
        n += 1
        stop.wait(every)


def run_attack(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    proc, url, started = start_server(folder / "tables", folder / "replays")
    try:
        idle = rss_mib(proc.pid)
        counts: dict[str, int] = {"accepted": 0, "joined": 0, "played": 0}
        lock = threading.Lock()
        stop = threading.Event()
        honest_out: list[tuple[int, float, str]] = []
        watcher = threading.Thread(target=honest, args=(url, args.honest_every, stop, honest_out))
        watcher.start()
        pending = [Attacker(a) for a in attack_addresses(args.addresses, args.per_block, args.networks)]
        began = time.monotonic()
        with ThreadPoolExecutor(args.workers) as pool:
            while pending:  # rounds: each address's next one once its minute is over, in that order
                pending.sort(key=lambda who: who.window)
                for done in [
                    pool.submit(attack_round, url, who, args.tables, args.play, counts, lock)
                    for who in pending
                ]:
                    done.result()
                pending = [who for who in pending if who.settled < args.tables]
        seconds = time.monotonic() - began
        stop.set()
        watcher.join()
        after = rss_mib(proc.pid)
        peak = rss_mib(proc.pid, "VmHWM")
    finally:
        stop_server(proc)
    codes = [code for code, _, _ in honest_out]
    refused = {k: v for k, v in counts.items() if k not in ("accepted", "joined", "played")}
    return {
        "mode": "attack",
        "addresses": args.addresses,
        "per_block": args.per_block,
        "networks": args.networks,
        "tables_each": args.tables,
        "attack_seconds": round(seconds, 1),
        "attack": {"asked": args.addresses * args.tables, **counts, "refused": refused},
        "honest": {
            "asked": len(codes),
            "created": codes.count(201),
            "refused": [m for _, _, m in honest_out if m][:5],
            "latency_ms": {
                "p50": percentile([ms for _, ms, _ in honest_out], 0.5),
                "max": percentile([ms for _, ms, _ in honest_out], 1.0),
            },
        },
        "server_rss_mib": {"idle": idle, "after": after, "peak": peak},
        "server_start_s": round(started, 2),
        "ok": bool(codes) and all(code == 201 for code in codes),
    }


# ---------------------------------------------------------------------------- stored tables


def sample_records(count: int) -> list[dict[str, Any]]:
    """Records of real joined friend tables with a few moves of each seat (what a stored table holds)."""
    from ginenv.experiments.play.table import Table

    records = []
    rng = random.Random(0)
    for _ in range(count):
        table = Table(None, "standard", names=["Host", ""], replay_dir=None)
        table.join("Guest")
        for _ in range(rng.randrange(2, 12)):
            seat = table.env.hand.player
            legal = [a for a in table.view(seat, (True, True))["legal"] if not a.startswith("knock")]
            if table.stage != "play" or not legal:
                break
            table.act(rng.choice(legal), seat)
        records.append(table.to_record())
    return records


def fill(state_dir: Path, upto: int, records: list[dict[str, Any]]) -> list[str]:
    """Store friend tables in ``state_dir``'s database until it holds ``upto``; returns the first
    table's seat-0 tokens, one per 1000 tables (to open later)."""
    import secrets

    from ginenv.experiments.play.db import DB_FILE, ROLES, Database, table_row

    db = Database(state_dir / DB_FILE)
    try:
        have = int(db.read("SELECT count(*) FROM tables")[0][0])
        now = time.time()
        with db.transaction() as conn:
            for n in range(have, upto):
                record = dict(records[n % len(records)], id=f"stored{n:010d}")
                row = table_row(
                    record, client=f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}",
                    block=f"10.{n // 65536 % 256}.{n // 256 % 256}.0/24",
                    network=f"10.{n // 65536 % 256}.0.0/16", touched=now - n % 3600, changed=now - 3600,
                )  # fmt: skip
                conn.execute(
                    f"INSERT INTO tables ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                    tuple(row.values()),
                )
                conn.executemany(
                    "INSERT INTO seats (token, table_id, role) VALUES (?, ?, ?)",
                    [(f"{role}-{n}-{secrets.token_hex(8)}", row["id"], role) for role in ROLES],
                )
        rows = db.read("SELECT token FROM seats WHERE role = 'seat0' ORDER BY table_id LIMIT 1000")
        return [str(r[0]) for r in rows]
    finally:
        db.close()


def measure_at(folder: Path, stored: int, requests: int) -> dict[str, Any]:
    """Start the server on ``stored`` tables; time creations and openings; its RSS after."""
    proc, url, started = start_server(folder / "tables", folder / "replays")
    try:
        from ginenv.experiments.play.db import DB_FILE, Database

        db = Database(folder / "tables" / DB_FILE)
        tokens = [
            str(r[0])
            for r in db.read(
                "SELECT token FROM seats WHERE role = 'seat0' ORDER BY random() LIMIT ?", (requests,)
            )
        ]
        db.close()
        create, open_ = [], []
        for n in range(requests):
            with client_from(url, f"{HONEST_NETWORK}.{n // 250}.{n % 250 + 1}") as c:
                began = time.perf_counter()
                r = c.post("/api/friends", json={"name": "New"})
                create.append((time.perf_counter() - began) * 1000)
                assert r.status_code == 201, r.text
                if n < len(tokens):
                    began = time.perf_counter()
                    r = c.get(f"/api/seats/{tokens[n]}")
                    open_.append((time.perf_counter() - began) * 1000)
                    assert r.status_code == 200, r.text
        rss = rss_mib(proc.pid)
    finally:
        stop_server(proc)
    size = sum(p.stat().st_size for p in (folder / "tables").glob("tables.sqlite3*"))
    return {
        "stored": stored,
        "start_s": round(started, 2),
        "rss_mib": rss,
        "create_ms": {"p50": percentile(create, 0.5), "p99": percentile(create, 0.99)},
        "open_ms": {"p50": percentile(open_, 0.5), "p99": percentile(open_, 0.99)},
        "db_mib": round(size / 2**20, 1),
    }


def run_stored(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    (folder / "tables").mkdir(mode=0o700)
    records = sample_records(50)
    sizes = [len(json.dumps(r, separators=(",", ":"))) for r in records]
    steps = []
    for upto in sorted({0, args.stored // 10, args.stored}):
        began = time.monotonic()
        fill(folder / "tables", upto, records)
        filled = time.monotonic() - began
        steps.append({**measure_at(folder, upto, args.requests), "fill_s": round(filled, 1)})
    ok = all(s["rss_mib"] is not None for s in steps)
    return {"mode": "stored", "record_bytes_mean": round(sum(sizes) / len(sizes)), "steps": steps, "ok": ok}


# ---------------------------------------------------------------------------- output


def print_table(f: dict[str, Any]) -> None:
    rows: list[tuple[str, str]]
    if f["mode"] == "attack":
        a, h, rss = f["attack"], f["honest"], f["server_rss_mib"]
        refused = ", ".join(f"{k} {v}" for k, v in sorted(a["refused"].items())) or "none"
        rows = [
            ("attack", f"{f['addresses']} addresses, {f['per_block']} a /24, over {f['networks']} /16s, "
                       f"{f['tables_each']} tables each ({f['attack_seconds']} s)"),
            ("attack creations accepted",
             f"{a['accepted']} of {a['asked']} (joined {a['joined']}, played {a['played']})"),
            ("attack creations refused", refused),
            ("honest creations 201", f"{h['created']} of {h['asked']} (p50 {h['latency_ms']['p50']} ms, "
                                     f"max {h['latency_ms']['max']} ms)"),
            ("server RSS", f"idle {rss['idle']} MiB, after {rss['after']} MiB, peak {rss['peak']} MiB"),
        ]  # fmt: skip
    else:
        rows = [("mean record", f"{f['record_bytes_mean']} bytes")]
        for s in f["steps"]:
            rows.append((
                f"{s['stored']} stored tables",
                f"RSS {s['rss_mib']} MiB, start {s['start_s']} s, create p50/p99 {s['create_ms']['p50']}/"
                f"{s['create_ms']['p99']} ms, open p50/p99 {s['open_ms']['p50']}/{s['open_ms']['p99']} ms, "
                f"db {s['db_mib']} MiB",
            ))  # fmt: skip
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    print("ok" if f["ok"] else "FAILED")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--addresses", type=int, default=520, help="attacking addresses (default 520)")
    parser.add_argument("--per-block", type=int, default=20, help="attacking addresses a /24 (default 20)")
    parser.add_argument(
        "--networks", type=int, default=2, help="/16s the attack's /24s spread over (default 2)"
    )
    parser.add_argument(
        "--tables", type=int, default=10, help="friend tables each address asks for (default 10: a minute's)"
    )
    parser.add_argument("--play", action="store_true", help="both seats of each attacking table move once")
    parser.add_argument("--honest-every", type=float, default=1.0, help="seconds between honest creations")
    parser.add_argument("--workers", type=int, default=16, help="attacking addresses at work at once")
    parser.add_argument(
        "--stored", type=int, default=0, help="measure at 0, N/10 and N stored tables instead"
    )
    parser.add_argument("--requests", type=int, default=50, help="creations and openings timed per step")
    parser.add_argument("--quick", action="store_true", help="a short run (for the test)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        # One /24 of 40 addresses, 6 tables each: 240 asked of its block's 200.
        args.addresses, args.per_block, args.networks, args.tables, args.requests = 40, 40, 1, 6, 10
        args.stored = min(args.stored, 2000)
    folder = Path(tempfile.mkdtemp(prefix="bench-table-budget-"))
    try:
        figures = run_stored(args, folder) if args.stored else run_attack(args, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print_table(figures)
    return 0 if figures["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
