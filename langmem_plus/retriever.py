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
from pydantic import ConfigDict, Field, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError

from langmem_plus.errors import ValidationError
from langmem_plus.namespaces import MEMORY_ROOT, check_user_id, user_namespace

__all__ = ["MemoryRetriever"]


def _spans_users(namespace: tuple[str, ...]) -> bool:
    """Whether `namespace` is a bare prefix of the per-user namespaces (root, user)."""
    return len(namespace) < 2 and (not namespace or namespace[0] == MEMORY_ROOT)


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

    Give exactly one of `user_id` (searched in ``user_namespace(user_id)``, the namespace the
    middleware, tools and `Memory` write) or `namespace`. Only items of exactly that namespace
    are returned, so one user's retriever never sees another's memories. A namespace that
    spans users (``()`` or ``("memories",)``) is refused unless `allow_prefix=True`, which
    also searches every namespace below the given one.

    `k` can be overridden per call: ``retriever.invoke("query", k=3)``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: BaseStore
    namespace: tuple[str, ...] | None = None
    user_id: str | None = None
    allow_prefix: bool = False
    k: int = Field(default=5, ge=1)
    filter: dict[str, Any] | None = None

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except PydanticValidationError as exc:  # the project's own error, one line per problem
            problems = "; ".join(
                "".join(f"{p}." for p in e["loc"]).rstrip(".")
                + (": " if e["loc"] else "")
                + str(e["msg"]).removeprefix("Value error, ")
                for e in exc.errors()
            )
            raise ValidationError(f"MemoryRetriever: {problems}") from None

    @field_validator("namespace", mode="before")
    @classmethod
    def _ns(cls, v: Any) -> tuple[str, ...] | None:
        if v is None:
            return None
        if isinstance(v, str):
            return (v,)
        if not isinstance(v, (tuple, list)) or not all(isinstance(p, str) for p in v):
            raise ValidationError(f"namespace must be a tuple of strings, got {v!r}")
        return tuple(v)

    @field_validator("user_id", mode="before")
    @classmethod
    def _uid(cls, v: Any) -> str | None:
        return None if v is None else check_user_id(v)

    @model_validator(mode="after")
    def _scope(self) -> MemoryRetriever:
        if self.user_id is not None:
            if self.namespace is not None:
                raise ValidationError("give user_id or namespace, not both")
            self.namespace = user_namespace(self.user_id)
        elif self.namespace is None:
            raise ValidationError("needs user_id= or namespace= (e.g. ('memories', '<user>'))")
        if not self.allow_prefix and _spans_users(self.namespace):
            raise ValidationError(
                f"namespace {self.namespace!r} spans every user's memories; pass user_id=, a "
                "per-user namespace, or allow_prefix=True to search across users on purpose"
            )
        return self

    @property
    def scope(self) -> tuple[str, ...]:
        """The namespace searched (set by validation; never None after construction)."""
        assert self.namespace is not None
        return self.namespace

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

    def _keep(self, item: Any) -> bool:
        return self.allow_prefix or tuple(item.namespace) == self.scope

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        limit = self._k(k)
        out: list[Any] = []
        offset = 0
        while len(out) < limit:  # page on past items of deeper namespaces (exact match only)
            page = self.store.search(
                self.scope, query=query, filter=self.filter, limit=limit, offset=offset
            )
            out.extend(it for it in page if self._keep(it))
            if len(page) < limit:
                break
            offset += len(page)
        return self._docs(out[:limit])

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
    ) -> list[Document]:
        limit = self._k(k)
        out: list[Any] = []
        offset = 0
        while len(out) < limit:
            page = await self.store.asearch(
                self.scope, query=query, filter=self.filter, limit=limit, offset=offset
            )
            out.extend(it for it in page if self._keep(it))
            if len(page) < limit:
                break
            offset += len(page)
        return self._docs(out[:limit])
