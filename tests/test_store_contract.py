"""HybridStore honours the whole LangGraph BaseStore contract."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time

import pytest
from conftest import HashEmbeddings
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, PutOp, SearchOp

from langmem_plus import HybridStore, MemorySearchItem
from langmem_plus.clock import ManualClock
from langmem_plus.errors import InvalidQueryError, StoreClosedError, ValidationError
from langmem_plus.store.batching import segments


@pytest.fixture
def store(hash_index):
    s = HybridStore(index=hash_index)
    yield s
    s.close()


def test_put_get_roundtrip_keeps_value_exactly(store):
    value = {"text": "我喜欢川菜", "nested": {"a": [1, 2, {"b": None}]}, "n": 1.5, "t": True}
    store.put(("memories", "u1"), "k1", value)
    item = store.get(("memories", "u1"), "k1")
    assert item is not None
    assert item.value == value
    assert item.key == "k1" and item.namespace == ("memories", "u1")
    assert store.get(("memories", "u1"), "missing") is None
    assert store.get(("memories", "other"), "k1") is None


def test_update_keeps_created_at_and_moves_updated_at(hash_index):
    clock = ManualClock()
    store = HybridStore(index=hash_index, clock=clock)
    store.put(("a",), "k", {"text": "one"})
    first = store.get(("a",), "k")
    clock.advance(10)
    store.put(("a",), "k", {"text": "two"})
    second = store.get(("a",), "k")
    assert second.created_at == first.created_at
    assert (second.updated_at - first.updated_at).total_seconds() == pytest.approx(10)
    assert second.value == {"text": "two"}
    store.close()


def test_update_reindexes_keyword_and_vector(store):
    store.put(("a",), "k", {"text": "alpha bravo"})
    store.put(("a",), "k", {"text": "charlie delta"})
    hits = store.search(("a",), query="alpha")
    assert all(h.components["bm25"] == 0 for h in hits)
    hits = store.search(("a",), query="charlie")
    assert hits[0].key == "k" and hits[0].components["bm25"] > 0
    assert store.stats()["vectors"] == 1


def test_delete(store):
    store.put(("a",), "k", {"text": "hello world"})
    store.delete(("a",), "k")
    assert store.get(("a",), "k") is None
    assert store.search(("a",), query="hello") == []
    assert store.stats()["postings"] == 0 and store.stats()["vectors"] == 0
    store.delete(("a",), "never-existed")  # no error


def test_namespace_validation_matches_langgraph(store):
    for bad in [(), ("langgraph", "x")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"a": 1})
    for bad in [("a.b",), ("",), ("a", 1)]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"a": 1})  # type: ignore[arg-type]
    with pytest.raises(InvalidNamespaceError):
        store.batch([GetOp(("a.b",), "k")])
    with pytest.raises(InvalidNamespaceError):
        store.batch([SearchOp(("x.y",))])


def test_bad_values_rejected_and_nothing_lost(store):
    store.put(("a",), "keep", {"text": "precious"})
    with pytest.raises(ValidationError):
        store.put(("a",), "k", {"when": object()})
    with pytest.raises(ValidationError):
        store.batch([PutOp(("a",), "k2", {"text": "ok"}), PutOp(("a",), "k3", "not a dict")])  # type: ignore[arg-type]
    assert store.get(("a",), "k2") is None  # the whole batch was rejected
    assert store.get(("a",), "keep").value == {"text": "precious"}
    with pytest.raises(InvalidQueryError):
        store.search(("a",), limit=-1)
    with pytest.raises(InvalidQueryError):
        store.search(("a",), filter={"x": {"$regex": "a"}})
    with pytest.raises(InvalidQueryError):
        store.search(("a",), query="x", time_range=(2, 1))


def test_batch_reads_see_state_before_writes(store):
    store.put(("a",), "k", {"text": "old"})
    res = store.batch([PutOp(("a",), "k", {"text": "new"}), GetOp(("a",), "k")])
    assert res[0] is None and res[1].value == {"text": "old"}
    assert store.get(("a",), "k").value == {"text": "new"}


def test_last_put_in_batch_wins(store):
    store.batch([PutOp(("a",), "k", {"text": "1"}), PutOp(("a",), "k", {"text": "2"})])
    assert store.get(("a",), "k").value == {"text": "2"}
    store.batch([PutOp(("a",), "k", {"text": "3"}), PutOp(("a",), "k", None)])
    assert store.get(("a",), "k") is None


def test_list_namespaces_conditions(store):
    for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "x", "c"), ("z",), ("users", "1", "v1")]:
        store.put(ns, "k", {"text": "t"})
    assert store.list_namespaces() == sorted(
        [("a", "b", "c"), ("a", "b", "d"), ("a", "x", "c"), ("users", "1", "v1"), ("z",)]
    )
    assert store.list_namespaces(prefix=("a", "b")) == [("a", "b", "c"), ("a", "b", "d")]
    assert store.list_namespaces(prefix=("a", "*", "c")) == [("a", "b", "c"), ("a", "x", "c")]
    assert store.list_namespaces(suffix=("c",)) == [("a", "b", "c"), ("a", "x", "c")]
    assert store.list_namespaces(suffix=("*", "v1")) == [("users", "1", "v1")]
    assert store.list_namespaces(max_depth=1) == [("a",), ("users",), ("z",)]
    assert store.list_namespaces(limit=2, offset=1) == [("a", "b", "d"), ("a", "x", "c")]
    store.delete(("z",), "k")
    assert ("z",) not in store.list_namespaces()


def test_search_prefix_and_pagination(store):
    for i in range(7):
        store.put(("docs", "u1"), f"k{i}", {"text": f"doc {i}", "i": i})
    store.put(("docs", "u2"), "other", {"text": "doc other", "i": 99})
    store.put(("docsx",), "not-under-prefix", {"text": "doc", "i": 100})
    all_u1 = store.search(("docs", "u1"), limit=100)
    assert [h.key for h in all_u1] == [f"k{i}" for i in range(7)]
    assert [h.key for h in store.search(("docs", "u1"), limit=3, offset=2)] == ["k2", "k3", "k4"]
    both = store.search(("docs",), limit=100)
    assert {h.key for h in both} == {f"k{i}" for i in range(7)} | {"other"}


def test_filters_operators_and_dotted_paths(store):
    store.put(
        ("m",),
        "a",
        {"text": "x", "category": "preference", "confidence": 0.9, "meta": {"who": "friend"}},
    )
    store.put(
        ("m",), "b", {"text": "y", "category": "fact", "confidence": 0.4, "meta": {"who": "user"}}
    )
    store.put(("m",), "c", {"text": "z", "category": "fact"})
    keys = lambda **kw: sorted(h.key for h in store.search(("m",), **kw))  # noqa: E731
    assert keys(filter={"category": "fact"}) == ["b", "c"]
    assert keys(filter={"confidence": {"$gte": 0.5}}) == ["a"]
    assert keys(filter={"confidence": {"$lt": 0.5}}) == ["b"]  # missing field: False, no error
    assert keys(filter={"category": {"$ne": "fact"}}) == ["a"]
    assert keys(filter={"meta": {"who": "friend"}}) == ["a"]
    assert keys(filter={"meta.who": "user"}) == ["b"]
    assert keys(filter={"category": {"$in": ["preference", "pattern"]}}) == ["a"]
    assert keys(filter={"category": "fact"}, query="z") == ["b", "c"]


def test_text_presence_and_logical_filters(store):
    store.put(("m",), "a", {"text": "x", "topic": "Food", "tags": ["Japan"], "at": "2024-03-01"})
    store.put(("m",), "b", {"text": "y", "topic": "books", "n": 3, "at": "2023-12-31"})
    store.put(("m",), "c", {"text": "z", "n": 5})
    keys = lambda **kw: sorted(h.key for h in store.search(("m",), **kw))  # noqa: E731
    assert keys(filter={"topic": {"$contains": "oo"}}) == ["a", "b"]
    assert keys(filter={"topic": {"$contains": "foo"}}) == []
    assert keys(filter={"topic": {"$icontains": "FOO"}}) == ["a"]
    assert keys(filter={"tags": {"$contains": "Japan"}}) == ["a"]
    assert keys(filter={"tags": {"$icontains": "japan"}}) == ["a"]
    assert keys(filter={"topic": {"$exists": True}}) == ["a", "b"]
    assert keys(filter={"topic": {"$exists": False}}) == ["c"]
    assert keys(filter={"at": {"$gte": "2024-01-01"}}) == ["a"]  # ISO dates compare as text
    assert keys(filter={"n": {"$gte": "4"}}) == ["c"]  # a numeric text is its number
    assert keys(filter={"$or": [{"topic": "books"}, {"n": 5}]}) == ["b", "c"]
    assert keys(filter={"$and": [{"n": {"$gt": 1}}, {"n": {"$lt": 4}}]}) == ["b"]
    assert keys(filter={"$not": {"topic": "books"}}) == ["a", "c"]
    assert keys(filter={"$not": [{"topic": "books"}, {"n": 5}]}) == ["a"]  # none of them
    assert keys(filter={"$or": [{"n": 3}, {"n": 5}]}, query="y z") == ["b", "c"]


@pytest.mark.parametrize(
    "flt",
    [
        {"$or": {"n": 1}},
        {"$or": []},
        {"$and": ["n"]},
        {"n": {"$exists": "yes"}},
        {"n": {"$eq": 1, "m": 2}},
        {"n": {"$regex": "a"}},
    ],
)
def test_malformed_logical_or_unknown_operators_are_refused(store, flt):
    with pytest.raises(InvalidQueryError):
        store.search(("m",), filter=flt)


def test_query_search_ranks_and_explains(store):
    store.put(("m",), "pg", {"text": "The project uses PostgreSQL 15 for orders"})
    store.put(("m",), "cat", {"text": "User has a cat named Mochi"})
    store.put(
        ("m",), "food", {"text": "用户喜欢吃川菜", "category": "preference", "confidence": 0.95}
    )
    hits = store.search(("m",), query="which database: PostgreSQL?", limit=2)
    assert isinstance(hits[0], MemorySearchItem)
    assert hits[0].key == "pg"
    comps = hits[0].components
    for part in (
        "keyword",
        "bm25",
        "vector",
        "category_boost",
        "recency",
        "frequency",
        "confidence",
    ):
        assert part in comps
    assert hits[0].score == pytest.approx(comps["score"])
    assert hits[0].value == {"text": "The project uses PostgreSQL 15 for orders"}
    pref = store.search(("m",), query="我喜欢吃什么", limit=1)[0]
    assert pref.key == "food" and pref.components["category_boost"] == 1.5


def test_prefix_query(store):
    store.put(("m",), "py", {"text": "I write Python every day"})
    store.put(("m",), "go", {"text": "Golang is fine too"})
    hits = store.search(("m",), query="Pyth*", limit=1)
    assert hits[0].key == "py" and hits[0].components["bm25"] > 0


def test_current_topic_boost_and_time_range(store):
    store.put(("m",), "a", {"text": "we talked about the trip to Japan"})
    store.put(("m",), "b", {"text": "we talked about the budget spreadsheet"})
    plain = {h.key: h.score for h in store.search(("m",), query="we talked about")}
    boosted = {
        h.key: h for h in store.search(("m",), query="we talked about", current_topic="Japan trip")
    }
    assert boosted["a"].components["topic_boost"] == 1.3
    assert boosted["a"].score == pytest.approx(plain["a"] * 1.3)
    assert boosted["b"].components["topic_boost"] == 1.0
    future = store.clock() + 3600
    assert store.search(("m",), query="talked", time_range=(future, None)) == []
    assert len(store.search(("m",), query="talked", time_range=(None, future))) == 2


def test_access_tracking_only_on_explicit_use(store):
    store.put(("m",), "a", {"text": "alpha"})
    store.search(("m",), query="alpha")
    store.get(("m",), "a")
    hit = store.search(("m",), query="alpha")[0]
    assert hit.access_count == 0 and hit.last_accessed is None
    assert store.mark_used(("m",), ["a", "a", "missing"]) == 1
    hit = store.search(("m",), query="alpha")[0]
    assert hit.access_count == 1 and hit.last_accessed is not None
    assert hit.components["frequency"] > 0
    assert store.get(("m",), "a").value == {"text": "alpha"}  # value untouched


def test_index_false_items_not_embedded(store):
    store.put(("m",), "secret", {"text": "unsearchable words"}, index=False)
    store.put(("m",), "open", {"text": "searchable words", "title": "zebra"}, index=["title"])
    assert store.stats()["vectors"] == 1
    assert [
        h.key for h in store.search(("m",), query="unsearchable") if h.components["bm25"] > 0
    ] == []
    assert store.search(("m",), query="zebra")[0].key == "open"
    assert store.get(("m",), "secret").value["text"] == "unsearchable words"


def test_ttl_expiry_refresh_and_sweep(hash_index):
    clock = ManualClock()
    s = HybridStore(
        index=hash_index,
        ttl={"default_ttl": 1, "refresh_on_read": True, "omit_expired": True},
        clock=clock,
    )
    assert s.supports_ttl
    s.put(("m",), "a", {"text": "short lived"})
    s.put(("m",), "b", {"text": "long lived"}, ttl=None)
    clock.advance(59)
    assert s.get(("m",), "a", refresh_ttl=False) is not None  # 1 s before its 60 s TTL
    assert s.sweep_ttl() == 0
    clock.advance(2)
    assert s.get(("m",), "a") is None  # omitted once expired
    assert s.search(("m",), query="lived")[0].key == "b"
    assert s.get(("m",), "b") is not None
    assert s.sweep_ttl() == 1
    assert s.stats()["items"] == 1
    s.put(("m",), "c", {"text": "refreshed"}, ttl=10)  # 600 s
    for _ in range(4):
        clock.advance(400)
        assert s.get(("m",), "c") is not None  # each read pushes expiry forward
    clock.advance(601)
    assert s.get(("m",), "c") is None  # unread for longer than its TTL
    s.close()


def test_search_recency_reads_the_store_clock(hash_index):
    clock = ManualClock()
    s = HybridStore(index=hash_index, clock=clock)
    s.put(("m",), "a", {"text": "recency probe"})
    fresh = s.search(("m",), query="recency probe")[0].components["recency"]
    clock.advance(7 * 86400)  # one half-life
    aged = s.search(("m",), query="recency probe")[0].components["recency"]
    assert fresh == pytest.approx(1.0)
    assert aged == pytest.approx(0.5)
    s.close()


def test_clock_must_be_callable(hash_index):
    with pytest.raises(ValidationError, match="clock"):
        HybridStore(index=hash_index, clock=12.0)  # type: ignore[arg-type]


def test_async_api_does_not_block_event_loop(hash_index):
    s = HybridStore(index=hash_index)

    async def main() -> list[float]:
        ticks: list[float] = []

        async def ticker() -> None:
            for _ in range(20):
                ticks.append(time.perf_counter())
                await asyncio.sleep(0.001)

        async def work() -> None:
            await s.abatch(
                [PutOp(("a",), f"k{i}", {"text": f"item {i} " * 50}) for i in range(300)]
            )
            await s.aput(("a",), "x", {"text": "hello"})
            assert (await s.aget(("a",), "x")).value == {"text": "hello"}
            hits = await s.asearch(("a",), query="hello", limit=1)
            assert hits[0].key == "x"
            assert await s.alist_namespaces() == [("a",)]
            await s.adelete(("a",), "x")
            assert await s.aget(("a",), "x") is None

        await asyncio.gather(ticker(), work())
        return ticks

    ticks = asyncio.run(main())
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert max(gaps) < 0.5  # the loop kept ticking while SQLite worked in a thread
    s.close()


def test_threads_share_one_store(hash_index):
    s = HybridStore(index=hash_index)
    errors: list[BaseException] = []

    def writer(t: int) -> None:
        try:
            for i in range(50):
                s.put(("t", str(t)), f"k{i}", {"text": f"thread {t} item {i}"})
                s.search(("t", str(t)), query=f"item {i}", limit=3)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert s.stats()["items"] == 200
    s.close()


def test_closed_store_raises(hash_index):
    s = HybridStore(index=hash_index)
    s.close()
    s.close()
    with pytest.raises(RuntimeError):
        s.get(("a",), "k")


def test_default_constructor_uses_offline_embeddings():
    s = HybridStore()
    s.put(("m",), "en", {"text": "I have a golden retriever named Max"})
    s.put(("m",), "other", {"text": "The meeting moved to Thursday"})
    hits = s.search(("m",), query="我养了一只狗", limit=1)  # Chinese query, English memory
    assert hits[0].key == "en"
    assert s.model_name.endswith("@0.2.1")
    s.close()


def test_coding_profile_scores_by_symbols(hash_index):
    from langmem_plus import MemoryConfig

    s = HybridStore(index=hash_index, config=MemoryConfig(score={"profile": "coding"}))
    s.put(
        ("c",),
        "t20",
        {
            "text": "processPayment has a race condition in src/pay.ts",
            "symbols": ["processPayment", "src/pay.ts"],
        },
    )
    s.put(("c",), "t50", {"text": "refactored validateOrder to return early"})
    hits = s.search(("c",), query="之前 processPayment 的问题解决了吗", limit=2)
    assert hits[0].key == "t20"
    c = hits[0].components
    assert c["profile"] == "coding" and c["symbol_match"] == 1.0
    assert hits[0].score == pytest.approx(
        0.4 * c["symbol_match"] + 0.3 * c["recency"] + 0.3 * c["vector_norm"]
    )
    assert hits[1].components["symbol_match"] == 0.0
    s.close()


def test_default_embeddings_is_a_process_singleton():
    from langmem_plus import default_embeddings

    e = default_embeddings()
    assert e is default_embeddings()
    vecs = e.embed_documents(["我喜欢猫", "I like cats", ""])
    assert len(vecs) == 3 and all(len(v) == 512 for v in vecs)


def test_substring_fallback_when_no_term_matches():
    s = HybridStore(index=False)
    s.put(("m",), "a", {"text": "我喜欢喝咖啡"})
    s.put(("m",), "b", {"text": "我喜欢喝茶"})
    hits = s.search(("m",), query="咖啡")
    assert hits and hits[0].key == "a"
    s.close()


# ---------------------------------------------------------------- LangGraph conventions
def test_from_conn_string_opens_and_closes_sync_and_async(tmp_path, hash_index):
    path = tmp_path / "m.db"
    with HybridStore.from_conn_string(str(path), index=hash_index) as s:
        s.setup()
        s.setup()  # idempotent: migrations already ran on open
        s.put(("a",), "k", {"text": "kept"})
    with pytest.raises(StoreClosedError):
        s.get(("a",), "k")

    async def main() -> None:
        async with HybridStore.from_conn_string(path, index=hash_index) as s2:
            assert await s2.setup() is None
            assert (await s2.aget(("a",), "k")).value == {"text": "kept"}
        assert s2._closed
        async with HybridStore(index=False) as s3:
            await s3.aput(("b",), "k", {"text": "x"})
        with pytest.raises(StoreClosedError):
            await s3.aget(("b",), "k")

    asyncio.run(main())
    with HybridStore.from_conn_string(":memory:", index=False) as mem:
        assert mem.path is None


def test_from_conn_string_refuses_bad_arguments_before_opening(tmp_path):
    with pytest.raises(ValidationError):
        HybridStore.from_conn_string(42)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="distance_type"):
        HybridStore.from_conn_string(str(tmp_path / "x.db"), index={"distance_type": "l2"})
    assert not (tmp_path / "x.db").exists()


def test_ttl_methods_work_sync_and_awaited(hash_index):
    s = HybridStore(index=hash_index)
    assert s.sweep_ttl() == 0
    fut = s.start_ttl_sweeper(60)
    assert s.start_ttl_sweeper(60) is fut  # already running
    assert not fut.done()
    assert s.stop_ttl_sweeper() == True  # noqa: E712 - the result compares like a bool
    assert fut.done()

    async def main() -> None:
        n = await s.sweep_ttl()
        assert n == 0 and type(n) is int
        fut2 = await s.start_ttl_sweeper(60)
        assert fut2 is s._sweeper_future
        stopped = await s.stop_ttl_sweeper()
        assert stopped is True and fut2.done()
        fut3 = await s.astart_ttl_sweeper(60)
        assert await s.astop_ttl_sweeper() is True and fut3.done()

    asyncio.run(main())
    fut4 = s.start_ttl_sweeper(60)
    fut4.cancel()  # LangGraph's way to stop the sweeper
    assert s._sweeper.stop_requested
    assert s.start_ttl_sweeper(60) is not fut4  # a fresh sweeper after a cancel
    s.close()
    assert not s._sweeper.running


def test_ttl_sweep_removes_items_whose_time_is_up(hash_index):
    s = HybridStore(index=hash_index)
    s.put(("m",), "a", {"text": "short lived"}, ttl=5)
    s.put(("m",), "b", {"text": "long lived"})
    with s.db.write() as conn:  # the TTL has run out (no sleeping in tests)
        conn.execute("UPDATE items SET expires_at = expires_at - 3600 WHERE key='a'")
    # LangGraph's default: visible until swept (a read without refresh leaves the TTL alone)
    assert s.get(("m",), "a", refresh_ttl=False) is not None

    async def sweep() -> int:
        return await s.sweep_ttl()

    assert asyncio.run(sweep()) == 1
    assert s.get(("m",), "a") is None and s.get(("m",), "b") is not None
    s.close()


def test_index_config_keys_are_honoured_or_refused(tmp_path, hash_embeddings):
    base = {"dims": hash_embeddings.dims, "embed": hash_embeddings}
    s = HybridStore(index={**base, "text_fields": ["body"]})  # SqliteStore's spelling
    assert s.fields == ["body"] and s.index_config["fields"] == ["body"]
    s.put(("d",), "k", {"body": "quantum tunnelling", "text": "unrelated words"})
    s.put(("d",), "j", {"body": "pasta recipes", "text": "quantum tunnelling"})
    assert s.search(("d",), query="quantum tunnelling", limit=1)[0].key == "k"
    s.close()
    assert HybridStore(index={**base, "text_fields": "body"}).fields == ["body"]
    same = HybridStore(index={**base, "fields": ["body"], "text_fields": ["body"]})
    assert same.fields == ["body"]
    with pytest.raises(ValidationError, match="disagree"):
        HybridStore(index={**base, "fields": ["a"], "text_fields": ["b"]})
    for key in ("distance_type", "ann_index_config", "__tokenized_fields"):
        with pytest.raises(ValidationError, match=key):
            HybridStore(tmp_path / "y.db", index={**base, key: 1})  # type: ignore[misc]
    assert not (tmp_path / "y.db").exists()
    # SqliteStore's fixtures pass distance_type="cosine": what HybridStore computes
    cosine = HybridStore(index={**base, "distance_type": "cosine"})  # type: ignore[typeddict-unknown-key]
    assert cosine.fields == ["text"]
    cosine.close()
    with pytest.raises(ValidationError, match="cosine only"):
        HybridStore(index={**base, "distance_type": "inner_product"})  # type: ignore[typeddict-unknown-key]


# ---------------------------------------------------------------- async coalescing
class _CountingEmbeddings(HashEmbeddings):
    """HashEmbeddings that count model calls and fail on a poisoned text."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        if any("poison" in t for t in texts):
            raise RuntimeError("embedding service rejected a text")
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        return super().embed_query(text)


