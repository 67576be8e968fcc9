"""HybridStore: a LangGraph `BaseStore` over SQLite with BM25 (jieba) + FAISS hybrid search.

SQLite is the truth (items, keyword postings, float16 vectors); the FAISS indexes are derived
and rebuilt or synced from it. `batch` plans the ops once (pure), embeds, then does the I/O;
`abatch` differs only in awaiting the embeddings and running the I/O in a worker thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

from langmem_plus.config import MemoryConfig
from langmem_plus.embeddings import default_embeddings, embedding_model_name
from langmem_plus.errors import (
    EmbeddingModelMismatchError,
    InvalidQueryError,
    StoreClosedError,
    ValidationError,
)
from langmem_plus.store.conversations import ConversationLog
from langmem_plus.store.filters import matches, validate_filter
from langmem_plus.store.keyword import KeywordIndex
from langmem_plus.store.scoring import ScoreParts, fuse_relevance, score_batch
from langmem_plus.store.sqlite import Database
from langmem_plus.store.vector import VectorIndex, decode_vec, encode_vec
from langmem_plus.text.intent import is_preference_query
from langmem_plus.text.symbols import extract_symbols
from langmem_plus.text.tokenize import query_terms, tokenize

__all__ = ["HybridStore", "MemorySearchItem"]

logger = logging.getLogger(__name__)

_SEP = "."  # LangGraph forbids "." inside labels, so joining on it is unambiguous.
_SCAN_CAP = 20_000
_LOG_COMPACT_AT = 10_000
_LIKE_MAX_DOCS = 50_000


class MemorySearchItem(SearchItem):
    """A search hit: `score` is the final score, `components` explains it part by part."""

    __slots__ = ("_rowid", "access_count", "components", "last_accessed")

    def __init__(
        self,
        *,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: datetime,
        updated_at: datetime,
        score: float | None = None,
        components: dict[str, Any] | None = None,
        access_count: int = 0,
        last_accessed: datetime | None = None,
    ) -> None:
        super().__init__(namespace, key, value, created_at, updated_at, score)
        self.components = components or {}
        self.access_count = access_count
        self.last_accessed = last_accessed

    def dict(self) -> dict:
        out = super().dict()
        out["components"] = self.components
        return out


def _ns_str(namespace: Sequence[str]) -> str:
    return _SEP.join(namespace)


def _ts(x: float | None) -> datetime | None:
    return None if x is None else datetime.fromtimestamp(x, tz=timezone.utc)


def _as_epoch(x: datetime | float | int | str | None) -> float | None:
    if x is None:
        return None
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str):
        x = datetime.fromisoformat(x.replace("Z", "+00:00"))
    if x.tzinfo is None:
        x = x.replace(tzinfo=timezone.utc)
    return x.timestamp()


def _string_leaves(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, Mapping):
        for v in value.values():
            _string_leaves(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _string_leaves(v, out)


@dataclass
class _PutPlan:
    op: PutOp
    texts: list[tuple[str, str]] = field(default_factory=list)  # (path, text) to embed
    keyword_text: str = ""


@dataclass
class _Plan:
    ops: list[Op]
    puts: dict[tuple[tuple[str, ...], str], _PutPlan]
    queries: list[str]


_ROW_COLS = (
    "i.id, n.ns, i.key, i.value, i.created_at, i.updated_at, i.last_accessed, "
    "i.access_count, i.ttl_minutes, i.expires_at"
)


class HybridStore(BaseStore):
    """LangGraph `BaseStore` with hybrid BM25 + FAISS search under the spec's weighted score.

    `HybridStore()` works at once in memory with the offline default embeddings;
    `HybridStore("memories.db")` persists to SQLite (the FAISS snapshot sits beside it as
    `memories.db.faiss`). `index=` takes LangGraph's `IndexConfig` (`dims`, `embed`, `fields`;
    default fields: `["text"]`, falling back to every string in the value); `index=False`
    turns vectors off (keyword search only).
    """

    supports_ttl: bool = True

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        index: IndexConfig | Literal[False] | None = None,
        config: MemoryConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        self.config = config or MemoryConfig()
        self.path = None if path is None else Path(path)
        self.ttl_config = ttl
        self._closed = False
        self._db = Database(self.path)
        self._kw = KeywordIndex(
            k1=self.config.bm25_k1,
            b=self.config.bm25_b,
            epsilon=self.config.bm25_epsilon,
            max_postings_scan=self.config.max_postings_scan,
        )
        self.embeddings: Embeddings | None
        self.index_config: dict[str, Any] | None
        if index is False:
            self.embeddings = None
            self.index_config = None
            fields: list[str] = ["text"]
            self.model_name = ""
            dims = 0
        else:
            cfg: dict[str, Any] = dict(index or {})
            embed = cfg.get("embed")
            if embed is None:
                embed = default_embeddings()
            self.embeddings = embed if isinstance(embed, Embeddings) else ensure_embeddings(embed)
            self.model_name = embedding_model_name(embed)
            dims = int(cfg.get("dims") or getattr(embed, "dims", 0) or 0)
            if not dims:
                dims = len(self.embeddings.embed_query("dimension probe"))
            fields = list(cfg.get("fields") or ["text"])
            self.index_config = {**cfg, "dims": dims, "fields": fields}
        self.fields = fields
        self._tok_fields = [(p, tokenize_path(p)) if p != "$" else (p, p) for p in fields]
        self.dims = dims
        self._vec: VectorIndex | None = None
        if self.embeddings is not None:
            self._check_model()
            snap = None if self.path is None else self.path.with_name(self.path.name + ".faiss")
            self._vec = VectorIndex(
                dims,
                snapshot_path=snap,
                ann_threshold=self.config.ann_threshold,
                nprobe=self.config.ivf_nprobe,
            )
            self._vec.model_name = self.model_name
            with self._db.read() as conn:
                self._vec.open(conn, self.model_name)
        self._conversations: ConversationLog | None = None
        self._sweeper: threading.Thread | None = None
        self._sweeper_stop = threading.Event()
        if ttl and ttl.get("sweep_interval_minutes"):
            self.start_ttl_sweeper()

    # ================================================================ lifecycle
    def _check_model(self) -> None:
        stored = self._db.get_meta("embedding_model")
        stored_dims = self._db.get_meta("embedding_dims")
        with self._db.read() as conn:
            has_vectors = conn.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is not None
        if (
            has_vectors
            and stored
            and (stored != self.model_name or int(stored_dims or 0) != self.dims)
        ):
            raise EmbeddingModelMismatchError(
                f"this store's vectors were made by {stored!r} ({stored_dims}-d) but the store "
                f"was opened with {self.model_name!r} ({self.dims}-d). Open it with the same "
                f"embeddings, or call HybridStore.reembed(path, index=...) to re-embed every item."
            )
        with self._db.write() as conn:
            self._db.set_meta(conn, "embedding_model", self.model_name)
            self._db.set_meta(conn, "embedding_dims", str(self.dims))

    @classmethod
    def reembed(
        cls,
        path: str | Path,
        *,
        index: IndexConfig | None = None,
        config: MemoryConfig | None = None,
    ) -> HybridStore:
        """Open `path` with new embeddings, replacing every stored vector (model change)."""
        db = Database(Path(path))
        with db.write() as conn:
            conn.execute("DELETE FROM vectors")
            conn.execute("DELETE FROM vec_log")
            conn.execute("DELETE FROM meta WHERE key IN ('embedding_model','embedding_dims')")
        db.close()
        snap = Path(path).with_name(Path(path).name + ".faiss")
        if snap.exists():
            snap.unlink()
        store = cls(path, index=index, config=config)
        store.reindex()
        return store

    def close(self) -> None:
        """Stop the TTL sweeper, snapshot the vector index, close SQLite. Idempotent."""
        if self._closed:
            return
        self.stop_ttl_sweeper()
        try:
            if self._vec is not None and self.path is not None:
                with self._db.read() as conn:
                    self._vec.sync(conn)
                try:
                    self._vec.save()
                except OSError as exc:  # only a cache: the next open rebuilds or replays
                    logger.warning("could not write the vector snapshot: %s", exc)
                with self._db.write() as conn:
                    n = conn.execute("SELECT COUNT(*) FROM vec_log").fetchone()[0]
                    if n > _LOG_COMPACT_AT:
                        self._vec.compact_log(conn)
        finally:
            self._db.close()
            self._closed = True

    def __enter__(self) -> HybridStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ensure_open(self) -> None:
        if self._closed:
            raise StoreClosedError("this HybridStore is closed; open a new one")

    # ================================================================ text
    def _texts(
        self, value: Mapping[str, Any], index: Literal[False] | list[str] | None
    ) -> list[tuple[str, str]]:
        if index is False:
            return []
        paths = (
            self._tok_fields
            if index is None
            else [(p, tokenize_path(p)) if p != "$" else (p, p) for p in index]
        )
        out: list[tuple[str, str]] = []
        for path, tok in paths:
            if tok == "$":
                leaves: list[str] = []
                _string_leaves(value, leaves)
                if leaves:
                    out.append((path, " ".join(leaves)))
                continue
            texts = get_text_at_path(value, tok)
            if len(texts) > 1:
                out.extend((f"{path}.{i}", t) for i, t in enumerate(texts) if t)
            elif texts and texts[0]:
                out.append((path, texts[0]))
        if not out and index is None:
            leaves = []
            _string_leaves(value, leaves)
            if leaves:
                out.append(("$", " ".join(leaves)))
        return out

    # ================================================================ planning
    def _plan(self, ops: Iterable[Op]) -> _Plan:
        self._ensure_open()
        ops = list(ops)
        puts: dict[tuple[tuple[str, ...], str], _PutPlan] = {}
        queries: list[str] = []
        for op in ops:
            if isinstance(op, (GetOp, PutOp, SearchOp, ListNamespacesOp)):
                validate_op_namespace(op)
            else:
                raise ValidationError(f"unknown store operation: {type(op).__name__}")
            if isinstance(op, PutOp):
                if not isinstance(op.key, str):
                    raise ValidationError(f"key must be a string, got {type(op.key).__name__}")
                if not op.namespace:
                    raise ValidationError("namespace must not be empty for a put")
                if op.value is not None:
                    if not isinstance(op.value, Mapping):
                        raise ValidationError(
                            f"value must be a dict, got {type(op.value).__name__}"
                        )
                    try:
                        json.dumps(op.value)
                    except (TypeError, ValueError) as exc:
                        raise ValidationError(
                            f"value for key {op.key!r} is not JSON-serialisable: {exc}"
                        ) from None
                    if (
                        op.index is not None
                        and op.index is not False
                        and not isinstance(op.index, list)
                    ):
                        raise ValidationError("index must be False, None or a list of field paths")
                    texts = self._texts(op.value, op.index)
                    plan = _PutPlan(op=op, keyword_text="\n".join(t for _, t in texts))
                    if self.embeddings is not None:
                        plan.texts = texts
                    puts[(tuple(op.namespace), op.key)] = plan
                else:
                    puts[(tuple(op.namespace), op.key)] = _PutPlan(op=op)
            elif isinstance(op, SearchOp):
                if not isinstance(op.limit, int) or op.limit < 0:
                    raise InvalidQueryError(f"limit must be a non-negative int, got {op.limit!r}")
                if not isinstance(op.offset, int) or op.offset < 0:
                    raise InvalidQueryError(f"offset must be a non-negative int, got {op.offset!r}")
                validate_filter(op.filter)
                if op.query is not None and not isinstance(op.query, str):
                    raise InvalidQueryError(
                        f"query must be a string, got {type(op.query).__name__}"
                    )
                if op.query and self.embeddings is not None:
                    queries.append(op.query[: self.config.max_query_chars])
        return _Plan(ops=ops, puts=puts, queries=list(dict.fromkeys(queries)))

    def _embed_inputs(self, plan: _Plan) -> list[str]:
        return [t for p in plan.puts.values() for _, t in p.texts]

    # ================================================================ batch
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ops in order: reads see the store as it was before this batch's writes."""
        plan = self._plan(ops)
        doc_vecs, q_vecs = self._embed_sync(plan)
        return self._execute(plan, doc_vecs, q_vecs)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async `batch`: embeddings awaited, SQLite work in a worker thread (loop never blocks)."""
        plan = self._plan(ops)
        doc_vecs, q_vecs = await self._embed_async(plan)
        return await asyncio.to_thread(self._execute, plan, doc_vecs, q_vecs)

    def _embed_sync(self, plan: _Plan) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
        if self.embeddings is None:
            return None, {}
        docs = self._embed_inputs(plan)
        doc_vecs = (
            np.asarray(self.embeddings.embed_documents(docs), dtype=np.float32) if docs else None
        )
        q_vecs = {q: np.asarray(self.embeddings.embed_query(q), np.float32) for q in plan.queries}
        return doc_vecs, q_vecs

    async def _embed_async(self, plan: _Plan) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
        if self.embeddings is None:
            return None, {}
        docs = self._embed_inputs(plan)
        doc_vecs = (
            np.asarray(await self.embeddings.aembed_documents(docs), dtype=np.float32)
            if docs
            else None
        )
        q_list = await asyncio.gather(*(self.embeddings.aembed_query(q) for q in plan.queries))
        q_vecs = {q: np.asarray(v, np.float32) for q, v in zip(plan.queries, q_list, strict=True)}
        return doc_vecs, q_vecs

    def _execute(
        self, plan: _Plan, doc_vecs: np.ndarray | None, q_vecs: dict[str, np.ndarray]
    ) -> list[Result]:
        self._ensure_open()
        if doc_vecs is not None and doc_vecs.shape[1] != self.dims:
            raise EmbeddingModelMismatchError(
                f"embeddings returned {doc_vecs.shape[1]}-d vectors, the index expects {self.dims}"
            )
        results: list[Result] = [None] * len(plan.ops)
        now = time.time()
        refresh: list[int] = []
        with self._db.lock:
            if any(not isinstance(op, PutOp) for op in plan.ops):
                with self._db.read() as conn:
                    if self._vec is not None:
                        self._vec.sync(conn)
                    for i, op in enumerate(plan.ops):
                        if isinstance(op, GetOp):
                            got = self._get(conn, op, now)
                            results[i] = None if got is None else got[0]
                            if got is not None and op.refresh_ttl and got[1] >= 0:
                                refresh.append(got[1])
                        elif isinstance(op, SearchOp):
                            hits = self._search(
                                conn,
                                op,
                                q_vecs.get((op.query or "")[: self.config.max_query_chars]),
                                now,
                            )
                            results[i] = hits
                            if op.refresh_ttl:
                                refresh.extend(h._rowid for h in hits if h._rowid is not None)
                        elif isinstance(op, ListNamespacesOp):
                            results[i] = self._list_namespaces(conn, op, now)
            if plan.puts or refresh:
                with self._db.write() as conn:
                    if refresh:
                        self._refresh_ttl(conn, refresh, now)
                    if plan.puts:
                        self._apply_puts(conn, plan, doc_vecs, now)
                if plan.puts and self._vec is not None:
                    with self._db.read() as conn:
                        self._vec.sync(conn)
        return results

    # ================================================================ writes
    def _ns_ids_for_write(
        self, conn: Any, namespaces: Iterable[tuple[str, ...]]
    ) -> dict[tuple[str, ...], int]:
        out: dict[tuple[str, ...], int] = {}
        for ns in set(namespaces):
            s = _ns_str(ns)
            conn.execute("INSERT OR IGNORE INTO namespaces(ns) VALUES (?)", (s,))
            out[ns] = conn.execute("SELECT id FROM namespaces WHERE ns=?", (s,)).fetchone()[0]
        return out

    def _apply_puts(self, conn: Any, plan: _Plan, doc_vecs: np.ndarray | None, now: float) -> None:
        ns_ids = self._ns_ids_for_write(conn, (k[0] for k in plan.puts))
        # 1. unindex whatever the touched keys held before
        old: list[tuple[int, int, int]] = []
        keys_by_ns: dict[int, list[str]] = {}
        for ns, key in plan.puts:
            keys_by_ns.setdefault(ns_ids[ns], []).append(key)
        existing: dict[tuple[int, str], tuple[int, float]] = {}
        for ns_id, keys in keys_by_ns.items():
            for i in range(0, len(keys), 500):
                part = keys[i : i + 500]
                marks = ",".join("?" * len(part))
                for rid, key, dl, created in conn.execute(
                    f"SELECT id, key, doc_len, created_at FROM items WHERE ns_id=? AND key IN ({marks})",
                    (ns_id, *part),
                ):
                    existing[(ns_id, key)] = (rid, created)
                    old.append((ns_id, rid, dl))
        if old:
            self._kw.remove_many(conn, [o for o in old if o[2] > 0 or True])
            self._drop_vectors(conn, [o[1] for o in old])
        # 2. write the new state
        kw_docs: list[tuple[int, int, list[str]]] = []
        vec_rows: list[tuple[int, int, str, bytes]] = []
        cursor = 0
        for (ns, key), p in plan.puts.items():
            ns_id = ns_ids[ns]
            prev = existing.get((ns_id, key))
            op = p.op
            if op.value is None:
                if prev is not None:
                    conn.execute("DELETE FROM items WHERE id=?", (prev[0],))
                continue
            tokens = tokenize(p.keyword_text) if op.index is not False else []
            indexed = 0 if op.index is False else 1
            ttl = op.ttl
            expires = now + ttl * 60 if ttl is not None else None
            payload = json.dumps(op.value, ensure_ascii=False, separators=(",", ":"))
            if prev is None:
                rid = conn.execute(
                    "INSERT INTO items(ns_id, key, value, created_at, updated_at, ttl_minutes, "
                    "expires_at, doc_len, indexed) VALUES (?,?,?,?,?,?,?,?,?)",
                    (ns_id, key, payload, now, now, ttl, expires, len(tokens), indexed),
                ).lastrowid
            else:
                rid = prev[0]
                conn.execute(
                    "UPDATE items SET value=?, updated_at=?, ttl_minutes=?, expires_at=?, "
                    "doc_len=?, indexed=? WHERE id=?",
                    (payload, now, ttl, expires, len(tokens), indexed, rid),
                )
            if tokens:
                kw_docs.append((ns_id, rid, tokens))
            for path, _text in p.texts:
                assert doc_vecs is not None
                vec_rows.append((rid, ns_id, path, encode_vec(doc_vecs[cursor])))
                cursor += 1
        self._kw.add_many(conn, kw_docs)
        for rid, ns_id, path, blob in vec_rows:
            vid = conn.execute(
                "INSERT INTO vectors(item_id, ns_id, path, vec) VALUES (?,?,?,?)",
                (rid, ns_id, path, blob),
            ).lastrowid
            conn.execute("INSERT INTO vec_log(ns_id, vec_id, op) VALUES (?,?,1)", (ns_id, vid))

    def _drop_vectors(self, conn: Any, item_ids: Sequence[int]) -> None:
        for i in range(0, len(item_ids), 500):
            part = list(item_ids[i : i + 500])
            marks = ",".join("?" * len(part))
            rows = conn.execute(
                f"SELECT id, ns_id FROM vectors WHERE item_id IN ({marks})", part
            ).fetchall()
            if rows:
                conn.executemany(
                    "INSERT INTO vec_log(ns_id, vec_id, op) VALUES (?,?,0)",
                    [(ns_id, vid) for vid, ns_id in rows],
                )
                conn.execute(f"DELETE FROM vectors WHERE item_id IN ({marks})", part)

    def _refresh_ttl(self, conn: Any, rowids: Sequence[int], now: float) -> None:
        conn.executemany(
            "UPDATE items SET expires_at = ? + ttl_minutes * 60 WHERE id=? AND ttl_minutes IS NOT NULL",
            [(now, r) for r in rowids],
        )

    # ================================================================ reads
    def _omit_expired(self) -> bool:
        return bool(self.ttl_config and self.ttl_config.get("omit_expired"))

    def _row_item(self, row: Sequence[Any], cls: type = MemorySearchItem, **extra: Any) -> Any:
        rid, ns, key, value, created, updated, last, count, _ttl, _exp = row
        kwargs: dict[str, Any] = dict(
            namespace=tuple(ns.split(_SEP)),
            key=key,
            value=json.loads(value),
            created_at=_ts(created),
            updated_at=_ts(updated),
        )
        if cls is Item:
            return Item(**kwargs)
        item: Any = MemorySearchItem(
            **kwargs, access_count=int(count), last_accessed=_ts(last), **extra
        )
        item._rowid = rid if row[8] is not None else None  # only TTL items need refresh
        return item

    def _get(self, conn: Any, op: GetOp, now: float) -> tuple[Item, int] | None:
        row = conn.execute(
            f"SELECT {_ROW_COLS} FROM items i JOIN namespaces n ON n.id=i.ns_id "
            "WHERE n.ns=? AND i.key=?",
            (_ns_str(op.namespace), op.key),
        ).fetchone()
        if row is None or (self._omit_expired() and row[9] is not None and row[9] < now):
            return None
        return self._row_item(row, Item), (int(row[0]) if row[8] is not None else -1)

    def _ns_ids(self, conn: Any, prefix: Sequence[str]) -> list[int]:
        if not prefix:
            return [r[0] for r in conn.execute("SELECT id FROM namespaces ORDER BY id")]
        s = _ns_str(prefix)
        return [
            r[0]
            for r in conn.execute(
                "SELECT id FROM namespaces WHERE ns=? OR (ns >= ? AND ns < ?) ORDER BY id",
                (s, s + _SEP, s + chr(ord(_SEP) + 1)),
            )
        ]

    def _scan(
        self,
        conn: Any,
        ns_ids: Sequence[int],
        flt: Mapping[str, Any] | None,
        now: float,
        stop: int | None,
    ) -> list[Any]:
        """Rows of the namespaces in insertion order that pass the filter (up to `stop`)."""
        out: list[Any] = []
        omit = self._omit_expired()
        for i in range(0, len(ns_ids), 500):
            part = list(ns_ids[i : i + 500])
            marks = ",".join("?" * len(part))
            sql = (
                f"SELECT {_ROW_COLS} FROM items i JOIN namespaces n ON n.id=i.ns_id "
                f"WHERE i.ns_id IN ({marks}) ORDER BY i.id"
            )
            for row in conn.execute(sql, part):
                if omit and row[9] is not None and row[9] < now:
                    continue
                if flt and not matches(json.loads(row[3]), flt):
                    continue
                out.append(row)
                if stop is not None and len(out) >= stop:
                    return out
        return out

    def _search(self, conn: Any, op: SearchOp, qvec: np.ndarray | None, now: float) -> list[Any]:
        ns_ids = self._ns_ids(conn, op.namespace_prefix)
        if not ns_ids or op.limit == 0:
            return []
        if not op.query:
            rows = self._scan(conn, ns_ids, op.filter, now, op.offset + op.limit)
            return [
                self._row_item(r, MemorySearchItem) for r in rows[op.offset : op.offset + op.limit]
            ]
        return self._ranked(conn, ns_ids, op.query, qvec, op.filter, op.limit, op.offset, now)

    def _ranked(
        self,
        conn: Any,
        ns_ids: Sequence[int],
        query: str,
        qvec: np.ndarray | None,
        flt: Mapping[str, Any] | None,
        limit: int,
        offset: int,
        now: float,
        *,
        current_topic: str | None = None,
        time_range: tuple[float | None, float | None] | None = None,
    ) -> list[Any]:
        query = query[: self.config.max_query_chars]
        want = offset + limit
        pool = max(self.config.keyword_candidates, want * 3)
        vpool = max(self.config.vector_candidates, want * 3)
        q = query_terms(query, self.config.max_query_chars)
        sims: dict[int, float] = {}
        if qvec is not None and self._vec is not None:
            hits = self._vec.search(ns_ids, qvec, vpool)
            sims = self._vec_to_items(conn, hits)
        bm25: dict[int, float] = {}
        try:
            bm25 = self._kw.search(conn, ns_ids, q, pool, extra_candidates=sims.keys())
        except Exception as exc:  # the keyword index cannot serve: substring fallback
            logger.warning("keyword index failed (%s); falling back to LIKE matching", exc)
            bm25 = self._like(conn, ns_ids, query, pool)
        if not any(v > 0 for v in bm25.values()) and (
            not q or self._kw.stats(conn, ns_ids).n_docs <= _LIKE_MAX_DOCS
        ):
            # No keyword evidence (only stop words, or terms no segmentation produced, e.g. a
            # sub-word of a jieba token): substring matching, bounded to small namespaces.
            like = self._like(conn, ns_ids, query, pool)
            bm25 = {**bm25, **like}
        rows = self._rows(conn, set(bm25) | set(sims))
        keep = self._keep(rows, flt, time_range, now)
        if (flt or time_range) and len(keep) < want:
            scanned = self._scan(conn, ns_ids, flt, now, _SCAN_CAP)
            extra_ids = [r[0] for r in scanned if self._in_range(r, time_range)]
            if extra_ids:
                bm25.update(self._kw.search(conn, ns_ids, q, pool, extra_candidates=extra_ids))
                rows.update({r[0]: r for r in scanned})
                keep = self._keep(rows, flt, time_range, now)
        if not keep:
            return []
        missing = [i for i in keep if i not in sims]
        if qvec is not None and missing:
            sims.update(self._cosines(conn, missing, qvec))
        sims_k = {i: sims[i] for i in keep if i in sims}
        bm_k = {i: bm25.get(i, 0.0) for i in keep}
        fused = fuse_relevance(bm_k, sims_k, self.config.w_fusion_keyword)
        pref = is_preference_query(query)
        topic_tokens = set(tokenize(current_topic)) if current_topic else set()
        q_symbols = (
            {s.lower() for s in extract_symbols(query)}
            if self.config.profile == "coding"
            else set()
        )
        n = len(keep)
        last = np.full(n, np.nan)
        count = np.zeros(n)
        conf = np.full(n, np.nan)
        pref_item = np.zeros(n, dtype=bool)
        on_topic = np.zeros(n, dtype=bool)
        sym = np.zeros(n)
        for j, rid in enumerate(keep):
            row = rows[rid]
            value = json.loads(row[3])
            used = row[6] if row[6] is not None else row[5]
            last[j] = used
            count[j] = row[7]
            c = value.get("confidence")
            if isinstance(c, (int, float)) and not isinstance(c, bool):
                conf[j] = c
            pref_item[j] = value.get("category") == "preference"
            if topic_tokens:
                on_topic[j] = bool(topic_tokens & set(tokenize(self._keyword_text(value))))
            if q_symbols:
                item_syms = value.get("symbols")
                if not isinstance(item_syms, list):
                    item_syms = extract_symbols(self._keyword_text(value))
                have = {str(x).lower() for x in item_syms}
                sym[j] = len(q_symbols & have) / len(q_symbols)
            elif self.config.profile == "coding":
                sym[j] = fused[rid][1]
        fused_arr = np.array([fused[rid][0] for rid in keep])
        vnorm = np.array([fused[rid][2] for rid in keep])
        parts = score_batch(
            config=self.config,
            now=now,
            fused=fused_arr,
            last_used=last,
            access_count=count,
            confidence=conf,
            preference_item=pref_item,
            preference_query=pref,
            on_topic=on_topic,
            symbol_match=sym,
            vector_norm=vnorm,
        )
        ids = np.asarray(keep, dtype=np.int64)
        order = np.lexsort((-ids, -parts["score"]))[offset:want]
        out = []
        for j in order.tolist():
            rid = keep[j]
            comp = ScoreParts(
                score=float(parts["score"][j]),
                keyword=float(fused_arr[j]),
                bm25=float(bm_k[rid]),
                bm25_norm=float(fused[rid][1]),
                vector=float(sims_k.get(rid, 0.0)),
                vector_norm=float(vnorm[j]),
                category_boost=float(parts["category_boost"][j]),
                recency=float(parts["recency"][j]),
                frequency=float(parts["frequency"][j]),
                confidence=float(parts["confidence"][j]),
                topic_boost=float(parts["topic_boost"][j]),
                symbol_match=float(sym[j]),
                profile=self.config.profile,
            )
            out.append(
                self._row_item(
                    rows[rid], MemorySearchItem, score=comp.score, components=comp.as_dict()
                )
            )
        return out

    def _keyword_text(self, value: Mapping[str, Any]) -> str:
        return "\n".join(t for _, t in self._texts(value, None))

    @staticmethod
    def _in_range(row: Sequence[Any], tr: tuple[float | None, float | None] | None) -> bool:
        if not tr:
            return True
        lo, hi = tr
        return (lo is None or row[4] >= lo) and (hi is None or row[4] <= hi)

    def _keep(
        self, rows: Mapping[int, Any], flt: Mapping[str, Any] | None, tr: Any, now: float
    ) -> list[int]:
        omit = self._omit_expired()
        out = []
        for rid, row in rows.items():
            if omit and row[9] is not None and row[9] < now:
                continue
            if not self._in_range(row, tr):
                continue
            if flt and not matches(json.loads(row[3]), flt):
                continue
            out.append(rid)
        return out

    def _rows(self, conn: Any, ids: Iterable[int]) -> dict[int, Any]:
        ids = list(ids)
        out: dict[int, Any] = {}
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            marks = ",".join("?" * len(part))
            for row in conn.execute(
                f"SELECT {_ROW_COLS} FROM items i JOIN namespaces n ON n.id=i.ns_id "
                f"WHERE i.id IN ({marks})",
                part,
            ):
                out[row[0]] = row
        return out

    def _vec_to_items(self, conn: Any, hits: Sequence[tuple[int, float]]) -> dict[int, float]:
        if not hits:
            return {}
        best = dict(hits)
        vids = list(best)
        out: dict[int, float] = {}
        for i in range(0, len(vids), 500):
            part = vids[i : i + 500]
            marks = ",".join("?" * len(part))
            for vid, item_id in conn.execute(
                f"SELECT id, item_id FROM vectors WHERE id IN ({marks})", part
            ):
                s = best[vid]
                if s > out.get(item_id, -math.inf):
                    out[item_id] = s
        return out

    def _cosines(self, conn: Any, item_ids: Sequence[int], qvec: np.ndarray) -> dict[int, float]:
        q = qvec / (np.linalg.norm(qvec) or 1.0)
        out: dict[int, float] = {}
        for i in range(0, len(item_ids), 500):
            part = list(item_ids[i : i + 500])
            marks = ",".join("?" * len(part))
            for item_id, blob in conn.execute(
                f"SELECT item_id, vec FROM vectors WHERE item_id IN ({marks})", part
            ):
                v = decode_vec(blob)
                s = float(v @ q / (np.linalg.norm(v) or 1.0))
                if s > out.get(item_id, -math.inf):
                    out[item_id] = s
        return out

    def _like(self, conn: Any, ns_ids: Sequence[int], query: str, k: int) -> dict[int, float]:
        """Substring fallback: items whose value contains the query's words, as plain data."""
        words = [w for w in query.split() if w][:8] or ([query.strip()] if query.strip() else [])
        if not words:
            return {}
        scores: dict[int, float] = {}
        for i in range(0, len(ns_ids), 500):
            part = list(ns_ids[i : i + 500])
            marks = ",".join("?" * len(part))
            for w in words:
                pat = "%" + w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
                for (rid,) in conn.execute(
                    f"SELECT id FROM items WHERE ns_id IN ({marks}) AND indexed = 1 "
                    f"AND value LIKE ? ESCAPE '\\' "
                    f"ORDER BY id DESC LIMIT ?",
                    (*part, pat, k),
                ):
                    scores[rid] = scores.get(rid, 0.0) + 1.0
        return scores

    def _list_namespaces(
        self, conn: Any, op: ListNamespacesOp, now: float
    ) -> list[tuple[str, ...]]:
        sql = "SELECT n.ns FROM namespaces n WHERE EXISTS (SELECT 1 FROM items i WHERE i.ns_id=n.id"
        if self._omit_expired():
            sql += " AND (i.expires_at IS NULL OR i.expires_at >= ?))"
            rows = conn.execute(sql, (now,)).fetchall()
        else:
            rows = conn.execute(sql + ")").fetchall()
        namespaces = [tuple(r[0].split(_SEP)) for r in rows]
        if op.match_conditions:
            namespaces = [
                ns for ns in namespaces if all(_ns_match(c, ns) for c in op.match_conditions)
            ]
        if op.max_depth is not None:
            namespaces = sorted({ns[: op.max_depth] for ns in namespaces})
        else:
            namespaces = sorted(namespaces)
        return namespaces[op.offset : op.offset + op.limit]

    # ================================================================ extras
    def search(  # type: ignore[override]
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
        current_topic: str | None = None,
        time_range: tuple[datetime | float | str | None, datetime | float | str | None]
        | None = None,
    ) -> list[MemorySearchItem]:
        """BaseStore.search plus `current_topic` (x1.3 boost) and `time_range` (created_at)."""
        if current_topic is None and time_range is None:
            return super().search(  # type: ignore[return-value]
                namespace_prefix,
                query=query,
                filter=filter,
                limit=limit,
                offset=offset,
                refresh_ttl=refresh_ttl,
            )
        op, tr = self._extra_op(
            namespace_prefix, query, filter, limit, offset, refresh_ttl, time_range
        )
        plan = self._plan([op])
        _, q_vecs = self._embed_sync(plan)
        return self._run_extra(op, q_vecs, current_topic, tr)

    async def asearch(  # type: ignore[override]
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
        current_topic: str | None = None,
        time_range: tuple[datetime | float | str | None, datetime | float | str | None]
        | None = None,
    ) -> list[MemorySearchItem]:
        """Async twin of `search` (same extras)."""
        if current_topic is None and time_range is None:
            return await super().asearch(  # type: ignore[return-value]
                namespace_prefix,
                query=query,
                filter=filter,
                limit=limit,
                offset=offset,
                refresh_ttl=refresh_ttl,
            )
        op, tr = self._extra_op(
            namespace_prefix, query, filter, limit, offset, refresh_ttl, time_range
        )
        plan = self._plan([op])
        _, q_vecs = await self._embed_async(plan)
        return await asyncio.to_thread(self._run_extra, op, q_vecs, current_topic, tr)

    def _extra_op(
        self,
        prefix: Any,
        query: Any,
        flt: Any,
        limit: Any,
        offset: Any,
        refresh: Any,
        time_range: Any,
    ) -> tuple[SearchOp, tuple[float | None, float | None] | None]:
        tr = None
        if time_range is not None:
            if not isinstance(time_range, (tuple, list)) or len(time_range) != 2:
                raise InvalidQueryError(
                    "time_range must be a (start, end) pair; use None for open ends"
                )
            try:
                tr = (_as_epoch(time_range[0]), _as_epoch(time_range[1]))
            except (TypeError, ValueError) as exc:
                raise InvalidQueryError(
                    f"time_range bounds must be datetimes, epoch seconds or ISO strings: {exc}"
                ) from None
            if tr[0] is not None and tr[1] is not None and tr[0] > tr[1]:
                raise InvalidQueryError("time_range start is after its end")
        refresh_v = (
            refresh
            if refresh is not None
            else bool((self.ttl_config or {}).get("refresh_on_read", True))
        )
        op = SearchOp(tuple(prefix), flt, limit, offset, query, refresh_v)
        return op, tr

    def _run_extra(
        self, op: SearchOp, q_vecs: dict[str, np.ndarray], topic: str | None, tr: Any
    ) -> list[Any]:
        self._ensure_open()
        now = time.time()
        with self._db.lock:
            with self._db.read() as conn:
                if self._vec is not None:
                    self._vec.sync(conn)
                ns_ids = self._ns_ids(conn, op.namespace_prefix)
                if not ns_ids or op.limit == 0:
                    return []
                if op.query:
                    qv = q_vecs.get(op.query[: self.config.max_query_chars])
                    hits = self._ranked(
                        conn,
                        ns_ids,
                        op.query,
                        qv,
                        op.filter,
                        op.limit,
                        op.offset,
                        now,
                        current_topic=topic,
                        time_range=tr,
                    )
                else:
                    rows = [
                        r
                        for r in self._scan(conn, ns_ids, op.filter, now, None)
                        if self._in_range(r, tr)
                    ]
                    hits = [
                        self._row_item(r, MemorySearchItem)
                        for r in rows[op.offset : op.offset + op.limit]
                    ]
            if op.refresh_ttl and any(h._rowid is not None for h in hits):
                with self._db.write() as conn:
                    self._refresh_ttl(conn, [h._rowid for h in hits if h._rowid is not None], now)
        return hits

    def mark_used(
        self, namespace: tuple[str, ...], keys: Iterable[str], *, now: datetime | None = None
    ) -> int:
        """Record that these memories were used (injected into a model's context).

        Sets `last_accessed` and adds exactly 1 to `access_count` per call and key; searching
        alone never counts. Returns how many items were updated.
        """
        self._ensure_open()
        keys = list(dict.fromkeys(keys))
        if any(not isinstance(k, str) for k in keys):
            raise ValidationError("keys must be strings")
        ts = _as_epoch(now) if now is not None else time.time()
        with self._db.write() as conn:
            row = conn.execute(
                "SELECT id FROM namespaces WHERE ns=?", (_ns_str(namespace),)
            ).fetchone()
            if row is None:
                return 0
            n = 0
            for k in keys:
                n += conn.execute(
                    "UPDATE items SET access_count = access_count + 1, last_accessed=? "
                    "WHERE ns_id=? AND key=?",
                    (ts, row[0], k),
                ).rowcount
        return n

    async def amark_used(
        self, namespace: tuple[str, ...], keys: Iterable[str], *, now: datetime | None = None
    ) -> int:
        """Async twin of `mark_used`."""
        return await asyncio.to_thread(self.mark_used, namespace, list(keys), now=now)

    # ---------------------------------------------------------------- TTL
    def sweep_ttl(self) -> int:
        """Delete expired items from every index; returns how many were removed."""
        self._ensure_open()
        now = time.time()
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT n.ns, i.key FROM items i JOIN namespaces n ON n.id=i.ns_id "
                "WHERE i.expires_at IS NOT NULL AND i.expires_at < ?",
                (now,),
            ).fetchall()
        if rows:
            self.batch([PutOp(tuple(ns.split(_SEP)), key, None) for ns, key in rows])
        return len(rows)

    async def asweep_ttl(self) -> int:
        return await asyncio.to_thread(self.sweep_ttl)

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> None:
        """Start a daemon thread that sweeps expired items periodically."""
        if self._sweeper is not None:
            return
        interval = (
            sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes") or 5
        )
        self._sweeper_stop.clear()

        def loop() -> None:
            while not self._sweeper_stop.wait(float(interval) * 60):
                try:
                    self.sweep_ttl()
                except Exception as exc:  # keep sweeping; report
                    logger.warning("TTL sweep failed: %s", exc)

        self._sweeper = threading.Thread(target=loop, name="langmem-ttl-sweeper", daemon=True)
        self._sweeper.start()

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        if self._sweeper is None:
            return True
        self._sweeper_stop.set()
        self._sweeper.join(timeout)
        alive = self._sweeper.is_alive()
        self._sweeper = None
        return not alive

    # ---------------------------------------------------------------- maintenance
    def reindex(self, *, vectors: bool = True) -> dict[str, int]:
        """Rebuild the keyword index (and re-embed vectors) for every item from SQLite."""
        self._ensure_open()
        with self._db.read() as conn:
            rows = conn.execute("SELECT id, ns_id, value FROM items ORDER BY id").fetchall()
        texts = {rid: self._texts(json.loads(v), None) for rid, _ns, v in rows}
        vecs: dict[int, np.ndarray] = {}
        if vectors and self.embeddings is not None:
            flat = [(rid, path, t) for rid, ts in texts.items() for path, t in ts]
            for i in range(0, len(flat), 256):
                chunk = flat[i : i + 256]
                arr = np.asarray(self.embeddings.embed_documents([c[2] for c in chunk]), np.float32)
                for (rid, _path, _t), v in zip(chunk, arr, strict=True):
                    vecs.setdefault(rid, np.empty((0, self.dims), np.float32))
                    vecs[rid] = np.vstack([vecs[rid], v[None, :]])
        with self._db.write() as conn:
            conn.execute("DELETE FROM postings")
            conn.execute("DELETE FROM terms")
            conn.execute("UPDATE namespaces SET n_docs=0, total_len=0")
            docs = []
            for rid, ns_id, _v in rows:
                toks = tokenize("\n".join(t for _, t in texts[rid]))
                conn.execute("UPDATE items SET doc_len=? WHERE id=?", (len(toks), rid))
                if toks:
                    docs.append((ns_id, rid, toks))
            self._kw.add_many(conn, docs)
            if vectors and self.embeddings is not None:
                conn.execute("DELETE FROM vectors")
                conn.execute("DELETE FROM vec_log")
                for rid, ns_id, _v in rows:
                    for (path, _t), v in zip(texts[rid], vecs.get(rid, []), strict=False):
                        conn.execute(
                            "INSERT INTO vectors(item_id, ns_id, path, vec) VALUES (?,?,?,?)",
                            (rid, ns_id, path, encode_vec(v)),
                        )
                self._db.set_meta(conn, "embedding_model", self.model_name)
                self._db.set_meta(conn, "embedding_dims", str(self.dims))
        if self._vec is not None:
            with self._db.read() as conn:
                self._vec.rebuild(conn)
        return {"items": len(rows), "vectors": sum(len(v) for v in vecs.values())}

    def stats(self) -> dict[str, Any]:
        """Counts and sizes: items, namespaces, vectors, postings, database bytes."""
        self._ensure_open()
        with self._db.read() as conn:
            items = conn.execute("SELECT COUNT(*) FROM items").fetchone()[0]
            nss = conn.execute(
                "SELECT COUNT(*) FROM namespaces n WHERE EXISTS (SELECT 1 FROM items i WHERE i.ns_id=n.id)"
            ).fetchone()[0]
            vecs = conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
            posts = conn.execute("SELECT COUNT(*) FROM postings").fetchone()[0]
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            psize = conn.execute("PRAGMA page_size").fetchone()[0]
        return {
            "items": items,
            "namespaces": nss,
            "vectors": vecs,
            "postings": posts,
            "db_bytes": pages * psize,
            "embedding_model": self.model_name or None,
            "faiss_vectors": self._vec.count() if self._vec else 0,
        }

    @property
    def conversations(self) -> ConversationLog:
        """Turns, summaries, profiles and symbols stored in the same SQLite file."""
        self._ensure_open()
        if self._conversations is None:
            self._conversations = ConversationLog(self._db)
        return self._conversations

    @property
    def db(self) -> Database:
        """The underlying SQLite database (shared by the conversation log)."""
        return self._db


def _ns_match(cond: MatchCondition, ns: tuple[str, ...]) -> bool:
    path = cond.path
    if len(ns) < len(path):
        return False
    pairs = (
        zip(ns, path, strict=False)
        if cond.match_type == "prefix"
        else zip(reversed(ns), reversed(path), strict=False)
    )
    if cond.match_type not in ("prefix", "suffix"):
        raise InvalidQueryError(f"unsupported match type: {cond.match_type}")
    return all(p == "*" or k == p for k, p in pairs)
