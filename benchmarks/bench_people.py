"""Scripted people: computer players of known ladder rating play the play server as people do, and
``ginenv people`` is held to what their ratings predict.

    python benchmarks/bench_people.py --out people-run  # the docs' run: 5 players x 8 runs x 40 hands, ~7 min
    python benchmarks/bench_people.py --quick --json    # 2 players x 1 run x 6 hands (the test)

It starts ``ginenv play --no-browser --port 0`` (the real server, in its own process) on a fresh
state folder, as ``bench_play_load.py`` does, and then plays **scripted people**: each a client
with a cookie of its own (the server gives it with the first ``POST /api/games``; the cookie is the
person) that plays whole matches against computer levels through exactly the page's calls:
``POST /api/games`` (``{"opponent", "seed"}``), ``POST .../action`` for its own moves,
``POST .../advance`` for each of the computer's decisions (the page paces them for the eye; a
script does not wait), ``POST .../next`` after a showdown, and ``DELETE /api/games/{id}`` to leave
the match in play once its hands are done. Each person's decisions are made by a computer player
of known ladder rating (``--players``, any of the ladder's levels) built by ``agents.make`` for the
table's rules and reset at every hand. It sees its own seat only: its observation is rebuilt from
the view the server sends (the hand, the pile in order, the stock size, the knock limit, the scores,
the dealer, and the hand's public moves in ``events``), replayed move by move through
:class:`ginenv.public_record.Table` and written by the kernel's own encoder
(:class:`ginenv.public_record.Decision`), and every rebuilt legal-action mask must equal the view's
``legal`` list (a decision where they differ stops the run). The tests also hold the rebuilt
observation equal to ``observe()`` of the server's own table.

The people play against a mix of levels (``--opponents``: a match against each in turn until the
person has ``--hands`` finished hands), ``--runs`` times over (a run: one new person per player).
Each match is dealt from a seed drawn from ``--seed`` (public deals, as ``/?seed=`` gives; the
person's player never reads them), so a run repeats exactly. A person starts each match from a
loopback address of its own (127.100.x.y): the server allows one address 10 new matches a
minute, which a script playing at full speed would pass, and the person is its cookie, not its
address.

It prints, per person, its player's ladder rating, the estimate ``GET /api/me`` gives (the rating
on the ladder's scale, :func:`ginenv.experiments.play.people.standing`), its 95% interval and whether
that holds the ladder's rating; the coverage per player over the runs and overall, with a 95%
Wilson interval; whether each run's estimates order the players as the ladder does, and after how
many hands (read back from the store in the order they were played: the first count from which
the order stays right to the end, and for each adjacent pair of players the first from which their
intervals stay apart); the per-hand spread of the luck-adjusted estimates and, from it and the
ladder's gaps, the hands a rating needs to separate each adjacent pair (a 95% interval's half-width
below half the gap). Then it runs ``ginenv people --json`` (the real command, in its own process)
on the store the people filled and checks it (exit status 1 if a check fails):

- the store holds every hand each person finished, against the level it was played against, with
  the points the person's showdown showed, in order; ``GET /api/me`` counts them;
- the report agrees with the people's own answers: each level's people and hands, its margin (the
  mean over people of their mean margin against it, ``/api/me``'s ``levels``) and the spread of the
  people's ratings;
- each level's margin is what the people's known ratings predict, the mean over the people who
  played it of ``r_player - r_level``, within the report's interval widened to hold jointly over
  the levels (Bonferroni); a level played by one person has no interval and is not checked. This
  check is statistical: with people whose ratings are what the ladder says it still misses by
  chance in up to 1 run in 20 (seed 0's ``--runs 3 --hands 50`` is one: its 15 people took +0.12 a hand from
  ``easy`` where +6.38 is predicted; the 40 people of the default run took +5.07). The
  other checks are exact.

``--json`` prints the figures as one JSON object instead; ``--out DIR`` keeps the store
(``DIR/state``, for ``ginenv people --state-dir DIR/state``) and writes ``bench_people.json``, a
plot of every person's interval (``bench_people.png``) and the command's ``people.csv`` and
``people.png``. The test (``tests/experiments/play/test_people_bench.py``) runs ``--quick``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from play_load_checks import cpu_seconds

#: The ladder's preset: the only one with recorded ratings.
PRESET = "standard"
DEFAULT_PLAYERS = ("easy", "normal", "hard", "expert", "neural")
DEFAULT_OPPONENTS = ("easy", "normal", "hard", "expert")
DEFAULT_HANDS = 40
DEFAULT_RUNS = 8
#: ``--quick``: two people, a few hands, one level (the test's run).
QUICK: dict[str, Any] = {"players": ("easy", "expert"), "opponents": ("normal",), "hands": 6, "runs": 1}
#: People playing at once (threads of this process; the server is one process beside it).
DEFAULT_WORKERS = 3
#: Seconds for the server to start answering, and to stop after SIGTERM.
START_DEADLINE_S = 120.0
STOP_DEADLINE_S = 60.0
#: The normal quantile of a two-sided 95% interval (every interval here is 95%, as the server's).
Z95 = 1.959963984540054
#: The loopback network a person's matches start from (one address a match).
ADDRESS_BASE = (127, 100)
#: A person's moves in one hand beyond which the hand counts as stuck (a hand has about 30).
MOST_REQUESTS_A_HAND = 400


class BenchError(RuntimeError):
    """A scripted person could not go on: the server answered something a page would not expect, or
    the view did not rebuild to the moves it offers."""


# ---------------------------------------------------------------------------- one seat's view


def seat_observation(view: dict[str, Any], rules: Any) -> tuple[np.ndarray, np.ndarray]:
    """The observation vector and legal-action mask of the person's seat, rebuilt from ``view`` (a
    computer table's view, as ``GET /api/games/{id}`` answers it) alone: the hand's public moves
    replayed from its first upcard, the person's own cards, the scores; ``rules`` (the table's)
    decide big gin and whether a card just taken may go back. Raises :class:`BenchError` when the
    replayed table does not show what the view shows (the pile, the stock, the opponent's known
    cards) or the mask differs from the view's ``legal``."""
    from ginenv.actions import ACTION_NAMES
    from ginenv.cards import parse_card
    from ginenv.kernels import hand as H
    from ginenv.public_record import ME, NO_CARD, OPP, UNSEEN_CARD, Decision, Event, Move
    from ginenv.public_record import Table as Public

    kinds = {"pass": Move.PASS, "draw_discard": Move.TAKE, "draw_stock": Move.STOCK}
    moves = [e for e in view["events"] if e["action"] not in ("left", "forfeit", "big_gin")]
    dealer = ME if view["dealer"] == "you" else OPP
    # The first move of a hand is the non-dealer's answer to the upcard, which it names.
    upcard = parse_card(moves[0]["card"] if moves else view["discard_pile"][0])
    table = Public.start(upcard, dealer, 0)
    for e in moves:
        who = ME if e["who"] == "you" else OPP
        card = UNSEEN_CARD if e["card"] is None else parse_card(e["card"])  # the opponent's stock draw
        table = table.after(Event(who, kinds.get(e["action"], Move.DISCARD), card))
    hand = 0
    for name in view["hand"]["cards"]:
        hand |= 1 << parse_card(name)
    pile = [parse_card(c) for c in view["discard_pile"]]
    known = sum(1 << parse_card(c) for c in view["opponent_known"])
    if list(table.pile) != pile or table.stock != view["stock"] or table.taken[OPP] != known:
        raise BenchError(f"the hand's moves do not replay to the view at version {view['version']}")
    # The record row as PublicRecord.decision writes one (seat-relative: the person is seat ME).
    row = np.zeros((1, H.RECORD_SIZE), dtype=np.int64)
    stock = np.zeros(table.stock, dtype=np.int64)  # unseen cards: the encoder reads only the count
    H.set_position(row, 0, hand, 0, stock, NO_CARD, int(table.phase), table.mover, view["knock_limit"])
    H.set_table(row, 0, np.array(table.pile, dtype=np.int64), dealer, table.forced)
    for seat in (ME, OPP):
        H.set_public_cards(row, 0, seat, table.taken[seat], table.discarded[seat], table.passed[seat])
    H.set_just_taken(row, 0, table.just_took, H.shared_rules_array(rules, 0))
    scores = view["scores"]
    decision = Decision(row[0], ME, scores["you"], scores["opponent"], view["target"])
    obs, mask = decision.observe(np.array([hand], dtype=np.int64), rules)
    legal = sorted(ACTION_NAMES[a] for a in np.flatnonzero(mask[0]))
    if legal != sorted(view["legal"]):
        raise BenchError(f"rebuilt legal moves {legal} differ from the view's {sorted(view['legal'])}")
    return obs[0], mask[0]