def _counting_store() -> tuple[HybridStore, _CountingEmbeddings, list[int]]:
    emb = _CountingEmbeddings()
    s = HybridStore(index={"dims": emb.dims, "embed": emb, "fields": ["text"]})
    executes: list[int] = []
    real = s._execute

    def spy(plan, doc_vecs, q_vecs):  # type: ignore[no-untyped-def]
        executes.append(len(plan.ops))
        return real(plan, doc_vecs, q_vecs)

    s._execute = spy  # type: ignore[method-assign]
    return s, emb, executes


def test_concurrent_async_calls_share_one_batch():
    s, emb, executes = _counting_store()

    async def main() -> None:
        await asyncio.gather(
            *(s.aput(("n",), f"k{i}", {"text": f"topic{i} shared words"}) for i in range(20))
        )
        assert executes == [20] and emb.calls == 1  # one transaction, one embedding call
        hits = await asyncio.gather(
            *(s.asearch(("n",), query=f"topic{i}", limit=1) for i in range(10))
        )
        assert [h[0].key for h in hits] == [f"k{i}" for i in range(10)]  # each its own answer
        assert executes == [20, 10]
        got = await asyncio.gather(*(s.aget(("n",), f"k{i}") for i in range(5)))
        assert [g.key for g in got] == [f"k{i}" for i in range(5)]
        assert executes == [20, 10, 5]

    asyncio.run(main())
    s.close()


