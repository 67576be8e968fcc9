"""A reusable conformance suite for LangGraph `BaseStore` implementations.

LangGraph ships no such suite (its docs suggest comparing a custom store with
`InMemoryStore`), and its own backends disagree on filters. Subclass `BaseStoreConformance`
in a test module, name the subclass `Test...`, and override the `store` fixture to return a
fresh, empty store::

    import pytest
    from langmem_plus.testing import BaseStoreConformance

    class TestMyStore(BaseStoreConformance):
        ranks_queries = True              # a query search returns scored, ranked items
        known_gaps = frozenset({"filter_in"})

        @pytest.fixture
        def store(self):
            s = MyStore()
            yield s
            s.close()

        def expire(self, store, namespace, key):  # only for stores with TTL
            ...  # make the item's TTL already run out (no sleeping in tests)

`known_gaps` names the behaviours (see `GAPS`) the store is known not to have: those tests
are marked `xfail(strict=True)`, so they still run, and they fail the day the store gains
the behaviour (time to update its documentation). The suite needs only pytest; async twins
run under `asyncio.run`, so no asyncio plugin is required.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.store.base import BaseStore, Item, SearchItem

__all__ = ["GAPS", "BaseStoreConformance"]

GAPS: dict[str, str] = {
    "filter_dotted_key": 'a dotted filter key ({"a.b": 1}) matches the nested field',
    "filter_nested_dict": 'a nested-dict filter ({"a": {"b": 1}}) matches the nested field',
    "filter_in": 'the "$in" operator matches any of a list of values',
    "filter_comparison_mixed_types": (
        "a comparison ($gt, $lte, ...) over a field holding numbers, strings, booleans and "
        "null matches only the numbers in range, without raising"
    ),
    "filter_with_query": (
        "a filter still holds when a query is given: every hit of search(query=..., "
        "filter=...) matches the filter"
    ),
    "filter_unknown_operator_refused": (
        "an operator the store cannot evaluate ($and, $or, $regex) raises ValueError instead "
        "of silently matching nothing"
    ),
    "update_keeps_created_at": "a put over an existing key keeps the item's created_at",
    "list_namespaces_drops_empty": "a namespace whose last item is deleted is no longer listed",
    "async": "the async twins (aget, aput, asearch, ...) work",
}
"""The behaviours a store may declare missing in `known_gaps`, with what each test checks."""

_NS = ("conformance",)


class BaseStoreConformance:
    """LangGraph `BaseStore` behaviour every store should share; see the module docstring."""

    ranks_queries: bool = True
    """True when `search(query=...)` ranks by relevance and scores every hit (False for a
    store without an index: LangGraph's stores then return items unranked, score None)."""

    omits_expired: bool = False
    """True when items whose TTL ran out are hidden before a sweep (LangGraph's default,
    `TTLConfig.omit_expired` unset, is to show them until `sweep_ttl` removes them)."""

    known_gaps: frozenset[str] = frozenset()
    """Names from `GAPS` this store is known to lack; their tests are strict xfails."""

    @pytest.fixture
    def store(self) -> Iterator[BaseStore]:
        """A fresh, empty store; override in the subclass."""
        raise NotImplementedError("override the `store` fixture to return a fresh BaseStore")
        yield  # pragma: no cover

    def expire(self, store: BaseStore, namespace: tuple[str, ...], key: str) -> None:
        """Make this item's TTL already run out; override for stores with TTL support."""
        pytest.skip("no `expire` hook: override it to test TTL expiry without sleeping")

    def age(self, store: BaseStore, namespace: tuple[str, ...], key: str, seconds: float) -> None:
        """Move this item's created_at and updated_at `seconds` into the past; override to
        test timestamps without sleeping."""
        pytest.skip("no `age` hook: override it to test timestamps without sleeping")

    # ------------------------------------------------------------------ helpers
    def _gap(self, request: pytest.FixtureRequest, name: str) -> None:
        if name not in GAPS:
            raise ValueError(f"unknown conformance gap {name!r}; use one of {sorted(GAPS)}")
        if name in self.known_gaps:
            request.applymarker(
                pytest.mark.xfail(strict=True, reason=f"known gap {name}: {GAPS[name]}")
            )

    @staticmethod
    def _keys(items: list[SearchItem]) -> list[str]:
        return sorted(i.key for i in items)

    def _filtered(self, store: BaseStore, flt: dict[str, Any]) -> list[str]:
        store.put(_NS, "one", {"text": "apple pie", "n": 1, "tag": "x", "a": {"b": 1}})
        store.put(_NS, "two", {"text": "banana bread", "n": 3, "tag": "y", "a": {"b": 2}})
        store.put(_NS, "three", {"text": "cherry tart", "n": 5, "tag": "z", "a": {"b": 3}})
        return self._keys(store.search(_NS, filter=flt))

    # ------------------------------------------------------------------ items
    def test_put_get_roundtrip(self, store: BaseStore) -> None:
        value = {"text": "hello", "nested": {"list": [1, 2.5, "x"], "none": None}, "ok": True}
        store.put(_NS, "k", value)
        item = store.get(_NS, "k")
        assert isinstance(item, Item)
        assert item.value == value
        assert item.key == "k" and tuple(item.namespace) == _NS
        assert item.updated_at >= item.created_at
        assert store.get(_NS, "missing") is None

    def test_update_replaces_value(self, store: BaseStore) -> None:
        store.put(_NS, "k", {"text": "first"})
        store.put(_NS, "k", {"text": "second"})
        after = store.get(_NS, "k")
        assert after is not None and after.value == {"text": "second"}
        assert [i.value for i in store.search(_NS)] == [{"text": "second"}]

    def test_update_keeps_created_at(
        self, store: BaseStore, request: pytest.FixtureRequest
    ) -> None:
        store.put(_NS, "k", {"text": "first"})
        self.age(store, _NS, "k", 3600)
        before = store.get(_NS, "k")
        self._gap(request, "update_keeps_created_at")
        store.put(_NS, "k", {"text": "second"})
        after = store.get(_NS, "k")
        assert before is not None and after is not None
        assert after.created_at == before.created_at
        assert (after.updated_at - before.updated_at).total_seconds() > 1800

    def test_delete(self, store: BaseStore) -> None:
        store.put(_NS, "k", {"text": "bye"})
        store.delete(_NS, "k")
        assert store.get(_NS, "k") is None
        assert store.search(_NS) == []
        store.delete(_NS, "never-existed")  # deleting nothing is not an error

    def test_batch_results_line_up_with_ops(self, store: BaseStore) -> None:
        from langgraph.store.base import GetOp, PutOp, SearchOp

        store.put(_NS, "a", {"text": "alpha"})
        out = store.batch(
            [GetOp(_NS, "a"), PutOp(_NS, "b", {"text": "beta"}), SearchOp(_NS), GetOp(_NS, "z")]
        )
        assert len(out) == 4
        assert isinstance(out[0], Item) and out[0].value == {"text": "alpha"}
        assert out[1] is None and out[3] is None
        assert store.get(_NS, "b") is not None

    # ------------------------------------------------------------------ namespaces
    def test_invalid_namespaces_are_refused(self, store: BaseStore) -> None:
        for bad in [(), ("a", ""), ("a.b",), ("langgraph", "x")]:
            with pytest.raises(ValueError):
                store.put(bad, "k", {"text": "x"})
        assert store.list_namespaces() == []

    def test_namespace_prefixes_match_whole_labels(self, store: BaseStore) -> None:
        for ns in [("a",), ("a", "x"), ("a", "x", "y"), ("ab",), ("b", "a")]:
            store.put(ns, "k", {"text": "t"})
        assert sorted(tuple(i.namespace) for i in store.search(("a",))) == [
            ("a",),
            ("a", "x"),
            ("a", "x", "y"),
        ]
        assert [tuple(i.namespace) for i in store.search(("a", "x", "y"))] == [("a", "x", "y")]
        assert store.search(("c",)) == []
        assert store.get(("a",), "k") is not None and store.get(("a", "z"), "k") is None

    def test_list_namespaces_drops_emptied_namespaces(
        self, store: BaseStore, request: pytest.FixtureRequest
    ) -> None:
        self._gap(request, "list_namespaces_drops_empty")
        store.put(("a",), "k", {"text": "t"})
        store.put(("b",), "k", {"text": "t"})
        store.delete(("a",), "k")
        assert store.list_namespaces() == [("b",)]

    def test_list_namespaces(self, store: BaseStore) -> None:
        for ns in [("b", "x"), ("a", "x", "y"), ("a", "z"), ("ab",), ("a", "x")]:
            store.put(ns, "k", {"text": "t"})
        every = [("a", "x"), ("a", "x", "y"), ("a", "z"), ("ab",), ("b", "x")]
        assert store.list_namespaces() == every
        assert store.list_namespaces(prefix=("a",)) == every[:3]
        assert store.list_namespaces(suffix=("x",)) == [("a", "x"), ("b", "x")]
        assert store.list_namespaces(max_depth=1) == [("a",), ("ab",), ("b",)]
        assert store.list_namespaces(limit=2, offset=1) == every[1:3]

    def test_namespaces_are_isolated(self, store: BaseStore) -> None:
        store.put(("user", "1"), "prefs", {"text": "likes tea"})
        store.put(("user", "2"), "prefs", {"text": "likes coffee"})
        one, two = store.get(("user", "1"), "prefs"), store.get(("user", "2"), "prefs")
        assert one is not None and one.value == {"text": "likes tea"}
        assert two is not None and two.value == {"text": "likes coffee"}
        assert [i.value for i in store.search(("user", "1"))] == [{"text": "likes tea"}]
        assert [i.value for i in store.search(("user", "1"), query="coffee")] in (
            [],
            [{"text": "likes tea"}],
        )
        store.delete(("user", "1"), "prefs")
        assert store.get(("user", "2"), "prefs") is not None

    def test_search_pages_with_limit_and_offset(self, store: BaseStore) -> None:
        for i in range(7):
            store.put(_NS, f"k{i}", {"text": f"item {i}"})
        pages = [store.search(_NS, limit=3, offset=o) for o in (0, 3, 6)]
        assert [len(p) for p in pages] == [3, 3, 1]
        keys = [i.key for p in pages for i in p]
        assert sorted(keys) == [f"k{i}" for i in range(7)]  # disjoint pages cover all
        assert store.search(_NS, limit=3, offset=7) == []

    # ------------------------------------------------------------------ filters
    def test_filter_equality_and_comparisons(self, store: BaseStore) -> None:
        assert self._filtered(store, {"tag": "x"}) == ["one"]
        assert self._keys(store.search(_NS, filter={"n": {"$eq": 3}})) == ["two"]
        assert self._keys(store.search(_NS, filter={"n": {"$ne": 3}})) == ["one", "three"]
        assert self._keys(store.search(_NS, filter={"n": {"$gt": 1}})) == ["three", "two"]
        assert self._keys(store.search(_NS, filter={"n": {"$gte": 3}})) == ["three", "two"]
        assert self._keys(store.search(_NS, filter={"n": {"$lt": 3}})) == ["one"]
        assert self._keys(store.search(_NS, filter={"n": {"$lte": 3}})) == ["one", "two"]
        assert self._keys(store.search(_NS, filter={"n": 1, "tag": "x"})) == ["one"]
        assert self._keys(store.search(_NS, filter={"n": 1, "tag": "y"})) == []
        assert self._keys(store.search(_NS, filter={"missing": 1})) == []

    def test_filter_dotted_key(self, store: BaseStore, request: pytest.FixtureRequest) -> None:
        self._gap(request, "filter_dotted_key")
        assert self._filtered(store, {"a.b": 2}) == ["two"]

    def test_filter_nested_dict(self, store: BaseStore, request: pytest.FixtureRequest) -> None:
        self._gap(request, "filter_nested_dict")
        assert self._filtered(store, {"a": {"b": 2}}) == ["two"]

    def test_filter_in(self, store: BaseStore, request: pytest.FixtureRequest) -> None:
        self._gap(request, "filter_in")
        assert self._filtered(store, {"tag": {"$in": ["x", "z"]}}) == ["one", "three"]

    def test_filter_comparison_over_mixed_types(
        self, store: BaseStore, request: pytest.FixtureRequest
    ) -> None:
        self._gap(request, "filter_comparison_mixed_types")
        for key, n in [("int", 1), ("float", 2.5), ("str", "x"), ("bool", True), ("null", None)]:
            store.put(_NS, key, {"n": n})
        assert self._keys(store.search(_NS, filter={"n": {"$gt": 0.5}})) == ["float", "int"]
        assert self._keys(store.search(_NS, filter={"n": {"$lte": 1}})) == ["int"]

    def test_filter_holds_with_a_query(
        self, store: BaseStore, request: pytest.FixtureRequest
    ) -> None:
        """A query narrows and ranks; it never drops the filter (a hit outside the filter is
        the failure, with or without a ranking index)."""
        self._gap(request, "filter_with_query")
        self._filtered(store, {})
        store.put(_NS, "four", {"text": "apple crumble", "n": 7, "tag": "y", "a": {"b": 4}})
        hits = store.search(_NS, query="apple", filter={"tag": "y"}, limit=10)
        assert {i.value["tag"] for i in hits} <= {"y"}, [i.key for i in hits]
        assert "four" in self._keys(hits)  # the item matching both is found
        hits = store.search(_NS, query="apple", filter={"n": {"$gt": 4}}, limit=10)
        assert self._keys(hits) and all(i.value["n"] > 4 for i in hits)

    def test_filter_unknown_operator_is_refused_or_right(
        self, store: BaseStore, request: pytest.FixtureRequest
    ) -> None:
        """`$or`/`$and` are no LangGraph operators: a store either evaluates them correctly
        or raises ValueError; silently returning nothing is the failure."""
        self._gap(request, "filter_unknown_operator_refused")
        cases: list[tuple[dict[str, Any], list[str]]] = [
            ({"$or": [{"tag": "x"}, {"tag": "y"}]}, ["one", "two"]),
            ({"$and": [{"n": {"$gt": 1}}, {"tag": "z"}]}, ["three"]),
            ({"tag": {"$regex": "^x"}}, ["one"]),
        ]
        self._filtered(store, {})
        for flt, want in cases:
            try:
                got = self._keys(store.search(_NS, filter=flt))
            except ValueError:
                continue
            assert got == want, f"filter {flt} silently returned {got}"

    # ------------------------------------------------------------------ scores
    def test_scores_only_with_a_query(self, store: BaseStore) -> None:
        store.put(_NS, "fruit", {"text": "apple orchard harvest"})
        store.put(_NS, "car", {"text": "diesel engine repair"})
        assert all(i.score is None for i in store.search(_NS))
        hits = store.search(_NS, query="apple orchard")
        if not self.ranks_queries:
            assert all(i.score is None for i in hits)
            return
        assert hits and hits[0].key == "fruit"
        scores = [i.score for i in hits]
        for s in scores:
            assert s is not None and math.isfinite(s) and -1.0 <= s <= 1.0, scores
        assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]

    # ------------------------------------------------------------------ TTL
    def test_ttl_put_is_kept_until_it_runs_out(self, store: BaseStore) -> None:
        if not store.supports_ttl:
            with pytest.raises(NotImplementedError):
                store.put(_NS, "k", {"text": "x"}, ttl=5)
            return
        store.put(_NS, "short", {"text": "brief"}, ttl=5)
        store.put(_NS, "forever", {"text": "kept"}, ttl=None)
        assert store.get(_NS, "short") is not None
        assert store.sweep_ttl() == 0  # type: ignore[attr-defined]
        assert store.get(_NS, "short") is not None and store.get(_NS, "forever") is not None

    def test_ttl_expired_items_are_swept(self, store: BaseStore) -> None:
        if not store.supports_ttl:
            pytest.skip("the store has no TTL support (supports_ttl is False)")
        store.put(_NS, "short", {"text": "brief"}, ttl=5)
        store.put(_NS, "forever", {"text": "kept"}, ttl=None)
        self.expire(store, _NS, "short")
        before = store.get(_NS, "short", refresh_ttl=False)
        assert (before is None) == self.omits_expired
        assert store.sweep_ttl() == 1  # type: ignore[attr-defined]
        assert store.get(_NS, "short", refresh_ttl=False) is None
        assert store.get(_NS, "forever") is not None

    # ------------------------------------------------------------------ async twins
    def test_async_twins_match_sync(self, store: BaseStore, request: pytest.FixtureRequest) -> None:
        self._gap(request, "async")

        async def run() -> None:
            await store.aput(("u", "1"), "a", {"text": "apple", "n": 1})
            await store.aput(("u", "2"), "b", {"text": "banana", "n": 2})
            got = await store.aget(("u", "1"), "a")
            assert got is not None and got.value == {"text": "apple", "n": 1}
            assert self._keys(await store.asearch(("u",), filter={"n": 2})) == ["b"]
            assert await store.alist_namespaces(prefix=("u",)) == [("u", "1"), ("u", "2")]
            await store.adelete(("u", "1"), "a")
            assert await store.aget(("u", "1"), "a") is None
            many = await asyncio.gather(
                *(store.aput(("u", "3"), f"k{i}", {"text": f"t{i}"}) for i in range(5))
            )
            assert many == [None] * 5
            got_many = await asyncio.gather(*(store.aget(("u", "3"), f"k{i}") for i in range(5)))
            assert [g.key for g in got_many if g is not None] == [f"k{i}" for i in range(5)]

        asyncio.run(run())
        assert store.get(("u", "2"), "b") is not None  # the sync view agrees
