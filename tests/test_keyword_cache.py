"""The in-memory postings cache (store/keyword/cache.py) never serves stale or wrong scores.

Reference: the same KeywordIndex formula reading SQLite directly (no cache, unbounded budget),
on the same connection and snapshot. Writes come from the searching handle and from a second
handle on the same file (another process's writes), interleaved with searches, overwrites,
deletes, log compaction and a full reindex.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp

from langmem_plus import HybridStore
from langmem_plus.store.db.changefeed import KEYWORD_FEED
from langmem_plus.store.keyword.index import KeywordIndex
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.text.tokenize import QueryTerms

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "火锅", "成都", "redis", "cache"]
NS = [("u", "a"), ("u", "b")]


def _reference(store: HybridStore, conn, ns_ids, terms):
    tuning = store.tuning.model_copy(
        update={"max_postings_scan": 10**9, "keyword_cache_postings": 0}
    )
    ref = KeywordIndex(tuning)
    return ref.search(conn, ns_ids, QueryTerms(tuple(terms), ()), k=1000)


def _check(store: HybridStore, prefix, terms, tiny_budget: bool = False) -> None:
    store._kw._cached_postings_scan = 1 if tiny_budget else 50_000
    with store._db.read() as conn:
        ns_ids = store._ns_ids(conn, prefix)
        got = store._kw.search(conn, ns_ids, QueryTerms(tuple(terms), ()), k=1000)
        exp = _reference(store, conn, ns_ids, terms)
        some = [*sorted(exp)[::2], 10**9]  # every other hit and an id that matches nothing
        only = store._kw.score_items(conn, ns_ids, QueryTerms(tuple(terms), ()), some)
        # a document's terms for feedback: from the one-namespace Lexicon as from SQLite
        ids = [*sorted(exp, reverse=True), *sorted(exp)[:1]]
        with store._kw.query_scope():
            store._kw.search(conn, ns_ids, QueryTerms(tuple(terms), ()), k=10)
            scoped = list(store._kw.doc_terms(conn, ids))
        assert scoped == list(store._kw.doc_terms(conn, ids))  # outside a scope: SQLite
    if tiny_budget:  # past the first term everything is deferred: the hits are exact
        assert bool(got) == bool(exp) and set(got) <= set(exp)
        for i, v in got.items():
            assert v == pytest.approx(exp[i], rel=1e-9, abs=1e-12)
    else:
        assert set(got) == set(exp)
        for i, v in exp.items():
            assert got[i] == pytest.approx(v, rel=1e-9, abs=1e-12)
    assert set(only) == {i for i in some if exp.get(i, 0) > 0}
    for i, v in only.items():
        assert v == pytest.approx(exp[i], rel=1e-9, abs=1e-12)


doc = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
op = st.one_of(
    st.tuples(st.just("put"), st.integers(0, 1), st.integers(0, 1), st.integers(0, 12), doc),
    st.tuples(st.just("delete"), st.integers(0, 1), st.integers(0, 1), st.integers(0, 12)),
    st.tuples(
        st.just("search"),
        st.sampled_from([("u",), ("u", "a"), ("u", "b")]),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3, unique=True),
        st.booleans(),
    ),
    st.tuples(st.just("compact")),
    st.tuples(st.just("reindex")),
)


@settings(max_examples=80, deadline=None)
@given(ops=st.lists(op, min_size=1, max_size=40), warm=st.booleans())
def test_cache_matches_sqlite_under_interleaved_writes(ops, warm):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "k.db"
        reader = HybridStore(path, index=False)
        reader._kw._cache_warm_docs = 20_000 if warm else 0  # whole namespace or term by term
        reader._kw._warm_min_docs = 0  # tiny namespaces here
        other = HybridStore(path, index=False)  # a second handle: "another process"
        handles = [reader, other]
        try:
            for o in ops:
                if o[0] == "put":
                    _, h, ns, key, text = o
                    handles[h].put(NS[ns], f"k{key}", {"text": text})
                elif o[0] == "delete":
                    _, h, ns, key = o
                    handles[h].delete(NS[ns], f"k{key}")
                elif o[0] == "search":
                    _check(reader, o[1], o[2], o[3])
                elif o[0] == "compact":
                    with other._db.write() as conn:
                        KEYWORD_FEED.keep_newest(conn, 1)
                else:
                    other.reindex()
            for prefix in [("u",), ("u", "a")]:
                _check(reader, prefix, WORDS[:4])
        finally:
            reader.close()
            other.close()


def test_cache_serves_repeated_terms_from_memory_and_sees_other_writers(tmp_path):
    path = tmp_path / "k.db"
    a = HybridStore(path, index=False)
    b = HybridStore(path, index=False)
    for i in range(50):
        a.put(("u",), f"k{i}", {"text": f"redis cache note {i}"})
    assert [r.key for r in a.search(("u",), query="redis", limit=3)]
    cache = a._kw._cache
    assert cache is not None and cache.postings >= 50
    b.put(("u",), "new", {"text": "completely fresh zebra"})
    b.delete(("u",), "k0")
    b.put(("u",), "k1", {"text": "zebra only now"})
    keys = [r.key for r in a.search(("u",), query="zebra", limit=5)]
    assert set(keys) == {"new", "k1"}
    keys = {r.key for r in a.search(("u",), query="redis", limit=100)}
    assert "k0" not in keys and "k1" not in keys and len(keys) == 48
    a.close()
    b.close()


def test_cache_cap_and_disable(tmp_path):
    cfg = StoreTuning(keyword_cache_postings=0)
    s = HybridStore(tmp_path / "n.db", index=False, tuning=cfg)
    s.put(("u",), "k", {"text": "redis cache"})
    assert s._kw._cache is None
    assert [r.key for r in s.search(("u",), query="redis")] == ["k"]
    s.close()
    small = HybridStore(  # terms load one by one here (no whole-namespace warm-up)
        tmp_path / "c.db",
        index=False,
        tuning=StoreTuning(keyword_cache_postings=10, keyword_cache_warm_docs=0),
    )
    for u in range(5):
        for i in range(20):
            small.put(("u", str(u)), f"k{i}", {"text": f"redis cache {i}"})
    for u in range(5):
        assert len(small.search(("u", str(u)), query="redis cache", limit=50)) == 20
    cache = small._kw._cache
    assert cache is not None and cache.postings <= 40  # one namespace over the cap is cut
    small.close()


@pytest.mark.parametrize("resident_docs", [0, 1_000])
def test_budget_defers_common_terms_but_keeps_candidates_exactly_scored(tmp_path, resident_docs):
    # resident_docs 0: the per-term cache; 1,000: the whole-namespace index, which leaves a
    # query whose terms the budget would defer to the per-term path
    cfg = StoreTuning(cached_postings_scan=100, keyword_resident_docs=resident_docs)
    s = HybridStore(tmp_path / "b.db", index=False, tuning=cfg)
    for i in range(300):
        extra = " zebra" if i % 50 == 0 else ""
        s.put(("u",), f"k{i}", {"text": f"common word{i % 7}{extra}"})
    for warm in (False, True):  # "common" read from SQLite, then from memory
        with s._db.read() as conn:
            ns_ids = s._ns_ids(conn, ("u",))
            if warm:  # a query of "common" alone loads it (the first term is always read)
                s._kw.search(conn, ns_ids, QueryTerms(("common",), ()), k=5)
                cached = s._kw._cache is not None and s._kw._cache.has(ns_ids[0], "common")
                assert cached or resident_docs
            q = QueryTerms(("zebra", "common"), ())
            got = s._kw.search(conn, ns_ids, q, k=6)
            exp = _reference(s, conn, ns_ids, ["zebra", "common"])
        best = sorted(exp, key=lambda i: -exp[i])[:6]  # the six zebra docs
        assert set(got) == set(best)  # rare hits carry both terms' scores
        for i in best:
            assert got[i] == pytest.approx(exp[i], rel=1e-9)
    s.close()


def test_large_namespaces_read_sqlite_not_the_cache(tmp_path):
    cfg = StoreTuning(keyword_cache_max_docs=5)
    s = HybridStore(tmp_path / "l.db", index=False, tuning=cfg)
    for i in range(10):
        s.put(("u",), f"k{i}", {"text": f"redis note {i}"})
    assert len(s.search(("u",), query="redis", limit=20)) == 10
    assert s._kw._cache is not None and s._kw._cache.postings == 0
    s.close()


def test_first_search_loads_a_small_namespace_whole(tmp_path):
    s = HybridStore(tmp_path / "w.db", index=False)
    s.batch([PutOp(("u",), f"k{i}", {"text": f"redis cache note{i}"}) for i in range(2_000)])
    s.search(("u",), query="redis", limit=3)
    cache = s._kw._cache
    assert cache is not None
    with s._db.read() as conn:
        (ns_id,) = s._ns_ids(conn, ("u",))
        total = conn.execute("SELECT COUNT(*) FROM postings").fetchone()[0]
        assert cache.postings == total  # every term, not just "redis"
        assert cache.has(ns_id, "note7")
    s.put(("u",), "new", {"text": "zebra redis"})  # later writes reach the warm cache
    assert [h.key for h in s.search(("u",), query="zebra", limit=3)] == ["new"]
    s.close()


def test_small_namespace_search_remembers_terms_and_documents_in_its_lexicon(tmp_path):
    path = tmp_path / "k.db"
    a = HybridStore(path, index=False)  # held whole from the first search
    b = HybridStore(path, index=False)
    for i in range(20):
        a.put(("u",), f"k{i}", {"text": f"redis cache note {WORDS[i % len(WORDS)]}"})
    q = QueryTerms(("redis", "alpha", "beta", "cache"), ())
    with a._db.read() as conn:
        ns_ids = a._ns_ids(conn, ("u",))
        statements: list[str] = []
        with a._kw.query_scope():
            first = a._kw.search(conn, ns_ids, q, k=20)  # terms, postings, then documents
            a._kw.doc_terms(conn, sorted(first))
            conn.set_trace_callback(statements.append)
            got = a._kw.search(conn, ns_ids, QueryTerms(("beta", "cache"), ()), k=5)
            rows = list(a._kw.doc_terms(conn, sorted(got)))
            conn.set_trace_callback(None)
        assert statements == []  # terms and documents answered from memory
        assert rows == list(a._kw.doc_terms(conn, sorted(got)))
    b.put(("u",), "k3", {"text": "zebra only now"})  # another handle: the lexicon is dropped
    with a._db.read() as conn, a._kw.query_scope():
        got = a._kw.search(conn, ns_ids, QueryTerms(("zebra",), ()), k=5)
        rows = list(a._kw.doc_terms(conn, sorted(got)))
        assert rows == list(a._kw.doc_terms(conn, sorted(got)))
    assert len(got) == 1 and "zebra" in {r[0] for r in rows} and "redis" not in {r[0] for r in rows}
    a.close()
    b.close()