def test_coalesced_calls_keep_call_order():
    s, _emb, executes = _counting_store()

    async def main() -> list:
        return await asyncio.gather(
            s.aput(("o",), "k", {"text": "one"}),
            s.aget(("o",), "k"),
            s.aput(("o",), "k", {"text": "two"}),
            s.aput(("o",), "j", {"text": "three"}),
            s.aget(("o",), "k"),
            s.adelete(("o",), "k"),
            s.aget(("o",), "k"),
            s.asearch(("o",)),
        )

    out = asyncio.run(main())
    assert out[1].value == {"text": "one"} and out[4].value == {"text": "two"}
    assert out[6] is None and [i.key for i in out[7]] == ["j"]
    assert executes == [1, 3, 2, 2]  # a read after a write starts the next batch
    s.close()


def test_a_bad_call_fails_alone_in_a_shared_batch():
    s, _emb, _executes = _counting_store()

    async def main() -> list:
        return await asyncio.gather(
            s.aput(("p",), "good", {"text": "fine"}),
            s.abatch([SearchOp(("p",), limit=-1)]),  # invalid: refused when planned
            s.aput(("p",), "bad", {"text": "poison pill"}),  # the embedding model fails
            s.aput(("p",), "also-good", {"text": "fine too"}),
            return_exceptions=True,
        )

    out = asyncio.run(main())
    assert out[0] is None and out[3] is None
    assert isinstance(out[1], InvalidQueryError)
    assert isinstance(out[2], RuntimeError)
    assert s.get(("p",), "good") is not None and s.get(("p",), "also-good") is not None
    assert s.get(("p",), "bad") is None
    s.close()


