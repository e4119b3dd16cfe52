"""A card mask written as a plane of an observation: 52 entries, 1 for each card of the mask.

:func:`ginenv.kernels.hand.encode` writes every card plane of an observation through
:func:`write_plane`, in the observation's dtype (float32 or uint8), eight entries at a time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, types
from numba.extending import overload

from ginenv.cards import NUM_CARDS

#: The eight 0/1 entries of each byte of a card mask, low card first, in each observation dtype:
#: a plane is written a byte (eight entries) at a time, with no conversion (a float32 table
#: writing uint8 views, or a uint8 one float32 views, ran the step at half speed).
_BYTE_ENTRIES = {
    dtype: ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(dtype) for dtype in (np.float32, np.uint8)
}
_FLOAT_ENTRIES = _BYTE_ENTRIES[np.float32]
_UINT8_ENTRIES = _BYTE_ENTRIES[np.uint8]


def byte_entries(out: np.ndarray) -> np.ndarray:
    """The table of :data:`_BYTE_ENTRIES` in ``out``'s dtype (chosen when compiled)."""
    return _BYTE_ENTRIES[out.dtype.type]


@overload(byte_entries)
def _byte_entries_compiled(out: types.Array) -> Any:
    # The compiled byte_entries: the table is picked by the array type, once, when compiling (numba
    # asks the implementation to take the same parameters, annotations included).
    def uint8_table(out: types.Array) -> np.ndarray:
        return _UINT8_ENTRIES

    def float_table(out: types.Array) -> np.ndarray:
        return _FLOAT_ENTRIES

    return uint8_table if out.dtype == types.uint8 else float_table


@njit(cache=True)
def write_plane(out: np.ndarray, base: int, mask: int) -> None:
    """Write the card mask ``mask`` into ``out[base : base + 52]``: 1 for a card of it, 0 elsewhere."""
    # Eight entries at a time from a table. Zeroing the row first and then setting the cards of each
    # plane one by one took 425 ns a view, 60% of the batched step (2026-12-07).
    table = byte_entries(out)
    for j in range(6):
        entries = table[(mask >> (8 * j)) & 255]
        for k in range(8):
            out[base + 8 * j + k] = entries[k]
    entries = table[(mask >> 48) & 15]
    for k in range(NUM_CARDS - 48):
        out[base + 48 + k] = entries[k]


__all__ = ["byte_entries", "write_plane"]
