"""The play server's database: one SQLite file (standard library, WAL), one transaction per change.

:class:`Database` holds the tables of a ``ginenv play`` server (their records, seat tokens, who made
them), the replays of finished matches, the game of the day of each person and a ``meta`` table (the
server secret, the import mark). The store (:mod:`ginenv.experiments.play.store`) asks its questions
of the table budget (:mod:`ginenv.experiments.play.budget`) as queries on indexed columns here and
writes every change through here, each in one transaction: a replay row is written in
the transaction that marks its match over, so no crash leaves a replay of a live match, nor two.

``synchronous=NORMAL``: in WAL mode a commit is in the log, in the operating system's hands, when it
returns, so a killed server (``kill -9``, a crash) loses nothing; only a power cut or an OS crash may
roll back the last commits, whole transactions, never a part of one (a move or two made again). FULL
would add an fsync to every move. The file is 0600 in a 0700 folder (SQLite gives its ``-wal`` and
``-shm`` files the file's mode).

The ``hands`` table holds each hand a person finished against the computer (what
:mod:`ginenv.experiments.play.people` records and rates), written in the transaction of the move
that ended it.

:func:`import_folder` reads, once, a state folder of the JSON store that came before (a file per
table and ``daily.json``) and the replay folder's files, and marks the import done in ``meta``; the
table files and ``daily.json`` then move to ``imported-json/`` in the state folder.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ginenv.replay import ReplayError, parse_replay

#: The database's file name in the state folder.
DB_FILE = "tables.sqlite3"
#: Where the JSON files of the store that came before go once imported.
IMPORTED_DIR = "imported-json"
#: The largest table file or replay file imported.
MAX_IMPORT_BYTES = 5_000_000
_LEGACY_FORMAT = "ginenv-play-table"
_LEGACY_DAILY = "daily.json"
_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_REPLAY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\.json$")
ROLES = ("seat0", "seat1", "invite", "watch")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS tables (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    record TEXT NOT NULL,
    over INTEGER NOT NULL DEFAULT 0,
    joined INTEGER NOT NULL DEFAULT 1,
    moves INTEGER NOT NULL DEFAULT 0,
    replay TEXT,
    tag TEXT,
    person TEXT,
    daily TEXT,
    invite_used INTEGER NOT NULL DEFAULT 0,
    client TEXT,
    block TEXT,
    touched REAL NOT NULL,
    changed REAL NOT NULL DEFAULT 0,
    network TEXT,
    acted0 REAL NOT NULL DEFAULT 0,
    acted1 REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS seats (
    token TEXT PRIMARY KEY,
    table_id TEXT NOT NULL REFERENCES tables(id) ON DELETE CASCADE,
    role TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS seats_by_table ON seats(table_id);
CREATE TABLE IF NOT EXISTS replays (
    name TEXT PRIMARY KEY,
    table_id TEXT,
    created REAL NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS replays_by_time ON replays(created);
CREATE TABLE IF NOT EXISTS daily (
    person TEXT NOT NULL,
    day TEXT NOT NULL,
    table_id TEXT NOT NULL,
    finished INTEGER NOT NULL,
    PRIMARY KEY (person, day)
);
CREATE TABLE IF NOT EXISTS hands (
    person TEXT NOT NULL,
    opponent TEXT NOT NULL,
    preset TEXT NOT NULL,
    points INTEGER NOT NULL,
    luck REAL NOT NULL,
    finished REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS hands_by_person ON hands(person, preset);
"""

#: The schema's version (SQLite's ``user_version``): 1 had no network and no seat's last move, 2 no
#: ``hands`` (each finished hand of a person, :mod:`~ginenv.experiments.play.people`); an older file
#: is upgraded as it opens (:func:`upgrade`), a newer one refused.
SCHEMA_VERSION = 3
#: The order tables make room in (finished, then without a move, then the others): an index keeps
#: it, so the query that picks one must use this very expression.
ROOM_ORDER = "(CASE WHEN over THEN 0 WHEN moves = 0 THEN 1 ELSE 2 END)"
#: The indexes the table budget's queries use (:mod:`~ginenv.experiments.play.budget`): each share's
#: count is a range of one index, the room order another.
INDEXES = (
    "CREATE INDEX IF NOT EXISTS tables_by_client ON tables(client, over, moves, touched)",
    "CREATE INDEX IF NOT EXISTS tables_by_block ON tables(block, over, moves, touched)",
    "CREATE INDEX IF NOT EXISTS tables_by_network ON tables(network, over, moves, touched)",
    f"CREATE INDEX IF NOT EXISTS tables_by_room ON tables({ROOM_ORDER}, touched)",
    "CREATE INDEX IF NOT EXISTS tables_by_touched ON tables(touched)",
)
#: The columns of a table row the store reads without its record.
TABLE_COLUMNS = "id, kind, invite_used, person, daily, over, moves, touched"
_ADDED = {"network": "TEXT", "acted0": "REAL NOT NULL DEFAULT 0", "acted1": "REAL NOT NULL DEFAULT 0"}


