"""Decks from a secret: the dealer of play tables and of trusted evaluations.

Seeds are for reproducible research, secrets for secrecy. ``gin_rummy_v0``'s ``reset(seed=...)``
deals the same cards forever from a public seed, so anyone who knows (or searches) the seed knows
the deck. A :class:`DealKey` holds at least 128 secret bits (32 bytes when drawn here); the deck at
a *path* (a few non-negative ints, e.g. ``(game, hand)``) is a pure function of the key and the
path, so a party that holds the key can deal and replay every deck, and nobody else can narrow them.

**The algorithm** (version 1; a change is a new version, so old keys keep their decks). The bytes
of the path are its ints as 8-byte big-endian words. Block ``i`` of the stream is
``BLAKE2b-512(path bytes || i as 8 bytes big-endian, key=KEY, person=b"ginenv-deck-v1")`` (a keyed
PRF), read as 16 big-endian 32-bit words. Starting from ``[0, 1, ..., 51]``, for ``i`` from 51
down to 1: take stream words until one is below ``2**32 - 2**32 % (i + 1)`` (rejection, so no
bias), let ``j`` be that word modulo ``i + 1``, and swap positions ``i`` and ``j`` (Fisher-Yates).
The result is the deck in dealing order (card ids ``suit * 13 + rank``, see :mod:`ginenv.cards`).
It is written out here so that a checker in any language can replay a disclosed key.

**Commitment.** :meth:`DealKey.commitment` is ``SHA-256(b"ginenv-deal-key-v1" || KEY)`` in hex:
published before a run, it binds the run to its key without telling it; the key, disclosed after,
lets anyone check the commitment and replay every deck.

**Derived keys.** :meth:`DealKey.derive` gives an independent key for a label (e.g. a date under a
server's secret: the game of the day), ``BLAKE2b-256(label, key=KEY, person=b"ginenv-derive-v1")``.
"""

from __future__ import annotations

import hashlib
import secrets
import struct
from collections.abc import Iterator

from ginenv.cards import NUM_CARDS

#: The bytes of a key drawn by :meth:`DealKey.new` (256 bits), and the fewest a key may have (128 bits).
KEY_BYTES = 32
MIN_KEY_BYTES = 16
#: BLAKE2b's longest key.
MAX_KEY_BYTES = 64
VERSION = 1
_DECK_PERSON = b"ginenv-deck-v1"
_DERIVE_PERSON = b"ginenv-derive-v1"
_COMMIT_PREFIX = b"ginenv-deal-key-v1"
_WORD = 1 << 32


class DealKeyError(ValueError):
    """A key that is not 16 to 64 bytes (32 to 128 hex digits), or a path that is not non-negative ints."""


class DealKey:
    """A secret that deals decks (see the module docstring). Its ``repr`` shows the commitment,
    never the key; :meth:`hex` is the one way out, for whoever must keep or disclose it."""

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        if not isinstance(key, bytes | bytearray) or not MIN_KEY_BYTES <= len(key) <= MAX_KEY_BYTES:
            size = len(key) if isinstance(key, bytes | bytearray) else type(key).__name__
            raise DealKeyError(
                f"a deal key is {MIN_KEY_BYTES} to {MAX_KEY_BYTES} bytes ({2 * MIN_KEY_BYTES} to "
                f"{2 * MAX_KEY_BYTES} hex digits), got {size}"
            )
        self._key = bytes(key)

    @classmethod
    def new(cls) -> DealKey:
        """A fresh key of :data:`KEY_BYTES` bytes from the OS's cryptographic generator."""
        return cls(secrets.token_bytes(KEY_BYTES))

    @classmethod
    def from_hex(cls, text: str) -> DealKey:
        """The key written by :meth:`hex` (32 to 128 hex digits)."""
        text = str(text).strip()
        allowed = f"a deal key is written as {2 * MIN_KEY_BYTES} to {2 * MAX_KEY_BYTES} hex digits"
        try:
            raw = bytes.fromhex(text)
        except ValueError:
            raise DealKeyError(f"{allowed}, got {len(text)} characters that are not all hex") from None
        if not MIN_KEY_BYTES <= len(raw) <= MAX_KEY_BYTES:
            raise DealKeyError(f"{allowed}, got {len(text)}")
        return cls(raw)

    def hex(self) -> str:
        """The key as hex digits: to keep server side, or to disclose once its deals are played."""
        return self._key.hex()

    def commitment(self) -> str:
        """SHA-256 of the key (with a fixed prefix), in hex: safe to publish before the deals."""
        return hashlib.sha256(_COMMIT_PREFIX + self._key).hexdigest()

    def derive(self, label: str) -> DealKey:
        """An independent key for ``label`` (knowing it tells nothing of this key or its other labels)."""
        digest = hashlib.blake2b(
            label.encode("utf-8"), key=self._key, person=_DERIVE_PERSON, digest_size=KEY_BYTES
        )
        return DealKey(digest.digest())

    def deck(self, *path: int) -> list[int]:
        """The 52 card ids, in dealing order, of the deck at ``path`` (Fisher-Yates over the stream)."""
        words = self._words(_path_bytes(path))
        order = list(range(NUM_CARDS))
        for i in range(NUM_CARDS - 1, 0, -1):
            n = i + 1
            limit = _WORD - _WORD % n
            word = next(words)
            while word >= limit:
                word = next(words)
            j = word % n
            order[i], order[j] = order[j], order[i]
        return order

    def _words(self, prefix: bytes) -> Iterator[int]:
        block = 0
        while True:
            data = prefix + block.to_bytes(8, "big")
            digest = hashlib.blake2b(data, key=self._key, person=_DECK_PERSON).digest()
            yield from struct.unpack(">16I", digest)
            block += 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DealKey) and secrets.compare_digest(self._key, other._key)

    def __hash__(self) -> int:
        return hash(self.commitment())

    def __repr__(self) -> str:
        return f"<DealKey commitment={self.commitment()[:16]}...>"

    def __reduce__(self) -> tuple[type[DealKey], tuple[bytes]]:
        # Worker processes receive the key to deal; pickling never leaves this process otherwise.
        return (DealKey, (self._key,))


def _path_bytes(path: tuple[int, ...]) -> bytes:
    out = bytearray()
    for part in path:
        if isinstance(part, bool) or not isinstance(part, int) or not 0 <= part < 1 << 64:
            raise DealKeyError(f"a deck's path is non-negative integers below 2**64, got {part!r}")
        out += part.to_bytes(8, "big")
    return bytes(out)


def check_commitment(key_hex: str, commitment: str) -> bool:
    """Whether the disclosed key ``key_hex`` is the one ``commitment`` was published for."""
    return secrets.compare_digest(DealKey.from_hex(key_hex).commitment(), str(commitment).strip().lower())


__all__ = ["KEY_BYTES", "MIN_KEY_BYTES", "VERSION", "DealKey", "DealKeyError", "check_commitment"]
