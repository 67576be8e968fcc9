"""BM25 from memory: the per-term postings cache (store/keyword/cache.py) and a small
namespace's index held whole (store/keyword/resident.py).

Per namespace, term scores add up in a dense array over the cache's local document numbers;
terms are scored rarest first within `StoreTuning.cached_postings_scan` postings, and a term
past the budget only re-scores the best candidates found so far (the rule of the SQLite path,
store/keyword/scan.py). A held namespace sums its postings once per query (`resident_sums`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, KeysView, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from langmem_plus.store.keyword import scan
from langmem_plus.store.keyword.bm25 import MIN_IDF, Okapi, top_k
from langmem_plus.store.keyword.cache import PostingsCache
from langmem_plus.store.keyword.resident import Resident

__all__ = [
    "PreparedQuery",
    "resident_sums",
    "score_items_cached",
    "score_items_resident",
    "scores_cached",
    "search_resident",
]


@dataclass(slots=True)
class PreparedQuery:
    """One query's terms over its namespaces, ready to score: mean document length, term ->
    (term ids, summed df), term id -> namespace, weighted IDF, terms rarest first, and whether
    the in-memory cache serves it; the `Resident` index of a small one-namespace search, the
    IDF floor applied, and (`dense`) the query's BM25 over its documents once summed."""

    avgdl: float
    found: dict[str, tuple[list[int], int]]
    tid_ns: dict[int, int]
    idf: dict[str, float]
    order: list[str]
    cached: bool
    resident: Resident | None = None
    floor: float = MIN_IDF
    dense: list[dict[int, float] | None] = field(default_factory=list)


def score_items_cached(
    cache: PostingsCache,
    conn: sqlite3.Connection,
    p: PreparedQuery,
    pool: Sequence[int],
    okapi: Okapi,
) -> dict[int, float]:
    """BM25 of the `pool` items from the in-memory postings: per namespace, the pool's local
    numbers (sorted) and one array of sums aligned with them; terms add in `p.order`."""
    # load every term first: a cold load may number pool items not seen before
    wants = {ns_id: cache.local_ids(ns_id, pool) for ns_id in _prefetch_terms(cache, conn, p)}
    sums = {ns_id: np.zeros(len(w), dtype=np.float64) for ns_id, w in wants.items()}
    for term in p.order:
        for tid in p.found[term][0]:
            ns_id = p.tid_ns[tid]
            want = wants[ns_id]
            if not len(want):
                continue
            local, tf, _items, dl = cache.term(conn, ns_id, term, (tid,))
            pos = _positions(local, want)
            if not len(pos):
                continue
            at = np.searchsorted(want, local[pos])
            sums[ns_id][at] += (
                okapi.saturation(tf[pos].astype(np.float64), dl[pos], p.avgdl) * (p.idf[term])
            )
    out: dict[int, float] = {}
    for ns_id, a in sums.items():
        hit = a > 0
        if hit.any():
            ids = cache.items_of(ns_id, wants[ns_id][hit])
            out.update(zip(ids.tolist(), a[hit].tolist(), strict=True))
    return out


def _prefetch_terms(cache: PostingsCache, conn: sqlite3.Connection, p: PreparedQuery) -> list[int]:
    """Load the query's terms into the postings cache (one read per namespace for those not
    in memory); returns the namespaces. Every scoring path loads the same terms in the same
    order: the cache's local numbering, which breaks ties in a search's top k, then never
    depends on the path taken."""
    by_ns: dict[int, dict[str, list[int]]] = {}
    for term in p.order:
        for tid in p.found[term][0]:
            by_ns.setdefault(p.tid_ns[tid], {}).setdefault(term, []).append(tid)
    for ns_id, wanted in by_ns.items():
        cache.prefetch(conn, ns_id, wanted)
    return list(by_ns)


def resident_sums(p: PreparedQuery, okapi: Okapi, budget: int) -> dict[int, float] | None:
    """The query's nonzero BM25 sums over its `Resident` namespace (item id -> sum), once per
    prepared query; None when the scan `budget` would defer a term (the per-term cache
    answers then)."""
    if not p.dense:
        res = p.resident
        assert res is not None
        p.dense.append(res.bm25(p.order, p.found, p.idf, okapi, p.avgdl, budget))
    return p.dense[0]


def search_resident(
    sums: dict[int, float], k: int, extra_fn: Callable[[], set[int]]
) -> dict[int, float]:
    """`scores_cached`'s answer from a resident namespace's sums: the best `k` documents and
    `extra_fn()` (with their sums, 0 for what no term reached)."""
    extra = extra_fn()
    if len(sums) > k:
        ids = np.fromiter(sums.keys(), dtype=np.int64, count=len(sums))
        vals = np.fromiter(sums.values(), dtype=np.float64, count=len(sums))
        part = top_k(ids, vals, k)
        got = dict(zip(ids[part].tolist(), vals[part].tolist(), strict=True))
    else:
        got = dict(sums)
    for i in extra:
        if i not in got:
            got[i] = sums.get(i, 0.0)
    return got


def score_items_resident(sums: dict[int, float], items: Iterable[int]) -> dict[int, float]:
    """BM25 of `items` from a resident namespace's sums: the items' positive sums."""
    want = items if isinstance(items, (set, frozenset, KeysView)) else set(items)
    return {i: v for i, v in sums.items() if v > 0 and i in want}


