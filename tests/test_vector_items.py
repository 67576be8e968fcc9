"""Vector search by item (`VectorIndex.search_items` / `ExactCosines`) equals brute force.

The exact indexes keep the item id of each stored vector in storage order; this checks that
mirror against a brute-force scan of the SQLite vectors after random puts (one or two vectors
per item), overwrites, deletes, a reopen (snapshot: the mirror is rebuilt from SQLite) and a
switch to IVF (where cosines come from SQLite again).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import HashEmbeddings
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp

from langmem_plus import HybridStore
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.store.vector import index as vector
from langmem_plus.store.vector.index import decode_vecs

EMB = HashEmbeddings(16)
INDEX = {"dims": 16, "embed": EMB, "fields": ["text", "note"]}
WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
# Exact namespaces hold float16 unit vectors: cosines agree with float32 to ~1e-4 (16-d here,
# so each component is large and the rounding relatively coarse); 2e-3 leaves room, and is
# far below the gap a real ranking bug would make.
TOL = 2e-3


def _brute(store: HybridStore, q: np.ndarray) -> dict[int, float]:
    """item id -> best cosine over its stored vectors, straight from SQLite."""
    qn = q / np.linalg.norm(q)
    with store._db.read() as conn:
        rows = conn.execute("SELECT item_id, vec FROM vectors").fetchall()
    out: dict[int, float] = {}
    if not rows:
        return out
    mat = decode_vecs([r[1] for r in rows], 16)
    sims = (mat / np.linalg.norm(mat, axis=1, keepdims=True)) @ qn
    for (item_id, _), s in zip(rows, sims.tolist(), strict=True):
        out[item_id] = max(out.get(item_id, -2.0), s)
    return out


def _check(store: HybridStore, query: str, k: int) -> None:
    q = np.asarray(EMB.embed_query(query), np.float32)
    ref = _brute(store, q)
    with store._db.read() as conn:
        assert store._vec is not None
        store._vec.sync(conn)
        ns_ids = store._ns_ids(conn, ("u",))
        best, exact = store._vec.search_items(conn, ns_ids, q, k)
        looked = exact.lookup([*ref, *list(ref)[:2], 10**9])  # repeats are allowed
    # the k nearest *vectors*, by item: at most k items, at least one when any exists
    assert (1 if ref else 0) <= len(best) <= min(k, len(ref))
    for item_id, sim in best.items():
        assert sim == pytest.approx(ref[item_id], abs=TOL)
    if best and len(best) < len(ref):  # nothing outside the top k beats its worst
        worst = min(best.values())
        assert all(v <= worst + TOL for i, v in ref.items() if i not in best)
    if exact.complete:
        assert set(looked) == set(ref)
        for item_id, sim in looked.items():
            assert sim == pytest.approx(ref[item_id], abs=TOL)
    # a namespace scanned whole answers as the best-k scan plus selected lookups, bit for bit
    other = np.asarray(EMB.embed_query("zeta " + query), np.float32)  # another query vector
    looked_other = exact.with_query(other).lookup(list(ref))
    whole = vector._WHOLE_SCAN
    try:
        vector._WHOLE_SCAN = 0
        with store._db.read() as conn:
            best0, exact0 = store._vec.search_items(conn, ns_ids, q, k)
            looked0 = exact0.lookup([*ref, *list(ref)[:2], 10**9])
            looked_other0 = exact0.with_query(other).lookup(list(ref))
    finally:
        vector._WHOLE_SCAN = whole
    assert list(best.items()) == list(best0.items())
    assert list(looked.items()) == list(looked0.items())
    assert list(looked_other.items()) == list(looked_other0.items())


op = st.one_of(
    st.tuples(st.just("put"), st.integers(0, 9), text, st.none() | text),
    st.tuples(st.just("delete"), st.integers(0, 9)),
    st.tuples(st.just("search"), text, st.integers(1, 6)),
    st.tuples(st.just("reopen")),
    # writes through a second handle ("another process"): the searching handle then replays
    # several log rows in one sync
    st.tuples(st.just("other"), st.lists(st.tuples(st.integers(0, 9), text), max_size=4)),
)


@settings(max_examples=50, deadline=None)
@given(ops=st.lists(op, min_size=1, max_size=30))
def test_search_items_matches_brute_force(ops):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "v.db"
        cfg = StoreTuning(snapshot_min_vectors=0)
        store = HybridStore(path, index=INDEX, tuning=cfg)
        other = HybridStore(path, index=INDEX, tuning=cfg)
        try:
            for o in ops:
                if o[0] == "other":
                    other.batch([PutOp(("u",), f"k{k}", {"text": t}) for k, t in o[1]])
                elif o[0] == "put":
                    value = {"text": o[2]} if o[3] is None else {"text": o[2], "note": o[3]}
                    store.put(("u",), f"k{o[1]}", value)
                elif o[0] == "delete":
                    store.delete(("u",), f"k{o[1]}")
                elif o[0] == "search":
                    _check(store, o[1], o[2])
                else:
                    store.close()
                    store = HybridStore(path, index=INDEX, tuning=cfg)
            _check(store, "alpha beta", 5)
        finally:
            store.close()
            other.close()


def test_ivf_namespaces_fall_back_to_sqlite_cosines(tmp_path):
    store = HybridStore(tmp_path / "i.db", index=INDEX, tuning=StoreTuning(ann_threshold=1000))
    rng = np.random.default_rng(0)
    for i in range(0, 1100, 100):
        for j in range(i, i + 100):
            words = rng.choice(WORDS, size=3).tolist()
            store.put(("u",), f"k{j}", {"text": " ".join(words) + f" w{j}"})
    assert store._vec is not None and any(i.approximate for i in store._vec._ns.values())
    q = np.asarray(EMB.embed_query("alpha w5"), np.float32)
    with store._db.read() as conn:
        best, exact = store._vec.search_items(conn, store._ns_ids(conn, ("u",)), q, 10)
    assert not exact.complete and len(best) == 10
    hits = store.search(("u",), query="alpha w5", limit=3)
    assert hits and all(h.components["vector"] != 0 for h in hits)
    store.close()


@settings(max_examples=60, deadline=None)
@given(
    batches=st.lists(st.lists(st.integers(1, 40), min_size=1, max_size=5), min_size=1, max_size=8),
    look=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_sorted_items_kept_on_append_equal_a_fresh_sort(batches, look):
    """`NsIndex.appended` extends the sorted item ids in place only when that equals the sort."""
    from langmem_plus.store.vector.index import VectorIndex

    vi = VectorIndex(4)
    rng = np.random.default_rng(0)
    vid = 0
    for b, items in enumerate(batches):
        ids = np.arange(vid, vid + len(items), dtype=np.int64)
        vid += len(items)
        vi._add(1, ids, rng.standard_normal((len(items), 4)).astype(np.float32), np.array(items))
        idx = vi._ns[1]
        if look[b]:  # a lookup between writes builds the sorted form
            order, srt = idx.sorted_items()
            items_now = idx.items.view()
            ref = np.argsort(items_now, kind="stable")
            assert np.array_equal(order, ref) and np.array_equal(srt, items_now[ref])


def test_background_vector_scan_ranks_like_the_inline_one(tmp_path, monkeypatch):
    """`vector_search_thread`: the FAISS scan on a worker thread gives the same ranking."""
    import langmem_plus.store.vector.index as vector_mod

    monkeypatch.setattr(vector_mod, "_BACKGROUND_MIN", 50)  # background from 50 vectors
    store = HybridStore(tmp_path / "bg.db", index=INDEX)
    assert store._vec is not None and store._vec._background  # the config's default
    rng = np.random.default_rng(3)
    store.batch(
        [
            PutOp(("u",), f"k{i}", {"text": " ".join(rng.choice(WORDS, size=3).tolist())})
            for i in range(120)
        ]
    )
    used = []
    real = vector_mod.worker_pool

    def spy():
        used.append(1)
        return real()

    monkeypatch.setattr(vector_mod, "worker_pool", spy)
    for query in ["alpha beta", "theta", "zeta eta gamma", "nothing matches"]:
        store._vec._background = True
        bg = [(h.key, h.score) for h in store.search(("u",), query=query, limit=10)]
        store._vec._background = False
        inline = [(h.key, h.score) for h in store.search(("u",), query=query, limit=10)]
        # same order; scores equal up to the recency decay between the two calls
        assert [k for k, _ in bg] == [k for k, _ in inline] and bg
        assert [s for _, s in bg] == pytest.approx([s for _, s in inline], rel=1e-6)
    assert used  # the worker pool was really asked for
    store.close()
    off = HybridStore(index=INDEX, tuning=StoreTuning(vector_search_thread=False))
    assert off._vec is not None and not off._vec._background
    off.close()


def test_worker_pool_is_made_again_in_a_forked_child():
    """A child forked after the pool exists gets its own threads (the parent's are gone)."""
    import multiprocessing as mp

    from langmem_plus.store.vector.workers import worker_pool

    assert worker_pool().submit(lambda: 41 + 1).result(timeout=10) == 42
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as p:
        assert p.apply_async(_scan_in_child).get(timeout=30) == 42


def _scan_in_child() -> int:
    from langmem_plus.store.vector.workers import worker_pool

    return worker_pool().submit(lambda: 41 + 1).result(timeout=10)
