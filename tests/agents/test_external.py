"""exec: agents (ginenv.agents.external): the reference clients play legal, reproducible hands, the
observation sent is the seat's own, and every way a client can misbehave ends in a forfeit that
names the cause, with no process left running."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from extras import needs
from ginenv.agents.base import AgentForfeit
from ginenv.agents.external import (
    CLOSE_GRACE,
    EXCERPT_CHARS,
    ExternalAgent,
    check_command,
    interpreter_hint,
    observation_message,
    stderr_excerpt,
)

from ginenv import agents, gin_rummy_v0
from ginenv.actions import action_name
from ginenv.cards import CARD_NAMES, cards_of
from ginenv.observation import decode
from ginenv.rules import Rules

CLIENTS = Path(__file__).resolve().parents[2] / "agents" / "clients"
PYTHON_CLIENT = f"{shlex.quote(sys.executable)} {shlex.quote(str(CLIENTS / 'random_client.py'))}"
NODE = shutil.which("node")
NODE_CLIENT = f"{NODE} {shlex.quote(str(CLIENTS / 'random_client.js'))}"
# What a forfeit may take beyond its cause: killing and reaping the client, a loaded machine.
SLACK = 1.5


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie whose parent has not reaped it yet counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def client(tmp_path: Path, body: str, name: str = "client.py") -> str:
    """The command of a Python test client: ``messages()`` yields what ginenv sends, ``answer`` replies."""
    prelude = textwrap.dedent(
        """\
        import json, os, subprocess, sys, time

        def messages():
            for line in sys.stdin:
                yield json.loads(line)

        def answer(text):
            sys.stdout.write(text + "\\n")
            sys.stdout.flush()
        """
    )
    path = tmp_path / name
    path.write_text(prelude + textwrap.dedent(body))
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def play_hand(agent: ExternalAgent, env_seed: int, agent_seed: int) -> list[int]:
    """One hand of the agent (player_0) against greedy (player_1); the agent's actions, all legal."""
    env = gin_rummy_v0.env()
    env.reset(seed=env_seed)
    greedy = agents.make("greedy", seed=0)
    players = {"player_0": agent, "player_1": greedy}
    for player in players.values():
        player.reset(seed=agent_seed)
    played: list[int] = []
    for name in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        action = players[name].act(obs)
        assert obs["action_mask"][action] == 1, action_name(action)
        if name == "player_0":
            played.append(action)
        env.step(action)
    return played


@pytest.fixture
def first_obs() -> dict[str, np.ndarray]:
    """The observation of the first decision of a hand (the upcard offer)."""
    env = gin_rummy_v0.raw_env()
    env.reset(seed=0)
    return env.observe(env.agent_selection)


def needs_node() -> None:
    """Skip (fail in CI) the calling test where Node.js is not on the PATH."""
    needs("Node.js", "apt-get install nodejs", None if NODE else "no node on the PATH")


def clients() -> list[object]:
    # Node.js is installed by dev.py test and .ci/run (apt-get install nodejs) when it is missing:
    # elsewhere, without it the Node client's test is skipped saying so (it fails in CI).
    return [pytest.param(PYTHON_CLIENT, id="python"), pytest.param(NODE_CLIENT, id="node")]


@pytest.mark.parametrize("command", clients())
def test_reference_clients_play_legal_reproducible_hands(command: str) -> None:
    if command == NODE_CLIENT:
        needs_node()
    runs = []
    for agent_seed in (11, 11, 12):
        agent = ExternalAgent(command, time_limit=5.0)
        try:
            runs.append(play_hand(agent, env_seed=3, agent_seed=agent_seed))
            pid = agent.pid
        finally:
            agent.close()
        assert pid is not None and not alive(pid)
        assert agent.forfeit_reason is None
    assert len(runs[0]) >= 3
    assert runs[0] == runs[1]
    # The hand's seed drives the client: another seed plays another hand.
    assert runs[2] != runs[0]


def test_the_installed_python_client_runs_as_a_module() -> None:
    agent = ExternalAgent(f"{shlex.quote(sys.executable)} -m ginenv.agents.clients.random_client")
    try:
        assert len(play_hand(agent, env_seed=2, agent_seed=0)) >= 3
    finally:
        agent.close()
    assert agent.forfeit_reason is None


