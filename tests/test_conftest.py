"""tests/conftest.py's cost of each test: GINENV_TEST_CPU's JSON lines, the children's CPU counted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cpu_cost import cpu_seconds

ROOT = Path(__file__).resolve().parents[1]


def test_a_waited_for_child_s_cpu_counts_as_the_children_s() -> None:
    own, children = cpu_seconds()
    subprocess.run([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"], check=True)
    own_after, children_after = cpu_seconds()
    assert children_after - children > 0.05
    assert own_after >= own


def test_each_test_run_writes_one_line_with_its_id_and_costs(tmp_path: Path) -> None:
    out = tmp_path / "cpu.jsonl"
    chosen = "tests/ginenv/test_cards.py::test_parse_cards_reads_the_documented_example"
    env = {**os.environ, "GINENV_TEST_CPU": str(out)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", chosen],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["id"] == chosen
    assert row["self"] > 0 and row["children"] >= 0 and row["wall"] > 0
