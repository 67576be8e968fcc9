"""The in-memory row cache (store/sqlite/rowcache.py) never serves a stale ranking row.

Reference: the same light columns read straight from SQLite on the same connection. Writes come
from the searching handle and from a second handle on the same file (another process), and
cover every way a row changes: new puts, overwrites, deletes, mark_used, TTL refresh on read,
restored statistics (import), a direct SQL UPDATE (caught by migration 006's triggers), log
compaction and a tiny cache cap.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from _store_ops import ITEM_OPS, apply_item_op
from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus import HybridStore
from langmem_plus.store.db.changefeed import KEYWORD_FEED
from langmem_plus.store.sqlite import rows as sqlrows
from langmem_plus.store.tuning import StoreTuning

NS = [("u", "a"), ("u", "b")]
WORDS = ["alpha", "beta", "gamma", "火锅", "redis"]


def _check(store: HybridStore, prefix: tuple[str, ...]) -> None:
    with store._db.read() as conn:
        ns_ids = store._ns_ids(conn, prefix)
        all_ids = [r[0] for r in conn.execute("SELECT id FROM items")] + [10**9]
        got = store._backend.light_rows(conn, ns_ids, all_ids)
        exp = sqlrows.read_rows(conn, all_ids, full=False)
        # full rows: of small namespaces loaded whole from memory, the rest from SQLite
        got_full = store._backend.rows(conn, all_ids, full=True)
        exp_full = sqlrows.read_rows(conn, all_ids, full=True)
    # a small namespace's rows are held full: the ranking columns are what ranking reads
    assert {i: r._replace(namespace=None, key=None, value=None) for i, r in got.items()} == exp
    assert got_full == exp_full


value = st.fixed_dictionaries(
    {"text": st.sampled_from(WORDS)},
    optional={
        "confidence": st.floats(0, 1),
        "category": st.sampled_from(["fact", "preference"]),
        "session_id": st.sampled_from(["s1", "s2"]),
    },
)
ref = st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, 8))  # handle, ns, key
op = st.one_of(
    st.tuples(st.just("put"), ref, value, st.none() | st.floats(1, 60)),
    st.tuples(st.just("delete"), ref),
    st.tuples(st.just("used"), ref),
    st.tuples(st.just("get"), ref),
    st.tuples(st.just("restore"), ref, st.integers(0, 50)),
    st.tuples(st.just("sql"), st.integers(0, 8), st.integers(0, 9)),
    st.tuples(st.just("sql_value"), st.integers(0, 8), st.integers(0, 9)),
    st.tuples(st.just("check"), st.sampled_from([("u",), ("u", "a"), ("u", "b")])),
    st.tuples(st.just("compact")),
)


@settings(max_examples=80, deadline=None)
@given(ops=st.lists(op, min_size=1, max_size=40), cap=st.sampled_from([3, 250_000]))
def test_row_cache_matches_sqlite_under_interleaved_writes(ops, cap):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "r.db"
        reader = HybridStore(path, index=False)
        reader._rowcache.max_rows = cap
        other = HybridStore(path, index=False)
        handles = [reader, other]
        try:
            for o in ops:
                kind = o[0]
                if kind in ITEM_OPS:
                    apply_item_op(handles, NS, o)
                elif kind == "sql":  # a writer outside the store's API
                    with other._db.write() as conn:
                        conn.execute(
                            "UPDATE items SET access_count = ? WHERE key = ?",
                            (o[2], f"k{o[1]}"),
                        )
                elif kind == "sql_value":  # only the value, outside the store's API
                    with other._db.write() as conn:
                        conn.execute(
                            "UPDATE items SET value = ? WHERE key = ?",
                            (f'{{"text": "raw {o[2]}"}}', f"k{o[1]}"),
                        )
                elif kind == "compact":
                    with other._db.write() as conn:
                        KEYWORD_FEED.keep_newest(conn, 0)
                else:
                    _check(reader, o[1])
            _check(reader, ("u",))
        finally:
            reader.close()
            other.close()


@pytest.mark.parametrize("resident_docs", [1000, 0])
def test_row_cache_serves_repeat_candidates_from_memory(tmp_path, resident_docs):
    """A small namespace's rows are held whole from its first search: full ones when its
    keyword index is held whole (`keyword_resident_docs`), light ones otherwise."""

    cfg = StoreTuning(keyword_resident_docs=resident_docs)
    store = HybridStore(tmp_path / "m.db", index=False, tuning=cfg)
    for i in range(20):
        store.put(("u",), f"k{i}", {"text": f"alpha {i}"})
    with store._db.read() as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM items")]
    full = 20 if resident_docs else 0
    store.search(("u",), query="alpha 3", limit=2)
    assert set(store._rowcache.rows) == set(ids)  # warmed: the whole namespace
    assert store._rowcache.full == full
    store.search(("u",), query="alpha 4", limit=2)  # again, from memory
    assert set(store._rowcache.rows) == set(ids) and store._rowcache.full == full
    store.mark_used(("u",), ["k3"])
    with store._db.read() as conn:
        store._rowcache.sync(conn)
        k3 = conn.execute("SELECT id FROM items WHERE key='k3'").fetchone()[0]
    assert k3 not in store._rowcache.rows and len(store._rowcache.rows) == 19
    assert store._rowcache.full == max(full - 1, 0)
    store.close()


def test_row_cache_off_reads_sqlite(tmp_path):

    store = HybridStore(tmp_path / "o.db", index=False, tuning=StoreTuning(row_cache_rows=0))
    store.put(("u",), "k", {"text": "alpha"})
    assert [h.key for h in store.search(("u",), query="alpha")] == ["k"]
    assert store._rowcache.rows == {}
    store.close()


def test_full_rows_follow_a_value_changed_outside_the_store(tmp_path):
    """A small namespace's full rows are served from memory; another process changing only
    an item's value (raw SQL, no ranking column) must still be seen (migration 012 logs it)."""
    path = tmp_path / "v.db"
    reader, other = HybridStore(path, index=False), HybridStore(path, index=False)
    for i in range(5):
        reader.put(("u",), f"k{i}", {"text": f"alpha {i}"})
    assert [h.value for h in reader.search(("u",), query="alpha 3", limit=1)] == [
        {"text": "alpha 3"}
    ]
    with other._db.write() as conn:
        conn.execute("UPDATE items SET value = ? WHERE key = 'k3'", ('{"text": "alpha 3 new"}',))
    assert [h.value for h in reader.search(("u",), query="alpha 3", limit=1)] == [
        {"text": "alpha 3 new"}
    ]
    reader.close()
    other.close()


