"""A researcher's own agent in the benchmark: specs from a file outside the repository, a module,
a name registered in the main process, an installed entry point and a process (``exec:``), under one
worker, two workers and a local Ray instance, each told the table's rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from extras import needs_extra
from ginenv.experiments.cli import main
from ginenv.experiments.eval.harness import EvalConfig, HarnessError, evaluate
from ginenv.experiments.eval.report import summarise

from ginenv import agents
from ginenv.rules import preset

CLIENTS = Path(agents.__file__).resolve().parent / "clients"

#: The user's own file: an agent that writes the rules it was told, once per game, then plays
#: like greedy; a factory; things that are not agents; a constructor that raises.
USER_FILE = '''
"""A researcher's agents, in a file of their own."""
import json, os, uuid
from pathlib import Path

from ginenv import agents
from ginenv.agents import Agent


class Mine(Agent):
    """Plays as greedy and writes down the table's rules it was told at its first hand."""

    def __init__(self, seed=None):
        super().__init__(seed)
        self.inner = agents.make("greedy", seed=seed)
        self.written = False

    def reset(self, seed=None):
        super().reset(seed)
        self.inner.reset(seed)
        if not self.written:
            folder = Path(os.environ["GINENV_TEST_RULES_DIR"])
            (folder / f"{uuid.uuid4().hex}.json").write_text(json.dumps(self.rules.to_dict()))
            self.written = True

    def act(self, observation):
        return self.inner.act(observation)


def make_mine(seed=None, rules=None):
    agent = Mine(seed)
    agent.told = rules
    return agent


class NotAnAgent:
    pass


def broken(seed=None):
    raise RuntimeError("no weights in this folder")
