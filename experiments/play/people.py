"""Where a person stands: every hand they finish against the computer, and their rating on the
ladder's scale.

**What is recorded.** Each hand a person finishes at a computer table (the id in their
``ginenv_player`` cookie is the person; friend tables are not recorded) is one row of the play
database's ``hands`` table (:mod:`ginenv.experiments.play.db`), written in the very transaction
that saves the move that ended the hand (:meth:`TableStore._save
<ginenv.experiments.play.store.TableStore>`), so a hand is recorded once or, with its move, not at
all: the computer's spec, the preset, the points to the person (+ when they won the hand, - when
they lost it, 0 for a dead or truncated hand) and the person's luck (:func:`state_luck
<ginenv.experiments.eval.luck.state_luck>` of the finished hand, computed as the hand ends, as the
harness does per game), and when it ended. Nothing else: no table id (a computer table's id is its
key), no deal, no address. Games of the day and seeded games count like any other.
:func:`forget` deletes every row of a person.

**The rating** (:func:`standing`, pure). A hand's luck-adjusted margin is ``points - luck``. Against
a level ``L`` whose ladder rating ``r_L`` is known for the preset
(:func:`~ginenv.experiments.eval.ladder_data.ladder_ratings`: ratings are points a hand against the
ladder's core, so ``r_A - r_B`` is what A is expected to take from B a hand), a hand estimates the
person's rating as ``r_L + points - luck``. The rating is the mean of these estimates over all
hands (every hand weighs the same, so a level counts by its hands).

**The unit is the hand, within one person.** The question is this person's strength, not that of
people in general, so the person is fixed and their hands are the sample; hands of one person are
not independent *of the person* (their skill is in every one), which is why nothing is pooled
across people. Hands of one match are nearly independent given the person (a fresh deal each;
only the score may change how they play).

**Intervals honest for few hands.** The spread of a handful of hands says little about the spread
(two equal hands would give an interval of width 0), so the variance is the person's own sample
variance pooled with a prior spread: ``s² = (k·σ₀² + (n-1)·ŝ²) / (k + n - 1)`` with
``k`` = :data:`PRIOR_DF` degrees of freedom of ``σ₀`` = the ladder run's spread of one hand's points
(``hand_sd``, raw, on the wide side), and the interval is ``mean ± t_{0.975, k+n-1} · s / √n``.
One hand gives ``± 4.3 σ₀`` (± 161 points with the shipped ``σ₀`` of 37.4: nothing known yet);
as hands come the person's own spread takes over. The rating's interval adds the ladder ratings'
own uncertainty (their intervals' half-widths over 1.96, weighted by hands), in quadrature. The
same interval serves the margin against each level. A preset with no ladder run recorded (or a
computer that is not on the ladder) has margins only, and the answer says why.

**The history** (:func:`history`, pure) is the rating and its interval as they stood after each hand
played: :func:`standing` of the first ``k`` hands for each ``k``, so the page's plot and the rating
are one computation. A long record is thinned to at most :data:`HISTORY_POINTS` counts of hands,
spread evenly and always ending at the last hand.
"""

from __future__ import annotations

import functools
import math
import sqlite3
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ginenv.experiments.eval.ladder_data import LADDER_COMMAND, LadderRatings, ladder_ratings
from ginenv.experiments.eval.luck import state_luck

from ginenv.engine import HandState
from ginenv.rules import Rules

#: Degrees of freedom the prior spread counts for (see the module docstring).
PRIOR_DF = 2
#: The coverage of every interval.
CONFIDENCE = 0.95
#: The prior spread of one hand's luck-adjusted margin where no ladder run gives one (points).
DEFAULT_HAND_SD = 40.0
#: The most points of a :func:`history` (the answer of ``GET /api/me`` stays small however long
#: the record: a plot a few hundred pixels wide shows no more).
HISTORY_POINTS = 100


@dataclass(frozen=True)
class Hand:
    """One finished hand of a person: the computer's spec, the points to the person (signed) and
    their luck (points, the person's view)."""

    opponent: str
    points: int
    luck: float

    @property
    def margin(self) -> float:
        """The luck-adjusted margin: points minus luck."""
        return self.points - self.luck


def warm_up() -> None:
    """Load (or, on a first run, compile) the luck's compiled code now, so that no person's first finished
    hand waits for them (the play command calls this before it serves)."""
    state_luck(HandState(Rules(), dealer=0, deck=list(range(52))))


