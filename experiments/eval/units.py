"""One unit of an evaluation: both games of one duplicate deal between two agents, as one record.

This module builds every game's agents afresh from their resolved specs (:func:`fresh_agents`),
plays the deal's two games with the seats swapped through :func:`ginenv.agents.arena.play_game`,
and reduces them to the JSON-ready record the run folder keeps (:func:`play_unit`,
:func:`summarise_game`), the luck of the deal included. The harness
(:mod:`ginenv.experiments.eval.harness`) schedules units over processes or Ray.
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ginenv.agents import specs
from ginenv.agents.arena import AgentError, GameRecord, play_game
from ginenv.agents.registry import UnknownAgentError
from ginenv.agents.sandbox import Sandbox, undumpable
from ginenv.agents.specs import Spec
from ginenv.experiments.eval.eval_config import DEFAULT_TIME_LIMIT, EvalConfig, HarnessError

from ginenv.rules import Rules


def check_specs(names: Sequence[str], rules: Rules | None = None, workers: int = 1) -> dict[str, Spec]:
    """Resolve and build once every agent spec of ``names``, before any game is played.

    Returns each spec's portable form (what worker processes rebuild agents from). A spec that
    cannot be built raises HarnessError with one line naming the spec and the cause.
    """
    resolved: dict[str, Spec] = {}
    for name in names:
        try:
            resolved[name] = specs.check(name, rules=rules, workers=workers)
        except UnknownAgentError as err:  # AgentSpecError included
            raise HarnessError(str(err)) from None
    return resolved


def resolve_agents(cfg: EvalConfig, workers: int = 1) -> dict[str, Spec]:
    """:func:`check_specs` of every agent of ``cfg``, told its rules."""
    return check_specs(cfg.agents, cfg.rules, workers)


def make_agent(
    name: str | Spec,
    digest: str | None = None,
    rules: Rules | None = None,
    time_limit: float | None = None,
    sandbox: Sandbox | None = None,
) -> Any:
    """A new, untouched agent of spec ``name`` built by the one protocol (:func:`ginenv.agents.make`),
    told the ``rules`` of the table.

    ``digest``, for a ``checkpoint:PATH`` spec, is the sha256 the run was keyed by: a file whose
    content changed since is refused (HarnessError) rather than mixing two networks in one run.
    """
    spec = specs.resolve(name)
    if spec.kind != "checkpoint" or not digest:
        return specs.make(spec, rules=rules, time_limit=time_limit, sandbox=sandbox)
    from ginenv.agents.neural import CheckpointError

    try:
        return specs.make(spec, rules=rules, digest=digest)
    except CheckpointError as err:
        raise HarnessError(f"{err}; the run was keyed by the earlier content, choose another --out") from None


def fresh_agents(
    names: Sequence[str],
    rules: Rules,
    time_limit: float = DEFAULT_TIME_LIMIT,
    resolved: dict[str, Spec] | None = None,
    digests: dict[str, str] | None = None,
    sandbox: Sandbox | None = None,
) -> list[Any]:
    """New agents of ``names`` for one game (:func:`make_agent` each, from the ``resolved`` spec when
    given); a constructor that raises is the agent's :class:`AgentError`, with its traceback."""
    players = []
    for name in names:
        try:
            players.append(
                make_agent(
                    (resolved or {}).get(name, name), (digests or {}).get(name), rules, time_limit, sandbox
                )
            )
        except HarnessError:
            raise
        except Exception as err:
            raise AgentError(
                name, f"could not be built: {type(err).__name__}: {err}", traceback.format_exc()
            ) from err
    return players


def compiled_owners(
    cfg: EvalConfig, resolved: dict[str, Spec] | None = None, digests: dict[str, str] | None = None
) -> list[Any]:
    """The owners of the compiled code a unit of ``cfg`` runs (:func:`ginenv.compiling.pending`):
    the env, the luck of each game and the class of each agent, built once more to find it (an
    ``exec:`` agent runs in a process of its own: nothing of it compiles here)."""
    from ginenv.experiments.eval import luck

    from ginenv import gin_rummy_v0

    owners: list[Any] = [gin_rummy_v0.raw_env, luck.__name__]
    for name in cfg.agents:
        spec = specs.resolve((resolved or {}).get(name, name))
        if spec.kind == "exec":
            continue
        agent = make_agent(spec, (digests or {}).get(name), cfg.rules)
        owners.append(type(agent))
        close = getattr(agent, "close", None)
        if callable(close):
            close()
    return owners


def _seat(value: Any) -> int:
    """Seat index from an agent name (``player_1``) or an int."""
    return value if isinstance(value, int) else int(str(value).rsplit("_", 1)[-1])


def _game_luck(record: GameRecord) -> float:
    """Seat 0's luck over the game's hands (the control variate of :mod:`ginenv.experiments.eval.luck`).

    Every hand counts as it stands, a truncated or forfeited one included: whether a game ends
    that way depends on later draws, so zeroing its luck would bias the adjusted points, while
    points minus luck stays unbiased whatever the points are (0 for a truncation included).
    """
    from ginenv.experiments.eval.luck import state_luck

    return float(sum(state_luck(state) for state in record.states))


