"""`SearchBackend` over Milvus: what the `Ranker` reads, from the two collections of
store/milvus/schema.py.

The keyword signal is Milvus's BM25 over the tokens this project's tokenizer produced (jieba
for Chinese; stored space-separated in the `text` field, analysed again by Milvus's jieba
tokenizer, so both sides of the match see the same words as the SQLite index). The query's
term weights (repeated terms, one-character Chinese terms, feedback terms) are honoured: BM25
is a sum over terms, so a weighted query is scored term by term on the candidates. The vector
signal is Milvus's COSINE search over every embedded text of an item (the best per item).

Ids: the ranker works on integers; an item's is its `seq` (insertion order, so ties break
towards the newest item as on SQLite). A `MilvusSession` maps the ids it handed out back to
primary keys for the rest of its batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np
from langgraph.store.base import MatchCondition

from langmem_plus.store.keyword import bm25
from langmem_plus.store.milvus.filters import filter_expr
from langmem_plus.store.milvus.keyword import ClientBM25, ScopeIndex
from langmem_plus.store.milvus.schema import (
    FULL_FIELDS,
    and_,
    h,
    in_expr,
    item_pk,
    like_pattern,
    ns_prefix_expr,
    to_row,
)
from langmem_plus.store.milvus.session import MAX_LIMIT, MilvusSession
from langmem_plus.store.milvus.stats import StatsBook, scope_expr
from langmem_plus.store.seams import (
    NS_SEP,
    CandidateRow,
    PostingRow,
    VectorSearch,
    match_namespaces,
)
from langmem_plus.text.tokenize import QueryTerms

__all__ = ["MilvusSearch"]

_CHUNK = 1000  # primary keys per `in` expression


def _bm25(hit: Mapping[str, Any]) -> float:
    # Milvus Lite reports BM25 as a negative distance, a server as a positive score.
    return abs(float(hit["distance"]))


class _MilvusVectorSearch:
    """`VectorSearch` over the vectors collection."""

    def __init__(
        self, conn: MilvusSession, expr: str, qvec: np.ndarray, k: int, params: dict[str, Any]
    ) -> None:
        self.conn, self.expr, self.k, self.params = conn, expr, k, params
        self.q = qvec / (np.linalg.norm(qvec) or 1.0)
        self._hits: dict[int, float] | None = None

    def hits(self) -> dict[int, float]:
        if self._hits is None:
            got = self.conn.search(
                "vectors",
                [self.q.astype(np.float32).tolist()],
                "vec",
                self.k * 2,  # an item with several texts fills several places
                self.expr,
                output_fields=["seq", "item"],
                search_params=self.params,
            )
            self.conn.remember(got)
            best: dict[int, float] = {}
            for hit in got:
                sid, sim = int(hit["seq"]), float(hit["distance"])
                if sim > best.get(sid, -np.inf):
                    best[sid] = sim
            top = sorted(best.items(), key=lambda kv: -kv[1])[: self.k]
            self._hits = dict(top)
        return self._hits

    def cosines(self, item_ids: Sequence[int]) -> dict[int, float]:
        return self._cosines(item_ids, self.q)

    def cosines_with(self, item_ids: Sequence[int], qvec: np.ndarray) -> dict[int, float]:
        q = np.asarray(qvec, dtype=np.float64)
        return self._cosines(item_ids, q / (np.linalg.norm(q) or 1.0))

    def _cosines(self, item_ids: Sequence[int], q: np.ndarray) -> dict[int, float]:
        pks = self.conn.pks_of(item_ids)
        out: dict[int, float] = {}
        for ent in self.conn.by_pks("vectors", "item", pks, ["seq", "vec"], self.expr):
            v = np.asarray(ent["vec"], dtype=np.float64)
            sim = float(v @ q / (np.linalg.norm(v) or 1.0))
            sid = int(ent["seq"])
            if sim > out.get(sid, -np.inf):
                out[sid] = sim
        return out


class MilvusSearch:
    """`SearchBackend` over Milvus (see the module docstring)."""

    def __init__(
        self,
        has_vectors: bool,
        vector_params: dict[str, Any],
        common_term_ratio: float,
        client_bm25: ClientBM25 | None = None,
        filter_field: str | None = None,
        rooted: bool = False,
        stats: StatsBook | None = None,
    ) -> None:
        """`client_bm25`: score the keyword side with this project's BM25 over Milvus's
        matches (store/milvus/keyword.py); None keeps Milvus's own BM25 scores everywhere.
        `filter_field`: the JSON copy of the values that search filters are pushed down to
        (store/milvus/filters.py); None: filters run client-side only. `rooted`: the collections
        have the `root` partition key (store/milvus/schema.py), named in every search it can be.
        `stats`: the statistics rows (store/milvus/stats.py) a search reads its scope's counts and
        namespaces from; None: the scope is counted from its items."""
        self._has_vectors = has_vectors
        self._vector_params = vector_params
        self._common_ratio = common_term_ratio
        self._client_bm25 = client_bm25
        self._filter_field = filter_field
        self._rooted = rooted
        self._stats = stats

    def _exact(self, conn: MilvusSession, expr: str) -> ScopeIndex | None:
        """The scope's client-side BM25 statistics, or None where Milvus's BM25 scores."""
        return self._client_bm25.scope(conn, expr) if self._client_bm25 is not None else None

    # ---------------------------------------------------------------- items
    def namespace_ids(self, conn: MilvusSession, prefix: Sequence[str]) -> list[int]:
        """One id for the prefix's scope, none when it holds no item. With statistics rows
        (store/milvus/stats.py) one small request gives the scope's counts and namespaces; without,
        the client-side BM25's listing of the scope (which the keyword side reads next)
        answers."""
        st = self._stats.scope(conn, prefix, self._rooted) if self._stats else None
        if st is None:
            expr = ns_prefix_expr(prefix, self._rooted)
            sc = self._exact(conn, expr) if prefix else None
            known = bool(sc and sc.n_docs)
        else:
            if not st.namespaces:
                return []
            expr = scope_expr(prefix, st, self._rooted)
            n_docs, total = st.counts.n_docs, st.counts.total_len
            if self._client_bm25 is not None:
                conn.kw_scopes[expr] = self._client_bm25.from_counts(n_docs, total)
            conn.doc_counts[and_(expr, "doc_len > 0")] = max(0, n_docs)
            known = st.counts.n_items > 0
        if not known and not conn.query(conn.names.items, expr, ["pk"], limit=1):
            return []
        conn.scopes.append(expr)
        return [len(conn.scopes) - 1]

    def _scope(self, conn: MilvusSession, ns_ids: Sequence[int]) -> str:
        """The expression of the namespaces (`namespace_ids` gives one id per prefix)."""
        conn.scope = conn.scopes[ns_ids[0]] if ns_ids else 'pk == ""'
        return conn.scope

    def read_item(
        self, conn: MilvusSession, namespace: Sequence[str], key: str
    ) -> CandidateRow | None:
        got = conn.query(conn.names.items, f'pk == "{item_pk(namespace, key)}"', FULL_FIELDS)
        if not got:
            return None
        conn.remember(got)
        return to_row(got[0], True)

    def rows(
        self, conn: MilvusSession, ids: Iterable[int], full: bool = True
    ) -> dict[int, CandidateRow]:
        """Full rows (light rows are full rows here: one request per batch of candidates,
        kept for the batch, so the winners need no second read)."""
        ids = list(ids)
        missing = [i for i in ids if i not in conn.full]
        if missing:
            for e in conn.by_pks("items", "pk", conn.pks_of(missing), FULL_FIELDS):
                conn.full[int(e["seq"])] = to_row(e, True)
        return {i: conn.full[i] for i in ids if i in conn.full}

    def light_rows(
        self, conn: MilvusSession, ns_ids: Sequence[int], ids: Iterable[int]
    ) -> dict[int, CandidateRow]:
        return self.rows(conn, ids)

    def scan(
        self,
        conn: MilvusSession,
        ns_ids: Sequence[int],
        keep: Callable[[CandidateRow], bool],
        stop: int | None,
        flt: Mapping[str, Any] | None = None,
    ) -> list[CandidateRow]:
        """Full rows in insertion order that `keep` accepts: the ids of the items the
        filter's expression admits (store/milvus/filters.py) are listed and sorted first, then
        read in order a page at a time until `stop` rows passed."""
        field = self._filter_field
        expr = and_(self._scope(conn, ns_ids), filter_expr(flt, field) if field else "")
        order = sorted(
            conn.query_all(conn.names.items, expr, ["pk", "seq"]),
            key=lambda e: int(e["seq"]),
        )
        conn.remember(order)
        out: list[CandidateRow] = []
        for i in range(0, len(order), _CHUNK):
            part = [e["pk"] for e in order[i : i + _CHUNK]]
            got = conn.by_pks("items", "pk", part, FULL_FIELDS)
            for row in sorted((to_row(e, True) for e in got), key=lambda r: r.id):
                if keep(row):
                    out.append(row)
                    if stop is not None and len(out) >= stop:
                        return out
        return out

    def substring_candidates(
        self, conn: MilvusSession, ns_ids: Sequence[int], word: str, k: int
    ) -> list[tuple[int, str]]:
        pat = like_pattern(word)
        if pat is None:
            return []
        expr = and_(self._scope(conn, ns_ids), "indexed == true", f"value like {pat}")
        got = conn.query(conn.names.items, expr, ["pk", "seq", "value"], limit=MAX_LIMIT)
        conn.remember(got)
        got.sort(key=lambda e: -int(e["seq"]))
        return [(int(e["seq"]), e["value"]) for e in got[:k]]

    def adjacent(self, conn: MilvusSession, ids: Iterable[int]) -> dict[int, list[int]]:
        """id -> the items written just before and after it in its namespace and session
        (on SQLite: in its namespace; only same-session neighbours are used either way)."""
        ids = set(ids)
        keys = {  # (namespace hash, session hash) of the rows this batch read already
            i: (h(r.namespace), h(r.session) if r.session else "")
            for i in ids
            if (r := conn.full.get(i)) is not None and r.namespace is not None
        }
        rest = conn.pks_of(i for i in ids if i not in keys)
        for e in conn.by_pks("items", "pk", rest, ["pk", "seq", "ns", "session_h"]):
            keys[int(e["seq"])] = (e["ns"], e["session_h"])
        groups: dict[tuple[str, str], list[int]] = {}
        for sid, (ns, sh) in keys.items():
            if sh:
                groups.setdefault((ns, sh), []).append(sid)
        out: dict[int, list[int]] = {sid: [] for sid in keys}
        if not groups:
            return out
        expr = and_(
            conn.scope,  # the search's scope: its partition key, for a cluster to prune on
            in_expr("ns", sorted({ns for ns, _ in groups})),
            in_expr("session_h", sorted({sh for _, sh in groups})),
        )  # one request for every session involved (a superset, split below)
        fields = ["pk", "seq", "ns", "session_h"]
        found = conn.query(conn.names.items, expr, fields, limit=MAX_LIMIT)
        if len(found) >= MAX_LIMIT:  # sessions too long for one request: page through
            found = list(conn.query_all(conn.names.items, expr, fields))
        conn.remember(found)
        orders: dict[tuple[str, str], list[int]] = {}
        for e in found:
            orders.setdefault((e["ns"], e["session_h"]), []).append(int(e["seq"]))
        for group, members in groups.items():
            order = sorted(orders.get(group, ()))
            pos = {s: j for j, s in enumerate(order)}
            for sid in members:
                j = pos.get(sid)
                if j is not None:
                    out[sid] = [order[x] for x in (j - 1, j + 1) if 0 <= x < len(order)]
        return out

    def list_namespaces(
        self,
        conn: MilvusSession,
        now: float | None,
        match_conditions: Sequence[MatchCondition] | None,
        max_depth: int | None,
    ) -> list[tuple[str, ...]]:
        expr = "" if now is None else f"expires_at is null or expires_at >= {float(now)!r}"
        found = {e["namespace"] for e in conn.query_all(conn.names.items, expr, ["namespace"])}
        return match_namespaces(
            (tuple(ns.split(NS_SEP)) for ns in found), match_conditions, max_depth
        )

    # ---------------------------------------------------------------- keyword
    def query_scope(self) -> AbstractContextManager[None]:
        return nullcontext()

    @staticmethod
    def _weights(q: QueryTerms, weights: Mapping[str, float] | None) -> dict[str, float]:
        if weights is not None:
            return {t: float(weights.get(t, 1.0)) for t in dict.fromkeys(q.terms)}
        return {t: 1.0 for t in dict.fromkeys(q.terms)}

    def _bm25_of(
        self, conn: MilvusSession, expr: str, w: Mapping[str, float], pks: Sequence[str]
    ) -> dict[int, float]:
        """Weighted BM25 of the given items: one request per term when the weights differ,
        one for the whole query when they are all 1."""
        out: dict[int, float] = {}
        if not pks or not w:
            return out
        groups = [(" ".join(w), 1.0)] if all(v == 1.0 for v in w.values()) else list(w.items())
        groups = [(t, wt) for t, wt in groups if wt != 0]
        for i in range(0, len(pks), _CHUNK):
            part = pks[i : i + _CHUNK]
            scoped = and_(expr, in_expr("pk", part))
            per_text = conn.search_many(
                "items", [t for t, _ in groups], "sparse", len(part), scoped, ["seq"]
            )
            for (_text, weight), hits in zip(groups, per_text, strict=True):
                for hit in hits:
                    sid = int(hit["seq"])
                    out[sid] = out.get(sid, 0.0) + weight * _bm25(hit)
        return out

    def keyword_search(
        self,
        conn: MilvusSession,
        ns_ids: Sequence[int],
        q: QueryTerms,
        k: int,
        extra_candidates: Iterable[int] | Callable[[], Iterable[int]] = (),
        weights: Mapping[str, float] | None = None,
    ) -> dict[int, float]:
        expr = self._scope(conn, ns_ids)
        sc = self._exact(conn, expr)
        if sc is not None and self._client_bm25 is not None:
            idf = self._client_bm25.idf(conn, expr, sc, q, weights)
            if not idf:
                return {}
            got = self._client_bm25.score(conn, sc, idf)
            ext = extra_candidates() if callable(extra_candidates) else extra_candidates
            top = self._client_bm25.top(got, k) | (set(ext) & got.keys())
            return {i: got[i] for i in top}
        w = self._weights(q, weights)
        scores: dict[int, float] = {}
        if w:
            hits = conn.search(
                "items", [" ".join(w)], "sparse", k, expr, output_fields=["pk", "seq"]
            )
            conn.remember(hits)
            scores = {int(hit["seq"]): _bm25(hit) for hit in hits}
            if any(v != 1.0 for v in w.values()):
                weighted = self._bm25_of(conn, expr, w, [conn.pks[i] for i in scores])
                scores = {i: weighted.get(i, 0.0) for i in scores}
        extra = extra_candidates() if callable(extra_candidates) else extra_candidates
        rest = [i for i in extra if i not in scores]
        if rest:
            got = self._bm25_of(conn, expr, w, conn.pks_of(rest))
            scores.update((i, got.get(i, 0.0)) for i in rest)
        return scores

    def keyword_score(
        self,
        conn: MilvusSession,
        ns_ids: Sequence[int],
        q: QueryTerms,
        items: Iterable[int],
        weights: Mapping[str, float] | None = None,
    ) -> dict[int, float]:
        items = list(items)
        expr, w = self._scope(conn, ns_ids), self._weights(q, weights)
        sc = self._exact(conn, expr)
        if sc is not None and self._client_bm25 is not None:
            idf = self._client_bm25.idf(conn, expr, sc, q, weights)
            return self._client_bm25.score(conn, sc, idf, items) if idf else {}
        got = self._bm25_of(conn, expr, w, conn.pks_of(items))
        return {i: got.get(i, 0.0) for i in items}

    def keyword_scope(
        self,
        conn: MilvusSession,
        ns_ids: Sequence[int],
        q: QueryTerms,
        weights: Mapping[str, float] | None = None,
    ) -> bm25.KeywordScope:
        """The scope's documents and the query terms' document frequencies: from the
        client-side BM25's term matches where it scores the scope (the scores are this
        project's BM25), else from one BM25 request counting Milvus's matches of each term (the
        scores are Milvus's own). A prefix is not expanded here."""
        expr, terms = self._scope(conn, ns_ids), list(dict.fromkeys(q.terms))
        sc = self._exact(conn, expr)
        if sc is not None and self._client_bm25 is not None:
            got = self._client_bm25.matches(conn, expr, sc, terms, sc.n_docs) if terms else {}
            return bm25.KeywordScope(sc.n_docs, got)
        n = self._docs_in(conn, expr)
        hits = conn.search_many("items", terms, "sparse", n, expr, ["seq"]) if terms and n else []
        df = {t: len(h) for t, h in zip(terms, hits, strict=True)}
        return bm25.KeywordScope(n, df, milvus=True)

    def keyword_docs(self, conn: MilvusSession, ns_ids: Sequence[int]) -> int:
        return self._docs_in(conn, self._scope(conn, ns_ids))

    def doc_terms(self, conn: MilvusSession, item_ids: Sequence[int]) -> Iterable[PostingRow]:
        """The terms of the given documents, for pseudo-relevance feedback: term frequency
        and length from their stored tokens; document frequency in the namespaces searched
        last from one BM25 request for all their terms, counted up to one past the most a
        feedback term may have (`StoreTuning.common_term_ratio`), which is all that decides."""
        scope = conn.scope
        sc = self._exact(conn, scope)
        if sc is not None and self._client_bm25 is not None:
            cap = max(2, int(self._common_ratio * sc.n_docs)) + 1
            return self._client_bm25.doc_terms(conn, scope, sc, item_ids, cap)
        docs = conn.by_pks("items", "pk", conn.pks_of(item_ids), ["pk", "seq", "text"])
        tfs = {int(e["seq"]): Counter(e["text"].split()) for e in docs}
        terms = sorted({t for tf in tfs.values() for t in tf})
        if not terms:
            return []
        n_docs = self._docs_in(conn, scope)
        cap = max(2, int(self._common_ratio * n_docs)) + 1
        hits = conn.search_many("items", terms, "sparse", cap, scope, ["seq"])
        df = {t: len(h) for t, h in zip(terms, hits, strict=True)}
        tid = {t: j for j, t in enumerate(terms)}
        return [
            (t, sid, n, sum(tf.values()), tid[t], df[t])
            for sid, tf in tfs.items()
            for t, n in tf.items()
        ]

    def _docs_in(self, conn: MilvusSession, scope: str) -> int:
        sc = self._exact(conn, scope)
        if sc is not None:
            return sc.n_docs
        expr = and_(scope, "doc_len > 0")
        if expr not in conn.doc_counts:
            got = conn.query(conn.names.items, expr, ["count(*)"])
            conn.doc_counts[expr] = int(got[0]["count(*)"]) if got else 0
        return conn.doc_counts[expr]

    # ---------------------------------------------------------------- vector
    @property
    def has_vectors(self) -> bool:
        return self._has_vectors

    def vector_search(
        self, conn: MilvusSession, ns_ids: Sequence[int], qvec: np.ndarray, k: int
    ) -> VectorSearch:
        return _MilvusVectorSearch(conn, self._scope(conn, ns_ids), qvec, k, self._vector_params)
