"""``ginenv rate SPEC``: where does an agent stand on the standard ladder?

The agent plays every agent of the standard ladder (the shipped config ``ladder``) on the ladder's own
duplicate deals (same seed, same deal indices: deal ``k`` is the same cards for every pairing). The
ladder's results among its own agents are computed once, in the ladder's run folder (the folder
``ginenv ladder`` writes), and reused by every later ``rate``; only the newcomer's games are played.

The rating is the points scale of :func:`ginenv.experiments.eval.ratings.points_ratings`: the ladder's
agents (its core: all but those far off its scale, such as random, see
:func:`ginenv.experiments.eval.report.rating_core`) are fitted from their games among themselves and
average 0; the agents off the core are placed on that scale from their games against the ladder,
and the newcomer from its games against the core (:func:`placement_values`), so its rating reads
"points per hand against the ladder's field" and adding it moves nothing: every agent of the ladder
prints the rating, interval and place the ladder gave it.
Deals are the independent units of every interval, so the newcomer's games and the ladder's games
on the same deal are treated as correlated, as they are.

**Secret deals** (``key``, ``ginenv rate SPEC --secret``): the ladder's stored results were played
on its public deals, which the newcomer could know, so nothing stored is reused: every pairing of
the ladder is replayed on the key's deals (in its own folder, keyed by the key's commitment), then
the newcomer plays them. That costs the whole ladder's games on top of the newcomer's. The key is
written to both folders (``deal_key.json``) and returned only once every game has ended.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ginenv.agents.sandbox import Sandbox
from ginenv.experiments.eval.harness import (
    Backend,
    EvalConfig,
    HarnessError,
    disclose_key,
    evaluate,
    publishable,
)
from ginenv.experiments.eval.ladder_config import check_agent_names, load_ladder_file, to_eval_config
from ginenv.experiments.eval.ratings import PointsRatings, points_ratings
from ginenv.experiments.eval.report import deal_values, pair_summary, rating_core

from ginenv.secret_deals import DealKey

Log = Callable[[str], None]


def rate(
    spec: str,
    ladder_file: str | Path,
    *,
    deals: int | None = None,
    time_limit: float | None = None,
    results: str | Path = "results",
    out: str | Path | None = None,
    backend: Backend = "local",
    workers: int = 0,
    progress: bool = True,
    log: Log | None = None,
    key: DealKey | None = None,
    sandbox: Sandbox | None = None,
) -> dict[str, Any]:
    """Rate ``spec`` against the ladder of ``ladder_file``; returns a JSON-ready result.

    ``deals`` overrides the ladder's duplicate deals per pairing (the reference is computed for
    that many too); ``results`` is where the ladder's run folder lives (``results/ladder-<hash>``,
    as ``ginenv ladder`` names it); ``out`` the newcomer's run folder (default
    ``results/rate-<hash>``). Both folders resume: a killed ``rate`` goes on where it stopped.
    ``key``: play on secret deals (see the module docstring); the ladder's seed then seeds the
    agents only, and a resume needs the same key. ``sandbox``: where ``exec:`` agents run
    (:mod:`ginenv.agents.sandbox`; None: the basic sandbox).
    """
    say = log or (lambda _line: None)
    reference = dataclasses.replace(_reference(spec, ladder_file, deals, time_limit, key), sandbox=sandbox)
    field = [a for a in reference.agents if a != spec]
    play = {"backend": backend, "workers": workers, "progress": progress, "log": say}
    records, ref_out, own_out = _play(reference, spec, field, Path(results), out, play)
    everyone = [*field, spec]
    # The ladder's scale: fitted on the ladder's own core (its agents but any far off their
    # scale, such as random); the newcomer and those are placed on it from their games.
    ladder_values = deal_values([r for r in records if spec not in (r["a"], r["b"])])
    core = rating_core(ladder_values, field) or field
    ratings = points_ratings(placement_values(deal_values(records), spec, core), agents=everyone, core=core)
    ranked = ratings.ranked()
    place = next(i for i, row in enumerate(ranked) if row["agent"] == spec)
    i = ratings.names.index(spec)
    return {
        "agent": spec,
        "rating": ratings.rating[i],
        "low": ratings.low[i],
        "high": ratings.high[i],
        "place": place + 1,
        "of": len(ranked),
        "above": ranked[place + 1]["agent"] if place + 1 < len(ranked) else None,
        "below": ranked[place - 1]["agent"] if place > 0 else None,
        "ladder": ranked,
        "margins": _margins(records, spec, ratings),
        "deals": reference.deals,
        "seed": reference.seed,
        "deal_commitment": reference.commitment,
        "deal_key": None if key is None else key.hex(),
        **publishable(everyone, key),
        "ladder_config": str(ladder_file),
        "ladder_results": str(ref_out),
        "results": None if own_out is None else str(own_out),
        "core": core,
        "scale": (
            f"points per hand against the ladder's field (mean 0 over {', '.join(core)}), 95% CI, "
            "deals as units"
        ),
    }


def _reference(
    spec: str, ladder_file: str | Path, deals: int | None, time_limit: float | None, key: DealKey | None
) -> EvalConfig:
    """The ladder's own run (its deals, seed and rules; ``deals``/``time_limit`` override the file's),
    checked: a fixed seed, a round robin in hand units, and ``spec`` a known agent."""
    ladder = load_ladder_file(ladder_file)
    if deals is not None:
        ladder.deals = deals
    if time_limit is not None:
        ladder.time_limit = time_limit
    if ladder.seed == "random":
        raise HarnessError(f"{ladder_file}: rate needs the ladder's fixed seed, not 'random'")
    check_agent_names([spec])
    from ginenv import agents

    reference = dataclasses.replace(to_eval_config(ladder, agents.available()), key=key)
    if ladder.unit != "hand" or reference.format != "round_robin":
        raise HarnessError(f"{ladder_file}: rate needs a round-robin ladder in hand units")
    return reference


def _play(
    reference: EvalConfig,
    spec: str,
    field: list[str],
    results: Path,
    out: str | Path | None,
    play: dict[str, Any],
) -> tuple[list[dict[str, Any]], Path, Path | None]:
    """Every game's record: the ladder's among its own agents (stored, or replayed on secret deals)
    and the newcomer's against them (``play``: :func:`evaluate`'s options); the ladder's folder and
    the newcomer's (None when ``spec`` is one of the ladder's agents). With a key, the key is
    disclosed in both folders once every game is over."""
    say: Log = play["log"]
    key = reference.key
    ref_out = results / f"ladder-{reference.fingerprint()}"
    if key is None:
        say(f"the ladder's own results: {ref_out} (computed once, reused by every rate)")
    else:
        say(f"the ladder replayed on the secret deals (no stored result is on them): {ref_out}")
    records = list(evaluate(reference, ref_out, **play))
    own_out: Path | None = None
    if spec not in reference.agents:
        cfg = EvalConfig(
            agents=(spec, *field),
            format="gauntlet",
            deals=reference.deals,
            unit="hand",
            rules=reference.rules,
            seed=reference.seed,
            turn_limit=reference.turn_limit,
            time_limit=reference.time_limit,
            key=key,
            sandbox=reference.sandbox,
        )
        own_out = Path(out) if out is not None else results / f"rate-{cfg.fingerprint()}"
        say(f"{spec} against the {len(field)} agents of the ladder: {own_out}")
        records += evaluate(cfg, own_out, **play)
    if key is not None:
        # Every game on these deals is over: from now on the key may be read with the results.
        for folder in (ref_out, own_out):
            if folder is not None:
                disclose_key(folder, key)
    return records, ref_out, own_out


def _margins(records: list[dict[str, Any]], spec: str, ratings: PointsRatings) -> list[dict[str, Any]]:
    """``spec``'s margin against each opponent (its view), the highest-rated opponent first."""
    margins = []
    own: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        if spec in (r["a"], r["b"]):
            own.setdefault((r["a"], r["b"]), []).append(r)
    for (a, b), recs in own.items():
        pair = pair_summary(a, b, recs, "hand")
        sign = 1.0 if pair["a"] == spec else -1.0
        other = pair["b"] if pair["a"] == spec else pair["a"]
        points = pair["points_per_hand"]
        low, high = sorted((sign * points["low"], sign * points["high"]))
        margins.append(
            {
                "opponent": other,
                "opponent_rating": ratings.rating[ratings.names.index(other)],
                "points_per_hand": sign * points["mean"],
                "low": low,
                "high": high,
                "p_value": pair["p_value"],
                "separated": low > 0 or high < 0,
                "deals": pair["deals"],
                "forfeits": pair["forfeits"],
            }
        )
    margins.sort(key=lambda m: -m["opponent_rating"])
    return margins


