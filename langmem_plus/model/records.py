"""The memory model (SPEC R-DATA): one typed record for every source document.

A `MemoryRecord` is stored as the `value` of a LangGraph store item (key = `id`), so
LangGraph's standard `filter=` works on its fields (``{"category": "preference"}``,
``{"metadata.who": ...}``). Access statistics (`last_accessed`, `access_count`) live in the
store's own columns so that `value` stays exactly what the caller put.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from langmem_plus.text.timeparse import parse_iso

__all__ = [
    "RECORD_DEFAULTS",
    "Category",
    "ConversationTurn",
    "Kind",
    "MemoryRecord",
    "RollingSummary",
    "SessionSummary",
    "Source",
    "Tier",
    "UserProfile",
    "as_aware",
    "is_record_value",
    "new_id",
    "record_columns",
    "utcnow",
    "with_record_defaults",
]

Kind = Literal["episodic", "semantic"]
Category = Literal["preference", "fact", "pattern", "episode"]
Tier = Literal["normal", "core", "system"]
Source = Literal["user_stated", "inferred", "system"]

# Fields of the record that are not stored inside `value` (they belong to the item).
_ITEM_FIELDS = frozenset({"id", "namespace", "last_accessed", "access_count"})
# always in the stored value, even at their default: what tells a record (kind) and what the
# store keeps as columns (category; a fact's confidence: the score reads it, an episode
# without one is scored at the default). Other fields at their default are left out, and a
# filter reads them as their default (`with_record_defaults`).
_ALWAYS = ("kind", "category", "confidence")


def utcnow() -> datetime:
    """Timezone-aware now in UTC; every timestamp in langmem_plus is aware."""
    return datetime.now(timezone.utc)


def new_id() -> str:
    """A fresh memory id (uuid4 hex)."""
    return uuid.uuid4().hex


def as_aware(value: Any) -> Any:
    """A timezone-aware datetime from a datetime or ISO string (naive values are UTC)."""
    if isinstance(value, str):
        value = parse_iso(value)
    if isinstance(value, datetime) and value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value


class MemoryRecord(BaseModel):
    """A long-term memory item (SPEC R-DATA).

    `metadata` is free and round-trips any extra field (episodic: context, thing, time,
    updates, source_chat_ids, merged_from_ids; semantic: fact, source_chatid, first_seen).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str = Field(default_factory=new_id, min_length=1, max_length=256)
    namespace: tuple[str, ...] = ()
    kind: Kind = "semantic"
    category: Category = "fact"
    tier: Tier = "normal"
    text: str = Field(min_length=1, max_length=100_000)
    key: str | None = None
    value: Any = None
    tags: list[str] = Field(default_factory=list)
    symbols: list[str] = Field(default_factory=list)
    who: str = "user"
    session_id: str | None = None
    chat_id: str | None = None
    confidence: float = Field(0.9, ge=0.0, le=1.0)
    importance: float = Field(1.0, ge=0.0)
    source: Source = "user_stated"
    verified: bool = False
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    last_accessed: datetime | None = None
    access_count: int = Field(0, ge=0)
    metadata: dict[str, Any] = Field(default_factory=dict)
    # episodes and derived facts (stored only when set, so older records keep their shape)
    occurred_at: datetime | None = Field(
        None, description="when it was said (episodes, facts); recency is computed from it"
    )
    source_ids: list[str] = Field(
        default_factory=list, description="a fact: the episodes it was derived from"
    )
    derived_ids: list[str] = Field(
        default_factory=list, description="an episode: the facts derived from it"
    )
    slot: str | None = Field(None, description="a fact: what it is a value of")
    valid_from: datetime | None = Field(None, description="a fact: true from (when it was said)")
    valid_to: datetime | None = Field(None, description="a fact: no longer true from")
    superseded_by: str | None = Field(None, description="a fact: the fact that replaced it")
    facts_superseded: bool = Field(
        False, description="an episode: every fact derived from it has been superseded"
    )
    corrected_by: str | None = Field(
        None, description="an episode: the later episode whose correction replaced what it said"
    )

    @field_validator(
        "created_at",
        "updated_at",
        "last_accessed",
        "occurred_at",
        "valid_from",
        "valid_to",
        mode="before",
    )
    @classmethod
    def _tz(cls, v: Any) -> Any:
        return as_aware(v)

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("text must not be blank")
        return v

    @property
    def hit_count(self) -> int:
        """Another name for `access_count` (how often the memory was used)."""
        return self.access_count

    def to_value(self) -> dict[str, Any]:
        """The JSON-safe dict stored as the item's `value`: what a reader or a tool needs,
        lean. Fields at their default are left out (`from_value` restores them, a filter reads
        them as their default: `with_record_defaults`), except the ones the store keeps as
        columns (kind, category; a fact's confidence); so are the fields the store keeps itself
        (id, namespace, access counts) and the created and updated times when they are when it
        was said (`occurred_at`)."""
        said = self.occurred_at
        same = {name for name in ("created_at", "updated_at") if getattr(self, name) == said}
        data = self.model_dump(mode="json", exclude={*_ITEM_FIELDS, *same}, exclude_defaults=True)
        kept = _ALWAYS if self.kind == "semantic" else _ALWAYS[:-1]
        return {**{name: getattr(self, name) for name in kept}, **data}

    @property
    def is_current(self) -> bool:
        """False once a later fact has superseded this one (episodes are always current)."""
        return self.valid_to is None and self.superseded_by is None

    def valid_at(self, at: datetime) -> bool:
        """Whether this record was known and true at `at` (said by then, not yet superseded)."""
        start = self.valid_from or self.occurred_at or self.created_at
        if start > at:
            return False
        return self.valid_to is None or at < self.valid_to

    @classmethod
    def from_value(
        cls,
        value: dict[str, Any],
        *,
        id: str,
        namespace: tuple[str, ...] = (),
        last_accessed: datetime | None = None,
        access_count: int = 0,
    ) -> MemoryRecord:
        """Rebuild a record from a stored `value`; unknown keys go to `metadata`."""
        known = set(cls.model_fields) - _ITEM_FIELDS
        data = {k: v for k, v in value.items() if k in known}
        extra = {k: v for k, v in value.items() if k not in known}
        if extra:
            data["metadata"] = {**extra, **dict(data.get("metadata") or {})}
        if data.get("occurred_at"):  # a lean value leaves out times equal to it (to_value)
            data.setdefault("created_at", data["occurred_at"])
            data.setdefault("updated_at", data["occurred_at"])
        return cls(
            id=id,
            namespace=tuple(namespace),
            last_accessed=last_accessed,
            access_count=access_count,
            **data,
        )

    @classmethod
    def from_item(cls, item: Any) -> MemoryRecord:
        """Rebuild a record from a LangGraph `Item` (or `MemorySearchItem`)."""
        value = dict(item.value)
        said = value.get("occurred_at")  # a lean value leaves out times equal to it
        value.setdefault("created_at", said or item.created_at)
        value.setdefault("updated_at", said or item.updated_at)
        return cls.from_value(
            value,
            id=item.key,
            namespace=tuple(item.namespace),
            last_accessed=getattr(item, "last_accessed", None),
            access_count=int(getattr(item, "access_count", 0) or 0),
        )


