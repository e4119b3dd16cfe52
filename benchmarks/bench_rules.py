"""Rules-core speed against OpenSpiel, measured as ratios in one run on one machine.

What is timed (see ``shared/DESIGN.md``, "Performance protocol"):

1. Exact deadwood, one Python call at a time, on four pre-generated hand sets (random 10 and 11
   cards, meld-rich 10 and 11 cards built from 2-3 random sets or runs plus random filler). Both
   libraries get the very same hands. OpenSpiel's call is
   ``pyspiel.gin_rummy.GinRummyUtils(13, 4, 10).min_deadwood(list_of_card_ints)``.
   OpenSpiel's card ids are ``suit * 13 + rank`` with suits ``s c d h``, the same as ginenv's.

   * 10-card hands: ``ginenv.melds.deadwood_of_mask(mask)`` (the hot path) and the public
     ``ginenv.melds.deadwood(list_of_ints)`` against OpenSpiel's ``min_deadwood(list)``.
   * 11-card hands: OpenSpiel's ``min_deadwood`` of 11 cards is the least deadwood *after the best
     discard*, so the like-for-like ginenv calls are the compiled ``_best_discard_deadwood(mask)`` and
     the public ``best_discard_deadwood(list)`` (``best_discards(list)``, which also lists every best
     discard, is reported for information). The plain 11-card
     ``deadwood_of_mask(mask)`` (no discard, a different quantity) is shown for information only.

   Each call set is warmed up first (numba JIT compile / cache load), then timed with
   ``time.perf_counter`` over every hand of the set, with the garbage collector off during the pass
   (as ``timeit`` does); the figure is the best of ``--repeats`` passes. ginenv and OpenSpiel passes
   alternate so that machine drift hits both alike.

2. Random legal play of whole hands, no observations. ginenv: ``HandState(rng=rng, dealer=i % 2)``,
   then ``h.step(rng.choice(h.legal_actions()))`` until ``h.is_over``. OpenSpiel:
   ``pyspiel.load_game("gin_rummy")``, ``new_initial_state()``, chance nodes resolved by sampling
   ``chance_outcomes()`` (gin rummy's are uniform over the unseen cards, checked during warm-up, so a
   plain ``rng.choice`` samples them exactly), player nodes ``rng.choice(state.legal_actions())``.
   Reported: hands/s (best of ``--repeats`` alternating passes), decisions per hand. OpenSpiel also
   has chance steps (the deal and every stock draw) and, after a knock, meld-declaration and layoff
   decisions that ginenv resolves inside the showdown, so its decisions per hand run higher.

Targets (from the issue): whole hands >= 5x OpenSpiel's hands/s; deadwood >= 1x on every hand set.

A sanity check compares values on every generated hand: 10-card values must equal OpenSpiel's;
for 11 cards OpenSpiel's shortcut may be an upper bound, so differences are counted by direction
(ginenv lower = OpenSpiel's known over-estimate; ginenv higher would be a ginenv bug).

Run::

    python benchmarks/bench_rules.py                 # full run
    python benchmarks/bench_rules.py --quick         # a short run
    python benchmarks/bench_rules.py --json out.json # also write the figures
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from importlib.metadata import version

import pyspiel

from ginenv.cards import cards_of
from ginenv.engine import HandState
from ginenv.melds import (
    _best_discard_deadwood,
    best_discard_deadwood,
    best_discards,
    deadwood,
    deadwood_of_mask,
)

PLAY_TARGET = 5.0
DEADWOOD_TARGET = 1.0


# --------------------------------------------------------------------------- hand generation


def random_meld(rng: random.Random) -> int:
    """A random valid meld as a bitmask: a set (3 or 4 of a rank) or a run (3-5 in a suit)."""
    if rng.random() < 0.5:
        rank = rng.randrange(13)
        suits = rng.sample(range(4), rng.choice((3, 3, 4)))
        return sum(1 << (s * 13 + rank) for s in suits)
    suit = rng.randrange(4)
    length = rng.choice((3, 3, 4, 5))
    start = rng.randrange(13 - length + 1)
    return sum(1 << (suit * 13 + start + i) for i in range(length))


def meld_rich_hand(rng: random.Random, size: int) -> int:
    """2-3 disjoint random melds plus random filler cards, ``size`` cards in all."""
    while True:
        hand = 0
        for _ in range(rng.choice((2, 3))):
            meld = random_meld(rng)
            if meld & hand:
                break
            hand |= meld
        else:
            have = hand.bit_count()
            if have > size:
                continue
            rest = [c for c in range(52) if not hand >> c & 1]
            for c in rng.sample(rest, size - have):
                hand |= 1 << c
            return hand


def random_hand(rng: random.Random, size: int) -> int:
    """``size`` distinct random cards as a bitmask."""
    hand = 0
    for c in rng.sample(range(52), size):
        hand |= 1 << c
    return hand


@dataclass
class HandSet:
    name: str
    size: int
    masks: list[int]
    lists: list[list[int]] = field(init=False)

    def __post_init__(self) -> None:
        self.lists = [cards_of(m) for m in self.masks]


def make_hand_sets(n_random: int, n_rich: int, seed: int) -> list[HandSet]:
    rng = random.Random(seed)
    return [
        HandSet("random 10", 10, [random_hand(rng, 10) for _ in range(n_random)]),
        HandSet("random 11", 11, [random_hand(rng, 11) for _ in range(n_random)]),
        HandSet("meld-rich 10", 10, [meld_rich_hand(rng, 10) for _ in range(n_rich)]),
        HandSet("meld-rich 11", 11, [meld_rich_hand(rng, 11) for _ in range(n_rich)]),
    ]


# --------------------------------------------------------------------------- timing helpers


def time_calls(fn: Callable[[object], object], args: Sequence[object]) -> float:
    """Seconds for one pass of ``fn(a)`` over ``args``, garbage collector off."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for a in args:
            fn(a)
        return time.perf_counter() - t0
    finally:
        gc.enable()