def test_messages_sent_are_the_seats_observation(tmp_path: Path) -> None:
    log = tmp_path / "received.jsonl"
    command = client(
        tmp_path,
        f"""\
        log = open({str(log)!r}, "a")
        for message in messages():
            log.write(json.dumps(message) + "\\n")
            log.flush()
            if message["type"] == "act":
                answer(json.dumps({{"action": message["legal"][-1]}}))  # the JSON object form
        """,
    )
    rules = Rules(gin_bonus=30)
    agent = ExternalAgent(command, rules=rules, time_limit=5.0)
    env = gin_rummy_v0.env(rules=rules)
    env.reset(seed=5)
    greedy = agents.make("greedy", seed=0, rules=rules)
    agent.reset(seed=42)
    sent = []
    for name in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        if name == "player_0":
            action = agent.act(obs)
            # The object form {"action": legal[-1]}: the highest legal id.
            assert action == int(np.flatnonzero(obs["action_mask"])[-1])
            sent.append(obs)
        else:
            action = greedy.act(obs)
        env.step(action)
    agent.close()
    received = [json.loads(line) for line in log.read_text().splitlines()]
    assert received[0] == {
        "type": "hand",
        "protocol": 1,
        "hand_number": 1,
        "seed": 42,
        "rules": rules.to_dict(),
    }
    assert received[-1] == {"type": "end"}
    acts = received[1:-1]
    assert len(acts) == len(sent) >= 3
    for message, obs in zip(acts, sent, strict=True):
        view = decode(obs["observation"])
        assert message["type"] == "act" and message["time_limit"] > 0
        assert message["legal"] == [action_name(a) for a in np.flatnonzero(obs["action_mask"])]
        assert message["observation"] == observation_message(obs)
        seen = message["observation"]
        assert seen["hand"] == [CARD_NAMES[c] for c in cards_of(view.hand)]
        assert seen["top"] == (None if view.top is None else CARD_NAMES[view.top])
        assert seen["unseen"] == [CARD_NAMES[c] for c in cards_of(view.unseen)]
        assert seen["phase"] == view.phase.name.lower() and seen["to_move"] is True
        assert seen["stock_size"] == view.stock_size and seen["is_dealer"] == view.is_dealer
        # Nothing but the seat's own view: no key outside decode()'s fields.
        assert "opponent_hand" not in seen
    # The first decision has the start-up allowance on top of the time limit.
    assert acts[0]["time_limit"] > acts[1]["time_limit"] == 5.0


def test_seed_of_a_hand_without_one_comes_from_the_agents_seed(tmp_path: Path) -> None:
    log = tmp_path / "seeds.txt"
    command = client(
        tmp_path,
        f"""\
        for message in messages():
            if message["type"] == "hand":
                open({str(log)!r}, "a").write(str(message["seed"]) + "\\n")
        """,
    )
    for _ in range(2):
        agent = ExternalAgent(command, seed=9)
        agent.reset(None)
        agent.reset(None)
        agent.close()
    first, second, third, fourth = (int(s) for s in log.read_text().split())
    assert (first, second) == (third, fourth) and first != second


def test_a_hanging_client_forfeits_at_the_time_limit(tmp_path: Path, first_obs: dict) -> None:
    command = client(
        tmp_path,
        """\
        decisions = 0
        for message in messages():
            if message["type"] == "act":
                decisions += 1
                if decisions == 2:
                    time.sleep(600)
                answer(message["legal"][0])
        """,
    )
    agent = ExternalAgent(command, time_limit=0.5)
    agent.reset(seed=0)
    agent.act(first_obs)
    start = time.monotonic()
    with pytest.raises(AgentForfeit, match=r"no answer within 0\.5 s") as err:
        agent.act(first_obs)
    elapsed = time.monotonic() - start
    assert 0.45 <= elapsed < 0.5 + SLACK
    assert agent.pid is not None and not alive(agent.pid)
    # Forfeited for good: every later call raises the same forfeit at once.
    for call in (lambda: agent.act(first_obs), lambda: agent.reset(seed=1)):
        start = time.monotonic()
        with pytest.raises(AgentForfeit) as again:
            call()
        assert again.value.reason == err.value.reason and time.monotonic() - start < 0.1
    agent.close()


