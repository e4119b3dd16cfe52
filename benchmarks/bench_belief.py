"""Quality of the Bayesian opponent model (``ginenv.agents.levels.belief``) against the true opponent hands.

Hands are played through ``ginenv.gin_rummy_v0.raw_env()`` between two registered agents (default
``expert`` against ``expert``). At every decision of either seat an :class:`OpponentModel` fed with
that seat's observations (exactly what an agent sees) gives a probability for each card; the true
opponent hand is read from the env's engine state *here only, for scoring* (agents never see it).

Scored on the unseen cards of each decision (the known facts are right by construction and would
only dilute the figures): mean log-loss (natural log) and Brier score per card, by stage of the hand
(``early``: stock >= 24, ``mid``: 14..23, ``late``: <= 13), for the model and for the baseline that
spreads the opponent's unknown slots evenly over the unseen cards (the same facts, no likelihood).
A calibration table bins the model's probabilities and gives the observed frequency in each bin.
The deadwood of the sampled hands (with and without the hand-quality tilt) is compared with the
opponent's true deadwood by the opponent's turns played.

``--aux CHECKPOINT`` (repeatable) also scores the auxiliary opponent-hand head of a PPO training
checkpoint (``ginenv.agents.neural.opponent_hand_predictor``) at the same decisions: the head is fed
exactly the deciding seat's observation vector (``observation["observation"]``, what the agent sees)
and scored on the same unseen cards with the same metrics (log-loss and Brier per unseen card by
stage, gain over the uniform baseline, its own calibration table), printed beside the model and the
baseline (columns ``aux``, or ``aux1``, ``aux2``... with several) and written to the JSON
(``quality``; the paths under ``aux_checkpoints``). The head was trained to predict the whole
opponent hand, including the cards the seat knows it holds (picked-up discards); it is scored here on
the unseen cards only, the comparison with the Bayesian model on the same positions. Probabilities are
clipped to ``[1e-6, 1 - 1e-6]`` for the log-loss, as the model's are.

Every hand must end by the game's rules: the count of hands the engine's turn limit truncated (two
players cycling cards through the discard pile; the levels are built never to do it) is reported,
and any such hand makes the run fail (exit status 1). Hand ``h`` is dealt and the agents seeded from
``(seed, h)`` alone, so ``--hands 117`` plays exactly the first 117 hands of the default run.

``--fit`` searches the likelihood factors (coordinate search on the log-loss of the recorded
decisions) and prints the best :class:`BeliefParams`; the defaults in ``agents/levels/belief.py`` came
from such a fit.

Run::

    python benchmarks/bench_belief.py                        # 300 hands, expert vs expert
    python benchmarks/bench_belief.py --hands 100 --agents hard hard
    python benchmarks/bench_belief.py --json /tmp/belief.json
    python benchmarks/bench_belief.py --fit --hands 400 --agents greedy greedy
    python benchmarks/bench_belief.py --hands 100 --aux runs/<run>/checkpoints/latest.pt
    python benchmarks/bench_belief.py --agents neural neural --aux agents/neural/data/neural.pt --policy head

``--policy PROPOSAL`` (repeatable: ``uniform``, ``model``, ``head``) also scores the policy-weighted
world sampler (:class:`research.beliefs.PolicyBelief`: ``--proposals`` candidate hands
from that proposal, weighted by the likelihood of the opponent's last ``--max-turns`` turns under
the network ``--checkpoint``), by the marginals of its weighted particles, fed each seat's own
observations in order. ``--every K`` scores every K-th decision only, the same ones for every
estimate.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from ginenv.agents.levels.belief import BeliefParams, Event, OpponentModel

from ginenv import agents, gin_rummy_v0
from ginenv.actions import DISCARD_BASE, KNOCK_BASE
from ginenv.cards import cards_of
from ginenv.melds import deadwood_of_mask
from ginenv.observation import SeatView, decode

STAGES = ("early", "mid", "late")
BINS = np.linspace(0.0, 1.0, 11)
EPS = 1e-6


def stage_of(stock_size: int) -> str:
    """Stage of a hand by the stock size (31 at the deal)."""
    return "early" if stock_size >= 24 else "mid" if stock_size >= 14 else "late"


@dataclass
class Record:
    """One decision of one seat: what its model had read, and the truth."""

    view: SeatView
    obs: np.ndarray  # the seat's observation vector, as the agent saw it (for --aux)
    events: list[Event]
    truth: int  # the opponent's hand
    opp_deadwood: int
    hand: int = -1  # which hand of the run, and whose decision (for --policy's replay of the seat's history)
    seat: int = -1


def collect(
    names: tuple[str, str], hands: int, seed: int, truncated: list[int] | None = None
) -> list[Record]:
    """Play ``hands`` hands and record every decision of both seats; the indices of the hands that
    ended truncated (the turn limit, not a result of the game) are appended to ``truncated``."""
    env = gin_rummy_v0.raw_env()
    players = [agents.make(names[0], seed=seed), agents.make(names[1], seed=seed + 1)]
    records: list[Record] = []
    for h in range(hands):
        env.reset(seed=seed * 100_003 + h, options={"dealer": h % 2})
        for p, player in enumerate(players):
            player.reset(seed * 7919 + 2 * h + p)
        models = [OpponentModel(), OpponentModel()]
        for agent_id in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                result = env.infos[agent_id].get("result") or {}
                if truncated is not None and result.get("kind") == "truncated" and h not in truncated:
                    truncated.append(h)
                env.step(None)
                continue
            p = int(agent_id[-1])
            view = decode(obs["observation"])
            models[p].update(view)
            truth = env.hand.hands[1 - p]  # scoring only: the agents never see this
            vec = np.array(obs["observation"], dtype=np.float32)
            records.append(Record(view, vec, list(models[p].events), truth, deadwood_of_mask(truth), h, p))
            env.step(players[p].act(obs))
    return records


def model_of(rec: Record, params: BeliefParams) -> OpponentModel:
    """A model holding exactly this record's state, under ``params``."""
    m = OpponentModel(params)
    m.update(rec.view)
    m.events = list(rec.events)
    m._cache = {}
    return m