def test_sync_api_is_untouched_by_coalescing(hash_index):
    s = HybridStore(index=hash_index)
    assert isinstance(s, BaseStore)

    async def inside_a_loop() -> None:  # sync calls from a coroutine still work directly
        s.put(("q",), "k", {"text": "sync"})
        assert s.get(("q",), "k").value == {"text": "sync"}
        assert (await s.aget(("q",), "k")).value == {"text": "sync"}
        assert await s.abatch([]) == []

    asyncio.run(inside_a_loop())
    s.close()


_call = st.tuples(
    st.sampled_from(["put", "get", "delete", "search"]),
    st.sampled_from(["a", "b", "c"]),
    st.integers(0, 3),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(_call, min_size=1, max_size=12))
def test_coalesced_results_equal_one_by_one(calls):
    """Any mix of concurrent calls returns what the same calls return one at a time."""

    async def run(s: HybridStore, together: bool) -> list:
        def make(kind: str, key: str, n: int):  # type: ignore[no-untyped-def]
            if kind == "put":
                return s.aput(("h",), key, {"text": f"v{n}", "n": n})
            if kind == "get":
                return s.aget(("h",), key)
            if kind == "delete":
                return s.adelete(("h",), key)
            return s.asearch(("h",), filter={"n": n})

        if together:
            out = await asyncio.gather(*(make(*c) for c in calls))
        else:
            out = [await make(*c) for c in calls]
        return [
            [(i.key, i.value) for i in r]
            if isinstance(r, list)
            else (None if r is None else (r.key, r.value))
            for r in out
        ]

    a, b = HybridStore(index=False), HybridStore(index=False)
    try:
        assert asyncio.run(run(a, True)) == asyncio.run(run(b, False))
    finally:
        a.close()
        b.close()


@given(st.lists(st.lists(st.booleans(), min_size=1, max_size=3), max_size=10))
def test_segments_partition_calls_in_order_with_no_read_after_write(groups):
    ops_groups = [
        [PutOp(("s",), "k", {"t": 1}) if w else GetOp(("s",), "k") for w in g] for g in groups
    ]
    runs = segments(ops_groups)
    assert [i for r in runs for i in r] == list(range(len(groups)))
    for r in runs:
        wrote = False
        for i in r:
            assert not (wrote and not all(groups[i]))  # no read once the run has written
            wrote = wrote or any(groups[i])


def test_abatch_refuses_bad_ops_at_the_call(hash_index):
    s = HybridStore(index=hash_index)

    async def main() -> None:
        for bad in (5, "ops", {"a": 1}, [object()]):
            with pytest.raises(ValidationError):
                await s.abatch(bad)  # type: ignore[arg-type]
        s.close()
        with pytest.raises(StoreClosedError):
            await s.abatch([])

    asyncio.run(main())