def scores_cached(
    cache: PostingsCache,
    conn: sqlite3.Connection,
    p: PreparedQuery,
    k: int,
    extra_fn: Callable[[], set[int]],
    budget: int,
    okapi: Okapi,
) -> dict[int, float]:
    """BM25 from the in-memory postings: the best max(5k, 200) items and `extra_fn()`. Per
    namespace, term scores add up in a dense array over local numbers."""
    order, found, tid_ns, idf, avgdl = p.order, p.found, p.tid_ns, p.idf, p.avgdl
    _prefetch_cold(cache, conn, order, found, tid_ns, budget)
    acc, deferred = _accumulate(cache, conn, p, budget, okapi)
    ids_parts: list[np.ndarray] = []
    val_parts: list[np.ndarray] = []
    for ns_id, a in acc.items():
        nz = np.flatnonzero(a)
        ids_parts.append(cache.items_of(ns_id, nz))
        val_parts.append(a[nz])
    extra = extra_fn()
    if not ids_parts:
        return dict.fromkeys(extra, 0.0)
    all_ids = np.concatenate(ids_parts)
    all_vals = np.concatenate(val_parts)
    keep = max(k * 5, 200) if deferred else k
    if len(all_ids) > keep:
        part = top_k(all_ids, all_vals, keep)
        got = dict(zip(all_ids[part].tolist(), all_vals[part].tolist(), strict=True))
    else:
        got = dict(zip(all_ids.tolist(), all_vals.tolist(), strict=True))
    _fill_extras(cache, acc, extra, got)
    if deferred:
        pool = sorted(got)
        for term in deferred:
            for tid in found[term][0]:
                if not cache.has(tid_ns[tid], term):  # long and cold: look up the pool
                    scan.rescore(conn, tid, pool, idf[term], avgdl, got, okapi)
                    continue
                _rescore(cache, conn, tid_ns[tid], term, tid, pool, idf[term], avgdl, got, okapi)
    return got


def _prefetch_cold(
    cache: PostingsCache,
    conn: sqlite3.Connection,
    order: Sequence[str],
    found: Mapping[str, tuple[list[int], int]],
    tid_ns: Mapping[int, int],
    budget: int,
) -> None:
    """Read the cold terms that will be scored in full from SQLite, one statement each
    namespace (the terms past the scan budget are re-scored later, not loaded)."""
    cold: dict[int, dict[str, list[int]]] = {}
    left = budget
    for term in order:
        ids, df = found[term]
        if df > left and left < budget:
            break
        left -= df
        for tid in ids:
            if not cache.has(tid_ns[tid], term):
                cold.setdefault(tid_ns[tid], {}).setdefault(term, []).append(tid)
    for ns_id, wanted in cold.items():
        cache.prefetch(conn, ns_id, wanted)


def _accumulate(
    cache: PostingsCache,
    conn: sqlite3.Connection,
    p: PreparedQuery,
    budget: int,
    okapi: Okapi,
) -> tuple[dict[int, np.ndarray], list[str]]:
    """Per namespace, the summed term scores over local item numbers; the terms past the
    scan budget (once something was summed) are returned as deferred."""
    acc: dict[int, np.ndarray] = {}
    deferred: list[str] = []
    for term in p.order:
        ids, df = p.found[term]
        if df > budget and acc:
            deferred.append(term)
            continue
        for tid in ids:
            ns_id = p.tid_ns[tid]
            local, tf, _items, dl = cache.term(conn, ns_id, term, (tid,))
            budget -= len(local)
            if not len(local):
                continue
            a = acc.get(ns_id)
            size = cache.size(ns_id)
            if a is None or len(a) < size:
                grown = np.zeros(size, dtype=np.float64)
                if a is not None:
                    grown[: len(a)] = a
                a = acc[ns_id] = grown
            a[local] += okapi.saturation(tf.astype(np.float64), dl, p.avgdl) * p.idf[term]
    return acc, deferred


def _fill_extras(
    cache: PostingsCache, acc: Mapping[int, np.ndarray], extra: set[int], got: dict[int, float]
) -> None:
    """Give the extra candidates the top k left out their summed value (0 when no term
    reached them)."""
    missing = [i for i in extra if i not in got]
    if not missing:
        return
    filled = dict.fromkeys(missing, 0.0)
    miss = np.asarray(missing, dtype=np.int64)
    for ns_id, a in acc.items():
        la = cache.locals_of(ns_id, missing)
        ok = (la >= 0) & (la < len(a))
        if ok.any():
            filled.update(zip(miss[ok].tolist(), a[la[ok]].tolist(), strict=True))
    got.update(filled)


def _rescore(
    cache: PostingsCache,
    conn: sqlite3.Connection,
    ns_id: int,
    term: str,
    term_id: int,
    pool: Sequence[int],
    idf: float,
    avgdl: float,
    got: dict[int, float],
    okapi: Okapi,
) -> None:
    """Add one term's BM25 to the scores of the pool items that contain it (memory)."""
    local, tf, items, dl = cache.term(conn, ns_id, term, (term_id,))
    want = cache.local_ids(ns_id, pool)
    if not len(want) or not len(local):
        return
    pos = _positions(local, want)
    vals = okapi.saturation(tf[pos].astype(np.float64), dl[pos], avgdl) * idf
    for item_id, v in zip(items[pos].tolist(), vals.tolist(), strict=True):
        if item_id in got:
            got[item_id] += v


def _positions(local: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Positions in sorted `local` of the values of `want` that it holds (each at most once)."""
    pos = np.searchsorted(local, want)
    ok = pos < len(local)
    pos = pos[ok]
    return pos[local[pos] == want[ok]]
