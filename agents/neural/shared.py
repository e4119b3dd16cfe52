"""Networks shared read-only between agents: each checkpoint's content loaded once.

``agents.make("checkpoint:PATH")`` builds a fresh agent each call (an agent must not remember an
earlier game), but the network weights are expensive read-only data and are shared:
:func:`shared_policy` caches loaded networks keyed by path and the sha256 of the file's content
(:func:`~ginenv.agents.neural.policy_file.checkpoint_digest`), so a changed file is reloaded. The
cache holds at most :data:`CACHE_SIZE` networks and is safe to use from several threads.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path

from ginenv.agents.neural.network import MaskedPolicy
from ginenv.agents.neural.policy_file import (
    CheckpointError,
    PathLike,
    checkpoint_bytes,
    policy_from_bytes,
)

__all__ = ["CACHE_SIZE", "clear_cache", "shared_policy", "shared_policy_and_digest"]

#: How many distinct (path, content) networks :func:`shared_policy` keeps loaded.
CACHE_SIZE = 8

_cache: OrderedDict[tuple[str, str], MaskedPolicy] = OrderedDict()
_cache_lock = threading.Lock()


def shared_policy(path: PathLike, digest: str | None = None) -> MaskedPolicy:
    """The network of a checkpoint, loaded once per (path, file content) and shared read-only.

    The file is hashed on every call, so a file rewritten in place is reloaded. ``digest`` (from
    ``checkpoint_digest``) pins the content: when the file's sha256 differs, CheckpointError, so a
    run keyed by a digest never plays another network. The returned network must not be modified
    (its parameters do not require grad); use ``load_checkpoint`` for a private copy.
    """
    return shared_policy_and_digest(path, digest)[0]


def shared_policy_and_digest(path: PathLike, digest: str | None = None) -> tuple[MaskedPolicy, str]:
    """:func:`shared_policy`, and the sha256 of the very bytes it was read from (one read, no race)."""
    raw = checkpoint_bytes(path)
    found = hashlib.sha256(raw).hexdigest()
    if digest is not None and digest != found:
        raise CheckpointError(f"{path} has changed: its sha256 is {found}, expected {digest}")
    key = (str(Path(path).resolve()), found)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key], found
    policy = policy_from_bytes(raw, path, trainable=False)
    with _cache_lock:
        policy = _cache.setdefault(key, policy)  # another thread may have loaded it meanwhile
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return policy, found


def clear_cache() -> None:
    """Forget every network loaded by :func:`shared_policy`."""
    with _cache_lock:
        _cache.clear()
