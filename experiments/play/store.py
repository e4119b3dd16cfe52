"""Where the play server keeps its tables: memory, the database, keys, presence.

:class:`TableStore` holds every table of one ``ginenv play`` server:

- **Memory and the database.** Every change of a table is one transaction of the state folder's
  SQLite database (:mod:`ginenv.experiments.play.db`: WAL, 0600 in a 0700 folder): the table's
  record (:meth:`Table.to_record`, kept server side only and never logged), its seat tokens, the
  game of the day. At most ``memory_limit`` tables stay in memory; an idle one beyond it leaves
  memory and is rebuilt from its row when a seat or a spectator asks for it again (by replaying its
  moves, :meth:`Table.from_record`), and a restarted server resumes every table the same way.
  Nothing else is kept in memory per stored table: a key, a share, a game of the day, which table
  is live or makes room are each a query on indexed columns, so memory stays bounded whatever the
  number of stored tables (the server's RSS was 210 MiB with none, 217 MiB with 10,000 and with
  100,000: ``benchmarks/bench_table_budget.py --stored 100000``, 2026-12-07). When a table was
  last touched is written at most every :data:`TOUCH_EVERY` seconds while it is open (and as the
  server stops).
- **Replays.** A match's replay (both hands at every step) is a row written in the transaction that
  marks its match over (finished, left, forfeited; or abandoned: a computer match left, a table
  that expired or was dropped for space after moves were made); ``/api/replays`` lists these rows
  only, so no crash, memory pressure or stop can list a match in progress, nor a second copy. After
  each commit the replay is also exported to the replay folder (``ginenv replay``'s JSON, written
  atomically, 0600; :meth:`TableStore.export_replays` writes them all again). As the server stops
  (:meth:`TableStore.save_all`) the replay of each unfinished match in memory is exported there
  too, for the operator, under the name its table row records (committed first): that file is
  never listed nor served, and the match's end later overwrites it, under the same name.
- **Fair shares, live tables, room, expiry**: the table budget (:mod:`ginenv.experiments.play.budget`):
  per address, per block, per network; live while both seats act; idle tables make room.
- **Keys.** A computer table is reached by its id; a friend table's two seats each by their own
  token, its spectators by a watch token, and the guest's seat once through the invitation token
  (``secrets.token_urlsafe``, 192 bits). Keys are never logged; a table's public id opens nothing.
  :attr:`TableStore.server_secret` is 32 random bytes made at the first start and kept in the
  database, never sent.
- **Presence and streams.** A seat is connected while a push stream of it is open, or for
  :data:`GRACE` seconds after it closed or the seat was last asked for. Each seat may have
  :data:`SEAT_STREAMS` streams open (a reload, a second tab), the spectators of a table
  :data:`WATCH_STREAMS` together: spectators never take a seat's place.
- **A person's hands**: each hand a person finishes against the computer is recorded in the
  transaction that saves the move that ended it (:mod:`ginenv.experiments.play.people`).
- **The game of the day**, one per person and day: a person (the id in the page's cookie) and a
  date map to their table and whether it is finished.
- :class:`RateLimit` bounds how many tables one client creates per minute.
"""

from __future__ import annotations

import contextlib
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

from ginenv.experiments.play.budget import (
    ABANDONED_AFTER,
    EMPTY_AFTER,
    FINISHED_AFTER,
    LIVE_FOR,
    MAX_TABLES,
    PER_ADDRESS,
    PER_BLOCK,
    PER_NETWORK,
    Budget,
    Entry,
    client_address,
    client_shares,
)
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
from ginenv.experiments.play.people import record_hands
from ginenv.experiments.play.table import GUEST, HOST, Table
from ginenv.experiments.play.words import clip, excerpt

#: Seconds a seat still counts as connected after its last stream closed (a reload, a lost network).
GRACE = 5.0
#: Push streams each seat of a table may have open, and its spectators together.
SEAT_STREAMS = 4
WATCH_STREAMS = 12
#: Seconds between two writes of when an open table was last touched (a view alone changes
#: nothing else; expiry counts in hours and days).
TOUCH_EVERY = 60.0


def seat_moves(table: Table) -> tuple[int, int]:
    """How many moves each seat of ``table`` made (its log's ``[seat, action]`` entries)."""
    counts = [0, 0]
    for entry in table.log:
        if len(entry) == 2 and entry[0] in (0, 1) and isinstance(entry[1], str):
            counts[entry[0]] += 1
    return counts[0], counts[1]


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
    #: When the table was last asked for, and when that was last written to its row.
    touched: float = 0.0
    touched_saved: float = 0.0
    #: Each seat's moves as its row last recorded them (a seat that adds one acted).
    acts: tuple[int, int] = (0, 0)


