"""``ginenv rate SPEC``: an agent placed on the standard ladder's scale, the ladder's own results
computed once and kept (the folder ``ginenv ladder`` writes), only the newcomer's games played."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ginenv.experiments.cli import main

LADDER = "agents: [random, easy, greedy]\nformat: round_robin\nunit: hand\ndeals: 4\nseed: 0\n"

STRONG = '''
from ginenv import agents
from ginenv.agents import Agent


class Normalish(Agent):
    """Plays as the normal level: it must land above random on the ladder's scale."""

    def __init__(self, seed=None):
        super().__init__(seed)
        self.inner = agents.make("normal", seed=seed)

    def reset(self, seed=None):
        self.inner.reset(seed)

    def act(self, observation):
        return self.inner.act(observation)
'''


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "ladder.yaml").write_text(LADDER)
    (tmp_path / "mine.py").write_text(STRONG)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_rate_places_an_agent_and_keeps_the_ladders_results(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The ladder first, as `python3 dev.py run` does: rate must reuse exactly that folder.
    assert main(["ladder", "--config", "ladder.yaml", "--quiet", "--no-plots", "--workers", "1"]) == 0
    capsys.readouterr()
    (ladder_folder,) = (workdir / "results").glob("ladder-*")
    before = (ladder_folder / "results.jsonl").read_text()

    argv = ["rate", "mine.py:Normalish", "--config", "ladder.yaml", "--json", "--workers", "1"]
    assert main(argv) == 0
    out = capsys.readouterr()
    result = json.loads(out.out)
    assert f"reused the 12 finished deals in results/{ladder_folder.name}" in out.err
    assert (ladder_folder / "results.jsonl").read_text() == before  # nothing of the ladder replayed
    assert result["agent"] == "mine.py:Normalish" and result["of"] == 4
    assert [m["opponent"] for m in result["margins"]] == sorted(
        ["random", "easy", "greedy"],
        key=lambda n: -next(r["rating"] for r in result["ladder"] if r["agent"] == n),
    )
    margins = {m["opponent"]: m for m in result["margins"]}
    assert margins["random"]["points_per_hand"] > 20 and margins["random"]["separated"]
    assert all(m["deals"] == 4 for m in result["margins"])
    # The ladder's core averages 0: the newcomer does not move the scale.
    core = [r["rating"] for r in result["ladder"] if r["agent"] in result["core"]]
    assert abs(sum(core)) < 1e-9 and "mine.py:Normalish" not in result["core"]
    assert result["low"] < result["rating"] < result["high"]
    ranked = [r["agent"] for r in result["ladder"]]
    assert ranked.index("mine.py:Normalish") < ranked.index("random") and result["place"] <= 3

    # A second rate plays nothing at all: both folders are reused.
    assert main([a for a in argv if a != "--json"]) == 0
    text = capsys.readouterr()
    assert text.err.count("reused the 12 finished deals") == 2
    assert "mine.py:Normalish: " in text.out and "Margins: mine.py:Normalish minus each agent" in text.out


def test_rate_refuses_a_spec_that_cannot_be_built(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rate", "mine.py:Missing", "--config", "ladder.yaml"]) == 2
    err = capsys.readouterr().err
    assert err == "ginenv: agent spec 'mine.py:Missing': mine.py has no 'Missing'\n"
    assert not (workdir / "results").exists()
