"""The keyword index's incremental statistics always equal a rebuild from the items.

BM25 reads a namespace's document count and total length and each term's document frequency
from counters that every put, overwrite and delete adjusts. Drift in them (a count below zero
once made every later query fall back to LIKE matching) is only visible against a rebuild, so
these tests apply random write sequences, token-less texts included, and compare.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp

from langmem_plus.store.hybrid import HybridStore

# Texts with tokens, texts that tokenize to nothing (empty, stopwords, punctuation) and
# values without any string at all.
_TEXTS = ["lake trip", "trip", "the", "", "  ", "!!", "lake lake lake", "湖边 旅行", "the lake"]
_VALUES: list[Any] = [{"text": t} for t in _TEXTS] + [
    {"n": 1},
    {"text": None},
    {"other": "lake"},
    {"text": "the", "note": "trip"},
]

_op = st.tuples(
    st.sampled_from([("a",), ("b",), ("a", "x")]),
    st.sampled_from(["k1", "k2", "k3"]),
    st.one_of(st.none(), st.sampled_from(_VALUES)),
    st.sampled_from([None, None, False]),
)


def _stats(store: HybridStore) -> dict[str, Any]:
    """Every counter BM25 reads, plus each item's length, as plain comparable data."""
    with store._db.read() as conn:
        return {
            "namespaces": sorted(
                conn.execute(
                    "SELECT ns, n_docs, total_len FROM namespaces WHERE n_docs != 0 "
                    "OR total_len != 0"
                ).fetchall()
            ),
            "terms": sorted(
                conn.execute(
                    "SELECT n.ns, t.term, t.df FROM terms t JOIN namespaces n ON n.id = t.ns_id"
                ).fetchall()
            ),
            "postings": sorted(
                conn.execute(
                    "SELECT i.key, t.term, p.tf, p.dl FROM postings p "
                    "JOIN terms t ON t.id = p.term_id JOIN items i ON i.id = p.item_id"
                ).fetchall()
            ),
            "doc_len": sorted(
                conn.execute(
                    "SELECT n.ns, i.key, i.doc_len FROM items i JOIN namespaces n ON n.id = i.ns_id"
                ).fetchall()
            ),
        }


def _apply(store: HybridStore, steps: list[tuple[Any, ...]], batch: bool) -> None:
    ops = [PutOp(ns, key, value, index=index) for ns, key, value, index in steps]
    if batch:
        store.batch(ops)
    else:
        for op in ops:
            store.batch([op])


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    first=st.lists(_op, max_size=12),
    second=st.lists(_op, max_size=8),
    batch=st.booleans(),
)
def test_incremental_stats_equal_a_rebuild(
    first: list[tuple[Any, ...]], second: list[tuple[Any, ...]], batch: bool
) -> None:
    store = HybridStore(index=False)
    try:
        _apply(store, first, batch=False)
        _apply(store, second, batch=batch)
        before = _stats(store)
        assert all(n >= 0 and tl >= 0 for _ns, n, tl in before["namespaces"])
        store.reindex(vectors=False)
        assert before == _stats(store)
        assert store.check()["ok"]
    finally:
        store.close()


def test_overwriting_a_tokenless_item_then_deleting_it_keeps_counts() -> None:
    store = HybridStore(index=False)
    try:
        store.put(("ns",), "k", {"text": "the"})
        store.put(("ns",), "k", {"text": "lake trip"})
        assert _stats(store)["namespaces"] == [("ns", 1, 2)]
        store.delete(("ns",), "k")
        assert _stats(store)["namespaces"] == []
        store.put(("ns",), "k2", {"text": "lake"})
        assert [h.key for h in store.search(("ns",), query="lake")] == ["k2"]
    finally:
        store.close()
