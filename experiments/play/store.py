"""Where the play server keeps its tables: memory, the database, keys, presence, fair shares.

:class:`TableStore` holds every table of one ``ginenv play`` server:

- **Memory and the database.** Every change of a table is one transaction of the state folder's
  SQLite database (:mod:`ginenv.experiments.play.db`: WAL, 0600 in a 0700 folder): the table's
  record (:meth:`Table.to_record`, kept server side only and never logged), its seat tokens, the
  game of the day. At most ``memory_limit`` tables stay in memory; an idle one beyond it leaves
  memory and is rebuilt from its row when a seat or a spectator asks for it again (by replaying its
  moves, :meth:`Table.from_record`), and a restarted server resumes every table the same way.
- **Replays.** A match's replay (both hands at every step) is a row written in the transaction that
  marks its match over (finished, left, forfeited; or abandoned: a computer match left, a table
  that expired or was dropped for space after moves were made); ``/api/replays`` lists these rows
  only, so no crash, memory pressure or stop can list a match in progress, nor a second copy. After
  each commit the replay is also exported to the replay folder (``ginenv replay``'s JSON, written
  atomically, 0600; :meth:`TableStore.export_replays` writes them all again). As the server stops
  (:meth:`TableStore.save_all`) the replay of each unfinished match in memory is exported there
  too, for the operator, under the name its table row records (committed first): that file is
  never listed nor served, and the match's end later overwrites it, under the same name.
- **Fair shares.** Each client address keeps at most ``per_address`` unfinished tables, each address
  block (/24 of IPv4, /56 of IPv6) ``per_block``; a new table beyond is refused (429) with when the
  oldest expires. When the server holds ``max_tables``, a new table takes the place of an idle one:
  a finished one first, then one where no move was made (an unused invitation), then the others,
  the least recently touched first; a live table (a move in the last ``live_for`` seconds, or a
  page open on it) is never dropped, and when all are live the new one is refused (503).
  A table untouched for :data:`ABANDONED_AFTER` (7 days) expires; finished, or without a move, after
  :data:`FINISHED_AFTER` or :data:`EMPTY_AFTER`.
- **Keys.** A computer table is reached by its id; a friend table's two seats each by their own
  token, its spectators by a watch token, and the guest's seat once through the invitation token
  (``secrets.token_urlsafe``, 192 bits). Keys are never logged; a table's public id opens nothing.
  :attr:`TableStore.server_secret` is 32 random bytes made at the first start and kept in the
  database, never sent.
- **Presence and streams.** A seat is connected while a push stream of it is open, or for
  :data:`GRACE` seconds after it closed or the seat was last asked for. Each seat may have
  :data:`SEAT_STREAMS` streams open (a reload, a second tab), the spectators of a table
  :data:`WATCH_STREAMS` together: spectators never take a seat's place.
- **The game of the day**, one per person and day: a person (the id in the page's cookie) and a
  date map to their table and whether it is finished.
- :class:`RateLimit` bounds how many tables one client creates per minute.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import math
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ginenv.experiments.play.checks import PlayError
from ginenv.experiments.play.db import (
    DB_FILE,
    ROLES,
    TABLE_COLUMNS,
    Database,
    import_folder,
    insert_table,
    private_dir,
    table_row,
    write_private,
)
from ginenv.experiments.play.table import GUEST, HOST, Table
from ginenv.experiments.play.words import clip, excerpt

#: A table untouched this long (seconds) is abandoned and deleted; a finished one, or one where no
#: move was made (an invitation nobody used), sooner.
ABANDONED_AFTER = 7 * 24 * 3600.0
FINISHED_AFTER = 24 * 3600.0
EMPTY_AFTER = 24 * 3600.0
#: Seconds a seat still counts as connected after its last stream closed (a reload, a lost network).
GRACE = 5.0
#: Tables one server keeps at most (beyond, idle ones make room; when all are live, new ones wait).
MAX_TABLES = 5000
#: Unfinished tables one client address, and one address block (/24, /56), may keep.
PER_ADDRESS = 20
PER_BLOCK = 200
#: A table with a move in the last this many seconds is live: never dropped to make room.
LIVE_FOR = 600.0
#: Push streams each seat of a table may have open, and its spectators together.
SEAT_STREAMS = 4
WATCH_STREAMS = 12
_BLOCK_PREFIX = {4: 24, 6: 56}


def client_address(client: str | None) -> tuple[str | None, str | None]:
    """A client's address, normalised, and its block (``a.b.c.0/24``, an IPv6 /56); ``(None, None)``
    for what is not an IP address (a Unix socket, a test client): nobody's share to count."""
    try:
        ip = ipaddress.ip_address(client or "")
    except ValueError:
        return None, None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # the same IPv4 client through a dual-stack socket
    block = ipaddress.ip_network(f"{ip}/{_BLOCK_PREFIX[ip.version]}", strict=False)
    return str(ip), str(block)