class TableStore:
    """The tables of one server (see the module docstring), in ``state_dir``'s database.

    ``rebuild(record)`` turns a stored table record back into a :class:`Table`; finished matches'
    replays are exported to ``replay_dir`` (None: kept in the database only); ``clock`` gives the
    time (tests move it); ``synchronous`` is SQLite's (``NORMAL``: see
    :mod:`~ginenv.experiments.play.db`). ``max_tables``, the shares and ``live_for`` are the table
    budget's (:class:`~ginenv.experiments.play.budget.Budget`). A state folder of the JSON store that
    came before is imported at the first start."""

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
        per_network: int = PER_NETWORK,
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
        self.budget = Budget(max_tables, per_address, per_block, per_network, live_for)
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
        #: Tables whose record could not be rebuilt (410; as few as there are broken rows).
        self._broken: set[str] = set()
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()
        self._swept = 0.0
        #: How many tables the database holds: changed only inside a transaction that adds or
        #: deletes a row, so it agrees with the rows.
        self._count = int(self.db.read("SELECT count(*) FROM tables")[0][0])
        #: Called (from any thread) with a table's id once a request changed it or a stream of it
        #: opened or closed: the server wakes that table's push streams.
        self.on_change: Callable[[str], None] | None = None
        self.expire()

    @property
    def server_secret(self) -> bytes:
        """32 secret bytes of this server, made at its first start and kept in its database."""
        return self._secret

    @property
    def max_tables(self) -> int:
        """The most tables this server stores (the budget's hard cap)."""
        return self.budget.max_tables

    @max_tables.setter
    def max_tables(self, value: int) -> None:
        self.budget.max_tables = value

    # ------------------------------------------------------------------ adding, finding, using

    def add(self, table: Table, *, person: str | None = None, client: str | None = None) -> Entry:
        """Keep a new table (one transaction); a friend table gets its seat, invitation and watch
        tokens. ``client`` is the address that asked for it (its shares, see
        :mod:`~ginenv.experiments.play.budget`: 429 beyond them); a full server makes room or
        refuses (503)."""
        now = self.clock()
        if now - self._swept > 60:
            self.expire()
        shares = client_shares(client)
        tokens = {} if table.kind == "computer" else {r: secrets.token_urlsafe(24) for r in ROLES}
        daily = table.daily.isoformat() if table.daily else None
        entry = Entry(table.id, table.kind, tokens, person=person, daily=daily, touched=now)
        row = table_row(
            table.to_record(), person=person, client=shares[0], block=shares[1], network=shares[2],
            touched=now, changed=now,
        )  # fmt: skip
        slot = Slot(table, touched=now, touched_saved=now, acts=seat_moves(table))
        slot.seen[HOST] = now
        while True:
            victim, full = None, ""
            with self.db.transaction() as db:
                # The shares are counted and the row added in one transaction: no two requests
                # can both take a share's last place.
                self.budget.check_shares(db, shares, now)
                if self._count < self.budget.max_tables:
                    insert_table(db, row, tokens)
                    if daily is not None and person is not None:
                        self._put_daily(db, person, daily, table.id, False)
                    self._count += 1
                else:
                    victim = self.budget.victim(db, now)
                    if victim is None:
                        full = self.budget.full(db, now, self._count)
            if full:
                raise PlayError(full, 503)
            if victim is None:
                break
            self.remove(victim)  # one idle table makes room; then look again
        with self._lock:
            self.loaded[table.id] = slot
            self._trim(keep=table.id)
        return entry

    def check_shares(self, client: str | None) -> None:
        """Refuse (429) a new table from ``client`` beyond one of its shares, before it is made
        (a deal costs milliseconds; :meth:`add` counts again as it adds)."""
        with self.db.transaction() as db:
            self.budget.check_shares(db, client_shares(client), self.clock())

    def entry(self, table_id: str) -> Entry | None:
        """What the store knows of table ``table_id``, read from its row (None: no such table)."""
        rows = self.db.read(f"SELECT {TABLE_COLUMNS} FROM tables WHERE id = ?", (table_id,))
        if not rows:
            return None
        tid, kind, used, person, daily, over, moves, touched = rows[0]
        tokens = {
            str(role): str(token)
            for token, role in self.db.read("SELECT token, role FROM seats WHERE table_id = ?", (tid,))
            if role in ROLES
        }
        with self._lock:
            broken = tid in self._broken
            slot = self.loaded.get(tid)
        touched = max(float(touched), slot.touched if slot is not None else 0.0)
        return Entry(
            tid, kind, tokens, bool(used), person, daily, bool(over), int(moves), touched, broken
        )  # fmt: skip

    def game(self, game_id: str) -> str:
        """The id of computer table ``game_id`` (404 if none: a friend table's id opens nothing)."""
        rows = self.db.read("SELECT kind FROM tables WHERE id = ?", (game_id,))
        with self._lock:
            broken = game_id in self._broken
        if not rows or rows[0][0] != "computer" or broken:
            raise PlayError(
                f"no game with id {excerpt(game_id)}: it ended or expired, or the link is wrong",
                404,
            )
        return game_id

    def token(self, token: str, *roles: str) -> tuple[str, str]:
        """The table id and role (``seat0``, ``seat1``, ``watch``, ``invite``) of a key (404 if none).
        A seat's row goes with its table's (a foreign key)."""
        rows = self.db.read("SELECT table_id, role FROM seats WHERE token = ?", (token,))
        found = None if not rows else (str(rows[0][0]), str(rows[0][1]))
        with self._lock:
            broken = found is not None and found[0] in self._broken
        if found is None or found[1] not in roles or broken:
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
                slot.touched = self.clock()
                changed = slot.table.version != version and not slot.evicted
                if changed:
                    self._save(slot)
                elif slot.touched - slot.touched_saved >= TOUCH_EVERY and not slot.evicted:
                    with self.db.transaction() as db:
                        db.execute("UPDATE tables SET touched = ? WHERE id = ?", (slot.touched, table_id))
                    slot.touched_saved = slot.touched
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
            broken = table_id in self._broken
        if broken:
            raise PlayError("no such table: it ended and expired", 404)
        with self._load_lock:  # one rebuild at a time; the others wait for theirs
            with self._lock:
                slot = self.loaded.get(table_id)
                if slot is not None:
                    return slot
            rows = self.db.read("SELECT record, touched FROM tables WHERE id = ?", (table_id,))
            if not rows:
                raise PlayError("no such table: it ended and expired", 404)
            try:
                table = self.rebuild(json.loads(rows[0][0]))
            except (OSError, ValueError, KeyError, TypeError) as err:
                with self._lock:
                    self._broken.add(table_id)
                message = str(err) if isinstance(err, PlayError) else type(err).__name__
                raise PlayError(f"this table could not be resumed: {clip(message, 200)}", 410) from None
            with self._lock:
                touched = float(rows[0][1])
                slot = Slot(table, touched=touched, touched_saved=touched, acts=seat_moves(table))
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
        its lock) and is only forgotten here: nothing is written (its row's touched is at most
        :data:`TOUCH_EVERY` seconds behind, a lag expiry in hours and days does not feel)."""
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
        """Write a table's change, in one transaction with its replay if its match just ended and the
        hands it finished (a computer table with a person: :mod:`~ginenv.experiments.play.people`;
        the caller holds its lock), then export that replay. A seat whose moves grew acted now (the
        budget's liveness)."""
        table = slot.table
        now = self.clock()
        rows = self.db.read("SELECT over, person, daily FROM tables WHERE id = ?", (table.id,))
        if not rows:
            return  # removed meanwhile
        was_over, person, daily = rows[0]
        ended = table.stage == "over" and not was_over
        acts = seat_moves(table)
        acted = {f"acted{s}": now for s in (0, 1) if acts[s] > slot.acts[s]}
        replay = self._replay_of(table) if ended else None
        finished = ended and daily is not None and person is not None
        hands = list(table.ended_hands)
        with self.db.transaction() as db:
            if not self._update(db, table, touched=slot.touched, changed=now, **acted):
                return  # removed meanwhile: its replay, if any, was written then
            if replay is not None:
                self._put_replay(db, table.id, *replay, replace=True)
            if finished:
                self._put_daily(db, str(person), str(daily), table.id, True)
            if hands and person is not None and table.kind == "computer":
                record_hands(db, str(person), table.preset, hands, now)
        del table.ended_hands[: len(hands)]  # committed with the move that ended them
        slot.acts, slot.touched_saved = acts, slot.touched
        if replay is not None:
            self._export(*replay)

    @staticmethod
    def _update(db: Any, table: Table, **keys: Any) -> bool:
        row = table_row(table.to_record(), **keys)
        del row["id"]
        columns = ", ".join(f"{c} = ?" for c in row)
        done = db.execute(f"UPDATE tables SET {columns} WHERE id = ?", (*row.values(), table.id))
        return bool(done.rowcount)

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
        entry = self.entry(table_id)
        if entry is None:
            return  # removed meanwhile
        slot = self._forget(table_id)
        replay = self._abandoned(table_id, slot) if not entry.over and entry.moves else None
        with self.db.transaction() as db:
            if not db.execute("DELETE FROM tables WHERE id = ?", (table_id,)).rowcount:
                return  # removed meanwhile, by another request
            self._count -= 1
            if replay is not None:
                self._put_replay(db, table_id, *replay, replace=False)
            if entry.daily is not None and entry.person is not None:
                self._put_daily(db, entry.person, entry.daily, table_id, True)
        self._forget(table_id)  # if a request loaded it again meanwhile
        if replay is not None:
            self._export(*replay)

    def _forget(self, table_id: str) -> Slot | None:
        """Take a table out of memory (its row stays until the caller deletes it)."""
        with self._lock:
            self._broken.discard(table_id)
            slot = self.loaded.pop(table_id, None)
            if slot is not None:
                slot.evicted = True
            return slot

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
        Written at once, in its own transaction (the caller holds the table)."""
        with self.db.transaction() as db:
            done = db.execute(
                "UPDATE tables SET invite_used = 1 WHERE id = ? AND invite_used = 0", (table_id,)
            )
            return bool(done.rowcount)

    # ------------------------------------------------------------------ views and presence

    def view(self, slot: Slot, seat: int | None) -> dict[str, Any]:
        """``slot``'s table as ``seat`` sees it (``None``: a spectator), with the presence of both
        seats and, for the host, the invitation and watch links (the caller holds the lock)."""
        view = slot.table.view(seat, self.connected(slot))
        if seat == HOST and slot.table.kind != "computer":
            entry = self.entry(slot.table.id)
            tokens = {} if entry is None else entry.tokens
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
        rows = self.db.read(
            "SELECT table_id, finished FROM daily WHERE person = ? AND day = ?", (person, day)
        )
        return None if not rows else {"table": str(rows[0][0]), "finished": bool(rows[0][1])}

    def set_daily(self, person: str, day: str, table_id: str, *, finished: bool = False) -> None:
        """Note ``person``'s game of ``day`` (finished: it cannot be played again)."""
        with self.db.transaction() as db:
            self._put_daily(db, person, day, table_id, finished)

    @staticmethod
    def _put_daily(db: Any, person: str, day: str, table_id: str, finished: bool) -> None:
        db.execute(
            "INSERT INTO daily VALUES (?, ?, ?, ?) ON CONFLICT (person, day) DO UPDATE SET "
            "table_id = excluded.table_id, finished = max(finished, excluded.finished)",
            (person, day, table_id, int(finished)),
        )

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
        """Delete the abandoned tables (see :mod:`~ginenv.experiments.play.budget`); returns how many."""
        now = self.clock()
        self._swept = now
        self._write_touched()
        cutoff = time.strftime("%Y-%m-%d", time.localtime(now - ABANDONED_AFTER))
        with self.db.transaction() as db:
            old = self.budget.expired(db, now)
            db.execute("DELETE FROM daily WHERE day < ?", (cutoff,))
        for table_id in old:
            self.remove(table_id)
        return len(old)

    def _write_touched(self) -> None:
        """Write when each table in memory was last touched, where its row is behind."""
        with self._lock:
            due = [(s.touched, i) for i, s in self.loaded.items() if s.touched > s.touched_saved]
        if due:
            with self.db.transaction() as db:
                db.executemany("UPDATE tables SET touched = ? WHERE id = ?", due)
            with self._lock:
                for touched, table_id in due:
                    slot = self.loaded.get(table_id)
                    if slot is not None:
                        slot.touched_saved = max(slot.touched_saved, touched)

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
        with self.db.transaction() as db:
            for record in changes:
                text = json.dumps(record, separators=(",", ":"))
                db.execute(
                    "UPDATE tables SET record = ?, replay = ? WHERE id = ?",
                    (text, record["replay"], record["id"]),
                )
        self._write_touched()
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
        return self._count


__all__ = [
    "ABANDONED_AFTER",
    "EMPTY_AFTER",
    "FINISHED_AFTER",
    "GRACE",
    "LIVE_FOR",
    "MAX_TABLES",
    "PER_ADDRESS",
    "PER_BLOCK",
    "PER_NETWORK",
    "SEAT_STREAMS",
    "TOUCH_EVERY",
    "WATCH_STREAMS",
    "RateLimit",
    "Slot",
    "TableStore",
    "client_address",
    "seat_moves",
    "write_private",
]
