"""In-memory cache of the light item rows that ranking reads for every candidate.

Every search reads, for its ~300 candidates, the columns the spec score needs (timestamps,
access count, TTL, confidence, category, session): ~0.6-0.9 ms at 10k items on the test
machine, most of it SQLite's per-row work. This cache keeps those rows as tuples, keyed by item
id. It never serves a stale row: it subscribes to the keyword change feed (store/changefeed.py),
which every change to an existing item reaches in the same transaction, and `sync` drops the
rows of logged items before each use — including other processes' writes. New items need no
entry: their ids were never cached. A feed it cannot follow, or the size cap, clears it.

A namespace small enough to be ranked from memory whole (the keyword index's resident size) is
loaded with its full rows (namespace, key, value): the winners of a search are then read from
here too. Every change to an item's value also sets a logged column (its update time), so the
same feed keeps them exact. A full row counts as 1 + len(value) // 300 rows against the cap.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langmem_plus.store.changefeed import KEYWORD_FEED, Change
from langmem_plus.store.rows import CandidateRow

__all__ = ["RowCache"]

Fetch = Callable[[sqlite3.Connection, list[int]], dict[int, Any]]


class RowCache:
    """item id -> light row (and full row, for small namespaces loaded whole), kept exact
    through the keyword feed (see the module docstring)."""

    def __init__(self, max_rows: int = 250_000) -> None:
        self.max_rows = max_rows
        self.rows: dict[int, Any] = {}
        self.full: dict[int, Any] = {}  # full rows of namespaces loaded with their values
        self.weight = 0  # rows held, a full row counting as 1 + len(value) // 300
        self.watermark = 0
        self.warmed: set[int] = set()  # namespaces loaded whole
        self._lock = threading.RLock()

    def clear(self) -> None:
        with self._lock:
            self.rows.clear()
            self.full.clear()
            self.warmed.clear()
            self.weight = 0

    def sync(self, conn: sqlite3.Connection) -> None:
        """Drop the rows of items changed since the watermark (any process, any writer)."""
        with self._lock:
            KEYWORD_FEED.sync(conn, self)

    # ChangeFeed subscriber (store/changefeed.py)
    def holds_nothing(self) -> bool:
        return not self.rows and not self.full

    def restart(self, conn: sqlite3.Connection) -> None:
        self.clear()

    def apply(self, conn: sqlite3.Connection, changes: Sequence[Change]) -> None:
        rows, full = self.rows, self.full
        for _ns_id, item_id, _op in changes:
            if rows.pop(item_id, None) is not None:
                self.weight -= 1
            row = full.pop(item_id, None)
            if row is not None:
                self.weight -= _value_weight(row)

    def get(self, conn: sqlite3.Connection, ids: Iterable[int], fetch: Fetch) -> dict[int, Any]:
        """Light rows of `ids` (those that exist): held ones from memory, the rest through
        `fetch`, which reads them from SQLite (and they are kept). Call `sync` first, in the
        same read transaction."""
        with self._lock:
            rows = self.rows
            ids = ids if isinstance(ids, (list, tuple)) else list(ids)
            held = list(map(rows.get, ids))
            if None not in held:  # every row held (a warm namespace): one C-level pass
                return dict(zip(ids, held, strict=True))
            out = {i: r for i, r in zip(ids, held, strict=True) if r is not None}
            missing = [i for i, r in zip(ids, held, strict=True) if r is None]
            if missing:
                got = fetch(conn, missing)
                out.update(got)
                if self.weight + len(got) > self.max_rows:
                    self.clear()
                fresh = [i for i in got if i not in rows]
                rows.update(got)
                self.weight += len(fresh)
            return out

    def get_full(self, ids: Iterable[int]) -> tuple[dict[int, Any], list[int]]:
        """The full rows of `ids` held, and the ids not held (call `sync` first, in the same
        read transaction)."""
        with self._lock:
            full = self.full
            out: dict[int, Any] = {}
            missing: list[int] = []
            for i in ids:
                r = full.get(i)
                if r is None:
                    missing.append(i)
                else:
                    out[i] = r
            return out, missing

    def warm(
        self,
        conn: sqlite3.Connection,
        ns_ids: Sequence[int],
        fetch_ns: Fetch,
        with_values: bool = False,
    ) -> None:
        """Load every row of these namespaces once (`fetch_ns` reads a namespace list: light
        rows, or full rows `with_values`, which are kept as both)."""
        with self._lock:
            todo = [n for n in ns_ids if n not in self.warmed]
            if not todo:
                return
            got = fetch_ns(conn, todo)
            self.warmed.update(todo)  # tried: even when it does not fit, not again
            if with_values:
                added = sum(map(_value_weight, got.values()))
                if self.weight + len(got) + added > self.max_rows:
                    return
                self.full.update(got)
                got = {i: CandidateRow(i, None, None, None, *r[4:]) for i, r in got.items()}
                self.weight += added
            if self.weight + len(got) <= self.max_rows:
                fresh = [i for i in got if i not in self.rows]
                self.rows.update(got)
                self.weight += len(fresh)


def _value_weight(row: Any) -> int:
    """What a full row adds to a light one against the cap, in rows of ~300 bytes."""
    return 1 + len(row.value) // 300