@dataclass
class Row:
    section: str
    hand_set: str
    ginenv_call: str
    ginenv_rate: float
    openspiel_rate: float
    target: float | None  # None: information only, not a like-for-like comparison
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.ginenv_rate / self.openspiel_rate

    @property
    def verdict(self) -> str:
        if self.target is None:
            return "info"
        return "PASS" if self.ratio >= self.target else "MISS"


# --------------------------------------------------------------------------- 1. deadwood


def bench_deadwood(sets: list[HandSet], repeats: int, utils) -> list[Row]:
    os_call = utils.min_deadwood
    rows = []
    for hs in sets:
        if hs.size == 10:
            calls = [
                ("deadwood_of_mask(mask)", deadwood_of_mask, hs.masks, DEADWOOD_TARGET, ""),
                ("deadwood(list)", deadwood, hs.lists, DEADWOOD_TARGET, ""),
            ]
        else:
            calls = [
                (
                    "_best_discard_deadwood(mask)",
                    _best_discard_deadwood,
                    hs.masks,
                    DEADWOOD_TARGET,
                    "like-for-like: best value after a discard",
                ),
                (
                    "best_discard_deadwood(list)",
                    best_discard_deadwood,
                    hs.lists,
                    DEADWOOD_TARGET,
                    "like-for-like: the public call on a list of ids",
                ),
                (
                    "best_discards(list)",
                    best_discards,
                    hs.lists,
                    None,
                    "also lists every best discard: more work than OpenSpiel's call",
                ),
                (
                    "deadwood_of_mask(mask)",
                    deadwood_of_mask,
                    hs.masks,
                    None,
                    "plain 11-card deadwood, no discard: not the same quantity",
                ),
                (
                    "deadwood(list)",
                    deadwood,
                    hs.lists,
                    None,
                    "plain 11-card deadwood, no discard: not the same quantity",
                ),
            ]
        # Warm up: JIT compile (or cache load) and fill any lookup tables.
        for _, fn, args, _, _ in calls:
            for a in args[:2000]:
                fn(a)
        for a in hs.lists[:2000]:
            os_call(a)
        n = len(hs.masks)
        best_os = float("inf")
        best_g = {name: float("inf") for name, *_ in calls}
        for _ in range(repeats):
            best_os = min(best_os, time_calls(os_call, hs.lists))
            for name, fn, args, _, _ in calls:
                best_g[name] = min(best_g[name], time_calls(fn, args))
        for name, _, _, target, note in calls:
            rows.append(Row("deadwood", hs.name, name, n / best_g[name], n / best_os, target, note))
    return rows


def sanity_check(sets: list[HandSet], utils) -> dict[str, dict[str, object]]:
    """Compare ginenv's values with OpenSpiel's on every generated hand."""
    out: dict[str, dict[str, object]] = {}
    for hs in sets:
        lower = higher = equal = 0
        public_disagree = 0
        example = None
        for mask, cards in zip(hs.masks, hs.lists, strict=True):
            theirs = utils.min_deadwood(cards)
            if hs.size == 10:
                ours = deadwood_of_mask(mask)
                public_disagree += deadwood(cards) != ours
            else:
                ours = int(_best_discard_deadwood(mask))
                public_disagree += best_discards(cards)[0] != ours
            if ours == theirs:
                equal += 1
            else:
                if example is None:
                    example = {
                        "cards": utils.card_ints_to_card_strings(cards),
                        "ginenv": ours,
                        "openspiel": theirs,
                    }
                if ours < theirs:
                    lower += 1
                else:
                    higher += 1
        out[hs.name] = {
            "hands": len(hs.masks),
            "equal": equal,
            "ginenv_lower": lower,
            "ginenv_higher": higher,
            "public_api_disagrees": public_disagree,
            "example": example,
        }
    return out


