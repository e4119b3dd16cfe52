"""Agent specs (ginenv.agents.specs): the forms a spec takes, what resolving it keeps for worker
processes, and the one building protocol (seed and rules reach every agent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from ginenv.agents import registry, specs
from ginenv.agents.base import Agent, Observation

from ginenv import agents
from ginenv.rules import Rules, preset


def test_each_form_resolves_to_what_another_process_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert specs.resolve("hard") == specs.Spec(
        "hard", "registered", "hard", origin="ginenv.agents.levels.hard:HardAgent"
    )
    assert specs.resolve("checkpoint:nets/a.pt").kind == "checkpoint"
    assert specs.resolve("exec:node bot.js --fast") == specs.Spec(
        "exec:node bot.js --fast", "exec", "node bot.js --fast"
    )
    file_spec = specs.resolve("bots/mine.py:Mine")
    # A relative path is made absolute: a worker (or a Ray task) may run in another folder.
    assert file_spec.kind == "file" and file_spec.target == str(tmp_path / "bots" / "mine.py")
    module_spec = specs.resolve("my_pkg.agents:Mine")
    assert (module_spec.kind, module_spec.target, module_spec.attr) == ("module", "my_pkg.agents", "Mine")
    assert module_spec.search_path == os.getcwd()


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("", "must not be empty"),
        ("grandmaster", "unknown agent 'grandmaster'; known agents: random, greedy"),
        ("checkpoint:", "give the checkpoint file"),
        ("exec:   ", "give the command"),
        ("mine.py:", "unknown agent 'mine.py:'"),
        ("mine.py:not-a-name", "unknown agent"),
    ],
)
def test_a_string_of_no_form_is_refused_with_the_forms(spec: str, words: str) -> None:
    with pytest.raises(specs.AgentSpecError, match=words):
        specs.resolve(spec)
    assert not specs.is_known(spec)


def test_the_building_protocol_gives_every_agent_the_tables_rules_and_its_seed() -> None:
    rules = preset("seed004")
    for name in ("random", "easy", "hard", "expert", "master", "neural"):
        agent = agents.make(name, seed=1, rules=rules)
        assert agent.rules is rules and agent.name == name, name

    # A class without a constructor of its own, and one whose constructor takes no rules.
    class Plain(Agent):
        def act(self, observation: Observation) -> int:
            return 0

    class SeedOnly(Plain):
        def __init__(self, seed: int | None = None) -> None:
            super().__init__(seed)

    for cls in (Plain, SeedOnly):
        registry.register("test_plain", cls)
        try:
            agent = agents.make("test_plain", seed=4, rules=rules)
            assert agent.rules is rules and agent.rng.integers(1 << 30) == Plain(4).rng.integers(1 << 30)
        finally:
            registry.unregister("test_plain")


def test_a_factory_returning_something_else_is_refused(tmp_path: Path) -> None:
    (tmp_path / "odd.py").write_text("def factory(seed=None):\n    return 42\n")
    with pytest.raises(specs.AgentSpecError, match=r"the factory returned int, not an agent"):
        agents.make(f"{tmp_path / 'odd.py'}:factory")


def test_a_file_loaded_twice_is_one_module(tmp_path: Path) -> None:
    (tmp_path / "count.py").write_text(
        "from ginenv.agents import RandomAgent\n\n\nclass A(RandomAgent):\n    pass\n"
    )
    first = agents.make(f"{tmp_path / 'count.py'}:A")
    second = agents.make(f"{tmp_path / 'count.py'}:A")
    assert type(first) is type(second) and first is not second


def test_builtins_cannot_be_unregistered_and_names_cannot_hold_a_colon() -> None:
    with pytest.raises(ValueError, match="only this process's own"):
        registry.unregister("hard")
    with pytest.raises(ValueError, match="without ':'"):
        registry.register("a:b", agents.RandomAgent)
    assert specs.check("greedy", rules=Rules()).kind == "registered"
