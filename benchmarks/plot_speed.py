"""The speed page's scaling plots, drawn from the files ``bench_gpu.py`` writes.

    python benchmarks/plot_speed.py docs/speed/cpu_2core.json [docs/speed/gpu.json ...] --out docs/speed

Two figures, one line per (file, hands) or (file, precision), every point the figure of a row of a
file, so each point traces to the command its file records (the legend names the device; the page
beside the plot names the file and its command):

- ``threads.png``: the batched engine's decisions/s against engine threads (``engine`` rows);
- ``hands.png``: PPO env steps/s against the hands in lockstep (``train`` rows).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")  # files only: no display on a server or in CI
import matplotlib.pyplot as plt


def read(paths: list[Path]) -> list[dict[str, Any]]:
    """The reports, each with its ``path``; a file that is not a bench_gpu report stops the run."""
    reports = []
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not {"device", "command", "engine", "train"} <= data.keys():
            raise SystemExit(
                f"plot_speed: {path} is not a bench_gpu.py report (device, command, engine, train)"
            )
        reports.append({**data, "path": str(path)})
    return reports


def line_figure(
    reports: list[dict[str, Any]], rows: str, line: str, x: str, y: str, labels: tuple[str, str, str]
) -> plt.Figure:
    """``y`` against ``x`` (log 2) of the ``rows`` of every report, a line per (report, ``line``
    value); ``labels``: the x axis, the y axis, the title."""
    fig, ax = plt.subplots(figsize=(6, 4))
    for report in reports:
        for value in sorted({row[line] for row in report[rows]}):
            points = sorted((r for r in report[rows] if r[line] == value), key=lambda r: r[x])
            ax.plot(
                [r[x] for r in points],
                [r[y] for r in points],
                marker="o",
                label=f"{report['device']}, {value} {line}",
            )
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))  # 1, 2, 4, not 2^0
    ax.set_ylim(bottom=0)  # rates from zero: the gaps between points read as they are
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    ax.set_title(labels[2])
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def threads_figure(reports: list[dict[str, Any]]) -> plt.Figure:
    """Decisions/s against engine threads, a line per (report, hands)."""
    axes = ("engine threads (VectorGinRummy(N, threads=k))", "decisions/s, observation and mask included")
    return line_figure(
        reports, "engine", "hands", "threads", "decisions_per_s", (*axes, "The batched engine")
    )


def hands_figure(reports: list[dict[str, Any]]) -> plt.Figure:
    """PPO env steps/s against hands in lockstep, a line per (report, precision, overlapped or
    not: a report from before the overlapped rows has none)."""
    axes = ("hands in lockstep (num_envs)", "PPO env steps/s, learning included")
    runs = [
        {
            **report,
            "train": [
                {**row, "loop": row["precision"] + (" overlapped" if row.get("overlap") else "")}
                for row in report["train"]
            ],
        }
        for report in reports
    ]
    return line_figure(runs, "train", "loop", "hands", "steps_per_s", (*axes, "Training"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("reports", nargs="+", type=Path, help="bench_gpu.py JSON files")
    p.add_argument("--out", type=Path, default=Path("docs/speed"), help="folder for the PNG files")
    args = p.parse_args(argv)
    missing = [str(path) for path in args.reports if not path.is_file()]
    if missing:
        p.error(f"no such report: {', '.join(missing)}")
    reports = read(args.reports)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, draw in (("threads.png", threads_figure), ("hands.png", hands_figure)):
        fig = draw(reports)
        fig.savefig(args.out / name, dpi=110)
        plt.close(fig)
        print(f"plot_speed: {args.out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