def play_unit(
    pairing: tuple[str, str],
    deal: int,
    cfg: EvalConfig,
    cache: dict[str, Any],
    resolved: dict[str, Spec] | None = None,
    digests: dict[str, str] | None = None,
    replay_dir: str | None = None,
) -> dict[str, Any]:
    """Both games of one duplicate deal between ``pairing = (A, B)``: one JSON-ready record.

    ``cache`` keeps the env between units (its state is dealt afresh by every ``reset``); agents are
    never cached: each game gets new ones built from their ``resolved`` specs (with the checkpoint
    ``digests`` the run is keyed by). Each game is played by :func:`ginenv.agents.arena.play_game`,
    on ``cfg.key``'s secret decks when the config has one. With ``replay_dir``, each game is also
    written there as a replay (:func:`replay_name`), once both games of the deal are over.
    """
    from ginenv import gin_rummy_v0

    env = cache.get("_env")
    if env is None:
        env = gin_rummy_v0.raw_env(rules=cfg.rules, mode=cfg.unit, turn_limit=cfg.turn_limit)
        cache["_env"] = env
    a_name, b_name = pairing
    games = []
    replays: list[tuple[str, Any]] = []
    luck = 0.0
    for game in (0, 1):
        seats = (a_name, b_name) if game == 0 else (b_name, a_name)
        players = fresh_agents(seats, cfg.rules, cfg.time_limit, resolved, digests, cfg.sandbox)
        record = play_game(env, players, seed=cfg.seed, deal=deal, names=seats, key=cfg.key)
        games.append(summarise_game(record, a_seat=game))
        # The luck is seat 0's: A's in the first game, minus it in the second (zero-sum).
        luck += _game_luck(record) * (1.0 if game == 0 else -1.0)
        if replay_dir is not None and record.forfeit is None:
            from ginenv.replay import hand_replay, match_replay

            data = match_replay(env.match) if env.match is not None else hand_replay(env.hand)
            replays.append((replay_name(seats, deal), data))
    # Written once both games are over: a replay shows the deal's cards, which the second game's
    # agents must not find in the folder while they play them.
    if replay_dir is not None and replays:
        from ginenv.replay import save_replay

        for name, data in replays:
            save_replay(data, Path(replay_dir) / name)
    return {
        "a": a_name,
        "b": b_name,
        "deal": deal,
        "games": games,
        "pair_sum": games[0]["a_points"] + games[1]["a_points"],
        "pair_luck": round(luck, 6),
        "truncated": sum(g["truncated"] for g in games),
        "forfeits": sum(g["a_forfeits"] + g["b_forfeits"] for g in games),
    }


def agent_slug(name: str) -> str:
    """An agent name as a piece of a file name (``checkpoint:PATH`` by the file's stem)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", Path(name.partition(":")[2]).stem if ":" in name else name)


def replay_name(seats: Sequence[str], deal: int) -> str:
    """File name of the replay of one game: the agents in seat order (``player_0`` first) and the deal."""
    return f"deal{deal:06d}-{agent_slug(seats[0])}-vs-{agent_slug(seats[1])}.json"


def summarise_game(record: GameRecord, a_seat: int) -> dict[str, Any]:
    """Reduce a played game to A's view: points, hands won, kinds, lengths, decision times."""
    b_seat = 1 - a_seat
    kinds: dict[str, int] = {}
    won = [0, 0]
    for hand in record.hands:
        kinds[hand["kind"]] = kinds.get(hand["kind"], 0) + 1
        if hand["winner"] is not None:
            won[_seat(hand["winner"])] += 1
    match_winner = None
    final = record.hands[-1].get("match_result") if record.hands else None
    if final:
        match_winner = "a" if _seat(final["winner"]) == a_seat else "b"
    forfeit = record.forfeit
    forfeits = [0, 0]
    hands = len(record.hands)
    if forfeit is not None:
        # The forfeited hand counts as a hand played, won by the other seat.
        forfeits[forfeit["seat"]] = 1
        won[1 - forfeit["seat"]] += 1
        kinds["forfeit"] = kinds.get("forfeit", 0) + 1
        hands += 1
        match_winner = "b" if forfeit["seat"] == a_seat else "a"
    return {
        "a_seat": a_seat,
        "a_points": round(record.returns[a_seat]),
        "a_hands_won": won[a_seat],
        "b_hands_won": won[b_seat],
        "hands": hands,
        "kinds": kinds,
        "truncated": record.truncated,
        "decisions": record.decisions[0] + record.decisions[1],
        "a_decisions": record.decisions[a_seat],
        "b_decisions": record.decisions[b_seat],
        "a_think_s": record.think[a_seat],
        "b_think_s": record.think[b_seat],
        "match_winner": match_winner,
        "a_forfeits": forfeits[a_seat],
        "b_forfeits": forfeits[b_seat],
        "forfeit_reason": None if forfeit is None else forfeit["reason"],
    }


def single_thread_torch() -> None:
    """Run torch on one thread in this process (set before torch loads, or on it if loaded).

    For processes that play games: each plays one game at a time, so torch's threads only spin.
    """
    # A worker process plays one game at a time and the parallelism is across workers: a neural
    # agent's one-observation forward pass on several torch threads spun against the other workers
    # and took 40 ms instead of 1.5 ms (measured on 2 cores). Set before torch loads, or on it.
    os.environ["OMP_NUM_THREADS"] = "1"
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def run_chunk(
    cfg: EvalConfig,
    units: list[tuple[str, str, int]],
    resolved: dict[str, Spec] | None = None,
    digests: dict[str, str] | None = None,
    replay_dir: str | None = None,
) -> list[dict[str, Any]]:
    """Play ``units`` ``(A, B, deal)`` of ``cfg`` in this process (a worker's share of a run).

    ``cfg`` arrives as the checked :class:`EvalConfig` itself (pickled), not re-parsed from a dict.
    """
    single_thread_torch()
    undumpable()  # a Ray worker's memory holds the deal key from here on (a local one did already)
    cache: dict[str, Any] = {}
    return [play_unit((a, b), deal, cfg, cache, resolved, digests, replay_dir) for a, b, deal in units]
