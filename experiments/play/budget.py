"""The play server's table budget: who may keep how many tables, which are live, which make room.

Every question here is one SQL query on the database's ``tables`` rows (indexed columns), so a
server's memory does not grow with the tables it stores: an idle table lives in its row only and
is loaded on its next request (:class:`~ginenv.experiments.play.store.TableStore`).

- **Shares.** Each client address keeps at most :data:`PER_ADDRESS` unfinished tables, each block
  (/24 of IPv4, /56 of IPv6) :data:`PER_BLOCK`, each network (/16 of IPv4, /48 of IPv6)
  :data:`PER_NETWORK`; a new table beyond is refused (429) with when the oldest of that share
  expires. Each count is an index range of at most its limit's rows.
- **Live.** A table is live while both its seats act: a friend table whose two seats each made a
  move in the last ``live_for`` seconds, a computer table whose person did; a finished one is not.
  An open page, a join or a spectator does not make a table live: an adversary who opens pages on
  tables it made keeps none of them from making room.
- **Room.** The server stores at most :data:`MAX_TABLES`. That cap is not what bounds an adversary
  (its shares do, and a /16 holds :data:`PER_NETWORK`): it bounds the disk, at about 1.4 KB a
  table with its keys and indexes, more for a long match's moves (100,000 tables of a few moves
  measured 132 MiB: ``benchmarks/bench_table_budget.py --stored 100000``; 250,000 are some
  hundreds of MB to a few GB), and the rare queries that walk many rows (a full server's answer,
  a search for room among live tables). Memory does not grow with it. Beyond it, a new table takes
  the place of an idle one: a finished one first, then one where no move was made (an unused
  invitation), then the others, the least recently touched first; a live table is never dropped,
  and when every one is live the new one is refused (503) with when the first may go quiet.
- **Expiry.** A table untouched for :data:`ABANDONED_AFTER` (7 days) expires; finished, or without a
  move, after :data:`FINISHED_AFTER` or :data:`EMPTY_AFTER`.
"""

from __future__ import annotations

import ipaddress
import math
import sqlite3
import time
from dataclasses import dataclass, field

from ginenv.experiments.play.checks import PlayError
from ginenv.experiments.play.db import ROOM_ORDER, network_of

#: A table untouched this long (seconds) is abandoned and deleted; a finished one, or one where no
#: move was made (an invitation nobody used), sooner.
ABANDONED_AFTER = 7 * 24 * 3600.0
FINISHED_AFTER = 24 * 3600.0
EMPTY_AFTER = 24 * 3600.0
#: Tables one server stores at most: a bound on its disk, far above what shares let one client
#: hold (see the module docstring); beyond, idle tables make room, and when all are live new ones wait.
MAX_TABLES = 250_000
#: Unfinished tables one client address, one address block (/24, /56) and one network (/16, /48)
#: may keep.
PER_ADDRESS = 20
PER_BLOCK = 200
PER_NETWORK = 1000
#: A table whose seats all made a move in the last this many seconds is live: never dropped for room.
LIVE_FOR = 600.0
_BLOCK_PREFIX = {4: 24, 6: 56}
# How long a table waits to expire, as SQL over a row (over, moves): the module docstring's rule.
_EXPIRES = (
    f"touched + CASE WHEN over THEN {FINISHED_AFTER!r} WHEN moves > 0 THEN {ABANDONED_AFTER!r} "
    f"ELSE {EMPTY_AFTER!r} END"
)
# A live table as SQL; `?` is the moment a seat's last move must be after (now - live_for).
_LIVE = "(NOT over AND acted0 > ? AND (kind = 'computer' OR acted1 > ?))"


def client_address(client: str | None) -> tuple[str | None, str | None]:
    """A client's address, normalised, and its block (``a.b.c.0/24``, an IPv6 /56); ``(None, None)``
    for what is not an IP address (a Unix socket, a test client): nobody's share to count."""
    address, block, _ = client_shares(client)
    return address, block


def client_shares(client: str | None) -> tuple[str | None, str | None, str | None]:
    """A client's address, block and network (``a.b.0.0/16``, an IPv6 /48), each normalised;
    ``(None, None, None)`` for what is not an IP address."""
    try:
        ip = ipaddress.ip_address(client or "")
    except ValueError:
        return None, None, None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # the same IPv4 client through a dual-stack socket
    block = ipaddress.ip_network(f"{ip}/{_BLOCK_PREFIX[ip.version]}", strict=False)
    return str(ip), str(block), network_of(str(ip))


