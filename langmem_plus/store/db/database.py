"""SQLite: schema, numbered migrations, pragmas and transactions. The database is the truth.

Opening: a file on read-only media (or without write permission) is opened read-only
(`mode=ro`, or `immutable=1` when a WAL database cannot create its shared-memory file there);
writes then raise `ReadOnlyStoreError`. A zero-length file is what SQLite calls an empty
database, so it opens as a new, empty store (as `touch memory.db` would suggest). A non-empty
file that is not SQLite, or a SQLite database of another application (tables but no
`schema_version`), is refused with `ValidationError` and left untouched.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from langmem_plus.errors import ReadOnlyStoreError, ValidationError
from langmem_plus.store.db.migrations import MIGRATIONS, SCHEMA_VERSION

__all__ = ["CHUNK", "NS_SEP", "SCHEMA_VERSION", "Database", "in_chunks", "ns_key"]

T = TypeVar("T")
# `namespaces.ns` holds a namespace's labels joined by this (LangGraph forbids "." in a label,
# so the join is unambiguous).
NS_SEP = "."
# Values per `IN (...)` list: well under SQLite's host-parameter limit (999 on old builds).
CHUNK = 500


def ns_key(namespace: Iterable[str]) -> str:
    """A namespace as `namespaces.ns` stores it."""
    return NS_SEP.join(namespace)


def in_chunks(values: Iterable[T], size: int = CHUNK) -> Iterator[tuple[list[T], str]]:
    """`values` in lists of at most `size`, each with its placeholders ("?,?,...") for a
    statement's `IN (...)`: one statement per list keeps every statement under the limit."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValidationError(f"size must be a positive integer, got {size!r}")
    seq = values if isinstance(values, list) else list(values)
    for i in range(0, len(seq), size):
        part = seq[i : i + size]
        yield part, ",".join("?" * len(part))


logger = logging.getLogger(__name__)
# Tables whose rows hold user text. A DELETE from any of them makes the committing write
# checkpoint the WAL (see `Database.write`). Not `terms`: an item's tokens are deleted in the
# same transaction as the item, and an overwrite (which drops old tokens) is not a deletion.
_TEXT_TABLES = (
    "items", "turns", "rolling_summaries", "session_summaries", "profiles", "symbol_index",
)  # fmt: skip
_MMAP_BYTES = 4 << 30  # an upper bound; SQLite maps only what the file holds
# How long a delete waits for other connections' readers before purging in the background,
# and how often the background retries (backing off to the maximum).
_PURGE_WAIT_MS = 200
_PURGE_RETRY_S = 0.05
_PURGE_RETRY_MAX_S = 1.0


_SQLITE_HEADER = b"SQLite format 3\x00"


def _check_file(path: Path) -> None:
    """Refuse a non-empty file that is not a SQLite database (it is never overwritten)."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(_SQLITE_HEADER))
    except FileNotFoundError:
        return
    except IsADirectoryError:
        raise ValidationError(f"{path} is a directory, not a database file") from None
    except OSError as exc:
        raise ValidationError(f"cannot read {path}: {exc.strerror or exc}") from None
    if head and head != _SQLITE_HEADER:
        raise ValidationError(
            f"{path} is not a SQLite database (its header is not 'SQLite format 3'); "
            "langmem_plus will not overwrite it. Give the path of a new or existing memory "
            "database."
        )


def _create_private(path: Path) -> None:
    """Create a new database file readable by its owner only (0600, whatever the umask), not
    through a link; SQLite gives its -wal and -shm the database file's permissions. An
    existing file is left as it is."""
    if path.exists():
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        os.close(os.open(path, flags, 0o600))
    except FileExistsError:
        if path.is_symlink() and not path.exists():
            raise ValidationError(
                f"{path} is a symbolic link to nothing; refusing to create the database "
                "through it (give the real path)"
            ) from None
        # another process created it in the meantime: open what is there
    except OSError as exc:
        raise ReadOnlyStoreError(f"cannot create {path}: {exc.strerror or exc}") from None


def _writable(path: Path) -> bool:
    """False on read-only media or without write permission on the file or its directory."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection; `immutable=1` where a WAL database cannot be read otherwise."""
    uri = "file:" + urllib.parse.quote(str(path.resolve()))
    conn = sqlite3.connect(
        uri + "?mode=ro", uri=True, check_same_thread=False, isolation_level=None, timeout=5.0
    )
    try:
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    # WAL mode needs a -shm file that read-only media cannot hold: read the file as it is,
    # which is only right when no committed change waits in the WAL.
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise ReadOnlyStoreError(
            f"{path} is on read-only media with changes still in its write-ahead log "
            f"({wal.name}); open it once where it is writable (or copy both files) to read it"
        )
    conn = sqlite3.connect(
        uri + "?immutable=1", uri=True, check_same_thread=False, isolation_level=None
    )
    conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    return conn


