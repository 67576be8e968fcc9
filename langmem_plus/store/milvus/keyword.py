"""This project's BM25 over Milvus's term matches: the keyword scores of the SQLite index.

Milvus's own BM25 differs from keyword.py's where rankings are sensitive: its IDF is the
always-positive log(1 + (N - df + 0.5) / (df + 0.5)) (keyword.py's lets a term in half or more
of a namespace weigh almost nothing) and its statistics are its own (segments, the whole
collection). For a scope (the namespaces one search covers) of at most `max_docs` documents
the keyword side is therefore scored here, client-side, from what Milvus finds:

* N and the mean document length come from the scope's statistics rows (store/milvus/stats.py,
  kept as writes happen); on collections without them, one query lists the scope's documents
  with their lengths;
* one BM25 request for the query's new terms returns, per term, every document Milvus's
  inverted index matches (the limit is N, so none is cut off), with its stored tokens (this
  project's tokenizer output, kept in `text`) and length; a document holds a term only when
  its tokens do (Milvus's jieba analysis may match more, a sub-word of a longer word, and
  those are dropped);
* the scores are BM25Okapi with the store's k1, b and IDF floor: the formula of
  store/keyword/bm25.py, as on SQLite.

Milvus does the matching (its inverted index); the library does the arithmetic. Larger scopes
keep Milvus's own BM25 scores (store/milvus/search.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from langmem_plus.store.keyword import bm25
from langmem_plus.store.seams import PostingRow
from langmem_plus.text.tokenize import QueryTerms

__all__ = ["ClientBM25", "KeywordSession", "ScopeIndex"]

_CHUNK = 1000  # primary keys per request
_TOKEN_FIELDS = ["pk", "seq", "text", "doc_len"]


@dataclass
class ScopeIndex:
    """One scope's BM25 statistics and the postings of the terms looked up so far (one
    batch: another handle's writes are seen by the next batch)."""

    n_docs: int
    avgdl: float
    dl: dict[int, int] = field(default_factory=dict)  # id (seq) -> length, where listed
    postings: dict[str, frozenset[int]] = field(default_factory=dict)
    common: dict[str, int] = field(default_factory=dict)  # term -> it is in at least this many


class KeywordSession(Protocol):
    """What the scoring reads from a batch's Milvus session (store/milvus/search.py's)."""

    names: Any
    kw_scopes: dict[str, ScopeIndex | None]
    tokens: dict[int, Counter[str]]
    lengths: dict[int, int]

    def remember(self, ents: Iterable[Mapping[str, Any]]) -> None: ...

    def pks_of(self, ids: Iterable[int]) -> list[str]: ...

    def query(
        self, collection: str, expr: str, fields: list[str], limit: int | None = None
    ) -> list[dict[str, Any]]: ...

    def by_pks(
        self, collection: str, field: str, pks: Sequence[str], fields: list[str]
    ) -> list[dict[str, Any]]: ...

    def search_many(
        self,
        collection: str,
        data: list[Any],
        field: str,
        limit: int,
        expr: str,
        fields: list[str],
    ) -> list[list[dict]]: ...


