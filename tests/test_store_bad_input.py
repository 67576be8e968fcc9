"""A query is always data: operators, quotes, SQL, emoji, huge or empty strings never fail."""

from __future__ import annotations

import pytest
from conftest import HashEmbeddings
from hypothesis import given, settings
from hypothesis import strategies as st
from milvus_fixtures import LITE_REASON, LiteFile

from langmem_plus import HybridStore
from langmem_plus.errors import InvalidNamespaceError, InvalidQueryError, ValidationError

_INDEX = {"dims": 64, "embed": HashEmbeddings(), "fields": ["text"]}


def _fill(store: HybridStore) -> HybridStore:
    store.put(
        ("m",),
        "a",
        {"text": 'Robert\'); DROP TABLE items;-- likes 100% "quoted" text_with_underscores'},
    )
    store.put(("m",), "b", {"text": "普通的中文记忆 NEAR OR AND *"})
    return store


_store = _fill(HybridStore(index=_INDEX))


@pytest.fixture(scope="module", params=["sqlite", "milvus"])
def store(request, tmp_path_factory):
    """The two-item store on each backend (Milvus: one Lite file for the module)."""
    if request.param == "sqlite":
        yield _store
        return
    if LITE_REASON is not None:
        pytest.skip(LITE_REASON)
    s = _fill(LiteFile(tmp_path_factory.mktemp("milvus")).open(index=_INDEX))
    yield s
    s.close()


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


def test_nasty_queries_are_data(store):
    for q in NASTY:
        hits = store.search(("m",), query=q, limit=5)
        assert isinstance(hits, list)
    assert store.stats()["items"] == 2
    hits = store.search(("m",), query="100%", limit=1)
    assert hits[0].key == "a"
    hits = store.search(("m",), query="DROP TABLE", limit=1)
    assert hits[0].key == "a"


@settings(max_examples=100, deadline=None)
@given(q=st.text(max_size=300))
def test_any_text_query(store, q):
    hits = store.search(("m",), query=q, limit=3)
    assert all(h.namespace == ("m",) for h in hits)
    assert store.get(("m",), "a") is not None


def test_empty_namespace_search_is_empty_list(store):
    assert store.search(("nobody",), query="anything") == []
    assert store.search(("nobody",)) == []


# ---------------------------------------------------------------- boundary checks (#11 items 7, 8)
class CountingEmbeddings(HashEmbeddings):
    """HashEmbeddings that counts the texts it was asked to embed."""

    def __init__(self) -> None:
        super().__init__(16)
        self.texts = 0

    def embed_documents(self, texts):
        self.texts += len(texts)
        return super().embed_documents(texts)


def _counting_store(**config):
    from langmem_plus import MemoryConfig

    emb = CountingEmbeddings()
    store = HybridStore(index={"dims": 16, "embed": emb}, config=MemoryConfig(**config))
    return store, emb


def test_a_huge_put_is_refused_before_any_embedding():
    store, emb = _counting_store()
    with pytest.raises(ValidationError, match="max_item_chars"):
        store.put(("m",), "big", {"text": "x" * 10_000_000})
    assert emb.texts == 0
    assert store.get(("m",), "big") is None


def test_the_put_size_cap_is_configured_and_inclusive():
    store, emb = _counting_store(store={"max_item_chars": 50})
    store.put(("m",), "fits", {"text": "y" * 50})
    with pytest.raises(ValidationError, match="51 characters of text"):
        store.put(("m",), "over", {"text": "y" * 51})
    # several indexed fields count together
    with pytest.raises(ValidationError):
        store.put(("m",), "two", {"a": "y" * 30, "b": "z" * 30}, index=["a", "b"])
    # text not indexed is not capped, but the whole value is (10x the cap as JSON)
    store.put(("m",), "raw", {"text": "y" * 400}, index=False)
    with pytest.raises(ValidationError, match="as JSON"):
        store.put(("m",), "raw2", {"text": "y" * 600}, index=False)
    assert [k for _, k in store.keys(("m",))] == ["fits", "raw"]
    assert emb.texts == 1


def test_deep_values_and_filters_get_a_depth_error_not_recursion():
    store = HybridStore(index=False)
    deep = 1
    for _ in range(10_000):
        deep = {"a": deep}
    with pytest.raises(ValidationError, match="deeper than 100"):
        store.put(("m",), "k", deep)
    with pytest.raises(InvalidQueryError, match="deeper than 100"):
        store.search(("m",), filter=deep)
    ok = 1
    for _ in range(99):
        ok = {"a": ok}
    store.put(("m",), "k", ok)
    assert store.get(("m",), "k").value == ok


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.put(("m",), "k\ud800", {"text": "t"}),
        lambda s: s.put(("m\ud800",), "k", {"text": "t"}),
        lambda s: s.put(("m",), "k", {"text": "bad \udc00"}),
        lambda s: s.put(("m",), "k", {"t\ud800": "x"}),
        lambda s: s.search(("m",), query="\ud800"),
        lambda s: s.get(("m",), "\ud800"),
    ],
)
def test_lone_surrogates_are_a_validation_error(call):
    store = HybridStore(index={"dims": 16, "embed": HashEmbeddings(16)})
    with pytest.raises(ValueError) as err:
        call(store)
    assert isinstance(err.value, (ValidationError, InvalidNamespaceError))
    assert "surrogate" in str(err.value)


@pytest.mark.parametrize("limit", ["x", -1, 2.0, None, True])
def test_list_namespaces_limit_must_be_a_non_negative_int(limit):
    store = HybridStore(index=False)
    with pytest.raises(InvalidQueryError, match="limit"):
        store.list_namespaces(limit=limit)


def test_keys_are_not_silently_turned_into_strings():
    store = HybridStore(index=False)
    with pytest.raises(ValidationError, match="key must be a string"):
        store.put(("m",), 123, {"text": "t"})
    with pytest.raises(ValidationError, match="key"):
        store.get(("m",), None)
    assert store.keys(()) == []