# ---------------------------------------------------------------------------- a scripted person


@dataclass
class Person:
    """One scripted person: ``player`` makes its decisions; ``hands`` lists ``(level, points)`` of
    each hand it finished, in order; ``cookie`` is its person id; ``me`` its ``GET /api/me``."""

    player: str
    run: int
    index: int
    hands: list[tuple[str, int]] = field(default_factory=list)
    cookie: str | None = None
    decisions: int = 0
    requests: int = 0
    me: dict[str, Any] | None = None


class Client:
    """Plays one :class:`Person` through the page's calls (see the module docstring)."""

    def __init__(self, url: str, person: Person, opponents: Sequence[str], seed: int, addresses: Any) -> None:
        from ginenv import agents
        from ginenv.rules import PRESETS

        self.url, self.person, self.opponents = url, person, list(opponents)
        self.seed = seed
        self.addresses = addresses
        self.rules = PRESETS[PRESET]
        self.agent = agents.make(person.player, rules=self.rules)
        self.http: Any = None

    def _connect(self) -> None:
        """A new connection from the next loopback address, carrying the person's cookie."""
        import httpx

        if self.http is not None:
            self.http.close()
        k = next(self.addresses)
        address = f"{ADDRESS_BASE[0]}.{ADDRESS_BASE[1] + (k >> 16)}.{(k >> 8) & 255}.{k & 255}"
        cookies = {"ginenv_player": self.person.cookie} if self.person.cookie else None
        self.http = httpx.Client(
            base_url=self.url,
            # As the page's own requests: the server takes changes only from its own page.
            headers={"Origin": self.url},
            cookies=cookies,
            # Plain HTTP on loopback: no certificates to load (a tenth of a second a connection).
            transport=httpx.HTTPTransport(local_address=address, verify=False),
            timeout=60.0,
            trust_env=False,
        )

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """One request as the page makes it; the JSON answer, or BenchError naming the refusal."""
        self.person.requests += 1
        # A change carries JSON, ``{}`` when it has nothing to say, as the page's do.
        r = self.http.request(method, path, json=body if body is not None or method == "GET" else {})
        if r.status_code >= 300:
            raise BenchError(f"{method} {path.split('/')[1:3]} answered {r.status_code}: {r.text[:300]}")
        answer: dict[str, Any] = r.json()
        return answer

    def play(self, hands: int, tick: Callable[[], None]) -> Person:
        """Play matches against the levels in turn until ``hands`` hands are finished; then ``/api/me``."""
        from ginenv.actions import ACTION_NAMES

        person = self.person
        for match in itertools.count():
            level = self.opponents[match % len(self.opponents)]
            match_seed = _seed(self.seed, person.run, person.index, match)
            self._connect()
            view = self.call("POST", "/api/games", {"opponent": level, "seed": match_seed})
            person.cookie = person.cookie or self.http.cookies.get("ginenv_player")
            if not person.cookie:
                raise BenchError("POST /api/games set no person cookie")
            game = f"/api/games/{view['id']}"
            self.agent.reset(_seed(self.seed, person.run, person.index, match, view["hand_index"]))
            budget = MOST_REQUESTS_A_HAND
            while view["stage"] != "over":
                budget -= 1
                if budget < 0:
                    raise BenchError(f"a hand of {person.player} vs {level} made no progress")
                if view["stage"] == "showdown":
                    if len(person.hands) >= hands:
                        self.call("DELETE", game)  # leave the match in play: its hands are done
                        break
                    view = self.call("POST", f"{game}/next")
                    self.agent.reset(_seed(self.seed, person.run, person.index, match, view["hand_index"]))
                    budget = MOST_REQUESTS_A_HAND
                    continue
                if view["turn"] == "you":
                    obs, mask = seat_observation(view, self.rules)
                    action = int(self.agent.act({"observation": obs, "action_mask": mask}))
                    person.decisions += 1
                    view = self.call("POST", f"{game}/action", {"action": ACTION_NAMES[action]})
                else:
                    view = self.call("POST", f"{game}/advance")
                if view["stage"] != "play":  # the hand ended: the server recorded it with this move
                    person.hands.append((level, _signed_points(view["showdown"])))
                    tick()
            if len(person.hands) >= hands:
                break
        person.me = self.call("GET", f"/api/me?preset={PRESET}")
        self.http.close()
        return person


