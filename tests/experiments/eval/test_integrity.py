"""Integrity of evaluations: fresh agents every game, random seeds, checkpoints keyed by content,
truncated games, and an agent's own exceptions reported as the agent's."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from ginenv.experiments.eval.harness import AgentError, EvalConfig, HarnessError, evaluate, play_unit
from ginenv.experiments.eval.report import format_table, summarise

from ginenv.rules import Rules

HERE = Path(__file__).resolve().parent
# The test agents are named by file specs, as a researcher's own agents are: every worker process
# rebuilds them from the file.
PROBE = f"{HERE / 'probe_agent.py'}:ProbeAgent"
CRASHER = f"{HERE / 'probe_agent.py'}:CrashingAgent"
ILLEGAL = f"{HERE / 'probe_agent.py'}:IllegalAgent"


@pytest.fixture
def probes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The probe module, importable here and in spawned workers, writing into a fresh folder."""
    folder = tmp_path / "probe"
    folder.mkdir()
    monkeypatch.setenv("GINENV_PROBE_DIR", str(folder))
    monkeypatch.syspath_prepend(str(HERE))
    import probe_agent

    probe_agent.FOLDER = folder
    return probe_agent


def probe_reports(folder: Path) -> dict[str, list[dict[str, Any]]]:
    return {f.stem: [json.loads(line) for line in f.read_text().splitlines()] for f in folder.glob("*.jsonl")}


@pytest.mark.parametrize("workers", [1, 2])
def test_every_game_gets_agents_no_earlier_game_touched(probes: Any, tmp_path: Path, workers: int) -> None:
    deals = 6
    cfg = EvalConfig(agents=(PROBE, "greedy"), deals=deals)
    evaluate(cfg, tmp_path / "run", workers=workers, progress=False)
    reports = probe_reports(probes.FOLDER)
    # One probe per game (two games a deal), each of which played exactly one hand: no probe saw
    # the other game of its deal (where it would hold its opponent's cards) or another deal.
    assert len(reports) == 2 * deals
    assert all(len(hands) == 1 for hands in reports.values())
    firsts = [hands[0]["first_observation"] for hands in reports.values()]
    assert len(set(firsts)) == 2 * deals


def test_an_agent_against_itself_gets_two_distinct_objects(probes: Any) -> None:
    cfg = EvalConfig(agents=(PROBE, "other"), deals=2, unit="match", rules=Rules(target=30))
    cache: dict = {}
    for deal in range(cfg.deals):
        play_unit((PROBE, PROBE), deal, cfg, cache)
    reports = probe_reports(probes.FOLDER)
    # 2 deals x 2 games x 2 seats; within a match one agent plays every hand of it.
    assert len(reports) == 8
    assert all(
        len(hands) >= 1 and [h["hand"] for h in hands] == list(range(1, len(hands) + 1))
        for hands in reports.values()
    )


# ---------------------------------------------------------------------------- truncation


def test_truncated_hands_count_zero_points_and_are_reported(tmp_path: Path) -> None:
    # Two draws per hand: most hands end at the limit, before anyone can knock.
    cfg = EvalConfig(agents=("greedy", "random"), deals=8, turn_limit=2)
    records = evaluate(cfg, tmp_path, workers=1, progress=False)
    games = [g for r in records for g in r["games"]]
    truncated = [g for g in games if g["truncated"]]
    assert truncated, "a turn limit of 2 draws must truncate some hands"
    assert all(g["a_points"] == 0 and g["kinds"] == {"truncated": 1} for g in truncated)
    assert sum(r["truncated"] for r in records) == len(truncated)
    summary = summarise(records, cfg.agents, cfg.unit)
    assert summary["truncated_games"] == len(truncated) == summary["pairs"][0]["truncated_games"]
    assert summary["pairs"][0]["rates"]["truncated"] == len(truncated) / len(games)
    table = format_table(summary)
    assert f"counted as 0 points): {len(truncated)} of {len(games)}" in table
    assert EvalConfig(agents=("a", "b")).turn_limit == 100


def test_a_truncated_match_counts_zero_even_after_scored_hands(tmp_path: Path) -> None:
    cfg = EvalConfig(agents=("greedy", "random"), deals=6, unit="match", turn_limit=9)
    records = evaluate(cfg, tmp_path, workers=1, progress=False)
    games = [g for r in records for g in r["games"]]
    truncated = [g for g in games if g["truncated"]]
    assert truncated and all(g["a_points"] == 0 and g["match_winner"] is None for g in truncated)
    # Some truncated match had scored hands before its last one: they do not count either.
    assert any(g["hands"] > 1 for g in truncated)
    finished = [g for g in games if not g["truncated"]]
    assert all(g["match_winner"] in ("a", "b") for g in finished)


def test_turn_limit_is_part_of_the_run_key() -> None:
    a = EvalConfig(agents=("greedy", "random"))
    b = EvalConfig(agents=("greedy", "random"), turn_limit=50)
    assert a.fingerprint() != b.fingerprint()
    with pytest.raises(HarnessError, match="turn_limit must be a positive integer"):
        EvalConfig(agents=("greedy", "random"), turn_limit=0)


# ---------------------------------------------------------------------------- seeds