def test_the_first_decision_has_time_to_start_up(tmp_path: Path, first_obs: dict) -> None:
    command = client(
        tmp_path,
        """\
        time.sleep(0.6)  # loading a big network, say
        for message in messages():
            if message["type"] == "act":
                answer(message["legal"][0])
        """,
    )
    agent = ExternalAgent(command, time_limit=0.3, startup_time=3.0)
    agent.reset(seed=0)
    assert agent.act(first_obs) == int(np.flatnonzero(first_obs["action_mask"])[0])
    assert agent.act(first_obs) == int(np.flatnonzero(first_obs["action_mask"])[0])
    agent.close()
    slow = ExternalAgent(command, time_limit=0.3, startup_time=0.0)
    slow.reset(seed=0)
    with pytest.raises(AgentForfeit, match=r"no answer within 0\.3 s"):
        slow.act(first_obs)


@pytest.mark.parametrize(
    ("death", "expected"),
    [
        ('print("boom: the model file is missing", file=sys.stderr); sys.exit(3)', "exited with status 3"),
        ("os.kill(os.getpid(), 9)", "was killed by SIGKILL"),
        ("os.close(1); time.sleep(600)", "closed its stdout"),
    ],
    ids=["exit", "signal", "closed-stdout"],
)
def test_a_client_that_dies_forfeits_naming_how(
    tmp_path: Path, first_obs: dict, death: str, expected: str
) -> None:
    command = client(
        tmp_path,
        f"""\
        for message in messages():
            if message["type"] == "act":
                print("loading", file=sys.stderr)
                {death}
        """,
    )
    agent = ExternalAgent(command, time_limit=5.0)
    agent.reset(seed=0)
    start = time.monotonic()
    with pytest.raises(AgentForfeit) as err:
        agent.act(first_obs)
    assert time.monotonic() - start < 1.0 + SLACK
    assert expected in err.value.reason
    # Its last lines of stderr, in order (a death's cause is often one line above the last).
    last = "loading | boom: the model file is missing" if "boom" in death else "loading"
    assert f"(last stderr: {last})" in err.value.reason
    assert "\n" not in err.value.reason
    assert agent.pid is not None and not alive(agent.pid)
    agent.close()


NODE_THROWER = """\
const readline = require("readline");
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.type === "act") {
    console.error("thinking about " + message.legal.join(", "));
    throw new Error("the model file weights.bin is missing");
  }
});
"""


def test_a_node_client_that_throws_forfeits_with_its_own_error(tmp_path: Path, first_obs: dict) -> None:
    # Node.js prints the error, its stack, a blank line and then its version: the version used to be
    # all the forfeit said (`last stderr: Node.js v20.20.2`).
    needs_node()
    script = tmp_path / "thrower.js"
    script.write_text(NODE_THROWER)
    agent = ExternalAgent(f"{NODE} {shlex.quote(str(script))}", time_limit=5.0)
    agent.reset(seed=0)
    with pytest.raises(AgentForfeit) as err:
        agent.act(first_obs)
    reason = err.value.reason
    assert reason.startswith(
        "exited with status 1 (last stderr: Error: the model file weights.bin is missing | at "
    )
    assert f"({script}:7:" in reason  # the first frame of the stack: where it was thrown
    assert "Node.js v" not in reason and "thinking about" not in reason and "\n" not in reason
    assert reason.count(" | ") <= 4 and len(reason) < EXCERPT_CHARS + 100
    assert agent.stderr_tail[-1].startswith("Node.js v")  # the tail itself is kept whole
    agent.close()


def test_a_python_client_that_raises_forfeits_with_its_traceback_end(tmp_path: Path, first_obs: dict) -> None:
    command = client(
        tmp_path,
        """\
        def load():
            raise FileNotFoundError("weights.bin")

        for message in messages():
            if message["type"] == "act":
                load()
        """,
    )
    agent = ExternalAgent(command, time_limit=5.0)
    agent.reset(seed=0)
    with pytest.raises(AgentForfeit) as err:
        agent.act(first_obs)
    # Python prints the error last, below the frames that raised it.
    assert err.value.reason.endswith(
        'in load | raise FileNotFoundError("weights.bin") | FileNotFoundError: weights.bin)'
    )
    agent.close()


