"""Turn knowledge-monitor operations into writes on any LangGraph `BaseStore`.

Planning is pure (`plan_ops`); `apply_ops` / `aapply_ops` only read the referenced items and
write the planned `PutOp`s in one batch, so the sync and async paths share all logic.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import pydantic
from langgraph.store.base import BaseStore, GetOp, Item, PutOp
from pydantic import BaseModel, Field
from pydantic_core import PydanticSerializationError

from langmem_plus.config import MemoryConfig
from langmem_plus.errors import ValidationError
from langmem_plus.model.records import MemoryRecord, utcnow
from langmem_plus.processors.schemas import MemoryOp
from langmem_plus.store.validate import check_json, check_namespace
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


_MAX_TEXT = 100_000  # MemoryRecord.text's limit


def _validate(namespace: Any, ops: Any) -> tuple[tuple[str, ...], list[MemoryOp]]:
    """Check the arguments of `apply_ops` (ValidationError before anything is read)."""
    if not isinstance(namespace, tuple) or not namespace:
        raise ValidationError(f"namespace must be a non-empty tuple of strings, got {namespace!r}")
    try:
        check_namespace(namespace)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    if isinstance(ops, MemoryOp | dict | str | bytes) or not isinstance(ops, Iterable):
        raise ValidationError("ops must be a list of MemoryOp")
    clean: list[MemoryOp] = []
    for i, op in enumerate(ops):
        try:
            clean.append(op if isinstance(op, MemoryOp) else MemoryOp.model_validate(op))
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "op"
            raise ValidationError(
                f"ops[{i}] is not a memory op ({where}: {first['msg']})"
            ) from None
        _check_op_data(i, clean[-1])
    return namespace, clean


def _check_args(session_id: Any, now: Any, config: Any) -> None:
    if session_id is not None and not isinstance(session_id, str):
        raise ValidationError(f"session_id must be a string, got {type(session_id).__name__}")
    if now is not None and not isinstance(now, datetime):
        raise ValidationError(f"now must be a datetime, got {type(now).__name__}")
    if config is not None and not isinstance(config, MemoryConfig):
        raise ValidationError(f"config must be a MemoryConfig, got {type(config).__name__}")


def _check_op_data(i: int, op: MemoryOp) -> None:
    """What a record cannot hold: text over 100,000 characters, bad JSON in metadata."""
    if op.text is not None and len(op.text) > _MAX_TEXT:
        raise ValidationError(f"ops[{i}].text must be at most {_MAX_TEXT} characters")
    check_json(
        {"text": op.text, "who": op.who, "reason": op.reason, "id": op.id,
         "symbols": op.symbols, "metadata": op.metadata},
        f"ops[{i}]",
    )  # fmt: skip


def _plan_checked(
    items: dict[str, Item | None],
    namespace: tuple[str, ...],
    ops: Sequence[MemoryOp],
    session_id: str | None,
    now: datetime | None,
    config: MemoryConfig | None,
) -> tuple[list[PutOp], ApplyResult]:
    """`plan_ops`, with a record that pydantic refuses reported as a `ValidationError`."""
    try:
        return plan_ops(items, namespace, ops, session_id=session_id, now=now, config=config)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "record"
        raise ValidationError(f"an op gives an invalid memory ({where}: {first['msg']})") from None
    except PydanticSerializationError as exc:
        raise ValidationError(f"an op gives a memory that cannot be stored: {exc}") from None


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
            rec.importance = round(rec.importance + cfg.lifecycle.boost_amount, 6)
            rec.metadata = {**rec.metadata, "last_boosted": now.isoformat()}
            result.boosted += 1
            if rec.importance >= cfg.lifecycle.review_high and rec.tier == "normal":
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
    _check_args(session_id, now, config)
    ids = _referenced(clean)
    got = store.batch([GetOp(namespace, key) for key in ids]) if ids else []
    items: dict[str, Item | None] = {
        k: (v if isinstance(v, Item) else None) for k, v in zip(ids, got, strict=True)
    }
    puts, result = _plan_checked(items, namespace, clean, session_id, now, config)
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
    _check_args(session_id, now, config)
    ids = _referenced(clean)
    got = await store.abatch([GetOp(namespace, key) for key in ids]) if ids else []
    items: dict[str, Item | None] = {
        k: (v if isinstance(v, Item) else None) for k, v in zip(ids, got, strict=True)
    }
    puts, result = _plan_checked(items, namespace, clean, session_id, now, config)
    if puts:
        await store.abatch(puts)
    return result
