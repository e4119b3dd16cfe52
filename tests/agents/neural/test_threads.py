"""``ginenv.agents.neural.threads``: a number used as given, ``auto`` applied to torch as the free cores
change (fed readings), one line per change, and a bad setting refused."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
from ginenv.agents.neural import MaskedPolicy, NeuralAgent
from ginenv.agents.neural import threads as torch_threads
from ginenv.agents.neural.threads import (
    AUTO,
    check_threads_setting,
    one_thread,
    recheck_threads,
    use_threads,
)

from ginenv.cores import AdaptiveThreads, CoreReading


@pytest.fixture(autouse=True)
def restore_threads() -> Iterator[None]:
    before = torch.get_num_threads()
    yield
    use_threads(before)  # pinned again: this process adapts no more


class Machine:
    """Fed readings: each :meth:`run` adds seconds with this process on ``own`` cores and other
    processes on ``others``."""

    def __init__(self, others: float) -> None:
        self.reading = CoreReading(at=0.0, busy=0.0, own=0.0)
        self.others = others

    def run(self, seconds: float, own: float = 1.0) -> None:
        r = self.reading
        busy = (r.busy or 0.0) + (own + self.others) * seconds
        self.reading = CoreReading(at=r.at + seconds, busy=busy, own=r.own + own * seconds)

    def threads(self) -> AdaptiveThreads:
        return AdaptiveThreads(cores=2, read=lambda: self.reading, sleep=lambda s: self.run(s, own=0.0))


def test_a_number_is_used_as_given_and_kept() -> None:
    assert use_threads(1) == 1 == torch.get_num_threads()
    torch.set_num_threads(2)  # something else changes them: a pinned run is left alone
    assert recheck_threads() == 2


def test_auto_follows_the_load_and_says_each_change(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    machine = Machine(others=1.0)
    monkeypatch.setattr(torch_threads, "AdaptiveThreads", machine.threads)
    use_threads(2)  # leave any adapting of an earlier use
    assert use_threads(AUTO) == 1 == torch.get_num_threads()
    machine.others = 0.0
    machine.run(2.0)
    assert use_threads(AUTO) == 1  # already adapting: no new look, no change until a recheck
    assert recheck_threads() == 2 == torch.get_num_threads()
    assert capsys.readouterr().err == "torch threads 1 -> 2: the cores are free again\n"
    torch.set_num_threads(1)  # an in-process evaluation plays on one thread: set back
    assert recheck_threads() == 2
    assert capsys.readouterr().err == ""
    machine.others = 1.0
    assert use_threads(AUTO, fresh=True) == 1  # a new look, now beside a busy process


@pytest.mark.parametrize("bad", ["two", -1, 1.5, True, None])
def test_a_bad_setting_is_refused_in_one_line(bad: object) -> None:
    problem = check_threads_setting(bad)
    assert problem == f"auto or an integer >= 0 (0: torch's default), got {bad!r}"
    with pytest.raises(ValueError, match=r"^threads: auto or an integer >= 0"):
        use_threads(bad)  # type: ignore[arg-type]


def test_one_thread_inside_and_the_count_as_before_after() -> None:
    use_threads(2)
    with one_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2
    with pytest.raises(RuntimeError), one_thread():
        raise RuntimeError("set back even so")
    assert torch.get_num_threads() == 2


def test_a_network_agent_plays_its_observation_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    from ginenv import gin_rummy_v0

    use_threads(2)
    seen: list[int] = []
    policy = MaskedPolicy()
    forward = policy.forward
    monkeypatch.setattr(
        policy, "forward", lambda *a, **k: seen.append(torch.get_num_threads()) or forward(*a, **k)
    )
    env = gin_rummy_v0.env()
    env.reset(seed=0)
    NeuralAgent(policy).act(env.observe(env.agent_selection))
    assert seen == [1] and torch.get_num_threads() == 2
