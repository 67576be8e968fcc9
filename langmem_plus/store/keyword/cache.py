"""In-memory postings cache for the keyword index: SQLite stays the truth, reads skip it.

It holds two things per namespace: the postings of the terms queries asked for (below), and,
for a small namespace searched alone, its whole index (`Resident`, patched after writes).

Reading postings through SQLite costs ~0.1 ms per term plus a Python tuple per posting, which
dominated search latency at 10k+ items. This cache holds, per namespace, the postings of the
terms queries have asked for as numpy arrays (loaded lazily, a term at a time), so a repeated
term costs a few vectorised operations. It never serves stale data: every keyword write reaches
the keyword change feed (`kw_log`, store/db/changefeed.py) in the same transaction, and `sync`
replays entries past its watermark before each search — including other processes' writes. An item that changed is dropped (its local
slot marked dead) and, if it still exists, its current postings are appended to the terms that
are cached. A compacted-past log, a reindex, too many dead slots or the memory cap simply drop
cached namespaces: they reload lazily.

Document numbers are local to a namespace and only grow, so each term's postings stay sorted
by local number (loads are sorted, appends are always the highest numbers); that lets a term
too long to score in full re-score a candidate pool with a binary search.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from langmem_plus.store.db.changefeed import KEYWORD_FEED, OP_ADD, OP_ROW, Change
from langmem_plus.store.db.database import in_chunks
from langmem_plus.store.growbuffer import GrowBuffer
from langmem_plus.store.keyword.docterms import doc_term_rows
from langmem_plus.store.keyword.patch import patched
from langmem_plus.store.keyword.resident import Resident

__all__ = ["PATCH_MIN", "PostingsCache"]

# A held `Resident` index is patched, not dropped, when a keyword change touches at most this
# many of its documents or a quarter of them (more is cheaper to read whole, on demand).
PATCH_MIN = 16
# Over the cap, the least recently used namespaces are dropped down to this many tenths of it
# (a reload costs far more than the sort that picks them).
TRIM_TO = 9


class _Term:
    __slots__ = ("local", "tf")

    def __init__(self) -> None:
        self.local = GrowBuffer(np.int32)
        self.tf = GrowBuffer(np.float32)


class _Namespace:
    """Cached postings of one namespace: local doc numbers, lengths, liveness, terms."""

    def __init__(self) -> None:
        self.item_local: dict[int, int] = {}
        self.local_item = GrowBuffer(np.int64)
        self.local_dl = GrowBuffer(np.float64)
        self.alive = GrowBuffer(np.bool_)
        self.terms: dict[str, _Term] = {}
        self.dead = 0
        self.postings = 0
        self.used = 0  # LRU stamp
        self.warmed = False  # every term loaded at once (kept current by the log since)
        self.resident: Resident | None = None  # the whole index; patched with each change
        self.pending: set[int] = set()  # items changed since it was patched (on its next use)

    def _new_locals(self, items: Sequence[int], dls: Sequence[int]) -> list[int]:
        start = self.local_item.n
        self.local_item.extend(np.asarray(items, dtype=np.int64))
        self.local_dl.extend(np.asarray(dls, dtype=np.float64))
        self.alive.extend(np.ones(len(items), dtype=np.bool_))
        out = list(range(start, start + len(items)))
        self.item_local.update(zip(items, out, strict=True))
        return out

    def drop_resident(self) -> int:
        """Forget the `Resident` index (a bulk change); returns the postings it
        counted for."""
        held = 0 if self.resident is None else self.resident.weight
        self.resident = None
        self.pending = set()
        self.postings -= held
        return held

    def hold(self, resident: Resident) -> int:
        """Hold the namespace's whole index; the per-term postings it answers for instead are
        dropped (a later per-term read, or the index's own drop, reads them again). Returns
        the change in postings held."""
        before = self.postings
        self.terms.clear()
        self.warmed = False
        self.resident = resident
        self.pending = set()
        self.postings = resident.weight
        return self.postings - before

    def drop(self, item_id: int) -> None:
        local = self.item_local.pop(item_id, None)
        if local is not None:
            self.alive.buf[local] = False
            self.dead += 1

    def load_term(self, conn: sqlite3.Connection, term: str, term_ids: Sequence[int]) -> _Term:
        """Read a term's postings from SQLite (all its ids in this namespace) into memory."""
        self.load_terms(conn, {term: list(term_ids)})
        return self.terms[term]

    def load_terms(self, conn: sqlite3.Connection, wanted: Mapping[str, Sequence[int]]) -> None:
        """Read several terms' postings in one statement (cold terms of one query)."""
        tid_term = {tid: term for term, tids in wanted.items() for tid in tids}
        rows: list[tuple[int, int, int, int]] = []
        for part, marks in in_chunks(list(tid_term)):
            rows.extend(
                conn.execute(
                    f"SELECT term_id, item_id, tf, dl FROM postings WHERE term_id IN ({marks})",
                    part,
                ).fetchall()
            )
        self._ingest(rows, tid_term)

    def load_all(self, conn: sqlite3.Connection, ns_id: int) -> None:
        """Read every term of the namespace (a small namespace's first search)."""
        tid_term = dict(conn.execute("SELECT id, term FROM terms WHERE ns_id=?", (ns_id,)))
        rows = conn.execute(
            "SELECT p.term_id, p.item_id, p.tf, p.dl FROM terms t "
            "JOIN postings p ON p.term_id = t.id WHERE t.ns_id = ?",
            (ns_id,),
        ).fetchall()
        self._ingest(rows, {tid: t for tid, t in tid_term.items() if t not in self.terms})

    def _ingest(self, rows: list[tuple[int, int, int, int]], tid_term: Mapping[int, str]) -> None:
        """Add (term id, item id, tf, dl) rows of the terms in `tid_term` (all new here)."""
        for term in tid_term.values():
            self.terms[term] = _Term()
        rows = [r for r in rows if r[0] in tid_term]
        if not rows:
            return
        arr = np.asarray(rows, dtype=np.int64)
        items = arr[:, 1].tolist()
        get = self.item_local.get
        locs = [get(i, -1) for i in items]
        fresh: dict[int, int] = {}
        for j, loc in enumerate(locs):
            if loc < 0 and items[j] not in fresh:
                fresh[items[j]] = j
        if fresh:
            new_items = list(fresh)
            assigned = self._new_locals(new_items, arr[list(fresh.values()), 3].tolist())
            got = dict(zip(new_items, assigned, strict=True))
            locs = [loc if loc >= 0 else got[items[j]] for j, loc in enumerate(locs)]
        local = np.asarray(locs, dtype=np.int32)
        # group by term: sort by (term id, local number)
        order = np.lexsort((local, arr[:, 0]))
        tid_sorted = arr[order, 0]
        bounds = np.flatnonzero(np.diff(tid_sorted)) + 1
        for chunk in np.split(order, bounds):
            t = self.terms[tid_term[int(arr[chunk[0], 0])]]
            t.local.extend(local[chunk])
            t.tf.extend(arr[chunk, 2].astype(np.float32))
        self.postings += len(rows)

    def add_items(self, docs: dict[int, list[tuple[str, int, int]]]) -> None:
        """Append current postings of (re)written items to the cached terms they contain."""
        items = list(docs)
        dls = [d[0][2] if d else 0 for d in docs.values()]
        for item_id, local in zip(items, self._new_locals(items, dls), strict=True):
            for term, tf, _dl in docs[item_id]:
                t = self.terms.get(term)
                if t is not None:
                    t.local.extend(np.asarray([local], dtype=np.int32))
                    t.tf.extend(np.asarray([tf], dtype=np.float32))
                    self.postings += 1


class PostingsCache:
    """Per-namespace in-memory postings, kept exact against SQLite through the keyword feed."""

    def __init__(self, max_postings: int = 20_000_000) -> None:
        self.max_postings = max_postings
        self._ns: dict[int, _Namespace] = {}
        self.watermark = 0
        self._clock = 0
        self._total = 0
        self._lock = threading.RLock()

    # ---------------------------------------------------------------- sync (reads)
    def sync(self, conn: sqlite3.Connection) -> None:
        """Apply keyword changes committed since the watermark, by any process; enforce the
        memory cap (here, between searches, so a search never loses its local numbers)."""
        with self._lock:
            self._trim()
            KEYWORD_FEED.sync(conn, self)

    # ChangeFeed subscriber (store/db/changefeed.py)
    def holds_nothing(self) -> bool:
        return not self._ns

    def restart(self, conn: sqlite3.Connection) -> None:
        self.clear()

    def apply(self, conn: sqlite3.Connection, changes: Sequence[Change]) -> None:
        """Drop the changed items, append the current postings of those added since; a
        bulk change or too many dead slots drop the namespace instead (it reloads lazily)."""
        last: dict[int, dict[int, int]] = {}
        for ns_id, item_id, op in changes:
            if op != OP_ROW and ns_id in self._ns:
                last.setdefault(ns_id, {})[item_id] = op
        for ns_id, items in last.items():
            cache = self._ns[ns_id]
            self._patch_resident(cache, items)
            if len(items) > max(1000, len(cache.item_local) // 5):
                self._drop_ns(ns_id)  # a bulk change: cheaper to reload lazily
                continue
            for item_id in items:
                cache.drop(item_id)
            added = [i for i, op in items.items() if op == OP_ADD]
            if added and cache.terms:
                before = cache.postings
                cache.add_items(_item_postings(conn, added))
                self._total += cache.postings - before
            if cache.dead > max(1000, cache.local_item.n // 4):
                self._drop_ns(ns_id)

    def _patch_resident(self, cache: _Namespace, items: Mapping[int, int]) -> None:
        """Note changes to a few documents of a held `Resident` index: it is patched on its
        next use (`_catch_up`), however many writes came first; a larger change drops it."""
        res = cache.resident
        if res is None:
            return
        cache.pending.update(items)
        if len(cache.pending) > max(PATCH_MIN, len(res.id_list) // 4):
            self._total -= cache.drop_resident()

    def _catch_up(self, conn: sqlite3.Connection, cache: _Namespace) -> Resident | None:
        """The held index with the changes noted since its last patch applied (the caller
        synced the change feed in this read transaction, so they are all the changes)."""
        res = cache.resident
        if res is not None and cache.pending:
            new = patched(res, conn, cache.pending)
            cache.resident, cache.pending = new, set()
            cache.postings += new.weight - res.weight
            self._total += new.weight - res.weight
            return new
        return res

    # ---------------------------------------------------------------- reads
    def term(
        self, conn: sqlite3.Connection, ns_id: int, term: str, term_ids: Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """A term's live postings in a namespace: (sorted local numbers, tf, item ids, doc
        lengths), read from SQLite on first use."""
        with self._lock:
            cache = self._ns.get(ns_id)
            if cache is None:
                cache = self._ns[ns_id] = _Namespace()
            self._clock += 1
            cache.used = self._clock
            t = cache.terms.get(term)
            if t is None:
                before = cache.postings
                t = cache.load_term(conn, term, term_ids)
                self._total += cache.postings - before
            local = t.local.view()
            tf = t.tf.view()
            if cache.dead:
                live = cache.alive.buf[local]
                if not live.all():
                    local = local[live]
                    tf = tf[live]
            return local, tf, cache.local_item.buf[local], cache.local_dl.buf[local]

    def warm(self, conn: sqlite3.Connection, ns_id: int) -> None:
        """Load a namespace's whole keyword index the first time it is searched.

        The caller decides it is small enough (`KeywordIndex.cache_warm_docs`): one read of a
        few hundred thousand postings at most, instead of a cold read per new query term.
        """
        with self._lock:
            cache = self._ns.get(ns_id)
            if cache is None:
                cache = self._ns[ns_id] = _Namespace()
            if cache.warmed:
                return
            before = cache.postings
            cache.load_all(conn, ns_id)
            cache.warmed = True
            self._total += cache.postings - before

    def prefetch(
        self, conn: sqlite3.Connection, ns_id: int, wanted: Mapping[str, Sequence[int]]
    ) -> None:
        """Load the terms of `wanted` that are not in memory yet, in one read."""
        with self._lock:
            cache = self._ns.get(ns_id)
            if cache is None:
                cache = self._ns[ns_id] = _Namespace()
            cold = {t: tids for t, tids in wanted.items() if t not in cache.terms}
            if cold:
                before = cache.postings
                cache.load_terms(conn, cold)
                self._total += cache.postings - before

    def resident(self, conn: sqlite3.Connection, ns_id: int) -> Resident:
        """A namespace's whole keyword index (`Resident`, store/keyword/resident.py), held or
        read now, patched with every change synced; it counts against the memory cap. The
        caller synced in this read transaction and decided the namespace is small."""
        with self._lock:
            cache = self._ns.get(ns_id)
            if cache is None:
                cache = self._ns[ns_id] = _Namespace()
            self._clock += 1
            cache.used = self._clock
            if cache.resident is None:
                self._total += cache.hold(Resident.load(conn, ns_id))
            got = self._catch_up(conn, cache)
            assert got is not None
            return got

    def held(self, ns_id: int) -> Resident | None:
        """The namespace's `Resident` index if one is held (`current` brings it up to date)."""
        cache = self._ns.get(ns_id)
        return None if cache is None else cache.resident

    def current(self, conn: sqlite3.Connection, ns_id: int) -> Resident | None:
        """The namespace's held `Resident` index, patched with every change synced so far."""
        with self._lock:
            cache = self._ns.get(ns_id)
            return None if cache is None else self._catch_up(conn, cache)

    def has(self, ns_id: int, term: str) -> bool:
        """Whether a term's postings are in memory for a namespace."""
        cache = self._ns.get(ns_id)
        return cache is not None and term in cache.terms

    def local_ids(self, ns_id: int, item_ids: Iterable[int]) -> np.ndarray:
        """Sorted local numbers of the given items in a namespace's cache (unknown skipped)."""
        la = self.locals_of(ns_id, list(item_ids))
        return np.sort(la[la >= 0].astype(np.int32))

    def locals_of(self, ns_id: int, item_ids: Sequence[int]) -> np.ndarray:
        """Local number of each given item in a namespace's cache, in order (-1: unknown)."""
        with self._lock:
            cache = self._ns.get(ns_id)
            if cache is None:
                return np.full(len(item_ids), -1, dtype=np.int64)
            get = cache.item_local.get
            return np.array([get(i, -1) for i in item_ids], dtype=np.int64)

    def size(self, ns_id: int) -> int:
        """Local numbers handed out in a namespace's cache (dead ones included)."""
        cache = self._ns.get(ns_id)
        return 0 if cache is None else cache.local_item.n

    def items_of(self, ns_id: int, local: np.ndarray) -> np.ndarray:
        """Item ids of local numbers."""
        return self._ns[ns_id].local_item.buf[local]

    def clear(self) -> None:
        with self._lock:
            self._ns.clear()
            self._total = 0

    def _drop_ns(self, ns_id: int) -> None:
        cache = self._ns.pop(ns_id, None)
        if cache is not None:
            self._total -= cache.postings

    @property
    def postings(self) -> int:
        """Postings held in memory (dead slots included until their namespace reloads)."""
        return self._total

    def _trim(self) -> None:
        """Drop least-recently-used namespaces while over the postings cap."""
        total = self.postings
        if total <= self.max_postings:
            return
        newest = max(self._ns.items(), key=lambda kv: kv[1].used)[0]
        for ns_id, cache in sorted(self._ns.items(), key=lambda kv: kv[1].used):
            if total <= self.max_postings * TRIM_TO // 10 or ns_id == newest:
                break
            total -= cache.postings
            self._drop_ns(ns_id)
        if total > self.max_postings and newest in self._ns:
            cache = self._ns[newest]  # one namespace alone is over the cap
            cache.terms.clear()
            cache.resident = None  # its weight is in cache.postings, zeroed below
            cache.warmed = False
            self._total -= cache.postings
            cache.postings = 0


def _item_postings(
    conn: sqlite3.Connection, item_ids: Sequence[int]
) -> dict[int, list[tuple[str, int, int]]]:
    """item id -> [(term, tf, dl)] as stored now (items deleted since are absent)."""
    out: dict[int, list[tuple[str, int, int]]] = {}
    for term, item_id, tf, dl, _tid, _df, _ns in doc_term_rows(conn, item_ids):
        out.setdefault(item_id, []).append((term, tf, dl))
    return out
