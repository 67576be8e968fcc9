"""Input checks shared by the `Memory` facade and its shells (CLI, REST, MCP).

Every public boundary validates with these and raises `ValidationError` with a clear message.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, get_args

import pydantic
from pydantic_core import PydanticSerializationError

from langmem_plus.errors import ValidationError
from langmem_plus.model.messages import message_text
from langmem_plus.model.namespaces import check_user_id
from langmem_plus.model.records import Category, Kind, MemoryRecord, Source, Tier
from langmem_plus.store.validate import check_json, has_lone_surrogate
from langmem_plus.text.timeparse import parse_iso

logger = logging.getLogger("langmem_plus.engine")

__all__ = [
    "FIELD_WORDS",
    "SETTABLE",
    "check_id",
    "check_int",
    "check_label",
    "check_mapping",
    "check_text",
    "check_time",
    "make_record",
    "message_time",
    "normalize_messages",
    "record_of",
    "with_metadata",
]

_MAX_LABEL = 256
MAX_TEXT = 100_000  # characters of one message or memory text (REST and CLI stop there too)
_MAX_MESSAGES = 1000
_ROLES = {"user", "assistant", "system", "tool"}
_ROLE_ALIASES = {"human": "user", "ai": "assistant", "bot": "assistant"}
# MemoryRecord fields a caller may set through `metadata` / `update(data=...)`.
SETTABLE = frozenset(
    {"kind", "category", "tier", "text", "key", "value", "tags", "symbols", "who", "chat_id",
     "session_id", "confidence", "importance", "source", "verified", "metadata"}
)  # fmt: skip
# record fields that hold one of a fixed set of words; in `metadata=` any other word is the
# caller's own metadata (mem0 users write ``{"category": "food"}``), not a bad field value
FIELD_WORDS: dict[str, frozenset[str]] = {
    "kind": frozenset(get_args(Kind)),
    "category": frozenset(get_args(Category)),
    "tier": frozenset(get_args(Tier)),
    "source": frozenset(get_args(Source)),
}
# record fields that hold a value of another type than text: in `metadata=` a value of another
# type (``{"verified": "by Bob"}``) is the caller's own metadata, not a bad field value
FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "verified": (bool,),
    "confidence": (int, float),
    "importance": (int, float),
    "tags": (list, tuple),
    "symbols": (list, tuple),
}


def _sets_field(key: str, value: Any) -> bool:
    """Whether `metadata[key]` sets the record field `key` (else it stays metadata)."""
    if key not in SETTABLE or key in ("text", "metadata"):
        return False
    words = FIELD_WORDS.get(key)
    if words is not None:
        return isinstance(value, str) and value in words
    types = FIELD_TYPES.get(key)
    return types is None or isinstance(value, types)


def check_label(name: str, value: Any) -> str:
    """A user id: non-blank, at most 256 characters, valid Unicode.

    Any other character is allowed: a user id becomes a namespace label only through
    `namespaces.escape_label`, which escapes what a label cannot hold.
    """
    return check_user_id(value, name)


def check_id(name: str, value: Any) -> str:
    """A memory or session id: a non-empty string of at most 256 characters, no NUL."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{name} must be a non-empty string, got {value!r}")
    if len(value) > _MAX_LABEL or "\x00" in value:
        raise ValidationError(f"{name} must be at most {_MAX_LABEL} characters, without NUL")
    if has_lone_surrogate(value):
        raise ValidationError(f"{name} must be valid Unicode (it holds a lone surrogate)")
    return value


