"""The table budget's benchmark (benchmarks/bench_table_budget.py), run whole in its quick modes.

The script runs as it does from the command line, in its own process, against the real server
(``ginenv play --port 0``): the attack from 40 loopback addresses of one /24, 6 friend tables each,
every one joined, while honest people create tables from another /16; and the stored mode at 0,
200 and 2000 tables written straight into the database. Its figures are asserted from its JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "benchmarks" / "bench_table_budget.py"


def _run(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--json", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def test_the_quick_attack_is_held_to_its_block_and_every_honest_creation_is_201() -> None:
    f = _run()
    attack, honest = f["attack"], f["honest"]
    assert attack["asked"] == 240 and attack["accepted"] == attack["joined"] == 200
    assert attack["refused"] == {"block": 40}
    assert honest["asked"] >= 1 and honest["created"] == honest["asked"] and honest["refused"] == []
    assert f["ok"] and all(v is not None and v > 0 for v in f["server_rss_mib"].values())


def test_the_quick_stored_mode_starts_the_server_on_each_count_and_opens_stored_tables() -> None:
    f = _run("--stored", "100000")
    steps = f["steps"]
    assert [s["stored"] for s in steps] == [0, 200, 2000] and f["ok"]
    assert steps[0]["open_ms"]["p50"] is None  # nothing stored to open
    assert all(s["open_ms"]["p50"] is not None and s["create_ms"]["p99"] is not None for s in steps[1:])
    assert steps[-1]["db_mib"] > steps[0]["db_mib"] and f["record_bytes_mean"] > 100