def private_dir(path: Path) -> Path:
    """Create folder ``path`` 0700 if missing, and take group and other access off it if not."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        os.chmod(path, mode & 0o700)
    return path


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


class Database:
    """The SQLite file ``path`` (created 0600 with its schema). One connection, used by one thread
    at a time (:meth:`transaction` and :meth:`read` hold its lock): the server's changes are small
    and a lock is cheaper than a pool."""

    def __init__(self, path: Path, *, synchronous: str = "NORMAL") -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be NORMAL or FULL, got {synchronous!r}")
        self.path = Path(path)
        # Created 0600 before SQLite opens it: SQLite would use the umask (often 0644).
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        os.chmod(self.path, 0o600)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(f"PRAGMA synchronous={synchronous}")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.execute("PRAGMA busy_timeout=10000")
        with self.transaction() as db:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            upgrade(db)
            for statement in INDEXES:
                db.execute(statement)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """The connection inside one transaction: committed at the end, rolled back on an error."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def read(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of one query."""
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    def meta(self, key: str) -> bytes | None:
        """The value of ``key`` in the ``meta`` table, or None."""
        rows = self.read("SELECT value FROM meta WHERE key = ?", (key,))
        return None if not rows else bytes(rows[0][0])

    def secret(self) -> bytes:
        """The server secret: 32 random bytes made on first use and kept in ``meta``."""
        with self.transaction() as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'secret'").fetchone()
            if row is not None:
                return bytes(row[0])
            value = secrets.token_bytes(32)
            db.execute("INSERT INTO meta (key, value) VALUES ('secret', ?)", (value,))
            return value

    def close(self) -> None:
        """Close the connection (the WAL is folded into the file)."""
        with self._lock:
            self._conn.close()


def upgrade(db: sqlite3.Connection) -> None:
    """Bring a database of an older schema to :data:`SCHEMA_VERSION` (inside the caller's
    transaction); a database of a newer one is refused (ValueError): this code would misread it.

    Version 1 to 2: the columns ``network`` (each row's client's /16 or /48, from its address) and
    ``acted0``/``acted1`` (when each seat last moved). A table with moves counts as moved by both
    seats when it last changed, so a match played just before the upgrade stays live.

    Version 2 to 3: the table ``hands`` and its index (made by :data:`SCHEMA` as the file opens,
    before this runs), empty: hands finished before the upgrade were never recorded."""
    (version,) = db.execute("PRAGMA user_version").fetchone()
    if version > SCHEMA_VERSION:
        raise ValueError(
            f"the database's schema is version {version}, this ginenv reads up to {SCHEMA_VERSION}: "
            "run the ginenv that made it"
        )
    if version == SCHEMA_VERSION:
        return
    if version < 2:
        _upgrade_to_2(db)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _upgrade_to_2(db: sqlite3.Connection) -> None:
    """Version 1 to 2 (see :func:`upgrade`)."""
    have = {row[1] for row in db.execute("PRAGMA table_info(tables)")}
    for column, kind in _ADDED.items():
        if column not in have:
            db.execute(f"ALTER TABLE tables ADD COLUMN {column} {kind}")
    rows = db.execute("SELECT id, client FROM tables WHERE client IS NOT NULL AND network IS NULL").fetchall()
    db.executemany(
        "UPDATE tables SET network = ? WHERE id = ?", [(network_of(client), tid) for tid, client in rows]
    )
    db.execute("UPDATE tables SET acted0 = changed, acted1 = changed WHERE moves > 0 AND acted0 = 0")