def check_text(name: str, value: Any, max_chars: int = MAX_TEXT) -> str:
    """Text: a non-blank string of at most `max_chars` characters, valid Unicode."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{name} must be a non-empty string")
    if len(value) > max_chars:
        raise ValidationError(f"{name} must be at most {max_chars} characters, got {len(value)}")
    if has_lone_surrogate(value):
        raise ValidationError(f"{name} must be valid Unicode (it holds a lone surrogate)")
    return value


def check_int(name: str, value: Any, lo: int, hi: int) -> int:
    """An int in [lo, hi] (bools rejected)."""
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ValidationError(f"{name} must be an integer from {lo} to {hi}, got {value!r}")
    return value


def check_number(name: str, value: Any) -> float:
    """A finite int or float (bools rejected)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValidationError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def normalize_messages(messages: Any) -> list[dict[str, str]]:
    """Text, one message or a list of messages (dicts or LangChain messages) → role/text dicts."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    elif isinstance(messages, Mapping) or hasattr(messages, "type"):
        messages = [messages]
    if not isinstance(messages, (list, tuple)) or not messages:
        raise ValidationError("messages must be a non-empty string or list of messages")
    if len(messages) > _MAX_MESSAGES:
        raise ValidationError(f"at most {_MAX_MESSAGES} messages at once, got {len(messages)}")
    out: list[dict[str, str]] = []
    for i, msg in enumerate(messages):
        if isinstance(msg, Mapping):
            role, content = msg.get("role", "user"), msg.get("content", msg.get("text"))
        elif hasattr(msg, "type") and hasattr(msg, "content"):
            role, content = msg.type, msg.content
        else:
            raise ValidationError(f"messages[{i}] must be a dict with role and content")
        if isinstance(content, list):  # LangChain content blocks: text parts only
            for b in content:
                if not isinstance(b.get("text", "") if isinstance(b, Mapping) else b, str):
                    raise ValidationError(f"messages[{i}].content blocks must hold text")
            content = message_text(content)
        if not isinstance(role, str):
            raise ValidationError(f"messages[{i}].role must be a string")
        role = _ROLE_ALIASES.get(role.lower(), role.lower())
        if role not in _ROLES:
            raise ValidationError(f"messages[{i}].role must be one of {sorted(_ROLES)}")
        if not isinstance(content, str):
            raise ValidationError(f"messages[{i}].content must be a string")
        if len(content) > MAX_TEXT:
            raise ValidationError(f"messages[{i}].content must be at most {MAX_TEXT} characters")
        if has_lone_surrogate(content):
            raise ValidationError(f"messages[{i}].content holds a lone surrogate (not Unicode)")
        out.append({"role": role, "text": content})
    if not any(m["text"].strip() for m in out):
        raise ValidationError("messages hold no text")
    return out


def check_time(name: str, value: Any) -> datetime | None:
    """A point in time: a datetime (naive = UTC), an ISO 8601 string or epoch seconds."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value) or not -1e11 < value < 1e11:
            raise ValidationError(f"{name} must be a finite epoch in seconds, got {value!r}")
        return datetime.fromtimestamp(value, tz=timezone.utc)
    if isinstance(value, str):
        try:
            dt = parse_iso(value.strip())
        except ValueError:
            raise ValidationError(f"{name} is not an ISO 8601 date/time: {value[:40]!r}") from None
        return dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)
    raise ValidationError(f"{name} must be a datetime, ISO string or epoch seconds")


def check_mapping(name: str, value: Any) -> dict[str, Any]:
    """A dict (None → empty dict)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(f"{name} must be a dict, got {type(value).__name__}")
    return dict(value)


def make_record(**fields: Any) -> MemoryRecord:
    """A MemoryRecord that can be stored: pydantic's error turned into one clear
    `ValidationError`, and `metadata` / `value` checked as JSON first (depth, NaN, bytes,
    lone surrogates), since serialising would otherwise turn NaN into null or fail."""
    for name in ("metadata", "value"):
        if fields.get(name) is not None:
            check_json(fields[name], name)
    try:
        record = MemoryRecord(**fields)
        record.to_value()  # a lone surrogate in any string fails here, not in the store
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "record"
        raise ValidationError(f"invalid memory ({where}): {first.get('msg')}") from None
    except (PydanticSerializationError, ValueError, RecursionError) as exc:
        raise ValidationError(f"invalid memory: {str(exc)[:200]}") from None
    return record


def with_metadata(record: MemoryRecord, meta: Mapping[str, Any]) -> MemoryRecord:
    """Known record fields in `meta` set the field; everything else joins `record.metadata`.

    A word a fixed-word field cannot hold (``{"category": "food"}``) is kept in `metadata`
    under its key; other bad field values (``{"confidence": 7}``) are refused.
    """
    if not meta:
        return record
    check_json(dict(meta), "metadata")
    data = record.model_dump()
    fields = {k: v for k, v in meta.items() if _sets_field(k, v)}
    extra = {k: v for k, v in meta.items() if k not in fields}
    nested = extra.pop("metadata", None)
    merged = {**data["metadata"], **(nested if isinstance(nested, Mapping) else {}), **extra}
    return make_record(**{**data, **fields, "metadata": merged})


def record_of(item: Any) -> MemoryRecord:
    """A `MemoryRecord` from a store item; values that are not records are shown as JSON text."""
    try:
        return MemoryRecord.from_item(item)
    except (pydantic.ValidationError, TypeError, ValueError):
        text = item.value.get("text") if isinstance(item.value, Mapping) else None
        return MemoryRecord(
            id=item.key,
            namespace=tuple(item.namespace),
            text=(text if isinstance(text, str) and text.strip() else str(item.value))[:MAX_TEXT],
            metadata={"raw_value": item.value},
            created_at=item.created_at,
            updated_at=item.updated_at,
        )


def message_time(message: Any) -> datetime | None:
    """When a message was said, if it carries a time (`additional_kwargs` or
    `response_metadata` key ``timestamp`` / ``created_at``: ISO 8601 or epoch seconds);
    imported or replayed histories keep their dates this way."""
    for meta in (message.additional_kwargs, message.response_metadata):
        for key in ("timestamp", "created_at"):
            raw = meta.get(key) if isinstance(meta, Mapping) else None
            if raw is None:
                continue
            try:
                return check_time(key, raw)
            except ValidationError:
                logger.warning("ignoring an unreadable message %s: %r", key, raw)
    return None
