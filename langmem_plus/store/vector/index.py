"""FAISS vector index per namespace, derived from the `vectors` table and kept in sync.

Vectors are stored in SQLite as the truth, compactly: per-vector symmetric int8 with a float32
scale (516 bytes at 512-d; `MemoryConfig.store.vector_storage="float16"` writes the older 2-bytes-per-
dimension form, which is still read). Every vector write also reaches the vector change feed
(`vec_log`, store/db/changefeed.py); an index applies its entries past its watermark before each
use, so a second process writing the same file, or a crash between SQLite and FAISS, never
serves a stale answer. In memory, exact namespaces hold float16 unit vectors and large ones an
HNSW graph over float16 vectors (store/vector/faissns.py). A snapshot file (the serialised FAISS indexes
as signed plain arrays, see `store/vector/snapshot.py`) speeds up opening a large store; small stores rebuild
from SQLite instead (see `VectorIndex.save`), and a missing or out-of-date snapshot is rebuilt
from SQLite.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from operator import itemgetter
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from langmem_plus.store.db.changefeed import OP_ADD, VECTOR_FEED, Change
from langmem_plus.store.db.database import in_chunks
from langmem_plus.store.growbuffer import GrowBuffer
from langmem_plus.store.vector.codec import VectorStorage, decode_vec, decode_vecs, encode_vec
from langmem_plus.store.vector.faissns import (
    ExactCosines,
    NsIndex,
    hnsw_index,
    is_approximate,
    normalise,
    one_exact,
    search_one,
    unit_query,
)
from langmem_plus.store.vector.snapshot import (
    SnapshotError,
    read_snapshot,
    remove_stale_temp_files,
    snapshot_key,
    snapshot_size_limit,
    write_snapshot,
)
from langmem_plus.store.vector.workers import worker_pool

__all__ = [
    "ExactCosines",
    "VectorIndex",
    "VectorStorage",
    "decode_vec",
    "decode_vecs",
    "encode_vec",
]

logger = logging.getLogger(__name__)

# 2: exact indexes hold float16 (IndexScalarQuantizer); 3: a signed .npz, never a pickle;
# 4: large namespaces are HNSW graphs (no longer IVF); 5: snapshot.py's own container,
# verified before it is parsed
_SNAPSHOT_FORMAT = 5
# An HNSW namespace's graph is rebuilt without its removed vectors once they are this share of it
_DEAD_SHARE = 0.2


# Fewer vectors than this are scanned inline even with `scan_in_background` (a thread hand-off
# costs about as much as a small scan).
_BACKGROUND_MIN = 2_000
# A query's later cosine lookups (the keyword candidates the best k missed) scan one exact
# namespace of up to this many times k vectors (and at most `_WHOLE_SCAN_MAX`) whole, once
# (`ExactCosines`): up to there a plain scan costs less than the selected one it replaces,
# past it the map of every vector's item costs more (measured in docs/benchmarks.md).
_WHOLE_SCAN = 3
_WHOLE_SCAN_MAX = 300
_SIM = itemgetter(1)  # a (item id, cosine) hit's cosine


def _items_of_vectors(
    conn: sqlite3.Connection, hits: Sequence[tuple[int, float]]
) -> list[tuple[int, float]]:
    """(item id, cosine) of (vector id, cosine) hits, through the vectors table."""
    owner: dict[int, int] = {}
    for part, marks in in_chunks(dict(hits)):
        owner.update(conn.execute(f"SELECT id, item_id FROM vectors WHERE id IN ({marks})", part))
    return [(owner[v], s) for v, s in hits if v in owner]


class VectorIndex:
    """Per-namespace FAISS indexes over the `vectors` table, synced through the vector feed."""

    def __init__(
        self,
        dims: int,
        snapshot_path: Path | None = None,
        ann_threshold: int = 50_000,
        ef_search: int = 512,
        snapshot_min_vectors: int = 0,
        *,
        scan_in_background: bool = False,
    ) -> None:
        """`scan_in_background`: large scans of `begin_search_items` run on a worker thread
        (`StoreTuning.vector_search_thread`)."""
        self.dims = dims
        self._background = scan_in_background
        self.snapshot_path = snapshot_path
        self.snapshot_min_vectors = snapshot_min_vectors
        self.ann_threshold = ann_threshold
        self.ef_search = ef_search
        self._ns: dict[int, NsIndex] = {}
        self._vec_ns: dict[int, int] = {}
        self.watermark = 0
        self._lock = threading.RLock()
        self.rebuilt = False
        self._key: bytes | None = None

    # -------------------------------------------------------------- load / save
    def open(self, conn: sqlite3.Connection, model_name: str) -> None:
        """Load the snapshot if it verifies and matches the database, else rebuild from SQLite.

        The snapshot is only a cache: a file that is unsigned, foreign, of another format or
        model, or older than the change log still holds, is ignored (see `store/vector/snapshot.py`).
        """
        self._key = snapshot_key(conn, create=False)
        if self.snapshot_path is not None:
            removed = remove_stale_temp_files(self.snapshot_path)
            if removed:
                logger.info("removed %d snapshot temp file(s) of dead writers", removed)
        if self.snapshot_path is not None and self.snapshot_path.exists() and self._key:
            try:
                if self._load_snapshot(conn, model_name):
                    self.sync(conn)
                    return
                logger.info("vector snapshot out of date; rebuilding from the database")
            except (SnapshotError, RuntimeError, KeyError, TypeError, ValueError) as exc:
                logger.warning("vector snapshot not used (%s); rebuilding", exc)
        self.rebuild(conn)

    def _load_snapshot(self, conn: sqlite3.Connection, model_name: str) -> bool:
        assert self.snapshot_path is not None and self._key is not None
        limit = snapshot_size_limit(conn, self.dims)
        header, arrays = read_snapshot(self.snapshot_path, self._key, max_bytes=limit)
        if (
            header.get("format") != _SNAPSHOT_FORMAT
            or header.get("model") != model_name
            or header.get("dims") != self.dims
        ):
            return False
        watermark = int(header["watermark"])
        if not VECTOR_FEED.reaches_back_to(conn, watermark):
            return False  # another database's, or the log no longer reaches back to it
        indexes: dict[int, NsIndex] = {}
        for ns_id in header["ns_ids"]:
            idx = NsIndex(self.dims)
            idx.index = faiss.deserialize_index(arrays[f"index_{int(ns_id)}"])
            idx.approximate = is_approximate(idx.index)
            idx.items = None  # read from SQLite when first needed
            indexes[int(ns_id)] = idx
        vec_ids, vec_nss = arrays["vec_ids"], arrays["vec_nss"]
        for ns_id, idx in indexes.items():
            if idx.approximate:  # the graph's vectors that the namespace no longer holds
                held = faiss.vector_to_array(idx.index.id_map)
                live = vec_ids[vec_nss == ns_id]
                idx.mark_dead(held[~np.isin(held, live)].tolist())
                self._set_ef(idx)
        with self._lock:
            self._ns = indexes
            self._vec_ns = dict(zip(vec_ids.tolist(), vec_nss.tolist(), strict=True))
            self.watermark = watermark
        return True

    def wants_snapshot(self) -> bool:
        """Whether a snapshot pays: at least `snapshot_min_vectors` vectors, or an HNSW graph.

        A flat index rebuilds from SQLite about as fast as a float32 snapshot loads (both
        linear in the vectors), and the snapshot file costs 4 bytes per dimension on disk,
        several times the int8 vectors themselves; an HNSW graph takes far longer to build
        than to load, so its snapshot always pays.
        """
        with self._lock:
            return self.count() >= self.snapshot_min_vectors or any(
                i.approximate for i in self._ns.values()
            )

    def save(self) -> bool:
        """Write the snapshot atomically (temp file + rename) if it pays; True when written.

        Below `snapshot_min_vectors` (and with no HNSW graph) no snapshot is written and a
        stale one is removed: the next open rebuilds from SQLite.
        """
        if self.snapshot_path is None:
            return False
        if not self.wants_snapshot():
            self.snapshot_path.unlink(missing_ok=True)
            return False
        if self._key is None:
            return False  # a database without a snapshot key (opened read-only, say)
        with self._lock:
            header = {
                "format": _SNAPSHOT_FORMAT,
                "model": self.model_name,
                "dims": self.dims,
                "watermark": self.watermark,
                "ns_ids": sorted(self._ns),
            }
            arrays: dict[str, np.ndarray] = {
                "vec_ids": np.fromiter(self._vec_ns.keys(), np.int64, len(self._vec_ns)),
                "vec_nss": np.fromiter(self._vec_ns.values(), np.int64, len(self._vec_ns)),
                **{
                    f"index_{ns_id}": faiss.serialize_index(idx.index)
                    for ns_id, idx in self._ns.items()
                },
            }
        write_snapshot(self.snapshot_path, self._key, header, arrays)
        return True

    model_name: str = ""

    def rebuild(self, conn: sqlite3.Connection) -> None:
        """Drop every FAISS index and rebuild them from the vectors table."""
        with self._lock:
            self._ns = {}
            self._vec_ns = {}
            wm = VECTOR_FEED.head(conn)
            cur = conn.execute("SELECT id, ns_id, vec, item_id FROM vectors ORDER BY ns_id, id")
            while True:
                rows = cur.fetchmany(50_000)
                if not rows:
                    break
                by_ns: dict[int, list[tuple[int, bytes, int]]] = {}
                for vid, ns_id, blob, item_id in rows:
                    by_ns.setdefault(ns_id, []).append((vid, blob, item_id))
                for ns_id, trips in by_ns.items():
                    ids = np.fromiter((t[0] for t in trips), dtype=np.int64, count=len(trips))
                    items = np.fromiter((t[2] for t in trips), dtype=np.int64, count=len(trips))
                    mat = decode_vecs([t[1] for t in trips], self.dims)
                    self._add(ns_id, ids, mat, items)
            self.watermark = int(wm)
            self.rebuilt = True

    # -------------------------------------------------------------- sync
    def sync(self, conn: sqlite3.Connection) -> None:
        """Apply vector changes committed since the watermark (by any process)."""
        with self._lock:
            VECTOR_FEED.sync(conn, self)

    # ChangeFeed subscriber (store/db/changefeed.py)
    def holds_nothing(self) -> bool:
        return False  # an empty index still adds what was written

    def restart(self, conn: sqlite3.Connection) -> None:
        self.rebuild(conn)

    def apply(self, conn: sqlite3.Connection, changes: Sequence[Change]) -> None:
        """Replay as one batch, with the effect of replaying entry by entry (each entry drops
        its vector, an add then stores the vector as the table holds it now): every logged
        vector is removed once, then each one whose last add still has a row is added, in
        the order of those last adds. One removal pass per namespace instead of one per entry
        (each is O(namespace size) on a flat index)."""
        last_add: dict[int, int] = {}  # vector id -> namespace id, in order of last adds
        for ns_id, vid, op in changes:
            last_add.pop(vid, None)
            if op == OP_ADD:
                last_add[vid] = ns_id
        self._remove(list(dict.fromkeys(c[1] for c in changes)))
        stored: dict[int, tuple[bytes, int]] = {}
        for part, marks in in_chunks(last_add):
            for vid, blob, item_id in conn.execute(
                f"SELECT id, vec, item_id FROM vectors WHERE id IN ({marks})", part
            ):
                stored[vid] = (blob, item_id)
        by_ns: dict[int, list[tuple[int, bytes, int]]] = {}
        for vid, ns_id in last_add.items():
            if vid in stored:
                by_ns.setdefault(ns_id, []).append((vid, *stored[vid]))
        for ns_id, adds in by_ns.items():
            self._add(
                ns_id,
                np.asarray([a[0] for a in adds], np.int64),
                decode_vecs([a[1] for a in adds], self.dims),
                np.asarray([a[2] for a in adds], np.int64),
            )

    def compact_log(self, conn: sqlite3.Connection) -> None:
        """Drop log entries this index (and its snapshot) already reflect."""
        VECTOR_FEED.drop_through(conn, self.watermark)

    # -------------------------------------------------------------- mutate
    def _add(
        self, ns_id: int, ids: np.ndarray, mat: np.ndarray, items: np.ndarray | None = None
    ) -> None:
        idx = self._ns.get(ns_id)
        if idx is None:
            idx = self._ns[ns_id] = NsIndex(self.dims)
        start = idx.size
        idx.index.add_with_ids(normalise(mat), ids)
        if idx.items is not None:
            if items is None:
                idx.items = None
                idx.by_item = None
            else:
                idx.items.extend(items)
                idx.appended(start, items)
        else:
            idx.by_item = None
        for vid in ids.tolist():
            self._vec_ns[vid] = ns_id
        if not idx.approximate and idx.size > self.ann_threshold:
            self._to_hnsw(idx)

    def _remove(self, vec_ids: Sequence[int]) -> None:
        by_ns: dict[int, list[int]] = {}
        for vid in vec_ids:
            ns_id = self._vec_ns.pop(vid, None)
            if ns_id is not None:
                by_ns.setdefault(ns_id, []).append(vid)
        for ns_id, vids in by_ns.items():
            idx = self._ns.get(ns_id)
            if idx is not None and idx.approximate:
                idx.mark_dead(vids)
                if len(idx.dead) > _DEAD_SHARE * idx.index.ntotal:
                    self._compact(ns_id, idx)
            elif idx is not None:
                gone = np.asarray(vids, dtype=np.int64)
                if idx.items is not None and not idx.approximate:
                    # flat storage compacts in order on removal: mirror it on the item ids
                    stored = faiss.rev_swig_ptr(idx.index.id_map.data(), idx.size)
                    keep = idx.items.view()[~np.isin(stored, gone)]
                    idx.items = GrowBuffer(np.int64)
                    idx.items.extend(keep)
                idx.by_item = None
                idx.index.remove_ids(gone)
                if idx.size == 0:
                    del self._ns[ns_id]

    def _set_ef(self, idx: NsIndex) -> None:
        graph: Any = faiss.downcast_index(idx.index.index)
        graph.hnsw.efSearch = self.ef_search

    def _to_hnsw(self, idx: NsIndex) -> None:
        """Move a large namespace to an HNSW graph (approximate), re-adding its flat vectors."""
        n = int(idx.index.ntotal)
        ids = faiss.vector_to_array(idx.index.id_map).astype(np.int64)
        mat = np.asarray(idx.index.index.reconstruct_n(0, n), dtype=np.float32)
        self._fill_hnsw(idx, ids, mat)

    def _fill_hnsw(self, idx: NsIndex, ids: np.ndarray, mat: np.ndarray) -> None:
        graph = hnsw_index(self.dims, self.ef_search)
        graph.add_with_ids(mat, ids)
        idx.index = graph
        idx.approximate = True
        idx.items = None
        idx.by_item = None
        idx.dead = set()
        idx.mark_dead(())

    def _compact(self, ns_id: int, idx: NsIndex) -> None:
        """Rebuild an HNSW namespace without its dead vectors (flat again when it is no longer
        past the threshold)."""
        held = faiss.vector_to_array(idx.index.id_map).astype(np.int64)
        dead = np.fromiter(idx.dead, dtype=np.int64, count=len(idx.dead))
        live = held[~np.isin(held, dead)]
        mat = np.asarray(idx.index.reconstruct_batch(live), dtype=np.float32)
        if len(live) > self.ann_threshold:
            self._fill_hnsw(idx, live, mat)
            return
        flat = NsIndex(self.dims)
        flat.items = None  # read from SQLite when first needed
        if len(live):
            flat.index.add_with_ids(mat, live)
            self._ns[ns_id] = flat
        else:
            del self._ns[ns_id]

    # -------------------------------------------------------------- query
    def search(self, ns_ids: Sequence[int], query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(vector id, cosine) of the `k` nearest vectors across the given namespaces."""
        q = normalise(np.asarray(query, dtype=np.float32).reshape(1, -1))
        hits: list[tuple[int, float]] = []
        with self._lock:
            for ns_id in ns_ids:
                idx = self._ns.get(ns_id)
                if idx is not None and idx.size:
                    hits.extend(self._faiss_hits(idx, q, k))
        hits.sort(key=lambda h: -h[1])
        return hits[:k]

    def _faiss_hits(self, idx: NsIndex, q: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(vector id, cosine) of one namespace's `k` nearest vectors, through FAISS."""
        scores, ids = search_one(idx, q, min(k, idx.size))
        return [(i, s) for i, s in zip(ids[0].tolist(), scores[0].tolist(), strict=True) if i >= 0]

    def search_items(
        self, conn: sqlite3.Connection, ns_ids: Sequence[int], query: np.ndarray, k: int
    ) -> tuple[dict[int, float], ExactCosines]:
        """item id -> best cosine for the `k` nearest vectors, and every cosine of the query
        over the exact namespaces (to look up other candidates later without reading SQLite).

        Exact namespaces are scanned by FAISS over their float16 vectors, hits mapped to items
        through the in-memory item-id mirror; other candidates' cosines come later from
        `ExactCosines.lookup`. HNSW namespaces go through FAISS, their vector ids mapped to
        items in SQLite.
        """
        return self.begin_search_items(conn, ns_ids, query, k)()

    def begin_search_items(
        self,
        conn: sqlite3.Connection,
        ns_ids: Sequence[int],
        query: np.ndarray,
        k: int,
    ) -> Callable[[], tuple[dict[int, float], ExactCosines]]:
        """`search_items` in two steps: start the FAISS scans, and return the function that
        waits for them and maps their hits to items.

        With `scan_in_background`, and at least `_BACKGROUND_MIN` vectors to scan, the scans
        run on a worker thread (store/vector/workers.py; FAISS releases the GIL) while the caller does
        its keyword work in Python. The finishing function must run on the calling thread,
        under the same store lock (it reads SQLite for HNSW hits).
        """
        q = unit_query(query)
        cos = ExactCosines(q, min(_WHOLE_SCAN * k, _WHOLE_SCAN_MAX))
        jobs: list[tuple[NsIndex, np.ndarray | None]] = []  # items: None for HNSW
        with self._lock:
            for ns_id in ns_ids:
                idx = self._ns.get(ns_id)
                if idx is None or idx.size == 0:
                    continue
                if idx.approximate:
                    cos.complete = False
                    jobs.append((idx, None))
                    continue
                items = self._items_of(conn, ns_id, idx)
                cos.add(idx, items)
                jobs.append((idx, items))

        def scan() -> list[tuple[np.ndarray, np.ndarray]]:
            out = []
            with self._lock:
                for idx, items in jobs:
                    out.append(search_one(idx, q, min(k, idx.size), positions=items is not None))
            return out

        background = self._background and sum(j[0].size for j in jobs) >= _BACKGROUND_MIN
        future: Future[list[tuple[np.ndarray, np.ndarray]]] | None = None
        raw: list[tuple[np.ndarray, np.ndarray]] = []
        if background:
            future = worker_pool().submit(scan)
        else:
            raw = scan()

        def finish() -> tuple[dict[int, float], ExactCosines]:
            res = future.result() if future is not None else raw
            if len(jobs) == 1 and jobs[0][1] is not None:
                return one_exact(jobs[0][1], *res[0], k), cos
            found: list[tuple[int, float]] = []
            approx: list[tuple[int, float]] = []
            for (_idx, items), (scores, labels) in zip(jobs, res, strict=True):
                ok = labels[0] >= 0
                hits, sims = labels[0][ok], scores[0][ok].tolist()
                if items is None:
                    approx.extend(zip(hits.tolist(), sims, strict=True))
                else:
                    found.extend(zip(items[hits].tolist(), sims, strict=True))
            if approx:
                approx.sort(key=_SIM, reverse=True)
                found.extend(_items_of_vectors(conn, approx[:k]))
            found.sort(key=_SIM, reverse=True)  # stable: ties keep FAISS's order
            best: dict[int, float] = {}
            for item_id, sim in found:
                if len(best) >= k:
                    break
                if item_id >= 0 and item_id not in best:
                    best[item_id] = sim
            return best, cos

        return finish

    def _items_of(self, conn: sqlite3.Connection, ns_id: int, idx: NsIndex) -> np.ndarray:
        """Item ids of an exact index's vectors in storage order (read from SQLite once)."""
        if idx.items is None:
            owner = dict(conn.execute("SELECT id, item_id FROM vectors WHERE ns_id=?", (ns_id,)))
            stored = faiss.rev_swig_ptr(idx.index.id_map.data(), idx.size)
            idx.items = GrowBuffer(np.int64)
            idx.items.extend(
                np.fromiter((owner.get(v, -1) for v in stored.tolist()), np.int64, idx.size)
            )
            idx.by_item = None
        return idx.items.view()

    def count(self, ns_id: int | None = None) -> int:
        with self._lock:
            if ns_id is None:
                return sum(i.size for i in self._ns.values())
            idx = self._ns.get(ns_id)
            return 0 if idx is None else idx.size

    def reconstruct(self, vec_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """Unit vectors of the given ids, read from memory (flat float16 or the HNSW graph's
        float16 storage). Ids unknown here are left out: the caller reads those from SQLite."""
        out: dict[int, np.ndarray] = {}
        with self._lock:
            by_ns: dict[int, list[int]] = {}
            for vid in vec_ids:
                ns_id = self._vec_ns.get(vid)
                if ns_id is not None:
                    by_ns.setdefault(ns_id, []).append(vid)
            for ns_id, vids in by_ns.items():
                idx = self._ns.get(ns_id)
                if idx is None:
                    continue
                mat = idx.index.reconstruct_batch(np.asarray(vids, dtype=np.int64))
                out.update(zip(vids, mat, strict=True))
        return out
