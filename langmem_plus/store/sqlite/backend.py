"""The backend seam: what the ranker needs from storage, and its SQLite implementation.

`SearchBackend` is the small interface a second backend (e.g. Milvus) implements so that the
`Ranker` (candidates, fusion, feedback, neighbours, the spec score and its explanation) and
every feature above the store are written once. It has three parts:

* items: namespace ids, rows by id (full or light), a filtered scan, substring pre-selection,
  insertion-order neighbours, namespace listing;
* keyword candidates: BM25 search, BM25 of given ids, document count, the query's IDF mass
  (the scale of the absolute keyword evidence), which of the query's terms the namespaces hold
  (the relevance judgement's names), the terms of given documents (for pseudo-relevance
  feedback), the document frequency of the query's terms;
* vector candidates: top-k by cosine, and the cosine of given ids.

Every method takes `conn`, the read session the store opened for the whole batch (for SQLite a
connection inside a read transaction, under the store's lock), so that one query sees one
snapshot. `SqliteBackend` wraps `KeywordIndex`, `VectorIndex` and `RowCache` over the SQLite
database; the write path (items, postings, vectors in one transaction) is the store's.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
from langgraph.store.base import MatchCondition

from langmem_plus.store.db.database import in_chunks
from langmem_plus.store.keyword.bm25 import KeywordScope
from langmem_plus.store.keyword.index import KeywordIndex
from langmem_plus.store.seams import CandidateRow, PostingRow, RowFilter, VectorSearch
from langmem_plus.store.sqlite import rows as sql
from langmem_plus.store.sqlite.rowcache import RowCache
from langmem_plus.store.vector.index import ExactCosines, VectorIndex, decode_vecs
from langmem_plus.text.tokenize import QueryTerms

__all__ = [
    "SqliteBackend",
]


class _SqliteVectorSearch:
    """`VectorSearch` over `VectorIndex`: exact namespaces from FAISS, the rest from SQLite."""

    def __init__(
        self,
        backend: SqliteBackend,
        conn: sqlite3.Connection,
        finish: Callable[[], tuple[dict[int, float], ExactCosines]],
        qvec: np.ndarray,
    ) -> None:
        self._backend, self._conn, self._finish, self._qvec = backend, conn, finish, qvec
        self._exact: ExactCosines | None = None
        self._hits: dict[int, float] | None = None
        self._with: tuple[np.ndarray, ExactCosines] | None = None  # `cosines_with`'s last

    def hits(self) -> dict[int, float]:
        if self._hits is None:
            self._hits, self._exact = self._finish()
        return self._hits

    def cosines(self, item_ids: Sequence[int]) -> dict[int, float]:
        return self._cosines(item_ids, self._exact, self._qvec)

    def cosines_with(self, item_ids: Sequence[int], qvec: np.ndarray) -> dict[int, float]:
        self.hits()  # the namespaces' exact indexes, as the search found them
        exact = self._exact
        if exact is not None:  # one `ExactCosines` per vector asked for (its scan is kept)
            held = self._with
            if held is None or held[0] is not qvec:
                q = np.asarray(qvec, dtype=np.float32)
                held = self._with = (qvec, exact.with_query(q / (np.linalg.norm(q) or 1.0)))
            exact = held[1]
        return self._cosines(item_ids, exact, qvec)

    def _cosines(
        self, item_ids: Sequence[int], exact: ExactCosines | None, qvec: np.ndarray
    ) -> dict[int, float]:
        got = exact.lookup(item_ids) if exact is not None else {}
        rest = [i for i in item_ids if i not in got]
        if rest and not (exact is not None and exact.complete):  # HNSW namespaces
            got = {**got, **self._backend.stored_cosines(self._conn, rest, qvec)}
        return got


class SqliteBackend:
    """`SearchBackend` over the SQLite database and the indexes derived from it."""

    def __init__(
        self,
        keyword: KeywordIndex,
        vector: VectorIndex | None,
        rowcache: RowCache,
        dims: int,
    ) -> None:
        self.keyword = keyword
        self.vector = vector
        self.rowcache = rowcache
        self.dims = dims

    # ---------------------------------------------------------------- items
    def namespace_ids(self, conn: Any, prefix: Sequence[str]) -> list[int]:
        return sql.namespace_ids(conn, prefix)

    def read_item(self, conn: Any, namespace: Sequence[str], key: str) -> CandidateRow | None:
        return sql.read_item(conn, namespace, key)

    def rows(self, conn: Any, ids: Iterable[int], full: bool = True) -> dict[int, CandidateRow]:
        cache = self.rowcache
        if not (full and cache.full):
            return sql.read_rows(conn, ids, full)
        cache.sync(conn)  # full rows of small namespaces loaded whole (light_rows)
        got, missing = cache.get_full(ids)
        if missing:
            got.update(sql.read_rows(conn, missing, True))
        return got

    def light_rows(
        self, conn: Any, ns_ids: Sequence[int], ids: Iterable[int]
    ) -> dict[int, CandidateRow]:
        """Light rows through the row cache (store/sqlite/rowcache.py); a namespace whose
        keyword index is held whole (`KeywordIndex.serves_resident`) has its full rows loaded
        whole on first use, for `rows` to read the winners from memory too."""
        cache = self.rowcache
        if cache.max_rows <= 0:  # turned off (`row_cache_rows=0`)
            return sql.read_rows(conn, ids, full=False)
        cache.sync(conn)
        if self.keyword.serves_resident(ns_ids):
            cache.warm(conn, ns_ids, sql.namespace_full_rows)
        return cache.get(conn, ids, lambda c, missing: sql.read_rows(c, missing, full=False))

    def scan(
        self,
        conn: Any,
        ns_ids: Sequence[int],
        keep: Callable[[CandidateRow], bool],
        stop: int | None,
        flt: Mapping[str, Any] | None = None,
    ) -> list[CandidateRow]:
        return sql.scan_rows(conn, ns_ids, keep, stop, RowFilter(flt).columns if flt else None)

    def substring_candidates(
        self, conn: Any, ns_ids: Sequence[int], word: str, k: int
    ) -> list[tuple[int, str]]:
        return sql.like_rows(conn, ns_ids, word, k)

    def adjacent(self, conn: Any, ids: Iterable[int]) -> dict[int, list[int]]:
        return sql.adjacent(conn, ids)

    def list_namespaces(
        self,
        conn: Any,
        now: float | None,
        match_conditions: Sequence[MatchCondition] | None,
        max_depth: int | None,
    ) -> list[tuple[str, ...]]:
        return sql.list_namespaces(conn, now, match_conditions, max_depth)

    # ---------------------------------------------------------------- keyword
    def query_scope(self) -> AbstractContextManager[None]:
        return self.keyword.query_scope()

    def keyword_search(
        self,
        conn: Any,
        ns_ids: Sequence[int],
        q: QueryTerms,
        k: int,
        extra_candidates: Iterable[int] | Callable[[], Iterable[int]] = (),
        weights: Mapping[str, float] | None = None,
    ) -> dict[int, float]:
        return self.keyword.search(conn, ns_ids, q, k, extra_candidates, weights)

    def keyword_score(
        self,
        conn: Any,
        ns_ids: Sequence[int],
        q: QueryTerms,
        items: Iterable[int],
        weights: Mapping[str, float] | None = None,
    ) -> dict[int, float]:
        return self.keyword.score_items(conn, ns_ids, q, items, weights)

    def keyword_docs(self, conn: Any, ns_ids: Sequence[int]) -> int:
        return self.keyword.stats(conn, ns_ids).n_docs

    def keyword_scope(
        self,
        conn: Any,
        ns_ids: Sequence[int],
        q: QueryTerms,
        weights: Mapping[str, float] | None = None,
    ) -> KeywordScope:
        return self.keyword.scope(conn, ns_ids, q, weights)

    def doc_terms(self, conn: Any, item_ids: Sequence[int]) -> Iterable[PostingRow]:
        return self.keyword.doc_terms(conn, item_ids)

    # ---------------------------------------------------------------- vector
    @property
    def has_vectors(self) -> bool:
        return self.vector is not None

    def vector_search(
        self, conn: Any, ns_ids: Sequence[int], qvec: np.ndarray, k: int
    ) -> VectorSearch:
        assert self.vector is not None
        finish = self.vector.begin_search_items(conn, ns_ids, qvec, k)
        return _SqliteVectorSearch(self, conn, finish, qvec)

    def stored_cosines(
        self, conn: Any, item_ids: Sequence[int], qvec: np.ndarray
    ) -> dict[int, float]:
        """Exact cosine of the query with the stored vectors of items (max over an item's
        paths): exact (flat) namespaces' vectors from the in-memory index, the rest from
        SQLite."""
        q = qvec / (np.linalg.norm(qvec) or 1.0)
        out: dict[int, float] = {}
        pairs: list[tuple[int, int]] = []
        for part, qs in in_chunks(item_ids):
            pairs.extend(
                conn.execute(f"SELECT id, item_id FROM vectors WHERE item_id IN ({qs})", part)
            )
        if not pairs:
            return out
        held = self.vector.reconstruct([p[0] for p in pairs]) if self.vector is not None else {}
        blobs: dict[int, bytes] = {}
        for part, qs in in_chunks([p[0] for p in pairs if p[0] not in held]):
            blobs.update(conn.execute(f"SELECT id, vec FROM vectors WHERE id IN ({qs})", part))
        sims: dict[int, float] = {}
        if held:
            vids = list(held)
            mat = np.stack([held[v] for v in vids])
            sims.update(zip(vids, (mat @ q).tolist(), strict=True))
        if blobs:
            vids = list(blobs)
            mat = decode_vecs([blobs[v] for v in vids], self.dims)
            norms = np.linalg.norm(mat, axis=1)
            norms[norms == 0] = 1.0
            sims.update(zip(vids, ((mat @ q) / norms).tolist(), strict=True))
        for vid, item_id in pairs:
            sim = sims.get(vid)
            if sim is not None and sim > out.get(item_id, -math.inf):
                out[item_id] = sim
        return out