ESTIMATES = ("model", "sampled", "uniform")


def aux_names(count: int) -> list[str]:
    """The estimate names of ``count`` auxiliary heads: ``aux`` alone, else ``aux1``, ``aux2``..."""
    return ["aux"] if count == 1 else [f"aux{i + 1}" for i in range(count)]


def aux_predictions(records: list[Record], path: str, batch: int = 4096) -> np.ndarray:
    """The auxiliary head of checkpoint ``path`` on every record's observation: (len(records), 52)."""
    from ginenv.agents.neural import opponent_hand_predictor

    predict = opponent_hand_predictor(path)
    out = np.zeros((len(records), 52))
    for i in range(0, len(records), batch):
        chunk = np.stack([r.obs for r in records[i : i + batch]])
        out[i : i + len(chunk)] = predict(chunk)
    return out


def policy_predictions(
    records: list[Record],
    proposal: str,
    proposals: int,
    max_turns: int,
    temperature: float,
    checkpoint: str,
    every: int,
    seed: int,
    weighting: str = "exact",
    adapt: bool = True,
    ess_floor: float = 0.0,
) -> tuple[np.ndarray, dict[str, float]]:
    """The policy-weighted sampler (:class:`research.beliefs.PolicyBelief`) at every
    ``every``-th record: (len(records), 52) probabilities (the weighted particles' marginals; other
    rows NaN) and its cost (seconds per decision, mean effective sample size). Each seat's belief is
    fed that seat's observations of the hand in order, exactly what the agent saw."""
    import torch
    from ginenv.agents.neural import opponent_hand_predictor, shared_policy

    # research/ is not installed (the wheel leaves it out): run as `python benchmarks/bench_belief.py`
    # from a checkout, the script's folder is on the path but the repository root is not. Last, not
    # first: the root's ginenv/ (without ginenv.agents) must not shadow an installed ginenv.
    sys.path.append(str(Path(__file__).resolve().parents[1]))
    from research.beliefs import PolicyBelief

    torch.set_num_threads(1)
    policy = shared_policy(checkpoint)
    head = opponent_hand_predictor(checkpoint) if proposal == "head" else None
    out = np.full((len(records), 52), np.nan)
    beliefs: dict[tuple[int, int], PolicyBelief] = {}
    rng = np.random.default_rng(seed)
    ess, took = [], 0.0
    for r, rec in enumerate(records):
        key = (rec.hand, rec.seat)
        if key not in beliefs:
            beliefs = {k: v for k, v in beliefs.items() if k[0] == rec.hand}
            beliefs[key] = PolicyBelief(
                policy, proposal, proposals, max_turns, temperature, head, weighting, adapt, ess_floor
            )
        belief = beliefs[key]
        belief.update(rec.obs)
        if r % every == 0:
            t0 = time.perf_counter()
            out[r] = belief.probabilities(rng)
            took += time.perf_counter() - t0
            ess.append(belief.ess)
    n = max(1, len(ess))
    return out, {"seconds_per_decision": took / n, "mean_ess": float(np.mean(ess)) if ess else 0.0}