RECORD_DEFAULTS: dict[str, Any] = {
    name: f.default
    for name, f in MemoryRecord.model_fields.items()
    if name not in {*_ITEM_FIELDS, "kind", "category"}  # those two always stored
    and f.default_factory is None
    and not f.is_required()
    and f.default is not None
}
"""The record fields that a stored value leaves out at a default that is a value (tier, who,
confidence, importance, source, verified, facts_superseded): a filter reads a missing one as
that default. Fields whose default is empty (None, [], {}) read as missing, as any absent key
does; kind and category are always stored."""


def is_record_value(value: Any) -> bool:
    """Whether a stored value is a langmem_plus record (a dict whose `kind` is one)."""
    return isinstance(value, dict) and value.get("kind") in ("episodic", "semantic")


def with_record_defaults(value: Any) -> Any:
    """A record's stored value with the fields it left out at their default filled in
    (`RECORD_DEFAULTS`), what a filter or a reader of the raw value sees; any other value
    as it is."""
    if not is_record_value(value) or RECORD_DEFAULTS.keys() <= value.keys():
        return value
    return {**RECORD_DEFAULTS, **value}


class ConversationTurn(BaseModel):
    """One persisted turn of the conversation table (R-DATA)."""

    model_config = ConfigDict(extra="forbid")

    id: int | None = None
    user_id: str
    session_id: str
    role: Literal["user", "assistant", "system", "tool"]
    content: str
    created_at: datetime = Field(default_factory=utcnow)
    is_collected: bool = False
    symbols: list[str] = Field(default_factory=list)

    @field_validator("created_at", mode="before")
    @classmethod
    def _tz(cls, v: Any) -> Any:
        return as_aware(v)


