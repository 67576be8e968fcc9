"""Turn knowledge-monitor operations into writes on any LangGraph `BaseStore`.

Planning is pure (`plan_ops`); `apply_ops` / `aapply_ops` only read the referenced items and
write the planned `PutOp`s in one batch, so the sync and async paths share all logic.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, PutOp
from pydantic import BaseModel, Field

from langmem_plus.config import MemoryConfig
from langmem_plus.errors import ValidationError
from langmem_plus.processors.schemas import MemoryOp
from langmem_plus.records import MemoryRecord, utcnow
from langmem_plus.text import extract_symbols

__all__ = ["ApplyResult", "aapply_ops", "apply_ops", "plan_ops"]

logger = logging.getLogger("langmem_plus.processors")

_DATE_KEYS = ("time_phrase", "resolved_date", "resolved_start", "resolved_end")


class ApplyResult(BaseModel):
    """What `apply_ops` did: counts and the ids it created, changed or deleted."""

    added: int = 0
    updated: int = 0
    deleted: int = 0
    boosted: int = 0
    skipped: int = 0
    created_ids: list[str] = Field(default_factory=list)
    changed_ids: list[str] = Field(default_factory=list)
    deleted_ids: list[str] = Field(default_factory=list)
    review_ids: list[str] = Field(
        default_factory=list, description="ids whose importance reached config.review_high"
    )


def _validate(namespace: Any, ops: Any) -> tuple[tuple[str, ...], list[MemoryOp]]:
    if (
        not isinstance(namespace, tuple)
        or not namespace
        or not all(isinstance(p, str) and p for p in namespace)
    ):
        raise ValidationError(f"namespace must be a non-empty tuple of strings, got {namespace!r}")
    if isinstance(ops, MemoryOp | dict) or not isinstance(ops, Iterable):
        raise ValidationError("ops must be a list of MemoryOp")
    clean = [op if isinstance(op, MemoryOp) else MemoryOp.model_validate(op) for op in ops]
    return namespace, clean


def _new_record(
    op: MemoryOp, namespace: tuple[str, ...], session_id: str | None, now: datetime
) -> MemoryRecord:
    text = op.text or ""
    kind = "episodic" if op.category == "episode" else "semantic"
    metadata: dict[str, Any]
    if kind == "semantic":
        metadata = {"fact": text, "source_chatid": session_id, "first_seen": now.date().isoformat()}
    else:
        metadata = {
            "context": "",
            "thing": text,
            "time": now.isoformat(),
            "chatid": session_id,
            "who": op.who,
            "updates": [],
            "source_chat_ids": [session_id] if session_id else [],
        }
    metadata.update(op.metadata)
    return MemoryRecord(
        namespace=namespace,
        kind=kind,
        category=op.category,
        text=text,
        who=op.who,
        symbols=_symbols(text, op),
        session_id=session_id,
        chat_id=session_id,
        confidence=op.confidence,
        source="user_stated",
        created_at=now,
        updated_at=now,
        metadata=metadata,
    )


def _symbols(text: str, op: MemoryOp) -> list[str]:
    """Symbols found in the text plus those the processor read from the turn."""
    return list(dict.fromkeys([*extract_symbols(text), *op.symbols]))


def plan_ops(
    items: dict[str, Item | None],
    namespace: tuple[str, ...],
    ops: Sequence[MemoryOp],
    *,
    session_id: str | None = None,
    now: datetime | None = None,
    config: MemoryConfig | None = None,
) -> tuple[list[PutOp], ApplyResult]:
    """Pure planning: the PutOps that carry out `ops` over the already-read `items`."""
    cfg = config or MemoryConfig()
    now = now or utcnow()
    result = ApplyResult()
    records: dict[str, MemoryRecord | None] = {}
    for key, item in items.items():
        if item is None:
            continue
        try:
            records[key] = MemoryRecord.from_item(item)
        except Exception as exc:
            logger.info("item %s is not a langmem_plus record (%s); ops on it skipped", key, exc)
    dirty: dict[str, MemoryRecord | None] = {}
    for op in ops:
        problem = op.problem()
        if op.op == "SKIP" or problem:
            if problem:
                logger.info("skipping op %s: %s", op.op, problem)
            result.skipped += 1
            continue
        if op.op == "ADD":
            rec = _new_record(op, namespace, session_id, now)
            dirty[rec.id] = rec
            result.added += 1
            result.created_ids.append(rec.id)
            continue
        assert op.id is not None
        current = dirty[op.id] if op.id in dirty else records.get(op.id)
        if current is None:
            logger.info("skipping %s for unknown memory id %r", op.op, op.id)
            result.skipped += 1
            continue
        if op.op == "DELETE":
            dirty[op.id] = None
            records.pop(op.id, None)
            result.deleted += 1
            result.deleted_ids.append(op.id)
            continue
        rec = current.model_copy(deep=True)
        if op.op == "UPDATE":
            updates = list(rec.metadata.get("updates") or [])
            updates.append(
                {"time": now.isoformat(), "old_text": rec.text, "desc": op.reason or "updated"}
            )
            rec.metadata = {**rec.metadata, "updates": updates}
            if rec.kind == "semantic":
                rec.metadata["fact"] = op.text
            else:
                rec.metadata["thing"] = op.text
            for key in _DATE_KEYS:  # the old text's date does not describe the new text
                rec.metadata.pop(key, None)
            rec.metadata.update(op.metadata)
            rec.text = op.text or rec.text
            rec.symbols = _symbols(rec.text, op)
            rec.confidence = max(rec.confidence, op.confidence)
            rec.updated_at = now
            result.updated += 1
        else:  # BOOST
            rec.importance = round(rec.importance + cfg.boost_amount, 6)
            rec.metadata = {**rec.metadata, "last_boosted": now.isoformat()}
            result.boosted += 1
            if rec.importance >= cfg.review_high and rec.tier == "normal":
                result.review_ids.append(rec.id)
        dirty[op.id] = rec
        if op.id not in result.changed_ids and op.id not in result.created_ids:
            result.changed_ids.append(op.id)
    puts = [
        PutOp(namespace, key, None if rec is None else rec.to_value()) for key, rec in dirty.items()
    ]
    result.changed_ids = [i for i in result.changed_ids if i not in result.deleted_ids]
    result.review_ids = [i for i in dict.fromkeys(result.review_ids) if i not in result.deleted_ids]
    return puts, result


def _referenced(ops: Sequence[MemoryOp]) -> list[str]:
    return list(dict.fromkeys(op.id for op in ops if op.id and op.op != "ADD"))


def apply_ops(
    store: BaseStore,
    namespace: tuple[str, ...],
    ops: Sequence[MemoryOp],
    *,
    session_id: str | None = None,
    now: datetime | None = None,
    config: MemoryConfig | None = None,
) -> ApplyResult:
    """Carry out monitor ops on `store` (ADD creates, UPDATE keeps history, BOOST adds
    importance, DELETE removes); unknown ids are logged and skipped, never raised."""
    namespace, clean = _validate(namespace, ops)
    ids = _referenced(clean)
    got = store.batch([GetOp(namespace, key) for key in ids]) if ids else []
    items: dict[str, Item | None] = {
        k: (v if isinstance(v, Item) else None) for k, v in zip(ids, got, strict=True)
    }
    puts, result = plan_ops(items, namespace, clean, session_id=session_id, now=now, config=config)
    if puts:
        store.batch(puts)
    return result


async def aapply_ops(
    store: BaseStore,
    namespace: tuple[str, ...],
    ops: Sequence[MemoryOp],
    *,
    session_id: str | None = None,
    now: datetime | None = None,
    config: MemoryConfig | None = None,
) -> ApplyResult:
    """Async twin of `apply_ops`."""
    namespace, clean = _validate(namespace, ops)
    ids = _referenced(clean)
    got = await store.abatch([GetOp(namespace, key) for key in ids]) if ids else []
    items: dict[str, Item | None] = {
        k: (v if isinstance(v, Item) else None) for k, v in zip(ids, got, strict=True)
    }
    puts, result = plan_ops(items, namespace, clean, session_id=session_id, now=now, config=config)
    if puts:
        await store.abatch(puts)
    return result