def hand_of(finished: HandState, result: dict[str, Any], seat: int, opponent: str) -> Hand:
    """The record of a hand ``finished`` (its state as it ended) for the person at ``seat``:
    ``result`` is the env's hand result (``winner`` an agent name or None, ``points`` to the
    winner)."""
    winner = result.get("winner")
    points = int(result.get("points") or 0)
    signed = 0 if winner is None else points if winner == f"player_{seat}" else -points
    luck = state_luck(finished)  # player 0's view; the other seat's is its negative
    return Hand(opponent, signed, luck if seat == 0 else -luck)


# ---------------------------------------------------------------------------- the database


def record_hands(db: sqlite3.Connection, person: str, preset: str, hands: Iterable[Hand], when: float) -> int:
    """Insert ``person``'s finished ``hands`` under ``preset`` (inside the caller's transaction)."""
    rows = [(person, h.opponent, preset, int(h.points), float(h.luck), when) for h in hands]
    db.executemany(
        "INSERT INTO hands (person, opponent, preset, points, luck, finished) VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )
    return len(rows)


def hands_of(rows: Sequence[tuple[Any, ...]]) -> list[Hand]:
    """:class:`Hand` records of ``SELECT opponent, points, luck FROM hands`` rows."""
    return [Hand(str(o), int(p), float(luck)) for o, p, luck in rows]


def forget(db: sqlite3.Connection, person: str) -> dict[str, int]:
    """Delete every record of ``person`` (inside the caller's transaction): their hands, their games
    of the day, and their id on the tables they started (the tables and replays stay, anonymous);
    returns how many of each went."""
    hands = db.execute("DELETE FROM hands WHERE person = ?", (person,)).rowcount
    daily = db.execute("DELETE FROM daily WHERE person = ?", (person,)).rowcount
    tables = db.execute("UPDATE tables SET person = NULL WHERE person = ?", (person,)).rowcount
    return {"hands": hands, "daily": daily, "tables": tables}


# ---------------------------------------------------------------------------- the rating


@dataclass(frozen=True)
class Estimate:
    """A mean with its interval (``low``, ``high``) over ``hands`` hands (None: no hands)."""

    hands: int
    mean: float | None
    low: float | None
    high: float | None


@functools.lru_cache(maxsize=4096)
def t_quantile(df: int) -> float:
    """Student-t's two-sided :data:`CONFIDENCE` quantile over ``df`` degrees of freedom (cached:
    scipy's ppf is most of a :func:`history`'s time, and the same few ``df`` come again). scipy.stats
    is imported here, not with the module: it is most of the play server's start (1 to 3 CPU
    seconds), and the server needs it only once a person has a record."""
    from scipy import stats

    return float(stats.t.ppf(0.5 + CONFIDENCE / 2, df))


#: The normal's two-sided :data:`CONFIDENCE` quantile (a ladder interval's half-width over it is its sd).
_Z = statistics.NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)


def interval(values: Sequence[float], prior_sd: float, extra_var: float = 0.0) -> Estimate:
    """The mean of ``values`` with its interval: the sample variance pooled with ``prior_sd`` over
    :data:`PRIOR_DF` degrees of freedom, Student-t over ``PRIOR_DF + n - 1`` (module docstring);
    ``extra_var``: a variance of the mean from elsewhere (the ladder's ratings), added."""
    n = len(values)
    if n == 0:
        return Estimate(0, None, None, None)
    mean = math.fsum(values) / n
    own = math.fsum((v - mean) ** 2 for v in values)  # (n - 1) · sample variance
    df = PRIOR_DF + n - 1
    var = (PRIOR_DF * prior_sd**2 + own) / df
    half = t_quantile(df) * math.sqrt(var / n + extra_var)
    return Estimate(n, mean, mean - half, mean + half)


