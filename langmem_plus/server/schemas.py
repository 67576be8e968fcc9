"""The REST API's request and response bodies (pydantic) and the error responses it declares."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from langmem_plus.memory import MAX_LIMIT
from langmem_plus.model.records import MemoryRecord

__all__ = [
    "ACCESS_RESPONSES",
    "MAX_TEXT",
    "NOT_FOUND",
    "ROUTE_RESPONSES",
    "AddIn",
    "AddOut",
    "ErrorOut",
    "FieldErrorOut",
    "HitOut",
    "MessageIn",
    "PageOut",
    "ProfileIn",
    "RecallOut",
    "SearchIn",
    "SearchOut",
    "TimeRangeIn",
    "UpdateIn",
    "ValidationErrorOut",
    "WorkingMemoryOut",
]

MAX_TEXT = 100_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MessageIn(_Strict):
    """One chat message."""

    role: Literal["user", "assistant", "system", "tool"] = "user"
    content: str = Field(min_length=1, max_length=MAX_TEXT)


class AddIn(_Strict):
    """Text or messages to remember."""

    messages: str | list[MessageIn] = Field(
        description="a text, or chat messages", examples=["I prefer dark mode"]
    )
    session_id: str | None = Field(None, min_length=1, max_length=256)
    metadata: dict[str, Any] | None = None
    infer: bool = Field(
        True,
        description="keep each exchange as an episode and derive facts from it "
        "(False: store each message as given)",
    )
    timestamp: datetime | None = Field(
        None, description="when the messages were said (imported history keeps its dates)"
    )


class AddOut(BaseModel):
    """Ids created or changed, and those memories."""

    ids: list[str]
    memories: list[MemoryRecord]


class UpdateIn(_Strict):
    """New text and/or field values for a memory."""

    text: str | None = Field(None, min_length=1, max_length=MAX_TEXT)
    data: dict[str, Any] | None = Field(None, description="fields: category, tags, confidence, …")


class TimeRangeIn(_Strict):
    """A time range; either bound may be open."""

    start: datetime | None = None
    end: datetime | None = None


class SearchIn(_Strict):
    """A memory search; `offset` skips that many of the best hits (paging; offset + limit
    may be at most the search limit)."""

    query: str = Field(min_length=1, max_length=10_000)
    limit: int = Field(5, ge=1, le=MAX_LIMIT)
    offset: int = Field(0, ge=0, le=MAX_LIMIT - 1)
    filters: dict[str, Any] | None = None
    time_range: str | TimeRangeIn | None = Field(
        None, description="a phrase ('昨天', 'last week', 'auto') or {start, end}"
    )


class HitOut(BaseModel):
    """A search hit with its score and the score's parts."""

    id: str
    text: str
    score: float
    components: dict[str, Any]
    memory: MemoryRecord


class SearchOut(BaseModel):
    """Search results, best first."""

    results: list[HitOut]


class PageOut(BaseModel):
    """A page of memories with the total and paging information."""

    items: list[MemoryRecord]
    total: int
    limit: int
    offset: int
    next_offset: int | None


class ProfileIn(_Strict):
    """Profile sections to set (omitted sections stay as they are)."""

    reply_style: str | None = Field(None, max_length=10_000)
    language_habits: str | None = Field(None, max_length=10_000)
    background: str | None = Field(None, max_length=10_000)


class WorkingMemoryOut(BaseModel):
    """The working memory of an active session: topic, context variables, turn count."""

    session_id: str
    current_topic: str | None = None
    context_variables: dict[str, str] = Field(default_factory=dict)
    turn_count: int
    last_emotion: str | None = None
    created_at: datetime
    updated_at: datetime
    source: Literal["checkpointer", "conversation_log"]


class ErrorOut(BaseModel):
    """An error: what went wrong and how to fix it."""

    detail: str


class FieldErrorOut(BaseModel):
    """One field that failed request validation (the rejected value is not echoed)."""

    loc: list[str | int] = Field(description="where: body/query/header/path, then the field")
    msg: str
    type: str


class ValidationErrorOut(BaseModel):
    """Invalid input: `detail` says what and how to fix it; `errors` lists each field when
    the request did not match the schema (absent when the app itself refused a value)."""

    detail: str
    errors: list[FieldErrorOut] | None = None


ACCESS_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "API key missing, malformed, unknown or revoked"},
    403: {"model": ErrorOut, "description": "the key may not act for the X-User-Id given"},
    413: {
        "model": ErrorOut,
        "description": "request body over the size limit, or more messages or characters "
        "than one request may carry",
    },
    429: {
        "model": ErrorOut,
        "description": "rate limit or work budget of the key reached; retry after "
        "Retry-After seconds",
        "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "seconds"}},
    },
}


ROUTE_RESPONSES: dict[int | str, dict[str, Any]] = {
    **ACCESS_RESPONSES,
    400: {
        "model": ErrorOut,
        "description": "the request cannot be carried out as given (or, on a server without "
        "API keys, its Host is not a loopback name)",
    },
    422: {"model": ValidationErrorOut, "description": "invalid input"},
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "the user has no memory with this id"}
}


class RecallOut(BaseModel):
    """Relevant past turns and summaries, how many were searched, and how long it took."""

    results: list[dict[str, Any]]
    total_searched: int
    latency_ms: float
