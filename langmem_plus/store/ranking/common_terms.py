"""The query vector without the pull of words most of the namespace holds.

A word most memories of a namespace hold (the user's name, a speaker's, a project's) tells them
apart by keyword hardly at all (BM25 gives it an IDF near zero), but it weighs in the query's
embedding like any other word: "booking a team dinner with Oskar, anything I should watch out
for?" lands closest to every memory about Oskar, and the one constraint that matters is pushed
out. With `StoreTuning.vector_common_term_ratio` = r > 0, the query terms held by at least r of
the namespace's documents (and by at least `MIN_DOCS`) lose their embedding direction before
the vector search: v' = v - sum over b of (v.b) b, with b an orthonormal basis of the words'
own embeddings (each word embedded as the query writes it, "Oskar", not the index's stem), then
v' is renormalised. v' picks the vector candidates and orders them (the cosine's share of the
standing); the cosine each candidate reports and its vector evidence stay those of v, the whole
query (a memory about Oskar is still evidence for a question about him: the name only stops
deciding the order). Measured in docs/results/retrieval_quality.md.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langmem_plus.store.keyword.bm25 import KeywordScope, term_counts
from langmem_plus.store.ranking.scoring import CosineSide, cosine_side, vector_evidence
from langmem_plus.store.seams import SearchBackend, VectorSearch
from langmem_plus.text.tokenize import QueryTerms, term_surfaces

__all__ = [
    "MIN_DOCS",
    "ProjectedSearch",
    "TermVectors",
    "common_words",
    "ordering_side",
    "orthonormal",
    "project_out",
    "vector_search",
]

MIN_DOCS = 3
"""A word in fewer documents than this is never common (in a tiny namespace a share means
little)."""


class TermVectors:
    """Unit embedding vectors of single words, cached per store handle (least recently used
    dropped past `size`): a namespace's common words are few and come back query after query."""

    def __init__(self, embeddings: Embeddings, size: int = 4096) -> None:
        self.embeddings = embeddings
        self.size = size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, words: Sequence[str]) -> list[np.ndarray]:
        """The unit vectors of `words`, in order (the ones not cached embedded in one call)."""
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for w in dict.fromkeys(words):
                v = self._cache.get(w)
                if v is not None:
                    self._cache.move_to_end(w)
                    found[w] = v
        missing = [w for w in dict.fromkeys(words) if w not in found]
        if missing:  # embedded outside the lock (another thread may do the same word, harmlessly)
            got = np.asarray(self.embeddings.embed_documents(missing), dtype=np.float64)
            for w, v in zip(missing, got.reshape(len(missing), -1), strict=True):
                found[w] = v / (np.linalg.norm(v) or 1.0)
        if missing:
            with self._lock:
                for w in missing:
                    self._cache[w] = found[w]
                while len(self._cache) > self.size:
                    self._cache.popitem(last=False)
        return [found[w] for w in words]


def common_words(
    query: str, q: QueryTerms, df: dict[str, int], n_docs: int, ratio: float
) -> list[str]:
    """The words of `query` whose terms at least `ratio` of the `n_docs` documents (and at
    least `MIN_DOCS`) hold, as the query writes them, sorted."""
    if ratio <= 0 or n_docs < MIN_DOCS:
        return []
    need = max(MIN_DOCS, math.ceil(ratio * n_docs))
    common = [t for t in q.terms if df.get(t, 0) >= need]
    if not common:
        return []
    surface = term_surfaces(query, common)
    return sorted({surface.get(t, t) for t in common})


def orthonormal(directions: Sequence[np.ndarray]) -> list[np.ndarray]:
    """An orthonormal basis of `directions` (Gram-Schmidt in their order, float64; a
    direction the others already span is left out)."""
    basis: list[np.ndarray] = []
    for d in directions:
        u = np.asarray(d, dtype=np.float64)
        for b in basis:
            u = u - (u @ b) * b
        n = float(np.linalg.norm(u))
        if n > 1e-6:
            basis.append(u / n)
    return basis


def project_out(qvec: np.ndarray, directions: Sequence[np.ndarray]) -> np.ndarray:
    """`qvec` without its components along `directions` (made orthonormal first),
    renormalised to the query vector's length; `qvec` itself when nothing of it would be
    left."""
    basis = orthonormal(directions)
    v = np.asarray(qvec, dtype=np.float64)
    out = v.copy()
    for b in basis:
        out = out - (out @ b) * b
    n = float(np.linalg.norm(out))
    if n <= 1e-6:
        return qvec
    return (out * (float(np.linalg.norm(v)) / n)).astype(np.asarray(qvec).dtype)


class ProjectedSearch:
    """A `VectorSearch` run with the projected vector whose cosines are the whole query's: the
    projection picks the candidates, `order_cosines` gives what orders them."""

    def __init__(self, inner: VectorSearch, qvec: np.ndarray) -> None:
        self.inner, self.qvec = inner, qvec
        self._ordered: dict[int, float] | None = None
        self._hits: dict[int, float] | None = None

    def hits(self) -> dict[int, float]:
        if self._hits is None:
            self._ordered = self.inner.hits()
            raw = self.inner.cosines_with(list(self._ordered), self.qvec)
            self._hits = {i: raw[i] for i in self._ordered if i in raw}
        return self._hits

    def cosines(self, item_ids: Sequence[int]) -> dict[int, float]:
        return self.inner.cosines_with(item_ids, self.qvec)

    def cosines_with(self, item_ids: Sequence[int], qvec: np.ndarray) -> dict[int, float]:
        return self.inner.cosines_with(item_ids, qvec)

    def order_cosines(self, item_ids: Sequence[int]) -> dict[int, float]:
        """The projected vector's cosines of the items (those with vectors)."""
        self.hits()
        held = self._ordered or {}
        missing = [i for i in item_ids if i not in held]
        got = self.inner.cosines(missing) if missing else {}
        return {i: v for i in item_ids if (v := held.get(i, got.get(i))) is not None}


def vector_search(
    backend: SearchBackend,
    conn: Any,
    ns_ids: Sequence[int],
    q: QueryTerms,
    scope: Callable[[], KeywordScope],
    rq: Any,
    k: int,
    ratio: float,
    vectors: TermVectors | None,
) -> VectorSearch:
    """The ranker's vector search for `rq` (a `RankQuery` with a vector): with the query's
    common words projected out when it has any (module docstring), else as it is. `scope`
    gives the query's keyword scope (read once per query), so the statistics read here are the
    ones the keyword side uses."""
    qvec = rq.qvec
    if vectors is not None and ratio > 0 and q.terms:
        n_docs = backend.keyword_docs(conn, ns_ids)
        if n_docs >= MIN_DOCS:
            words = common_words(rq.query, q, term_counts(scope(), q), n_docs, ratio)
            if words:
                proj = project_out(qvec, vectors(words))
                return ProjectedSearch(backend.vector_search(conn, ns_ids, proj, k), qvec)
    return backend.vector_search(conn, ns_ids, qvec, k)


def ordering_side(
    search: VectorSearch | None, keep: Sequence[int], cosines: np.ndarray, background: float
) -> CosineSide | None:
    """The vector side of fusion when the search was projected: standard scores of the
    projected cosines (the order), the vector evidence of the whole query's `cosines` (aligned
    with `keep`, NaN: no vector); None when it was not (fusion builds its own)."""
    if not isinstance(search, ProjectedSearch):
        return None
    got = search.order_cosines(keep)
    proj = np.fromiter((got.get(i, np.nan) for i in keep), np.float64, len(keep))
    side = cosine_side(proj, background)
    return replace(side, evidence=vector_evidence(cosines, background))
