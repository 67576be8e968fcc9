"""Differential test: HybridStore and LangGraph's InMemoryStore agree on random op sequences.

Deliberate differences (documented in docs/concepts.md and not exercised here):
- list_namespaces: InMemoryStore keeps listing a namespace after its last item is deleted
  (and even one only ever read); HybridStore lists namespaces that hold items. The model below
  compares against the namespaces that hold items.
- comparison operators on a missing field: InMemoryStore raises TypeError, HybridStore returns
  no match. The filters generated here only compare present numeric fields.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from langgraph.store.memory import InMemoryStore
from milvus_fixtures import LiteFile, requires_lite

from langmem_plus import HybridStore

NAMESPACES = [("a",), ("a", "b"), ("a", "b", "c"), ("x", "y"), ("users", "1"), ("users", "2")]
KEYS = ["k1", "k2", "k3", "中文", "with space"]
values = st.fixed_dictionaries(
    {
        "text": st.sampled_from(["alpha", "beta gamma", "我喜欢猫", "delta"]),
        "n": st.integers(0, 5),
        "cat": st.sampled_from(["preference", "fact"]),
    },
    optional={"meta": st.fixed_dictionaries({"who": st.sampled_from(["user", "friend"])})},
)
filters = st.one_of(
    st.none(),
    st.fixed_dictionaries({"cat": st.sampled_from(["preference", "fact"])}),
    st.fixed_dictionaries({"n": st.fixed_dictionaries({"$gte": st.integers(0, 5)})}),
    st.fixed_dictionaries({"n": st.fixed_dictionaries({"$ne": st.integers(0, 5)})}),
    st.fixed_dictionaries({"text": st.sampled_from(["alpha", "delta"]), "n": st.integers(0, 5)}),
    # nested and range conditions: pushed down to Milvus as expressions (store/milvus/filters.py)
    st.fixed_dictionaries({"meta": st.fixed_dictionaries({"who": st.sampled_from(["user"])})}),
    st.fixed_dictionaries({"n": st.fixed_dictionaries({"$lt": st.integers(0, 5)})}),
)


def _live_namespaces(mem: InMemoryStore) -> set[tuple[str, ...]]:
    return {ns for ns, items in mem._data.items() if items}


class StoreComparison(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.mem = InMemoryStore()
        self.hyb = HybridStore(index=False)

    def teardown(self) -> None:
        self.hyb.close()

    @rule(ns=st.sampled_from(NAMESPACES), key=st.sampled_from(KEYS), value=values)
    def put(self, ns, key, value):
        self.mem.put(ns, key, value)
        self.hyb.put(ns, key, value)

    @rule(ns=st.sampled_from(NAMESPACES), key=st.sampled_from(KEYS))
    def delete(self, ns, key):
        self.mem.delete(ns, key)
        self.hyb.delete(ns, key)

    @rule(ns=st.sampled_from(NAMESPACES), key=st.sampled_from(KEYS))
    def get(self, ns, key):
        a = self.mem.get(ns, key)
        b = self.hyb.get(ns, key)
        assert (a is None) == (b is None)
        if a is not None:
            assert (a.value, a.key, a.namespace) == (b.value, b.key, b.namespace)

    @rule(
        prefix=st.sampled_from([(), ("a",), ("a", "b"), ("users",), ("x",), ("nope",)]),
        flt=filters,
    )
    def search_filter_only(self, prefix, flt):
        a = self.mem.search(prefix, filter=flt, limit=1000)
        b = self.hyb.search(prefix, filter=flt, limit=1000)
        # Order: both return insertion order within a namespace; across namespaces InMemoryStore
        # groups by namespace. Compare as sets of (namespace, key, value).
        sa = sorted((i.namespace, i.key, repr(i.value)) for i in a)
        sb = sorted((i.namespace, i.key, repr(i.value)) for i in b)
        assert sa == sb

    @rule(ns=st.sampled_from(NAMESPACES), limit=st.integers(0, 4), offset=st.integers(0, 3))
    def search_page_in_one_namespace(self, ns, limit, offset):
        a = self.mem.search(ns, limit=limit, offset=offset)
        b = self.hyb.search(ns, limit=limit, offset=offset)
        # Only items of exactly this namespace (no children) keep a comparable order.
        if any(i.namespace != ns for i in self.mem.search(ns, limit=1000)):
            return
        assert [(i.key, i.value) for i in a] == [(i.key, i.value) for i in b]

    @rule(
        prefix=st.one_of(st.none(), st.sampled_from([("a",), ("users",), ("a", "*", "c"), ("*",)])),
        suffix=st.one_of(st.none(), st.sampled_from([("b",), ("c",), ("*", "1"), ("y",)])),
        max_depth=st.one_of(st.none(), st.integers(1, 3)),
    )
    def list_namespaces(self, prefix, suffix, max_depth):
        live = _live_namespaces(self.mem)
        a = [
            ns
            for ns in self.mem.list_namespaces(prefix=prefix, suffix=suffix, limit=1000)
            if ns in live
        ]
        if max_depth is not None:
            a = sorted({ns[:max_depth] for ns in a})
        b = self.hyb.list_namespaces(prefix=prefix, suffix=suffix, max_depth=max_depth, limit=1000)
        assert a == b

    @invariant()
    def same_item_count(self):
        n_mem = sum(len(items) for items in self.mem._data.values())
        assert self.hyb.stats()["items"] == n_mem


TestStoreComparison = StoreComparison.TestCase
TestStoreComparison.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)


class MilvusStoreComparison(StoreComparison):
    """The same comparison with HybridStore over Milvus Lite (one Lite file for the module,
    emptied for each example)."""

    lite: LiteFile | None = None

    def __init__(self) -> None:
        RuleBasedStateMachine.__init__(self)
        self.mem = InMemoryStore()
        if MilvusStoreComparison.lite is None:
            where = Path(tempfile.mkdtemp(prefix="lmp-milvus-"))
            atexit.register(shutil.rmtree, where, True)
            MilvusStoreComparison.lite = LiteFile(where)
        self.hyb = MilvusStoreComparison.lite.open(index=False)


TestMilvusStoreComparison = requires_lite(MilvusStoreComparison.TestCase)
TestMilvusStoreComparison.settings = settings(
    max_examples=10, stateful_step_count=20, deadline=None
)