class RollingSummary(BaseModel):
    """Summary of turns start_turn..end_turn of a session, with key symbols and decisions."""

    model_config = ConfigDict(extra="forbid")

    id: int | None = None
    user_id: str
    session_id: str
    start_turn: int = Field(ge=0)
    end_turn: int = Field(ge=0)
    summary: str
    key_symbols: list[str] = Field(default_factory=list)
    key_decisions: list[str] = Field(default_factory=list)
    created_at: datetime = Field(default_factory=utcnow)


class SessionSummary(BaseModel):
    """Title and snippet of a session, written after its first reply."""

    model_config = ConfigDict(extra="forbid")

    user_id: str
    session_id: str
    title: str
    snippet: str
    created_at: datetime = Field(default_factory=utcnow)


class UserProfile(BaseModel):
    """The editable user-profile document: reply style, language habits, background.

    `edited_by_user` marks sections a person wrote by hand; the profile writer never
    silently overwrites them.
    """

    model_config = ConfigDict(extra="forbid")

    user_id: str
    reply_style: str = ""
    language_habits: str = ""
    background: str = ""
    edited_by_user: list[str] = Field(default_factory=list)
    updated_at: datetime = Field(default_factory=utcnow)
    language_counts: dict[str, int] = Field(
        default_factory=dict,
        description="the user's turns counted by language (zh, en, mixed): the language "
        "habits are read from this running tally, not from the last turn",
    )

    def render(self) -> str:
        """Short readable text of the non-empty sections."""
        parts = []
        if self.reply_style:
            parts.append(f"Reply style: {self.reply_style}")
        if self.language_habits:
            parts.append(f"Language habits: {self.language_habits}")
        if self.background:
            parts.append(f"Background: {self.background}")
        return "\n".join(parts)


def record_columns(
    value: Any,
) -> tuple[str | None, str | None, float | None, float | None, float | None, bool]:
    """(kind, slot, said_at, valid_from, valid_to, stale) of a langmem_plus record's value:
    what a store keeps as columns so that every search can show current versions and find a
    record's kind or a fact's slot without reading values. Times are epoch seconds: when it
    was said (`occurred_at`) and the fact's validity interval (a fact with a `superseded_by`
    but no `valid_to` is closed from when it was said); `stale`: an episode whose facts were
    all superseded or that a later turn corrected. Values that are no record (no `kind`) give
    (None, None, None, None, None, False): they are always current."""
    if not is_record_value(value):
        return None, None, None, None, None, False
    slot = value.get("slot")
    said = _epoch_or_none(value.get("occurred_at"))
    start = _epoch_or_none(value.get("valid_from"))
    end = _epoch_or_none(value.get("valid_to"))
    if end is None and value.get("superseded_by"):
        end = start if start is not None else (said if said is not None else 0.0)
    stale = value.get("kind") == "episodic" and bool(
        value.get("facts_superseded") or value.get("corrected_by")
    )
    return value["kind"], slot if isinstance(slot, str) else None, said, start, end, stale


def _epoch_or_none(raw: Any) -> float | None:
    """An ISO time or epoch number as epoch seconds; None for anything else."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float, datetime)):
        return None
    try:
        return float(raw) if isinstance(raw, (int, float)) else as_aware(raw).timestamp()
    except (TypeError, ValueError, OverflowError):
        return None