def test_seeds_must_be_non_negative_integers() -> None:
    for bad in (-1, 1.5, None, True, "3"):
        with pytest.raises(HarnessError, match="seed must be a non-negative integer"):
            EvalConfig(agents=("greedy", "random"), seed=bad)  # type: ignore[arg-type]
    with pytest.raises(HarnessError, match="deals must be a positive integer"):
        EvalConfig(agents=("greedy", "random"), deals=True)
    with pytest.raises(HarnessError, match="at most 1,000,000"):
        EvalConfig(agents=("greedy", "random"), deals=10**9)


# ---------------------------------------------------------------------------- checkpoints


def write_checkpoint(path: Path, seed: int) -> None:
    import torch
    from ginenv.agents.neural import MaskedPolicy, save_checkpoint

    from ginenv.actions import NUM_ACTIONS
    from ginenv.observation import OBS_SIZE

    torch.manual_seed(seed)
    save_checkpoint(MaskedPolicy(OBS_SIZE, [8], NUM_ACTIONS), path)


def test_a_changed_checkpoint_does_not_resume_the_run_of_the_old_one(tmp_path: Path) -> None:
    ckpt = tmp_path / "net.pt"
    write_checkpoint(ckpt, 1)
    cfg = EvalConfig(agents=(f"checkpoint:{ckpt}", "random"), deals=2)
    first_key = cfg.fingerprint()
    evaluate(cfg, tmp_path / "run", workers=1, progress=False)
    write_checkpoint(ckpt, 2)  # same path, another network
    assert cfg.fingerprint() != first_key
    with pytest.raises(HarnessError, match="changed since the run began"):
        evaluate(cfg, tmp_path / "run", workers=1, progress=False)
    stored = json.loads((tmp_path / "run" / "config.json").read_text())
    assert list(stored["checkpoints"]) == [f"checkpoint:{ckpt}"]


def test_a_new_shipped_network_does_not_resume_the_run_of_the_old_one(tmp_path: Path) -> None:
    # `neural` is a name, not a path: the harness keys its runs by the file registered with it, so
    # the default ladder replays neural's games once the shipped network is replaced.
    from ginenv.agents import RandomAgent, registry
    from ginenv.agents.neural import SHIPPED_CHECKPOINT

    assert registry.weights_of("neural") == registry.weights_of("master_net") == SHIPPED_CHECKPOINT
    ckpt = tmp_path / "shipped.pt"
    write_checkpoint(ckpt, 1)
    registry.register("shipped_probe", RandomAgent, "a name with a weights file", weights=ckpt)
    try:
        cfg = EvalConfig(agents=("greedy", "shipped_probe"), deals=2)
        evaluate(cfg, tmp_path / "run", workers=1, progress=False)
        write_checkpoint(ckpt, 2)
        with pytest.raises(HarnessError, match="other networks: shipped_probe changed since the run began"):
            evaluate(cfg, tmp_path / "run", workers=1, progress=False)
    finally:
        registry.unregister("shipped_probe")


def test_a_missing_checkpoint_is_a_clear_error(tmp_path: Path) -> None:
    cfg = EvalConfig(agents=(f"checkpoint:{tmp_path / 'none.pt'}", "random"), deals=1)
    with pytest.raises(HarnessError, match=r"agent spec 'checkpoint:.*none.pt': no checkpoint at"):
        evaluate(cfg, tmp_path / "run", workers=1, progress=False)


# ---------------------------------------------------------------------------- agents' own errors


@pytest.mark.parametrize("workers", [1, 2])
def test_an_agent_raising_is_reported_as_the_agents_with_its_traceback(
    probes: Any, tmp_path: Path, workers: int
) -> None:
    cfg = EvalConfig(agents=(CRASHER, "greedy"), deals=4)
    with pytest.raises(AgentError) as info:
        evaluate(cfg, tmp_path / "run", workers=workers, progress=False)
    err = info.value
    assert err.agent == CRASHER
    assert str(err).startswith(f"agent {CRASHER} raised AgentBug: the crasher's own bug in act() (deal ")
    assert "raise AgentBug" in err.agent_traceback and "probe_agent.py" in err.agent_traceback
    assert not isinstance(err, ValueError)  # not a usage error


def test_an_illegal_action_is_the_agents_fault(probes: Any, tmp_path: Path) -> None:
    cfg = EvalConfig(agents=(ILLEGAL, "greedy"), deals=1)
    with pytest.raises(AgentError, match=r"IllegalAgent returned 108, which is not a legal action"):
        evaluate(cfg, tmp_path / "run", workers=1, progress=False)


def test_the_probe_module_is_not_left_importable() -> None:
    # The fixture's sys.path entry is undone: other tests see the project's modules only.
    assert str(HERE) not in sys.path


def test_a_checkpoint_rewritten_during_the_run_is_refused(tmp_path: Path) -> None:
    ckpt = tmp_path / "net.pt"
    write_checkpoint(ckpt, 1)
    cfg = EvalConfig(agents=(f"checkpoint:{ckpt}", "random"), deals=4)

    def rewrite(record: dict) -> None:
        write_checkpoint(ckpt, 2)

    with pytest.raises(HarnessError, match="has changed"):
        evaluate(cfg, tmp_path / "run", workers=1, progress=False, on_record=rewrite)
    # The deal played before the change stays; nothing of the new network was recorded.
    assert len((tmp_path / "run" / "results.jsonl").read_text().splitlines()) == 1
