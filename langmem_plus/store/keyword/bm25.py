"""BM25 read straight from SQLite's postings, and the per-term formula both paths share.

The path for searches the in-memory postings cache does not serve (over many namespaces or
more than `keyword_cache_max_docs` documents, or with the cache off): terms are read rarest
first within `max_postings_scan` postings; a term past the budget only re-scores the best candidates found so far. `KeywordIndex` (store/keyword/index.py) builds on it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from langmem_plus.store.db.database import in_chunks

__all__ = ["PostingsScoring", "top_k"]


class PostingsScoring:
    """The SQLite scoring path and the BM25 term formula (a base of `KeywordIndex`)."""

    k1: float
    b: float
    max_postings_scan: int

    def _score_sqlite(
        self,
        conn: sqlite3.Connection,
        order: Sequence[str],
        found: Mapping[str, tuple[list[int], int]],
        idf: Mapping[str, float],
        avgdl: float,
        k: int,
        extra_fn: Callable[[], set[int]],
    ) -> dict[int, float]:
        """Scores read straight from SQLite's postings (many namespaces, or no cache)."""
        budget = self.max_postings_scan
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
                scored_vals.append(self._bm25(arr[:, 1], arr[:, 2], avgdl) * idf[term])
        scores = _sum_by_id(scored_ids, scored_vals)
        extra = extra_fn()
        for item_id in extra:
            scores.setdefault(item_id, 0.0)
        if deferred and scores:
            pool = self._top(scores, max(k * 5, 200)) | extra
            pool_ids = sorted(pool)
            for term in deferred:
                for tid in found[term][0]:
                    self._rescore_sqlite(conn, tid, pool_ids, idf[term], avgdl, scores)
        return scores

    def _rescore_sqlite(
        self,
        conn: sqlite3.Connection,
        term_id: int,
        pool: Sequence[int],
        idf: float,
        avgdl: float,
        scores: dict[int, float],
    ) -> None:
        """Add one term's BM25 to the scores of the pool items that contain it (SQLite)."""
        for part, marks in in_chunks(pool):
            rows = conn.execute(
                f"SELECT item_id, tf, dl FROM postings WHERE term_id=? AND item_id IN ({marks})",
                (term_id, *part),
            ).fetchall()
            if not rows:
                continue
            arr = np.asarray(rows, dtype=np.float64)
            vals = self._bm25(arr[:, 1], arr[:, 2], avgdl) * idf
            for item_id, v in zip(arr[:, 0].astype(np.int64).tolist(), vals.tolist(), strict=True):
                if item_id in scores:
                    scores[item_id] += v

    def _bm25(self, tf: np.ndarray, dl: np.ndarray, avgdl: float) -> np.ndarray:
        denom = tf + self.k1 * (1 - self.b + self.b * dl / (avgdl or 1.0))
        return tf * (self.k1 + 1) / denom

    @staticmethod
    def _top(scores: dict[int, float], k: int) -> set[int]:
        if len(scores) <= k:
            return set(scores)
        ids = np.fromiter(scores.keys(), dtype=np.int64, count=len(scores))
        vals = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
        return set(ids[top_k(ids, vals, k)].tolist())


def _sum_by_id(ids: list[np.ndarray], vals: list[np.ndarray]) -> dict[int, float]:
    """Per-item sums of per-term scores."""
    if not ids:
        return {}
    all_ids = np.concatenate(ids)
    all_vals = np.concatenate(vals).astype(np.float64)
    uniq, inv = np.unique(all_ids, return_inverse=True)
    sums = np.bincount(inv, weights=all_vals)
    return dict(zip(uniq.tolist(), sums.tolist(), strict=True))


def top_k(ids: np.ndarray, vals: np.ndarray, k: int) -> np.ndarray:
    """Positions of the `k` highest `vals`, ties at the cut broken by the lower id: the same
    candidates whatever order the scores were gathered in (cache history, another process)."""
    n = len(vals)
    if n <= k:
        return np.arange(n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    cut = -np.partition(-vals, k - 1)[k - 1]
    above = np.flatnonzero(vals > cut)
    tied = np.flatnonzero(vals == cut)
    tied = tied[np.argsort(ids[tied], kind="stable")][: k - len(above)]
    return np.concatenate([above, tied])