class Database:
    """One SQLite connection (WAL, busy_timeout 5000, synchronous NORMAL) behind a lock.

    Writes go through `write()` (BEGIN IMMEDIATE, so concurrent writers queue on the busy
    timeout instead of failing on a lock upgrade); reads through `read()`. A write that
    deleted user text checkpoints the WAL (TRUNCATE) once committed: with ``secure_delete``
    the text is then gone from the database file and from the WAL (once any other
    connection's older read ends: see `purge_wal`). `read_only`: None
    detects read-only media or permissions; True opens read-only whatever the medium.
    """

    def __init__(self, path: str | Path | None, *, read_only: bool | None = None) -> None:
        self.path = None if path is None else Path(path)
        self.read_only = False
        if self.path is None:
            if read_only:
                raise ValidationError("an in-memory database cannot be opened read-only")
        else:
            _check_file(self.path)
            exists = self.path.exists()
            self.read_only = bool(read_only) if read_only is not None else (
                exists and not _writable(self.path)
            )  # fmt: skip
            if self.read_only and not exists:
                raise ReadOnlyStoreError(f"there is no database at {self.path} to open read-only")
        self.lock = threading.RLock()
        self._writing = False  # a write transaction is open (held by the thread with `lock`)
        if self.read_only:
            assert self.path is not None
            self.conn = _connect_read_only(self.path)
        else:
            target = ":memory:" if self.path is None else str(self.path)
            if self.path is not None:
                try:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise ReadOnlyStoreError(
                        f"cannot create {self.path.parent}: {exc.strerror or exc}"
                    ) from None
                if not self.path.exists() and not os.access(self.path.parent, os.W_OK):
                    raise ReadOnlyStoreError(
                        f"cannot create {self.path}: its directory is read-only"
                    )
                _create_private(self.path)
            self.conn = sqlite3.connect(
                target, check_same_thread=False, isolation_level=None, timeout=5.0
            )
        self.conn.execute("PRAGMA busy_timeout=5000")
        if self.path is not None and not self.read_only:
            self._retry(lambda: self.conn.execute("PRAGMA journal_mode=WAL"))
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA foreign_keys=OFF")
        self.conn.execute("PRAGMA temp_store=MEMORY")
        # Deletion is real: freed pages are zeroed, so deleted text does not linger in the file.
        self.conn.execute("PRAGMA secure_delete=ON")
        self.conn.execute("PRAGMA cache_size=-262144")
        # Memory-mapped reads: postings and rows of large stores are read through the OS page
        # cache without a syscall per page (measured at 300k items: search p50 19 -> 12 ms).
        self.conn.execute(f"PRAGMA mmap_size={_MMAP_BYTES}")
        if self.read_only:
            self.conn.execute("PRAGMA query_only=ON")
        try:
            self._check_ours()
            self.migrate()
        except BaseException:
            self.conn.close()
            raise
        self._deleted_text = False
        self._closed = False
        self._purged = threading.Event()  # set while no deleted text waits in the WAL
        self._purged.set()
        self._retrier: threading.Thread | None = None
        if self.path is not None and not self.read_only:
            self._watch_deletes()

    def _watch_deletes(self) -> None:
        """Note every deleted row of a text table (TEMP triggers: this connection only, no
        schema change), so `write` can purge the WAL after the transaction commits."""

        def note() -> None:
            self._deleted_text = True

        self.conn.create_function("lmp_note_delete", 0, note)
        for table in _TEXT_TABLES:
            self.conn.execute(
                f"CREATE TEMP TRIGGER IF NOT EXISTS lmp_purge_{table} AFTER DELETE ON main.{table} "
                "BEGIN SELECT lmp_note_delete(); END"
            )

    def _check_ours(self) -> None:
        """Refuse another application's SQLite database: we would add our tables to it."""
        names = {
            r[0]
            for r in self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
            )
        }
        if names and "schema_version" not in names:
            shown = ", ".join(sorted(names)[:5])
            raise ValidationError(
                f"{self.path} is a SQLite database of another application (tables: {shown}); "
                "langmem_plus will not add its tables to it. Give a new or memory database path."
            )

    @staticmethod
    def _retry(fn, attempts: int = 50):  # type: ignore[no-untyped-def]
        """Retry an operation that SQLite rejects with SQLITE_BUSY outside busy_timeout."""
        for i in range(attempts):
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or i == attempts - 1:
                    raise
                time.sleep(0.02 * (i + 1))
        return None

    def migrate(self) -> int:
        """Apply pending numbered migrations; returns the schema version now in force."""
        if self.read_only:
            has_table = self.conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_version'"
            ).fetchone()
            row = (
                self.conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
                if has_table
                else None
            )
            current = int(row[0] or 0) if row else 0
            if current != SCHEMA_VERSION:
                raise ReadOnlyStoreError(
                    f"{self.path} has schema version {current}, this langmem_plus needs "
                    f"{SCHEMA_VERSION}; it cannot be migrated read-only. Open it once where it "
                    "is writable (or with a matching langmem-plus)."
                )
            return SCHEMA_VERSION
        with self.write() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version "
                "(version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
            )
            row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
            current = int(row[0] or 0)
            if current > SCHEMA_VERSION:
                raise RuntimeError(
                    f"database schema version {current} is newer than this langmem_plus "
                    f"({SCHEMA_VERSION}); upgrade langmem-plus to open it"
                )
            for version in range(current, SCHEMA_VERSION):
                step = MIGRATIONS[version]
                stmts = step if isinstance(step, tuple) else step.split(";")
                for stmt in stmts:
                    if callable(stmt):
                        stmt(conn)
                    elif stmt.strip():
                        conn.execute(stmt)
                conn.execute(
                    "INSERT INTO schema_version(version, applied_at) VALUES (?, ?)",
                    (version + 1, time.time()),
                )
        return SCHEMA_VERSION

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE ... COMMIT, ROLLBACK on error). A write inside
        a write (on the thread that holds it) is part of it: the outer one commits, and an
        error that leaves either rolls back both."""
        if self.read_only:
            raise ReadOnlyStoreError(
                f"{self.path} was opened read-only (read-only media or no write permission); "
                "writes are refused. Open a writable copy to change it."
            )
        with self.lock:
            if self._writing:
                yield self.conn
                return
            self._retry(lambda: self.conn.execute("BEGIN IMMEDIATE"))
            self._deleted_text = False
            self._writing = True
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            else:
                self._retry(lambda: self.conn.execute("COMMIT"))
                if self._deleted_text:
                    self.purge_wal()
            finally:
                self._writing = False

    def purge_wal(self) -> bool:
        """Copy the WAL into the database and truncate it, so deleted text leaves the disk.

        With ``secure_delete`` the database pages were already zeroed; the WAL still holds
        the old page images until a TRUNCATE checkpoint, which cannot finish while another
        connection reads a snapshot from before the delete (that reader can still see the
        text). Waits up to `_PURGE_WAIT_MS` for such a reader; if one remains, returns False
        and retries in the background (`_PURGE_RETRY_S`, backing off to `_PURGE_RETRY_MAX_S`)
        until the checkpoint succeeds or the store closes: the text is gone at most that
        long after the last such reader ends. `wait_purged` waits for it.
        """
        if self.path is None:
            return True
        with self.lock:
            self._deleted_text = False
            self._purged.clear()
            if self._checkpoint(_PURGE_WAIT_MS):
                return True
            if self._retrier is None or not self._retrier.is_alive():
                self._retrier = threading.Thread(
                    target=self._retry_purge, name="langmem-plus-wal-purge", daemon=True
                )
                self._retrier.start()
        logger.warning(
            "the WAL still holds deleted text: another connection is reading; it is purged "
            "once that read ends"
        )
        return False

    def _checkpoint(self, wait_ms: int) -> bool:
        """One TRUNCATE checkpoint, waiting at most `wait_ms` for readers (under the lock)."""
        try:
            self.conn.execute(f"PRAGMA busy_timeout={int(wait_ms)}")
            try:
                busy = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            finally:
                self.conn.execute("PRAGMA busy_timeout=5000")
        except sqlite3.Error as exc:  # never fail a committed delete
            logger.warning("could not checkpoint the WAL after a delete: %s", exc)
            return False
        if not busy:
            self._purged.set()
        return not busy

    def _retry_purge(self) -> None:
        """Retry the purge until it succeeds or the store closes (the retrier thread)."""
        delay = _PURGE_RETRY_S
        while not self._purged.wait(delay):
            with self.lock:
                if self._closed or self._checkpoint(0):
                    return
            delay = min(delay * 2, _PURGE_RETRY_MAX_S)

    @property
    def purge_pending(self) -> bool:
        """True while deleted text may still be in the WAL (a reader kept the purge waiting)."""
        return not self._purged.is_set()

    def wait_purged(self, timeout: float | None = None) -> bool:
        """Wait until this connection has no WAL purge pending (done, or the store closed);
        False if `timeout` passed first."""
        return self._purged.wait(timeout)

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A consistent read snapshot (a deferred transaction)."""
        with self.lock:
            if self.conn.in_transaction:
                yield self.conn
                return
            self.conn.execute("BEGIN")
            try:
                yield self.conn
            finally:
                self.conn.execute("COMMIT")

    def get_meta(self, key: str) -> str | None:
        with self.lock:
            row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, conn: sqlite3.Connection, key: str, value: str) -> None:
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )

    def close(self) -> None:
        """Close the connection (a pending WAL purge is tried once more first)."""
        with self.lock:
            if self._closed:
                return
            if self.purge_pending:
                self._checkpoint(0)
            self._closed = True
            self._purged.set()  # nothing more will be purged from this connection
            self.conn.close()
