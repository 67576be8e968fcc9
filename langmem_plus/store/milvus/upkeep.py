"""Maintenance of the Milvus store: counts, listings, TTL sweep candidates, sizes, reindexing,
integrity checks and vector backfill (what `MilvusStorage` does besides sessions and writes).

Listings page through the matching items with query iterators (Milvus has no distinct count
or group-by outside search), so `keys`, `check` and the TTL sweep stay O(items) as on SQLite;
`count` and `stats` count with `count(*)`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langmem_plus.store.milvus.schema import Names, and_, h, ns_prefix_expr, root_expr
from langmem_plus.store.milvus.session import MilvusSession
from langmem_plus.store.milvus.stats import StatsBook
from langmem_plus.store.seams import NS_SEP, ns_key, rank_fields
from langmem_plus.text.tokenize import tokenize

__all__ = ["MilvusUpkeep", "Texts", "doc_field", "vec_entity"]

Texts = Callable[[Mapping[str, Any]], list[tuple[str, str]]]

_EMBED_BATCH = 256


def vec_entity(ent: Mapping[str, Any], j: int, vec: np.ndarray) -> dict[str, Any]:
    """The vectors collection's entity of an item's `j`-th embedded text."""
    return {
        "pk": f"{ent['pk']}:{j}",
        "item": ent["pk"],
        "seq": ent["seq"],
        "ns": ent["ns"],
        "ns_path": ent["ns_path"],
        **({"root": ent["root"]} if "root" in ent else {}),
        "vec": np.asarray(vec, dtype=np.float32).tolist(),
    }


def doc_field(value: Any) -> Any:
    """The value for the `doc` JSON field: None when it is not strict JSON (NaN, infinity),
    such an item then passes every filter expression and is filtered client-side."""
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return None
    return value


class MilvusUpkeep:
    """The maintenance half of `MilvusStorage` (see the module docstring)."""

    client: Any
    names: Names
    consistency: str
    read_only: bool
    local: Path | None
    embeddings: Embeddings | None
    model_name: str
    texts: Texts
    session_keys: tuple[str, ...]
    fields: list[str]
    has_doc: bool
    rooted: bool
    book: StatsBook | None

    def _new_session(self) -> MilvusSession:
        return MilvusSession(self.client, self.names, self.consistency)

    def _all(self, expr: str, fields: list[str]) -> list[dict[str, Any]]:
        """Every item matching `expr`, in insertion order."""
        got = list(self._new_session().query_all(self.names.items, expr, [*fields, "seq"]))
        return sorted(got, key=lambda e: int(e["seq"]))

    def expired(self, now: float) -> list[tuple[tuple[str, ...], str]]:
        got = self._all(f"expires_at < {float(now)!r}", ["namespace", "key"])
        return [(tuple(e["namespace"].split(NS_SEP)), e["key"]) for e in got]

    def _prefix(self, prefix: Sequence[str], exact: bool) -> str:
        if not prefix:
            return ""
        if exact:
            return and_(root_expr(prefix, self.rooted), f'ns == "{h(ns_key(prefix))}"')
        return ns_prefix_expr(prefix, self.rooted)

    def count(self, prefix: Sequence[str], exact: bool) -> int:
        expr = self._prefix(prefix, exact)
        got = self._new_session().query(self.names.items, expr, ["count(*)"])
        return int(got[0]["count(*)"]) if got else 0

    def keys(self, prefix: Sequence[str], exact: bool) -> list[tuple[tuple[str, ...], str]]:
        got = self._all(self._prefix(prefix, exact), ["namespace", "key"])
        return [(tuple(e["namespace"].split(NS_SEP)), e["key"]) for e in got]

    def locate(self, key: str, prefix: Sequence[str]) -> list[tuple[str, ...]]:
        expr = and_(f'key_h == "{h(key)}"', self._prefix(prefix, False))
        return [tuple(e["namespace"].split(NS_SEP)) for e in self._all(expr, ["namespace"])]

    def stats(self) -> dict[str, Any]:
        """Counts by `count(*)`; the namespaces from one pass over the namespace hashes (Milvus
        has no distinct count), unsorted."""
        ns = {e["ns"] for e in self._new_session().query_all(self.names.items, "", ["ns"])}
        return {
            "items": self._count(self.names.items),
            "namespaces": len(ns),
            "vectors": self._count(self.names.vectors),
            "postings": None,  # Milvus keeps its own BM25 index
            "db_bytes": self.db_bytes(),
            "embedding_model": self.model_name or None,
            "faiss_vectors": 0,
        }

    def _count(self, collection: str) -> int:
        if not self.client.has_collection(collection):
            return 0
        got = self._new_session().query(collection, "", ["count(*)"])
        return int(got[0]["count(*)"]) if got else 0

    def db_bytes(self) -> int:
        """Bytes of a local Milvus Lite file (0 for a server: ask the cluster's metrics)."""
        if self.local is None or not self.local.exists():
            return 0
        if self.local.is_file():
            return self.local.stat().st_size
        return sum(p.stat().st_size for p in self.local.rglob("*") if p.is_file())

    def vacuum(self) -> int:
        """Milvus compacts deleted entities in the background; here the statistics rows of
        closed handles are folded (store/milvus/stats.py). Returns 0 (no bytes are measured)."""
        if self.book is not None and not self.read_only:
            self.book.compact()
        return 0

    def _embed(self, ents: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Vector entities of the items' texts, embedded in batches."""
        assert self.embeddings is not None
        flat = [
            (e, j, t)
            for e in ents
            if e["indexed"]
            for j, (_p, t) in enumerate(self.texts(json.loads(e["value"])))
        ]
        out: list[dict[str, Any]] = []
        for i in range(0, len(flat), _EMBED_BATCH):
            chunk = flat[i : i + _EMBED_BATCH]
            arr = np.asarray(self.embeddings.embed_documents([c[2] for c in chunk]), np.float32)
            out.extend(vec_entity(e, j, v) for (e, j, _t), v in zip(chunk, arr, strict=True))
        return out

    def reindex(
        self, *, vectors: bool = True, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, int]:
        """Re-tokenise every item and re-read its ranking fields (and re-embed it);
        `progress(done, total)` counts the items written, then the vectors."""
        ents = self._all("", self.fields)
        embed = vectors and self.embeddings is not None
        total = len(ents) * (2 if embed else 1)
        if progress is not None:
            progress(0, total)
        for e in ents:
            value = json.loads(e["value"])
            toks = tokenize("\n".join(t for _, t in self.texts(value))) if e["indexed"] else []
            conf, cat, session = rank_fields(value, self.session_keys)
            e.update(text=" ".join(toks), doc_len=len(toks), confidence=conf, category=cat)
            e.update(session=session, session_h=h(session) if session else "")
            if self.has_doc:
                e["doc"] = doc_field(value)
        for i in range(0, len(ents), 1000):
            self.client.upsert(self.names.items, ents[i : i + 1000])
            if progress is not None:
                progress(min(i + 1000, len(ents)), total)
        if self.book is not None:
            self.book.rebuild()
        n_vecs = 0
        if embed:
            vecs = self._embed(ents)
            self.client.delete(self.names.vectors, filter='pk != ""')
            for i in range(0, len(vecs), 1000):
                self.client.upsert(self.names.vectors, vecs[i : i + 1000])
            n_vecs = len(vecs)
        if progress is not None:
            progress(total, total)
        return {"items": len(ents), "vectors": n_vecs}

    def _vector_items(self) -> set[str]:
        if not self.client.has_collection(self.names.vectors):
            return set()
        return {e["item"] for e in self._new_session().query_all(self.names.vectors, "", ["item"])}

    def check(self) -> dict[str, Any]:
        """Items and vectors agree: no vector of a missing item, and (with embeddings) every
        indexed item with text has vectors."""
        items = {e["pk"]: e for e in self._all("", ["pk", "doc_len", "indexed"])}
        have = self._vector_items()
        problems: list[str] = []
        orphans = len(have - set(items))
        if orphans:
            problems.append(f"{orphans} items have vectors but no item entity")
        if self.embeddings is not None:
            missing = sum(
                1 for pk, e in items.items() if e["indexed"] and e["doc_len"] and pk not in have
            )
            if missing:
                problems.append(f"{missing} indexed items have no vectors (backfill_vectors)")
        if self.book is not None:
            problems.extend(self._check_stats())
        return {"ok": not problems, "problems": problems, "items": len(items)}

    def _check_stats(self) -> list[str]:
        """The statistics rows against a recount of the items (store/milvus/stats.py)."""
        assert self.book is not None
        off = self.book.differences()
        if off:
            return [f"the statistics of {off} namespaces differ from their items (reindex)"]
        return []

    def backfill_vectors(self) -> int:
        if self.embeddings is None:
            return 0
        have = self._vector_items()
        todo = [e for e in self._all("indexed == true", self.fields) if e["pk"] not in have]
        vecs = self._embed(todo)
        for i in range(0, len(vecs), 1000):
            self.client.upsert(self.names.vectors, vecs[i : i + 1000])
        return len({v["item"] for v in vecs})
