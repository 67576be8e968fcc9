"""One namespace's FAISS index, the one-query scan, and a query's exact cosines on demand.

The pieces `VectorIndex` (store/vector/index.py) is built from: an exact namespace holds float16 unit
vectors (with a mirror of the item id of each stored vector), a large one an HNSW graph over
float16 vectors (approximate; recall@10 against the exact scan >= 0.99 where it is used:
docs/results/large_namespace.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import faiss
import numpy as np

from langmem_plus.store.growbuffer import GrowBuffer

__all__ = [
    "HNSW_EF_CONSTRUCTION",
    "HNSW_M",
    "ExactCosines",
    "NsIndex",
    "hnsw_index",
    "is_approximate",
    "normalise",
    "one_exact",
    "search_one",
    "unit_query",
]

# HNSW graph: neighbours per node and the candidate list while building (measured on USE
# vectors, docs/results/large_namespace.md).
HNSW_M = 48
HNSW_EF_CONSTRUCTION = 100


def normalise(mat: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows kept), as float32. The norms are computed as
    `np.linalg.norm(mat, axis=1)` computes them, without its Python-level dispatch."""
    if not np.issubdtype(mat.dtype, np.inexact):
        mat = mat.astype(np.float64)
    norms = np.sqrt(np.add.reduce(mat * mat, axis=1, keepdims=True))
    norms[norms == 0] = 1.0
    return (mat / norms).astype(np.float32)


def unit_query(query: np.ndarray) -> np.ndarray:
    """One query vector as a unit row of shape (1, d), float32: `normalise` of it, with the
    same operations (its norm by `add.reduce`) and fewer calls."""
    mat = np.asarray(query, dtype=np.float32).reshape(1, -1)
    norm = np.sqrt(np.add.reduce(mat * mat, axis=1, keepdims=True))
    if norm[0, 0] == 0:
        return mat.copy()  # a zero vector stays zero (divided by 1)
    return mat / norm


def hnsw_index(dims: int, ef_search: int) -> Any:
    """An empty approximate index: an HNSW graph over float16 unit vectors, inner product,
    keyed by vector id (`IndexIDMap2`, so vectors can be read back by id)."""
    inner: Any = faiss.IndexHNSWSQ(
        dims,
        faiss.ScalarQuantizer.QT_fp16,  # type: ignore[arg-type]  # the stubs miss this overload
        HNSW_M,
        faiss.METRIC_INNER_PRODUCT,
    )
    inner.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    inner.hnsw.efSearch = ef_search
    return faiss.IndexIDMap2(inner)


def is_approximate(index: Any) -> bool:
    """Whether a (deserialised) namespace index is the HNSW form."""
    inner = getattr(faiss.downcast_index(index), "index", None)
    return inner is not None and isinstance(faiss.downcast_index(inner), faiss.IndexHNSW)


