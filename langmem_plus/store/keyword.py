"""Incremental BM25 keyword index kept in SQLite (terms + postings), scored like BM25Okapi.

A put touches only the postings of that item and the document frequencies of its terms, so
writes cost the same at 1k or 1M items. Queries read postings rarest-term first within a
budget; terms too common to scan in full only re-score the candidates rarer terms found.
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from langmem_plus.text.tokenize import QueryTerms

__all__ = ["KeywordIndex", "KeywordStats"]

_CHUNK = 500
_MIN_IDF = 0.01


def _chunks(seq: Sequence[Any], n: int = _CHUNK) -> Iterable[Sequence[Any]]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


@dataclass(frozen=True)
class KeywordStats:
    """Corpus statistics of the namespaces one query runs over."""

    n_docs: int
    avgdl: float


class KeywordIndex:
    """BM25 over per-namespace postings; the same formula as rank-bm25's `BM25Okapi`."""

    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        max_postings_scan: int = 20000,
    ) -> None:
        self.k1 = k1
        self.b = b
        self.epsilon = epsilon
        self.max_postings_scan = max_postings_scan
        self._avg_idf_cache: dict[tuple[tuple[int, ...], int, float, int, int], float] = {}
        self._writes = 0

    # ------------------------------------------------------------------ writes
    def add_many(
        self, conn: sqlite3.Connection, docs: Sequence[tuple[int, int, list[str]]]
    ) -> None:
        """Index documents given as (ns_id, item_id, tokens); the caller owns the transaction."""
        if not docs:
            return
        self._writes += 1
        per_ns_terms: dict[int, Counter[str]] = {}
        ns_delta: dict[int, list[int]] = {}
        counted: list[tuple[int, int, Counter[str], int]] = []
        for ns_id, item_id, tokens in docs:
            tf = Counter(tokens)
            counted.append((ns_id, item_id, tf, len(tokens)))
            per_ns_terms.setdefault(ns_id, Counter()).update(tf.keys())
            d = ns_delta.setdefault(ns_id, [0, 0])
            d[0] += 1
            d[1] += len(tokens)
        term_ids: dict[tuple[int, str], int] = {}
        for ns_id, dfs in per_ns_terms.items():
            terms = list(dfs)
            conn.executemany(
                "INSERT INTO terms(ns_id, term, df) VALUES (?, ?, ?) "
                "ON CONFLICT(ns_id, term) DO UPDATE SET df = df + excluded.df",
                [(ns_id, t, dfs[t]) for t in terms],
            )
            for i in range(0, len(terms), _CHUNK):
                part = terms[i : i + _CHUNK]
                marks = ",".join("?" * len(part))
                for tid, term in conn.execute(
                    f"SELECT id, term FROM terms WHERE ns_id=? AND term IN ({marks})",
                    (ns_id, *part),
                ):
                    term_ids[(ns_id, term)] = tid
        conn.executemany(
            "INSERT INTO postings(term_id, item_id, tf, dl) VALUES (?, ?, ?, ?)",
            [
                (term_ids[(ns_id, t)], item_id, n, dl)
                for ns_id, item_id, tf, dl in counted
                for t, n in tf.items()
            ],
        )
        conn.executemany(
            "UPDATE namespaces SET n_docs = n_docs + ?, total_len = total_len + ? WHERE id = ?",
            [(d[0], d[1], ns_id) for ns_id, d in ns_delta.items()],
        )

    def remove_many(self, conn: sqlite3.Connection, docs: Sequence[tuple[int, int, int]]) -> None:
        """Unindex documents given as (ns_id, item_id, doc_len)."""
        if not docs:
            return
        self._writes += 1
        ids = [d[1] for d in docs]
        term_dec: Counter[int] = Counter()
        for part in _chunks(ids):
            marks = ",".join("?" * len(part))
            for (tid,) in conn.execute(
                f"SELECT term_id FROM postings WHERE item_id IN ({marks})", tuple(part)
            ):
                term_dec[tid] += 1
            conn.execute(f"DELETE FROM postings WHERE item_id IN ({marks})", tuple(part))
        conn.executemany(
            "UPDATE terms SET df = df - ? WHERE id = ?", [(n, t) for t, n in term_dec.items()]
        )
        conn.executemany("DELETE FROM terms WHERE id = ? AND df <= 0", [(t,) for t in term_dec])
        ns_delta: dict[int, list[int]] = {}
        for ns_id, _item, dl in docs:
            d = ns_delta.setdefault(ns_id, [0, 0])
            d[0] += 1
            d[1] += dl
        conn.executemany(
            "UPDATE namespaces SET n_docs = n_docs - ?, total_len = total_len - ? WHERE id = ?",
            [(d[0], d[1], ns_id) for ns_id, d in ns_delta.items()],
        )

    # ------------------------------------------------------------------ reads
    def stats(self, conn: sqlite3.Connection, ns_ids: Sequence[int]) -> KeywordStats:
        n = tl = 0
        for part in _chunks(ns_ids):
            marks = ",".join("?" * len(part))
            row = conn.execute(
                f"SELECT COALESCE(SUM(n_docs),0), COALESCE(SUM(total_len),0) "
                f"FROM namespaces WHERE id IN ({marks})",
                tuple(part),
            ).fetchone()
            n += int(row[0])
            tl += int(row[1])
        return KeywordStats(n_docs=n, avgdl=(tl / n) if n else 0.0)

    def _idf(self, n_docs: int, df: int) -> float:
        return math.log(n_docs - df + 0.5) - math.log(df + 0.5)

    def _average_idf(
        self, conn: sqlite3.Connection, ns_ids: Sequence[int], n_docs: int, avgdl: float
    ) -> float:
        """Mean IDF over the vocabulary (BM25Okapi's floor for negative IDF), cached.

        Keyed by corpus size, mean length, this index's write count and SQLite's
        data_version (which moves when another connection commits).
        """
        key_ns = tuple(ns_ids)
        marks = ",".join("?" * len(key_ns))
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        cache_key = (key_ns, n_docs, avgdl, version, self._writes)
        cached = self._avg_idf_cache.get(cache_key)
        if cached is not None:
            return cached
        rows = conn.execute(
            f"SELECT term, SUM(df) FROM terms WHERE ns_id IN ({marks}) GROUP BY term LIMIT 500000",
            key_ns,
        ).fetchall()
        if not rows:
            return 0.0
        df = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))
        value = float(np.mean(np.log(n_docs - df + 0.5) - np.log(df + 0.5)))
        if len(self._avg_idf_cache) > 256:
            self._avg_idf_cache.clear()
        self._avg_idf_cache[cache_key] = value
        return value

    def _term_rows(
        self, conn: sqlite3.Connection, ns_ids: Sequence[int], q: QueryTerms
    ) -> dict[str, tuple[list[int], int]]:
        """term -> (term ids across the namespaces, summed df), for exact and prefix terms."""
        found: dict[str, tuple[list[int], int]] = {}
        marks_ns = ",".join("?" * len(ns_ids))
        if q.terms:
            for part in _chunks(list(q.terms), 200):
                marks = ",".join("?" * len(part))
                for tid, term, df in conn.execute(
                    f"SELECT id, term, df FROM terms WHERE ns_id IN ({marks_ns}) "
                    f"AND term IN ({marks})",
                    (*ns_ids, *part),
                ):
                    ids, total = found.get(term, ([], 0))
                    ids.append(tid)
                    found[term] = (ids, total + df)
        for prefix in q.prefixes:
            upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
            for tid, term, df in conn.execute(
                f"SELECT id, term, df FROM terms WHERE ns_id IN ({marks_ns}) "
                f"AND term >= ? AND term < ? ORDER BY df DESC LIMIT 32",
                (*ns_ids, prefix, upper),
            ):
                ids, total = found.get(term, ([], 0))
                ids.append(tid)
                found[term] = (ids, total + df)
        return found

    def search(
        self,
        conn: sqlite3.Connection,
        ns_ids: Sequence[int],
        q: QueryTerms,
        k: int,
        extra_candidates: Iterable[int] = (),
        weights: Mapping[str, float] | None = None,
    ) -> dict[int, float]:
        """BM25 scores of the best `k` items (plus any `extra_candidates`) for query `q`.

        `weights` (optional) multiplies a term's IDF: query term frequency, expansion terms.
        """
        extra = set(extra_candidates)
        if not ns_ids or not q:
            return {}
        st = self.stats(conn, ns_ids)
        if st.n_docs == 0:
            return {}
        found = self._term_rows(conn, ns_ids, q)
        if not found:
            return {}
        idf: dict[str, float] = {}
        need_avg = False
        for term, (_ids, df) in found.items():
            idf[term] = self._idf(st.n_docs, df)
            need_avg |= idf[term] <= 0
        if need_avg:
            # BM25Okapi's floor; deliberate difference: never <= 0 (on tiny corpora the mean
            # IDF is negative and rank-bm25 would rank a matching document below a blank one).
            floor = max(
                self.epsilon * self._average_idf(conn, ns_ids, st.n_docs, st.avgdl), _MIN_IDF
            )
            idf = {t: (v if v > 0 else floor) for t, v in idf.items()}
        if weights:  # per-term query weights (quality work; see docs/benchmarks.md)
            idf = {t: v * weights.get(t, 1.0) for t, v in idf.items()}
        order = sorted(found, key=lambda t: found[t][1])
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
                scored_vals.append(self._bm25(arr[:, 1], arr[:, 2], st.avgdl) * idf[term])
        scores: dict[int, float] = {}
        if scored_ids:
            all_ids = np.concatenate(scored_ids)
            all_vals = np.concatenate(scored_vals)
            uniq, inv = np.unique(all_ids, return_inverse=True)
            sums = np.bincount(inv, weights=all_vals)
            scores = dict(zip(uniq.tolist(), sums.tolist(), strict=True))
        for item_id in extra:
            scores.setdefault(item_id, 0.0)
        if deferred and scores:
            pool = self._top(scores, max(k * 5, 200)) | extra
            pool_ids = sorted(pool)
            for term in deferred:
                for tid in found[term][0]:
                    for part in _chunks(pool_ids):
                        marks = ",".join("?" * len(part))
                        rows = conn.execute(
                            f"SELECT item_id, tf, dl FROM postings WHERE term_id=? "
                            f"AND item_id IN ({marks})",
                            (tid, *part),
                        ).fetchall()
                        if not rows:
                            continue
                        arr = np.asarray(rows, dtype=np.float64)
                        vals = self._bm25(arr[:, 1], arr[:, 2], st.avgdl) * idf[term]
                        for item_id, v in zip(
                            arr[:, 0].astype(np.int64).tolist(), vals.tolist(), strict=True
                        ):
                            if item_id in scores:
                                scores[item_id] += v
        top = self._top(scores, k) | (extra & scores.keys())
        return {i: scores[i] for i in top}

    def _bm25(self, tf: np.ndarray, dl: np.ndarray, avgdl: float) -> np.ndarray:
        denom = tf + self.k1 * (1 - self.b + self.b * dl / (avgdl or 1.0))
        return tf * (self.k1 + 1) / denom

    @staticmethod
    def _top(scores: dict[int, float], k: int) -> set[int]:
        if len(scores) <= k:
            return set(scores)
        ids = np.fromiter(scores.keys(), dtype=np.int64, count=len(scores))
        vals = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
        part = np.argpartition(-vals, k - 1)[:k]
        return set(ids[part].tolist())
