"""HybridStore's public API beyond LangGraph's `BaseStore`: `with`/`async with`, search with a
current topic or a time range, `mark_used`, TTL sweeping, and the maintenance and integrity
calls (a mixin; the store holds the parts these methods delegate to)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from langgraph.store.base import PutOp
from typing_extensions import Self

from langmem_plus.errors import ValidationError
from langmem_plus.store import conventions, validate
from langmem_plus.store._common import MemorySearchItem, as_epoch, ns_key
from langmem_plus.store.plan import MemorySearchOp

if TYPE_CHECKING:
    from collections.abc import Mapping

    from langchain_core.embeddings import Embeddings
    from langgraph.store.base import TTLConfig

    from langmem_plus.clock import Clock
    from langmem_plus.config import MemoryConfig
    from langmem_plus.store.maintenance import TTLSweeper
    from langmem_plus.store.storage import StorageBackend

__all__ = ["StoreExtras"]


class StoreExtras(validate.CheckedStore):
    """The methods of `HybridStore` beyond `BaseStore` (see the module docstring)."""

    if TYPE_CHECKING:
        config: MemoryConfig
        clock: Clock
        ttl_config: TTLConfig | None
        embeddings: Embeddings | None
        _storage: StorageBackend
        _sweeper: TTLSweeper
        _sweeper_future: conventions.SweeperFuture | None

        def _ensure_open(self) -> None: ...

        def close(self) -> None: ...

        async def aclose(self) -> None: ...

        def _texts(self, value: Mapping[str, Any], index: Any) -> list[tuple[str, str]]: ...

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
        op = self._search_op(
            namespace_prefix, query, filter, limit, offset, refresh_ttl, current_topic, time_range
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
        op = self._search_op(
            namespace_prefix, query, filter, limit, offset, refresh_ttl, current_topic, time_range
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

    def reindex(self, *, vectors: bool = True) -> dict[str, int]:
        """Rebuild the keyword index (and re-embed vectors) for every item from SQLite."""
        self._ensure_open()
        return self._storage.reindex(vectors=vectors)

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
