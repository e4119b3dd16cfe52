"""``benchmarks/bench_contention.py``, training beside a busy process, run whole in a tiny configuration.

Its --record run on an idle machine gives the training guide its table, so what must never
happen is a run that dies on the way or leaves its competitor spinning: these tests run it start to
finish with a handful of slots, check its rows and ratio lines, and check that the competitor is
gone after its block, however the block ends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--updates", "1", "--num-envs", "8", "--num-steps", "8", "--rounds", "1"]


@pytest.fixture
def bench():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_contention

        yield bench_contention
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: nothing to choose between")
def test_a_tiny_run_prints_every_row_and_both_ratios(  # type: ignore[no-untyped-def]
    bench, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import torch
    from ginenv.agents.neural.threads import use_threads

    before = torch.get_num_threads()
    out = tmp_path / "contention.json"
    try:
        # in this process: the engine is compiled once for the whole test run
        assert bench.main([*TINY, "--json", str(out)]) == 0
    finally:
        use_threads(before)
    report = json.loads(out.read_text())
    rows = [(r["phase"], r["threads"]) for r in report["rows"]]
    assert rows == [("busy", "auto"), ("busy", 1), ("busy", 2), ("quiet", "auto"), ("quiet", 2)]
    assert all(r["steps_per_s"] > 0 for r in report["rows"])
    # the competitor's core shows in the busy rows' other load
    assert all(r["other_load"] > 0.5 for r in report["rows"] if r["phase"] == "busy")
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("busy:  default") and "(target >= 0.85)" in line for line in lines)
    assert any(line.startswith("quiet: default") and "(target >= 0.90)" in line for line in lines)


def test_the_competitor_is_killed_however_its_block_ends(bench) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RuntimeError), bench.competitor(-1) as proc:
        assert proc.poll() is None  # running
        raise RuntimeError("a row failed")
    assert proc.poll() is not None


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_competitor_ends_itself_once_its_parent_is_gone(bench) -> None:  # type: ignore[no-untyped-def]
    # a parent that starts the loop and exits at once, as a killed benchmark would
    start = (
        f"import subprocess, sys; print(subprocess.Popen([sys.executable, '-c', {bench.BUSY_LOOP!r}, '-1', "
    )
    start += "str(__import__('os').getpid())]).pid)"
    pid = int(subprocess.run([sys.executable, "-c", start], capture_output=True, text=True).stdout)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not gone(pid):
        time.sleep(0.05)
    assert gone(pid)


def gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie no one reaped yet counts)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_ratios_take_the_better_pinned_count_and_the_rounds_mean(bench) -> None:  # type: ignore[no-untyped-def]
    rows = [
        {"phase": "busy", "threads": "auto", "steps_per_s": 12.0},
        {"phase": "busy", "threads": 1, "steps_per_s": 13.0},
        {"phase": "busy", "threads": 1, "steps_per_s": 11.0},
        {"phase": "busy", "threads": 2, "steps_per_s": 1.0},
        {"phase": "quiet", "threads": "auto", "steps_per_s": 18.0},
        {"phase": "quiet", "threads": 2, "steps_per_s": 20.0},
    ]
    assert bench.ratios(rows) == {"busy": 1.0, "quiet": 0.9}
    busy, quiet = bench.summary(rows)
    assert busy == "busy:  default 12 / threads=1 12 (the better pinned) = 1.00 (target >= 0.85) ok"
    assert quiet == "quiet: default 18 / threads=2 20 = 0.90 (target >= 0.90) ok"
    assert bench.figures(rows)["contention.busy_threads_2_steps_per_s"] == (1.0, "rate")
    assert bench.row_order(("auto", 1, 2), 1) == (2, 1, "auto")
