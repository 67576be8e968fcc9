"""MemoryRetriever: a LangChain `BaseRetriever` over any LangGraph `BaseStore`."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langgraph.store.base import BaseStore
from pydantic import ConfigDict, Field, field_validator

from langmem_plus.errors import ValidationError

__all__ = ["MemoryRetriever"]


def _text_of(value: dict[str, Any]) -> str:
    text = value.get("text") if isinstance(value, dict) else None
    if isinstance(text, str):
        return text
    for key in ("content", "fact", "summary", "memory"):
        if isinstance(value.get(key), str):
            return str(value[key])
    return str(value)


class MemoryRetriever(BaseRetriever):
    """Retrieve memories as `Document`s: page_content is the memory text, metadata carries the
    item key, namespace, score and (for HybridStore) each score component.

    `k` can be overridden per call: ``retriever.invoke("query", k=3)``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: BaseStore
    namespace: tuple[str, ...] = Field(default=("memories",))
    k: int = Field(default=5, ge=1)
    filter: dict[str, Any] | None = None

    @field_validator("namespace", mode="before")
    @classmethod
    def _ns(cls, v: Any) -> tuple[str, ...]:
        if isinstance(v, str):
            return (v,)
        return tuple(v)

    def _k(self, k: Any) -> int:
        k = self.k if k is None else k
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValidationError(f"k must be a positive int, got {k!r}")
        return k

    def _docs(self, items: list[Any]) -> list[Document]:
        docs = []
        for it in items:
            meta: dict[str, Any] = {
                "key": it.key,
                "namespace": list(it.namespace),
                "score": getattr(it, "score", None),
                "created_at": it.created_at.isoformat(),
                "updated_at": it.updated_at.isoformat(),
            }
            comps = getattr(it, "components", None)
            if comps:
                meta["score_components"] = dict(comps)
            for f in ("category", "kind", "who", "confidence"):
                if isinstance(it.value, dict) and f in it.value:
                    meta[f] = it.value[f]
            docs.append(Document(page_content=_text_of(it.value), metadata=meta, id=it.key))
        return docs

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        items = self.store.search(self.namespace, query=query, filter=self.filter, limit=self._k(k))
        return self._docs(items)

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
    ) -> list[Document]:
        items = await self.store.asearch(
            self.namespace, query=query, filter=self.filter, limit=self._k(k)
        )
        return self._docs(items)