def network_of(address: str) -> str | None:
    """The network of a normalised client address: its /16 (IPv4) or /48 (IPv6); None if it is none."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    return str(ipaddress.ip_network(f"{ip}/{16 if ip.version == 4 else 48}", strict=False))


def insert_table(db: sqlite3.Connection, row: dict[str, Any], tokens: dict[str, str]) -> None:
    """Insert (or replace) one table row and its seat tokens."""
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    db.execute(f"INSERT OR REPLACE INTO tables ({columns}) VALUES ({marks})", tuple(row.values()))
    db.executemany(
        "INSERT OR REPLACE INTO seats (token, table_id, role) VALUES (?, ?, ?)",
        [(token, row["id"], role) for role, token in tokens.items()],
    )


def table_row(record: dict[str, Any], **store: Any) -> dict[str, Any]:
    """The columns of a table row: those read from the table's record, then the store's ``store``."""
    moves = record.get("moves") or []
    return {
        "id": record["id"],
        "kind": str(record["kind"]),
        "record": json.dumps(record, separators=(",", ":")),
        "over": int(bool(record["over"])),
        "joined": int(bool(record.get("joined", True))),
        "moves": sum(1 for m in moves if isinstance(m, list) and m and m[0] in (0, 1)),
        "replay": record.get("replay"),
        "tag": record.get("tag"),
        "daily": record.get("daily"),
        **store,
    }


def import_folder(database: Database, state_dir: Path, replay_dir: Path | None) -> int:
    """Import, once, the JSON store that came before (see the module docstring); returns how many
    files were unreadable and skipped (left where they are). A replay file of a match whose table is
    still in progress is not imported: it is not a replay until its match ends."""
    if database.meta("imported") is not None:
        return 0
    skipped = 0
    tables: list[tuple[Path, dict[str, Any], dict[str, str]]] = []
    for path in sorted(state_dir.glob("*.json")):
        if path.name == _LEGACY_DAILY or not _ID.match(path.stem):
            continue
        try:
            if path.stat().st_size > MAX_IMPORT_BYTES:
                raise ValueError("too large")
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format") != _LEGACY_FORMAT or data["table"]["id"] != path.stem:
                raise ValueError("not a table file")
            keys = data["store"]
            tokens = {r: str(t) for r, t in keys["tokens"].items() if r in ROLES}
            row = table_row(
                data["table"],
                person=keys.get("person"),
                invite_used=int(bool(keys["invite_used"])),
                touched=float(keys["touched"]),
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            skipped += 1
            continue
        tables.append((path, row, tokens))
    try:
        people = json.loads((state_dir / _LEGACY_DAILY).read_text(encoding="utf-8")).get("people", {})
        daily = [
            (str(p), str(d), str(v["table"]), int(bool(v["finished"])))
            for p, days in people.items()
            for d, v in days.items()
        ]
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        daily = []
    live = [(row["replay"], row["tag"]) for _, row, _ in tables if not row["over"]]
    replays = []
    for path in sorted(replay_dir.glob("*.json")) if replay_dir is not None else []:
        if not _REPLAY_NAME.match(path.name) or any(
            path.name == name or (tag and path.name.endswith(f"-{tag}.json")) for name, tag in live
        ):
            continue
        try:
            if path.stat().st_size > MAX_IMPORT_BYTES:
                raise ValueError("too large")
            text = path.read_text(encoding="utf-8")
            parse_replay(text)
            replays.append((path.name, path.stat().st_mtime, text))
        except (OSError, ValueError, ReplayError):
            skipped += 1
    with database.transaction() as db:
        for _, row, tokens in tables:
            insert_table(db, row, tokens)
        db.executemany("INSERT OR REPLACE INTO daily VALUES (?, ?, ?, ?)", daily)
        db.executemany(
            "INSERT OR IGNORE INTO replays (name, table_id, created, data) VALUES (?, NULL, ?, ?)",
            replays,
        )
        db.execute("INSERT INTO meta (key, value) VALUES ('imported', ?)", (str(time.time()).encode(),))
    # Committed: the old files move aside (a crash before this leaves them, and they are ignored).
    moved = [path for path, _, _ in tables] + [state_dir / _LEGACY_DAILY]
    if any(p.exists() for p in moved):
        aside = private_dir(state_dir / IMPORTED_DIR)
        for path in moved:
            with contextlib.suppress(OSError):
                path.rename(aside / path.name)
    return skipped


__all__ = [
    "DB_FILE",
    "INDEXES",
    "ROLES",
    "ROOM_ORDER",
    "SCHEMA_VERSION",
    "TABLE_COLUMNS",
    "Database",
    "import_folder",
    "insert_table",
    "network_of",
    "private_dir",
    "table_row",
    "upgrade",
    "write_private",
]
