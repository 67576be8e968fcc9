"""HybridStore: a LangGraph `BaseStore` over SQLite with BM25 (jieba) + FAISS hybrid search.

SQLite is the truth (items, keyword postings, int8 vectors); the FAISS indexes are derived
and rebuilt or synced from it. `batch` plans the ops once (pure), embeds, then does the I/O;
`abatch` differs in awaiting the embeddings and running the I/O in a worker thread, and in
coalescing concurrent calls into one batch (`batching.py`), as LangGraph's async stores do.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    NamespacePath,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchOp,
    TTLConfig,
    ensure_embeddings,
)
from typing_extensions import Self

from langmem_plus.clock import Clock, check_clock
from langmem_plus.config import MemoryConfig
from langmem_plus.embeddings import USEEmbeddings, default_embeddings, embedding_model_name
from langmem_plus.embeddings import background_cosine as model_background
from langmem_plus.errors import (
    EmbeddingModelMismatchError,
    StoreClosedError,
    UnsupportedBackendError,
    ValidationError,
)
from langmem_plus.store import batching, conventions, validate
from langmem_plus.store.db.database import Database
from langmem_plus.store.plan import DocumentVectors, MemorySearchOp, Plan, PutPlan, merge_plans
from langmem_plus.store.ranking.common_terms import TermVectors
from langmem_plus.store.ranking.judgement import Judgement, judgement_for
from langmem_plus.store.ranking.ranker import Ranker, RankQuery
from langmem_plus.store.seams import (
    CURRENT,
    CandidateRow,
    MemorySearchItem,
    RowFilter,
    StorageBackend,
    TextChanged,
    TimeRange,
    Validity,
    as_epoch,
    ns_key,
    passes,
    storage_target,
    to_item,
)
from langmem_plus.store.sqlite.conversations import SQLiteConversationLog
from langmem_plus.store.sqlite.maintenance import TTLSweeper
from langmem_plus.store.sqlite.storage import SqliteStorage
from langmem_plus.store.texts import field_paths, value_texts
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.text.transcript import text_to_embed
from langmem_plus.threads import blas_limit

if TYPE_CHECKING:
    from langmem_plus.store.milvus.log import MilvusConversationLog

__all__ = ["HybridStore", "MemorySearchItem"]

logger = logging.getLogger(__name__)


class HybridStore(BaseStore):
    """LangGraph `BaseStore` with hybrid BM25 + FAISS search under the spec's weighted score.

    `HybridStore()` works at once in memory with the offline default embeddings;
    `HybridStore("memories.db")` persists to SQLite (a large store's FAISS snapshot sits
    beside it as `memories.db.faiss`). `index=` takes LangGraph's `IndexConfig` (`dims`,
    `embed`, `fields`, or SqliteStore's `text_fields`; other keys are refused; default fields:
    `["text"]`, falling back to every string in the value, where LangGraph's default is
    `["$"]`); `index=False` turns vectors off (keyword search only). A database on read-only
    media opens read-only (`read_only=True` forces it): reads work, writes raise
    `ReadOnlyStoreError`. LangGraph's conventions hold too: `from_conn_string(...)` as a
    context manager (`with` and `async with`), `setup()`, and TTL methods that can be awaited.
    `clock=` (epoch seconds, default `time.time`) is the time TTL, recency and the sweep see.
    `tuning=` replaces the store's fitted constants (`store.tuning.StoreTuning`; benchmarks
    and experiments, not a setting).
    """

    supports_ttl: bool = True
    embeddings: Embeddings | None
    index_config: dict[str, Any] | None

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        index: IndexConfig | Literal[False] | None = None,
        config: MemoryConfig | None = None,
        ttl: TTLConfig | None = None,
        read_only: bool | None = None,
        clock: Clock | None = None,
        tuning: StoreTuning | None = None,
    ) -> None:
        index = conventions.index_config(index)
        validate.check_init(path, index, config, ttl, read_only)
        if tuning is not None and not isinstance(tuning, StoreTuning):
            raise ValidationError(f"tuning must be a StoreTuning, got {type(tuning).__name__}")
        self.config = config or MemoryConfig()
        self.tuning = tuning or StoreTuning()  # internal constants (store/tuning.py)
        self.clock: Clock = check_clock(clock)  # epoch seconds: TTL, recency, sweep
        self.uri = storage_target(path)  # a Milvus store's URI; None for SQLite
        self.path = None if path is None or (self.uri and "://" in self.uri) else Path(path)
        self.ttl_config = ttl
        self._closed = False
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
        self._tok_fields = field_paths(fields)
        self.dims = dims
        self._storage = self._open_storage(read_only)
        self._ranker = Ranker(
            self.config,
            self.tuning,
            self._storage.search,
            self._keyword_text,
            self._omit_expired,
        )
        self._ranker.vector_background = model_background(
            self.embeddings, self.config.store.vector_background
        )
        if self.embeddings is not None:  # common words' directions (store/ranking/common_terms.py)
            self._ranker.term_vectors = TermVectors(self.embeddings)
        if self.embeddings is not None and self.config.store.relevance_judgement:
            self._ranker.judgement = judgement_for(self.embeddings)
        self._conversations: SQLiteConversationLog | MilvusConversationLog | None = None
        self._coalescer = batching.Coalescer(self._abatch_groups)
        self._sweeper = TTLSweeper(self.sweep_ttl)
        self._sweeper_future: conventions.SweeperFuture | None = None
        if ttl and ttl.get("sweep_interval_minutes"):
            self.start_ttl_sweeper()

    # ================================================================ lifecycle
    def _open_storage(self, read_only: bool | None) -> StorageBackend:
        """The storage `path` names: a Milvus URI or `*.milvus.db` file (the `milvus` extra),
        else SQLite (a file, or memory for None). SQLite's parts stay reachable as attributes
        (`_db`, `_kw`, `_vec`, `_rowcache`, `_backend`, `_maint`) for tools and tests."""
        texts = lambda value: self._texts(value, None)  # noqa: E731
        if self.uri is not None:
            from langmem_plus.store.milvus.storage import MilvusStorage  # optional extra

            return MilvusStorage(
                self.uri,
                read_only=bool(read_only),
                config=self.config,
                tuning=self.tuning,
                embeddings=self.embeddings,
                model_name=self.model_name,
                dims=self.dims,
                texts=texts,
            )
        sq = SqliteStorage(
            self.path,
            read_only=read_only,
            config=self.config,
            tuning=self.tuning,
            embeddings=self.embeddings,
            model_name=self.model_name,
            dims=self.dims,
            texts=texts,
        )
        self._db, self._kw, self._vec = sq.db, sq.kw, sq.vec
        self._rowcache, self._backend, self._maint = sq.rowcache, sq.search, sq.maint
        return sq

    @classmethod
    def reembed(
        cls,
        path: str | Path,
        *,
        index: IndexConfig | None = None,
        config: MemoryConfig | None = None,
        tuning: StoreTuning | None = None,
    ) -> HybridStore:
        """Open `path` with new embeddings, replacing every stored vector (model change)."""
        if storage_target(path) is not None:
            raise ValidationError("reembed works on a SQLite file; a Milvus store: reindex()")
        SqliteStorage.drop_vectors(Path(path))
        store = cls(path, index=index, config=config, tuning=tuning)
        store.reindex()
        return store

    def close(self) -> None:
        """Stop the TTL sweeper, snapshot the vector index, close the storage. Idempotent."""
        if self._closed:
            return
        self.stop_ttl_sweeper()
        try:
            self._storage.close()
        finally:
            self._closed = True

    async def aclose(self) -> None:
        """Async `close` (the vector snapshot is written in a worker thread). Idempotent."""
        await asyncio.to_thread(self.close)

    @classmethod
    def from_conn_string(
        cls,
        conn_string: str | Path,
        *,
        index: IndexConfig | Literal[False] | None = None,
        config: MemoryConfig | None = None,
        ttl: TTLConfig | None = None,
        read_only: bool | None = None,
    ) -> conventions.StoreOpener[HybridStore]:
        """LangGraph's spelling: `with HybridStore.from_conn_string("m.db") as store:` (or
        `async with`); `":memory:"` is an in-memory store. The store closes on exit."""
        path = conventions.store_path(conn_string)
        validate.check_init(path, conventions.index_config(index), config, ttl, read_only)
        return conventions.StoreOpener[HybridStore](
            cls, path, index=index, config=config, ttl=ttl, read_only=read_only
        )

    def setup(self) -> conventions.SetupDone:
        """Nothing left to do: migrations run when the store opens. Kept, idempotent and
        awaitable (`await store.setup()`), so code written for LangGraph's stores runs."""
        self._ensure_open()
        return conventions.SetupDone()

    def _ensure_open(self) -> None:
        if self._closed:
            raise StoreClosedError("this HybridStore is closed; open a new one")

    # ================================================================ text
    def _texts(
        self, value: Mapping[str, Any], index: Literal[False] | list[str] | None
    ) -> list[tuple[str, str]]:
        return value_texts(value, self._tok_fields, index)

    # ================================================================ planning
    def _plan(self, ops: Iterable[Op]) -> Plan:
        self._ensure_open()
        max_chars = self.config.store.max_item_chars
        ops = validate.check_ops(ops, max_chars * validate.MAX_VALUE_FACTOR)  # raises first
        puts: dict[tuple[tuple[str, ...], str], PutPlan] = {}
        queries: list[str] = []
        for op in ops:
            if isinstance(op, PutOp):
                if op.value is not None:
                    texts = self._texts(op.value, op.index)
                    validate.check_put_size(
                        op.key, op.value, sum(len(t) for _, t in texts), max_chars
                    )
                    plan = PutPlan(op=op, keyword_text="\n".join(t for _, t in texts))
                    if self.embeddings is not None:
                        plan.texts = texts
                    puts[(tuple(op.namespace), op.key)] = plan
                else:
                    puts[(tuple(op.namespace), op.key)] = PutPlan(op=op)
            elif isinstance(op, SearchOp) and op.query and self.embeddings is not None:
                if isinstance(op, MemorySearchOp) and op.query_vector is not None:
                    continue  # the caller gave the dense side's vector
                queries.append(op.query[: self.config.recall.max_query_chars])
        return Plan(ops=ops, puts=puts, queries=list(dict.fromkeys(queries)))

    def _embed_inputs(self, plan: Plan) -> list[str]:
        return [
            t
            for p in plan.puts.values()
            if not p.unembedded and p.vectors is None
            for _, t in p.texts
        ]

    @staticmethod
    def _with_given(plan: Plan, embedded: np.ndarray | None) -> np.ndarray | None:
        """The puts' vectors in the writer's order: those embedded now and those the caller
        gave (`write_with(vectors=...)`), one row per text of each embedded put."""
        given = [p for p in plan.puts.values() if p.vectors is not None and not p.unembedded]
        if not given:
            return embedded
        rows: list[np.ndarray] = []
        at = 0
        for p in plan.puts.values():
            if p.unembedded or not p.texts:
                continue
            if p.vectors is not None:
                rows.append(p.vectors)
            else:
                assert embedded is not None
                rows.append(embedded[at : at + len(p.texts)])
                at += len(p.texts)
        return np.concatenate(rows).astype(np.float32, copy=False) if rows else None

    def _given_vectors(self, vecs: Any, rows: int | None = None) -> np.ndarray:
        """A caller's vectors as float32 rows of this index's width; else `ValidationError`."""
        try:
            arr = np.asarray(vecs, dtype=np.float32)
        except (TypeError, ValueError):
            raise ValidationError("vectors must be numbers") from None
        arr = arr.reshape(1, -1) if arr.ndim == 1 else arr
        if arr.ndim != 2 or arr.shape[1] != self.dims or (rows is not None and len(arr) != rows):
            raise ValidationError(
                f"vectors must be {rows or 1} row(s) of {self.dims} numbers, got {arr.shape}"
            )
        if not np.isfinite(arr).all():
            raise ValidationError("vectors must be finite")
        return arr

    def document_vectors(self, values: Sequence[Mapping[str, Any]]) -> list[DocumentVectors | None]:
        """The vectors puts of `values` would store, in one embedding call (per value: one
        row per indexed text, embedded as documents; None without embeddings or text): a
        caller that searches with them (`search(query_vector=...)`) and then writes the values
        passes them back to `write_with(vectors=...)`, so that each text is embedded once."""
        self._ensure_open()
        if isinstance(values, Mapping) or not all(isinstance(v, Mapping) for v in values):
            raise ValidationError("document_vectors takes a list of item values (dicts)")
        texts = [tuple(t for _, t in self._texts(v, None)) for v in values]
        flat = [t for ts in texts for t in ts]
        if self.embeddings is None or not flat:
            return [None] * len(texts)
        rows = self._given_vectors(self.embeddings.embed_documents(flat), len(flat))
        out: list[DocumentVectors | None] = []
        start = 0
        for ts in texts:
            out.append(DocumentVectors(ts, rows[start : start + len(ts)]) if ts else None)
            start += len(ts)
        return out

    # ================================================================ batch
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ops in order: reads see the store as it was before this batch's writes."""
        plan = self._plan(ops)
        doc_vecs, q_vecs = self._embed_sync(plan)
        return self._execute(plan, doc_vecs, q_vecs)

    def write_with(
        self,
        ops: Iterable[PutOp],
        then: Callable[[], object],
        *,
        same_text: Collection[tuple[tuple[str, ...], str]] = (),
        vectors: Mapping[tuple[tuple[str, ...], str], DocumentVectors] | None = None,
    ) -> None:
        """Puts (as `batch`) and then `then()` in the same write transaction: one commit for
        the items and what the caller writes beside them in this store's conversation log
        (`conversations`; on SQLite its writes join the open transaction, elsewhere `then`
        runs after the puts). The embedding is done before the transaction starts. `then`
        writes; it does not read through the store (its caches follow committed writes).

        `same_text`: the (namespace, key) of puts that the caller read from the store and
        whose indexed text it left as it was (an earlier record given a link or closed):
        SQLite keeps their vectors without embedding the text again; should a stored text
        differ after all, the batch is embedded in full and written again.

        `vectors`: `document_vectors` the caller already holds for puts, by (namespace, key):
        stored as given, not embedded again, where the put indexes the same texts (a put
        whose texts differ is embedded as usual)."""
        ops = list(ops)
        if not all(isinstance(op, PutOp) for op in ops):
            raise ValidationError("write_with takes PutOps only")
        plan = self._plan(ops)
        if isinstance(self._storage, SqliteStorage):
            for key in set(same_text) & plan.puts.keys():
                plan.puts[key].unembedded = plan.puts[key].op.value is not None
        for key, given in (vectors or {}).items():
            put = plan.puts.get(key)
            if put is not None and given.texts == tuple(t for _, t in put.texts):
                put.vectors = self._given_vectors(given.vectors, len(given.texts))
        doc_vecs, q_vecs = self._embed_sync(plan)
        try:
            with blas_limit(1):
                self._execute_batch(plan, doc_vecs, q_vecs, then)
        except TextChanged:  # rolled back: embed every text and write again
            for p in plan.puts.values():
                p.unembedded = False
                p.vectors = None
            doc_vecs, q_vecs = self._embed_sync(plan)
            with blas_limit(1):
                self._execute_batch(plan, doc_vecs, q_vecs, then)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async `batch`: embeddings awaited, SQLite work in a worker thread (loop never blocks).

        Concurrent calls on one event loop (`aget`, `asearch`, `aput`, ... all come here) are
        coalesced: they share one embedding call and one transaction, in call order.
        """
        self._ensure_open()
        ops = validate.check_ops(ops, self.config.store.max_item_chars * validate.MAX_VALUE_FACTOR)
        if not ops:
            return []
        return await self._coalescer.submit(ops)

    async def _abatch_groups(self, groups: list[list[Op]]) -> list[batching.GroupOutcome]:
        """Run several callers' op lists as one batch; one outcome per caller."""
        outcomes: list[batching.GroupOutcome] = [[] for _ in groups]
        plans: list[tuple[int, Plan]] = []
        for i, ops in enumerate(groups):
            try:
                plans.append((i, self._plan(ops)))
            except Exception as exc:  # this caller's bad input fails only this caller
                outcomes[i] = exc
        if not plans:
            return outcomes
        merged = merge_plans([p for _, p in plans])
        try:
            doc_vecs, q_vecs = await self._embed_async(merged)
            results = await asyncio.to_thread(self._execute, merged, doc_vecs, q_vecs)
        except Exception:
            if len(plans) == 1:
                raise
            # e.g. a write to a read-only store: run each caller alone so reads still succeed
            for i, plan in plans:
                try:
                    doc_vecs, q_vecs = await self._embed_async(plan)
                    outcomes[i] = await asyncio.to_thread(self._execute, plan, doc_vecs, q_vecs)
                except Exception as exc:
                    outcomes[i] = exc
            return outcomes
        start = 0
        for i, plan in plans:
            outcomes[i] = results[start : start + len(plan.ops)]
            start += len(plan.ops)
        return outcomes

    def _embed_sync(self, plan: Plan) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
        if self.embeddings is None:
            return None, {}
        docs = self._embed_inputs(plan)
        doc_vecs = self._with_given(
            plan,
            np.asarray(self.embeddings.embed_documents(docs), dtype=np.float32) if docs else None,
        )
        q_vecs = {
            q: np.asarray(self.embeddings.embed_query(text_to_embed(q)), np.float32)
            for q in plan.queries
        }
        return doc_vecs, q_vecs

    async def _embed_async(self, plan: Plan) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
        if self.embeddings is None:
            return None, {}
        docs = self._embed_inputs(plan)
        if isinstance(self.embeddings, USEEmbeddings) and len(docs) + len(plan.queries) > 1:
            # USE embeds a query exactly as a document: one model call for the whole batch
            both = await self.embeddings.aembed_documents(
                docs + list(map(text_to_embed, plan.queries))
            )
            arr = np.asarray(both, dtype=np.float32).reshape(len(both), -1)
            return (arr[: len(docs)] if docs else None), dict(
                zip(plan.queries, arr[len(docs) :], strict=True)
            )
        doc_vecs = (
            np.asarray(await self.embeddings.aembed_documents(docs), dtype=np.float32)
            if docs
            else None
        )
        q_list = await asyncio.gather(
            *(self.embeddings.aembed_query(text_to_embed(q)) for q in plan.queries)
        )
        q_vecs = {q: np.asarray(v, np.float32) for q, v in zip(plan.queries, q_list, strict=True)}
        return doc_vecs, q_vecs

    def _execute(
        self, plan: Plan, doc_vecs: np.ndarray | None, q_vecs: dict[str, np.ndarray]
    ) -> list[Result]:
        # a batch's NumPy work (cosines over candidates) is too small for a second BLAS
        # thread, which on a busy host costs more than it saves (docs/results/busy_host.md)
        with blas_limit(1):
            return self._execute_batch(plan, doc_vecs, q_vecs)

    def _execute_batch(
        self,
        plan: Plan,
        doc_vecs: np.ndarray | None,
        q_vecs: dict[str, np.ndarray],
        then: Callable[[], object] | None = None,
    ) -> list[Result]:
        self._ensure_open()
        if doc_vecs is not None and doc_vecs.shape[1] != self.dims:
            raise EmbeddingModelMismatchError(
                f"embeddings returned {doc_vecs.shape[1]}-d vectors, the index expects {self.dims}"
            )
        results: list[Result] = [None] * len(plan.ops)
        now = self.clock()
        refresh: list[int] = []
        io = self._storage
        with io.batch_lock():
            if any(not isinstance(op, PutOp) for op in plan.ops):
                with io.read() as conn:
                    io.before_reads(conn)
                    for i, op in enumerate(plan.ops):
                        if isinstance(op, GetOp):
                            got = self._get(conn, op, now)
                            results[i] = None if got is None else got[0]
                            if got is not None and op.refresh_ttl and got[1] >= 0:
                                refresh.append(got[1])
                        elif isinstance(op, SearchOp):
                            qvec = getattr(op, "query_vector", None)
                            if qvec is None:
                                qvec = q_vecs.get(
                                    (op.query or "")[: self.config.recall.max_query_chars]
                                )
                            hits = self._search(conn, op, qvec, now)
                            results[i] = hits
                            if op.refresh_ttl:
                                refresh.extend(h._rowid for h in hits if h._rowid is not None)
                        elif isinstance(op, ListNamespacesOp):
                            results[i] = self._list_namespaces(conn, op, now)
            if plan.puts or refresh or then is not None:
                with io.write() as conn:
                    if refresh:
                        io.refresh_ttl(conn, refresh, now)
                    if plan.puts:
                        io.apply_puts(conn, plan.puts, doc_vecs, now)
                    if then is not None:
                        then()
                if plan.puts:
                    io.after_puts()
        return results

    # ================================================================ reads
    def _omit_expired(self) -> bool:
        return bool(self.ttl_config and self.ttl_config.get("omit_expired"))

    def _keyword_text(self, value: Mapping[str, Any]) -> str:
        """The text an item value is indexed under (what keyword search matches)."""
        return "\n".join(t for _, t in self._texts(value, None))

    def _get(self, conn: Any, op: GetOp, now: float) -> tuple[Item, int] | None:
        row = self._storage.search.read_item(conn, op.namespace, op.key)
        if row is None or (self._omit_expired() and row.expired(now)):
            return None
        return to_item(row, Item), (row.id if row.ttl_minutes is not None else -1)

    def _ns_ids(self, conn: Any, prefix: Sequence[str]) -> list[int]:
        return self._storage.search.namespace_ids(conn, prefix)

    def _scan(
        self,
        conn: Any,
        ns_ids: Sequence[int],
        flt: Mapping[str, Any] | None,
        now: float,
        stop: int | None,
        time_range: TimeRange | None = None,
        validity: Validity = CURRENT,
    ) -> list[CandidateRow]:
        """Rows of the namespaces in insertion order that pass validity, the filter, expiry
        and the time range (up to `stop`)."""
        omit, rows_filter = self._omit_expired(), RowFilter(flt) if flt else None
        return self._storage.search.scan(
            conn,
            ns_ids,
            lambda r: passes(r, now, omit, rows_filter, time_range, validity),
            stop,
            flt,
        )

    def _search(self, conn: Any, op: SearchOp, qvec: np.ndarray | None, now: float) -> list[Any]:
        ns_ids = self._ns_ids(conn, op.namespace_prefix)
        if not ns_ids or op.limit == 0:
            return []
        topic, tr, validity = None, None, CURRENT
        if isinstance(op, MemorySearchOp):
            topic, tr, validity = op.current_topic, op.time_range, op.validity
        if not op.query:
            stop = op.offset + op.limit
            rows = self._scan(conn, ns_ids, op.filter, now, stop, tr, validity)
            return [to_item(r, MemorySearchItem) for r in rows[op.offset : op.offset + op.limit]]
        rq = RankQuery(
            ns_ids, op.query, qvec, op.filter, op.limit, op.offset, now, topic, tr, validity
        )
        return self._ranker.rank(conn, rq)

    def _list_namespaces(
        self, conn: Any, op: ListNamespacesOp, now: float
    ) -> list[tuple[str, ...]]:
        found = self._storage.search.list_namespaces(
            conn, now if self._omit_expired() else None, op.match_conditions, op.max_depth
        )
        return found[op.offset : op.offset + op.limit]

    @property
    def conversations(self) -> SQLiteConversationLog | MilvusConversationLog:
        """Turns, summaries, profiles and symbols stored beside the items (the same SQLite
        file, or the `<name>_log` collection of a Milvus store)."""
        self._ensure_open()
        if self._conversations is None:
            self._conversations = self._storage.conversation_log(self.clock)
        return self._conversations

    @property
    def db(self) -> Database:
        """The underlying SQLite database (shared by the conversation log and API keys)."""
        if not isinstance(self._storage, SqliteStorage):
            raise UnsupportedBackendError(
                f"{self.uri} is a Milvus store: it has no SQLite database (keep API keys in a "
                "SQLite file of their own: KeyStore.open(path))"
            )
        return self._storage.db

    @property
    def relevance_judgement(self) -> Judgement | None:
        """The judgement that scales each query's relevance (store/ranking/judgement.py): the one
        fitted for this store's embeddings, None when there is none or it is switched off."""
        return self._ranker.judgement

    # ================================================================ BaseStore, checked

    @staticmethod
    def _item_args(namespace: Any, key: Any, refresh_ttl: Any = None) -> None:
        validate.check_namespace(namespace)
        validate.check_key(key)
        validate.check_refresh(refresh_ttl)

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """Retrieve one item (arguments checked first)."""
        self._item_args(namespace, key, refresh_ttl)
        return super().get(namespace, key, refresh_ttl=refresh_ttl)

    async def aget(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """Async twin of `get`."""
        self._item_args(namespace, key, refresh_ttl)
        return await super().aget(namespace, key, refresh_ttl=refresh_ttl)

    def _put_args(self, namespace: Any, key: Any, value: Any, ttl: Any) -> None:
        validate.check_namespace(namespace)
        validate.check_key(key)
        if not isinstance(value, Mapping):
            raise ValidationError(
                f"value must be a dict, got {type(value).__name__} (use delete() to delete)"
            )
        validate.check_ttl(ttl)

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """Store or update an item (arguments checked first)."""
        self._put_args(namespace, key, value, ttl)
        super().put(namespace, key, value, index, ttl=ttl)

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """Async twin of `put`."""
        self._put_args(namespace, key, value, ttl)
        await super().aput(namespace, key, value, index, ttl=ttl)

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Delete an item (arguments checked first)."""
        self._item_args(namespace, key)
        super().delete(namespace, key)

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        """Async twin of `delete`."""
        self._item_args(namespace, key)
        await super().adelete(namespace, key)

    @staticmethod
    def _search_args(namespace_prefix: Any, refresh_ttl: Any) -> None:
        validate.check_namespace(namespace_prefix, what="namespace_prefix")
        validate.check_refresh(refresh_ttl)

    @staticmethod
    def _list_args(prefix: Any, suffix: Any) -> None:
        if prefix is not None:
            validate.check_namespace(prefix, what="prefix")
        if suffix is not None:
            validate.check_namespace(suffix, what="suffix")

    def list_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """List namespaces (arguments checked first; limit and offset in `batch`)."""
        self._list_args(prefix, suffix)
        return super().list_namespaces(
            prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset
        )

    async def alist_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """Async twin of `list_namespaces`."""
        self._list_args(prefix, suffix)
        return await super().alist_namespaces(
            prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset
        )

    # ================================================================ with / async with
    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ================================================================ search extras
    def _search_op(
        self,
        namespace_prefix: tuple[str, ...],
        query: str | None,
        filter: dict[str, Any] | None,
        limit: int,
        offset: int,
        refresh_ttl: bool | None,
        current_topic: str | None,
        time_range: Any,
        include_superseded: bool = False,
        as_of: Any = None,
        query_vector: Any = None,
    ) -> MemorySearchOp:
        """The op of `search` with extras (validated; bad input raises before any I/O)."""
        validate.check_namespace(namespace_prefix, what="namespace_prefix")
        validate.check_search_extras(current_topic, time_range)
        refresh = (
            refresh_ttl
            if refresh_ttl is not None
            else bool((self.ttl_config or {}).get("refresh_on_read", True))
        )
        return MemorySearchOp(
            tuple(namespace_prefix),
            filter,
            limit,
            offset,
            query,
            refresh,
            current_topic=current_topic,
            time_range=time_range,
            include_superseded=include_superseded,
            as_of=as_of,
            query_vector=None if query_vector is None else self._given_vectors(query_vector)[0],
        )

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
        include_superseded: bool = False,
        as_of: datetime | float | str | None = None,
        query_vector: Sequence[float] | np.ndarray | None = None,
    ) -> list[MemorySearchItem]:
        """BaseStore.search plus `current_topic` (x1.3 boost), `time_range` (when items were
        said) and the versions shown.

        Advanced: `query_vector` (one vector of this index's width) is the dense side's query
        when the caller already holds one, e.g. `document_vectors` of a record it is about to
        write; `query` is then not embedded and still drives the keyword side.

        Every search shows the current versions of langmem_plus records: a fact that a later
        statement superseded (`valid_to`) is left out, and an episode whose facts were all
        superseded or that a later turn corrected ranks lower (`components["superseded"]`).
        `include_superseded=True` shows the superseded facts too (ranked lower); `as_of` (a
        datetime, epoch seconds or ISO string) shows what was known and true at that time.
        """
        if (
            current_topic is None
            and time_range is None
            and not include_superseded
            and as_of is None
            and query_vector is None
        ):
            self._search_args(namespace_prefix, refresh_ttl)
            return super().search(  # type: ignore[return-value]
                namespace_prefix,
                query=query,
                filter=filter,
                limit=limit,
                offset=offset,
                refresh_ttl=refresh_ttl,
            )
        op = self._search_op(
            namespace_prefix,
            query,
            filter,
            limit,
            offset,
            refresh_ttl,
            current_topic,
            time_range,
            include_superseded,
            as_of,
            query_vector,
        )
        return self.batch([op])[0]  # type: ignore[return-value]

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
        include_superseded: bool = False,
        as_of: datetime | float | str | None = None,
        query_vector: Sequence[float] | np.ndarray | None = None,
    ) -> list[MemorySearchItem]:
        """Async twin of `search` (same extras)."""
        if (
            current_topic is None
            and time_range is None
            and not include_superseded
            and as_of is None
            and query_vector is None
        ):
            self._search_args(namespace_prefix, refresh_ttl)
            return await super().asearch(  # type: ignore[return-value]
                namespace_prefix,
                query=query,
                filter=filter,
                limit=limit,
                offset=offset,
                refresh_ttl=refresh_ttl,
            )
        op = self._search_op(
            namespace_prefix,
            query,
            filter,
            limit,
            offset,
            refresh_ttl,
            current_topic,
            time_range,
            include_superseded,
            as_of,
            query_vector,
        )
        return (await self.abatch([op]))[0]  # type: ignore[return-value]

    def mark_used(
        self, namespace: tuple[str, ...], keys: Iterable[str], *, now: datetime | None = None
    ) -> int:
        """Record that these memories were used (injected into a model's context).

        Sets `last_accessed` and adds exactly 1 to `access_count` per call and key; searching
        alone never counts. Returns how many items were updated.
        """
        self._ensure_open()
        validate.check_namespace(namespace)
        if isinstance(keys, (str, bytes)) or not isinstance(keys, Iterable):
            raise ValidationError("keys must be a list of strings")
        keys = [validate.check_key(k) for k in dict.fromkeys(keys)]
        if now is not None and not isinstance(now, datetime):
            raise ValidationError(f"now must be a datetime, got {type(now).__name__}")
        ts = as_epoch(now) if now is not None else self.clock()
        return self._storage.mark_used(tuple(namespace), keys, ts)

    async def amark_used(
        self, namespace: tuple[str, ...], keys: Iterable[str], *, now: datetime | None = None
    ) -> int:
        """Async twin of `mark_used`."""
        return await asyncio.to_thread(self.mark_used, namespace, list(keys), now=now)

    # ================================================================ maintenance
    def sweep_ttl(self) -> conventions.AwaitableInt:
        """Delete expired items from every index; returns how many were removed.

        The count is an `int` that can also be awaited (`await store.sweep_ttl()`, as with
        `AsyncSqliteStore`); the sweep itself runs now. `asweep_ttl` sweeps in a worker thread.
        """
        self._ensure_open()
        expired = self._storage.expired(self.clock())
        if expired:
            self.batch([PutOp(ns, key, None) for ns, key in expired])
        return conventions.AwaitableInt(len(expired))

    async def asweep_ttl(self) -> int:
        """Async twin of `sweep_ttl`."""
        return int(await asyncio.to_thread(self.sweep_ttl))

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> conventions.SweeperFuture:
        """Start a daemon thread that sweeps expired items periodically.

        Returns a future that is done when the sweeper stops; cancelling it stops the sweeper
        (as with `SqliteStore`). Awaiting the call gives the same future. A second call while
        the sweeper runs returns the running sweeper's future.
        """
        validate.check_interval("sweep_interval_minutes", sweep_interval_minutes)
        self._ensure_open()
        if self._sweeper.running:
            if self._sweeper_future is not None and not self._sweeper_future.done():
                return self._sweeper_future
            self.stop_ttl_sweeper()  # its future was cancelled: the old thread is ending
        ttl_interval = (self.ttl_config or {}).get("sweep_interval_minutes")
        self._sweeper.start(sweep_interval_minutes or ttl_interval or 5)
        future = conventions.SweeperFuture()
        future.add_done_callback(lambda f: self._sweeper.request_stop() if f.cancelled() else None)
        self._sweeper_future = future
        return future

    async def astart_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> conventions.SweeperFuture:
        """Async twin of `start_ttl_sweeper` (the sweeper is a thread either way)."""
        return self.start_ttl_sweeper(sweep_interval_minutes)

    def stop_ttl_sweeper(self, timeout: float | None = None) -> conventions.AwaitableBool:
        """Stop the sweeper thread; true when it has stopped (or was not running).

        The result compares equal to True/False and can also be awaited.
        """
        validate.check_interval("timeout", timeout)
        stopped = self._sweeper.stop(timeout)
        future, self._sweeper_future = self._sweeper_future, None
        if future is not None and not future.done():
            future.set_result(None)
        return conventions.AwaitableBool(stopped)

    async def astop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Async twin of `stop_ttl_sweeper` (waits for the thread in a worker thread)."""
        return bool(await asyncio.to_thread(self.stop_ttl_sweeper, timeout))

    def reindex(
        self, *, vectors: bool = True, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, int]:
        """Rebuild the keyword index (and re-embed vectors) for every item from SQLite.

        `progress(done, total)` is called as the work goes: each batch of texts embedded,
        then each batch of items re-indexed (`total` counts both)."""
        self._ensure_open()
        return self._storage.reindex(vectors=vectors, progress=progress)

    def check(self) -> dict[str, Any]:
        """Integrity report: SQLite's `integrity_check`, and the keyword and vector indexes
        agreeing with the items table (counts and ids). `report["ok"]` is True when clean."""
        self._ensure_open()
        return self._storage.check()

    def backfill_vectors(self) -> int:
        """Embed the items that have no vectors (written while embeddings were off);
        returns how many items got vectors. `reindex()` re-embeds everything instead."""
        self._ensure_open()
        return self._storage.backfill_vectors()

    def stats(self) -> dict[str, Any]:
        """Counts and sizes: items, namespaces, vectors, postings, database bytes."""
        self._ensure_open()
        return self._storage.stats()

    def count(self, namespace_prefix: tuple[str, ...] = (), *, exact: bool = True) -> int:
        """Items in `namespace_prefix` (exactly, or in and under it with exact=False)."""
        validate.check_namespace(namespace_prefix, what="namespace_prefix")
        self._ensure_open()
        return self._storage.count(namespace_prefix, exact)

    def keys(
        self, namespace_prefix: tuple[str, ...] = (), *, exact: bool = False
    ) -> list[tuple[tuple[str, ...], str]]:
        """(namespace, key) of every item in (or under) a namespace, in insertion order."""
        validate.check_namespace(namespace_prefix, what="namespace_prefix")
        self._ensure_open()
        return self._storage.keys(namespace_prefix, exact)

    def locate(self, key: str, namespace_prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
        """Namespaces in (or under) `namespace_prefix` holding an item with `key` (one SQL
        query, whatever the number of namespaces): how a globally unique id is found."""
        validate.check_namespace(namespace_prefix, what="namespace_prefix")
        if not isinstance(key, str) or not key:
            raise ValidationError("key must be a non-empty string")
        self._ensure_open()
        return self._storage.locate(key, namespace_prefix)

    def followers(self, namespace: tuple[str, ...], keys: Sequence[str]) -> dict[str, list[str]]:
        """Each of `keys` -> the later episodes in `namespace` noted as newer versions of it
        (their `metadata.follows` names it: the link is written once, on the newer episode),
        oldest first; an index lookup on every backend, not a scan."""
        validate.check_namespace(namespace)
        if isinstance(keys, str) or not isinstance(keys, Sequence):
            raise ValidationError("keys must be a list of keys")
        for key in keys:
            validate.check_key(key)
        self._ensure_open()
        return self._storage.followers(namespace, list(keys))

    def restore_item_stats(
        self,
        rows: Sequence[tuple[Sequence[str], str, datetime, datetime, datetime | None, int]],
    ) -> int:
        """Restore (namespace, key, created_at, updated_at, last_accessed, access_count).

        A put stamps items with the current time; a lossless import sets the originals.
        """
        rows = validate.check_stat_rows(rows)
        self._ensure_open()
        return self._storage.restore_item_stats(
            [
                (ns_key(ns), key, as_epoch(c), as_epoch(u), as_epoch(la), n)
                for ns, key, c, u, la, n in rows
            ]
        )

    def db_bytes(self) -> int:
        """Bytes the database occupies (file + WAL)."""
        return self._storage.db_bytes()

    def vacuum(self) -> int:
        """Reclaim space so deleted text leaves the file; returns bytes freed."""
        self._ensure_open()
        return self._storage.vacuum()