def standing(hands: Sequence[Hand], ladder: LadderRatings | None, preset: str = "standard") -> dict[str, Any]:
    """The answer of ``GET /api/me`` for a person's ``hands`` under one preset: ``{"hands",
    "rating", "low", "high", "between", "levels", "why"}`` (see the module docstring). ``levels``
    maps each computer spec to ``{"hands", "margin", "low", "high"}``; ``between`` is
    ``[level below, level above]`` the rating on the ladder (None past either end); ``why`` says
    why there is no rating (None when there is one), or which hands it leaves out."""
    prior = ladder.hand_sd if ladder is not None else DEFAULT_HAND_SD
    by_level: dict[str, list[float]] = {}
    for hand in hands:
        by_level.setdefault(hand.opponent, []).append(hand.margin)
    levels = {}
    for name, margins in sorted(by_level.items()):
        e = interval(margins, prior)
        levels[name] = {"hands": e.hands, "margin": e.mean, "low": e.low, "high": e.high}
    answer: dict[str, Any] = {
        "hands": len(hands), "preset": preset, "rating": None, "low": None, "high": None,
        "between": [None, None], "levels": levels, "why": None,
    }  # fmt: skip
    if ladder is None:
        answer["why"] = (
            f"no ladder run of the {preset} preset is recorded (`{LADDER_COMMAND}` under it would "
            "give one): margins against each level only"
        )
        return answer
    rated = [h for h in hands if h.opponent in ladder.levels]
    off = sorted({h.opponent for h in hands} - set(ladder.levels))
    if off:
        answer["why"] = f"hands against {', '.join(off)} (not on the ladder) count in margins only"
    if not rated:
        if not hands:
            answer["why"] = "no finished hands against the computer yet"
        return answer
    counts = {name: sum(h.opponent == name for h in rated) for name in ladder.levels}
    # The ladder's own uncertainty: each level's interval half-width over z, weighted by hands.
    ladder_var = sum(
        (c / len(rated)) ** 2 * ((ladder.levels[n].high - ladder.levels[n].low) / (2 * _Z)) ** 2
        for n, c in counts.items()
    )
    e = interval([ladder.levels[h.opponent].rating + h.margin for h in rated], prior, ladder_var)
    assert e.mean is not None
    order = sorted(ladder.levels, key=lambda n: ladder.levels[n].rating)
    below = [n for n in order if ladder.levels[n].rating <= e.mean]
    above = [n for n in order if ladder.levels[n].rating > e.mean]
    answer.update(
        rating=e.mean, low=e.low, high=e.high,
        between=[below[-1] if below else None, above[0] if above else None],
    )  # fmt: skip
    return answer


def history_counts(n: int, points: int = HISTORY_POINTS) -> list[int]:
    """The counts of hands a :func:`history` of ``n`` hands shows: every one of 1..n when there are
    at most ``points``, else ``points`` counts spread evenly from 1 to ``n`` (both included)."""
    if points < 2:
        raise ValueError(f"a history needs at least 2 points, got {points}")
    if n <= points:
        return list(range(1, n + 1))
    return sorted({1 + round(i * (n - 1) / (points - 1)) for i in range(points)})


def history(
    hands: Sequence[Hand],
    ladder: LadderRatings | None,
    preset: str = "standard",
    points: int = HISTORY_POINTS,
) -> list[dict[str, Any]]:
    """The rating after each hand played: ``[{"hands", "rating", "low", "high"}]``, one for each
    count of :func:`history_counts`, each :func:`standing` of the first ``hands`` hands (module
    docstring). Counts whose hands give no rating (none on the ladder yet) are left out; with no
    ``ladder`` the history is empty (margins only)."""
    if ladder is None:
        return []
    out = []
    for k in history_counts(len(hands), points):
        at = standing(hands[:k], ladder, preset)
        if at["rating"] is not None:
            out.append({"hands": k, "rating": at["rating"], "low": at["low"], "high": at["high"]})
    return out


def person_standing(database: Any, person: str | None, preset: str) -> dict[str, Any]:
    """The answer of ``GET /api/me``: :func:`standing` of ``person``'s recorded hands under
    ``preset`` (None: nobody, no hands), read from the play ``database``
    (:class:`~ginenv.experiments.play.db.Database`), with what the page's plot needs besides:
    ``"history"`` (:func:`history`) and ``"ladder"``, the ladder's rating of each level
    (``{spec: points a hand}``; None for a preset without a ladder run)."""
    rows = (
        []
        if person is None
        else database.read(
            "SELECT opponent, points, luck FROM hands WHERE person = ? AND preset = ? ORDER BY rowid",
            (person, preset),
        )
    )
    hands, ladder = hands_of(rows), ladder_ratings(preset)
    answer = standing(hands, ladder, preset)
    answer["history"] = history(hands, ladder, preset)
    answer["ladder"] = None if ladder is None else {n: r.rating for n, r in ladder.levels.items()}
    return answer


__all__ = [
    "CONFIDENCE",
    "DEFAULT_HAND_SD",
    "HISTORY_POINTS",
    "PRIOR_DF",
    "Estimate",
    "Hand",
    "forget",
    "hand_of",
    "hands_of",
    "history",
    "history_counts",
    "interval",
    "person_standing",
    "record_hands",
    "standing",
    "warm_up",
]