class NsIndex:
    """One namespace's FAISS index: exact (float16 flat) until it grows past the ANN threshold,
    then an HNSW graph (`hnsw_index`)."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        # Exact search over float16 copies (`faiss.IndexScalarQuantizer`, QT_fp16): half the
        # memory of IndexFlatIP and, the scan being memory-bound, about half its time once the
        # vectors are out of cache (10k x 512: 0.46 vs 0.90 ms p50); cosine error ~1e-4.
        self.index: Any = faiss.IndexIDMap2(
            faiss.IndexScalarQuantizer(
                dims, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
            )
        )
        self.approximate = False
        # Exact indexes only: the item id of each stored vector, in storage order (None:
        # unknown, e.g. loaded from a snapshot; rebuilt from SQLite when first needed), and
        # its sorted form for lookups (None: stale).
        self.items: GrowBuffer | None = GrowBuffer(np.int64)
        self.by_item: tuple[GrowBuffer, GrowBuffer] | None = None
        # HNSW only: vector ids removed from the namespace but still in the graph (FAISS's
        # HNSW cannot remove); searches skip them, and the graph is rebuilt without them once
        # they are a fifth of it (`VectorIndex._remove`)
        self.dead: set[int] = set()
        self._skip: Any = None  # the search parameters that skip `dead` (None: stale)

    def mark_dead(self, vec_ids: Sequence[int]) -> None:
        self.dead.update(vec_ids)
        self._skip = None

    def search_params(self) -> Any:
        """FAISS search parameters for an HNSW namespace: None, or a selector of the live
        vectors when some are dead."""
        if not self.dead:
            return None
        if self._skip is None:
            ids = np.fromiter(self.dead, dtype=np.int64, count=len(self.dead))
            batch = faiss.IDSelectorBatch(len(ids), faiss.swig_ptr(ids))
            skip = faiss.IDSelectorNot(batch)
            params = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]
            params.sel = skip
            graph: Any = faiss.downcast_index(self.index.index)
            params.efSearch = graph.hnsw.efSearch
            self._skip = (params, skip, batch)  # FAISS holds the selectors by raw pointer
        return self._skip[0]

    def sorted_items(self) -> tuple[np.ndarray, np.ndarray]:
        """(argsort of the item ids, sorted item ids): where each item's vectors are stored."""
        if self.by_item is None:
            assert self.items is not None
            items = self.items.view()
            order = np.argsort(items, kind="stable")
            srt_buf, order_buf = GrowBuffer(np.int64), GrowBuffer(np.int64)
            srt_buf.extend(items[order])
            order_buf.extend(order)
            self.by_item = (order_buf, srt_buf)
        return self.by_item[0].view(), self.by_item[1].view()

    def appended(self, start: int, items: np.ndarray) -> None:
        """Vectors of `items` were stored at positions start.. : keep the sorted form when
        they sort after every item held (new items: ids only grow), else drop it (rebuilt by
        the next lookup). Saves an O(n log n) sort on the search after each put."""
        if self.by_item is None:
            return
        order_buf, srt_buf = self.by_item
        new = np.asarray(items, dtype=np.int64)
        if not len(new):
            return
        srt = srt_buf.view()
        if (len(srt) and new[0] < srt[-1]) or (len(new) > 1 and np.any(new[1:] < new[:-1])):
            self.by_item = None
            return
        order_buf.extend(np.arange(start, start + len(new), dtype=np.int64))
        srt_buf.extend(new)

    @property
    def size(self) -> int:
        """Vectors held (live ones: an HNSW graph's dead vectors do not count)."""
        return int(self.index.ntotal) - len(self.dead)


_SINGLE_THREAD_MAX = 100_000