def duration(seconds: float) -> str:
    """A wait in words, rounded up: ``7 min``, ``3 h``, ``2 days``."""
    if seconds < 3600:
        return f"{max(1, math.ceil(seconds / 60))} min"
    if seconds < 2 * 86400:
        return f"{math.ceil(seconds / 3600)} h"
    return f"{math.ceil(seconds / 86400)} days"


def when(moment: float, now: float) -> str:
    """A moment as an absolute UTC time and a wait: ``2026-12-07 14:05 UTC (in 10 min)``."""
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(moment))
    return f"{stamp} (in {duration(max(0.0, moment - now))})"


@dataclass
class Entry:
    """What the store knows of a table without loading it: a copy of its row as it was read."""

    id: str
    kind: str
    tokens: dict[str, str] = field(default_factory=dict)
    invite_used: bool = False
    person: str | None = None
    daily: str | None = None
    over: bool = False
    moves: int = 0
    touched: float = 0.0
    broken: bool = False

    def expires(self) -> float:
        """When this table expires if nobody touches it."""
        if self.over:
            return self.touched + FINISHED_AFTER
        return self.touched + (ABANDONED_AFTER if self.moves else EMPTY_AFTER)


@dataclass
class Budget:
    """The limits of one server (see the module docstring), asked through a connection of its
    database; the caller holds a transaction where a count and a change must agree."""

    max_tables: int = MAX_TABLES
    per_address: int = PER_ADDRESS
    per_block: int = PER_BLOCK
    per_network: int = PER_NETWORK
    live_for: float = LIVE_FOR

    def check_shares(
        self, db: sqlite3.Connection, shares: tuple[str | None, str | None, str | None], now: float
    ) -> None:
        """Refuse (429) a new table beyond its address's, its block's or its network's share."""
        address, block, network = shares
        if address is None:
            return
        for column, value, limit, who, their in (
            ("client", address, self.per_address, "this address holds", "its"),
            ("block", block, self.per_block, f"the addresses of {block} hold", "their"),
            ("network", network, self.per_network, f"the addresses of {network} hold", "their"),
        ):
            held, oldest = db.execute(
                f"SELECT count(*), min({_EXPIRES}) FROM tables WHERE {column} = ? AND over = 0",
                (value,),
            ).fetchone()
            if held >= limit:
                raise PlayError(
                    f"{who} {held} tables, {their} limit: finish or leave one, "
                    f"or wait until {when(oldest, now)} when {their} oldest expires",
                    429,
                )

    def is_live(self, db: sqlite3.Connection, table_id: str, now: float) -> bool:
        """Whether table ``table_id`` is live (both seats acting; see the module docstring)."""
        since = now - self.live_for
        row = db.execute(f"SELECT {_LIVE} FROM tables WHERE id = ?", (since, since, table_id)).fetchone()
        return bool(row and row[0])

    def victim(self, db: sqlite3.Connection, now: float) -> str | None:
        """The table to drop for a new one (see the module docstring), or None if all are live."""
        since = now - self.live_for
        row = db.execute(
            f"SELECT id FROM tables WHERE NOT {_LIVE} ORDER BY {ROOM_ORDER}, touched LIMIT 1",
            (since, since),
        ).fetchone()
        return None if row is None else str(row[0])

    def full(self, db: sqlite3.Connection, now: float, held: int) -> str:
        """What a full server answers (503): why, and when the first live table may go quiet."""
        (quiet,) = db.execute(
            "SELECT min(CASE WHEN kind = 'computer' THEN acted0 ELSE min(acted0, acted1) END) "
            "FROM tables WHERE NOT over"
        ).fetchone()
        again = f"try again at {when(quiet + self.live_for, now)}" if quiet else "try again once a match ends"
        return (
            f"this server holds {held} tables, its limit, and every one is in play (each person at it "
            f"made a move in the last {duration(self.live_for)}): {again}"
        )

    def expired(self, db: sqlite3.Connection, now: float) -> list[str]:
        """The tables abandoned at ``now`` (see the module docstring), live ones excepted."""
        since = now - self.live_for
        soonest = min(FINISHED_AFTER, EMPTY_AFTER, ABANDONED_AFTER)
        rows = db.execute(
            f"SELECT id FROM tables WHERE touched < ? AND ? > {_EXPIRES} AND NOT {_LIVE}",
            (now - soonest, now, since, since),
        ).fetchall()
        return [str(r[0]) for r in rows]


__all__ = [
    "ABANDONED_AFTER",
    "EMPTY_AFTER",
    "FINISHED_AFTER",
    "LIVE_FOR",
    "MAX_TABLES",
    "PER_ADDRESS",
    "PER_BLOCK",
    "PER_NETWORK",
    "Budget",
    "Entry",
    "client_address",
    "client_shares",
    "duration",
    "when",
]
