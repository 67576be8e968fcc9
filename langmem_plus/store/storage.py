"""The write-side seam: what `HybridStore` needs from storage beyond the ranker's reads.

`SearchBackend` (backend.py) is what the `Ranker` reads; `StorageBackend` is the rest of a
store's storage: sessions (one read session per batch, one write session for its puts), the
write path (puts and deletions, TTL refresh, `mark_used`), and maintenance (TTL sweep
candidates, counts, listings, reindexing, sizes, integrity). `HybridStore` plans, validates,
embeds and ranks once; it reaches storage only through these two protocols, so the SQLite
storage (sqlite_storage.py) and the Milvus storage (milvus_storage.py) serve the same store.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from langmem_plus.clock import Clock
from langmem_plus.store.backend import SearchBackend
from langmem_plus.store.writer import PlannedPut

__all__ = ["MILVUS_SCHEMES", "PutMap", "StorageBackend", "storage_target"]

MILVUS_SCHEMES = ("milvus://", "http://", "https://", "tcp://")
"""URI prefixes that name a Milvus server; a path ending in `.milvus.db` names Milvus Lite."""

PutMap = Mapping[tuple[tuple[str, ...], str], PlannedPut]
"""A batch's puts by (namespace, key), last put of a key wins (a value of None deletes)."""


def storage_target(path: str | os.PathLike[str] | None) -> str | None:
    """The Milvus URI a store path names, or None for SQLite.

    `milvus://host:19530` is `http://host:19530` (what pymilvus connects to); `http(s)://` and
    `tcp://` URIs are kept; a local path ending in `.milvus.db` is a Milvus Lite file.
    """
    if path is None:
        return None
    text = os.fspath(path)
    low = text.lower()
    if low.startswith("milvus://"):
        return "http://" + text[len("milvus://") :]
    if low.startswith(MILVUS_SCHEMES):
        return text
    if low.endswith(".milvus.db"):
        return str(Path(text))
    return None


class StorageBackend(Protocol):
    """A store's storage: sessions, writes and maintenance (see the module docstring)."""

    read_only: bool
    where: str  # the storage's location, for messages ("memories.db", "milvus://...")

    @property
    def search(self) -> SearchBackend:
        """What the ranker reads."""
        ...

    # ---------------------------------------------------------------- sessions
    def batch_lock(self) -> AbstractContextManager[Any]:
        """Held for one batch: its reads and its writes run without another batch between."""
        ...

    def read(self) -> AbstractContextManager[Any]:
        """A read session (one snapshot for the batch's reads); yields what the reads take."""
        ...

    def write(self) -> AbstractContextManager[Any]:
        """A write session (one transaction where the storage has them)."""
        ...

    def before_reads(self, conn: Any) -> None:
        """Bring derived indexes up to date before a batch's reads."""
        ...

    # ---------------------------------------------------------------- writes
    def apply_puts(self, conn: Any, puts: PutMap, doc_vecs: np.ndarray | None, now: float) -> None:
        """Write the puts (a value of None deletes); `doc_vecs` has one row per (path, text)
        of the puts, in their order."""
        ...

    def after_puts(self) -> None:
        """Bring derived indexes up to date after a batch's puts."""
        ...

    def refresh_ttl(self, conn: Any, item_ids: Sequence[int], now: float) -> None:
        """Restart the TTL of the items read (ids as the batch's reads gave them)."""
        ...

    def mark_used(self, namespace: Sequence[str], keys: Sequence[str], ts: float | None) -> int:
        """Add 1 to `access_count` and set `last_accessed` of these items; how many exist."""
        ...

    # ---------------------------------------------------------------- maintenance
    def expired(self, now: float) -> list[tuple[tuple[str, ...], str]]: ...

    def reindex(self, *, vectors: bool = True) -> dict[str, int]: ...

    def stats(self) -> dict[str, Any]: ...

    def count(self, prefix: Sequence[str], exact: bool) -> int: ...

    def keys(self, prefix: Sequence[str], exact: bool) -> list[tuple[tuple[str, ...], str]]: ...

    def locate(self, key: str, prefix: Sequence[str]) -> list[tuple[str, ...]]: ...

    def restore_item_stats(
        self, rows: Sequence[tuple[str, str, float | None, float | None, float | None, int]]
    ) -> int: ...

    def db_bytes(self) -> int: ...

    def vacuum(self) -> int: ...

    def check(self) -> dict[str, Any]: ...

    def backfill_vectors(self) -> int: ...

    def conversation_log(self, clock: Clock) -> Any:
        """The conversation log kept beside the items (turns, summaries, profiles)."""
        ...

    def close(self) -> None: ...
