"""ginenv: gin rummy for reinforcement-learning research.

Layers (imports point down only): ``cards`` / ``melds`` / ``rules`` (pure rules) -> ``scoring`` ->
``engine`` (one hand) -> ``match`` (hands to the target) -> ``replay`` -> the PettingZoo env.

``import ginenv`` registers two Gymnasium ids (:func:`register_gymnasium`), each with one default
opponent whether it is built by ``gymnasium.make`` or ``gymnasium.make_vec``:

- :data:`GYMNASIUM_ID`, ``"ginenv/GinRummy-v0"``: the single-agent env
  (:class:`ginenv.wrappers.SingleAgentEnv`) against ``"normal"`` by default, any opponent and
  setting; ``make_vec`` copies it (``"sync"`` or ``"async"``);
- :data:`GYMNASIUM_BATCHED_ID`, ``"ginenv/GinRummyBatched-v0"``: hand mode against a compiled
  opponent, ``"greedy"`` by default (or ``"hard"``, ``"random"``), the learner's seat drawn every hand;
  ``make_vec`` builds the batched :class:`ginenv.vector_env.GinRummyVectorEnv` (its vector entry
  point), ``make`` the same game as one :class:`~ginenv.wrappers.SingleAgentEnv`.

Registration happens at import, plainly (Gymnasium 1.x has no entry-point plugin group; it was
removed in 1.0): it names the entry points as strings, so nothing of the env is imported until
``make``, and it is idempotent (an id already registered is left as it is). Gymnasium's module
prefix imports ginenv first, so ``gymnasium.make("ginenv:ginenv/GinRummy-v0")`` works without an
``import ginenv``.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.2.0.dev0"

#: The Gymnasium id of :class:`ginenv.wrappers.SingleAgentEnv` (default opponent ``"normal"``).
GYMNASIUM_ID = "ginenv/GinRummy-v0"
#: The Gymnasium id of the batched engine's vector env (default opponent ``"greedy"``).
GYMNASIUM_BATCHED_ID = "ginenv/GinRummyBatched-v0"

# What each id builds. The batched id's kwargs are its defaults for make and make_vec alike (they
# equal GinRummyVectorEnv's own, which tests/ginenv/test_vector_env.py checks).
_SPECS: dict[str, dict[str, Any]] = {
    GYMNASIUM_ID: {"entry_point": "ginenv.wrappers:SingleAgentEnv"},
    GYMNASIUM_BATCHED_ID: {
        "entry_point": "ginenv.wrappers:SingleAgentEnv",
        "vector_entry_point": "ginenv.vector_env:GinRummyVectorEnv",
        "kwargs": {"opponent": "greedy", "seat": None},
    },
}


def register_gymnasium() -> None:
    """Register :data:`GYMNASIUM_ID` and :data:`GYMNASIUM_BATCHED_ID` with Gymnasium (done by
    ``import ginenv``; calling it again changes nothing)."""
    from gymnasium.envs.registration import register, registry

    for env_id, spec in _SPECS.items():
        if env_id not in registry:
            register(id=env_id, **spec)


register_gymnasium()
