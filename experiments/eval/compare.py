"""Paired comparison of two evaluation runs against one opponent, on the deals they share.

This module owns ``ginenv compare NEW BASE``: is a new agent stronger than an old one, measured
by what each scored against the same opponent on the same duplicate deals? Two runs of one master
seed deal exactly the same cards for deal ``k`` (:mod:`ginenv.experiments.eval.harness`, common
random numbers), so the difference of the two agents' points on each shared deal cancels most of
the deal's luck a second time: over 2000 hands against master each network's interval is about
±0.85 points a hand, so the difference of two independent runs would be about ±1.2, while the
paired difference on the same deals is about ±0.87 (±0.63 over 4000 hands). The comparison reads
finished run folders only; it plays no game and writes nothing.

Definitions. In each run the *subject* is the one agent paired with the opponent; its value on a
deal is its points per hand (or match) against the opponent, luck-adjusted as in the report
(:func:`~ginenv.experiments.eval.report.deal_value`, or the raw pair sum with ``raw``), from its
own point of view whichever seat list named it first. The comparison is the mean of
``new - base`` over the deals both runs finished, with a Student-t interval and t test that treat
deals as the independent units (:mod:`ginenv.experiments.eval.stats`). Several pairs of runs (one
pair per seed, say) pool their deals; a deal of one seed may count only once.

Runs are refused with a :class:`~ginenv.experiments.errors.UsageError` naming the folder and
what is wrong: no ``config.json`` or ``results.jsonl``, a corrupt line, runs of different seeds,
rules, units or turn limits (their deal ``k`` differ), no common opponent or more than one, an
opponent paired with several agents in one run, or no deal in common. A torn last line (a run
killed while writing, or still running) is left out, as a resume would replay it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ginenv.experiments.errors import UsageError
from ginenv.experiments.eval.report import ci_dict, deal_value, format_ci, format_p, signed
from ginenv.experiments.eval.stats import mean_ci, paired_significance

__all__ = ["Run", "compare_runs", "format_compare", "load_run"]

#: Settings two runs must share for their deal ``k`` to be the same cards.
SAME_DEALS = ("seed", "unit", "rules", "turn_limit")

PLURAL = {"hand": "hands", "match": "matches"}


@dataclass(frozen=True)
class Run:
    """A finished (or partly finished) run folder, read-only.

    Attributes:
        path: the folder.
        config: the run's settings as ``config.json`` holds them (agents, unit, rules, seed, ...).
        records: one dict a finished duplicate deal of one pairing (``a``, ``b``, ``deal``,
            ``pair_sum``, ``pair_luck``, ``games``), in file order.
    """

    path: Path
    config: dict[str, Any]
    records: tuple[dict[str, Any], ...]

    @property
    def agents(self) -> list[str]:
        """Every agent of the run, as its config names them."""
        return [str(a) for a in self.config.get("agents", [])]


def load_run(folder: str | Path) -> Run:
    """Read the run folder ``folder`` (``config.json`` and ``results.jsonl``) without changing it."""
    path = Path(folder)
    meta, results = path / "config.json", path / "results.jsonl"
    if not path.is_dir():
        raise UsageError(
            f"{path} is not a run folder (no such folder); give the --out of a match or ladder run"
        )
    for needed in (meta, results):
        if not needed.is_file():
            raise UsageError(f"{path} is not a run folder: it has no {needed.name}")
    try:
        stored = json.loads(meta.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UsageError(
            f"{meta} is corrupt ({type(err).__name__}); it is not a run this version wrote"
        ) from None
    config = stored.get("config") if isinstance(stored, dict) else None
    if not isinstance(config, dict) or not isinstance(config.get("agents"), list):
        raise UsageError(f"{meta} is corrupt: it has no config with a list of agents")
    missing = [key for key in SAME_DEALS if key not in config]
    if missing:
        raise UsageError(f"{meta} is corrupt: its config has no {', '.join(missing)}")
    records = []
    raw = results.read_bytes()
    for number, line in enumerate(raw.splitlines(keepends=True), start=1):
        if not line.endswith(b"\n"):
            break  # torn by a kill or still being written: a resume replays it
        try:
            rec = json.loads(line)
            ok = isinstance(rec, dict) and all(k in rec for k in ("a", "b", "deal", "pair_sum"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            ok = False
        if not ok:
            raise UsageError(
                f"{results} line {number} is not a finished deal's record (a JSON object with a, b, "
                "deal and pair_sum); the file is corrupt"
            )
        records.append(rec)
    return Run(path, config, tuple(records))


def _opponent(new: Run, base: Run, against: str | None) -> str:
    if against is not None:
        for run in (new, base):
            if against not in run.agents:
                raise UsageError(
                    f"--against {against!r} does not play in {run.path} (its agents: {', '.join(run.agents)})"
                )
        return against
    common = [a for a in new.agents if a in base.agents]
    if len(common) == 1:
        return common[0]
    if not common:
        raise UsageError(
            f"{new.path} ({', '.join(new.agents)}) and {base.path} ({', '.join(base.agents)}) share no "
            "agent: compare two runs against the same opponent"
        )
    raise UsageError(
        f"{new.path} and {base.path} share the agents {', '.join(common)}: name the common opponent "
        "with --against"
    )


def _subject_values(run: Run, opponent: str, raw: bool) -> tuple[str, dict[int, float]]:
    """The one agent paired with ``opponent`` in ``run`` and its value on each deal, its own view."""
    values: dict[str, dict[int, float]] = {}
    for rec in run.records:
        if opponent not in (rec["a"], rec["b"]) or rec["a"] == rec["b"]:
            continue
        subject = rec["b"] if rec["a"] == opponent else rec["a"]
        value = float(rec["pair_sum"]) / 2.0 if raw else deal_value(rec)
        values.setdefault(subject, {})[int(rec["deal"])] = value if rec["a"] == subject else -value
    if not values:
        raise UsageError(f"{run.path} holds no finished deal against {opponent!r}")
    if len(values) > 1:
        raise UsageError(
            f"{run.path} pairs {opponent!r} with several agents ({', '.join(sorted(values))}); compare "
            "runs of one agent against the opponent each (ginenv match A OPPONENT)"
        )
    ((subject, per_deal),) = values.items()
    return subject, per_deal


def compare_runs(
    pairs: Sequence[tuple[Run, Run]], against: str | None = None, raw: bool = False
) -> dict[str, Any]:
    """The paired difference ``new - base`` of each pair of runs, and of all their deals pooled.

    Returns a JSON-ready dict: ``opponent``, ``unit``, ``luck_adjusted``, ``pairs`` (per pair of
    runs: ``new``, ``base`` (folders), ``new_agent``, ``base_agent``, ``seed``, ``deals``,
    ``new_points`` and ``base_points`` (means over the shared deals), ``difference`` (mean, low,
    high: 95% Student-t), ``p_value``) and ``pooled`` (the same over every pair's deals, with
    ``separated``: the interval excludes 0).
    """
    if not pairs:
        raise UsageError("give at least one pair of run folders: NEW BASE")
    unit = str(pairs[0][0].config["unit"])
    opponents = set()
    rows: list[dict[str, Any]] = []
    pooled: list[float] = []
    seen: dict[tuple[str, int], int] = {}  # (settings, deal) -> the pair that holds it
    folders: set[Path] = set()
    for index, (new, base) in enumerate(pairs, start=1):
        _check_pair(new, base, unit, pairs[0][0], folders)
        opponent = _opponent(new, base, against)
        opponents.add(opponent)
        row, diffs = _paired_row(new, base, opponent, raw, index, seen)
        pooled += diffs
        rows.append(row)
    if len(opponents) > 1:
        raise UsageError(
            f"the pairs of runs play different opponents ({', '.join(sorted(opponents))}); "
            "name one with --against"
        )
    total = mean_ci(pooled)
    return {
        "opponent": opponents.pop(),
        "unit": unit,
        "luck_adjusted": not raw,
        "pairs": rows,
        "pooled": {
            "deals": len(pooled),
            "difference": ci_dict(total),
            "p_value": paired_significance(pooled).p_value,
            "separated": bool(total.low > 0 or total.high < 0),
        },
    }


def _check_pair(new: Run, base: Run, unit: str, first: Run, folders: set[Path]) -> None:
    """The two runs were played on the same deals, in ``unit``, and neither counted before
    (``folders``: the runs seen so far, which this adds them to)."""
    for run in (new, base):
        if run.path.resolve() in folders:
            raise UsageError(f"{run.path} is given twice: each run may count once")
        folders.add(run.path.resolve())
    for key in SAME_DEALS:
        if new.config[key] != base.config[key]:
            raise UsageError(
                f"{new.path} and {base.path} were played on different deals ({key} "
                f"{new.config[key]!r} against {base.config[key]!r}): compare runs of the same seed, "
                "rules, unit and turn limit"
            )
    if new.config.get("deal_commitment") != base.config.get("deal_commitment"):
        # A run on secret deals holds its key's commitment: deal k of two keys (or of a key
        # and the seed) is other cards, whatever the seed says.
        raise UsageError(
            f"{new.path} and {base.path} were played on different deals (deal commitment "
            f"{new.config.get('deal_commitment')} against {base.config.get('deal_commitment')}): "
            "compare runs of the same key, or both on the seed's public deals"
        )
    if str(new.config["unit"]) != unit:
        raise UsageError(
            f"{new.path} plays {PLURAL.get(str(new.config['unit']))} and {first.path} {PLURAL.get(unit)}"
        )


def _paired_row(
    new: Run, base: Run, opponent: str, raw: bool, index: int, seen: dict[tuple[str, int], int]
) -> tuple[dict[str, Any], list[float]]:
    """Pair ``index``'s row of :func:`compare_runs` and its per-deal differences ``new - base``;
    ``seen`` (``(settings, deal)`` -> the pair that holds it) refuses a deal counted twice."""
    new_agent, new_values = _subject_values(new, opponent, raw)
    base_agent, base_values = _subject_values(base, opponent, raw)
    deals = sorted(set(new_values) & set(base_values))
    if not deals:
        raise UsageError(f"{new.path} and {base.path} have no finished deal in common")
    seed = int(new.config["seed"])
    dealt_by = json.dumps(
        {key: new.config.get(key) for key in (*SAME_DEALS, "deal_commitment")}, sort_keys=True
    )
    for deal in deals:
        earlier = seen.setdefault((dealt_by, deal), index)
        if earlier != index:
            raise UsageError(
                f"pairs {earlier} and {index} both hold deal {deal} of seed {seed}: each deal may count once"
            )
    diffs = [new_values[d] - base_values[d] for d in deals]
    sig = paired_significance(diffs)
    row = {
        "new": str(new.path),
        "base": str(base.path),
        "new_agent": new_agent,
        "base_agent": base_agent,
        "seed": seed,
        "deals": len(deals),
        "new_points": sum(new_values[d] for d in deals) / len(deals),
        "base_points": sum(base_values[d] for d in deals) / len(deals),
        "difference": ci_dict(mean_ci(diffs)),
        "p_value": sig.p_value,
    }
    return row, diffs


def format_compare(result: dict[str, Any]) -> str:
    """The terminal report of :func:`compare_runs`: one line a pair of runs, then the pooled verdict."""
    unit = result["unit"]
    kind = "luck-adjusted" if result["luck_adjusted"] else "raw"
    lines = [
        f"Paired against {result['opponent']} on the same deals: {kind} points per {unit}, new minus base"
    ]
    width = max(12, *(len(r[k]) for r in result["pairs"] for k in ("new_agent", "base_agent")))
    lines.append(
        f"  {'new':<{width}}  {'base':<{width}}  {'seed':>5} {'deals':>6}  {'new':>6} {'base':>6}  "
        f"{'difference [95% CI]':>22}  {'p':>6}"
    )
    for r in result["pairs"]:
        lines.append(
            f"  {r['new_agent']:<{width}}  {r['base_agent']:<{width}}  {r['seed']:>5} {r['deals']:>6}  "
            f"{signed(r['new_points']):>6} {signed(r['base_points']):>6}  "
            f"{format_ci(r['difference']):>22}  {format_p(r['p_value']):>6}"
        )
    pooled = result["pooled"]
    d = pooled["difference"]
    half = (d["high"] - d["low"]) / 2
    verdict = (
        ("new is stronger" if d["mean"] > 0 else "new is weaker") + " than base with 95% confidence"
        if pooled["separated"]
        else "not separated at 95%: the interval holds 0"
    )
    lines.append(
        f"  all {pooled['deals']} deals ({2 * pooled['deals']} {PLURAL.get(unit, unit)}): "
        f"{signed(d['mean'])} ± {half:.2f}, p = {format_p(pooled['p_value'])}; {verdict}"
    )
    return "\n".join(lines)