def _duration(seconds: float) -> str:
    if seconds < 3600:
        return f"{max(1, math.ceil(seconds / 60))} min"
    if seconds < 2 * 86400:
        return f"{math.ceil(seconds / 3600)} h"
    return f"{math.ceil(seconds / 86400)} days"


def _when(moment: float, now: float) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(moment))
    return f"{stamp} (in {_duration(max(0.0, moment - now))})"


class RateLimit:
    """At most ``count`` events per ``seconds`` for each key (a client address)."""

    def __init__(self, count: int, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.count = count
        self.seconds = seconds
        self.clock = clock
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def check(self, key: str, what: str = "new tables") -> None:
        """Count one event for ``key``; over the limit, raise :class:`PlayError` 429 (not counted)."""
        now = self.clock()
        with self._lock:
            if len(self._hits) > 10_000:  # forget the clients that went quiet
                self._hits = {k: q for k, q in self._hits.items() if q and now - q[-1] < self.seconds}
            hits = self._hits.setdefault(key, deque())
            while hits and now - hits[0] >= self.seconds:
                hits.popleft()
            if len(hits) >= self.count:
                wait = math.ceil(self.seconds - (now - hits[0]))
                raise PlayError(
                    f"too many {what} from this address: at most {self.count} in {self.seconds:g} s; "
                    f"try again in {wait} s",
                    429,
                )
            hits.append(now)


@dataclass
class Slot:
    """A table in memory: its lock (one request at a time), and who has it open."""

    table: Table
    lock: threading.Lock = field(default_factory=threading.Lock)
    evicted: bool = False
    #: Open push streams: seat 0, seat 1, spectators.
    streams: list[int] = field(default_factory=lambda: [0, 0, 0])
    #: When each seat was last asked for or last closed a stream (the presence grace starts there).
    seen: list[float] = field(default_factory=lambda: [0.0, 0.0])


@dataclass
class Entry:
    """What the store knows of a table without loading it."""

    id: str
    kind: str
    tokens: dict[str, str]
    invite_used: bool = False
    person: str | None = None
    daily: str | None = None
    over: bool = False
    replay: str | None = None
    touched: float = 0.0
    broken: bool = False
    #: Who made it (its address and block; None: not counted against a share).
    client: str | None = None
    block: str | None = None
    #: Moves made, and when the last change was (a live table is never dropped).
    moves: int = 0
    changed: float = 0.0

    def expires(self) -> float:
        """When this table expires if nobody touches it."""
        if self.over:
            return self.touched + FINISHED_AFTER
        return self.touched + (ABANDONED_AFTER if self.moves else EMPTY_AFTER)


class TableStore:
    """The tables of one server (see the module docstring), in ``state_dir``'s database.

    ``rebuild(record)`` turns a stored table record back into a :class:`Table`; finished matches'
    replays are exported to ``replay_dir`` (None: kept in the database only); ``clock`` gives the
    time (tests move it); ``synchronous`` is SQLite's (``NORMAL``: see
    :mod:`~ginenv.experiments.play.db`). A state folder of the JSON store that came before is
    imported at the first start."""

    def __init__(
        self,
        state_dir: Path,
        rebuild: Callable[[dict[str, Any]], Table],
        *,
        replay_dir: Path | None = None,
        memory_limit: int = 64,
        max_tables: int = MAX_TABLES,
        per_address: int = PER_ADDRESS,
        per_block: int = PER_BLOCK,
        live_for: float = LIVE_FOR,
        seat_streams: int = SEAT_STREAMS,
        watch_streams: int = WATCH_STREAMS,
        clock: Callable[[], float] = time.time,
        grace: float = GRACE,
        synchronous: str = "NORMAL",
    ) -> None:
        self.state_dir = private_dir(Path(state_dir))
        # The replay folder is made (0700) when the first replay is exported to it.
        self.replay_dir = None if replay_dir is None else Path(replay_dir)
        if self.replay_dir is not None and self.replay_dir.is_dir():
            private_dir(self.replay_dir)
        self.rebuild = rebuild
        self.memory_limit = max(1, memory_limit)
        self.max_tables = max_tables
        self.per_address = per_address
        self.per_block = per_block
        self.live_for = live_for
        self.seat_streams = seat_streams
        self.watch_streams = watch_streams
        self.clock = clock
        self.grace = grace
        self.db = Database(self.state_dir / DB_FILE, synchronous=synchronous)
        self._secret = self.db.secret()
        #: Files of the JSON store that came before found unreadable (left where they are).
        self.skipped = import_folder(self.db, self.state_dir, self.replay_dir)
        #: The tables in memory by id, least recently used first (server side only).
        self.loaded: OrderedDict[str, Slot] = OrderedDict()
        self._entries: dict[str, Entry] = {}
        self._tokens: dict[str, tuple[str, str]] = {}
        self._daily: dict[str, dict[str, dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()
        self._swept = 0.0
        #: Called (from any thread) with a table's id once a request changed it or a stream of it
        #: opened or closed: the server wakes that table's push streams.
        self.on_change: Callable[[str], None] | None = None
        self._load()
        self.expire()

    @property
    def server_secret(self) -> bytes:
        """32 secret bytes of this server, made at its first start and kept in its database."""
        return self._secret

    def _load(self) -> None:
        for row in self.db.read(f"SELECT {TABLE_COLUMNS} FROM tables"):
            tid, kind, over, _, moves, replay, _, person, daily, used, client, block, touched, changed = row
            self._entries[tid] = Entry(
                tid, kind, {}, bool(used), person, daily, bool(over), replay, touched,
                client=client, block=block, moves=moves, changed=changed,
            )  # fmt: skip
        for token, table_id, role in self.db.read("SELECT token, table_id, role FROM seats"):
            entry = self._entries.get(table_id)
            if entry is not None and role in ROLES:
                entry.tokens[role] = token
                self._tokens[token] = (table_id, role)
        for person, day, table_id, finished in self.db.read("SELECT * FROM daily"):
            self._daily.setdefault(person, {})[day] = {"table": table_id, "finished": bool(finished)}

    # ------------------------------------------------------------------ adding, finding, using

    def add(self, table: Table, *, person: str | None = None, client: str | None = None) -> Entry:
        """Keep a new table (one transaction); a friend table gets its seat, invitation and watch
        tokens. ``client`` is the address that asked for it (its share, see the module docstring:
        429 beyond it); a full server makes room or refuses (503)."""
        now = self.clock()
        if now - self._swept > 60:
            self.expire()
        address, block = client_address(client)
        tokens = {} if table.kind == "computer" else {r: secrets.token_urlsafe(24) for r in ROLES}
        daily = table.daily.isoformat() if table.daily else None
        entry = Entry(table.id, table.kind, tokens, person=person, daily=daily, touched=now)
        entry.client, entry.block = address, block
        slot = Slot(table)
        slot.seen[HOST] = now
        while True:
            with self._lock:
                self._check_share(address, block, now)
                if len(self._entries) < self.max_tables:
                    self._index(entry)
                    self.loaded[table.id] = slot
                    self._trim(keep=table.id)
                    break
                victim = self._victim(now)
            if victim is None:
                raise PlayError(self._full(now), 503)
            self.remove(victim)  # one idle table makes room; then look again
        row = table_row(table.to_record(), person=person, client=address, block=block, touched=now)
        try:
            with self.db.transaction() as db:
                insert_table(db, row, tokens)
                if daily is not None and person is not None:
                    self._put_daily(db, person, daily, table.id, False)
        except BaseException:
            with self._lock:
                self._forget(table.id)
            raise
        if daily is not None and person is not None:
            self._cache_daily(person, daily, table.id, False)
        return entry

    def _check_share(self, address: str | None, block: str | None, now: float) -> None:
        """Refuse (429) a new table beyond its address's or its block's share; the caller holds the lock."""
        if address is None:
            return
        for key, value, limit, who, their in (
            ("client", address, self.per_address, "this address holds", "its"),
            ("block", block, self.per_block, f"the addresses of {block} hold", "their"),
        ):
            held = [e for e in self._entries.values() if not e.over and getattr(e, key) == value]
            if len(held) >= limit:
                oldest = _when(min(e.expires() for e in held), now)
                raise PlayError(
                    f"{who} {len(held)} tables, {their} limit: finish or leave one, "
                    f"or wait until {oldest} when {their} oldest expires",
                    429,
                )

    def _live(self, entry: Entry, now: float) -> bool:
        slot = self.loaded.get(entry.id)
        return now - entry.changed < self.live_for or (slot is not None and any(slot.streams))

    def _victim(self, now: float) -> str | None:
        """The table to drop for a new one (see the module docstring); the caller holds the lock."""
        idle = [e for e in self._entries.values() if not self._live(e, now)]
        if not idle:
            return None
        return min(idle, key=lambda e: (0 if e.over else 1 if not e.moves else 2, e.touched)).id

    def _full(self, now: float) -> str:
        with self._lock:
            quiet = [
                e.changed + self.live_for
                for e in self._entries.values()
                if not any(getattr(self.loaded.get(e.id), "streams", ()))
            ]
        when = f"try again at {_when(min(quiet), now)}" if quiet else "try again once a match ends"
        return (
            f"this server holds {len(self)} tables, its limit, and every one is in play (a move in "
            f"the last {_duration(self.live_for)} or a page open): {when}"
        )

    def entry(self, table_id: str) -> Entry | None:
        """What the store knows of table ``table_id`` (None: no such table)."""
        with self._lock:
            return self._entries.get(table_id)

    def game(self, game_id: str) -> str:
        """The id of computer table ``game_id`` (404 if none: a friend table's id opens nothing)."""
        entry = self.entry(game_id)
        if entry is None or entry.kind != "computer" or entry.broken:
            raise PlayError(
                f"no game with id {excerpt(game_id)}: it ended or expired, or the link is wrong",
                404,
            )
        return game_id

    def token(self, token: str, *roles: str) -> tuple[str, str]:
        """The table id and role (``seat0``, ``seat1``, ``watch``, ``invite``) of a key (404 if none)."""
        with self._lock:
            found = self._tokens.get(token)
            entry = None if found is None else self._entries.get(found[0])
        if found is None or found[1] not in roles or entry is None or entry.broken:
            raise PlayError("no table for this link: it is wrong, or the table ended and expired", 404)
        return found

    @contextlib.contextmanager
    def use(self, table_id: str) -> Iterator[Slot]:
        """Table ``table_id``, loaded and locked for one request; written back if it changed."""
        while True:
            slot = self._get(table_id)
            slot.lock.acquire()
            if not slot.evicted:
                break
            slot.lock.release()
        changed = False
        try:
            version = slot.table.version
            yield slot
        finally:
            try:
                with self._lock:
                    entry = self._entries.get(table_id)
                    if entry is not None:
                        entry.touched = self.clock()
                changed = slot.table.version != version and not slot.evicted
                if changed:
                    self._save(slot)
            finally:
                slot.lock.release()
            if changed and self.on_change is not None:
                self.on_change(table_id)

    def _get(self, table_id: str) -> Slot:
        with self._lock:
            slot = self.loaded.get(table_id)
            if slot is not None:
                self.loaded.move_to_end(table_id)
                return slot
            entry = self._entries.get(table_id)
        if entry is None or entry.broken:
            raise PlayError("no such table: it ended and expired", 404)
        with self._load_lock:  # one rebuild at a time; the others wait for theirs
            with self._lock:
                slot = self.loaded.get(table_id)
                if slot is not None:
                    return slot
            try:
                table = self._rebuilt(table_id)
            except (OSError, ValueError, KeyError, TypeError) as err:
                with self._lock:
                    entry.broken = True
                message = str(err) if isinstance(err, PlayError) else type(err).__name__
                raise PlayError(f"this table could not be resumed: {clip(message, 200)}", 410) from None
            with self._lock:
                slot = Slot(table)
                slot.seen = [self.clock() - self.grace, self.clock() - self.grace]
                self.loaded[table_id] = slot
                self._trim(keep=table_id)
            return slot

    def _rebuilt(self, table_id: str) -> Table:
        rows = self.db.read("SELECT record FROM tables WHERE id = ?", (table_id,))
        if not rows:
            raise KeyError(table_id)
        return self.rebuild(json.loads(rows[0][0]))

    def _trim(self, keep: str) -> None:
        """Drop idle tables from memory beyond the limit; the caller holds the lock.

        A table leaving memory is already in the database (every change is written at once, under
        its lock) and is only forgotten here: nothing is written."""
        while len(self.loaded) > self.memory_limit:
            for table_id, slot in self.loaded.items():
                if table_id == keep or any(slot.streams) or not slot.lock.acquire(blocking=False):
                    continue
                try:
                    slot.evicted = True
                finally:
                    slot.lock.release()
                del self.loaded[table_id]
                break
            else:
                return  # every table is in use: memory goes over the limit for a moment

    def _save(self, slot: Slot) -> None:
        """Write a table's change, in one transaction with its replay if its match just ended (the
        caller holds its lock), then export that replay."""
        table = slot.table
        with self._lock:
            entry = self._entries.get(table.id)
            if entry is None:
                return  # removed meanwhile
            ended = table.stage == "over" and not entry.over
            entry.over = table.stage == "over"
            entry.replay = table.replay_name
            entry.moves = table.moves
            entry.changed = self.clock()
            keys = {"invite_used": int(entry.invite_used), "touched": entry.touched, "changed": entry.changed}
            person, daily = entry.person, entry.daily
        replay = self._replay_of(table) if ended else None
        finished = ended and daily is not None and person is not None
        with self.db.transaction() as db:
            self._update(db, table, **keys)
            if replay is not None:
                self._put_replay(db, table.id, *replay, replace=True)
            if finished:
                self._put_daily(db, str(person), str(daily), table.id, True)
        if finished:
            self._cache_daily(str(person), str(daily), table.id, True)
        if replay is not None:
            self._export(*replay)

    @staticmethod
    def _update(db: Any, table: Table, **keys: Any) -> None:
        row = table_row(table.to_record(), **keys)
        del row["id"]
        columns = ", ".join(f"{c} = ?" for c in row)
        db.execute(f"UPDATE tables SET {columns} WHERE id = ?", (*row.values(), table.id))

    @staticmethod
    def _replay_of(table: Table) -> tuple[str, str] | None:
        name = table.save_replay()
        return None if name is None else (name, table.replay_text())

    def _put_replay(self, db: Any, table_id: str, name: str, text: str, *, replace: bool) -> None:
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        db.execute(
            f"{verb} INTO replays (name, table_id, created, data) VALUES (?, ?, ?, ?)",
            (name, table_id, self.clock(), text),
        )

    def _export(self, name: str, text: str) -> None:
        """Write a replay to the replay folder, once the database holds it: an error here (a full
        disk, a folder gone) is raised, and loses only this copy (:meth:`export_replays`)."""
        if self.replay_dir is not None:
            write_private(private_dir(self.replay_dir) / name, text)

    def remove(self, table_id: str) -> None:
        """Forget a table (a computer match left with Leave, an expired or dropped one) and delete its
        row; a match with moves that had not ended ends here, abandoned, and its replay is written
        in the same transaction. A game of the day removed counts as played: its person cannot
        start it again to see its deals a second time."""
        with self._lock:
            found = self._forget(table_id)
        if found is None:
            return  # removed meanwhile
        entry, slot = found
        replay = self._abandoned(table_id, slot) if not entry.over and entry.moves else None
        with self.db.transaction() as db:
            if replay is not None:
                self._put_replay(db, table_id, *replay, replace=False)
            if entry.daily is not None and entry.person is not None:
                self._put_daily(db, entry.person, entry.daily, table_id, True)
            db.execute("DELETE FROM tables WHERE id = ?", (table_id,))
        if entry.daily is not None and entry.person is not None:
            self._cache_daily(entry.person, entry.daily, table_id, True)
        if replay is not None:
            self._export(*replay)

    def _forget(self, table_id: str) -> tuple[Entry, Slot | None] | None:
        """Take a table out of the index and memory (the caller holds the lock, or none is needed)."""
        entry = self._entries.pop(table_id, None)
        slot = self.loaded.pop(table_id, None)
        if slot is not None:
            slot.evicted = True
        if entry is None:
            return None
        for token in entry.tokens.values():
            self._tokens.pop(token, None)
        return entry, slot

    def _abandoned(self, table_id: str, slot: Slot | None) -> tuple[str, str] | None:
        """The replay of a match that ends unfinished (the table in memory, else rebuilt)."""
        try:
            if slot is None:
                return self._replay_of(self._rebuilt(table_id))
            with slot.lock:
                return self._replay_of(slot.table)
        except (OSError, ValueError, KeyError, TypeError):
            return None  # a table that cannot be rebuilt has no replay to give

    def use_invite(self, table_id: str) -> bool:
        """Mark a friend table's invitation used; False if it already was (an invitation works once).
        Written with the join's change (the caller holds the table)."""
        with self._lock:
            entry = self._entries[table_id]
            if entry.invite_used:
                return False
            entry.invite_used = True
            return True

    def _index(self, entry: Entry) -> None:
        self._entries[entry.id] = entry
        for role, token in entry.tokens.items():
            self._tokens[token] = (entry.id, role)

    # ------------------------------------------------------------------ views and presence

    def view(self, slot: Slot, seat: int | None) -> dict[str, Any]:
        """``slot``'s table as ``seat`` sees it (``None``: a spectator), with the presence of both
        seats and, for the host, the invitation and watch links (the caller holds the lock)."""
        view = slot.table.view(seat, self.connected(slot))
        if seat == HOST:
            with self._lock:
                entry = self._entries.get(slot.table.id)
                tokens = {} if entry is None else dict(entry.tokens)
                used = entry is None or entry.invite_used
            if "watch" in tokens:
                view["watch"] = f"/#watch={tokens['watch']}"
            if "invite" in tokens and not used and not slot.table.joined:
                view["invite"] = f"/#join={tokens['invite']}"
        return view

    def connected(self, slot: Slot) -> tuple[bool, bool]:
        """Whether each seat has the table open (an open stream, or within the grace)."""
        now = self.clock()
        return (
            slot.streams[HOST] > 0 or now - slot.seen[HOST] < self.grace,
            slot.streams[GUEST] > 0 or now - slot.seen[GUEST] < self.grace,
        )

    def seen(self, slot: Slot, seat: int | None) -> None:
        """Note that ``seat`` asked for its table now."""
        if seat is not None:
            slot.seen[seat] = self.clock()

    def open_stream(self, table_id: str, seat: int | None) -> Slot:
        """Count a push stream of ``seat`` (``None``: a spectator) open; the table stays in memory
        while it is. A seat's streams and the spectators' have separate budgets
        (:data:`SEAT_STREAMS` each seat, :data:`WATCH_STREAMS` the spectators: 429 beyond), so
        spectators never keep a player from their own table."""
        while True:
            slot = self._get(table_id)
            with self._lock:
                if slot.evicted:
                    continue
                if seat is None and slot.streams[2] >= self.watch_streams:
                    raise PlayError(
                        f"this table has {slot.streams[2]} spectators, its limit: "
                        "watch again once one leaves",
                        429,
                    )
                if seat is not None and slot.streams[seat] >= self.seat_streams:
                    raise PlayError(
                        f"this seat has {slot.streams[seat]} pages open on its table, its limit: "
                        "close one of them",
                        429,
                    )
                slot.streams[2 if seat is None else seat] += 1
            if self.on_change is not None:
                self.on_change(table_id)
            return slot

    def close_stream(self, slot: Slot, seat: int | None) -> None:
        """A push stream closed: the seat's grace starts."""
        with self._lock:
            slot.streams[2 if seat is None else seat] -= 1
            if seat is not None:
                slot.seen[seat] = self.clock()
        if self.on_change is not None:
            self.on_change(slot.table.id)

    # ------------------------------------------------------------------ the game of the day

    def daily(self, person: str, day: str) -> dict[str, Any] | None:
        """``{"table": id, "finished": bool}`` of ``person``'s game of ``day``, or None."""
        with self._lock:
            found = self._daily.get(person, {}).get(day)
            return None if found is None else dict(found)

    def set_daily(self, person: str, day: str, table_id: str, *, finished: bool = False) -> None:
        """Note ``person``'s game of ``day`` (finished: it cannot be played again)."""
        before = self.daily(person, day)
        finished = finished or bool(before and before["finished"])
        if before == {"table": table_id, "finished": finished}:
            return
        with self.db.transaction() as db:
            self._put_daily(db, person, day, table_id, finished)
        self._cache_daily(person, day, table_id, finished)

    @staticmethod
    def _put_daily(db: Any, person: str, day: str, table_id: str, finished: bool) -> None:
        db.execute(
            "INSERT INTO daily VALUES (?, ?, ?, ?) ON CONFLICT (person, day) DO UPDATE SET "
            "table_id = excluded.table_id, finished = max(finished, excluded.finished)",
            (person, day, table_id, int(finished)),
        )

    def _cache_daily(self, person: str, day: str, table_id: str, finished: bool) -> None:
        with self._lock:
            before = self._daily.setdefault(person, {}).get(day)
            finished = finished or bool(before and before["finished"])
            self._daily[person][day] = {"table": table_id, "finished": finished}

    # ------------------------------------------------------------------ replays

    def replays(self) -> list[tuple[str, int, float]]:
        """The replays of finished matches, newest first: name, size in bytes, when written."""
        rows = self.db.read(
            "SELECT name, length(CAST(data AS BLOB)), created FROM replays ORDER BY created DESC, name"
        )
        return [(str(n), int(s), float(c)) for n, s, c in rows]

    def replay(self, name: str) -> str | None:
        """The JSON of the finished match's replay ``name`` (:mod:`ginenv.replay`), or None."""
        rows = self.db.read("SELECT data FROM replays WHERE name = ?", (name,))
        return None if not rows else str(rows[0][0])

    def export_replays(self, folder: Path) -> int:
        """Write every finished match's replay to ``folder`` (0600 files, atomically); returns how many."""
        private_dir(Path(folder))
        rows = self.db.read("SELECT name, data FROM replays")
        for name, text in rows:
            write_private(Path(folder) / name, text)
        return len(rows)

    # ------------------------------------------------------------------ upkeep

    def expire(self) -> int:
        """Delete the abandoned tables (see the module docstring); returns how many."""
        now = self.clock()
        self._swept = now
        with self._lock:
            old = [e.id for e in self._entries.values() if now > e.expires() and not self._live(e, now)]
            cutoff = time.strftime("%Y-%m-%d", time.localtime(now - ABANDONED_AFTER))
            for days in self._daily.values():
                for day in [d for d in days if d < cutoff]:
                    del days[day]
        with self.db.transaction() as db:
            db.execute("DELETE FROM daily WHERE day < ?", (cutoff,))
        for table_id in old:
            self.remove(table_id)
        return len(old)

    def save_all(self) -> list[str]:
        """As the server stops: write when each table was last touched, and export the replay of each
        unfinished match in memory with a move (for the operator, never listed: see the module
        docstring); returns those replays' file names. The names are committed to the tables' rows
        before any file is written."""
        exports, changes = [], []
        for slot in list(self.loaded.values()):
            with slot.lock:
                if slot.evicted or slot.table.stage == "over":
                    continue
                named = slot.table.replay_name
                replay = self._replay_of(slot.table)
                if replay is not None:
                    exports.append(replay)
                    if replay[0] != named:
                        changes.append(slot.table.to_record())
        with self._lock:
            touched = [(e.touched, e.id) for e in self._entries.values()]
        with self.db.transaction() as db:
            for record in changes:
                text = json.dumps(record, separators=(",", ":"))
                db.execute(
                    "UPDATE tables SET record = ?, replay = ? WHERE id = ?",
                    (text, record["replay"], record["id"]),
                )
            db.executemany("UPDATE tables SET touched = ? WHERE id = ?", touched)
        saved = []
        for name, text in exports:
            with contextlib.suppress(OSError):  # the server stops whatever happens to a copy
                self._export(name, text)
                saved.append(name)
        return saved

    def close(self) -> None:
        """Close the database (the store is not used after)."""
        self.db.close()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


__all__ = [
    "ABANDONED_AFTER",
    "EMPTY_AFTER",
    "FINISHED_AFTER",
    "GRACE",
    "LIVE_FOR",
    "MAX_TABLES",
    "PER_ADDRESS",
    "PER_BLOCK",
    "SEAT_STREAMS",
    "WATCH_STREAMS",
    "RateLimit",
    "Slot",
    "TableStore",
    "client_address",
    "write_private",
]
