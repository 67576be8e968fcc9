"""A small namespace ranked from memory (the resident keyword index, store/keyword/resident.py, and
the row cache's full rows) answers exactly as the per-term postings cache and as plain SQLite.

Three stores take the same operations, each through two handles on its own file (the second
standing for another process): resident from a namespace's first search (the default),
`keyword_resident_docs=0` (per-term cache) and every cache off (SQLite). Writes
cover puts and overwrites (sessions, confidence, category, TTL), deletes, use marks, reads
that refresh a TTL, a value changed outside the store's API, log compaction and the clock moving past expiry; after each, searches with every
option (filter, offset, current topic, time range, feedback on and off) must give the same
keys, scores and components, bit for bit.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from _store_ops import ITEM_OPS, apply_item_op
from conftest import HashEmbeddings
from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus import HybridStore
from langmem_plus.clock import ManualClock
from langmem_plus.store.db.changefeed import KEYWORD_FEED
from langmem_plus.store.tuning import StoreTuning

WORDS = ["alpha", "beta", "gamma", "delta", "redis", "cache", "火锅", "成都", "paint", "paints"]
NS = [("u", "a"), ("u", "b")]
CONFIGS = [
    {},
    {"keyword_resident_docs": 0},
    {"keyword_cache_postings": 0, "row_cache_rows": 0},
]

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
value = st.fixed_dictionaries(
    {"text": text},
    optional={
        "session_id": st.sampled_from(["s1", "s2"]),
        "confidence": st.floats(0, 1),
        "category": st.sampled_from(["fact", "preference"]),
    },
)
ref = st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, 5))  # handle, ns, key
op = st.one_of(
    st.tuples(st.just("put"), ref, value, st.none() | st.sampled_from([1.0, 30.0])),
    st.tuples(st.just("delete"), ref),
    st.tuples(st.just("used"), ref),
    st.tuples(st.just("get"), ref),
    st.tuples(st.just("raw_value"), st.integers(0, 5), text),
    st.tuples(st.just("compact")),
    st.tuples(st.just("advance"), st.sampled_from([30.0, 3_600.0])),
    st.tuples(st.just("search"), st.integers(0, 1), text, st.integers(0, 4)),
    st.tuples(st.just("search"), st.integers(0, 1), text, st.just(0)),
)


def _search(store: HybridStore, ns: int, query: str, variant: int, now: float) -> Any:
    """One search in one of five shapes: plain, filtered, offset, topic, time range."""
    kw: dict[str, Any] = {"query": query, "limit": 6}
    if variant == 1:
        kw["filter"] = {"session_id": "s1"}
    elif variant == 2:
        kw.update(offset=2, limit=4)
    elif variant == 3:
        kw["current_topic"] = "beta gamma"
    elif variant == 4:
        kw["time_range"] = (now - 60.0, None)
    hits = store.search(NS[ns], **kw)
    return [(h.key, h.value, h.updated_at, h.score, h.components) for h in hits]


def _run(ops: list[Any], prf: bool) -> list[list[Any]]:
    """Apply `ops` to one store per configuration; the searches' answers, per store."""
    answers: list[list[Any]] = []
    with tempfile.TemporaryDirectory() as d:
        for i, extra in enumerate(CONFIGS):
            clock = ManualClock()
            cfg = StoreTuning(**{**extra, **({} if prf else {"prf_terms": 0})})
            index = {"dims": 16, "embed": HashEmbeddings(16), "fields": ["text"]}
            path = Path(d) / f"s{i}.db"
            ttl = {"default_ttl": None, "omit_expired": True}
            handles = [
                HybridStore(path, index=index, tuning=cfg, ttl=ttl, clock=clock)  # type: ignore[arg-type]
                for _ in range(2)
            ]
            got: list[Any] = []
            try:
                for o in ops:
                    _apply(handles, clock, o, got)
                for ns in (0, 1):
                    got.append(_search(handles[0], ns, "alpha redis 火锅", 0, clock()))
            finally:
                for h in handles:
                    h.close()
            answers.append(got)
    return answers