class ClientBM25:
    """BM25 scores of keyword.py computed over Milvus's matches (see the module docstring)."""

    def __init__(self, k1: float, b: float, max_docs: int) -> None:
        """`max_docs`: the largest scope scored here (Milvus's cap on one request's limit)."""
        self.okapi, self.max_docs = bm25.Okapi(k1, b), max_docs

    # ---------------------------------------------------------------- reads
    def scope(self, conn: KeywordSession, expr: str) -> ScopeIndex | None:
        """The scope's statistics (one request per batch), or None when it holds more than
        `max_docs` documents."""
        if expr in conn.kw_scopes:
            return conn.kw_scopes[expr]
        got = conn.query(
            conn.names.items,
            " and ".join(f"({p})" for p in (expr, "doc_len > 0") if p),
            ["seq", "doc_len"],
            limit=self.max_docs + 1,
        )
        sc: ScopeIndex | None = None
        if len(got) <= self.max_docs:
            dl = {int(e["seq"]): int(e["doc_len"]) for e in got}
            sc = ScopeIndex(len(dl), (sum(dl.values()) / len(dl)) if dl else 0.0, dl)
        conn.kw_scopes[expr] = sc
        return sc

    def from_counts(self, n_docs: int, total_len: int) -> ScopeIndex | None:
        """A scope's statistics from its counts (store/milvus/stats.py), or None when it holds
        more than `max_docs` documents."""
        if n_docs > self.max_docs:
            return None
        return ScopeIndex(n_docs, total_len / n_docs if n_docs > 0 else 0.0)

    @staticmethod
    def _note(conn: KeywordSession, e: Mapping[str, Any]) -> None:
        """Keep a read document's term frequencies and length for the batch."""
        sid = int(e["seq"])
        if sid not in conn.tokens:
            conn.tokens[sid] = Counter(e["text"].split())
            conn.lengths[sid] = int(e["doc_len"])

    def tokens(self, conn: KeywordSession, ids: Iterable[int]) -> dict[int, Counter[str]]:
        """Term frequencies of the documents (their stored tokens), read once per batch."""
        ids = list(dict.fromkeys(ids))
        missing = conn.pks_of(i for i in ids if i not in conn.tokens)
        for i in range(0, len(missing), _CHUNK):
            part = missing[i : i + _CHUNK]
            for e in conn.by_pks("items", "pk", part, _TOKEN_FIELDS):
                self._note(conn, e)
        return {i: conn.tokens[i] for i in ids if i in conn.tokens}

    def matches(
        self, conn: KeywordSession, expr: str, sc: ScopeIndex, terms: Sequence[str], cap: int
    ) -> dict[str, int]:
        """Documents per term, counted up to `cap` (one BM25 request for the terms not yet
        looked up); a term found in fewer than `cap` documents has its postings kept. Milvus's
        matches that are not the term (a part of a longer word) do not count: a term whose
        first `cap` matches hold fewer than `cap` real ones is asked again with a larger limit."""
        cap = min(cap, sc.n_docs)
        todo = [
            t for t in dict.fromkeys(terms) if t not in sc.postings and sc.common.get(t, 0) < cap
        ]
        limit = max(1, cap)
        while todo:
            hits = conn.search_many("items", todo, "sparse", limit, expr, _TOKEN_FIELDS)
            retry: list[str] = []
            for term, got in zip(todo, hits, strict=True):
                conn.remember(got)
                for e in got:  # the matches' tokens come with them: no second request
                    self._note(conn, e)
                ids = [int(e["seq"]) for e in got]
                real = frozenset(i for i in ids if term in conn.tokens[i])
                if len(got) < limit or limit >= sc.n_docs:  # every match is in `got`
                    sc.postings[term] = real
                elif len(real) >= cap:  # too common to count: in `cap` documents or more
                    sc.common[term] = cap
                else:
                    retry.append(term)
            todo, limit = retry, min(sc.n_docs, limit * 4)
        return {
            t: len(sc.postings[t]) if t in sc.postings else sc.common.get(t, 0)
            for t in dict.fromkeys(terms)
        }

    # ---------------------------------------------------------------- scores
    def idf(
        self,
        conn: KeywordSession,
        expr: str,
        sc: ScopeIndex,
        q: QueryTerms,
        weights: Mapping[str, float] | None,
    ) -> dict[str, float]:
        """Weighted IDF of the query's terms found in the scope (keyword.py's `_prepare`)."""
        if not q.terms or not sc.n_docs:
            return {}
        df = self.matches(conn, expr, sc, q.terms, sc.n_docs)
        out: dict[str, float] = {}
        for t, n in df.items():
            if n <= 0:
                continue
            v = bm25.idf(sc.n_docs, n)
            out[t] = (v if v > 0 else bm25.MIN_IDF) * (weights.get(t, 1.0) if weights else 1.0)
        return out

    def score(
        self,
        conn: KeywordSession,
        sc: ScopeIndex,
        idf: Mapping[str, float],
        pool: Iterable[int] | None = None,
    ) -> dict[int, float]:
        """BM25 of the documents in `pool` (every matching one when None) that match."""
        postings = {t: sc.postings[t] for t in idf}
        matched = set().union(*postings.values()) if postings else set()
        ids = matched if pool is None else matched & set(pool)
        toks = self.tokens(conn, ids)
        okapi, avgdl = self.okapi, sc.avgdl
        out: dict[int, float] = {}
        for i in ids:
            tf_of, dl = toks.get(i), self._length(conn, sc, i)
            if tf_of is None:
                continue
            s = 0.0
            for t, w in idf.items():
                if i in postings[t]:
                    s += okapi.saturation(float(tf_of[t]), float(dl), avgdl) * w
            if s != 0:
                out[i] = s
        return out

    @staticmethod
    def _length(conn: KeywordSession, sc: ScopeIndex, i: int) -> int:
        """A read document's length (its stored `doc_len`)."""
        got = conn.lengths.get(i)
        return sc.dl.get(i, 0) if got is None else got

    @staticmethod
    def top(scores: dict[int, float], k: int) -> set[int]:
        """The `k` best ids, ties broken by the lower (older) id as on SQLite."""
        return bm25.top_ids(scores, k)

    def doc_terms(
        self, conn: KeywordSession, expr: str, sc: ScopeIndex, item_ids: Sequence[int], cap: int
    ) -> list[PostingRow]:
        """(term, id, tf, dl, term id, df) of every term of the documents, df counted up to
        `cap` (all that pseudo-relevance feedback reads)."""
        tfs = self.tokens(conn, item_ids)
        terms = sorted({t for tf in tfs.values() for t in tf})
        if not terms:
            return []
        df = self.matches(conn, expr, sc, terms, cap)
        tid = {t: j for j, t in enumerate(terms)}
        return [
            (t, i, n, self._length(conn, sc, i), tid[t], df[t])
            for i, tf in sorted(tfs.items())
            for t, n in sorted(tf.items(), key=lambda kv: tid[kv[0]])
        ]