def placement_values(
    values: dict[tuple[str, str], dict[Any, float]], spec: str, core: list[str]
) -> dict[tuple[str, str], dict[Any, float]]:
    """The per-deal values the rating is fitted on: all of ``values`` but the newcomer ``spec``'s
    pairings with agents off the ladder's ``core`` (random, say).

    The fit holds the core fixed and places every other agent from its pairings; were the
    newcomer's games against random kept, random would be placed from them too and its rating would
    move with each newcomer (-60.46 where the ladder says -60.59). Without them, every agent of the
    ladder keeps exactly the rating, interval and place the ladder gave it, and the newcomer is
    placed from its games against the core, the agents whose margins add up. Its margins against
    the others are still measured and reported, only not used to place it.
    """
    return {
        pair: v for pair, v in values.items() if spec not in pair or all(a in core or a == spec for a in pair)
    }


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.2f}"


def format_rate(result: dict[str, Any]) -> str:
    """The terminal report of :func:`rate`."""
    spec = result["agent"]
    lines = [
        f"{spec}: {_num(result['rating'])} [{_num(result['low'])}, {_num(result['high'])}] points per hand "
        f"against the ladder's field (mean 0 over {', '.join(result['core'])}; 95% CI, deals as units)",
    ]
    where = f"place {result['place']} of {result['of']}"
    # The ranked list runs strongest first: "above" in it is the next weaker agent.
    weaker, stronger = result["above"], result["below"]
    if stronger and weaker:
        where += f", between {stronger} and {weaker}"
    elif weaker:
        where += f", above {weaker}: the strongest on this ladder"
    elif stronger:
        where += f", below {stronger}: the weakest on this ladder"
    lines.append(where)
    lines.append("")
    # Columns as wide as the longest name: a checkpoint's path or an exec: command stays whole.
    width = max(22, *(len(row["agent"]) for row in result["ladder"]))
    lines.append(f"  {'rank':>4}  {'agent':<{width}} {'rating':>8}  {'95% CI':>18}")
    for k, row in enumerate(result["ladder"], 1):
        mark = "  <-" if row["agent"] == spec else ""
        lines.append(
            f"  {k:>4}  {row['agent']:<{width}} {_num(row['rating']):>8}  "
            f"[{_num(row['low'])}, {_num(row['high'])}]{mark}"
        )
    lines.append("")
    lines.append(f"Margins: {spec} minus each agent, points per hand over {result['deals']} duplicate deals")
    width = max(22, *(len(m["opponent"]) for m in result["margins"]), 0)
    lines.append(f"  {'opponent':<{width}} {'margin [95% CI]':>26} {'p':>8}  separated")
    for m in result["margins"]:
        p = "n/a" if m["p_value"] is None else f"{m['p_value']:.2g}"
        margin = f"{_num(m['points_per_hand'])} [{_num(m['low'])}, {_num(m['high'])}]"
        separated = "yes" if m["separated"] else "no"
        lines.append(f"  {m['opponent']:<{width}} {margin:>26} {p:>8}  {separated}")
    forfeits = sum(sum((m.get("forfeits") or {}).values()) for m in result["margins"])
    if forfeits:
        lines.append(f"Forfeits: {forfeits} game(s) lost by the forfeit rule (see docs/PROTOCOL.md)")
    return "\n".join(lines)