def _signed_points(showdown: dict[str, Any]) -> int:
    """The points the person took in a hand (negative: lost), from its showdown."""
    sign = {"you": 1, "opponent": -1, None: 0}[showdown["winner"]]
    return sign * int(showdown["points"])


def _seed(*parts: int) -> int:
    """A 31-bit seed of ``parts`` (a run, a person, a match, a hand)."""
    return int(np.random.SeedSequence(list(parts)).generate_state(1, dtype=np.uint32)[0] >> 1)


# ---------------------------------------------------------------------------- the server


def launch_server(state_dir: Path, replay_dir: Path, cwd: Path) -> subprocess.Popen[str]:
    """``ginenv play --no-browser --port 0`` in its own process, started in ``cwd``; it takes seconds
    to answer (:func:`server_url` waits), which this process spends loading its own modules."""
    return subprocess.Popen(
        [sys.executable, "-m", "ginenv.experiments.cli", "play", "--no-browser", "--port", "0"]
        + ["--state-dir", str(state_dir), "--replay-dir", str(replay_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # Not the repository root: `-m` puts the working folder first on sys.path, where the root's
        # ginenv/ (without ginenv.experiments) would shadow the installed ginenv.
        cwd=cwd,
    )


def server_url(proc: subprocess.Popen[str]) -> str:
    """The URL the server ``proc`` printed, once it answers there."""
    import httpx

    assert proc.stdout is not None
    first = proc.stdout.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)", first)
    if not found:
        proc.kill()
        raise SystemExit(f"bench_people: ginenv play did not start: {first.strip() or proc.wait()}")
    url = f"http://127.0.0.1:{found.group(1)}"
    # Its later lines (none unless something goes wrong) must not fill the pipe.
    threading.Thread(target=proc.stdout.read, daemon=True).start()
    deadline = time.monotonic() + START_DEADLINE_S
    while True:
        try:
            httpx.get(f"{url}/api/options", timeout=5).raise_for_status()
            return url
        except httpx.HTTPError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise SystemExit(f"bench_people: no answer from {url} in {START_DEADLINE_S:g} s") from None
            time.sleep(0.1)


def stop_server(proc: subprocess.Popen[str]) -> int:
    """SIGTERM, then its exit status (killed after :data:`STOP_DEADLINE_S`)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=STOP_DEADLINE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def people_command(state_dir: Path, out: Path | None) -> dict[str, Any]:
    """``ginenv people --state-dir STATE --json [--out OUT]``: the real command's entry point
    (:func:`ginenv.experiments.cli.main`), in this process, whose modules are loaded already."""
    import contextlib
    import io

    from ginenv.experiments.cli import main as ginenv

    argv = ["people", "--state-dir", str(state_dir), "--json"] + ([] if out is None else ["--out", str(out)])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = ginenv(argv)
    if code != 0:
        raise BenchError(f"ginenv {' '.join(argv)} exited with status {code}")
    report: dict[str, Any] = json.loads(printed.getvalue())
    return report


# ---------------------------------------------------------------------------- the figures


def _order(ratings: dict[str, float]) -> list[str]:
    return sorted(ratings, key=lambda name: ratings[name])


def coverage(people: list[Person], truth: dict[str, float]) -> dict[str, Any]:
    """How often each person's interval holds its player's ladder rating: per player and overall,
    each with a 95% Wilson interval (:func:`ginenv.experiments.eval.stats.proportion_ci`)."""
    from ginenv.experiments.eval.stats import proportion_ci

    def rate(group: list[Person]) -> dict[str, Any]:
        held = sum(_covered(p, truth) for p in group)
        ci = proportion_ci(held, len(group))
        return {
            "covered": held,
            "people": len(group),
            "rate": held / len(group),
            "low": ci.low,
            "high": ci.high,
        }

    players = _order({p.player: truth[p.player] for p in people})
    return {
        "players": {name: rate([p for p in people if p.player == name]) for name in players},
        "overall": rate(people),
    }


def _covered(p: Person, truth: dict[str, float]) -> bool:
    assert p.me is not None
    return p.me["low"] is not None and p.me["low"] <= truth[p.player] <= p.me["high"]


def ordering(
    people: list[Person],
    stored: dict[str, list[tuple[str, int, float]]],
    truth: dict[str, float],
    ladder: Any,
) -> dict[str, Any]:
    """Per run, whether the people's estimates order the players as the ladder does, and after how
    many hands (:func:`_over_hands`); and ``pooled``: the same with each player's hands of every run
    taken as one person's, run after run (the runs' deals are all different: one person playing
    ``runs`` times as many hands), with each player's estimate and whether its interval holds the
    ladder's rating at the end."""
    from ginenv.experiments.play.people import hands_of

    names = _order({p.player: truth[p.player] for p in people})
    hands = {id(p): hands_of(stored.get(p.cookie or "", [])) for p in people}
    runs = []
    for run in sorted({p.run for p in people}):
        mine = {p.player: hands[id(p)] for p in people if p.run == run}
        runs.append({"run": run, **_over_hands(mine, names, ladder)})
    pooled = {
        name: [h for p in sorted(people, key=lambda p: p.run) if p.player == name for h in hands[id(p)]]
        for name in names
    }
    whole = _over_hands(pooled, names, ladder)
    for name, estimate in whole["estimates"].items():
        estimate["covered"] = estimate["low"] <= truth[name] <= estimate["high"]
    return {"players": names, "runs": runs, "pooled": whole}