def score(
    records: list[Record],
    params: BeliefParams,
    samples: int = 0,
    seed: int = 0,
    aux: dict[str, np.ndarray] | None = None,
    every: int = 1,
) -> dict[str, Any]:
    """Log-loss and Brier by stage for each estimate; calibration counts of all but the baseline.

    ``model``: the exact marginals of the posterior (:meth:`OpponentModel.probabilities`, what the
    expert uses); ``sampled``: the card frequencies of ``samples`` hands drawn with the hand-quality
    tilt (what the master simulates; skipped when ``samples`` is 0); ``uniform``: the baseline;
    ``aux``: for each name, the probabilities (len(records), 52) an auxiliary head gave at each record
    (:func:`aux_predictions`, or :func:`policy_predictions`), scored on the same unseen cards as the
    model. Only every ``every``-th record is scored, for every estimate alike.
    """
    rng = np.random.default_rng(seed)
    aux = aux or {}
    names = (ESTIMATES if samples else ("model", "uniform")) + tuple(aux)
    acc = {
        s: {"n": 0, "decisions": 0, "hidden": 0}
        | {f"{k}_{e}": 0.0 for e in names for k in ("ll", "br", "right")}
        for s in STAGES
    }
    nb = len(BINS) - 1
    cal = {e: np.zeros((3, nb)) for e in names if e != "uniform"}
    for r, rec in enumerate(records):
        if r % every:
            continue
        m = model_of(rec, params)
        ids = cards_of(rec.view.unseen)
        if not ids or m.slots == 0:
            continue
        est = {"model": m.probabilities()[ids], "uniform": m.uniform_probabilities()[ids]}
        if samples:
            hands = m.sample_hands(samples, rng)
            freq = np.array([(hands >> c & 1).mean() for c in ids])
            # A light pull towards the exact marginals keeps unsampled cards off 0 and 1.
            est["sampled"] = (freq * samples + est["model"] * 8) / (samples + 8)
        for e, probs in aux.items():
            est[e] = probs[r, ids]
        y = np.array([rec.truth >> c & 1 for c in ids], dtype=float)
        a = acc[stage_of(rec.view.stock_size)]
        a["n"] += len(ids)
        a["decisions"] += 1
        a["hidden"] += float(y.sum())
        for e in names:
            # The opponent's hidden cards a hand drawn with these marginals holds, in expectation.
            a[f"right_{e}"] += float((est[e] * y).sum())
            q = np.clip(est[e], EPS, 1 - EPS)
            a[f"ll_{e}"] += float(-(y * np.log(q) + (1 - y) * np.log(1 - q)).sum())
            a[f"br_{e}"] += float(((q - y) ** 2).sum())
            if e in cal:
                b = np.clip(np.digitize(est[e], BINS) - 1, 0, nb - 1)
                np.add.at(cal[e][0], b, 1)
                np.add.at(cal[e][1], b, est[e])
                np.add.at(cal[e][2], b, y)
    out: dict[str, Any] = {"estimates": list(names), "stages": {}, "calibration": []}
    tot = {k: 0.0 for k in acc[STAGES[0]]}
    for s in STAGES:
        for k in tot:
            tot[k] += acc[s][k]
        out["stages"][s] = summarise(acc[s], names)
    out["stages"]["all"] = summarise(tot, names)
    for i in range(nb):
        row: dict[str, Any] = {"bin": f"{BINS[i]:.1f}-{BINS[i + 1]:.1f}"}
        for e, c in cal.items():
            row[f"{e}_cards"] = int(c[0, i])
            row[f"{e}_mean_p"] = c[1, i] / c[0, i] if c[0, i] else None
            row[f"{e}_observed"] = c[2, i] / c[0, i] if c[0, i] else None
        out["calibration"].append(row)
    return out


