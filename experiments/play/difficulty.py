"""How hard each computer level is for people: the difficulty report of a play server's store.

This module owns ``ginenv people``: it reads the hands people finished against the computer (the
``hands`` table of a ``ginenv play`` state folder, :mod:`ginenv.experiments.play.people`) and, for
each level of one preset, reports the people who played it, their hands, people's mean margin
against it with its interval, the share of people ahead of it, the spread of people's ratings and
the ladder's own rating of the level beside them (:func:`difficulty`), so a designer sees whether
the levels are spaced for people as they are for programs.

**The unit is the person.** Hands of one person share that person's skill, so they are not
independent draws of "people": each person's luck-adjusted margin against a level is first
averaged over their own hands, and the people's means are the sample (a t-interval over people;
one person gives no interval). A person is "ahead" of a level when their mean margin against it
is above 0. Ratings are :func:`~ginenv.experiments.play.people.standing`'s, one a person.

The store is opened read-only (SQLite's ``mode=ro``): the report changes nothing. A missing
folder, a store without any hand, a store of an older schema and a level that is no longer
registered each get one line (:class:`~ginenv.experiments.errors.UsageError`, or a note in the
report for the level).
"""

from __future__ import annotations

import csv
import math
import sqlite3
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.ladder_data import ladder_ratings
from ginenv.experiments.play.db import DB_FILE, SCHEMA_VERSION
from ginenv.experiments.play.people import CONFIDENCE, hands_of, standing, t_quantile

#: The columns of the report's CSV, one row a level.
COLUMNS = (
    "level",
    "people",
    "hands",
    "margin",
    "low",
    "high",
    "ahead",
    "rating_sd",
    "ladder_rating",
    "note",
)


@dataclass(frozen=True)
class LevelRow:
    """One level of the report (see the module docstring)."""

    level: str
    people: int
    hands: int
    margin: float | None
    low: float | None
    high: float | None
    ahead: float | None
    rating_sd: float | None
    ladder_rating: float | None
    note: str | None


def read_hands(state_dir: Path, preset: str) -> dict[str, list[tuple[str, int, float]]]:
    """Every recorded hand of ``preset`` in the store of ``state_dir``, by person: ``(opponent,
    points, luck)`` each. A missing or older store, or one without a hand, is a UsageError line."""
    path = Path(state_dir).expanduser() / DB_FILE
    if not path.is_file():
        raise UsageError(
            f"no play store in {state_dir}: {DB_FILE} is not there (ginenv play --state-dir DIR)"
        )
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            (version,) = db.execute("PRAGMA user_version").fetchone()
            if version != SCHEMA_VERSION:
                raise UsageError(
                    f"the play store in {state_dir} is of schema version {version}; this ginenv reads "
                    f"version {SCHEMA_VERSION}: start `ginenv play --state-dir {state_dir}` once to "
                    "upgrade it"
                )
            rows = db.execute(
                "SELECT person, opponent, points, luck FROM hands WHERE preset = ? ORDER BY rowid", (preset,)
            ).fetchall()
        finally:
            db.close()
    except sqlite3.Error as err:
        raise UsageError(f"cannot read the play store in {state_dir}: {err}") from None
    if not rows:
        raise UsageError(f"the play store in {state_dir} holds no finished hand of the {preset} preset yet")
    people: dict[str, list[tuple[str, int, float]]] = {}
    for person, opponent, points, luck in rows:
        people.setdefault(person, []).append((opponent, int(points), float(luck)))
    return people


def _mean_interval(values: list[float]) -> tuple[float | None, float | None, float | None]:
    """The mean of ``values`` with its t-interval (None ends with fewer than two values)."""
    if not values:
        return None, None, None
    mean = math.fsum(values) / len(values)
    if len(values) < 2:
        return mean, None, None
    half = t_quantile(len(values) - 1) * statistics.stdev(values)
    half /= math.sqrt(len(values))
    return mean, mean - half, mean + half


