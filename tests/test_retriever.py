"""MemoryRetriever passes LangChain's standard retriever tests and explains its results."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import HashEmbeddings
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langmem_plus import HybridStore, MemoryRetriever
from langmem_plus.errors import ValidationError

_STORE = HybridStore(index={"dims": 64, "embed": HashEmbeddings(), "fields": ["text"]})
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
        return {"store": _STORE, "namespace": ("memories", "u1")}

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
    r = MemoryRetriever(store=_STORE, namespace="memories", filter={"category": "preference"})
    assert r.invoke("tea") == []
    with pytest.raises(ValidationError):
        MemoryRetriever(store=_STORE, namespace=("memories", "u1")).invoke("tea", k=0)


async def _ainvoke() -> list[Document]:
    return await MemoryRetriever(store=_STORE, namespace=("memories", "u1"), k=1).ainvoke(
        "Shanghai"
    )


def test_async():
    import asyncio

    docs = asyncio.run(_ainvoke())
    assert docs[0].page_content == "User lives in Shanghai"