# --------------------------------------------------------------------------- 2. whole hands


def play_ginenv(n_hands: int, seed: int) -> tuple[float, int, int]:
    """Seconds, decisions and hands ending with a score, for ``n_hands`` random hands."""
    rng = random.Random(seed)
    decisions = scored = 0
    t0 = time.perf_counter()
    for i in range(n_hands):
        h = HandState(rng=rng, dealer=i % 2)
        while not h.is_over:
            h.step(rng.choice(h.legal_actions()))
            decisions += 1
        scored += h.result.winner is not None
    return time.perf_counter() - t0, decisions, scored


def play_openspiel(game, n_hands: int, seed: int) -> tuple[float, int, int, int]:
    """Seconds, decisions, chance steps and hands ending with a score, for ``n_hands`` random hands."""
    rng = random.Random(seed)
    decisions = chance = scored = 0
    t0 = time.perf_counter()
    for _ in range(n_hands):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
                chance += 1
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
        scored += state.returns()[0] != 0
    return time.perf_counter() - t0, decisions, chance, scored


def check_uniform_chance(game, n_hands: int, seed: int) -> None:
    """Gin rummy's chance outcomes are uniform, so ``rng.choice`` samples them exactly."""
    rng = random.Random(seed)
    for _ in range(n_hands):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                p0 = outcomes[0][1]
                assert all(abs(p - p0) < 1e-12 for _, p in outcomes), "non-uniform chance node"
                state.apply_action(rng.choice(outcomes)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))