'''


@pytest.fixture
def user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``mine.py`` in a folder outside the repository; the rules it is told go to ``rules/``."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "mine.py").write_text(USER_FILE)
    (tmp_path / "rules").mkdir()
    monkeypatch.setenv("GINENV_TEST_RULES_DIR", str(tmp_path / "rules"))
    return folder / "mine.py"


def told_rules(tmp_path: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in (tmp_path / "rules").glob("*.json")]


@pytest.mark.parametrize("workers", [1, 2])
def test_an_agent_from_a_file_outside_the_repository_plays_with_the_tables_rules(
    user_file: Path, tmp_path: Path, workers: int
) -> None:
    spec = f"{user_file}:Mine"
    rules = preset("seed004")
    assert rules.undercut_bonus == 20  # the case: agents were told 25
    cfg = EvalConfig(agents=(spec, "greedy"), deals=4, rules=rules)
    records = evaluate(cfg, tmp_path / "run", workers=workers, progress=False)
    assert len(records) == 4
    seen = told_rules(tmp_path)
    # Probes are written from the check build plus one per game, in whichever process played it.
    assert len(seen) >= 2 * 4
    assert all(r == rules.to_dict() for r in seen)
    # A seeded copy of greedy against greedy: every duplicate pair sums to zero.
    assert all(r["pair_sum"] == 0 for r in records)


def test_a_file_agent_plays_on_a_local_ray_instance_with_the_tables_rules(
    user_file: Path, tmp_path: Path
) -> None:
    needs_extra("ray", "ray")
    import ray

    rules = preset("seed004")
    cfg = EvalConfig(agents=(f"{user_file}:Mine", "normal"), deals=3, rules=rules)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = evaluate(cfg, tmp_path / "ray", backend="ray", progress=False)
    finally:
        ray.shutdown()
    local = evaluate(cfg, tmp_path / "local", workers=1, progress=False)
    assert [r["pair_sum"] for r in remote] == [r["pair_sum"] for r in local]
    assert told_rules(tmp_path) and all(r == rules.to_dict() for r in told_rules(tmp_path))


def test_a_factory_is_called_with_the_seed_and_the_rules(user_file: Path) -> None:
    rules = preset("seed004")
    agent = agents.make(f"{user_file}:make_mine", seed=3, rules=rules)
    assert agent.told is rules and agent.rules is rules  # type: ignore[attr-defined]
    assert agent.name == f"{user_file}:make_mine"


def test_a_module_spec_is_found_from_the_current_folder(
    user_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(user_file.parent)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(user_file.parent))])
    cfg = EvalConfig(agents=("mine:Mine", "random"), deals=2)
    records = evaluate(cfg, tmp_path / "run", workers=2, progress=False)
    assert all(r["pair_sum"] > 0 for r in records)  # greedy's play beats random's on every deal


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("missing.py:Mine", "agent spec 'missing.py:Mine': cannot import it: FileNotFoundError"),
        ("mine.py:Nope", "agent spec 'mine.py:Nope': mine.py has no 'Nope'"),
        ("mine.py:NotAnAgent", "NotAnAgent is a class but not an agent"),
        ("mine.py:broken", "building it raised RuntimeError: no weights in this folder"),
        ("nosuchmodule:Mine", "cannot import it: ModuleNotFoundError: No module named 'nosuchmodule'"),
        ("exec:/no/such/program --fast", "agent spec 'exec:/no/such/program --fast': "),
        ("mine", "unknown agent 'mine'; known agents: random, greedy"),
    ],
)
def test_a_spec_that_cannot_be_built_is_one_line_and_exit_2_before_any_game(
    user_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    spec: str,
    words: str,
) -> None:
    monkeypatch.chdir(user_file.parent)
    out = tmp_path / "run"
    assert main(["match", spec, "greedy", "--hands", "2", "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert not out.exists()  # nothing was played, no folder was made


def test_a_name_registered_in_the_main_process_is_rebuilt_by_the_workers(
    user_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The case: agents.register in the main script, then evaluate with two workers.
    script = tmp_path / "main_script.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(user_file.parent)!r})
            from ginenv import agents
            from ginenv.experiments.eval.harness import EvalConfig, evaluate
            from mine import Mine

            if __name__ == "__main__":
                agents.register("mine2", Mine, "a researcher's agent")
                records = evaluate(EvalConfig(agents=("mine2", "random"), deals=4), {str(tmp_path / "run")!r},
                                   workers=2, progress=False)
                print(sum(r["pair_sum"] > 0 for r in records))
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4"


def test_a_lambda_registered_here_is_refused_for_several_workers_with_what_to_do(tmp_path: Path) -> None:
    agents.register("lambda_agent", lambda seed=None: agents.make("greedy", seed=seed))
    try:
        cfg = EvalConfig(agents=("lambda_agent", "random"), deals=4)
        with pytest.raises(HarnessError, match=r"registered in the main process only .*file\.py:Name"):
            evaluate(cfg, tmp_path / "run", workers=2, progress=False)
        assert not (tmp_path / "run").exists()
        assert len(evaluate(cfg, tmp_path / "one", workers=1, progress=False)) == 4
    finally:
        from ginenv.agents import registry

        registry.unregister("lambda_agent")


def test_an_installed_entry_point_is_an_agent_in_every_process(user_file: Path, tmp_path: Path) -> None:
    # A distribution on sys.path with an entry point in the group ginenv.agents, as
    # `pip install` of a package declaring [project.entry-points."ginenv.agents"] leaves it.
    site = user_file.parent
    dist = site / "mine_agents-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mine-agents\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[ginenv.agents]\nmine_ep = mine:Mine\n")
    code = textwrap.dedent(
        f"""
        from ginenv import agents
        from ginenv.experiments.eval.harness import EvalConfig, evaluate
        if __name__ == "__main__":
            assert "mine_ep" in agents.available(), agents.available()
            print(agents.describe("mine_ep"))
            records = evaluate(EvalConfig(agents=("mine_ep", "greedy"), deals=4), {str(tmp_path / "run")!r},
                               workers=2, progress=False)
            print(len(records), sum(r["pair_sum"] for r in records))
        """
    )
    script = tmp_path / "ep.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    description, counts = done.stdout.strip().splitlines()
    assert description.startswith("Plays as greedy")
    assert counts == "4 0"
    assert "mine_ep" not in agents.available()  # this process has no such distribution


# ---------------------------------------------------------------------------- exec: agents


def test_the_reference_clients_play_a_match_through_the_harness(tmp_path: Path) -> None:
    python_client = f"exec:{sys.executable} {CLIENTS / 'random_client.py'}"
    node_client = f"exec:node {CLIENTS / 'random_client.js'}"
    cfg = EvalConfig(agents=(python_client, node_client, "greedy"), deals=3)
    records = evaluate(cfg, tmp_path / "run", workers=2, progress=False)
    summary = summarise(records, cfg.agents)
    assert len(records) == 9 and not any(r["forfeits"] for r in records)
    # Random play loses to greedy on the points scale.
    ratings = {row["agent"]: row["rating"] for row in summary["ratings"]}
    assert ratings["greedy"] > max(ratings[python_client], ratings[node_client])


HANGS_AT_THE_THIRD_DECISION = """
import json, sys, time
n = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "act":
        n += 1
        if n == 3:
            time.sleep(60)
        print(msg["legal"][0], flush=True)
"""


def test_a_hanging_client_forfeits_its_games_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    client = tmp_path / "hangs.py"
    client.write_text(HANGS_AT_THE_THIRD_DECISION)
    spec = f"exec:{sys.executable} {client}"
    argv = ["match", spec, "greedy", "--hands", "4", "--time-limit", "0.5", "--out", str(tmp_path / "run")]
    assert main([*argv, "--json", "--workers", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # Every game is forfeited at the third decision: greedy scores the gin bonus plus the
    # client's deadwood each time (at least 25 a hand), and the report counts the forfeits.
    assert doc["forfeits"] == {spec: 4, "greedy": 0}
    assert doc["points_per_hand_a_minus_b"]["mean"] <= -25
    assert "no answer within 0.5 s" in doc["forfeit_reasons"][0]
    assert main([*argv, "--quiet"]) == 0  # the finished run is reused, the table says so
    text = capsys.readouterr()
    assert "Forfeits" in text.out and "reused the 2 finished deals" in text.err