def _over_hands(mine: dict[str, list[Any]], names: list[str], ladder: Any) -> dict[str, Any]:
    """The people ``mine`` (player -> hands in the order played) after each count of hands: whether
    their estimates are in the ladder's order ``names``, the first count from which that stays so to
    the end (None: not so at the end), for each adjacent pair the first count from which their
    intervals stay apart, the stronger above (None: not apart at the end), and the estimates at the end."""
    from ginenv.experiments.play.people import standing

    n = min(len(h) for h in mine.values())
    pairs = list(itertools.pairwise(names))
    ordered_at: list[bool] = []
    apart_at: dict[tuple[str, str], list[bool]] = {pair: [] for pair in pairs}
    now: dict[str, dict[str, Any]] = {}
    for k in range(1, n + 1):
        now = {name: standing(hands[:k], ladder, PRESET) for name, hands in mine.items()}
        ordered_at.append(_order({name: now[name]["rating"] for name in names}) == names)
        for low, high in pairs:
            apart_at[(low, high)].append(now[low]["high"] < now[high]["low"])
    return {
        "hands": n,
        "ordered": bool(ordered_at and ordered_at[-1]),
        "ordered_from": _stays_true_from(ordered_at),
        "apart_from": {f"{a}<{b}": _stays_true_from(v) for (a, b), v in apart_at.items()},
        "estimates": {name: {k: now[name][k] for k in ("rating", "low", "high")} for name in now},
    }