def bench_play(n_hands: int, repeats: int, seed: int) -> tuple[Row, dict[str, float]]:
    game = pyspiel.load_game("gin_rummy")
    check_uniform_chance(game, 20, seed)
    play_ginenv(50, seed)  # warm-up: JIT compile, caches
    play_openspiel(game, 50, seed)
    per_pass = max(1, n_hands // repeats)
    g_best = o_best = float("inf")
    g_dec = o_dec = o_chance = g_scored = o_scored = 0
    for r in range(repeats):
        s = seed + 1000 * (r + 1)
        t, d, sc = play_ginenv(per_pass, s)
        g_best, g_dec, g_scored = min(g_best, t), g_dec + d, g_scored + sc
        t, d, ch, sc = play_openspiel(game, per_pass, s)
        o_best, o_dec, o_chance, o_scored = min(o_best, t), o_dec + d, o_chance + ch, o_scored + sc
    total = per_pass * repeats
    row = Row(
        "whole hands",
        "random legal play",
        "HandState.step loop",
        per_pass / g_best,
        per_pass / o_best,
        PLAY_TARGET,
        "no observations",
    )
    stats = {
        "hands_per_pass": per_pass,
        "passes": repeats,
        "ginenv_decisions_per_hand": g_dec / total,
        "openspiel_decisions_per_hand": o_dec / total,
        "openspiel_chance_steps_per_hand": o_chance / total,
        "ginenv_scored_fraction": g_scored / total,
        "openspiel_scored_fraction": o_scored / total,
    }
    return row, stats


# --------------------------------------------------------------------------- report


def fmt_rate(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"


def print_table(rows: list[Row]) -> None:
    head = ("section", "hand set", "ginenv call", "ginenv /s", "OpenSpiel /s", "ratio", "target", "result")
    body = [
        (
            r.section,
            r.hand_set,
            r.ginenv_call,
            fmt_rate(r.ginenv_rate),
            fmt_rate(r.openspiel_rate),
            f"{r.ratio:.2f}x",
            "-" if r.target is None else f">= {r.target:g}x",
            r.verdict,
        )
        for r in rows
    ]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    right = {3, 4, 5}

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(padded).rstrip()

    print(line(head))
    print("  ".join("-" * w for w in widths))
    for r, cells in zip(rows, body, strict=True):
        text = line(cells)
        if r.note:
            text = text.ljust(sum(widths) + 2 * len(widths) - 2) + f"  ({r.note})"
        print(text)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a short run (fewer hands, one pass)")
    p.add_argument("--json", metavar="PATH", help="also write the figures to this JSON file")
    p.add_argument("--seed", type=int, default=12345, help="seed for hands and play (default 12345)")
    p.add_argument("--random-hands", type=int, help="hands per random set (default 200000, quick 20000)")
    p.add_argument("--rich-hands", type=int, help="hands per meld-rich set (default 50000, quick 5000)")
    p.add_argument("--play-hands", type=int, help="whole hands per library (default 6000, quick 600)")
    p.add_argument("--repeats", type=int, help="timed passes, best kept (default 3, quick 1)")
    a = p.parse_args(argv)
    n_random = a.random_hands or (20_000 if a.quick else 200_000)
    n_rich = a.rich_hands or (5_000 if a.quick else 50_000)
    n_play = a.play_hands or (600 if a.quick else 6_000)
    repeats = a.repeats or (1 if a.quick else 3)

    machine = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "open-spiel": version("open-spiel"),
        "numba": version("numba"),
        "numba_disable_jit": os.environ.get("NUMBA_DISABLE_JIT", "0"),
    }
    print("bench_rules: ginenv vs OpenSpiel (pyspiel), ratios measured in this run")
    print("  " + ", ".join(f"{k} {v}" for k, v in machine.items()))
    print(
        f"  hands: random {n_random:,} per set, meld-rich {n_rich:,} per set; "
        f"play {n_play:,} hands per library; best of {repeats} pass(es); seed {a.seed}"
    )

    t_start = time.perf_counter()
    utils = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
    sets = make_hand_sets(n_random, n_rich, a.seed)
    rows = bench_deadwood(sets, repeats, utils)
    play_row, play_stats = bench_play(n_play, repeats, a.seed)
    rows.append(play_row)
    sanity = sanity_check(sets, utils)

    print()
    print_table(rows)
    print()
    print(
        "whole hands: decisions per hand ginenv {:.1f}, OpenSpiel {:.1f} (+ {:.1f} chance steps); "
        "hands ending in a knock/gin: ginenv {:.0%}, OpenSpiel {:.0%}".format(
            play_stats["ginenv_decisions_per_hand"],
            play_stats["openspiel_decisions_per_hand"],
            play_stats["openspiel_chance_steps_per_hand"],
            play_stats["ginenv_scored_fraction"],
            play_stats["openspiel_scored_fraction"],
        )
    )
    print(
        "11-card rows: OpenSpiel's min_deadwood(11 cards) = least deadwood after the best discard;\n"
        "  _best_discard_deadwood / best_discard_deadwood compute the same quantity (target applies);\n"
        "  deadwood_of_mask / deadwood on 11 cards = deadwood of all 11, no discard (info only)."
    )
    print()
    print("sanity check (every generated hand; 10 cards: deadwood_of_mask, 11: _best_discard_deadwood):")
    problems = 0
    for name, s in sanity.items():
        diff = s["ginenv_lower"] + s["ginenv_higher"]
        size = 10 if name.endswith("10") else 11
        bad = s["public_api_disagrees"] + (diff if size == 10 else s["ginenv_higher"])
        problems += bad
        msg = (
            f"  {name:<13} {s['hands']:>7,} hands: {s['equal']:,} equal, {diff} differ "
            f"(ginenv lower {s['ginenv_lower']}, ginenv higher {s['ginenv_higher']}); "
            f"public API disagrees with mask API: {s['public_api_disagrees']}"
        )
        print(msg + ("  <-- PROBLEM" if bad else ""))
        if s["example"]:
            ex = s["example"]
            print(f"      e.g. {' '.join(ex['cards'])}: ginenv {ex['ginenv']}, OpenSpiel {ex['openspiel']}")
    print(
        "  (11 cards: 'ginenv lower' = OpenSpiel's 11-card shortcut over-estimates, a known OpenSpiel "
        "limitation;\n   'ginenv higher' would be a ginenv bug)"
    )
    misses = [r for r in rows if r.verdict == "MISS"]
    print()
    print(
        f"summary: {sum(r.verdict == 'PASS' for r in rows)} PASS, {len(misses)} MISS, "
        f"{problems} sanity problem(s); {time.perf_counter() - t_start:.0f} s"
    )

    if a.json:
        report = {
            "machine": machine,
            "params": {
                "seed": a.seed,
                "random_hands": n_random,
                "rich_hands": n_rich,
                "play_hands": n_play,
                "repeats": repeats,
                "quick": a.quick,
            },
            "rows": [asdict(r) | {"ratio": r.ratio, "verdict": r.verdict} for r in rows],
            "play": play_stats,
            "sanity": sanity,
        }
        with open(a.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"figures written to {a.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
