"""MemoryRetriever passes LangChain's standard retriever tests and explains its results."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from conftest import HashEmbeddings
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langmem_plus import HybridStore, MemoryRetriever
from langmem_plus.clock import ManualClock
from langmem_plus.errors import ValidationError
from langmem_plus.model.namespaces import user_namespace

# a clock that stands still: scores hold a recency term, and the threshold tests compare scores
# read at different moments (on the wall clock they drift ~1.8e-7 a second)
_STORE = HybridStore(
    index={"dims": 64, "embed": HashEmbeddings(), "fields": ["text"]}, clock=ManualClock()
)
for i, text in enumerate(
    [
        "User likes green tea",
        "User lives in Shanghai",
        "用户喜欢喝绿茶",
        "The project uses FastAPI",
        "User's dog is called Bao",
        "User works as a nurse",
    ]
):
    _STORE.put(("memories", "u1"), f"m{i}", {"text": text, "category": "fact"})


class TestMemoryRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return MemoryRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"store": _STORE, "user_id": "u1"}

    @property
    def retriever_query_example(self) -> str:
        return "what does the user like to drink"


def test_documents_carry_key_namespace_and_score_parts():
    r = MemoryRetriever(store=_STORE, namespace=("memories", "u1"), k=2)
    docs = r.invoke("green tea")
    assert len(docs) == 2 and all(isinstance(d, Document) for d in docs)
    top = docs[0]
    assert top.page_content == "User likes green tea"
    assert top.metadata["key"] == "m0" and top.metadata["namespace"] == ["memories", "u1"]
    assert top.metadata["score"] == pytest.approx(top.metadata["score_components"]["score"])
    assert len(r.invoke("green tea", k=1)) == 1


def test_filter_and_validation():
    r = MemoryRetriever(store=_STORE, user_id="u1", filter={"category": "preference"})
    assert r.invoke("tea") == []
    with pytest.raises(ValidationError):
        MemoryRetriever(store=_STORE, namespace=("memories", "u1")).invoke("tea", k=0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},  # no scope at all: the old default spanned every user
        {"namespace": "memories"},
        {"namespace": ("memories",)},
        {"namespace": ()},
        {"user_id": "u1", "namespace": ("memories", "u1")},
        {"user_id": ""},
        {"user_id": "\ud800"},
        {"user_id": 7},
        {"namespace": 5},
        {"namespace": ("memories", 5)},
        {"user_id": "u1", "k": 0},
    ],
)
def test_a_scope_is_required_and_cross_user_prefixes_are_refused(kwargs: dict[str, Any]):
    with pytest.raises(ValidationError) as info:
        MemoryRetriever(store=_STORE, **kwargs)
    assert type(info.value) is ValidationError and str(info.value).startswith("MemoryRetriever")


def _two_users() -> HybridStore:
    store = HybridStore(index=False)
    store.put(user_namespace("john.smith"), "a", {"text": "PIN is 1234", "category": "fact"})
    store.put(("memories", "john_smith"), "b", {"text": "PIN is 9876", "category": "fact"})
    # a deeper namespace below john_smith's: a prefix search would include it
    for i in range(6):
        store.put(("memories", "john_smith", "x"), f"d{i}", {"text": f"PIN PIN is {i}"})
    return store


def test_user_id_maps_through_user_namespace_and_sees_only_that_namespace():
    store = _two_users()
    john_dot = MemoryRetriever(store=store, user_id="john.smith")
    assert john_dot.namespace == user_namespace("john.smith") != ("memories", "john.smith")
    assert [d.id for d in john_dot.invoke("PIN")] == ["a"]
    # deeper items outrank john_smith's own memory: paging still finds exactly k of its own
    john_us = MemoryRetriever(store=store, user_id="john_smith", k=1)
    assert [d.id for d in john_us.invoke("PIN")] == ["b"]
    same = MemoryRetriever(store=store, namespace=("memories", "john_smith"), k=3)
    assert [d.metadata["namespace"] for d in same.invoke("PIN")] == [["memories", "john_smith"]]


def test_allow_prefix_searches_below_the_namespace_on_purpose():
    store = _two_users()
    everyone = MemoryRetriever(store=store, namespace=("memories",), allow_prefix=True, k=10)
    keys = {d.id for d in everyone.invoke("PIN")}
    assert {"a", "b", "d0"} <= keys
    below = MemoryRetriever(store=store, user_id="john_smith", allow_prefix=True, k=10)
    assert {d.id for d in below.invoke("PIN")} == {"b"} | {f"d{i}" for i in range(6)}


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "a.b", "a_b", "a%2Eb", "b"]), st.booleans()),
        min_size=1,
        max_size=12,
    ),
    st.integers(min_value=1, max_value=5),
)
def test_a_user_retriever_never_returns_another_namespace(
    puts: list[tuple[str, bool]], k: int
) -> None:
    store = HybridStore(index=False)
    for i, (user, deeper) in enumerate(puts):
        ns = (*user_namespace(user), "sub") if deeper else user_namespace(user)
        store.put(ns, f"k{i}", {"text": f"shared words {user}"})
    for user in {u for u, _ in puts}:
        mine = [f"k{i}" for i, (u, d) in enumerate(puts) if u == user and not d]
        for r in (
            MemoryRetriever(store=store, user_id=user, k=k),
            MemoryRetriever(store=store, namespace=user_namespace(user), k=k),
        ):
            got = [d.id for d in r.invoke("shared words")]
            assert set(got) <= set(mine) and len(got) == min(k, len(mine))
            assert all(d.metadata["namespace"] == list(r.scope) for d in r.invoke("shared"))


async def _ainvoke() -> list[Document]:
    return await MemoryRetriever(store=_STORE, namespace=("memories", "u1"), k=1).ainvoke(
        "Shanghai"
    )


def test_async():
    import asyncio

    docs = asyncio.run(_ainvoke())
    assert docs[0].page_content == "User lives in Shanghai"
    r = MemoryRetriever(store=_two_users(), user_id="john_smith", k=2)
    assert [d.id for d in asyncio.run(r.ainvoke("PIN"))] == ["b"]


# --- what VectorStoreRetriever users pass ------------------------------------------------


def test_search_kwargs_k_filter_and_runtime_keywords():
    r = MemoryRetriever(store=_STORE, user_id="u1", search_kwargs={"k": 1})
    assert len(r.invoke("user")) == 1
    assert len(r.invoke("user", k=3)) == 3  # the call's keyword wins
    none = r.invoke("tea", filter={"category": "preference"})
    assert none == []
    some = MemoryRetriever(
        store=_STORE, user_id="u1", search_kwargs={"filter": {"category": "fact"}}
    )
    assert some.invoke("tea") and some.invoke("tea", filter={"category": "x"}) == []


def test_async_takes_the_same_keywords():
    import asyncio

    r = MemoryRetriever(store=_STORE, user_id="u1", search_kwargs={"k": 2})
    assert len(asyncio.run(r.ainvoke("user"))) == 2
    assert asyncio.run(r.ainvoke("tea", filter={"category": "preference"})) == []
    with pytest.raises(ValidationError, match="unknown"):
        asyncio.run(r.ainvoke("tea", top_k=2))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"search_kwargs": {"top_k": 1}},
        {"search_kwargs": {"k": 0}},
        {"search_kwargs": {"score_threshold": "high"}},
        {"search_kwargs": {"lambda_mult": 2}},
        {"search_kwargs": {"filter": "fact"}},
        {"k": 2, "search_kwargs": {"k": 1}},
        {"search_type": "nearest"},
        {"search_type": "similarity_score_threshold"},  # needs a threshold
        {"topk": 3},  # an unknown field is refused, not ignored
        {"score_threshold": "x"},
    ],
)
def test_unknown_or_bad_search_parameters_are_refused(kwargs: dict[str, Any]):
    with pytest.raises(ValidationError) as info:
        MemoryRetriever(store=_STORE, user_id="u1", **kwargs)
    assert str(info.value).startswith("MemoryRetriever")


def test_unknown_invoke_keyword_is_refused():
    r = MemoryRetriever(store=_STORE, user_id="u1")
    with pytest.raises(ValidationError, match="top_k"):
        r.invoke("tea", top_k=1)
    with pytest.raises(ValidationError):
        r.invoke("tea", fetch_k=0)


def test_score_threshold_keeps_only_scores_at_or_above_it():
    everything = MemoryRetriever(store=_STORE, user_id="u1", k=6).invoke("green tea")
    scores = [d.metadata["score"] for d in everything]
    cut = (scores[0] + scores[1]) / 2  # between the best and the second
    for r in (
        MemoryRetriever(
            store=_STORE,
            user_id="u1",
            search_type="similarity_score_threshold",
            search_kwargs={"score_threshold": cut, "k": 6},
        ),
        MemoryRetriever(store=_STORE, user_id="u1", k=6, score_threshold=cut),
    ):
        docs = r.invoke("green tea")
        assert [d.id for d in docs] == [everything[0].id]
        assert all(d.metadata["score"] >= cut for d in docs)
    plain = MemoryRetriever(store=_STORE, user_id="u1", k=6)
    assert len(plain.invoke("green tea", score_threshold=min(scores) - 1e-9)) == 6
    assert plain.invoke("green tea", score_threshold=scores[0] + 1.0) == []


def test_a_threshold_on_an_unscored_store_is_an_error_not_an_empty_answer():
    from langgraph.store.memory import InMemoryStore

    store = InMemoryStore()  # no index: search returns items without scores
    store.put(user_namespace("u"), "a", {"text": "tea"})
    assert MemoryRetriever(store=store, user_id="u").invoke("tea")[0].id == "a"
    with pytest.raises(ValidationError, match="score"):
        MemoryRetriever(store=store, user_id="u", score_threshold=0.1).invoke("tea")


def _mmr_store() -> HybridStore:
    store = HybridStore(index={"dims": 64, "embed": HashEmbeddings(), "fields": ["text"]})
    texts = {
        "t1": "green tea every morning",
        "t2": "green tea every morning please",
        "t3": "green tea every morning always",
        "c1": "black coffee, no tea",
    }
    for key, text in texts.items():
        store.put(user_namespace("m"), key, {"text": text})
    return store


def test_mmr_trades_near_duplicates_for_other_relevant_memories():
    store = _mmr_store()
    plain = MemoryRetriever(store=store, user_id="m", k=2).invoke("green tea morning")
    assert {d.id for d in plain} <= {"t1", "t2", "t3"}  # two near duplicates
    mmr = MemoryRetriever(
        store=store, user_id="m", search_type="mmr", search_kwargs={"k": 2, "fetch_k": 4}
    )
    got = [d.id for d in mmr.invoke("green tea morning")]
    assert got[0] in {"t1", "t2", "t3"} and got[1] == "c1"
    # lambda_mult=1 is plain relevance: the near duplicates again
    same = mmr.invoke("green tea morning", lambda_mult=1.0)
    assert {d.id for d in same} <= {"t1", "t2", "t3"}


def test_mmr_needs_embeddings():
    with pytest.raises(ValidationError, match="embeddings"):
        MemoryRetriever(store=HybridStore(index=False), user_id="u", search_type="mmr")


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.lists(st.floats(-1, 1, allow_nan=False), min_size=3, max_size=3),
        min_size=1,
        max_size=8,
    ),
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=3, max_size=3),
    st.integers(1, 10),
    st.floats(0, 1),
)
def test_mmr_order_picks_distinct_documents_best_first(
    docs: list[list[float]], query: list[float], k: int, lam: float
) -> None:
    import numpy as np

    from langmem_plus.agent.retriever import mmr_order

    order = mmr_order(query, docs, k, lam)
    assert len(order) == min(k, len(docs)) == len(set(order))
    d = np.asarray(docs)
    d = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-12)
    q = np.asarray(query) / max(float(np.linalg.norm(query)), 1e-12)
    rel = d @ q
    if lam > 0:  # the first pick is the most relevant document
        assert rel[order[0]] == pytest.approx(rel.max())
    if lam == 1:  # pure relevance: relevance order
        assert all(rel[a] >= rel[b] - 1e-9 for a, b in itertools.pairwise(order))
