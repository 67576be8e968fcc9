"""In-memory cache of the light item rows that ranking reads for every candidate.

Every search reads, for its ~300 candidates, the columns the spec score needs (timestamps,
access count, TTL, confidence, category, session): ~0.6-0.9 ms at 10k items on the test
machine, most of it SQLite's per-row work. This cache keeps those rows as tuples, keyed by item
id. It never serves a stale row: it subscribes to the keyword change feed (store/db/changefeed.py),
which every change to an existing item reaches in the same transaction, and `sync` drops the
rows of logged items before each use — including other processes' writes. New items need no
entry: their ids were never cached. A feed it cannot follow clears it; past its size cap the
rows of the namespaces loaded whole and searched longest ago are dropped first (everything only
when that does not make room).

A namespace the keyword index ranks from memory whole (`KeywordIndex.serves_resident`) is
loaded whole with its full rows (namespace, key, value): the winners of a search are then read
from here too. Every change to an item's value also sets a logged column (its update time), so the
same feed keeps them exact. A full row counts as 1 + len(value) // 300 rows against the cap.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langmem_plus.store.db.changefeed import KEYWORD_FEED, Change

__all__ = ["RowCache"]

Fetch = Callable[[sqlite3.Connection, list[int]], dict[int, Any]]


class RowCache:
    """item id -> row (light, or full for the namespaces loaded whole), kept exact through the
    keyword feed (see the module docstring)."""

    def __init__(self, max_rows: int = 250_000) -> None:
        self.max_rows = max_rows
        self.rows: dict[int, Any] = {}
        self.full = 0  # rows held with their values
        self.weight = 0  # rows held, a full row counting as 1 + len(value) // 300
        self.watermark = 0
        # namespaces loaded whole, least recently used first
        self.warmed: dict[int, None] = {}
        self._ns_rows: dict[int, list[int]] = {}  # the ids each one's load brought
        self._lock = threading.RLock()

    def clear(self) -> None:
        with self._lock:
            self.rows.clear()
            self.warmed.clear()
            self._ns_rows.clear()
            self.full = self.weight = 0

    def sync(self, conn: sqlite3.Connection) -> None:
        """Drop the rows of items changed since the watermark (any process, any writer)."""
        with self._lock:
            KEYWORD_FEED.sync(conn, self)

    # ChangeFeed subscriber (store/db/changefeed.py)
    def holds_nothing(self) -> bool:
        return not self.rows

    def restart(self, conn: sqlite3.Connection) -> None:
        self.clear()

    def apply(self, conn: sqlite3.Connection, changes: Sequence[Change]) -> None:
        rows = self.rows
        for _ns_id, item_id, _op in changes:
            row = rows.pop(item_id, None)
            if row is not None:
                self.weight -= _weight(row)
                self.full -= row.value is not None

    def get(self, conn: sqlite3.Connection, ids: Iterable[int], fetch: Fetch) -> dict[int, Any]:
        """Rows of `ids` (those that exist) with at least their ranking columns: held ones
        from memory (full where held so), the rest through `fetch`, which reads them from
        SQLite (and they are kept). Call `sync` first, in the same read transaction."""
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
                self._keep(got)
            return out

    def get_full(self, ids: Iterable[int]) -> tuple[dict[int, Any], list[int]]:
        """The full rows of `ids` held, and the ids not held so (call `sync` first, in the
        same read transaction)."""
        with self._lock:
            rows = self.rows
            out: dict[int, Any] = {}
            missing: list[int] = []
            for i in ids:
                r = rows.get(i)
                if r is None or r.value is None:
                    missing.append(i)
                else:
                    out[i] = r
            return out, missing

    def warm(self, conn: sqlite3.Connection, ns_ids: Sequence[int], fetch_ns: Fetch) -> None:
        """Load every full row of these namespaces once (`fetch_ns` reads a namespace list;
        they replace light rows held before)."""
        with self._lock:
            warmed = self.warmed
            for n in ns_ids:  # used now: last to be dropped for room
                if n in warmed:
                    warmed[n] = warmed.pop(n)
            for n in [n for n in ns_ids if n not in warmed]:
                got = fetch_ns(conn, [n])
                warmed[n] = None  # tried: even when it does not fit, not again until dropped
                weights = list(map(_weight, got.values()))
                if self._make_room(sum(weights), keep=ns_ids):
                    self._keep(got, weights)
                    self._ns_rows[n] = list(got)

    def _make_room(self, needed: int, keep: Sequence[int] = ()) -> bool:
        """Drop the least recently used namespaces' rows (not those of `keep`) until `needed`
        more fit under the cap; False when they cannot."""
        if needed > self.max_rows:
            return False
        for n in list(self.warmed):
            if self.weight + needed <= self.max_rows:
                break
            if n in keep:
                continue
            del self.warmed[n]
            for i in self._ns_rows.pop(n, ()):
                row = self.rows.pop(i, None)
                if row is not None:
                    self.weight -= _weight(row)
                    self.full -= row.value is not None
        return self.weight + needed <= self.max_rows

    def _keep(self, got: dict[int, Any], weights: list[int] | None = None) -> None:
        """Hold these rows (over the cap: the least recently used namespaces' rows are dropped
        first, everything when that is not enough); `weights`: theirs."""
        rows = self.rows
        if weights is None:
            weights = list(map(_weight, got.values()))
        if not self._make_room(sum(weights)):
            self.clear()
        for (i, r), w in zip(got.items(), weights, strict=True):
            old = rows.get(i)
            if old is not None:
                self.weight -= _weight(old)
                self.full -= old.value is not None
            rows[i] = r
            self.weight += w
            self.full += r.value is not None


def _weight(row: Any) -> int:
    """A row against the cap, in rows of ~300 bytes (a light row: 1)."""
    return 1 if row.value is None else 1 + len(row.value) // 300
