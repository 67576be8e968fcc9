"""Pseudo-relevance feedback (RM3-style) for the keyword side of hybrid search.

The top keyword hits of a query are assumed relevant; the terms that carry most of their
weight, and that the query does not already contain, are added to the query with a lower
weight. Terms come from the keyword index's own postings (no re-tokenising). When the query has
a vector side, both rounds only re-score the candidates already held: the expansion terms'
BM25 is added to theirs (BM25 is a sum over terms, so for them this equals searching the
expanded query). Searching the expansion terms for new candidates too was measured there:
LoCoMo frac@10 +0.005, any@5 and all@5 -0.007/-0.008, MADial unchanged, ~0.3 ms more per query
at 10k (docs/benchmarks.md). Without vectors (a keyword-only store) the first round does
search: it is then the only way a related item without the query's words is found.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from langmem_plus.store.keyword.bm25 import idf
from langmem_plus.store.seams import PostingRow, SearchBackend
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.text.tokenize import QueryTerms

__all__ = [
    "best_pairs",
    "expand_query",
    "expansion_terms",
    "feedback",
    "feedback_terms",
    "fused_feedback",
]


def expansion_terms(
    doc_terms: Callable[[Sequence[int]], Iterable[PostingRow]],
    scores: Mapping[int, float],
    query: QueryTerms,
    n_docs: int,
    *,
    feedback_docs: int,
    n_terms: int,
    weight: float,
    max_df: int | None = None,
) -> dict[str, float]:
    """Expansion term -> query weight, from the `feedback_docs` best-scoring items.

    A term's relevance-model weight is sum over feedback docs of P(d|q) * tf/dl (P(d|q) is the
    doc's share of the feedback docs' BM25), times its IDF so that words frequent everywhere do
    not win. Terms of the query itself and terms found in a single document (they could only
    re-find the feedback document) are skipped, and so are terms in more than `max_df` documents
    (weak evidence, and long postings to read). The best term gets `weight`, the others
    proportionally less. `doc_terms` reads the postings of the given documents.
    """
    if n_terms <= 0 or weight <= 0 or n_docs <= 1:
        return {}
    # the best (score, id) pairs, positive scores only (ties: the larger id)
    top = [p for p in best_pairs(feedback_docs, scores) if p[0] > 0]
    if not top:
        return {}
    total = sum(s for s, _ in top)
    p_doc = {i: s / total for s, i in top}
    rel: dict[str, float] = {}
    df_of: dict[str, int] = {}
    seen: set[int] = set()  # term ids (one per term and namespace)
    rel_get, df_get, add_seen = rel.get, df_of.get, seen.add
    for term, item_id, tf, dl, tid, df in doc_terms(tuple(p_doc)):
        rel[term] = rel_get(term, 0.0) + p_doc[item_id] * tf / (dl if dl > 1 else 1)
        if tid not in seen:  # a term of several namespaces: sum its df over them
            add_seen(tid)
            df_of[term] = df_get(term, 0) + df
    skip = set(query.terms)
    hi_df = n_docs if max_df is None else min(n_docs, max_df + 1)
    cand = []
    for term, df in df_of.items():
        if df < 2 or df >= hi_df or term in skip:
            continue
        weight_idf = idf(n_docs, df)
        if weight_idf > 0:
            cand.append((rel[term] * weight_idf, term))
    if not cand:
        return {}
    chosen = sorted(cand, reverse=True)[:n_terms]  # heapq.nlargest's answer, in one C call
    best = chosen[0][0]
    return {t: weight * w / best for w, t in chosen}


def best_pairs(n: int, scores: Mapping[int, float]) -> list[tuple[float, int]]:
    """The `n` best (score, id) pairs, best first (ties: the larger id): `heapq.nlargest`'s
    answer, from the n-th best score first, so that only the pairs at or above it are made
    and sorted (scores are finite)."""
    if n <= 0:
        return []
    if len(scores) <= n:
        return sorted(zip(scores.values(), scores, strict=True), reverse=True)
    least = heapq.nlargest(n, scores.values())[-1]
    return sorted(((v, i) for i, v in scores.items() if v >= least), reverse=True)[:n]


def expand_query(
    query: QueryTerms, weights: Mapping[str, float], extra: Mapping[str, float]
) -> tuple[QueryTerms, dict[str, float]]:
    """The query with `extra` terms appended, and the merged per-term weights."""
    terms: Sequence[str] = (*query.terms, *(t for t in extra if t not in query.terms))
    counts = (*query.counts, *([1] * (len(terms) - len(query.terms)))) if query.counts else ()
    return QueryTerms(tuple(terms), query.prefixes, tuple(counts)), {**weights, **extra}


def _terms_for(
    tuning: StoreTuning,
    backend: SearchBackend,
    conn: Any,
    ns_ids: Sequence[int],
    q: QueryTerms,
    scores: Mapping[int, float],
    docs: int,
    weight: float,
) -> dict[str, float]:
    """Expansion terms of the best `docs` items of `scores`, with the store's settings."""
    n_docs = backend.keyword_docs(conn, ns_ids)
    return expansion_terms(
        lambda ids: backend.doc_terms(conn, ids),
        scores,
        q,
        n_docs,
        feedback_docs=docs,
        n_terms=tuning.prf_terms,
        weight=weight,
        max_df=max(2, int(tuning.common_term_ratio * n_docs)),
    )