def summarise(a: dict[str, float], names: tuple[str, ...]) -> dict[str, Any]:
    n = max(1.0, a["n"])
    out: dict[str, Any] = {"decisions": int(a["decisions"]), "cards": int(a["n"])}
    d = max(1.0, a["decisions"])
    out["hidden_cards"] = a["hidden"] / d
    for e in names:
        out[f"right_cards_{e}"] = a[f"right_{e}"] / d
        out[f"log_loss_{e}"] = a[f"ll_{e}"] / n
        out[f"brier_{e}"] = a[f"br_{e}"] / n
    for e in names:
        if e != "uniform" and a["ll_uniform"]:
            out[f"log_loss_gain_pct_{e}"] = 100.0 * (1 - a[f"ll_{e}"] / a["ll_uniform"])
            out[f"brier_gain_pct_{e}"] = 100.0 * (1 - a[f"br_{e}"] / a["br_uniform"])
    return out


def tilt_check(records: list[Record], params: BeliefParams, samples: int, seed: int) -> list[dict[str, Any]]:
    """Mean and 20% quantile of the opponent's deadwood: truth vs sampled hands, by opponent turns."""
    rng = np.random.default_rng(seed)
    groups: dict[int, dict[str, list[float]]] = {}
    for rec in records[::3]:
        m = model_of(rec, params)
        if m.slots == 0:
            continue
        t = min(m.turns, 12)
        g = groups.setdefault(t, {"truth": [], "flat": [], "tilt": []})
        g["truth"].append(rec.opp_deadwood)
        for key, quality in (("flat", False), ("tilt", True)):
            hands = m.sample_hands(samples, rng, quality=quality)
            g[key].extend(deadwood_of_mask(int(x)) for x in hands)
    rows = []
    for t in sorted(groups):
        g = groups[t]
        row: dict[str, Any] = {"opp_turns": t, "decisions": len(g["truth"])}
        for key in ("truth", "flat", "tilt"):
            arr = np.array(g[key], dtype=float)
            row[f"{key}_mean"] = float(arr.mean())
            row[f"{key}_q20"] = float(np.quantile(arr, 0.2))
            row[f"{key}_le10"] = float((arr <= 10).mean())
        rows.append(row)
    return rows


def fit(records: list[Record], start: BeliefParams, rounds: int = 3) -> BeliefParams:
    """Coordinate search of the likelihood factors on the total log-loss."""

    def loss(p: BeliefParams) -> float:
        s = score(records, p)["stages"]["all"]
        return float(s["log_loss_model"])

    best = start
    best_loss = loss(best)
    names = [f.name for f in dataclasses.fields(BeliefParams) if f.name not in ("quality", "quality_turns")]
    for r in range(rounds):
        step = 1.5 / (r + 1)
        for name in names:
            value = getattr(best, name)
            for cand in (value * (1 + 0.25 * step), value / (1 + 0.25 * step)):
                if name == "memory":
                    cand = min(cand, 1.0)
                trial = dataclasses.replace(best, **{name: cand})
                lt = loss(trial)
                if lt < best_loss - 1e-6:
                    best, best_loss = trial, lt
        print(f"fit round {r}: log-loss {best_loss:.5f} {best}", file=sys.stderr)
    return best


