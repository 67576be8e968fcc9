"""A Milvus client session for one search or batch: per-collection requests at one
consistency level, and the map from the integer ids the ranker works on (an item's `seq`) back
to primary keys, with the tokens of the items it has read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from langmem_plus.store.milvus.keyword import ScopeIndex
from langmem_plus.store.milvus.schema import Names, in_expr
from langmem_plus.store.seams import CandidateRow

__all__ = ["MAX_LIMIT", "MilvusSession"]

_CHUNK = 1000  # primary keys per `in` expression
MAX_LIMIT = 16_384  # Milvus's cap on limit (+ offset) of one request
_PAGE = 1000


class MilvusSession:
    """One batch's view of Milvus: the client, and the ids it handed to the ranker."""

    def __init__(self, client: Any, names: Names, consistency: str) -> None:
        self.client = client
        self.names = names
        self.consistency = consistency
        self.pks: dict[int, str] = {}  # ranker id (seq) -> primary key
        self.full: dict[int, CandidateRow] = {}  # full rows read in this batch
        self.doc_counts: dict[str, int] = {}  # scope expression -> documents with text
        self.scope = ""  # the expression of the namespaces searched last (doc_terms' scope)
        self.scopes: list[str] = []  # ranker namespace id -> expression
        self.kw_scopes: dict[str, ScopeIndex | None] = {}  # client-side BM25 statistics
        self.tokens: dict[int, Counter[str]] = {}  # id -> term frequencies of its tokens
        self.lengths: dict[int, int] = {}  # id -> its document length (indexed tokens)

    def remember(self, ents: Iterable[Mapping[str, Any]]) -> None:
        """Note the primary key of each entity's id."""
        for e in ents:
            self.pks[int(e["seq"])] = e.get("item") or e["pk"]

    def pks_of(self, ids: Iterable[int]) -> list[str]:
        """The primary keys of ids this session handed out (unknown ids are skipped)."""
        return [self.pks[i] for i in ids if i in self.pks]

    def query(
        self, collection: str, expr: str, fields: list[str], limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Entities matching `expr` (at most `limit`)."""
        kw: dict[str, Any] = {"output_fields": fields, "consistency_level": self.consistency}
        if limit is not None:
            kw["limit"] = limit
        return self.client.query(collection, filter=expr or 'pk != ""', **kw)

    def query_all(self, collection: str, expr: str, fields: list[str]) -> Iterator[dict]:
        """Every entity matching `expr`, page by page."""
        it = self.client.query_iterator(
            collection,
            batch_size=_PAGE,
            filter=expr or 'pk != ""',
            output_fields=fields,
            consistency_level=self.consistency,
        )
        try:
            while True:
                page = it.next()
                if not page:
                    return
                yield from page
        finally:
            it.close()

    def by_pks(
        self,
        collection: str,
        field: str,
        pks: Sequence[str],
        fields: list[str],
        within: str = "",
    ) -> list[dict[str, Any]]:
        """Entities whose `field` is one of `pks`, in chunks; `within`: an expression they
        also satisfy (the scope, which lets a cluster read one partition)."""
        out: list[dict] = []
        for i in range(0, len(pks), _CHUNK):
            expr = in_expr(field, pks[i : i + _CHUNK])
            expr = f"({within}) and ({expr})" if within else expr
            out.extend(self.query(self.names_of(collection), expr, fields))
        return out

    def names_of(self, collection: str) -> str:
        return self.names.items if collection == "items" else self.names.vectors

    def search(
        self, collection: str, data: list[Any], field: str, limit: int, expr: str, **kw: Any
    ) -> list[dict]:
        """The hits of one search request (`distance` and the entity fields asked for)."""
        res = self.client.search(
            self.names_of(collection),
            data=data,
            anns_field=field,
            limit=max(1, min(limit, MAX_LIMIT)),
            filter=expr,
            consistency_level=self.consistency,
            **kw,
        )
        return [{**hit["entity"], "distance": hit["distance"]} for hit in res[0]]

    def search_many(
        self,
        collection: str,
        data: list[Any],
        field: str,
        limit: int,
        expr: str,
        fields: list[str],
    ) -> list[list[dict]]:
        """One request for several queries (one hit list each)."""
        if not data:
            return []
        res = self.client.search(
            self.names_of(collection),
            data=data,
            anns_field=field,
            limit=max(1, min(limit, MAX_LIMIT)),
            filter=expr,
            consistency_level=self.consistency,
            output_fields=fields,
        )
        return [[{**h["entity"], "distance": h["distance"]} for h in hits] for hits in res]