def test_past_its_cap_the_row_cache_drops_the_least_recently_searched_namespaces(tmp_path):
    """Over `row_cache_rows` the rows of the namespaces searched longest ago are dropped (not
    everything): the ones searched since stay, and a dropped one is loaded again when searched."""

    store = HybridStore(tmp_path / "lru.db", index=False, tuning=StoreTuning(row_cache_rows=50))
    for u in range(4):
        for i in range(20):
            store.put(("u", str(u)), f"k{i}", {"text": f"alpha note{i} user{u}"})
    with store._db.read() as conn:
        ns = [store._ns_ids(conn, ("u", str(u)))[0] for u in range(4)]
    cache = store._rowcache
    for u in (0, 1, 0, 2):  # 0 searched again after 1: 1 is the least recently used
        assert len(store.search(("u", str(u)), query="alpha", limit=3)) == 3
        assert cache.weight <= 50
    assert set(cache.warmed) == {ns[0], ns[2]}
    held = {r.namespace for r in cache.rows.values()}
    assert held == {"u.0", "u.2"}
    store.search(("u", "1"), query="alpha", limit=3)  # loaded again; 0 is now the oldest
    assert set(cache.warmed) == {ns[2], ns[1]}
    assert {r.namespace for r in cache.rows.values()} == {"u.2", "u.1"}
    store.close()
