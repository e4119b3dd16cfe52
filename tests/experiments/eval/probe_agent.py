"""A probe agent for the harness's integrity tests: it writes down everything it saw.

Each instance gets a unique id and appends, to ``$GINENV_PROBE_DIR/<id>.jsonl``, one line per hand
it plays: the seed it was reset with and a digest of its first observation. Files rather than
memory, so that instances living in worker processes report too. The tests name these agents by
file specs (``.../probe_agent.py:ProbeAgent``), which every worker process rebuilds.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path
from typing import Any

import numpy as np
from ginenv.agents.base import Agent, Observation

PROBE = "probe"


class ProbeAgent(Agent):
    """Plays as greedy (so that hands and matches end) and records what it saw, hand by hand."""

    name = PROBE

    def __init__(self, seed: int | None = None) -> None:
        from ginenv import agents

        super().__init__(seed)
        self.inner = agents.make("greedy", seed=seed)
        self.id = uuid.uuid4().hex
        self.hands = 0
        self._pending: dict[str, Any] | None = None

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.inner.reset(seed)
        self.hands += 1
        self._pending = {"hand": self.hands, "reset_seed": seed}

    def act(self, observation: Observation) -> int:
        if self._pending is not None:
            digest = hashlib.sha256(np.asarray(observation["observation"]).tobytes()).hexdigest()
            self._write({**self._pending, "first_observation": digest})
            self._pending = None
        return self.inner.act(observation)

    def _write(self, line: dict[str, Any]) -> None:
        folder = Path(os.environ["GINENV_PROBE_DIR"])
        with (folder / f"{self.id}.jsonl").open("a") as fh:
            fh.write(json.dumps(line) + "\n")


class AgentBug(RuntimeError):
    """What the crashing agent raises."""


class CrashingAgent(Agent):
    """Raises inside ``act`` on its third decision: an agent with a bug of its own."""

    name = "crasher"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.decisions = 0

    def act(self, observation: Observation) -> int:
        self.decisions += 1
        if self.decisions == 3:
            raise AgentBug("the crasher's own bug")
        return int(np.flatnonzero(observation["action_mask"])[0])


class IllegalAgent(Agent):
    """Returns an action id that is never legal (107 + 1 is out of range)."""

    name = "illegal"

    def act(self, observation: Observation) -> int:
        return len(observation["action_mask"])
