"""``benchmarks/bench_gpu.py``, the GPU rows of the speed page, run on the CPU in a tiny configuration.

The script is meant for a lent GPU machine with minutes to spare, so the one thing that must never
happen there is a failure it could have shown here: these tests run it whole (every kind of row) on
the CPU with a handful of slots, and check the file the speed page and ``plot_speed.py`` read.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "bench_gpu.py"
TINY = ["--device", "cpu", "--hands", "32", "--threads", "2", "--updates", "1", "--num-steps", "8",
        "--engine-steps", "10", "--seconds", "0.1", "--precision", "fp32", "--no-compile"]  # fmt: skip


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT, timeout=600
    )


def test_a_tiny_cpu_run_writes_every_kind_of_row(tmp_path: Path) -> None:
    out = tmp_path / "gpu.json"
    done = run(*TINY, "--out", str(out))
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["skipped"] == []
    # Engine rows: one per thread count up to --threads, each a positive rate.
    assert [(row["hands"], row["threads"]) for row in report["engine"]] == [(32, 1), (32, 2)]
    assert all(row["decisions_per_s"] > 0 for row in report["engine"])
    assert [(row["hands"], row["mode"]) for row in report["inference"]] == [(32, "eager")]
    assert report["inference"][0]["decisions_per_s"] == report["inference"][0]["forward_per_s"] * 32
    assert [(row["hands"], row["precision"], row["overlap"]) for row in report["train"]] == [
        (32, "fp32", False),
        (32, "fp32", True),
    ]
    assert [(row["workers"], row["engine_threads"]) for row in report["train"]] == [(1, 1), (2, 1)]
    train = report["train"][0]
    assert train["steps_per_s"] > 0
    assert (
        99
        <= train["env_share"] + train["inference_share"] + train["gather_share"] + train["update_share"]
        <= 101
    )
    # Every point can be traced to the command that measured it.
    assert report["command"].startswith("python benchmarks/bench_gpu.py --device cpu --hands 32")


def test_rows_past_the_budget_are_listed_not_run(tmp_path: Path) -> None:
    out = tmp_path / "gpu.json"
    done = run(*TINY, "--budget", "1e-9", "--out", str(out))
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["engine"] == report["train"] == report["inference"] == []
    assert report["skipped"] == [
        "engine 32 hands 1 threads", "engine 32 hands 2 threads", "inference 32", "train 32 hands fp32",
        "train 32 hands fp32 overlapped",
    ]  # fmt: skip


def test_bad_input_is_one_line() -> None:
    done = run("--device", "cpu", "--hands", "0")
    assert done.returncode == 2
    assert "--hands must be positive" in done.stderr.strip().splitlines()[-1]


def test_thread_counts_double_up_to_the_machine() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_gpu import thread_counts
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert thread_counts(1) == [1]
    assert thread_counts(2) == [1, 2]
    assert thread_counts(16) == [1, 2, 4, 8, 16]
    assert thread_counts(12) == [1, 2, 4, 8, 12]


def plot(*args: str) -> subprocess.CompletedProcess[str]:
    script = ROOT / "benchmarks" / "plot_speed.py"
    return subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def test_the_plots_are_drawn_from_a_report(tmp_path: Path) -> None:
    engine = [{"hands": h, "threads": k, "decisions_per_s": 1e6 * k} for h in (1024, 4096) for k in (1, 2)]
    train = [{"hands": h, "precision": "fp32", "steps_per_s": 1e4} for h in (256, 1024)]
    command = "python benchmarks/bench_gpu.py --device cpu"
    path = tmp_path / "cpu.json"
    path.write_text(json.dumps({"device": "cpu", "command": command, "engine": engine, "train": train}))
    done = plot(str(path), "--out", str(tmp_path / "img"))
    assert done.returncode == 0, done.stderr
    for name in ("threads.png", "hands.png"):
        assert (tmp_path / "img" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    path.write_text(json.dumps({"device": "cpu"}))
    refused = plot(str(path), "--out", str(tmp_path / "img"))
    assert refused.returncode != 0
    assert "is not a bench_gpu.py report" in refused.stderr.strip().splitlines()[-1]