def difficulty(
    people: dict[str, list[tuple[str, int, float]]], preset: str, known: set[str]
) -> dict[str, Any]:
    """The report of ``people``'s hands (:func:`read_hands`) under ``preset``: ``{"preset",
    "people", "hands", "ladder", "levels": [row, ...]}``, a row a level (:class:`LevelRow` as a
    dict), the ladder's levels first, strongest last; ``known``: the registered agent names (a level
    that is not one any more is kept with a note)."""
    ladder = ladder_ratings(preset)
    ratings = {}
    for person, rows in people.items():
        mine = standing(hands_of(rows), ladder, preset)
        if mine["rating"] is not None:
            ratings[person] = mine["rating"]
    spread = statistics.stdev(ratings.values()) if len(ratings) >= 2 else None
    levels = sorted({opponent for rows in people.values() for opponent, _, _ in rows})
    if ladder is not None:
        on = ladder.levels
        levels.sort(key=lambda name: (name in on, on[name].rating if name in on else 0.0))
    table = []
    for level in levels:
        means = []
        hands = 0
        for rows in people.values():
            margins = [points - luck for opponent, points, luck in rows if opponent == level]
            if margins:
                means.append(math.fsum(margins) / len(margins))
                hands += len(margins)
        mean, low, high = _mean_interval(means)
        notes = []
        if level not in known:
            notes.append("no longer a registered agent")
        if ladder is None or level not in ladder.levels:
            notes.append("not on the ladder")
        table.append(
            LevelRow(
                level=level,
                people=len(means),
                hands=hands,
                margin=mean,
                low=low,
                high=high,
                ahead=sum(m > 0 for m in means) / len(means),
                rating_sd=spread,
                ladder_rating=None
                if ladder is None or level not in ladder.levels
                else ladder.levels[level].rating,
                note="; ".join(notes) or None,
            ).__dict__
        )
    return {
        "preset": preset,
        "people": len(people),
        "hands": sum(len(rows) for rows in people.values()),
        "rated_people": len(ratings),
        "ladder": None if ladder is None else {"date": ladder.date, "command": ladder.command},
        "levels": table,
    }


def format_report(report: dict[str, Any]) -> str:
    """The report as the table ``ginenv people`` prints."""

    def num(value: float | None, signed: bool = True) -> str:
        if value is None:
            return "-"
        return f"{value:+.2f}" if signed else f"{value:.2f}"

    lines = [
        f"ginenv people: {report['people']} people, {report['hands']} hands of the {report['preset']} "
        "preset; margins are people's points a hand against the level, luck-adjusted, the person the "
        f"unit ({int(CONFIDENCE * 100)}% CI over people)",
        f"{'level':<16}{'people':>7}{'hands':>7}{'margin':>9}{'95% CI':>20}{'ahead':>7}{'ladder':>9}",
    ]
    for row in report["levels"]:
        ci = "-" if row["low"] is None else f"[{row['low']:+.2f}, {row['high']:+.2f}]"
        lines.append(
            f"{row['level']:<16}{row['people']:>7}{row['hands']:>7}{num(row['margin']):>9}{ci:>20}"
            f"{row['ahead']:>7.0%}{num(row['ladder_rating']):>9}"
            + (f"  ({row['note']})" if row["note"] else "")
        )
    sd = report["levels"][0]["rating_sd"] if report["levels"] else None
    lines.append(
        f"people's ratings on the ladder's scale: {report['rated_people']} people, spread (SD) "
        f"{num(sd, signed=False)} points a hand"
    )
    return "\n".join(lines)


def write_report(report: dict[str, Any], out: Path) -> list[Path]:
    """Write ``report`` as ``people.csv`` and a plot, ``people.png`` (people's margin against each
    level with its interval, beside the ladder's rating of the level), into ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    table = out / "people.csv"
    with table.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(report["levels"])
    rows = report["levels"]
    fig, ax = plt.subplots(figsize=(7, 0.5 + 0.45 * max(1, len(rows))))
    for y, row in enumerate(rows):
        if row["margin"] is not None:
            ax.plot([row["margin"]], [y], "o", color="tab:blue")
        if row["low"] is not None:
            ax.plot([row["low"], row["high"]], [y, y], color="tab:blue")
        if row["ladder_rating"] is not None:
            ax.plot([-row["ladder_rating"]], [y], "x", color="tab:orange")
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [row["level"] for row in rows])
    ax.set_xlabel("people's points a hand against the level (o, 95% CI); x: minus the ladder's rating")
    ax.set_title(f"How hard each level is for people ({report['preset']}, {report['people']} people)")
    fig.tight_layout()
    plot = out / "people.png"
    fig.savefig(plot, dpi=110)
    plt.close(fig)
    return [table, plot]


__all__ = ["COLUMNS", "LevelRow", "difficulty", "format_report", "read_hands", "write_report"]
