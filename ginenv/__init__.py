"""ginenv: gin rummy for reinforcement-learning research.

Layers (imports point down only): ``cards`` / ``melds`` / ``rules`` (pure rules) -> ``scoring`` ->
``engine`` (one hand) -> ``match`` (hands to the target) -> ``replay`` -> the PettingZoo env.

``import ginenv`` registers the single-agent Gymnasium env (:class:`ginenv.wrappers.SingleAgentEnv`)
as :data:`GYMNASIUM_ID`, ``gymnasium.make("ginenv/GinRummy-v0", opponent="normal", ...)``, with the
batched :class:`ginenv.vector_env.GinRummyVectorEnv` as its vector entry point
(``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``). The
registration is cheap: it names the entry point as a string (nothing of the env is imported until
``make``), and it does not import Gymnasium either, so that the pure rules layers stay free of it:
if Gymnasium is already imported it registers at once, otherwise a one-shot import hook registers
right after Gymnasium's own import.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

__version__ = "0.1.0"

#: The Gymnasium id of :class:`ginenv.wrappers.SingleAgentEnv`.
GYMNASIUM_ID = "ginenv/GinRummy-v0"
_ENTRY_POINT = "ginenv.wrappers:SingleAgentEnv"
_VECTOR_ENTRY_POINT = "ginenv.vector_env:GinRummyVectorEnv"


def register_gymnasium() -> None:
    """Register :data:`GYMNASIUM_ID` with Gymnasium (imports it; done for you, at most once)."""
    from gymnasium.envs.registration import register, registry

    if GYMNASIUM_ID not in registry:
        register(id=GYMNASIUM_ID, entry_point=_ENTRY_POINT, vector_entry_point=_VECTOR_ENTRY_POINT)


class _RegisterAfterImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Runs :func:`register_gymnasium` right after the ``gymnasium`` package finishes importing."""

    def __init__(self) -> None:
        self._loader: importlib.abc.Loader | None = None

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "gymnasium":
            return None
        # Let the other finders locate gymnasium, then wrap its loader.
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        self._loader = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        assert self._loader is not None
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        loader = self._loader
        assert loader is not None
        loader.exec_module(module)
        # Hand the module back to its own loader (importlib.resources and reloads ask it).
        module.__loader__ = loader
        if module.__spec__ is not None:
            module.__spec__.loader = loader
        _remove_hook(self)
        register_gymnasium()


def _remove_hook(hook: _RegisterAfterImport) -> None:
    if hook in sys.meta_path:
        sys.meta_path.remove(hook)


def _install() -> None:
    if "gymnasium" in sys.modules:
        register_gymnasium()
    elif not any(isinstance(f, _RegisterAfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterAfterImport())


_install()