def print_report(result: dict[str, Any]) -> None:
    print(f"agents {result['agents']}, {result['hands']} hands, {result['decisions']} decisions")
    stages = result["quality"]["stages"]
    names = result["quality"]["estimates"]
    for metric, label in (("log_loss", "log-loss"), ("brier", "Brier")):
        print(f"\n{label} per unseen card (gain: reduction from the uniform baseline)")
        print(
            f"{'stage':6} {'decisions':>9} "
            + " ".join(f"{e:>8}" for e in names)
            + "   gain "
            + " / ".join(e for e in names if e != "uniform")
        )
        for s, a in stages.items():
            gains = " / ".join(f"{a[f'{metric}_gain_pct_{e}']:.1f}%" for e in names if e != "uniform")
            values = " ".join(f"{a[f'{metric}_{e}']:8.4f}" for e in names)
            print(f"{s:6} {a['decisions']:9d} {values}   {gains}")
    print("\nthe opponent's hidden cards per decision, and how many of them a drawn hand holds (expected)")
    for s, a in stages.items():
        right = " ".join(f"{e} {a[f'right_cards_{e}']:.2f}" for e in names)
        print(f"{s:6} hidden {a['hidden_cards']:.2f}: {right}")
    print("\ncalibration: probability bin, cards, mean probability, observed frequency")
    cal_names = [e for e in names if e != "uniform"]
    print(f"{'bin':8} " + "   ".join(f"{e + ' cards':>13} {'mean p':>6} {'obs':>6}" for e in cal_names))
    for row in result["quality"]["calibration"]:
        cells = []
        for e in cal_names:
            if row[f"{e}_cards"]:
                cells.append(f"{row[f'{e}_cards']:13d} {row[f'{e}_mean_p']:6.3f} {row[f'{e}_observed']:6.3f}")
            else:
                cells.append(f"{0:13d} {'-':>6} {'-':>6}")
        print(f"{row['bin']:8} " + "   ".join(cells))
    if result.get("deadwood"):
        print("\nopponent deadwood by opponent turns: truth vs sampled hands (flat: no quality tilt)")
        print(f"{'turns':>5} {'n':>5} {'truth':>6} {'flat':>6} {'tilt':>6}   P(dw<=10) truth / flat / tilt")
        for r in result["deadwood"]:
            print(
                f"{r['opp_turns']:5d} {r['decisions']:5d} {r['truth_mean']:6.1f} {r['flat_mean']:6.1f} "
                f"{r['tilt_mean']:6.1f}   {r['truth_le10']:.2f} / {r['flat_le10']:.2f} / {r['tilt_le10']:.2f}"
            )
    if result.get("timing"):
        t = result["timing"]
        print(f"\ndecision time of {t['agent']} (against {t['opponent']}, {t['decisions']} decisions):")
        for kind, row in t["by_kind"].items():
            print(
                f"  {kind:9} n={row['n']:6d} median {row['median_ms']:7.2f} ms  p90 {row['p90_ms']:7.2f}"
                f"  p99 {row['p99_ms']:7.2f}  max {row['max_ms']:7.2f}"
            )
    print(f"\ntime: play {result['seconds_play']:.1f} s, scoring {result['seconds_score']:.1f} s")


