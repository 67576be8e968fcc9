"""A query is always data: operators, quotes, SQL, emoji, huge or empty strings never fail."""

from __future__ import annotations

from conftest import HashEmbeddings
from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus import HybridStore

_store = HybridStore(index={"dims": 64, "embed": HashEmbeddings(), "fields": ["text"]})
_store.put(
    ("m",),
    "a",
    {"text": 'Robert\'); DROP TABLE items;-- likes 100% "quoted" text_with_underscores'},
)
_store.put(("m",), "b", {"text": "普通的中文记忆 NEAR OR AND *"})

NASTY = [
    "",
    " ",
    '"',
    "'",
    '"unterminated',
    "a OR b AND NOT c",
    "NEAR(a b, 3)",
    "col:value",
    "*",
    "**",
    "a*",
    "^start",
    "'; DROP TABLE items; --",
    "%",
    "_",
    "\\",
    "😀🔥👍",
    "\x00null\x00byte",
    "x" * 10_000_000,
    "中" * 100_000,
    "(((",
    '{"$gt": 1}',
]


def test_nasty_queries_are_data():
    for q in NASTY:
        hits = _store.search(("m",), query=q, limit=5)
        assert isinstance(hits, list)
    assert _store.stats()["items"] == 2
    hits = _store.search(("m",), query="100%", limit=1)
    assert hits[0].key == "a"
    hits = _store.search(("m",), query="DROP TABLE", limit=1)
    assert hits[0].key == "a"


@settings(max_examples=200, deadline=None)
@given(q=st.text(max_size=300))
def test_any_text_query(q):
    hits = _store.search(("m",), query=q, limit=3)
    assert all(h.namespace == ("m",) for h in hits)
    assert _store.get(("m",), "a") is not None


def test_empty_namespace_search_is_empty_list():
    assert _store.search(("nobody",), query="anything") == []
    assert _store.search(("nobody",)) == []
