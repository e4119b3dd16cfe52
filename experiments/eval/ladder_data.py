"""The ladder's ratings kept as data: what a person's hands against the levels are measured against.

This module owns ``experiments/eval/data/ladder_ratings.json``: the ratings on the points scale
(points a hand, luck-adjusted, mean 0 over the core; :mod:`ginenv.experiments.eval.ratings`) of the
shipped ``ladder`` config's run, per level, for each preset that has one, with the date and the
command that made them. :func:`ladder_ratings` reads it (the play server's "where you stand",
:mod:`ginenv.experiments.play.people`); :func:`ratings_from_run` and :func:`write_ladder_ratings`
make it again from a run folder::

    ginenv ladder --config ladder --out /tmp/lad
    python -m ginenv.experiments.eval.ladder_data /tmp/lad

The file also keeps ``hand_sd``: the spread (standard deviation) of one hand's points in that run,
raw (the luck variate only narrows it, so it errs on the wide side). It is the prior spread of a
person's interval while they have played too few hands for their own spread to say much.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import functools
import json
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ginenv.rules import PRESETS

#: The shipped file (package data).
LADDER_RATINGS_PATH = Path(__file__).resolve().parent / "data" / "ladder_ratings.json"
#: What the file says it is.
FORMAT = "ginenv-ladder-ratings"
#: The command that makes the run the file is read from.
LADDER_COMMAND = "ginenv ladder --config ladder --out RUN"


@dataclass(frozen=True)
class LevelRating:
    """One level's rating on the ladder's points scale, with its interval (as ratings.csv has it)."""

    rating: float
    low: float
    high: float


@dataclass(frozen=True)
class LadderRatings:
    """The ladder's ratings of one preset: ``levels`` by agent spec, the spread of one hand's
    points (``hand_sd``, see the module docstring), and where they come from."""

    preset: str
    levels: dict[str, LevelRating]
    hand_sd: float
    date: str
    command: str


def _preset_of(rules: dict[str, Any]) -> str | None:
    """The name of the preset whose rules are exactly ``rules`` (a run folder's config), or None."""
    for name, preset in PRESETS.items():
        if {k: v for k, v in dataclasses.asdict(preset).items() if k in rules} == rules:
            return name
    return None


def ratings_from_run(run: Path) -> dict[str, Any]:
    """The file's entry for the run folder ``run`` (its ``config.json``, ``ratings.csv`` and
    ``results.jsonl``): ``{"preset", "date", "command", "deals", "seed", "scale", "hand_sd",
    "levels"}``. A folder
    without them, or of rules that are no preset, raises ValueError saying which."""
    run = Path(run)
    try:
        config = json.loads((run / "config.json").read_text(encoding="utf-8"))["config"]
        with (run / "ratings.csv").open(encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        points = [
            float(game["a_points"])
            for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()
            for game in json.loads(line)["games"]
        ]
    except (OSError, KeyError, ValueError) as err:
        raise ValueError(f"{run} is not a finished ladder run folder: {err}") from None
    if config.get("unit") != "hand":
        raise ValueError(f"the run's unit is {config.get('unit')!r}: the ladder's scale is points a hand")
    preset = _preset_of(config["rules"])
    if preset is None:
        raise ValueError("the run's rules are no preset's: a person's games are played under a preset")
    levels = {
        row["agent"]: {k: round(float(row[k]), 3) for k in ("rating", "low", "high")}
        for row in rows
        if row.get("agent") in config["agents"]
    }
    made = dt.datetime.fromtimestamp((run / "ratings.csv").stat().st_mtime, dt.UTC).date().isoformat()
    return {
        "preset": preset,
        "date": made,
        "command": LADDER_COMMAND,
        "deals": int(config["deals"]),
        "seed": config.get("seed"),
        "scale": "points a hand, luck-adjusted, mean 0 over the ladder's core (ratings.csv)",
        "hand_sd": round(statistics.stdev(points), 3),
        "levels": levels,
    }


def write_ladder_ratings(run: Path, path: Path = LADDER_RATINGS_PATH) -> dict[str, Any]:
    """Put the ratings of run folder ``run`` into the file at ``path`` (its preset's entry replaced,
    the others kept); returns the entry."""
    entry = ratings_from_run(run)
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        doc = {"format": FORMAT, "presets": {}}
    doc["presets"][entry.pop("preset")] = entry
    Path(path).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return entry


@functools.lru_cache(maxsize=8)
def ladder_ratings(preset: str, path: Path = LADDER_RATINGS_PATH) -> LadderRatings | None:
    """The ladder's ratings of ``preset`` (None: no run of that preset is recorded)."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if doc.get("format") != FORMAT:
        raise ValueError(f"{path} is not a {FORMAT} file")
    entry = doc["presets"].get(preset)
    if entry is None:
        return None
    levels = {name: LevelRating(**values) for name, values in entry["levels"].items()}
    if not levels or not math.isfinite(entry["hand_sd"]) or entry["hand_sd"] <= 0:
        raise ValueError(f"{path}: the entry of {preset} has no levels or no hand spread")
    return LadderRatings(preset, levels, float(entry["hand_sd"]), str(entry["date"]), str(entry["command"]))


def main(argv: list[str] | None = None) -> int:
    """``python -m ginenv.experiments.eval.ladder_data RUN [FILE]``: write RUN's ratings to FILE."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2):
        print("usage: python -m ginenv.experiments.eval.ladder_data RUN [FILE]", file=sys.stderr)
        return 2
    entry = write_ladder_ratings(Path(args[0]), *(Path(a) for a in args[1:]))
    for name, level in entry["levels"].items():
        print(f"{name:>10} {level['rating']:+8.2f} [{level['low']:+.2f}, {level['high']:+.2f}]")
    return 0


__all__ = [
    "FORMAT",
    "LADDER_COMMAND",
    "LADDER_RATINGS_PATH",
    "LadderRatings",
    "LevelRating",
    "ladder_ratings",
    "main",
    "ratings_from_run",
    "write_ladder_ratings",
]

if __name__ == "__main__":
    raise SystemExit(main())