def search_one(
    idx: NsIndex, q: np.ndarray, k: int, positions: bool = False, params: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """One query vector: single-threaded, except an exact scan of more than
    `_SINGLE_THREAD_MAX` vectors.

    OpenMP start-up dominates a one-vector scan of a small flat index (measured at 10k x 512:
    1.66 ms with 2 threads, 0.60 ms with 1), so small scans run on one thread, and so does an
    HNSW search (FAISS runs one query on one thread anyway). `positions` (exact indexes only):
    labels are storage positions instead of vector ids; `params`: FAISS search parameters (a
    selector; an HNSW namespace's own, skipping its dead vectors, when None).
    """
    index = idx.index.index if positions else idx.index
    if idx.approximate:
        return _single_threaded(index, q, k, params if params is not None else idx.search_params())
    if idx.size > _SINGLE_THREAD_MAX:
        return index.search(q, k, params=params)
    return _single_threaded(index, q, k, params)


def _single_threaded(
    index: Any, q: np.ndarray, k: int, params: Any
) -> tuple[np.ndarray, np.ndarray]:
    """`_search_row` on one OpenMP thread."""
    before = faiss.omp_get_max_threads()
    if before == 1:
        return _search_row(index, q, k, params)
    faiss.omp_set_num_threads(1)
    try:
        return _search_row(index, q, k, params)
    finally:
        faiss.omp_set_num_threads(before)


def _search_row(index: Any, q: np.ndarray, k: int, params: Any) -> tuple[np.ndarray, np.ndarray]:
    """`index.search(q, k, params=params)` for one C-contiguous float32 row (`unit_query`),
    calling FAISS directly (the Python wrapper's checks and conversions cost as much as a
    small scan)."""
    if q.dtype != np.float32 or not q.flags.c_contiguous or q.shape[0] != 1:
        return index.search(q, k, params=params)  # type: ignore[no-any-return]
    dist = np.empty((1, k), dtype=np.float32)
    labels = np.empty((1, k), dtype=np.int64)
    index.search_c(1, faiss.swig_ptr(q), k, faiss.swig_ptr(dist), faiss.swig_ptr(labels), params)
    return dist, labels


def one_exact(
    items: np.ndarray, scores: np.ndarray, labels: np.ndarray, k: int
) -> dict[int, float]:
    """item id -> best cosine of one exact namespace's scan (labels: storage positions, best
    first), what `begin_search_items`'s general merge gives for it: FAISS's order already
    sorted, an item's first (best) hit kept, at most `k` items."""
    lab, sim = labels[0], scores[0]
    if len(lab) and lab[-1] < 0:  # FAISS pads a short answer with -1 at the end
        ok = lab >= 0
        lab, sim = lab[ok], sim[ok]
    found = items[lab].tolist()
    sims = sim.tolist()
    if len(set(found)) == len(found) and (not found or min(found) >= 0):
        return dict(zip(found[:k], sims[:k], strict=True))  # one vector per item
    best: dict[int, float] = {}
    for item_id, sim in zip(found, sims, strict=True):
        if len(best) >= k:
            break
        if item_id >= 0 and item_id not in best:
            best[item_id] = sim
    return best


class ExactCosines:
    """One query's cosines over the exact namespaces it searched, computed on demand.

    Holds each exact namespace's item-id mirror and FAISS index; `lookup` finds the storage
    positions of the asked items and has FAISS score only those (a bitmap selector: ~0.1 ms
    for 250 of 10k vectors, where decoding float16 rows in numpy takes ~0.3 ms). Valid while
    the store's lock is held (the index must not change underneath).
    """

    def __init__(self, query: np.ndarray, whole_max: int = 0) -> None:
        self.query = query  # a unit row, (1, d) float32 (`unit_query`)
        self.parts: list[tuple[NsIndex, np.ndarray]] = []
        self.complete = True  # False when an HNSW namespace was searched (not all cosines)
        # one namespace of at most this many vectors is scanned whole on the first lookup
        # (one plain scan costs less than a selected one there), its best cosine per item kept
        self.whole_max = whole_max
        self._whole: dict[int, float] | None = None

    def add(self, idx: NsIndex, items: np.ndarray) -> None:
        self.parts.append((idx, items))

    def with_query(self, query: np.ndarray) -> ExactCosines:
        """The same namespaces' cosines for another query vector (made a unit row)."""
        other = ExactCosines(unit_query(query), self.whole_max)
        other.parts, other.complete = self.parts, self.complete
        return other

    def _scanned_whole(self) -> dict[int, float] | None:
        """Item id -> best cosine over the one namespace searched, from a scan of all of its
        vectors (made on first use); None when it is not one namespace of at most
        `whole_max` vectors. The cosines are those a selected scan computes."""
        if self._whole is None and len(self.parts) == 1:
            idx, items = self.parts[0]
            if 0 < idx.size <= self.whole_max:
                sims, labels = search_one(idx, self.query, idx.size, positions=True)
                ok = labels[0] >= 0
                found, got = items[labels[0][ok]][::-1], sims[0][ok][::-1]
                # best first in the scan, so written last: an item keeps its best cosine
                self._whole = dict(zip(found.tolist(), got.tolist(), strict=True))
        return self._whole

    def lookup(self, item_ids: Sequence[int]) -> dict[int, float]:
        """item id -> best cosine over its vectors, for the given items that have any."""
        if not len(item_ids):
            return {}
        whole = self._scanned_whole()
        if whole is not None:  # ordered by item id, as below
            return {i: whole[i] for i in sorted(set(item_ids)) if i in whole}
        # Repeated ids are harmless: their positions set the same selector bits.
        want = np.fromiter(item_ids, dtype=np.int64, count=len(item_ids))
        got_ids: list[np.ndarray] = []
        got_sims: list[np.ndarray] = []
        for idx, items in self.parts:
            order, srt = idx.sorted_items()
            if not len(srt):
                continue
            lo = np.searchsorted(srt, want, side="left")
            counts = np.searchsorted(srt, want, side="right") - lo
            has = counts > 0
            if not has.any():
                continue
            lo, counts = lo[has], counts[has]
            # every sorted position of every found item (items with several vectors: all)
            total = int(counts.sum())
            starts = np.cumsum(counts) - counts
            pos = order[np.repeat(lo - starts, counts) + np.arange(total)]
            n = idx.size
            bits = np.zeros(n, dtype=bool)
            bits[pos] = True
            packed = np.packbits(bits, bitorder="little")
            params: Any = faiss.SearchParameters()
            selector = faiss.IDSelectorBitmap(n, faiss.swig_ptr(packed))
            params.sel = selector
            sims, got = search_one(idx, self.query, min(total, n), positions=True, params=params)
            ok = got[0] >= 0
            got_ids.append(items[got[0][ok]])
            got_sims.append(sims[0][ok])
        if not got_ids:
            return {}
        ids = np.concatenate(got_ids)
        vals = np.concatenate(got_sims)
        if len(ids) > 1:  # an item with several vectors (or in several parts): its best
            o = np.lexsort((vals, ids))
            ids, vals = ids[o], vals[o]
            last = np.r_[ids[1:] != ids[:-1], True]
            ids, vals = ids[last], vals[last]
        return dict(zip(ids.tolist(), vals.tolist(), strict=True))
