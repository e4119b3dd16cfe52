"""Neural agents from checkpoints: pickle-free round trip, refusal of bad files, harness use."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from ginenv.agents.neural import CheckpointError, MaskedPolicy, NeuralAgent, load_checkpoint, save_checkpoint
from ginenv.experiments.cli import main

from ginenv import agents, gin_rummy_v0


def saved_policy(tmp_path: Path, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    path = tmp_path / "policy.pt"
    save_checkpoint(MaskedPolicy(hidden=(32,)), path)
    return path


def test_round_trip_gives_the_same_actions(tmp_path: Path) -> None:
    path = saved_policy(tmp_path)
    a = agents.make(f"checkpoint:{path}")
    b = NeuralAgent(load_checkpoint(path))
    env = gin_rummy_v0.raw_env()
    env.reset(seed=4)
    for _ in range(30):
        obs = env.observe(env.agent_selection)
        act = a.act(obs)
        assert act == b.act(obs)
        assert obs["action_mask"][act] == 1  # only legal actions
        env.step(act)
        if not env.agents:
            break


def test_sampling_at_a_temperature_is_seeded_and_legal(tmp_path: Path) -> None:
    agent = NeuralAgent(load_checkpoint(saved_policy(tmp_path)), temperature=1.0)
    env = gin_rummy_v0.raw_env()
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    agent.reset(3)
    first = [agent.act(obs) for _ in range(20)]
    agent.reset(3)
    assert [agent.act(obs) for _ in range(20)] == first
    assert all(obs["action_mask"][a] for a in first)


class Boom:
    def __reduce__(self) -> tuple:
        return (print, ("unpickled!",))


def test_untrusted_and_malformed_files_are_refused(tmp_path: Path) -> None:
    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps({"format": "ginenv-policy", "payload": Boom()}))
    with pytest.raises(CheckpointError, match="weights_only"):
        load_checkpoint(evil)
    text = tmp_path / "notes.pt"
    text.write_text(json.dumps({"hello": 1}))
    with pytest.raises(CheckpointError, match="not a ginenv policy checkpoint"):
        load_checkpoint(text)
    other = tmp_path / "other.pt"
    torch.save(
        {
            "format": "ginenv-policy",
            "version": 1,
            "obs_size": 10,
            "num_actions": 108,
            "hidden": [4],
            "state_dict": {},
        },
        other,
    )
    with pytest.raises(CheckpointError, match="expects 10 inputs"):
        load_checkpoint(other)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_checkpoint(tmp_path / "missing.pt")


def test_the_harness_plays_a_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = saved_policy(tmp_path)
    argv = [
        "match",
        f"checkpoint:{path}",
        "random",
        "--hands",
        "4",
        "--json",
        "--workers",
        "1",
        "--no-plots",
        "--out",
        str(tmp_path / "run"),
    ]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["hands_played"] == 4 and np.isfinite(doc["points_per_hand_a_minus_b"]["mean"])
    assert main(["match", f"checkpoint:{tmp_path / 'nope.pt'}", "random", "--hands", "2"]) == 2
    assert "no checkpoint" in capsys.readouterr().err
