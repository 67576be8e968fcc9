"""A held `Resident` keyword index patched after writes to a few of its documents answers
exactly as one read whole from SQLite (store/keyword/patch.py, `patched`).

Writes cover new items, overwrites that add and drop terms, deletes that remove a term's last
document (its term row is deleted, and a later write re-creates it under a new id) and items
without any token; the patch is applied to the previous patch's result, as a long-lived handle
does, and compared with a fresh load on every question a search asks of it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp

from langmem_plus import HybridStore
from langmem_plus.store.keyword import patch as kwpatch
from langmem_plus.store.keyword.bm25 import Okapi
from langmem_plus.store.keyword.cache import PATCH_MIN
from langmem_plus.store.keyword.patch import patched
from langmem_plus.store.keyword.resident import Resident
from langmem_plus.store.tuning import StoreTuning

WORDS = ["alpha", "beta", "gamma", "redis", "火锅", "成都", "paint", "the", "x1", "deploy"]
text = st.lists(st.sampled_from(WORDS), min_size=0, max_size=7).map(" ".join)
op = st.one_of(
    st.tuples(st.just("put"), st.integers(0, 7), text),
    st.tuples(st.just("delete"), st.integers(0, 7)),
)


def _ids(conn: sqlite3.Connection, ns_id: int, key: str) -> list[int]:
    return [
        r[0] for r in conn.execute("SELECT id FROM items WHERE ns_id=? AND key=?", (ns_id, key))
    ]


def _answers(conn: sqlite3.Connection, res: Resident) -> dict[str, Any]:
    """What a search reads from a resident index, as plain values."""
    terms = sorted(res.term_ix)
    found, tid_ns = res.term_rows([*terms, "absent"])
    idf = dict.fromkeys(terms, 1.25)
    sums = [
        res.bm25(
            order,
            found,
            idf,
            Okapi(1.2, 0.75),
            (res.total_len / res.n_docs) if res.n_docs else 0,
            10**9,
        )
        for order in (terms, terms[::-1], terms[:2])
    ]
    ids = [r[0] for r in conn.execute("SELECT id FROM items WHERE ns_id=?", (res.ns_id,))]
    return {
        "stats": (res.n_docs, res.total_len),
        "terms": found,
        "tid_ns": tid_ns,
        "bm25": sums,
        "docs": res.doc_rows(conn, ids),
        "ids": res.id_list,
        "dl": res.dl.tolist(),
    }


def _rebuilt(held: Resident, conn: sqlite3.Connection, changed: set[int]) -> Resident:
    """`patched(held, ...)` with every pair grouped again (no appending to the held arrays)."""
    appends = kwpatch.appends_only
    try:
        kwpatch.appends_only = lambda old, docs: False
        return patched(held, conn, changed)
    finally:
        kwpatch.appends_only = appends


def _layout(res: Resident) -> dict[str, Any]:
    """Every array and lookup of a resident index, as plain values (with their types)."""
    arrays = {
        name: (str(getattr(res, name).dtype), getattr(res, name).tolist())
        for name in ("ids", "dl", "t_pos", "t_tf", "p_term", "p_tf")
    }
    lists = {
        name: getattr(res, name)
        for name in ("id_list", "pos_of", "ptr", "doc_ptr", "dl_list", "terms", "term_ix")
    }
    return {**arrays, **lists, "weight": res.weight}


@settings(max_examples=60, deadline=None)
@given(
    first=st.lists(st.tuples(st.integers(0, 7), text), min_size=1, max_size=8),
    rounds=st.lists(st.lists(op, min_size=1, max_size=4), min_size=1, max_size=4),
)
def test_a_patched_index_answers_as_a_fresh_load(
    tmp_path_factory: Any, first: list[tuple[int, str]], rounds: list[list[Any]]
) -> None:
    path: Path = tmp_path_factory.mktemp("patch") / "p.db"
    store = HybridStore(path, index=False, tuning=StoreTuning(keyword_cache_postings=0))
    ns = ("u",)
    try:
        for key, t in first:
            store.put(ns, f"k{key}", {"text": t})
        with store._db.read() as conn:
            ns_id = store._ns_ids(conn, ns)[0]
            held = Resident.load(conn, ns_id)
        for ops in rounds:
            changed: set[int] = set()
            for o in ops:
                key = f"k{o[1]}"
                with store._db.read() as conn:
                    changed.update(_ids(conn, ns_id, key))
                if o[0] == "put":
                    store.put(ns, key, {"text": o[2]})
                else:
                    store.delete(ns, key)
                with store._db.read() as conn:
                    changed.update(_ids(conn, ns_id, key))
            with store._db.read() as conn:
                rebuilt = _rebuilt(held, conn, changed)
                held = patched(held, conn, changed)
                fresh = Resident.load(conn, ns_id)
                assert _answers(conn, held) == _answers(conn, fresh)
                assert _layout(held) == _layout(rebuilt)
    finally:
        store.close()


def test_a_write_patches_the_held_index_and_a_bulk_write_drops_it(tmp_path: Path) -> None:
    """Through the store: a put to a namespace whose index is held keeps it held (patched,
    the new word found by the next search); more changed documents than `PATCH_MIN` and a
    quarter of the namespace drop it (the next search reads it whole again)."""
    store = HybridStore(tmp_path / "w.db", index=False)
    ns = ("u",)
    for i in range(40):
        store.put(ns, f"k{i}", {"text": f"alpha note{i}"})
    assert store.search(ns, query="alpha", limit=3)
    cache = store._kw._cache
    assert cache is not None
    with store._db.read() as conn:
        ns_id = store._ns_ids(conn, ns)[0]
    before = cache.held(ns_id)
    assert before is not None
    store.put(ns, "z", {"text": "zebra crossing"})
    store.put(ns, "k1", {"text": "alpha zebra"})
    with store._db.read() as conn:
        store._kw._sync(conn)
    assert cache.held(ns_id) is before  # noted, patched on the namespace's next use
    assert {h.key for h in store.search(ns, query="zebra", limit=3)} == {"z", "k1"}
    after = cache.held(ns_id)
    assert after is not None and after is not before and "zebra" in after.term_ix
    store.batch([PutOp(ns, f"b{i}", {"text": f"bulk{i}"}) for i in range(PATCH_MIN + 1)])
    with store._db.read() as conn:
        store._kw._sync(conn)
    assert cache.held(ns_id) is None
    assert [h.key for h in store.search(ns, query="bulk3", limit=3)] == ["b3"]
    store.close()


def test_the_agent_loop_holds_the_index_from_the_first_recall(tmp_path: Path) -> None:
    """Recall, keep the exchange, recall: the first recall reads the namespace's index whole,
    the next ones use it patched with the write in between."""
    store = HybridStore(tmp_path / "loop.db", index=False)
    ns = ("u",)
    for i in range(30):
        store.put(ns, f"k{i}", {"text": f"alpha note{i}"})
    cache = store._kw._cache
    assert cache is not None
    with store._db.read() as conn:
        ns_id = store._ns_ids(conn, ns)[0]
    held = []
    for turn in range(3):
        store.search(ns, query=f"alpha note{turn}", limit=3)
        held.append(cache.held(ns_id))
        store.put(ns, f"turn{turn}", {"text": f"exchange {turn} zebra"})
    assert all(h is not None for h in held)
    assert held[2] is not held[1]  # patched with the write in between
    assert [h.key for h in store.search(ns, query="exchange 2", limit=1)] == ["turn2"]
    store.close()


@settings(max_examples=40, deadline=None)
@given(
    first=st.lists(text, min_size=0, max_size=6),
    rounds=st.lists(st.lists(text, min_size=1, max_size=3), min_size=1, max_size=4),
)
def test_appending_new_items_lays_the_index_out_as_grouping_again(
    tmp_path_factory: Any, first: list[str], rounds: list[list[str]]
) -> None:
    """New items only (the agent loop's writes): the patch appends to the held arrays, and
    every array and lookup equals the one grouping every pair again would build, from an
    empty namespace too; the answers equal a fresh load's."""
    path: Path = tmp_path_factory.mktemp("append") / "a.db"
    store = HybridStore(path, index=False, tuning=StoreTuning(keyword_cache_postings=0))
    ns = ("u",)
    try:
        store.put(ns, "seed", {"text": "seed"})
        store.delete(ns, "seed")
        for i, t in enumerate(first):
            store.put(ns, f"f{i}", {"text": t})
        with store._db.read() as conn:
            ns_id = store._ns_ids(conn, ns)[0]
            held = Resident.load(conn, ns_id)
        n = 0
        for texts in rounds:
            changed: set[int] = set()
            for t in texts:
                store.put(ns, f"n{n}", {"text": t})
                n += 1
                with store._db.read() as conn:
                    changed.update(_ids(conn, ns_id, f"n{n - 1}"))
            with store._db.read() as conn:
                rebuilt = _rebuilt(held, conn, changed)
                held = patched(held, conn, changed)
                assert _layout(held) == _layout(rebuilt)
                assert _answers(conn, held) == _answers(conn, Resident.load(conn, ns_id))
    finally:
        store.close()
