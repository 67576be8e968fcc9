"""BM25 read straight from SQLite's postings: the path of searches the in-memory postings
cache does not serve (over more than 64 namespaces or `keyword_cache_max_docs` documents, or
with the cache off). Terms are read rarest first within a postings budget
(`StoreTuning.max_postings_scan`); a term past it only re-scores the best candidates found so
far, which bounds a query's reads at any store size.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from langmem_plus.store.db.database import in_chunks
from langmem_plus.store.keyword.bm25 import Okapi, sum_by_id, top_ids

__all__ = ["rescore", "scores"]


def scores(
    conn: sqlite3.Connection,
    order: Sequence[str],
    found: Mapping[str, tuple[list[int], int]],
    idf: Mapping[str, float],
    avgdl: float,
    k: int,
    extra_fn: Callable[[], set[int]],
    budget: int,
    okapi: Okapi,
) -> dict[int, float]:
    """BM25 of the items the terms `order` (rarest first) reach within `budget` postings, plus
    `extra_fn()`'s items; the terms past the budget re-score the best max(5k, 200) of them."""
    scored_ids: list[np.ndarray] = []
    scored_vals: list[np.ndarray] = []
    deferred: list[str] = []
    for term in order:
        ids, df = found[term]
        if df > budget and scored_ids:
            deferred.append(term)
            continue
        limit = max(budget, 1)
        rows: list[tuple[int, int, int]] = []
        for tid in ids:
            rows.extend(
                conn.execute(
                    "SELECT item_id, tf, dl FROM postings WHERE term_id=? "
                    "ORDER BY item_id DESC LIMIT ?",
                    (tid, limit),
                ).fetchall()
            )
        budget -= len(rows)
        if df > len(rows):
            deferred.append(term)  # partly read: re-score the rest below
            if rows:
                arr = np.asarray(rows, dtype=np.float64)
                scored_ids.append(arr[:, 0].astype(np.int64))
                scored_vals.append(np.zeros(len(rows)))
            continue
        if rows:
            arr = np.asarray(rows, dtype=np.float64)
            scored_ids.append(arr[:, 0].astype(np.int64))
            scored_vals.append(okapi.saturation(arr[:, 1], arr[:, 2], avgdl) * idf[term])
    got = sum_by_id(scored_ids, scored_vals)
    extra = extra_fn()
    for item_id in extra:
        got.setdefault(item_id, 0.0)
    if deferred and got:
        pool = sorted(top_ids(got, max(k * 5, 200)) | extra)
        for term in deferred:
            for tid in found[term][0]:
                rescore(conn, tid, pool, idf[term], avgdl, got, okapi)
    return got


def rescore(
    conn: sqlite3.Connection,
    term_id: int,
    pool: Sequence[int],
    idf: float,
    avgdl: float,
    scores: dict[int, float],
    okapi: Okapi,
) -> None:
    """Add one term's BM25 to the scores of the pool items that contain it."""
    for part, marks in in_chunks(pool):
        rows = conn.execute(
            f"SELECT item_id, tf, dl FROM postings WHERE term_id=? AND item_id IN ({marks})",
            (term_id, *part),
        ).fetchall()
        if not rows:
            continue
        arr = np.asarray(rows, dtype=np.float64)
        vals = okapi.saturation(arr[:, 1], arr[:, 2], avgdl) * idf
        for item_id, v in zip(arr[:, 0].astype(np.int64).tolist(), vals.tolist(), strict=True):
            if item_id in scores:
                scores[item_id] += v