def _stays_true_from(flags: list[bool]) -> int | None:
    """The first count (1-based) from which every flag is true to the end; None if the last is false."""
    if not flags or not flags[-1]:
        return None
    k = len(flags)
    while k > 0 and flags[k - 1]:
        k -= 1
    return k + 1


def spread(
    people: list[Person], stored: dict[str, list[tuple[str, int, float]]], ladder: Any
) -> dict[str, Any]:
    """The per-hand spread of the luck-adjusted estimates ``r_level + points - luck``, each person's
    own sample variance pooled over the people (their skill moves the mean, not the spread)."""
    from ginenv.experiments.play.people import hands_of

    own, df = 0.0, 0
    for p in people:
        values = [
            ladder.levels[h.opponent].rating + h.margin for h in hands_of(stored.get(p.cookie or "", []))
        ]
        if len(values) >= 2:
            own += (len(values) - 1) * statistics.variance(values)
            df += len(values) - 1
    return {"sd": math.sqrt(own / df) if df else None, "df": df}


def hands_needed(names: list[str], sd: float, opponents: Sequence[str], ladder: Any) -> list[dict[str, Any]]:
    """For each adjacent pair of ``names`` (ladder order), the hands a person's rating needs for a 95%
    interval's half-width below half the pair's gap: from the hands alone, ``(z sd / (gap / 2))^2``,
    and with the ladder's own uncertainty added as :func:`standing` adds it (its hands spread evenly
    over ``opponents``): None when that alone is already wider than half the gap."""
    levels = ladder.levels
    # The ladder's share of a rating's variance: each level's interval half-width over z, weighted.
    ladder_var = (
        sum(((levels[o].high - levels[o].low) / (2 * Z95)) ** 2 for o in opponents) / len(opponents) ** 2
    )
    rows = []
    for low, high in itertools.pairwise(names):
        gap = levels[high].rating - levels[low].rating
        room = (gap / (2 * Z95)) ** 2
        rows.append(
            {
                "pair": f"{low}<{high}",
                "gap": gap,
                "hands": math.ceil(sd**2 / room),
                "with_ladder": math.ceil(sd**2 / (room - ladder_var)) if room > ladder_var else None,
            }
        )
    return rows


def report_checks(
    report: dict[str, Any],
    people: list[Person],
    stored: dict[str, list[tuple[str, int, float]]],
    truth: dict[str, float],
) -> dict[str, Any]:
    """The checks of ``ginenv people``'s report and of the store (see the module docstring)."""
    from scipy import stats

    problems: list[str] = []
    for p in people:
        assert p.me is not None
        rows = [(o, points) for o, points, _ in stored.get(p.cookie or "", [])]
        if rows != p.hands:
            problems.append(
                f"{p.player} (run {p.run}): the store holds {len(rows)} hands, it finished {len(p.hands)}"
            )
        if p.me["hands"] != len(p.hands):
            problems.append(
                f"{p.player} (run {p.run}): /api/me counts {p.me['hands']} hands of {len(p.hands)}"
            )
    if report["people"] != len(people) or report["hands"] != sum(len(p.hands) for p in people):
        problems.append(f"the report counts {report['people']} people and {report['hands']} hands")
    ratings = [p.me["rating"] for p in people if p.me is not None and p.me["rating"] is not None]
    sd = report["levels"][0]["rating_sd"] if report["levels"] else None
    if len(ratings) >= 2 and (sd is None or not math.isclose(sd, statistics.stdev(ratings), rel_tol=1e-9)):
        problems.append(
            f"the report's spread of ratings {sd} is not that of /api/me's {statistics.stdev(ratings)}"
        )
    levels = []
    k = len(report["levels"])
    for row in report["levels"]:
        level = row["level"]
        mine = [(p, p.me["levels"][level]) for p in people if p.me is not None and level in p.me["levels"]]
        players = [p for p, _ in mine]
        means = [answer["margin"] for _, answer in mine]
        hands = sum(answer["hands"] for _, answer in mine)
        agree = (
            row["people"] == len(players)
            and row["hands"] == hands
            and math.isclose(row["margin"], statistics.fmean(means), rel_tol=1e-9, abs_tol=1e-9)
        )
        if not agree:
            problems.append(f"{level}: the report's people, hands or margin differ from /api/me's")
        predicted = statistics.fmean(truth[p.player] - truth[level] for p in players)
        held = None
        joint = None
        if row["low"] is not None:
            # The report's 95% t-interval over people, widened to hold jointly over the k levels.
            t95 = float(stats.t.ppf(0.975, len(players) - 1))
            tk = float(stats.t.ppf(1 - 0.025 / k, len(players) - 1))
            half = (row["high"] - row["low"]) / 2 * tk / t95
            joint = [row["margin"] - half, row["margin"] + half]
            held = joint[0] <= predicted <= joint[1]
            if not held:
                problems.append(
                    f"{level}: people's margin {row['margin']:+.2f} is not the predicted {predicted:+.2f}"
                )
        levels.append(
            {
                "level": level,
                "people": row["people"],
                "hands": row["hands"],
                "margin": row["margin"],
                "low": row["low"],
                "high": row["high"],
                "predicted": predicted,
                "joint": joint,
                "held": held,
                "agrees_with_api_me": agree,
            }
        )
    return {"levels": levels, "problems": problems}


