"""BM25, written once: the IDF, the term-frequency part and the top k. Every keyword path (SQLite postings, the in-memory postings, a namespace held whole,
the Milvus backend's client-side scores) and pseudo-relevance feedback compute with these.

A document's BM25 for a query is the sum over the query's terms of
`saturation(tf, dl) * idf(N, df) * weight`: BM25Okapi's formula (rank-bm25), with IDF
ln((N - df + 0.5) / (df + 0.5)) floored at `MIN_IDF` (x the mean IDF with `epsilon` > 0), and a
per-term query weight (query term frequency, expansion terms).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from langmem_plus.text.tokenize import QueryTerms

__all__ = [
    "MIN_IDF",
    "KeywordScope",
    "Okapi",
    "held_terms",
    "idf",
    "idf_floor",
    "mean_idf",
    "milvus_idf",
    "query_mass",
    "saturation",
    "sum_by_id",
    "term_counts",
    "top_ids",
    "top_k",
]

MIN_IDF = 0.01
"""The floor of a term's IDF: a term in half or more of the documents (negative Okapi IDF)
still counts a little, so a matching document never ranks below a blank one."""

F = TypeVar("F", float, np.ndarray)


def idf(n_docs: int, df: int) -> float:
    """Okapi IDF of a term in `df` of `n_docs` documents, ln(N - df + 0.5) - ln(df + 0.5)
    (a statistics row behind its postings, df > N, counts as df = N)."""
    return math.log(max(n_docs - df, 0) + 0.5) - math.log(df + 0.5)


def mean_idf(n_docs: int, dfs: np.ndarray) -> float:
    """The mean Okapi IDF over a vocabulary's document frequencies (BM25Okapi's floor base)."""
    return float(np.mean(np.log(n_docs - dfs + 0.5) - np.log(dfs + 0.5))) if len(dfs) else 0.0


def idf_floor(epsilon: float, mean: float) -> float:
    """The IDF a term below zero gets: `epsilon` x the mean IDF, never below `MIN_IDF`."""
    return max(epsilon * mean, MIN_IDF) if epsilon > 0 else MIN_IDF


def milvus_idf(n_docs: int, df: int) -> float:
    """Milvus's own BM25 IDF, ln(1 + (N - df + 0.5) / (df + 0.5)): the scale of the scores
    Milvus computes itself (store/milvus/search.py, scopes past the client-side scoring)."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def saturation(tf: F, dl: F, avgdl: float, k1: float, b: float) -> F:
    """BM25's term-frequency part, tf·(k1 + 1) / (tf + k1·(1 - b + b·dl / avgdl)), for one
    posting (floats) or many (arrays, element by element: the same operations, so every path
    gives the same bits)."""
    return tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / (avgdl or 1.0)))  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class Okapi:
    """BM25Okapi's parameters (`StoreTuning.bm25_k1`, `bm25_b`, `bm25_epsilon`)."""

    k1: float = 1.5
    b: float = 0.3
    epsilon: float = 0.0

    def saturation(self, tf: F, dl: F, avgdl: float) -> F:
        """`saturation` with these parameters."""
        return saturation(tf, dl, avgdl, self.k1, self.b)


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


def top_ids(scores: dict[int, float], k: int) -> set[int]:
    """The ids of the `k` best scores (`top_k`'s rule)."""
    if len(scores) <= k:
        return set(scores)
    ids = np.fromiter(scores.keys(), dtype=np.int64, count=len(scores))
    vals = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
    return set(ids[top_k(ids, vals, k)].tolist())


def sum_by_id(ids: Sequence[np.ndarray], vals: Sequence[np.ndarray]) -> dict[int, float]:
    """Per-item sums of per-term scores (each term's arrays in turn)."""
    if not ids:
        return {}
    all_ids = np.concatenate(ids)
    all_vals = np.concatenate(vals).astype(np.float64)
    uniq, inv = np.unique(all_ids, return_inverse=True)
    sums = np.bincount(inv, weights=all_vals)
    return dict(zip(uniq.tolist(), sums.tolist(), strict=True))


@dataclass(frozen=True, slots=True)
class KeywordScope:
    """What a backend reports of a query's scope (the namespaces it searches), the facts the
    keyword statistics are computed from here: its documents, and how many of them hold each
    term it found (the query's terms; a prefix's expansions where the backend expands them).
    `floor`: the IDF a term in half or more of the documents gets (`idf_floor`); `milvus`:
    the backend scores this scope with Milvus's own BM25 (`milvus_idf`), not with `idf`."""

    n_docs: int
    df: Mapping[str, int] = field(default_factory=dict)
    floor: float = MIN_IDF
    milvus: bool = False


def _weighted(scope: KeywordScope, term: str, df: int, w: Mapping[str, float]) -> float:
    v = idf(scope.n_docs, df)
    return (v if v > 0 else scope.floor) * w.get(term, 1.0)


def query_mass(
    scope: KeywordScope, q: QueryTerms, weights: Mapping[str, float] | None = None
) -> float:
    """The query's weighted IDF mass: the BM25 a document of average length holding every
    query term once would get. A document's BM25 over it is the share of the query it matches,
    on one scale for every query and scope (the keyword evidence of the absolute relevance).
    Terms no document holds count with the IDF of df = 0; a prefix counts once, with its best
    expansion's IDF. On Milvus's own scale every term counts with `milvus_idf`."""
    if scope.n_docs == 0 or not q:
        return 0.0
    w = weights or {}
    if scope.milvus:
        terms = dict.fromkeys(q.terms)
        if not (terms or q.prefixes):
            return 0.0
        mass = sum(
            float(w.get(t, 1.0)) * milvus_idf(scope.n_docs, scope.df.get(t, 0)) for t in terms
        )
        return mass + sum(float(w.get(p, 1.0)) * milvus_idf(scope.n_docs, 0) for p in q.prefixes)
    df = scope.df
    absent = idf(scope.n_docs, 0)
    total = sum(
        _weighted(scope, t, df[t], w) if df.get(t, 0) > 0 else absent * w.get(t, 1.0)
        for t in q.terms
    )
    for prefix in q.prefixes:
        found = [
            _weighted(scope, t, n, w)
            for t, n in df.items()
            if n > 0 and t.startswith(prefix) and t not in q.terms
        ]
        total += max(found) if found else absent * w.get(prefix, 1.0)
    return float(total)


def held_terms(scope: KeywordScope, q: QueryTerms) -> frozenset[str]:
    """The query's terms at least one document of the scope holds (the relevance judgement's
    names the scope has seen)."""
    return frozenset(t for t in q.terms if scope.df.get(t, 0) > 0)


def term_counts(scope: KeywordScope, q: QueryTerms) -> dict[str, int]:
    """Documents of the scope holding each of the query's exact terms (terms none holds left
    out)."""
    return {t: scope.df[t] for t in q.terms if scope.df.get(t, 0) > 0}