def _apply(handles: list[HybridStore], clock: ManualClock, o: Any, got: list[Any]) -> None:
    kind = o[0]
    if kind in ITEM_OPS:
        apply_item_op(handles, NS, o)
    elif kind == "raw_value":  # another process, outside the store's API
        with handles[1]._db.write() as conn:
            conn.execute(
                "UPDATE items SET value = json_set(value, '$.text', ?) WHERE key = ?",
                (o[2], f"k{o[1]}"),
            )
    elif kind == "compact":
        with handles[1]._db.write() as conn:
            KEYWORD_FEED.keep_newest(conn, 0)
    elif kind == "advance":
        clock.advance(o[1])
    else:
        got.append(_search(handles[0], o[1], o[2], o[3], clock()))


@settings(max_examples=80, deadline=None)
@given(ops=st.lists(op, min_size=1, max_size=30), prf=st.booleans())
def test_resident_per_term_and_sqlite_rank_the_same(ops: list[Any], prf: bool) -> None:
    resident, per_term, sqlite = _run(ops, prf)
    assert resident == per_term
    assert resident == sqlite


def test_an_overwrite_after_a_search_is_read_back_new() -> None:
    """The winners' full rows come from memory for a small namespace: an overwrite drops the
    held row (and a value changed outside the store's API too)."""
    ops = [
        ("put", (0, 0, 1), {"text": "alpha beta"}, None),
        ("put", (0, 0, 2), {"text": "gamma"}, None),
        ("search", 0, "alpha", 0),
        ("put", (0, 0, 1), {"text": "alpha delta"}, None),
        ("search", 0, "alpha", 0),
        ("raw_value", 1, "alpha epsilon"),
        ("search", 0, "alpha", 0),
    ]
    resident, per_term, sqlite = _run(ops, True)
    assert resident == per_term == sqlite
    assert [v for _k, v, *_ in resident[1]][:1] == [{"text": "alpha delta"}]
    assert [v for _k, v, *_ in resident[2]][:1] == [{"text": "alpha epsilon"}]


def test_a_write_by_another_process_reaches_the_next_search(tmp_path: Path) -> None:
    """The resident index of a namespace is dropped by any keyword change to it, whoever
    writes: a second handle's put is found by the first handle's next search."""
    index = {"dims": 16, "embed": HashEmbeddings(16), "fields": ["text"]}
    a = HybridStore(tmp_path / "p.db", index=index)
    b = HybridStore(tmp_path / "p.db", index=index)
    for i in range(20):
        a.put(("u",), f"k{i}", {"text": f"alpha note {i}"})
    assert [h.key for h in a.search(("u",), query="zebra", limit=3)][:1] != ["z"]
    cache = a._kw._cache
    assert cache is not None
    with a._db.read() as conn:
        (ns_id,) = a._ns_ids(conn, ("u",))
    assert cache.held(ns_id) is not None  # ranked from the resident index
    b.put(("u",), "z", {"text": "zebra crossing"})
    assert [h.key for h in a.search(("u",), query="zebra", limit=3)][:1] == ["z"]
    b.delete(("u",), "z")
    assert "z" not in [h.key for h in a.search(("u",), query="zebra", limit=3)]
    a.close()
    b.close()


def test_resident_indexes_count_against_the_postings_cap(tmp_path: Path) -> None:
    """What the resident indexes hold is bounded by `keyword_cache_postings`: past it, the
    least recently searched namespaces are dropped (and reload on their next search)."""
    cfg = StoreTuning(keyword_cache_postings=3_000)
    store = HybridStore(tmp_path / "c.db", index=False, tuning=cfg)
    for u in range(6):
        for i in range(10):
            store.put(("u", str(u)), f"k{i}", {"text": f"alpha beta note{i} user{u}"})
    for u in range(6):
        assert len(store.search(("u", str(u)), query="alpha", limit=20)) == 10
    cache = store._kw._cache
    assert cache is not None
    weight = max(r.weight for r in (cache.held(n) for n in list(cache._ns)) if r is not None)
    assert cache.postings <= 3_000 + weight  # trimmed between searches, one namespace over
    held = [n for n in list(cache._ns) if cache.held(n) is not None]
    assert 0 < len(held) < 6
    store.close()
