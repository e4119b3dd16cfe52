"""Where the play server keeps its tables: memory, the state folder, keys, presence, limits.

:class:`TableStore` holds every table of one ``ginenv play`` server:

- **Memory and disk.** Every change of a table is written at once to the state folder (one JSON file
  per table: :meth:`Table.to_record` and the store's keys; written atomically, a temporary file then
  ``os.replace``; files 0600 in a 0700 folder). At most ``memory_limit`` tables stay in memory; an
  idle one beyond it leaves memory and is rebuilt from its file when a seat or a spectator asks for
  it again (by replaying its moves, :meth:`Table.from_record`), and a restarted server resumes every
  table the same way. Leaving memory writes nothing: a replay (both hands at every step) is written
  only when its match ends or the server stops (:meth:`TableStore.save_all`; such a replay stays
  unlisted while its table can resume, :meth:`TableStore.in_progress_replays`), so no memory
  pressure publishes a match in progress, nor writes a second copy. A table in progress is never
  dropped: only one untouched for :data:`ABANDONED_AFTER` (7 days), or finished and untouched for
  :data:`FINISHED_AFTER`, is deleted.
- **Keys.** A computer table is reached by its id; a friend table's two seats each by their own
  token, its spectators by a watch token, and the guest's seat once through the invitation token
  (``secrets.token_urlsafe``, 192 bits). Keys are never logged; a table's public id opens nothing.
- **Presence.** A seat is connected while a push stream of it is open, or for :data:`GRACE`
  seconds after it closed or the seat was last asked for (a reload, a dropped connection).
- **The game of the day**, one per person and day: ``daily.json`` maps a person (the id in the
  page's cookie) and a date to their table and whether it is finished.
- :class:`RateLimit` bounds how many tables one client creates per minute.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ginenv.experiments.play.checks import PlayError
from ginenv.experiments.play.table import GUEST, HOST, Table
from ginenv.experiments.play.words import clip, excerpt

#: A table untouched this long (seconds) is abandoned and deleted; a finished one sooner.
ABANDONED_AFTER = 7 * 24 * 3600.0
FINISHED_AFTER = 24 * 3600.0
#: Seconds a seat still counts as connected after its last stream closed (a reload, a lost network).
GRACE = 5.0
#: Tables one server keeps at most (memory and disk together; beyond, new tables are refused).
MAX_TABLES = 5000
#: Push streams one table may have open at once (seats and spectators together).
MAX_STREAMS = 16
#: The largest table file read back.
MAX_RECORD_BYTES = 4_000_000
DAILY_FILE = "daily.json"
STORE_FORMAT = "ginenv-play-table"
_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_ROLES = ("seat0", "seat1", "invite", "watch")


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file, then ``os.replace``), mode 0600."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


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


class TableStore:
    """The tables of one server (see the module docstring). ``rebuild(record)`` turns a stored
    table record back into a :class:`Table`; ``clock`` gives the time (tests move it)."""

    def __init__(
        self,
        state_dir: Path,
        rebuild: Callable[[dict[str, Any]], Table],
        *,
        memory_limit: int = 64,
        max_tables: int = MAX_TABLES,
        clock: Callable[[], float] = time.time,
        grace: float = GRACE,
    ) -> None:
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.rebuild = rebuild
        self.memory_limit = max(1, memory_limit)
        self.max_tables = max_tables
        self.clock = clock
        self.grace = grace
        #: The tables in memory by id, least recently used first (server side only).
        self.loaded: OrderedDict[str, Slot] = OrderedDict()
        self._entries: dict[str, Entry] = {}
        self._tokens: dict[str, tuple[str, str]] = {}
        self._daily: dict[str, dict[str, dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()
        self._swept = 0.0
        #: Table files found unreadable at start (left where they are).
        self.skipped = 0
        #: Called (from any thread) with a table's id once a request changed it or a stream of it
        #: opened or closed: the server wakes that table's push streams.
        self.on_change: Callable[[str], None] | None = None
        self._scan()
        self.expire()

    # ------------------------------------------------------------------ reading the folder

    def _scan(self) -> None:
        for path in sorted(self.state_dir.glob("*.json")):
            if path.name == DAILY_FILE or not _ID.match(path.stem):
                continue
            try:
                if path.stat().st_size > MAX_RECORD_BYTES:
                    raise ValueError("too large")
                data = json.loads(path.read_text(encoding="utf-8"))
                entry = self._entry_of(data, path.stem)
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                self.skipped += 1
                continue
            self._index(entry)
        try:
            daily = json.loads((self.state_dir / DAILY_FILE).read_text(encoding="utf-8"))
            self._daily = {
                str(p): {str(d): dict(v) for d, v in days.items()}
                for p, days in daily.get("people", {}).items()
            }
        except (OSError, ValueError, TypeError, AttributeError):
            self._daily = {}

    @staticmethod
    def _entry_of(data: dict[str, Any], stem: str) -> Entry:
        if data.get("format") != STORE_FORMAT:
            raise ValueError("not a table file")
        table, keys = data["table"], data["store"]
        if table["id"] != stem:
            raise ValueError("misnamed")
        tokens = {r: str(t) for r, t in keys["tokens"].items() if r in _ROLES}
        return Entry(
            id=stem,
            kind=str(table["kind"]),
            tokens=tokens,
            invite_used=bool(keys["invite_used"]),
            person=keys.get("person"),
            daily=table.get("daily"),
            over=bool(table["over"]),
            replay=table.get("replay"),
            touched=float(keys["touched"]),
        )

    def _index(self, entry: Entry) -> None:
        self._entries[entry.id] = entry
        for role, token in entry.tokens.items():
            self._tokens[token] = (entry.id, role)

    def _path(self, table_id: str) -> Path:
        return self.state_dir / f"{table_id}.json"

    # ------------------------------------------------------------------ adding, finding, using

    def add(self, table: Table, *, person: str | None = None) -> Entry:
        """Keep a new table (written at once); a friend table gets its seat, invitation and watch
        tokens. Refuses (503) beyond :data:`MAX_TABLES` tables."""
        now = self.clock()
        if now - self._swept > 60:
            self.expire()
        with self._lock:
            if len(self._entries) >= self.max_tables:
                raise PlayError(
                    f"this server holds {len(self._entries)} tables, its limit: finish or leave one first",
                    503,
                )
            tokens = {} if table.kind == "computer" else {r: secrets.token_urlsafe(24) for r in _ROLES}
            daily = table.daily.isoformat() if table.daily else None
            entry = Entry(table.id, table.kind, tokens, person=person, daily=daily, touched=now)
            self._index(entry)
            slot = Slot(table)
            slot.seen[HOST] = now
            self.loaded[table.id] = slot
            self._trim(keep=table.id)
        if daily is not None and person is not None:
            self.set_daily(person, daily, table.id)
        with slot.lock:
            self._save(slot)
        return entry

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
                data = json.loads(self._path(table_id).read_text(encoding="utf-8"))
                table = self.rebuild(data["table"])
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

    def _trim(self, keep: str) -> None:
        """Drop idle tables from memory beyond the limit; the caller holds the lock.

        A table leaving memory is already in its state file (every change is written at once, under
        its lock) and is only forgotten here: nothing is written, least of all a replay, which
        would publish a match in progress (both hands at every step)."""
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
        """Write a table's file (the caller holds its lock) and note its state in the index."""
        table = slot.table
        with self._lock:
            entry = self._entries.get(table.id)
            if entry is None:
                return  # removed meanwhile
            entry.over = table.stage == "over"
            entry.replay = table.replay_name
            keys = {
                "tokens": dict(entry.tokens),
                "invite_used": entry.invite_used,
                "person": entry.person,
                "touched": entry.touched,
            }
            person, daily, over = entry.person, entry.daily, entry.over
        data = {"format": STORE_FORMAT, "table": table.to_record(), "store": keys}
        write_private(self._path(table.id), json.dumps(data, separators=(",", ":")))
        if over and daily is not None and person is not None:
            self.set_daily(person, daily, table.id, finished=True)

    def remove(self, table_id: str) -> None:
        """Forget a table (a computer match left with Leave) and delete its file."""
        with self._lock:
            entry = self._entries.pop(table_id, None)
            slot = self.loaded.pop(table_id, None)
            if slot is not None:
                slot.evicted = True
            if entry is not None:
                for token in entry.tokens.values():
                    self._tokens.pop(token, None)
        with contextlib.suppress(OSError):
            self._path(table_id).unlink()

    def use_invite(self, table_id: str) -> bool:
        """Mark a friend table's invitation used; False if it already was (an invitation works once)."""
        with self._lock:
            entry = self._entries[table_id]
            if entry.invite_used:
                return False
            entry.invite_used = True
            return True

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
        while it is. Refuses (429) beyond :data:`MAX_STREAMS` streams on one table."""
        while True:
            slot = self._get(table_id)
            with self._lock:
                if slot.evicted:
                    continue
                if sum(slot.streams) >= MAX_STREAMS:
                    raise PlayError(f"this table has {MAX_STREAMS} open streams, its limit", 429)
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
        with self._lock:
            days = self._daily.setdefault(person, {})
            before = days.get(day)
            days[day] = {"table": table_id, "finished": finished or bool(before and before["finished"])}
            if before == days[day]:
                return
            text = json.dumps({"people": self._daily}, separators=(",", ":"))
            write_private(self.state_dir / DAILY_FILE, text)

    def in_progress_replays(self) -> set[str]:
        """The replay files of matches still in progress (not to be shown before they end)."""
        with self._lock:
            return {e.replay for e in self._entries.values() if e.replay and not e.over}

    # ------------------------------------------------------------------ upkeep

    def expire(self) -> int:
        """Delete the abandoned tables (see the module docstring); returns how many."""
        now = self.clock()
        self._swept = now
        old = []
        with self._lock:
            for entry in self._entries.values():
                limit = FINISHED_AFTER if entry.over else ABANDONED_AFTER
                slot = self.loaded.get(entry.id)
                if now - entry.touched > limit and not (slot is not None and any(slot.streams)):
                    old.append(entry.id)
            cutoff = time.strftime("%Y-%m-%d", time.localtime(now - ABANDONED_AFTER))
            for days in self._daily.values():
                for day in [d for d in days if d < cutoff]:
                    del days[day]
        for table_id in old:
            self.remove(table_id)
        return len(old)

    def save_all(self) -> list[str]:
        """Write every table in memory and the replay of each unfinished match with a move (as the
        server stops); returns those replays' file names. A table waiting on disk is not rebuilt
        for this: its file is current, and its replay is written when its match ends."""
        saved = []
        for slot in list(self.loaded.values()):
            with slot.lock:
                if slot.evicted:
                    continue
                name = slot.table.save_replay() if slot.table.stage != "over" else None
                self._save(slot)
            if name:
                saved.append(name)
        return saved

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


__all__ = ["ABANDONED_AFTER", "FINISHED_AFTER", "GRACE", "RateLimit", "Slot", "TableStore", "write_private"]