def feedback_terms(
    tuning: StoreTuning,
    backend: SearchBackend,
    conn: Any,
    ns_ids: Sequence[int],
    q: QueryTerms,
    bm25: Mapping[int, float],
) -> dict[str, float]:
    """The first round's expansion terms (term -> weight) from the best keyword hits."""
    return _terms_for(tuning, backend, conn, ns_ids, q, bm25, tuning.prf_docs, tuning.prf_weight)


def feedback(
    tuning: StoreTuning,
    backend: SearchBackend,
    conn: Any,
    ns_ids: Sequence[int],
    q: QueryTerms,
    qw: Mapping[str, float],
    bm25: Mapping[int, float],
    terms: Mapping[str, float] | None = None,
    search_k: int | None = None,
) -> tuple[QueryTerms, dict[str, float], dict[int, float]]:
    """The ranker's first feedback round: the expanded query, its term weights and the updated BM25 scores.

    The expansion terms re-score the candidates in `bm25`; with `search_k` (a store without
    vectors, where no other recall exists) they also bring their own best `search_k` items.
    `terms`: the expansion terms when the caller chose them already (`feedback_terms`).
    """
    extra = (
        dict(terms) if terms is not None else feedback_terms(tuning, backend, conn, ns_ids, q, bm25)
    )
    if not extra:
        return q, dict(qw), dict(bm25)
    eq = QueryTerms(tuple(extra), ())
    if search_k is None:
        more = backend.keyword_score(conn, ns_ids, eq, bm25.keys(), weights=extra)
    else:
        more = backend.keyword_search(
            conn, ns_ids, eq, search_k, extra_candidates=bm25.keys(), weights=extra
        )
    scores = dict(bm25)
    for i, v in more.items():
        if v:  # nothing to add for a candidate without an expansion term
            scores[i] = scores.get(i, 0.0) + v
    q2, w2 = expand_query(q, qw, extra)
    return q2, w2, scores


def fused_feedback(
    tuning: StoreTuning,
    backend: SearchBackend,
    conn: Any,
    ns_ids: Sequence[int],
    q: QueryTerms,
    fused: Mapping[int, float],
) -> dict[int, float]:
    """Second feedback round (the ranker's stage after fusion): expansion terms from the
    `prf_fused_docs` best *fused* candidates, where keyword and vector evidence agree (better
    feedback than the keyword hits alone), skipping terms `q` already holds (the first round's
    included). Returns those terms' BM25 (best term weighted `prf_fused_weight`) for the fused
    candidates only; the caller adds it to their keyword scores and re-fuses.
    """
    extra = _terms_for(
        tuning, backend, conn, ns_ids, q, fused, tuning.prf_fused_docs, tuning.prf_fused_weight
    )
    if not extra:
        return {}
    return backend.keyword_score(
        conn, ns_ids, QueryTerms(tuple(extra), ()), fused.keys(), weights=extra
    )
