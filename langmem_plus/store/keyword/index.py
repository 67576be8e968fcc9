"""Incremental BM25 keyword index kept in SQLite (terms + postings), scored like BM25Okapi
(the formula: store/keyword/bm25.py).

Writes (store/keyword/writes.py) touch only the postings of the item written. Queries read
postings rarest term first within a budget; terms too common to read in full only re-score the
candidates rarer terms found. Where from: a search over one namespace of at most
`keyword_resident_docs` documents (a user's memories) from that namespace's whole index held
in memory (store/keyword/resident.py); other searches over at most 64 namespaces and
`keyword_cache_max_docs` documents from the per-term postings cache (store/keyword/cache.py,
scored by store/keyword/memory.py); the rest from SQLite (store/keyword/scan.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from langmem_plus.store.db.database import in_chunks
from langmem_plus.store.keyword import memory, scan, writes
from langmem_plus.store.keyword.bm25 import (
    MIN_IDF,
    KeywordScope,
    Okapi,
    idf,
    idf_floor,
    mean_idf,
    top_ids,
)
from langmem_plus.store.keyword.cache import PostingsCache
from langmem_plus.store.keyword.docterms import doc_term_rows
from langmem_plus.store.keyword.memory import PreparedQuery
from langmem_plus.store.keyword.resident import TERMS_CHUNK, Resident
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.text.tokenize import QueryTerms

__all__ = ["KeywordIndex", "KeywordStats"]

# Below this many documents a cold term costs ~0.05 ms to read and a user's session touches a
# few dozen terms: loading the whole index on the first search costs more than it saves (the
# 1,000 x 100-item layout: first-pass p95 2.8 -> 10.7 ms with it).
_WARM_MIN_DOCS = 2_000
# Searches over more namespaces than this read SQLite (a per-namespace cache would thrash).
_CACHE_MAX_NAMESPACES = 64
# Writes between two trims of the keyword feed to its newest entries.
_COMPACT_EVERY = 256


@dataclass(frozen=True)
class KeywordStats:
    """Corpus statistics of the namespaces one query runs over."""

    n_docs: int
    avgdl: float


class KeywordIndex:
    """BM25 over per-namespace postings; the same formula as rank-bm25's `BM25Okapi`."""

    def __init__(self, tuning: StoreTuning | None = None) -> None:
        """Parameters come from `tuning` (its defaults when None), so the index and the
        ranking cannot disagree."""
        cfg = tuning or StoreTuning()
        self.okapi = Okapi(cfg.bm25_k1, cfg.bm25_b, cfg.bm25_epsilon)
        self.max_postings_scan = cfg.max_postings_scan
        # In-memory postings (store/keyword/cache.py) for searches over at most
        # `_CACHE_MAX_NAMESPACES` namespaces and `keyword_cache_max_docs` documents (past them a
        # common term's postings are too long to score in full per query); a cap of 0 turns it
        # off and every read goes to SQLite.
        self._cache = (
            PostingsCache(cfg.keyword_cache_postings) if cfg.keyword_cache_postings > 0 else None
        )
        self._cached_postings_scan = cfg.cached_postings_scan
        self._cache_max_docs = cfg.keyword_cache_max_docs
        # Namespaces of `_WARM_MIN_DOCS` to this many documents load their whole postings into
        # the cache on their first search instead of one cold read per new query term.
        self._cache_warm_docs = cfg.keyword_cache_warm_docs
        self._warm_min_docs = _WARM_MIN_DOCS
        # Searches over one namespace of at most this many documents are ranked from its whole
        # keyword index, held in memory as a `Resident` (store/keyword/resident.py).
        self._resident_docs = cfg.keyword_resident_docs
        self._writes = 0
        # Per-query memo (`query_scope`): statistics, term rows and the change-feed sync, read
        # once per query instead of once per keyword pass (a query makes three or four).
        self._scope: dict[Any, Any] | None = None

    # ------------------------------------------------------------------ writes
    def add_many(
        self, conn: sqlite3.Connection, docs: Sequence[tuple[int, int, list[str]]]
    ) -> None:
        """Index documents given as (ns_id, item_id, tokens); the caller owns the transaction."""
        if docs:
            self._writes += 1
            writes.add_docs(conn, docs, self._writes % _COMPACT_EVERY == 0)

    def remove_many(self, conn: sqlite3.Connection, docs: Sequence[tuple[int, int, int]]) -> None:
        """Unindex documents given as (ns_id, item_id, doc_len)."""
        if docs:
            self._writes += 1
            writes.remove_docs(conn, docs, self._writes % _COMPACT_EVERY == 0)

    def clear(self, conn: sqlite3.Connection) -> None:
        """Empty the index before a rebuild (reindex): every process's cache drops it."""
        self._writes += 1
        writes.clear(conn)

    # ------------------------------------------------------------------ reads
    def serves_resident(self, ns_ids: Sequence[int]) -> bool:
        """Whether this query (its `query_scope`) is ranked from the whole in-memory index
        (`Resident`) of these namespaces (one small namespace)."""
        known = self._scope.get("resident") if self._scope is not None else None
        return known is not None and len(ns_ids) == 1 and known[0] == ns_ids[0]

    @contextmanager
    def query_scope(self) -> Iterator[None]:
        """Within one read transaction (the caller holds the store's lock): namespace
        statistics, a query's term rows and the change-feed sync are read once, whatever the
        passes."""
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
        self._sync(conn)
        res = cache.current(conn, ns_ids[0])
        if res is None:
            return None
        n = res.n_docs
        return KeywordStats(n_docs=n, avgdl=(res.total_len / n) if n else 0.0)

    def _sync(self, conn: sqlite3.Connection) -> None:
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

    def _mean_idf(self, conn: sqlite3.Connection, ns_ids: Sequence[int], n_docs: int) -> float:
        """Mean IDF over the namespaces' vocabulary (BM25Okapi's floor base; read only when
        `bm25_epsilon` > 0, since it reads every term)."""
        marks = ",".join("?" * len(ns_ids))
        rows = conn.execute(
            f"SELECT SUM(df) FROM terms WHERE ns_id IN ({marks}) GROUP BY term LIMIT 500000",
            tuple(ns_ids),
        ).fetchall()
        return mean_idf(n_docs, np.fromiter((r[0] for r in rows), np.float64, len(rows)))

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

    def _resident(
        self, conn: sqlite3.Connection, ns_ids: Sequence[int], st: KeywordStats
    ) -> Resident | None:
        """The `Resident` index of a search over one small namespace (at most
        `keyword_resident_docs` documents and within half the memory cap), synced; noted in the
        query scope (for `doc_terms`, and so that a query asks once). None otherwise (the
        per-term cache or SQLite answers)."""
        cache = self._cache
        if (
            cache is None
            or len(ns_ids) != 1
            or st.n_docs > self._resident_docs
            or st.n_docs * st.avgdl * 8 > cache.max_postings // 2
        ):
            return None
        scope = self._scope
        if scope is not None:
            known = scope.get(("resident", ns_ids[0]))
            if known is not None:
                return known  # type: ignore[no-any-return]
        self._sync(conn)
        resident = cache.resident(conn, ns_ids[0])
        if scope is not None:
            scope[("resident", ns_ids[0])] = resident
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
        cache = self._cache
        cached = (
            cache is not None
            and len(ns_ids) <= _CACHE_MAX_NAMESPACES
            and st.n_docs <= self._cache_max_docs
        )
        if cached:
            self._sync(conn)
        resident = self._resident(conn, ns_ids, st) if cached else None
        if resident is not None and not q.prefixes:
            found, tid_ns = resident.term_rows(q.terms)
        else:
            key = ("terms", tuple(ns_ids), q.terms, q.prefixes)
            rows = scope.get(key) if scope is not None else None
            if rows is None:
                rows = self._term_rows(conn, ns_ids, q)
                if scope is not None:
                    scope[key] = rows  # the same query's next pass (vector-only candidates)
            found, tid_ns = rows
        if not found:
            return None
        weighed = {term: idf(st.n_docs, df) for term, (_ids, df) in found.items()}
        if any(v <= 0 for v in weighed.values()):
            # BM25Okapi's floor; deliberate difference: never <= 0 (on tiny corpora the mean
            # IDF is negative and rank-bm25 would rank a matching document below a blank one).
            # The mean IDF reads the whole vocabulary: only when `bm25_epsilon` uses it.
            eps = self.okapi.epsilon
            floor = idf_floor(eps, self._mean_idf(conn, ns_ids, st.n_docs) if eps > 0 else 0.0)
            weighed = {t: (v if v > 0 else floor) for t, v in weighed.items()}
        else:
            floor = MIN_IDF
        if weights:  # per-term query weights (quality work; see docs/benchmarks.md)
            weighed = {t: v * weights.get(t, 1.0) for t, v in weighed.items()}
        order = sorted(found, key=lambda t: found[t][1])
        if (
            cache is not None
            and cached
            and self._warm_min_docs <= st.n_docs <= self._cache_warm_docs
        ):
            for ns_id in ns_ids:
                cache.warm(conn, ns_id)
        return PreparedQuery(st.avgdl, found, tid_ns, weighed, order, cached, resident, floor)

    def scope(
        self,
        conn: sqlite3.Connection,
        ns_ids: Sequence[int],
        q: QueryTerms,
        weights: Mapping[str, float] | None = None,
    ) -> KeywordScope:
        """The query's scope as the keyword statistics read it (`bm25.KeywordScope`): the
        namespaces' documents, the df of every term found (the query's terms and its prefixes'
        expansions) and the IDF floor (its prepared statistics, once per query scope)."""
        if not ns_ids:
            return KeywordScope(0)
        n_docs = self.stats(conn, ns_ids).n_docs
        p = self._prepare(conn, ns_ids, q, weights) if n_docs and q else None
        if p is None:
            return KeywordScope(n_docs)
        return KeywordScope(n_docs, {t: df for t, (_ids, df) in p.found.items()}, p.floor)

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
        From SQLite, terms are scored rarest first within a postings budget; a term past it
        only re-scores the best candidates found so far (exact whenever every term fits).
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
        budget = self._cached_postings_scan
        sums = memory.resident_sums(p, self.okapi, budget) if p.resident is not None else None
        if sums is not None:  # already the best k and the extra candidates
            return memory.search_resident(sums, k, extra)
        if p.cached:
            assert self._cache is not None
            scores = memory.scores_cached(self._cache, conn, p, k, extra, budget, self.okapi)
        else:
            scores = scan.scores(
                conn, p.order, p.found, p.idf, p.avgdl, k, extra, self.max_postings_scan, self.okapi
            )
        top = top_ids(scores, k) | (extra() & scores.keys())
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
        budget = self._cached_postings_scan
        sums = memory.resident_sums(p, self.okapi, budget) if p.resident is not None else None
        if sums is not None:
            return memory.score_items_resident(sums, items)
        pool = sorted(set(items))
        if not pool:
            return {}
        if p.cached:
            assert self._cache is not None
            return memory.score_items_cached(self._cache, conn, p, pool, self.okapi)
        scores = dict.fromkeys(pool, 0.0)
        for term in p.order:
            for tid in p.found[term][0]:
                scan.rescore(conn, tid, pool, p.idf[term], p.avgdl, scores, self.okapi)
        return {i: v for i, v in scores.items() if v > 0}
