"""The change feeds that keep in-memory structures exact against SQLite, written once.

SQLite is the truth; the postings cache, the row cache and the FAISS indexes are derived from
it. Every write that changes what they hold appends (ns_id, ref, op) to a change log table in
its own transaction (`kw_log`: ref is an item id; `vec_log`: a vector id; migration 006's
triggers log every other UPDATE or DELETE of `items` to `kw_log` as op 3). A structure
subscribes to a feed: it keeps a watermark (the last sequence number it reflects) and, before
each use, `ChangeFeed.sync` hands it the entries past that watermark, by any process. When it
cannot tell what changed (a log compacted past its watermark, a database replaced under it, or
a reset entry: a reindex) it is told to restart instead (drop or rebuild what it holds).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Protocol

__all__ = [
    "KEYWORD_FEED",
    "OP_ADD",
    "OP_REMOVE",
    "OP_RESET",
    "OP_ROW",
    "VECTOR_FEED",
    "Change",
    "ChangeFeed",
    "Subscriber",
    "heads",
]

# Ops. OP_REMOVE / OP_ADD: an item's postings (kw_log) or a vector (vec_log) removed / added;
# OP_RESET: everything was rebuilt (every subscriber restarts); OP_ROW: an item's row changed
# or was deleted (kw_log only, written by migration 006's triggers; postings unaffected).
OP_REMOVE, OP_ADD, OP_RESET, OP_ROW = 0, 1, 2, 3

Change = tuple[int, int, int]  # (ns_id, ref, op), in log order


class Subscriber(Protocol):
    """A structure derived from SQLite that replays one feed (see the module docstring)."""

    watermark: int

    def holds_nothing(self) -> bool:
        """True when there is nothing to update: the entries need not be read."""
        ...

    def restart(self, conn: sqlite3.Connection) -> None:
        """Drop (or rebuild from SQLite) everything held: what changed is unknown."""
        ...

    def apply(self, conn: sqlite3.Connection, changes: Sequence[Change]) -> None:
        """Bring what is held up to date with these entries (in log order)."""
        ...


class ChangeFeed:
    """One change log table: appended to by writers, replayed by subscribers."""

    def __init__(self, table: str, ref: str) -> None:
        self.table = table
        self.ref = ref
        # connection id -> the head read once for a read transaction (`pinned`)
        self._pinned: dict[int, int] = {}
        # connection id -> (watermark, head, entries) last read within its pinned transaction:
        # subscribers at the same watermark (the postings cache, the row cache) read it once
        self._read: dict[int, tuple[int, int, list[tuple[int, int, int, int]]]] = {}

    # ---------------------------------------------------------------- writers
    def append(self, conn: sqlite3.Connection, changes: Iterable[Change]) -> None:
        """Record changes as (ns_id, ref, op) in the caller's transaction, in one statement."""
        rows = [[int(ns_id), int(ref), int(op)] for ns_id, ref, op in changes]
        if len(rows) == 1:
            conn.execute(
                f"INSERT INTO {self.table}(ns_id, {self.ref}, op) VALUES (?, ?, ?)", rows[0]
            )
        elif rows:  # in the given order: their sequence numbers keep it
            conn.execute(
                f"INSERT INTO {self.table}(ns_id, {self.ref}, op) SELECT json_extract(value, "
                "'$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') "
                "FROM json_each(?) ORDER BY key",
                (json.dumps(rows),),
            )

    def reset(self, conn: sqlite3.Connection) -> None:
        """Record, in the caller's transaction, that everything was rebuilt: the older
        entries are dropped and every subscriber (and snapshot) behind it restarts."""
        conn.execute(f"DELETE FROM {self.table}")
        self.append(conn, [(0, 0, OP_RESET)])

    def pin(self, conn: sqlite3.Connection, head: int) -> bool:
        """Within a read transaction (nothing can move the head it sees): `head` (read with
        the other feeds' by `heads`) answers for every subscriber syncing on `conn` until
        `unpin`. False when already pinned (by an outer reader, who unpins)."""
        key = id(conn)
        if key in self._pinned:
            return False
        self._pinned[key] = head
        return True

    def unpin(self, conn: sqlite3.Connection) -> None:
        self._pinned.pop(id(conn), None)
        self._read.pop(id(conn), None)

    def head(self, conn: sqlite3.Connection) -> int:
        """The newest sequence number the log ever gave out, even if compaction emptied it."""
        got = self._pinned.get(id(conn))
        return self._read_head(conn) if got is None else got

    def _read_head(self, conn: sqlite3.Connection) -> int:
        row = conn.execute(
            "SELECT seq FROM sqlite_sequence WHERE name = ?", (self.table,)
        ).fetchone()
        return 0 if row is None else int(row[0])

    def size(self, conn: sqlite3.Connection) -> int:
        """Entries the log holds now."""
        return int(conn.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0])

    def drop_through(self, conn: sqlite3.Connection, seq: int) -> None:
        """Delete the entries up to `seq`: subscribers behind it restart on their next sync."""
        conn.execute(f"DELETE FROM {self.table} WHERE seq <= ?", (seq,))

    def keep_newest(self, conn: sqlite3.Connection, keep: int) -> None:
        """Keep only the newest `keep` entries."""
        self.drop_through(conn, self.head(conn) - keep)

    def reaches_back_to(self, conn: sqlite3.Connection, watermark: int) -> bool:
        """Whether every entry past `watermark` is still in the log (a state at that
        watermark can be brought up to date by replaying it)."""
        head = self.head(conn)
        if head < watermark:
            return False  # another database's watermark
        if head == watermark:
            return True
        first = conn.execute(
            f"SELECT MIN(seq) FROM {self.table} WHERE seq > ?", (watermark,)
        ).fetchone()[0]
        return first is not None and first == watermark + 1

    # ---------------------------------------------------------------- subscribers
    def sync(self, conn: sqlite3.Connection, sub: Subscriber) -> None:
        """Hand `sub` the entries committed past its watermark (by any process), or restart
        it when they cannot be told; its watermark is then the log's head. The caller holds
        the subscriber's lock and a read transaction."""
        head = self.head(conn)
        if head == sub.watermark:
            return
        entries = (
            []
            if sub.holds_nothing() or head < sub.watermark
            else self._entries(conn, sub.watermark, head)
        )
        # every entry past the watermark must still be there (none compacted away)
        if not entries or entries[0][0] != sub.watermark + 1:
            sub.restart(conn)
            sub.watermark = head
            return
        changes: list[Change] = [(ns_id, ref, op) for _seq, ns_id, ref, op in entries]
        if any(c[2] == OP_RESET for c in changes):
            sub.restart(conn)
        else:
            sub.apply(conn, changes)
        sub.watermark = head

    def _entries(
        self, conn: sqlite3.Connection, watermark: int, head: int
    ) -> list[tuple[int, int, int, int]]:
        """(seq, ns_id, ref, op) of the entries past `watermark` up to `head`, in order; read
        once per pinned transaction for every subscriber at that watermark."""
        key = id(conn)
        got = self._read.get(key)
        if got is not None and got[:2] == (watermark, head):
            return got[2]
        rows: list[tuple[int, int, int, int]] = conn.execute(
            f"SELECT seq, ns_id, {self.ref}, op FROM {self.table} WHERE seq > ? AND seq <= ? "
            "ORDER BY seq",
            (watermark, head),
        ).fetchall()
        if key in self._pinned:
            self._read[key] = (watermark, head, rows)
        return rows


def heads(conn: sqlite3.Connection, feeds: Sequence[ChangeFeed]) -> list[int]:
    """The heads of several feeds (`ChangeFeed.head`), in one statement."""
    names = [f.table for f in feeds]
    marks = ",".join("?" * len(names))
    got = dict(
        conn.execute(f"SELECT name, seq FROM sqlite_sequence WHERE name IN ({marks})", names)
    )
    return [int(got.get(n, 0)) for n in names]


KEYWORD_FEED = ChangeFeed("kw_log", "item_id")
VECTOR_FEED = ChangeFeed("vec_log", "vec_id")