def timing(name: str, opponent: str, hands: int, seed: int) -> dict[str, Any]:
    """Wall time of ``act()`` for every decision of ``name`` over ``hands`` hands (after one warm-up
    hand, so that compilation and cache loading are not counted), by kind of decision."""
    env = gin_rummy_v0.raw_env()
    me, other = agents.make(name, seed=seed), agents.make(opponent, seed=seed + 1)
    times: dict[str, list[float]] = {"draw": [], "discard": [], "knockable": []}
    for h in range(hands + 1):
        env.reset(seed=seed * 7_777 + h, options={"dealer": h % 2})
        me.reset(seed + 2 * h)
        other.reset(seed + 2 * h + 1)
        seat = f"player_{h % 2}"
        for agent_id in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if agent_id != seat:
                env.step(other.act(obs))
                continue
            t0 = time.perf_counter()
            action = me.act(obs)
            dt = (time.perf_counter() - t0) * 1000.0
            mask = obs["action_mask"]
            kind = (
                "knockable" if mask[KNOCK_BASE:].any() else "discard" if mask[DISCARD_BASE:].any() else "draw"
            )
            if h:
                times[kind].append(dt)
            env.step(action)
    times["all"] = [t for k in ("draw", "discard", "knockable") for t in times[k]]
    by_kind = {}
    for kind, values in times.items():
        if values:
            arr = np.array(values)
            by_kind[kind] = {
                "n": int(arr.size),
                "median_ms": float(np.median(arr)),
                "p90_ms": float(np.percentile(arr, 90)),
                "p99_ms": float(np.percentile(arr, 99)),
                "max_ms": float(arr.max()),
            }
    return {
        "agent": name,
        "opponent": opponent,
        "hands": hands,
        "decisions": len(times["all"]),
        "by_kind": by_kind,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", nargs=2, default=["expert", "expert"], help="the two registered agents")
    ap.add_argument("--hands", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--samples", type=int, default=128, help="sampled hands per decision (0: model only)")
    ap.add_argument("--no-deadwood", action="store_true", help="skip the sampled-deadwood check")
    ap.add_argument("--fit", action="store_true", help="fit the likelihood factors, report with the fit")
    ap.add_argument("--time", metavar="AGENT", help="also time AGENT's decisions (e.g. master)")
    ap.add_argument("--time-opponent", default="expert", help="the timed agent's opponent")
    ap.add_argument("--time-hands", type=int, default=200, help="hands played for the timing")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    ap.add_argument(
        "--aux",
        metavar="CHECKPOINT",
        action="append",
        default=[],
        help="also score this PPO checkpoint's auxiliary opponent-hand head (repeatable)",
    )
    ap.add_argument(
        "--policy",
        metavar="PROPOSAL",
        action="append",
        default=[],
        choices=("uniform", "model", "head"),
        help="also score the policy-weighted sampler (research.beliefs) with this proposal "
        "(repeatable): columns pol-uni, pol-mod, pol-head",
    )
    ap.add_argument("--proposals", type=int, default=256, help="--policy: candidate hands per decision")
    ap.add_argument("--max-turns", type=int, default=6, help="--policy: opponent turns replayed at most")
    ap.add_argument("--policy-temperature", type=float, default=1.0, help="--policy: divides the logits")
    ap.add_argument(
        "--checkpoint", default=None, help="--policy: the opponent's policy model and head (default: shipped)"
    )
    ap.add_argument(
        "--weighting",
        default="exact",
        choices=("exact", "product"),
        help="--policy: likelihood / proposal (exact) or likelihood alone (product: proposal kept as prior)",
    )
    ap.add_argument("--no-adapt", action="store_true", help="--policy: one uniform draw per stock draw")
    ap.add_argument("--ess-floor", type=float, default=0.0, help="--policy: temper weights to this ESS share")
    ap.add_argument("--every", type=int, default=1, help="score every k-th decision only (all estimates)")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    truncated: list[int] = []
    records = collect((args.agents[0], args.agents[1]), args.hands, args.seed, truncated)
    t1 = time.perf_counter()
    params = BeliefParams()
    aux_paths = dict(zip(aux_names(len(args.aux)), args.aux, strict=True))
    aux = {name: aux_predictions(records, path) for name, path in aux_paths.items()}
    policy_cost: dict[str, dict[str, float]] = {}
    if args.policy:
        from ginenv.agents.neural import SHIPPED_CHECKPOINT

        checkpoint = args.checkpoint or str(SHIPPED_CHECKPOINT)
        for proposal in args.policy:
            name = {"uniform": "pol-uni", "model": "pol-mod", "head": "pol-head"}[proposal]
            aux[name], policy_cost[name] = policy_predictions(
                records,
                proposal,
                args.proposals,
                args.max_turns,
                args.policy_temperature,
                checkpoint,
                args.every,
                args.seed,
                args.weighting,
                not args.no_adapt,
                args.ess_floor,
            )
            print(f"{name}: {policy_cost[name]}", file=sys.stderr)
    if args.fit:
        params = fit(records, params)
        print(f"fitted: {params}")
    result: dict[str, Any] = {
        "agents": list(args.agents),
        "hands": args.hands,
        "seed": args.seed,
        "decisions": len(records),
        "truncated_hands": truncated,
        "params": dataclasses.asdict(params),
        "samples": args.samples,
        "quality": score(records, params, args.samples, args.seed, aux, args.every),
        "every": args.every,
    }
    if policy_cost:
        result["policy"] = {
            "proposals": args.proposals,
            "max_turns": args.max_turns,
            "temperature": args.policy_temperature,
            "weighting": args.weighting,
            "adapt": not args.no_adapt,
            "ess_floor": args.ess_floor,
            "cost": policy_cost,
        }
    if aux:
        result["aux_checkpoints"] = aux_paths
    if not args.no_deadwood:
        result["deadwood"] = tilt_check(records, params, max(32, args.samples // 2), args.seed)
    result["seconds_play"] = t1 - t0
    result["seconds_score"] = time.perf_counter() - t1
    if args.time:
        result["timing"] = timing(args.time, args.time_opponent, args.time_hands, args.seed)
    print_report(result)
    print(f"hands truncated by the turn limit: {len(truncated)} {truncated if truncated else ''}".rstrip())
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1, default=float)
        print(f"written: {args.json}")
    ok = all(
        math.isfinite(v[f"log_loss_{e}"])
        for v in result["quality"]["stages"].values()
        for e in result["quality"]["estimates"]
    )
    return 0 if ok and not truncated else 1


if __name__ == "__main__":
    raise SystemExit(main())