# ---------------------------------------------------------------------------- the run


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Start the server, play the people, read the store, run ``ginenv people``; the figures."""
    from ginenv.experiments.eval.ladder_data import ladder_ratings

    ladder = ladder_ratings(PRESET)
    assert ladder is not None, "the standard preset's ladder ratings are shipped"
    truth = {name: level.rating for name, level in ladder.levels.items()}
    with tempfile.TemporaryDirectory(prefix="ginenv-people-") as tmp:
        home = Path(args.out).resolve() if args.out else Path(tmp)
        state_dir = home / "state"
        if state_dir.exists() and any(state_dir.iterdir()):
            raise SystemExit(f"bench_people: {state_dir} is not empty: a fresh state folder is needed")
        state_dir.mkdir(parents=True, exist_ok=True)
        proc = launch_server(state_dir, Path(tmp) / "replays", Path(tmp))
        try:
            # Meanwhile: the modules every person and the report load (the players, the kernels).
            from ginenv.experiments.cli import main as _  # noqa: F401
            from ginenv.experiments.play.difficulty import read_hands

            from ginenv import agents  # noqa: F401
            from ginenv.public_record import Decision  # noqa: F401

            url = server_url(proc)
            people = [
                Person(player, run, index)
                for run in range(args.runs)
                for index, player in enumerate(args.players)
            ]
            addresses = itertools.count(1)
            total = len(people) * args.hands
            bar = _progress(total, args.json)
            lock = threading.Lock()

            def tick() -> None:
                if bar is not None:
                    with lock:
                        bar.update(1)

            def play(p: Person) -> Person:
                return Client(url, p, args.opponents, args.seed, addresses).play(args.hands, tick)

            start, server0, own0 = time.monotonic(), cpu_seconds(proc.pid) or 0.0, time.process_time()
            with ThreadPoolExecutor(args.workers) as pool:
                people = list(pool.map(play, people))
            seconds = time.monotonic() - start
            server_cpu, own_cpu = (cpu_seconds(proc.pid) or 0.0) - server0, time.process_time() - own0
            if bar is not None:
                bar.close()
        finally:
            code = stop_server(proc)
        stored = read_hands(state_dir, PRESET)
        report = people_command(state_dir, home if args.out else None)
    n_hands = max(1, sum(len(p.hands) for p in people))
    figures_ = {
        "date": time.strftime("%Y-%m-%d"),
        "players": list(args.players),
        "opponents": list(args.opponents),
        "hands_per_person": args.hands,
        "runs": args.runs,
        "seed": args.seed,
        "workers": args.workers,
        "seconds": round(seconds, 1),
        "hands": sum(len(p.hands) for p in people),
        "hands_per_second": round(sum(len(p.hands) for p in people) / seconds, 2),
        "requests_per_second": round(sum(p.requests for p in people) / seconds, 1),
        "decisions": sum(p.decisions for p in people),
        # CPU seconds a hand: the server's (its moves, the computer's decisions, the store) and this
        # process's (the people's players and their HTTP), and the machine's load as the run ended.
        "cpu_per_hand_s": {"server": round(server_cpu / n_hands, 3), "people": round(own_cpu / n_hands, 3)},
        "load_average": round(os.getloadavg()[0], 2),
        "server_exit": code,
        "ladder": {
            name: truth[name] for name in _order(truth) if name in set(args.players) | set(args.opponents)
        },
        "people": [
            {
                "player": p.player,
                "run": p.run,
                "truth": truth[p.player],
                "hands": len(p.hands),
                "rating": p.me["rating"] if p.me else None,
                "low": p.me["low"] if p.me else None,
                "high": p.me["high"] if p.me else None,
                "covered": _covered(p, truth),
            }
            for p in sorted(people, key=lambda p: (truth[p.player], p.run))
        ],
        "coverage": coverage(people, truth),
        "ordering": ordering(people, stored, truth, ladder),
        "spread": spread(people, stored, ladder),
    }
    sd = figures_["spread"]["sd"]
    names = figures_["ordering"]["players"]
    figures_["hands_needed"] = hands_needed(names, sd, args.opponents, ladder) if sd else []
    checked = report_checks(report, people, stored, truth)
    figures_["report"] = report
    figures_["report_check"] = checked["levels"]
    problems = list(checked["problems"])
    if code != 0:
        problems.append(f"the server exited with status {code}")
    figures_["problems"] = problems
    figures_["ok"] = not problems
    if args.out:
        home = Path(args.out)
        (home / "bench_people.json").write_text(json.dumps(figures_, indent=1) + "\n", encoding="utf-8")
        plot(figures_, home / "bench_people.png")
    return figures_


def _progress(total: int, quiet: bool) -> Any:
    """A tqdm bar on stderr over the hands (None without tqdm, or with ``--json``)."""
    if quiet:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="hand", file=sys.stderr, leave=False)


def plot(f: dict[str, Any], path: Path) -> None:
    """Every person's 95% interval (o: its estimate), grouped by player, beside the ladder's rating (x)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = f["people"]
    fig, ax = plt.subplots(figsize=(7, 0.6 + 0.22 * len(rows)))
    for y, row in enumerate(rows):
        color = "tab:blue" if row["covered"] else "tab:red"
        ax.plot([row["low"], row["high"]], [y, y], color=color, linewidth=1.2)
        ax.plot([row["rating"]], [y], "o", color=color, markersize=3)
        ax.plot([row["truth"]], [y], "x", color="tab:orange", markersize=5)
    ax.set_yticks(range(len(rows)), [f"{r['player']} {r['run'] + 1}" for r in rows], fontsize=7)
    ax.set_xlabel(
        "rating, points a hand on the ladder's scale: o estimate and 95% CI (red: misses), x ladder"
    )
    cov = f["coverage"]["overall"]
    ax.set_title(
        f"Scripted people, {f['hands_per_person']} hands each: {cov['covered']} of {cov['people']} intervals "
        "hold the ladder's rating",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _num(value: float | None, fmt: str = "+.2f") -> str:
    return "-" if value is None else format(value, fmt)


def print_table(f: dict[str, Any]) -> None:
    """The figures as the plain-text report."""
    print(
        f"bench_people {f['date']}: {len(f['players'])} players x {f['runs']} runs x "
        f"{f['hands_per_person']} hands "
        f"against {', '.join(f['opponents'])}: {f['hands']} hands in {f['seconds']:g} s through HTTP "
        f"({f['hands_per_second']:g} hands/s, {f['requests_per_second']:g} requests/s, "
        f"{f['workers']} people at once; "
        f"CPU s a hand: server {f['cpu_per_hand_s']['server']:g}, people {f['cpu_per_hand_s']['people']:g}; "
        f"load average {f['load_average']:g})"
    )
    print(f"{'player':<10}{'ladder':>8}{'run':>5}{'hands':>7}{'estimate':>10}{'95% CI':>20}  covered")
    for r in f["people"]:
        ci = "-" if r["low"] is None else f"[{r['low']:+.2f}, {r['high']:+.2f}]"
        print(
            f"{r['player']:<10}{r['truth']:>+8.2f}{r['run'] + 1:>5}{r['hands']:>7}"
            f"{_num(r['rating']):>10}{ci:>20}"
            f"  {'yes' if r['covered'] else 'NO'}"
        )
    cov = f["coverage"]
    parts = [f"{name} {c['covered']}/{c['people']}" for name, c in cov["players"].items()]
    o = cov["overall"]
    print(
        f"coverage (nominal 95%): {', '.join(parts)}; overall {o['covered']}/{o['people']} = {o['rate']:.0%} "
        f"[{o['low']:.0%}, {o['high']:.0%}] (95% Wilson)"
    )
    runs = f["ordering"]["runs"]
    print(
        f"ordering as the ladder ({' < '.join(f['ordering']['players'])}): "
        f"{sum(r['ordered'] for r in runs)} of {len(runs)} runs at the end"
    )
    for r in runs:
        apart = ", ".join(f"{pair} {_at(k)}" for pair, k in r["apart_from"].items())
        print(f"  run {r['run'] + 1}: ordered {_at(r['ordered_from'])}; intervals apart: {apart}")
    whole = f["ordering"]["pooled"]
    apart = ", ".join(f"{pair} {_at(k)}" for pair, k in whole["apart_from"].items())
    print(
        f"  the runs taken as one person a player ({whole['hands']} hands each): ordered "
        f"{_at(whole['ordered_from'])}; intervals apart: {apart}"
    )
    held = sum(e["covered"] for e in whole["estimates"].values())
    print(
        "    estimates: "
        + ", ".join(
            f"{name} {e['rating']:+.2f} [{e['low']:+.2f}, {e['high']:+.2f}]"
            for name, e in whole["estimates"].items()
        )
        + f"; {held} of {len(whole['estimates'])} intervals hold the ladder's rating"
    )
    s = f["spread"]
    if s["sd"] is not None:
        print(
            f"per-hand spread of the luck-adjusted estimates: sd {s['sd']:.1f} points "
            f"({s['df']} degrees of freedom)"
        )
        print("hands a rating needs to separate adjacent players (95% half-width below half the gap):")
        for h in f["hands_needed"]:
            w = (
                "never (the ladder's own interval is wider)"
                if h["with_ladder"] is None
                else str(h["with_ladder"])
            )
            print(
                f"  {h['pair']:<16} gap {h['gap']:5.2f}: {h['hands']:>6} hands; "
                f"with the ladder's uncertainty {w}"
            )
    print(
        "ginenv people on this store (margins: people's points a hand against the level, "
        "the person the unit):"
    )
    print(
        f"{'level':<10}{'people':>7}{'hands':>7}{'margin':>9}{'95% CI':>20}{'predicted':>11}  held (joint CI)"
    )
    for r in f["report_check"]:
        ci = "-" if r["low"] is None else f"[{r['low']:+.2f}, {r['high']:+.2f}]"
        held = "-" if r["held"] is None else "yes" if r["held"] else "NO"
        print(
            f"{r['level']:<10}{r['people']:>7}{r['hands']:>7}{_num(r['margin']):>9}{ci:>20}"
            f"{r['predicted']:>+11.2f}  {held}"
        )
    print("checks: " + ("all passed" if f["ok"] else "; ".join(f["problems"])))
    if any(r["held"] is False for r in f["report_check"]):
        print(
            "  (a level's margin is checked at 95% jointly over the levels: people of exactly the "
            "ladder's ratings miss it by chance in up to 1 run in 20)"
        )


def _at(k: int | None) -> str:
    return "not by the end" if k is None else f"from {k} hands"


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run the scripted people, print the figures; 1 if a check failed."""
    from ginenv.experiments.eval.ladder_data import ladder_ratings

    ladder = ladder_ratings(PRESET)
    rated = sorted(ladder.levels, key=lambda n: ladder.levels[n].rating) if ladder else []
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 2)[2],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--players",
        help="comma-separated players, one person each per run, of the ladder's levels "
        f"({', '.join(rated)}); "
        f"default {','.join(DEFAULT_PLAYERS)}",
    )
    parser.add_argument(
        "--opponents",
        help=f"comma-separated computer levels the people play, a match against each in turn (rated ones: "
        f"{', '.join(rated)}); default {','.join(DEFAULT_OPPONENTS)}",
    )
    parser.add_argument("--hands", type=int, help=f"finished hands per person (default {DEFAULT_HANDS})")
    parser.add_argument("--runs", type=int, help=f"repeats, each with new people (default {DEFAULT_RUNS})")
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the deals and of the players' choices (default 0)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=DEFAULT_WORKERS,
        help=f"people playing at once (default {DEFAULT_WORKERS})",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"a short run for the test: {','.join(QUICK['players'])} vs {','.join(QUICK['opponents'])}, "
        f"{QUICK['hands']} hands, 1 run (options given still win)",
    )
    parser.add_argument("--out", help="keep the store (DIR/state) and write the figures and plots into DIR")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    full: dict[str, Any] = {
        "players": DEFAULT_PLAYERS,
        "opponents": DEFAULT_OPPONENTS,
        "hands": DEFAULT_HANDS,
        "runs": DEFAULT_RUNS,
    }
    base = QUICK if args.quick else full
    args.players = _names(parser, "--players", args.players, base["players"], rated)
    args.opponents = _names(parser, "--opponents", args.opponents, base["opponents"], rated)
    args.hands = base["hands"] if args.hands is None else args.hands
    args.runs = base["runs"] if args.runs is None else args.runs
    for name, low, high in (
        ("hands", 1, 100_000),
        ("runs", 1, 10_000),
        ("workers", 1, 64),
        ("seed", 0, 2**31 - 1),
    ):
        if not low <= getattr(args, name) <= high:
            parser.error(f"--{name} must be between {low} and {high}, got {getattr(args, name)}")
    if len(args.players) < 2:
        parser.error("--players needs two players at least, to order them")
    figures_ = measure(args)
    if args.json:
        print(json.dumps(figures_, indent=1))
    else:
        print_table(figures_)
    return 0 if figures_["ok"] else 1


def _names(
    parser: argparse.ArgumentParser, flag: str, given: str | None, default: Sequence[str], rated: list[str]
) -> list[str]:
    """The comma-separated names of ``flag``, each a level the ladder rated, without repeats."""
    names = list(default) if given is None else [n.strip() for n in given.split(",") if n.strip()]
    unknown = [n for n in names if n not in rated]
    if unknown or not names or len(set(names)) != len(names):
        parser.error(
            f"{flag} takes distinct comma-separated levels the ladder rated ({', '.join(rated)}), "
            f"got {given!r}"
        )
    return names


if __name__ == "__main__":
    sys.exit(main())
