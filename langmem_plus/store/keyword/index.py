"""Incremental BM25 keyword index kept in SQLite (terms + postings), scored like BM25Okapi.

Writes (store/keyword/writes.py) touch only the postings of the item written. Queries read postings
rarest-term first within a budget; terms too common to scan in full only re-score the
candidates rarer terms found. Where they are read from: a small one-namespace search from the
namespace's whole index held in memory (store/keyword/resident.py), other searches over few namespaces
from the per-term postings cache (store/keyword/cache.py, store/keyword/memory.py), the rest from SQLite (store/keyword/bm25.py).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from langmem_plus.store.db.database import in_chunks
from langmem_plus.store.keyword.cache import PostingsCache
from langmem_plus.store.keyword.docterms import doc_term_rows
from langmem_plus.store.keyword.memory import MemoryScoring, PreparedQuery
from langmem_plus.store.keyword.resident import TERMS_CHUNK, Resident
from langmem_plus.store.keyword.writes import KeywordWrites
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.text.tokenize import QueryTerms

__all__ = ["KeywordIndex", "KeywordStats"]

# Below this many documents a cold term costs ~0.05 ms to read and a user's session touches a
# few dozen terms: loading the whole index on the first search costs more than it saves (the
# 1,000 x 100-item layout: first-pass p95 2.8 -> 10.7 ms with it).
_WARM_MIN_DOCS = 2_000
# Searches over more namespaces than this read SQLite (a per-namespace cache would thrash).
_CACHE_MAX_NAMESPACES = 64
_MIN_IDF = 0.01


@dataclass(frozen=True)
class KeywordStats:
    """Corpus statistics of the namespaces one query runs over."""

    n_docs: int
    avgdl: float


class KeywordIndex(KeywordWrites, MemoryScoring):
    """BM25 over per-namespace postings; the same formula as rank-bm25's `BM25Okapi`."""

    def __init__(self, tuning: StoreTuning | None = None) -> None:
        """Parameters come from `tuning` (its defaults when None), so the index and the
        ranking cannot disagree."""
        cfg = tuning or StoreTuning()
        self.k1 = cfg.bm25_k1
        self.b = cfg.bm25_b
        self.epsilon = cfg.bm25_epsilon
        self.max_postings_scan = cfg.max_postings_scan
        # In-memory postings (store/keyword/cache.py) for searches over at most `_CACHE_MAX_NAMESPACES`
        # namespaces; a cap of 0 disables it and every read goes to SQLite.
        self._cache = (
            PostingsCache(cfg.keyword_cache_postings) if cfg.keyword_cache_postings > 0 else None
        )
        self._cached_postings_scan = cfg.cached_postings_scan
        self._cache_max_namespaces = _CACHE_MAX_NAMESPACES
        # Past this many documents a common term's postings are too long to score in full on
        # every query or to load cold: such searches read SQLite within `max_postings_scan`.
        self._cache_max_docs = cfg.keyword_cache_max_docs
        # Namespaces up to this size load their whole keyword index on their first search
        # instead of one cold read per new query term.
        self._cache_warm_docs = cfg.keyword_cache_warm_docs
        self._warm_min_docs = _WARM_MIN_DOCS
        # Searches over one namespace of at most this many documents read its whole keyword
        # index, held in memory as a `Resident` (store/keyword/resident.py).
        self._resident_docs = cfg.keyword_resident_docs
        # ... once it has been searched this many times with no keyword change in between
        # (until then the per-term cache answers, which costs less for one search).
        self._resident_after = cfg.keyword_resident_after
        self._avg_idf_cache: dict[tuple[tuple[int, ...], int, float, int, int], float] = {}
        self._writes = 0
        # Per-query memo (`query_scope`): statistics and the cache sync, read once per query
        # instead of once per keyword pass (a query makes three or four passes).
        self._scope: dict[Any, Any] | None = None

    def loads_whole(self, conn: sqlite3.Connection, ns_ids: Sequence[int]) -> bool:
        """Whether a search over these namespaces is small enough for in-memory structures to
        hold them whole (few namespaces, at most `keyword_cache_warm_docs` documents)."""
        return (
            len(ns_ids) <= self._cache_max_namespaces
            and self.stats(conn, ns_ids).n_docs <= self._cache_warm_docs
        )

    def serves_resident(self, ns_ids: Sequence[int]) -> bool:
        """Whether this query (its `query_scope`) is ranked from the whole in-memory index
        (`Resident`) of these namespaces (one small namespace, searched before)."""
        known = self._scope.get("resident") if self._scope is not None else None
        return known is not None and len(ns_ids) == 1 and known[0] == ns_ids[0]

    # ------------------------------------------------------------------ reads
    @contextmanager
    def query_scope(self) -> Iterator[None]:
        """Within one read transaction (the caller holds the store's lock): namespace
        statistics, a query's term rows and the postings-cache sync are read once, whatever
        the passes."""
        outer = self._scope
        if outer is None:
            self._scope = {}
        try:
            yield
        finally:
            self._scope = outer

    def stats(self, conn: sqlite3.Connection, ns_ids: Sequence[int]) -> KeywordStats:
        """Documents and mean length over the namespaces (memoised in a `query_scope`)."""
        scope = self._scope
        if scope is not None:
            key = ("stats", tuple(ns_ids))
            got = scope.get(key)
            if got is None:
                got = scope[key] = self._resident_stats(conn, ns_ids) or self._stats(conn, ns_ids)
            return got  # type: ignore[no-any-return]
        return self._stats(conn, ns_ids)

    def _resident_stats(
        self, conn: sqlite3.Connection, ns_ids: Sequence[int]
    ) -> KeywordStats | None:
        """One namespace's statistics from its `Resident` index, when the cache holds one
        after syncing (it mirrors the namespace's row: patched with every change synced)."""
        cache = self._cache
        if cache is None or len(ns_ids) != 1 or cache.held(ns_ids[0]) is None:
            return None
        self._sync_cache(conn)
        res = cache.current(conn, ns_ids[0])
        if res is None:
            return None
        n = res.n_docs
        return KeywordStats(n_docs=n, avgdl=(res.total_len / n) if n else 0.0)

    def _sync_cache(self, conn: sqlite3.Connection) -> None:
        """Bring the postings cache up to date with the keyword feed (once per query scope)."""
        scope = self._scope
        if self._cache is not None and (scope is None or not scope.get("synced")):
            self._cache.sync(conn)
            if scope is not None:
                scope["synced"] = True

    def _stats(self, conn: sqlite3.Connection, ns_ids: Sequence[int]) -> KeywordStats:
        n = tl = 0
        for part, marks in in_chunks(ns_ids):
            row = conn.execute(
                f"SELECT COALESCE(SUM(n_docs),0), COALESCE(SUM(total_len),0) "
                f"FROM namespaces WHERE id IN ({marks})",
                part,
            ).fetchone()
            n += int(row[0])
            tl += int(row[1])
        return KeywordStats(n_docs=n, avgdl=(tl / n) if n else 0.0)

    def _idf(self, n_docs: int, df: int) -> float:
        # a statistics row behind its postings (a damaged file) must not end the search
        return math.log(max(n_docs - df, 0) + 0.5) - math.log(df + 0.5)

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
    ) -> tuple[dict[str, tuple[list[int], int]], dict[int, int]]:
        """term -> (term ids across the namespaces, summed df), for exact and prefix terms;
        and term id -> namespace id."""
        found: dict[str, tuple[list[int], int]] = {}
        tid_ns: dict[int, int] = {}
        marks_ns = ",".join("?" * len(ns_ids))

        def add(tid: int, ns_id: int, term: str, df: int) -> None:
            ids, total = found.get(term, ([], 0))
            ids.append(tid)
            found[term] = (ids, total + df)
            tid_ns[tid] = ns_id

        if q.terms:
            for part, marks in in_chunks(q.terms, TERMS_CHUNK):
                for row in conn.execute(
                    f"SELECT id, ns_id, term, df FROM terms WHERE ns_id IN ({marks_ns}) "
                    f"AND term IN ({marks})",
                    (*ns_ids, *part),
                ):
                    add(*row)
        for prefix in q.prefixes:
            upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
            for row in conn.execute(
                f"SELECT id, ns_id, term, df FROM terms WHERE ns_id IN ({marks_ns}) "
                f"AND term >= ? AND term < ? ORDER BY df DESC LIMIT 32",
                (*ns_ids, prefix, upper),
            ):
                add(*row)
        return found, tid_ns

    def _small_resident(
        self, conn: sqlite3.Connection, ns_ids: Sequence[int], n_docs: int, avgdl: float
    ) -> Resident | None:
        """The `Resident` index of a search over one small namespace (the cache synced; small:
        at most `keyword_resident_docs` documents and within the memory cap) once the namespace
        was searched `keyword_resident_after` times without it (0: at once); the answer is noted
        in the query scope (for `doc_terms`, and so that a query asks once). None otherwise
        (the per-term cache or SQLite answers)."""
        if (
            self._cache is None
            or len(ns_ids) != 1
            or n_docs > self._resident_docs
            or n_docs * avgdl * 8 > self._cache.max_postings // 2
        ):
            return None
        scope = self._scope
        if scope is not None:
            known = scope.get(("resident", ns_ids[0]), False)
            if known is not False:
                return known  # type: ignore[no-any-return]
        resident = self._cache.resident(conn, ns_ids[0], self._resident_after)
        if scope is not None:
            scope[("resident", ns_ids[0])] = resident
            if resident is not None:
                scope["resident"] = (ns_ids[0], resident)
        return resident

    def doc_terms(
        self, conn: sqlite3.Connection, item_ids: Sequence[int]
    ) -> Iterable[tuple[str, int, int, int, int, int]]:
        """(term, item id, tf, dl, term id, df) of every term of the given items, by item id
        then term id: from this query's `Resident` index when it has one, else SQLite."""
        known = self._scope.get("resident") if self._scope is not None else None
        if known is not None:
            return known[1].doc_rows(conn, item_ids)  # type: ignore[no-any-return]
        return [row[:6] for row in doc_term_rows(conn, item_ids)]

    def _prepare(
        self,
        conn: sqlite3.Connection,
        ns_ids: Sequence[int],
        q: QueryTerms,
        weights: Mapping[str, float] | None,
    ) -> PreparedQuery | None:
        """Corpus statistics, the query's terms (rarest first) and their weighted IDF (once
        per query scope: the mass, the search and the vector-only candidates ask alike)."""
        if not ns_ids or not q:
            return None
        scope = self._scope
        if scope is None:
            return self._prepare_now(conn, ns_ids, q, weights)
        key = ("prepared", tuple(ns_ids), q.terms, q.prefixes, tuple((weights or {}).items()))
        if key not in scope:
            scope[key] = self._prepare_now(conn, ns_ids, q, weights)
        return scope[key]  # type: ignore[no-any-return]

    def _prepare_now(
        self,
        conn: sqlite3.Connection,
        ns_ids: Sequence[int],
        q: QueryTerms,
        weights: Mapping[str, float] | None,
    ) -> PreparedQuery | None:
        st = self.stats(conn, ns_ids)
        if st.n_docs == 0:
            return None
        scope = self._scope
        cached = (
            self._cache is not None
            and len(ns_ids) <= self._cache_max_namespaces
            and st.n_docs <= self._cache_max_docs
        )
        if cached:
            self._sync_cache(conn)
        resident = self._small_resident(conn, ns_ids, st.n_docs, st.avgdl) if cached else None
        if resident is not None and not q.prefixes:
            found, tid_ns = resident.term_rows(q.terms)
            idf_of = resident.idf_of
        else:
            key = ("terms", tuple(ns_ids), q.terms, q.prefixes)
            rows = scope.get(key) if scope is not None else None
            if rows is None:
                rows = self._term_rows(conn, ns_ids, q)
                if scope is not None:
                    scope[key] = rows  # the same query's next pass (vector-only candidates)
            found, tid_ns = rows
            idf_of = {}
        if not found:
            return None
        idf: dict[str, float] = {}
        need_avg = False
        for term, (_ids, df) in found.items():
            v = idf_of.get(df)
            if v is None:
                v = self._idf(st.n_docs, df)
                if resident is not None:
                    idf_of[df] = v  # the namespace's size is fixed while it is resident
            idf[term] = v
            need_avg |= v <= 0
        if need_avg:
            # BM25Okapi's floor; deliberate difference: never <= 0 (on tiny corpora the mean
            # IDF is negative and rank-bm25 would rank a matching document below a blank one).
            floor = _MIN_IDF
            if self.epsilon > 0:  # the mean IDF reads the whole vocabulary: only when used
                mean_idf = self._average_idf(conn, ns_ids, st.n_docs, st.avgdl)
                floor = max(self.epsilon * mean_idf, _MIN_IDF)
            idf = {t: (v if v > 0 else floor) for t, v in idf.items()}
        if weights:  # per-term query weights (quality work; see docs/benchmarks.md)
            idf = {t: v * weights.get(t, 1.0) for t, v in idf.items()}
        order = sorted(found, key=lambda t: found[t][1])
        if (
            cached
            and self._cache is not None
            and self._warm_min_docs <= st.n_docs <= self._cache_warm_docs
        ):
            for ns_id in ns_ids:
                self._cache.warm(conn, ns_id)
        return PreparedQuery(st.avgdl, found, tid_ns, idf, order, cached, resident)

    def query_mass(
        self,
        conn: sqlite3.Connection,
        ns_ids: Sequence[int],
        q: QueryTerms,
        weights: Mapping[str, float] | None = None,
    ) -> float:
        """The query's weighted IDF mass: the BM25 a document of average length holding every
        query term once would get. A document's BM25 over it is the share of the query it
        matches, on one scale for every query and corpus size (the keyword evidence of the
        absolute relevance). Terms no document holds count with the IDF of df = 0; a prefix
        counts once, with its best expansion's IDF."""
        if not ns_ids or not q:
            return 0.0
        n_docs = self.stats(conn, ns_ids).n_docs
        if n_docs == 0:
            return 0.0
        p = self._prepare(conn, ns_ids, q, weights)
        idf = p.idf if p is not None else {}
        w = weights or {}
        absent = self._idf(n_docs, 0)
        mass = sum(idf.get(t, absent * w.get(t, 1.0)) for t in q.terms)
        for prefix in q.prefixes:
            found = [v for t, v in idf.items() if t.startswith(prefix) and t not in q.terms]
            mass += max(found) if found else absent * w.get(prefix, 1.0)
        return float(mass)

    def term_docs(
        self, conn: sqlite3.Connection, ns_ids: Sequence[int], q: QueryTerms, weights: Any = None
    ) -> dict[str, int]:
        """Documents of the namespaces holding each of the query's exact terms (its prepared
        statistics, once per query scope)."""
        p = self._prepare(conn, ns_ids, q, weights)
        return {} if p is None else {t: p.found[t][1] for t in q.terms if t in p.found}

    def search(
        self,
        conn: sqlite3.Connection,
        ns_ids: Sequence[int],
        q: QueryTerms,
        k: int,
        extra_candidates: Iterable[int] | Callable[[], Iterable[int]] = (),
        weights: Mapping[str, float] | None = None,
    ) -> dict[int, float]:
        """BM25 scores of the best `k` items (plus any `extra_candidates`) for query `q`.

        `extra_candidates` may be a function: it is called once the postings are summed, so a
        caller can collect its candidates (the vector hits) as late as possible.

        `weights` (optional) multiplies a term's IDF: query term frequency, expansion terms.
        Terms are scored rarest first within a postings budget; a term past it only re-scores
        the best candidates found so far (exact whenever every term fits the budget).
        """
        got: list[set[int]] = []

        def extra() -> set[int]:
            if not got:
                ec = extra_candidates
                got.append(set(ec() if callable(ec) else ec))
            return got[0]

        p = self._prepare(conn, ns_ids, q, weights)
        if p is None:
            return {}
        sums = self._resident_sums(p) if p.resident is not None else None
        if sums is not None:  # already the best k and the extra candidates (_search_resident)
            return self._search_resident(sums, k, extra)
        if p.cached:
            scores = self._score_cached(conn, p.order, p.found, p.tid_ns, p.idf, p.avgdl, k, extra)
        else:
            scores = self._score_sqlite(conn, p.order, p.found, p.idf, p.avgdl, k, extra)
        top = self._top(scores, k) | (extra() & scores.keys())
        return {i: scores[i] for i in top}

    def score_items(
        self,
        conn: sqlite3.Connection,
        ns_ids: Sequence[int],
        q: QueryTerms,
        items: Iterable[int],
        weights: Mapping[str, float] | None = None,
    ) -> dict[int, float]:
        """BM25 of query `q` for the given items only (those with a match), nothing else.

        Cheaper than `search` when only known candidates need scores (a feedback round that
        re-scores the candidates): each term looks the items up in its postings.
        """
        p = self._prepare(conn, ns_ids, q, weights)
        if p is None:
            return {}
        sums = self._resident_sums(p) if p.resident is not None else None
        if sums is not None:
            return self._score_items_resident(sums, items)
        pool = sorted(set(items))
        if not pool:
            return {}
        if p.cached:
            return self._score_items_cached(conn, p, pool)
        scores = dict.fromkeys(pool, 0.0)
        for term in p.order:
            for tid in p.found[term][0]:
                self._rescore_sqlite(conn, tid, pool, p.idf[term], p.avgdl, scores)
        return {i: v for i, v in scores.items() if v > 0}
