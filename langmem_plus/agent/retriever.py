"""MemoryRetriever: a LangChain `BaseRetriever` over any LangGraph `BaseStore`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langgraph.store.base import BaseStore
from pydantic import ConfigDict, Field, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError

from langmem_plus.errors import ValidationError
from langmem_plus.model.namespaces import MEMORY_ROOT, check_user_id, user_namespace
from langmem_plus.model.records import with_record_defaults
from langmem_plus.text.transcript import text_to_embed

__all__ = ["MemoryRetriever", "mmr_order"]


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


SearchType = Literal["similarity", "similarity_score_threshold", "mmr"]
# the keys of search_kwargs and of invoke(query, **kwargs), as VectorStoreRetriever takes them
_SEARCH_KEYS = ("k", "filter", "score_threshold", "fetch_k", "lambda_mult")
# keywords LangChain's invoke() itself uses and passes on (not search parameters)
_CALLBACK_KEYS = frozenset({"verbose"})


@dataclass(frozen=True)
class _Params:
    """One call's search parameters, merged and checked."""

    k: int
    filter: dict[str, Any] | None
    score_threshold: float | None
    fetch_k: int
    lambda_mult: float
    mmr: bool


def _runtime_keys(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {key: v for key, v in kwargs.items() if key not in _CALLBACK_KEYS}


def mmr_order(
    query_vec: Sequence[float], doc_vecs: Sequence[Sequence[float]], k: int, lambda_mult: float
) -> list[int]:
    """Maximal marginal relevance: indices of up to `k` documents, each chosen for
    ``lambda_mult * cos(query, d) - (1 - lambda_mult) * max cos(d, chosen)``, so near
    duplicates of what is already chosen give way to other relevant documents."""
    docs = np.asarray(doc_vecs, dtype=np.float64)
    if docs.size == 0 or k < 1:
        return []
    q = np.asarray(query_vec, dtype=np.float64)
    docs = docs / np.maximum(np.linalg.norm(docs, axis=1, keepdims=True), 1e-12)
    q = q / max(float(np.linalg.norm(q)), 1e-12)
    relevance = docs @ q
    pairwise = docs @ docs.T
    chosen: list[int] = []
    redundancy = np.full(len(docs), -np.inf)
    for _ in range(min(k, len(docs))):
        penalty = np.where(np.isfinite(redundancy), redundancy, 0.0)
        gain = lambda_mult * relevance - (1 - lambda_mult) * penalty
        gain[chosen] = -np.inf
        best = int(np.argmax(gain))
        chosen.append(best)
        redundancy = np.maximum(redundancy, pairwise[best])
    return chosen


class MemoryRetriever(BaseRetriever):
    """Retrieve memories as `Document`s: page_content is the memory text, metadata carries the
    item key, namespace, score and (for HybridStore) each score component.

    Give exactly one of `user_id` (searched in ``user_namespace(user_id)``, the namespace the
    middleware, tools and `Memory` write) or `namespace`. Only items of exactly that namespace
    are returned, so one user's retriever never sees another's memories. A namespace that
    spans users (``()`` or ``("memories",)``) is refused unless `allow_prefix=True`, which
    also searches every namespace below the given one.

    Takes what LangChain's `VectorStoreRetriever` takes: `search_type` ("similarity",
    "similarity_score_threshold" or "mmr") and `search_kwargs` (`k`, `filter`,
    `score_threshold`, `fetch_k`, `lambda_mult`), each also a field of its own and a keyword
    of ``invoke(query, k=3, filter={...})``. An unknown key is an error, never ignored.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    store: BaseStore
    namespace: tuple[str, ...] | None = None
    user_id: str | None = None
    allow_prefix: bool = False
    k: int = Field(default=5, ge=1)
    filter: dict[str, Any] | None = None
    search_type: SearchType = "similarity"
    score_threshold: float | None = None
    fetch_k: int = Field(default=20, ge=1)
    lambda_mult: float = Field(default=0.5, ge=0.0, le=1.0)
    search_kwargs: dict[str, Any] = Field(default_factory=dict)

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
        twice = sorted(k for k in self.search_kwargs if k in self.model_fields_set)
        if twice:
            raise ValidationError(f"{twice} given both as a field and in search_kwargs")
        self._params({})  # checks search_kwargs and the search type's needs
        if self.search_type == "mmr" and getattr(self.store, "embeddings", None) is None:
            raise ValidationError(
                "search_type='mmr' needs a store with embeddings (e.g. HybridStore(index=...)) "
                "to compare the candidates"
            )
        return self

    @property
    def scope(self) -> tuple[str, ...]:
        """The namespace searched (set by validation; never None after construction)."""
        assert self.namespace is not None
        return self.namespace

    def _params(self, runtime: dict[str, Any]) -> _Params:
        """Fields, then search_kwargs, then the call's keywords: checked and merged."""
        for source, given in (("search_kwargs", self.search_kwargs), ("invoke()", runtime)):
            unknown = sorted(set(given) - set(_SEARCH_KEYS))
            if unknown:
                raise ValidationError(
                    f"MemoryRetriever: unknown {source} key(s) {unknown}; "
                    f"known: {list(_SEARCH_KEYS)}"
                )
        merged: dict[str, Any] = {key: getattr(self, key) for key in _SEARCH_KEYS}
        merged.update(self.search_kwargs)
        merged.update(runtime)
        k, fetch_k = merged["k"], merged["fetch_k"]
        for name, n in (("k", k), ("fetch_k", fetch_k)):
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise ValidationError(f"MemoryRetriever: {name} must be a positive int, got {n!r}")
        threshold = merged["score_threshold"]
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, (int, float))
        ):
            raise ValidationError(
                f"MemoryRetriever: score_threshold must be a number, got {threshold!r}"
            )
        if self.search_type == "similarity_score_threshold" and threshold is None:
            raise ValidationError(
                "MemoryRetriever: search_type='similarity_score_threshold' needs "
                "score_threshold (a field or a search_kwargs key)"
            )
        lam = merged["lambda_mult"]
        if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0 <= lam <= 1:
            raise ValidationError(f"MemoryRetriever: lambda_mult must be in [0, 1], got {lam!r}")
        flt = merged["filter"]
        if flt is not None and not isinstance(flt, dict):
            raise ValidationError(f"MemoryRetriever: filter must be a dict, got {flt!r}")
        return _Params(
            k=k,
            filter=flt,
            score_threshold=None if threshold is None else float(threshold),
            fetch_k=max(fetch_k, k),
            lambda_mult=float(lam),
            mmr=self.search_type == "mmr",
        )

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
            value = with_record_defaults(it.value)  # a record's fields at their default too
            for f in ("category", "kind", "who", "confidence"):
                if isinstance(value, dict) and f in value:
                    meta[f] = value[f]
            docs.append(Document(page_content=_text_of(it.value), metadata=meta, id=it.key))
        return docs

    def _keep(self, item: Any) -> bool:
        return self.allow_prefix or tuple(item.namespace) == self.scope

    def _take(self, out: list[Any], page: list[Any], p: _Params, want: int) -> bool:
        """Add `page`'s items of this scope above the threshold to `out`; False = stop paging."""
        for it in page:
            score = getattr(it, "score", None)
            if p.score_threshold is not None:
                if score is None:
                    raise ValidationError(
                        "MemoryRetriever: score_threshold needs scored results, and this "
                        f"store ({type(self.store).__name__}) returned none; give it an index "
                        "(embeddings) or drop the threshold"
                    )
                if score < p.score_threshold:  # results come best first: the rest is lower
                    return False
            if self._keep(it):
                out.append(it)
        return len(out) < want

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        p = self._params(_runtime_keys(kwargs))
        want = p.fetch_k if p.mmr else p.k
        out: list[Any] = []
        offset = 0
        while True:  # page on past items of deeper namespaces (exact match only)
            page = self.store.search(
                self.scope, query=query, filter=p.filter, limit=want, offset=offset
            )
            if not self._take(out, page, p, want) or len(page) < want:
                break
            offset += len(page)
        out = out[:want]
        if p.mmr and out:
            emb = self._embeddings()
            qvec = emb.embed_query(text_to_embed(query))  # as the store embeds it
            dvecs = emb.embed_documents([_text_of(it.value) for it in out])
            out = [out[i] for i in mmr_order(qvec, dvecs, p.k, p.lambda_mult)]
        return self._docs(out[: p.k])

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        **kwargs: Any,
    ) -> list[Document]:
        p = self._params(_runtime_keys(kwargs))
        want = p.fetch_k if p.mmr else p.k
        out: list[Any] = []
        offset = 0
        while True:
            page = await self.store.asearch(
                self.scope, query=query, filter=p.filter, limit=want, offset=offset
            )
            if not self._take(out, page, p, want) or len(page) < want:
                break
            offset += len(page)
        out = out[:want]
        if p.mmr and out:
            emb = self._embeddings()
            qvec = await emb.aembed_query(text_to_embed(query))
            dvecs = await emb.aembed_documents([_text_of(it.value) for it in out])
            out = [out[i] for i in mmr_order(qvec, dvecs, p.k, p.lambda_mult)]
        return self._docs(out[: p.k])

    def _embeddings(self) -> Embeddings:
        emb = getattr(self.store, "embeddings", None)
        if not isinstance(emb, Embeddings):
            raise ValidationError("search_type='mmr' needs a store with embeddings")
        return emb
