"""Fit the value estimate ``V`` of the luck control variate; write ``experiments/eval/data/luck_value.json``.

``V`` (see :mod:`ginenv.experiments.eval.luck`) is linear in fixed features, so a hand's luck is
``w . delta`` with ``delta`` from :func:`~ginenv.experiments.eval.luck.state_delta`. This script plays
duplicate deals of every adjacent pair of the default ladder on a seed that evaluations do not use
(default 101; the harness's default is 0, and ``benchmarks/bench_variance.py`` measures on 0), and
chooses the weights ``w`` that minimise the variance of the luck-corrected pair sums on those deals:
a ridge least-squares regression of each deal's pair sum (A's points over both games, centred per
pairing, so a pairing's mean difference is not asked of a zero-mean variate) on the pair's
``delta`` (seat 0's in the first game minus seat 0's in the second, A's view). The weights are then
fixed: on any other deals the corrected estimate is exactly unbiased.

The games are played as the harness plays them (deal ``k`` of the seed dealt by
:func:`~ginenv.experiments.eval.harness.deal_seed` with dealer ``k % 2``, both agents fresh and reseeded by
:func:`~ginenv.experiments.eval.harness.agent_seed`, seats swapped for the second game), with a plain env
loop so that the fit needs no weights yet. They are cached as JSON lines (``--games``), so a refit
with other settings does not replay them.

Run (one core; about 7 minutes for the default 2000 deals a pairing, most of it ``master``)::

    python benchmarks/fit_luck_value.py
    python benchmarks/fit_luck_value.py --deals 300 --out /tmp/luck_value.json   # a quick look
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from ginenv.experiments.eval.harness import agent_seed, deal_seed, single_thread_torch
from ginenv.experiments.eval.luck import (
    DEFAULT_VALUE_PATH,
    NUM_WEIGHTS,
    parse_value,
    state_delta,
    value_document,
)

from ginenv.engine import HandState
from ginenv.rules import Rules

LADDER = ("random", "easy", "normal", "hard", "neural", "expert", "master")


def adjacent_pairs(ladder: tuple[str, ...] = LADDER) -> list[tuple[str, str]]:
    """(A, B) for each neighbour pair, the stronger first (as the harness's ``adjacent`` format)."""
    return [(ladder[i + 1], ladder[i]) for i in range(len(ladder) - 1)]


def play_hand(env: Any, seats: tuple[str, str], seed: int, deal: int, rules: Rules) -> HandState:
    """One game (a hand) of deal ``deal``, ``seats[i]`` in seat ``player_i``, seeded as the harness does."""
    from ginenv import agents

    players = [agents.make(name, rules=rules) for name in seats]
    dealer = deal % 2
    env.reset(seed=deal_seed(seed, deal), options={"dealer": dealer})
    for p in (0, 1):
        players[p].reset(agent_seed(seed, deal, 0, 1 if p == dealer else 0))
    names = list(env.possible_agents)
    for agent_id in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        env.step(int(players[names.index(agent_id)].act(obs)))
    return env.hand


def play_games(path: Path, seed: int, deals: int, pairs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """The fit games (both games of each deal of each pairing), from the cache at ``path`` or played
    now and appended there: ``{"pair", "deal", "game", "dealer", "deck", "actions", "p0", "kind"}``."""
    from ginenv import gin_rummy_v0

    games: dict[tuple[str, int, int], dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            g = json.loads(line)
            games[(g["pair"], g["deal"], g["game"])] = g
    rules = Rules()
    env = gin_rummy_v0.raw_env(rules=rules, mode="hand")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        for a, b in pairs:
            pair = f"{a}-{b}"
            if all((pair, k, g) in games for k in range(deals) for g in (0, 1)):
                continue
            t0 = time.perf_counter()
            for k in range(deals):
                for game in (0, 1):
                    if (pair, k, game) in games:
                        continue
                    state = play_hand(env, (a, b) if game == 0 else (b, a), seed, k, rules)
                    assert state.result is not None
                    # A truncated hand scores 0, as in the harness.
                    p0 = 0 if state.result.truncated else state.result.score_deltas()[0]
                    g = {
                        "pair": pair,
                        "deal": k,
                        "game": game,
                        "dealer": state.dealer,
                        "deck": list(state.deck),
                        "actions": [x for _, x in state.history],
                        "p0": p0,
                        "kind": state.result.kind,
                    }
                    games[(pair, k, game)] = g
                    fh.write(json.dumps(g) + "\n")
            print(f"played {pair}: {deals} deals in {time.perf_counter() - t0:.0f} s", flush=True)
    return [games[(f"{a}-{b}", k, g)] for a, b in pairs for k in range(deals) for g in (0, 1)]


def game_delta(g: dict[str, Any], rules: Rules) -> np.ndarray:
    """:func:`state_delta` of a cached game, replayed by the engine."""
    state = HandState(rules, dealer=g["dealer"], deck=g["deck"])
    for action in g["actions"]:
        state.step(action)
    return state_delta(state)


def fit_weights(pair_delta: np.ndarray, pair_sum: np.ndarray, groups: np.ndarray, ridge: float) -> np.ndarray:
    """Weights minimising the summed squares of the centred pair sums minus ``pair_delta @ w``
    plus ``ridge * |w|^2``; pair sums are centred within each group (pairing)."""
    y = pair_sum.astype(np.float64).copy()
    for grp in np.unique(groups):
        y[groups == grp] -= y[groups == grp].mean()
    x = pair_delta
    return np.linalg.solve(x.T @ x + ridge * np.eye(x.shape[1]), x.T @ y)


def dump_document(doc: dict[str, Any]) -> str:
    """The value document as JSON text, one line per block of weights (short, and diffs read well)."""
    text = json.dumps({k: v for k, v in doc.items() if k != "weights"}, indent=1)
    blocks = ",\n".join(
        f'  "{table}": [\n' + ",\n".join("   " + json.dumps(row) for row in rows) + "\n  ]"
        for table, rows in doc["weights"].items()
    )
    # The weights go last, after the provenance; json.loads reads the same document back.
    text = text[: text.rindex("}")].rstrip() + ',\n "weights": {\n' + blocks + "\n }\n}\n"
    assert json.loads(text) == doc
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=101, help="master seed of the fit deals (not 0)")
    ap.add_argument("--deals", type=int, default=2000, help="duplicate deals per pairing")
    ap.add_argument("--ridge", type=float, default=10.0, help="ridge penalty on the weights")
    ap.add_argument(
        "--games",
        type=Path,
        default=None,
        help="cache of the played games (default results/luck-fit-seedS.jsonl)",
    )
    ap.add_argument("--out", type=Path, default=DEFAULT_VALUE_PATH, help="where to write the weights")
    args = ap.parse_args(argv)
    if args.seed == 0:
        ap.error("seed 0 is the harness's default evaluation seed: fit on another one")
    single_thread_torch()
    pairs = adjacent_pairs()
    cache = args.games or Path("results") / f"luck-fit-seed{args.seed}.jsonl"
    games = play_games(cache, args.seed, args.deals, pairs)
    rules = Rules()
    t0 = time.perf_counter()
    deltas = np.array([game_delta(g, rules) for g in games]).reshape(-1, 2, NUM_WEIGHTS)
    print(f"features of {len(games)} hands in {time.perf_counter() - t0:.0f} s", flush=True)
    p0 = np.array([g["p0"] for g in games], dtype=np.float64).reshape(-1, 2)
    groups = np.array([g["pair"] for g in games[::2]])
    # A sits in seat 0 in game 0 and in seat 1 in game 1: A's view is seat 0's minus seat 0's.
    pair_sum = p0[:, 0] - p0[:, 1]
    pair_delta = deltas[:, 0] - deltas[:, 1]
    w = fit_weights(pair_delta, pair_sum, groups, args.ridge)
    in_sample = {}
    for grp in dict.fromkeys(groups):
        m = groups == grp
        raw = np.var(pair_sum[m])
        in_sample[str(grp)] = round(float(1 - np.var(pair_sum[m] - pair_delta[m] @ w) / raw), 4)
    print("variance reduction on the fit deals:", in_sample)
    fit = {
        "method": "ridge least squares of centred pair sums on pair deltas (least-variance control variate)",
        "seed": args.seed,
        "deals_per_pairing": args.deals,
        "pairings": [f"{a}-{b}" for a, b in pairs],
        "rules": "standard",
        "ridge": args.ridge,
        "in_sample_variance_reduction": in_sample,
        "command": shlex.join(
            ["python", "benchmarks/fit_luck_value.py", *(sys.argv[1:] if argv is None else argv)]
        ),
        "date": datetime.date.today().isoformat(),
    }
    doc = value_document(w, fit)
    parse_value(doc)  # what is written must load
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dump_document(doc))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
