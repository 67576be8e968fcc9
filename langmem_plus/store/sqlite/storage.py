"""`StorageBackend` over one SQLite file: items, keyword postings and int8 vectors in SQLite,
the FAISS indexes derived from it (see store/seams.py for the seam)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langmem_plus.clock import Clock
from langmem_plus.config import MemoryConfig
from langmem_plus.errors import EmbeddingModelMismatchError
from langmem_plus.store.db.changefeed import KEYWORD_FEED, VECTOR_FEED, heads
from langmem_plus.store.db.database import Database, ns_key
from langmem_plus.store.keyword.index import KeywordIndex
from langmem_plus.store.seams import PutMap
from langmem_plus.store.sqlite import check as checks
from langmem_plus.store.sqlite.backend import SqliteBackend
from langmem_plus.store.sqlite.conversations import SQLiteConversationLog
from langmem_plus.store.sqlite.maintenance import Maintenance
from langmem_plus.store.sqlite.rowcache import RowCache
from langmem_plus.store.sqlite.writer import ItemWriter
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.store.vector.index import VectorIndex
from langmem_plus.store.vector.snapshot import snapshot_key

__all__ = ["SqliteStorage"]

logger = logging.getLogger("langmem_plus.store.hybrid")

_LOG_COMPACT_AT = 10_000

Texts = Callable[[Mapping[str, Any]], list[tuple[str, str]]]


class SqliteStorage:
    """The SQLite storage of `HybridStore`: one file (or memory), its keyword index, row
    cache and (with embeddings) vector index."""

    def __init__(
        self,
        path: Path | None,
        *,
        read_only: bool | None,
        config: MemoryConfig,
        tuning: StoreTuning,
        embeddings: Embeddings | None,
        model_name: str,
        dims: int,
        texts: Texts,
    ) -> None:
        self.path = path
        self.where = str(path or "this store")
        self.db = Database(path, read_only=read_only)
        self.read_only = self.db.read_only
        self.kw = KeywordIndex(tuning)
        self.writer = ItemWriter(self.kw, config.store.vector_storage, config.store.session_keys)
        self.rowcache = RowCache(max_rows=tuning.row_cache_rows)
        self.embeddings = embeddings
        self.model_name = model_name
        self.dims = dims
        self.texts = texts
        self.vector_storage = config.store.vector_storage
        self.vec: VectorIndex | None = None
        if embeddings is not None:
            self._check_model()
            snap = None if path is None else path.with_name(path.name + ".faiss")
            self.vec = VectorIndex(
                dims,
                snapshot_path=snap,
                ann_threshold=tuning.ann_threshold,
                ef_search=tuning.hnsw_ef_search,
                snapshot_min_vectors=tuning.snapshot_min_vectors,
                scan_in_background=tuning.vector_search_thread,
            )
            self.vec.model_name = model_name
            with self.db.read() as conn:
                self.vec.open(conn, model_name)
            checks.warn_missing_vectors(self.db, self.where)
        self.backend = SqliteBackend(self.kw, self.vec, self.rowcache, dims)
        self.maint = Maintenance(
            self.db,
            self.kw,
            self.vec,
            texts=texts,
            embeddings=embeddings,
            model_name=model_name,
            dims=dims,
            vector_storage=config.store.vector_storage,
            session_keys=config.store.session_keys,
        )
        self.maint.keep_tokens_current()

    def _check_model(self) -> None:
        stored = self.db.get_meta("embedding_model")
        stored_dims = self.db.get_meta("embedding_dims")
        with self.db.read() as conn:
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
        if self.db.read_only:
            return
        with self.db.write() as conn:
            self.db.set_meta(conn, "embedding_model", self.model_name)
            self.db.set_meta(conn, "embedding_dims", str(self.dims))
            snapshot_key(conn, create=True)

    @staticmethod
    def drop_vectors(path: Path) -> None:
        """Delete every stored vector of the file at `path` and its snapshot (a model change:
        the next open with the new embeddings re-embeds)."""
        db = Database(path)
        with db.write() as conn:
            conn.execute("DELETE FROM vectors")
            conn.execute("UPDATE items SET index_key = NULL")  # the next put embeds again
            conn.execute("DELETE FROM vec_log")
            conn.execute("DELETE FROM meta WHERE key IN ('embedding_model','embedding_dims')")
        db.close()
        snap = path.with_name(path.name + ".faiss")
        if snap.exists():
            snap.unlink()

    @property
    def search(self) -> SqliteBackend:
        """What the ranker reads."""
        return self.backend

    # ---------------------------------------------------------------- sessions
    def batch_lock(self) -> AbstractContextManager[Any]:
        return self.db.lock

    @contextmanager
    def read(self) -> Iterator[Any]:
        """A read transaction; the change feeds' heads are read once for all of it (the
        caches and the FAISS index sync against them), unless it runs inside a write."""
        with self.db.lock:
            nested = self.db.conn.in_transaction
            with self.db.read() as conn:
                if nested:
                    yield conn
                    return
                kw, vec = heads(conn, (KEYWORD_FEED, VECTOR_FEED))
                pinned = KEYWORD_FEED.pin(conn, kw), VECTOR_FEED.pin(conn, vec)
                try:
                    yield conn
                finally:
                    if pinned[0]:
                        KEYWORD_FEED.unpin(conn)
                    if pinned[1]:
                        VECTOR_FEED.unpin(conn)

    @contextmanager
    def write(self) -> Iterator[Any]:
        """A write transaction."""
        with self.db.write() as conn:
            yield conn

    def before_reads(self, conn: Any) -> None:
        if self.vec is not None:
            self.vec.sync(conn)

    # ---------------------------------------------------------------- writes
    def apply_puts(self, conn: Any, puts: PutMap, doc_vecs: np.ndarray | None, now: float) -> None:
        self.writer.apply_puts(conn, puts, doc_vecs, now)
        if self.vec is None:
            checks.mark_vectorless(self.db, conn, puts)

    def after_puts(self) -> None:
        """The FAISS index catches up with the committed puts. Not inside a write that is
        still open (puts made within a caller's `Database.write`): it would read entries that
        may yet roll back; the next read catches up (`before_reads`)."""
        if self.vec is not None and not self.db.conn.in_transaction:
            with self.db.read() as conn:
                self.vec.sync(conn)

    def refresh_ttl(self, conn: Any, item_ids: Sequence[int], now: float) -> None:
        conn.executemany(
            "UPDATE items SET expires_at = ? + ttl_minutes * 60 WHERE id=? AND ttl_minutes IS NOT NULL",
            [(now, r) for r in item_ids],
        )

    def mark_used(self, namespace: Sequence[str], keys: Sequence[str], ts: float | None) -> int:
        with self.db.write() as conn:
            row = conn.execute(
                "SELECT id FROM namespaces WHERE ns=?", (ns_key(namespace),)
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

    # ---------------------------------------------------------------- maintenance
    def expired(self, now: float) -> list[tuple[tuple[str, ...], str]]:
        return self.maint.expired(now)

    def reindex(
        self, *, vectors: bool = True, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, int]:
        return self.maint.reindex(vectors=vectors, progress=progress)

    def stats(self) -> dict[str, Any]:
        return self.maint.stats()

    def count(self, prefix: Sequence[str], exact: bool) -> int:
        return self.maint.count(prefix, exact)

    def keys(self, prefix: Sequence[str], exact: bool) -> list[tuple[tuple[str, ...], str]]:
        return self.maint.keys(prefix, exact)

    def locate(self, key: str, prefix: Sequence[str]) -> list[tuple[str, ...]]:
        return self.maint.locate(key, prefix)

    def followers(self, namespace: Sequence[str], keys: Sequence[str]) -> dict[str, list[str]]:
        return self.maint.followers(namespace, keys)

    def restore_item_stats(
        self, rows: Sequence[tuple[str, str, float | None, float | None, float | None, int]]
    ) -> int:
        return self.maint.restore_item_stats(rows)

    def db_bytes(self) -> int:
        return self.maint.db_bytes()

    def vacuum(self) -> int:
        return self.maint.vacuum()

    def check(self) -> dict[str, Any]:
        return checks.check(self.db, self.vec)

    def backfill_vectors(self) -> int:
        if self.embeddings is None or self.vec is None:
            return 0
        return checks.backfill_vectors(
            self.db, self.vec, self.embeddings, self.texts, self.vector_storage
        )

    def conversation_log(self, clock: Clock) -> SQLiteConversationLog:
        """Turns, summaries, profiles and symbols in the same SQLite file."""
        return SQLiteConversationLog(self.db, clock=clock)

    def close(self) -> None:
        """Snapshot the vector index, compact its change log, close SQLite."""
        try:
            if self.vec is not None and self.path is not None and not self.db.read_only:
                with self.db.read() as conn:
                    self.vec.sync(conn)
                try:
                    self.vec.save()
                except OSError as exc:  # only a cache: the next open rebuilds or replays
                    logger.warning("could not write the vector snapshot: %s", exc)
                with self.write() as conn:
                    if VECTOR_FEED.size(conn) > _LOG_COMPACT_AT:
                        self.vec.compact_log(conn)
        finally:
            self.db.close()