def test_the_stderr_excerpt_keeps_the_error_and_stays_short() -> None:
    frames = [f"    at frame{i} (client.js:{i}:1)" for i in range(20)]
    node = [
        "client.js:3",
        "  throw err;",
        "  ^",
        "",
        "TypeError: x is undefined",
        *frames,
        "",
        "Node.js v22.1.0",
    ]
    assert stderr_excerpt(node) == (
        "TypeError: x is undefined | at frame0 (client.js:0:1) | at frame1 (client.js:1:1) | "
        "at frame2 (client.js:2:1) | at frame3 (client.js:3:1)"
    )
    # No error headline: the last lines, blank ones skipped.
    assert stderr_excerpt(["a", "", "b", "c", "d", "e", "f", "  "]) == "b | c | d | e | f"
    assert stderr_excerpt(["panic: index out of range", "goroutine 1 [running]:"]).startswith("panic: index")
    assert stderr_excerpt([]) == ""
    long = stderr_excerpt(["Error: " + "x" * 900])
    assert len(long) == EXCERPT_CHARS and long.endswith("...")


@pytest.mark.parametrize(
    ("name", "first_line", "hint"),
    [
        ("client.js", "const x = 1;", "exec:node {}"),
        ("client.mjs", "", "exec:node {}"),
        ("client.py", "import sys", "exec:python {}"),
        ("client", "#!/usr/bin/env ruby", "exec:ruby {}"),
        ("client.sh", "#!/bin/bash -e", "exec:bash -e {}"),
        ("client", "#!/usr/bin/env -S node --no-warnings", "exec:node {}"),
        ("my client.py", "print(1)", "exec:python {}"),
        ("client.bin", "", "exec:INTERPRETER {}"),
    ],
)
def test_the_hint_for_a_script_names_its_interpreter(
    tmp_path: Path, name: str, first_line: str, hint: str
) -> None:
    script = tmp_path / name
    script.write_text(first_line + "\n")
    expected = hint.format(shlex.quote(str(script)))
    assert interpreter_hint(str(script)) == expected
    with pytest.raises(ValueError, match="is not executable") as err:
        check_command(shlex.quote(str(script)))
    assert str(err.value).endswith(f"name its interpreter ({expected})")


def test_a_client_dead_before_its_hand_forfeits_at_reset(tmp_path: Path) -> None:
    command = client(tmp_path, 'print("no licence", file=sys.stderr)\nsys.exit(2)\n')
    agent = ExternalAgent(command)
    with pytest.raises(AgentForfeit, match=r"exited with status 2 \(last stderr: no licence\)"):
        # A client that has exited already refuses the hand message (a broken pipe); one still
        # exiting takes it into the pipe, and the next reset finds it dead.
        agent.reset(seed=0)
        time.sleep(0.5)
        agent.reset(seed=1)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            "discard 9z",
            r"answered 'discard 9z', which is not a legal action here \(legal: draw_discard, pass\)",
        ),
        ("big_gin", r"answered 'big_gin', which is not a legal action here"),
        ('{"action": "pass"', r"answered malformed JSON '\{\"action\": \"pass\"'"),
        ('{"move": "pass"}', r"a JSON object without an 'action' key"),
        ('{"action": 2}', r"an action is a name such as 'discard 7h', not int"),
        ("thinking about it...", r"not a legal action here .*logs go to stderr"),
        ("x" * 70000, r"longer than 65536 characters"),
    ],
    ids=["unknown", "illegal", "malformed-json", "no-action-key", "action-id", "log-line", "overlong"],
)
def test_a_bad_answer_forfeits_naming_it(tmp_path: Path, first_obs: dict, reply: str, expected: str) -> None:
    command = client(
        tmp_path,
        f"""\
        for message in messages():
            if message["type"] == "act":
                answer({reply!r})
        """,
    )
    agent = ExternalAgent(command, time_limit=5.0)
    agent.reset(seed=0)
    with pytest.raises(AgentForfeit, match=expected):
        agent.act(first_obs)
    assert agent.pid is not None and not alive(agent.pid)
    agent.close()


def test_replies_in_every_documented_form_are_read(tmp_path: Path, first_obs: dict) -> None:
    command = client(
        tmp_path,
        """\
        forms = iter(["  PASS ", '{"action": "pass"}', '"pass"', "\\r\\n\\npass"])
        for message in messages():
            if message["type"] == "act":
                answer(next(forms))
        """,
    )
    agent = ExternalAgent(command, time_limit=5.0)
    agent.reset(seed=0)
    # Blank lines before a reply are skipped.
    assert [action_name(agent.act(first_obs)) for _ in range(4)] == ["pass"] * 4
    agent.close()


