"""In-memory cache of the light item rows that ranking reads for every candidate.

Every search reads, for its ~300 candidates, the columns the spec score needs (timestamps,
access count, TTL, confidence, category, session): ~0.6-0.9 ms at 10k items on the test
machine, most of it SQLite's per-row work. This cache keeps those rows as tuples, keyed by item
id. It never serves a stale row: it subscribes to the keyword change feed (store/changefeed.py),
which every change to an existing item reaches in the same transaction, and `sync` drops the
rows of logged items before each use — including other processes' writes. New items need no
entry: their ids were never cached. A feed it cannot follow, or the size cap, clears it.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langmem_plus.store.changefeed import KEYWORD_FEED, Change

__all__ = ["RowCache"]

Fetch = Callable[[sqlite3.Connection, list[int]], dict[int, Any]]


class RowCache:
    """item id -> light row, kept exact through the keyword feed (see the module docstring)."""

    def __init__(self, max_rows: int = 250_000) -> None:
        self.max_rows = max_rows
        self.rows: dict[int, Any] = {}
        self.watermark = 0
        self.warmed: set[int] = set()  # namespaces loaded whole
        self._lock = threading.RLock()

    def clear(self) -> None:
        with self._lock:
            self.rows.clear()
            self.warmed.clear()

    def sync(self, conn: sqlite3.Connection) -> None:
        """Drop the rows of items changed since the watermark (any process, any writer)."""
        with self._lock:
            KEYWORD_FEED.sync(conn, self)

    # ChangeFeed subscriber (store/changefeed.py)
    def holds_nothing(self) -> bool:
        return not self.rows

    def restart(self, conn: sqlite3.Connection) -> None:
        self.clear()

    def apply(self, conn: sqlite3.Connection, changes: Sequence[Change]) -> None:
        for _ns_id, item_id, _op in changes:
            self.rows.pop(item_id, None)

    def get(self, conn: sqlite3.Connection, ids: Iterable[int], fetch: Fetch) -> dict[int, Any]:
        """Rows of `ids` (those that exist): held ones from memory, the rest through `fetch`,
        which reads them from SQLite (and they are kept). Call `sync` first, in the same read
        transaction."""
        with self._lock:
            rows = self.rows
            out: dict[int, Any] = {}
            missing: list[int] = []
            for i in ids:
                r = rows.get(i)
                if r is None:
                    missing.append(i)
                else:
                    out[i] = r
            if missing:
                got = fetch(conn, missing)
                out.update(got)
                if len(rows) + len(got) > self.max_rows:
                    self.clear()
                rows.update(got)
            return out

    def warm(self, conn: sqlite3.Connection, ns_ids: Sequence[int], fetch_ns: Fetch) -> None:
        """Load every row of these namespaces once (`fetch_ns` reads a namespace list)."""
        with self._lock:
            todo = [n for n in ns_ids if n not in self.warmed]
            if not todo:
                return
            got = fetch_ns(conn, todo)
            self.warmed.update(todo)  # tried: even when it does not fit, not again
            if len(self.rows) + len(got) <= self.max_rows:
                self.rows.update(got)
