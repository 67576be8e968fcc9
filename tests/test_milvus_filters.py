"""Search filters pushed down to Milvus (store/milvus/filters.py): the expression never drops an
item the filter accepts (a property, checked against Milvus Lite), a filtered search finds
items far beyond the unfiltered top-k cut while reading only the items the expression admits,
and the results equal the exact filter's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp
from milvus_fixtures import LiteFile, requires_lite, wipe

from langmem_plus import HybridStore
from langmem_plus.model.records import MemoryRecord
from langmem_plus.store.filters import matches
from langmem_plus.store.milvus.filters import filter_expr

pytestmark = requires_lite


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory) -> LiteFile:
    return LiteFile(tmp_path_factory.mktemp("milvus_filters"))


@pytest.fixture
def store(lite: LiteFile) -> Iterator[HybridStore]:
    s = lite.open(index=False)
    yield s
    s.close()


# ---------------------------------------------------------------- the expression
def test_what_translates_and_what_is_left_to_the_exact_filter() -> None:
    assert filter_expr(None) == "" and filter_expr({}) == ""
    assert filter_expr({"kind": "fact"}) == 'doc is null or (((doc["kind"] == "fact")))'
    got = filter_expr({"n": {"$gte": 2, "$lt": 5.5}})
    assert 'doc["n"] >= 2' in got and 'doc["n"] < 5.5' in got and 'like "%"' in got
    assert 'doc["m"]["who"] == "ann"' in filter_expr({"m": {"who": "ann"}})
    dotted = filter_expr({"m.who": "ann"})
    assert 'doc["m.who"] == "ann"' in dotted and 'doc["m"]["who"] == "ann"' in dotted
    assert "true" in filter_expr({"flag": 1})  # Python: True == 1
    for left_out in (
        {"k": {"$ne": "x"}},
        {"k": {"$nin": ["x"]}},
        {"k": None},
        {"k": True},
        {"k": ["a", "b"]},
        {"k": 'say "hi"'},
        {'we"ird': "x"},
        {"k": "back\\slash"},
        {"k": 2**60},
        {"k": math.inf},
    ):
        assert filter_expr(left_out) == "", left_out


# ---------------------------------------------------------------- never drops a match
SCALARS = st.one_of(
    st.sampled_from(["a", "b", "川菜", "", "5", "7.5", "x y"]),
    st.integers(-3, 8),
    st.sampled_from([0.0, 1.0, 2.5, -1.5, True, False, None]),
)
VALUES = st.dictionaries(
    st.sampled_from(["k", "n", "m", "m.who"]),
    st.one_of(SCALARS, st.dictionaries(st.sampled_from(["who", "n"]), SCALARS, max_size=2)),
    max_size=4,
)
CONDS = st.one_of(
    SCALARS,
    st.fixed_dictionaries({"$eq": SCALARS}),
    st.fixed_dictionaries({"$in": st.lists(SCALARS, min_size=1, max_size=3)}),
    st.dictionaries(
        st.sampled_from(["$gt", "$gte", "$lt", "$lte"]),
        st.one_of(st.integers(-3, 8), SCALARS),
        min_size=1,
        max_size=2,
    ),
    st.dictionaries(st.sampled_from(["who", "n"]), SCALARS, min_size=1, max_size=2),
)
FILTERS = st.dictionaries(st.sampled_from(["k", "n", "m", "m.who"]), CONDS, min_size=1, max_size=2)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(values=st.lists(VALUES, min_size=1, max_size=12), flt=FILTERS)
def test_the_expression_admits_every_item_the_filter_accepts(
    store: HybridStore, values: list[dict[str, Any]], flt: dict[str, Any]
) -> None:
    st_: Any = store._storage
    wipe(store)
    for i, v in enumerate(values):
        store.put(("p",), f"k{i}", v)
    want = {f"k{i}" for i, v in enumerate(values) if matches(v, flt)}
    expr = filter_expr(flt)
    got = st_.client.query(st_.names.items, filter=expr or 'pk != ""', output_fields=["key"])
    assert want <= {e["key"] for e in got}
    hits = store.search(("p",), filter=flt, limit=50)
    assert {h.key for h in hits} == want  # the exact filter still decides


# ---------------------------------------------------------------- pushdown is used
def _count_listed(store: HybridStore) -> list[int]:
    """Entities the client's query iterators return from now on (the scan's listing of the
    ids to read: with the filter pushed down, only the admitted items)."""
    client: Any = store._storage.client  # type: ignore[attr-defined]
    seen = [0]
    real = client.query_iterator

    def counted(*a: Any, **k: Any) -> Any:
        it = real(*a, **k)
        nxt = it.next

        def page() -> Any:
            got = nxt()
            seen[0] += len(got)
            return got

        it.next = page
        return it

    object.__setattr__(client, "query_iterator", counted)
    return seen


def test_a_filtered_search_finds_items_beyond_the_top_k_cut(store: HybridStore) -> None:
    n = 400
    for i in range(0, n, 100):
        store.batch(
            [
                PutOp(("f",), f"k{j}", {"text": f"coffee order {j}", "kind": "chat"})
                for j in range(i, i + 100)
            ]
        )
    store.put(("f",), "rare1", {"text": "tea at noon", "kind": "fact", "n": 3})
    store.put(("f",), "rare2", {"text": "water", "kind": "fact", "n": 9})
    top = {h.key for h in store.search(("f",), query="coffee", limit=10)}
    assert not top & {"rare1", "rare2"}
    seen = _count_listed(store)
    got = store.search(("f",), query="coffee", filter={"kind": "fact"}, limit=10)
    assert {h.key for h in got} == {"rare1", "rare2"}
    assert seen[0] == 2  # the scan listed the two admitted items, not all 402
    seen[0] = 0
    got = store.search(("f",), filter={"kind": "fact", "n": {"$gt": 5}}, limit=10)
    assert [h.key for h in got] == ["rare2"] and seen[0] == 1


def test_without_the_doc_field_filters_still_run_client_side(lite: LiteFile) -> None:
    """A store whose collections predate the `doc` field reads every row and filters it."""
    s = lite.open(index=False)
    s._storage.backend._filter_field = None  # type: ignore[attr-defined]
    for i in range(30):
        fact = i == 7
        s.put(
            ("g",), f"k{i}", {"text": "tea" if fact else "coffee", "kind": "fact" if fact else "-"}
        )
    seen = _count_listed(s)
    got = s.search(("g",), query="coffee", filter={"kind": "fact"}, limit=1)
    assert [h.key for h in got] == ["k7"] and seen[0] == 30
    s.close()


# ---------------------------------------------------------------- a record's defaults
def test_a_condition_a_records_default_satisfies_is_left_to_the_exact_filter() -> None:
    for at_default in ({"tier": "normal"}, {"who": {"$in": ["user", "x"]}}, {"verified": 0}):
        assert filter_expr(at_default) == "", at_default
    assert filter_expr({"tier": "core"}) == 'doc is null or (((doc["tier"] == "core")))'
    assert 'doc["category"]' in filter_expr({"category": "fact", "who": "user"})


def test_lean_records_match_filters_on_their_defaults(store: HybridStore) -> None:
    wipe(store)
    lean = MemoryRecord(text="tea at noon", occurred_at=datetime(2025, 3, 1, tzinfo=timezone.utc))
    store.put(("r",), "lean", lean.to_value())
    store.put(("r",), "core", MemoryRecord(text="tea forever", tier="core").to_value())
    store.put(("r",), "other", {"text": "tea party", "kind": "note"})
    assert "tier" not in store.get(("r",), "lean").value  # type: ignore[union-attr]
    for flt, want in (
        ({"tier": "normal"}, {"lean"}),
        ({"tier": "core"}, {"core"}),
        ({"who": "user", "source": "user_stated"}, {"lean", "core"}),
        ({"tier": {"$in": ["normal", "core"]}}, {"lean", "core"}),
    ):
        for query in (None, "tea"):
            got = store.search(("r",), query=query, filter=flt, limit=10)
            assert {h.key for h in got} == want, (flt, query)
