"""No search, list or get ever returns an item from another namespace."""

from __future__ import annotations

from conftest import HashEmbeddings
from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus import HybridStore

USERS = ["u1", "u2", "u3", "u1x", "u"]
TEXTS = ["我喜欢猫", "I like cats", "project uses Redis", "meeting on Friday", "cats and dogs"]

_store = HybridStore(index={"dims": 64, "embed": HashEmbeddings(), "fields": ["text"]})


@settings(max_examples=100, deadline=None)
@given(
    writes=st.lists(
        st.tuples(st.sampled_from(USERS), st.sampled_from(TEXTS)), min_size=1, max_size=12
    ),
    reader=st.sampled_from(USERS),
    query=st.sampled_from([*TEXTS, "cats", "Redis*", ""]),
)
def test_namespace_isolation(writes, reader, query):
    for ns in _store.list_namespaces():
        for it in _store.search(ns, limit=1000):
            _store.delete(it.namespace, it.key)
    for i, (user, text) in enumerate(writes):
        _store.put(("memories", user), f"{user}-{i}", {"text": text, "owner": user})
    ns = ("memories", reader)
    for hit in _store.search(ns, query=query or None, limit=50):
        assert hit.namespace == ns and hit.value["owner"] == reader
    for i, (user, _t) in enumerate(writes):
        got = _store.get(ns, f"{user}-{i}")
        assert (got is not None) == (user == reader)
    assert all(n == ns for n in _store.list_namespaces(prefix=ns))
