"""The incremental keyword index scores exactly like rank-bm25's BM25Okapi."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from langmem_plus import HybridStore
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.text import tokenize
from langmem_plus.text.tokenize import QueryTerms

CFG = StoreTuning()

CORPUS = [
    "the cat sat on the mat with another cat",
    "dogs chase cats in the park",
    "我喜欢吃川菜和火锅",
    "the project uses PostgreSQL and Redis for caching",
    "processOrder throws TypeError in src/order.ts",
    "my sister lives in Berlin and loves jazz",
    "火锅店在成都很有名",
    "redis cache invalidation is hard",
    "a quiet evening reading books about history",
    "berlin jazz clubs open late on fridays",
]


def _scores(store: HybridStore, query_tokens: list[str]) -> dict[str, float]:
    st_ = store._db
    with st_.read() as conn:
        ns_ids = store._ns_ids(conn, ("c",))
        raw = store._kw.search(conn, ns_ids, QueryTerms(tuple(query_tokens), ()), k=100)
        keys = dict(conn.execute("SELECT id, key FROM items").fetchall())
    return {keys[i]: v for i, v in raw.items()}


@pytest.mark.parametrize(
    "query",
    ["cat", "berlin jazz", "川菜 火锅", "redis cache", "processOrder TypeError", "history books"],
)
def test_matches_bm25okapi(query):
    store = HybridStore(index=False)
    for i, doc in enumerate(CORPUS):
        store.put(("c",), f"d{i}", {"text": doc})
    docs_tokens = [tokenize(d) for d in CORPUS]
    ref = BM25Okapi(docs_tokens, k1=CFG.bm25_k1, b=CFG.bm25_b, epsilon=CFG.bm25_epsilon)
    q = list(dict.fromkeys(tokenize(query)))
    expected = ref.get_scores(q)
    got = _scores(store, q)
    for i, exp in enumerate(expected):
        if exp > 0:
            assert got[f"d{i}"] == pytest.approx(exp, rel=1e-9)
        else:
            assert got.get(f"d{i}", 0.0) == pytest.approx(0.0, abs=1e-12)
    store.close()


WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa", "lam"]


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), min_size=3, max_size=25
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True),
    deletes=st.sets(st.integers(0, 24), max_size=5),
)
def test_matches_bm25okapi_after_incremental_puts_and_deletes(docs, query, deletes):
    """Scores agree with a fresh BM25Okapi over what remains, whatever the write history.

    Deliberate difference (documented): where a term's IDF is <= 0 (it occurs in at least
    half the documents), we floor it at max(epsilon * mean IDF, 0.01); the comparison is made
    where the reference IDF of every query term is positive.
    """
    store = HybridStore(index=False)
    for i, d in enumerate(docs):
        store.put(("c",), f"d{i}", {"text": " ".join(d)})
    for i in deletes:
        if i < len(docs):
            store.delete(("c",), f"d{i}")
    remaining = [(i, d) for i, d in enumerate(docs) if i not in deletes]
    if len(remaining) < 2:
        store.close()
        return
    ref = BM25Okapi(
        [d for _, d in remaining],
        k1=CFG.bm25_k1,
        b=CFG.bm25_b,
        epsilon=CFG.bm25_epsilon,
    )
    n = len(remaining)
    if any(2 * sum(t in d for _, d in remaining) >= n for t in query):  # raw IDF <= 0
        store.close()
        return
    expected = ref.get_scores(query)
    got = _scores(store, list(query))
    for (i, _), exp in zip(remaining, expected, strict=True):
        assert got.get(f"d{i}", 0.0) == pytest.approx(exp, rel=1e-9, abs=1e-12)
    store.close()