def test_a_line_written_when_no_decision_was_asked_forfeits(tmp_path: Path, first_obs: dict) -> None:
    command = client(
        tmp_path,
        """\
        for message in messages():
            if message["type"] == "act":
                answer("pass")
                answer("pass")
        """,
    )
    agent = ExternalAgent(command, time_limit=5.0)
    agent.reset(seed=0)
    agent.act(first_obs)
    time.sleep(0.3)
    with pytest.raises(AgentForfeit, match="to stdout when no decision was asked"):
        agent.act(first_obs)


def test_a_chatty_stderr_never_blocks_the_client(tmp_path: Path) -> None:
    command = client(
        tmp_path,
        """\
        for message in messages():
            if message["type"] == "act":
                sys.stderr.write("x" * 3_000_000)  # no newline at all
                sys.stderr.write("\\nsearching\\n" * 20_000)
                sys.stderr.flush()
                answer(message["legal"][0])
        """,
    )
    agent = ExternalAgent(command, time_limit=5.0)
    try:
        assert len(play_hand(agent, env_seed=1, agent_seed=0)) >= 3
    finally:
        agent.close()
    assert agent.forfeit_reason is None
    assert agent.stderr_tail[-1] == "searching" and len(agent.stderr_tail) <= 20


def test_close_ends_the_client_and_its_children(tmp_path: Path) -> None:
    child_pid = tmp_path / "child.pid"
    command = client(
        tmp_path,
        f"""\
        import signal
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(child_pid)!r}, "w").write(str(child.pid))
        for message in messages():
            pass
        time.sleep(600)  # ignores the end message and the closed stdin
        """,
    )
    agent = ExternalAgent(command)
    agent.reset(seed=0)
    deadline = time.monotonic() + 10
    while not child_pid.exists() or not child_pid.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    pids = [agent.pid, int(child_pid.read_text())]
    assert all(alive(pid) for pid in pids if pid is not None)
    start = time.monotonic()
    agent.close()
    assert time.monotonic() - start < CLOSE_GRACE + SLACK
    assert agent.pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(agent.pid, 0)  # reaped, not a zombie
    deadline = time.monotonic() + 2
    while alive(pids[1]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(pids[1])
    agent.close()  # idempotent


def test_close_of_a_well_behaved_client_is_quick() -> None:
    agent = ExternalAgent(PYTHON_CLIENT)
    agent.reset(seed=0)
    start = time.monotonic()
    agent.close()
    assert time.monotonic() - start < CLOSE_GRACE
    assert agent.pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(agent.pid, 0)
    with pytest.raises(AgentForfeit, match="closed"):
        agent.reset(seed=1)


def test_a_command_that_cannot_start_forfeits_at_reset(tmp_path: Path) -> None:
    garbage = tmp_path / "not_a_program"
    garbage.write_text("this is not a program\n")
    garbage.chmod(0o755)
    for command in (str(garbage), str(tmp_path / "missing")):
        agent = ExternalAgent(command)
        with pytest.raises(AgentForfeit, match="could not be started"):
            agent.reset(seed=0)
        agent.close()


def test_check_command_refuses_what_cannot_run(tmp_path: Path) -> None:
    check_command(PYTHON_CLIENT)
    check_command(f"{shlex.quote(sys.executable)} no_such_script.py")  # the script is the client's business
    script = tmp_path / "client.py"
    script.write_text("print('hi')\n")
    cases = [
        ("", "the command is empty"),
        ("   ", "the command is empty"),
        ("'unclosed", "cannot split the command"),
        ("no-such-client-ginenv --fast", "executable 'no-such-client-ginenv' .*not found on PATH"),
        (f"{tmp_path}/missing/client", "no such file"),
        (str(script), r"is not executable: chmod \+x it, or name its interpreter"),
        (str(tmp_path), "is a folder"),
    ]
    for command, message in cases:
        with pytest.raises(ValueError, match=message) as err:
            check_command(command)
        assert "\n" not in str(err.value)


def test_bad_time_limits_are_refused() -> None:
    for limit in (0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="time_limit"):
            ExternalAgent(PYTHON_CLIENT, time_limit=limit)
