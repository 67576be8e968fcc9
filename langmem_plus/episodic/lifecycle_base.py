"""What every lifecycle job shares: the report models, reading one namespace's records, the
put/delete ops, and the config and clock defaults (`episodic/lifecycle.py`, `episodic/consolidation.py`)."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore, Item, PutOp
from pydantic import BaseModel, Field

from langmem_plus.clock import clock_datetime
from langmem_plus.config import MemoryConfig
from langmem_plus.errors import ValidationError
from langmem_plus.model.records import MemoryRecord, utcnow

__all__ = [
    "CleanupReport",
    "ConsolidationReport",
    "DecayReport",
    "EvictionReport",
    "ReviewReport",
    "check_namespace",
    "config_or_default",
    "delete_op",
    "job_now",
    "load_records",
    "namespace_items",
    "put_op",
]

logger = logging.getLogger("langmem_plus.episodic.lifecycle")

_PAGE = 1000


# ------------------------------------------------------------------------------ reports
class ConsolidationReport(BaseModel):
    """What `consolidate` did."""

    scanned: int = 0
    pairs_compared: int = 0
    merged: int = 0
    separated: int = 0
    untouched_pairs: int = 0
    created_ids: list[str] = Field(default_factory=list)
    deleted_ids: list[str] = Field(default_factory=list)
    rewritten_ids: list[str] = Field(default_factory=list)


class DecayReport(BaseModel):
    """What `decay` did."""

    scanned: int = 0
    decayed: int = 0
    deleted: int = 0
    protected: int = 0
    reviewed: int = 0
    kept: int = 0
    deleted_ids: list[str] = Field(default_factory=list)


class ReviewReport(BaseModel):
    """What `review` did."""

    scanned: int = 0
    reviewed: int = 0
    promoted: int = 0
    kept: int = 0
    deleted: int = 0
    deleted_ids: list[str] = Field(default_factory=list)
    promoted_ids: list[str] = Field(default_factory=list)


class EvictionReport(BaseModel):
    """What `evict` did."""

    scanned: int = 0
    evicted: int = 0
    evicted_ids: list[str] = Field(default_factory=list)


class CleanupReport(BaseModel):
    """What `cleanup_older_than` did."""

    scanned: int = 0
    deleted: int = 0
    deleted_ids: list[str] = Field(default_factory=list)


def check_namespace(namespace: Any) -> tuple[str, ...]:
    """`namespace` when it is a non-empty tuple of non-empty strings; else ValidationError."""
    if (
        not isinstance(namespace, tuple)
        or not namespace
        or not all(isinstance(p, str) and p for p in namespace)
    ):
        raise ValidationError(f"namespace must be a non-empty tuple of strings, got {namespace!r}")
    return namespace


def every_version(store: BaseStore) -> dict[str, Any]:
    """Search arguments that list every version of a record, superseded facts included
    (HybridStore shows the current ones by default; another store keeps no validity)."""
    from langmem_plus.store import HybridStore

    return {"include_superseded": True} if isinstance(store, HybridStore) else {}


def namespace_items(store: BaseStore, namespace: tuple[str, ...]) -> list[Item]:
    """Every item stored directly in `namespace` (not under it), page by page."""
    out: list[Item] = []
    offset = 0
    while True:
        page = store.search(namespace, limit=_PAGE, offset=offset, **every_version(store))
        out.extend(i for i in page if tuple(i.namespace) == namespace)
        if len(page) < _PAGE:
            return out
        offset += _PAGE


def load_records(store: BaseStore, namespace: tuple[str, ...]) -> list[MemoryRecord]:
    """Every langmem_plus record stored directly in `namespace` (other items are skipped)."""
    namespace = check_namespace(namespace)
    records = []
    for item in namespace_items(store, namespace):
        try:
            records.append(MemoryRecord.from_item(item))
        except Exception as exc:
            logger.debug("skipping non-record item %s: %s", item.key, exc)
    return records


def put_op(namespace: tuple[str, ...], rec: MemoryRecord) -> PutOp:
    """The op that writes `rec`."""
    return PutOp(namespace, rec.id, rec.to_value())


def delete_op(namespace: tuple[str, ...], key: str) -> PutOp:
    """The op that deletes `key`."""
    return PutOp(namespace, key, None)


def config_or_default(config: MemoryConfig | None) -> MemoryConfig:
    """`config` checked, or the defaults."""
    if config is not None and not isinstance(config, MemoryConfig):
        raise ValidationError("config must be a MemoryConfig")
    return config or MemoryConfig()


def job_now(now: datetime | None, store: BaseStore) -> datetime:
    """`now` checked, or the store's clock (`HybridStore(clock=...)`) when it has one."""
    if now is None:
        clock = getattr(store, "clock", None)
        return clock_datetime(clock) if callable(clock) else utcnow()
    if not isinstance(now, datetime):
        raise ValidationError("now must be a datetime")
    return now if now.tzinfo else now.replace(tzinfo=utcnow().tzinfo)
