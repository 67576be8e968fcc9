"""REST API (seed 000) over `Memory`: FastAPI, OpenAPI schema at ``/openapi.json``.

Every call is scoped to one user by the ``X-User-Id`` header (required; 1-256 characters, no
'.' and no control characters). Bad input gets a 4xx with a clear ``detail``, never a 500.

Working memory (``GET /memory/working/{session_id}``): with a LangGraph ``checkpointer`` the
session's ``working_memory`` state value is read from its latest checkpoint (``thread_id`` =
session id); without one it is reconstructed from the conversation log (turn count and times
of the session's turns). Either way a session idle past ``working_memory_ttl_minutes`` is
gone (404), as the spec expires it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from langmem_plus._memory_checks import check_label
from langmem_plus.errors import (
    InvalidNamespaceError,
    LangmemPlusError,
    MemoryNotFoundError,
    MissingExtraError,
    ValidationError,
)
from langmem_plus.memory import MAX_LIMIT, Memory
from langmem_plus.records import MemoryRecord, UserProfile, utcnow

__all__ = ["create_app"]

_USER_PATTERN = r"^[^.\x00-\x1f]{1,256}$"
_MAX_TEXT = 100_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MessageIn(_Strict):
    """One chat message."""

    role: Literal["user", "assistant", "system", "tool"] = "user"
    content: str = Field(min_length=1, max_length=_MAX_TEXT)


class AddIn(_Strict):
    """Text or messages to remember."""

    messages: str | list[MessageIn] = Field(
        description="a text, or chat messages", examples=["I prefer dark mode"]
    )
    session_id: str | None = Field(None, min_length=1, max_length=256)
    metadata: dict[str, Any] | None = None
    infer: bool = Field(True, description="run the knowledge monitor (False: store as given)")


class AddOut(BaseModel):
    """Ids created or changed, and those memories."""

    ids: list[str]
    memories: list[MemoryRecord]


class UpdateIn(_Strict):
    """New text and/or field values for a memory."""

    text: str | None = Field(None, min_length=1, max_length=_MAX_TEXT)
    data: dict[str, Any] | None = Field(None, description="fields: category, tags, confidence, …")


class TimeRangeIn(_Strict):
    """A time range; either bound may be open."""

    start: datetime | None = None
    end: datetime | None = None


class SearchIn(_Strict):
    """A memory search."""

    query: str = Field(min_length=1, max_length=10_000)
    limit: int = Field(5, ge=1, le=MAX_LIMIT)
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
    """The working memory of an active session (seed 000)."""

    session_id: str
    current_topic: str | None = None
    context_variables: dict[str, str] = Field(default_factory=dict)
    turn_count: int
    last_emotion: str | None = None
    created_at: datetime
    updated_at: datetime
    source: Literal["checkpointer", "conversation_log"]


class RecallOut(BaseModel):
    """Seed 002's recall answer."""

    results: list[dict[str, Any]]
    total_searched: int
    latency_ms: float


def _working_from_checkpointer(
    checkpointer: Any, state_key: str, user_id: str, session_id: str
) -> WorkingMemoryOut | None:
    from langmem_plus.working import WorkingMemory

    tup = checkpointer.get_tuple({"configurable": {"thread_id": session_id}})
    if tup is None:
        return None
    owner = (tup.config.get("configurable") or {}).get("user_id") or (tup.metadata or {}).get(
        "user_id"
    )
    if owner is not None and owner != user_id:
        return None
    wm = WorkingMemory.from_state((tup.checkpoint.get("channel_values") or {}).get(state_key))
    if wm is None:
        return None
    data = wm.model_dump(exclude={"last_human_id", "persisted_id"})
    return WorkingMemoryOut(**data, source="checkpointer")


def _working_from_log(mem: Memory, user_id: str, session_id: str) -> WorkingMemoryOut | None:
    turns = mem.store.conversations.turns(user_id, session_id)
    if not turns:
        return None
    return WorkingMemoryOut(
        session_id=session_id,
        turn_count=sum(1 for t in turns if t.role == "user"),
        created_at=turns[0].created_at,
        updated_at=turns[-1].created_at,
        source="conversation_log",
    )


def create_app(
    memory_or_path: Memory | str | Path | None = None,
    *,
    checkpointer: Any = None,
    state_key: str = "working_memory",
) -> Any:
    """The FastAPI app serving `memory_or_path` (a `Memory`, a database path, or None = memory).

    Pass a LangGraph `checkpointer` to serve working memory from graph state.
    """
    try:
        from fastapi import Depends, FastAPI, Header, Query, Request
        from fastapi import Path as PathParam
        from fastapi.responses import JSONResponse
    except ImportError:
        raise MissingExtraError.for_extra("server", "fastapi") from None

    mem = memory_or_path if isinstance(memory_or_path, Memory) else Memory(memory_or_path)
    app = FastAPI(
        title="langmem_plus",
        version="0.1.0",
        description="Long-term memory REST API. Every call needs the X-User-Id header.",
    )
    app.state.memory = mem

    def user(
        x_user_id: str = Header(
            ..., alias="X-User-Id", pattern=_USER_PATTERN, description="the user to act for"
        ),
    ) -> str:
        return check_label("X-User-Id", x_user_id)

    def _error(status: int, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=status)

    @app.exception_handler(MemoryNotFoundError)
    async def _not_found(_: Request, exc: MemoryNotFoundError) -> JSONResponse:
        return _error(404, exc)

    @app.exception_handler(ValidationError)
    async def _invalid(_: Request, exc: ValidationError) -> JSONResponse:
        return _error(422, exc)

    @app.exception_handler(InvalidNamespaceError)
    async def _bad_ns(_: Request, exc: InvalidNamespaceError) -> JSONResponse:
        return _error(422, exc)

    @app.exception_handler(LangmemPlusError)
    async def _other(_: Request, exc: LangmemPlusError) -> JSONResponse:
        return _error(400, exc)

    memory_id = PathParam(..., min_length=1, max_length=256, description="memory id")

    @app.get("/health", tags=["meta"])
    def health() -> dict[str, str]:
        """Liveness check."""
        return {"status": "ok"}

    @app.get("/memory/long-term", response_model=PageOut, tags=["long-term"])
    def list_memories(
        uid: str = Depends(user),
        limit: int = Query(20, ge=1, le=MAX_LIMIT),
        offset: int = Query(0, ge=0, le=10**12),
    ) -> Any:
        """List the user's long-term memories (oldest first) with the total for paging."""
        return mem.get_all(uid, limit=limit, offset=offset).model_dump()

    @app.post("/memory/long-term", response_model=AddOut, status_code=201, tags=["long-term"])
    def add_memory(body: AddIn, uid: str = Depends(user)) -> Any:
        """Remember a text or messages (the knowledge monitor decides what to keep)."""
        msgs = body.messages if isinstance(body.messages, str) else [
            m.model_dump() for m in body.messages
        ]  # fmt: skip
        ids = mem.add(
            msgs, uid, session_id=body.session_id, metadata=body.metadata, infer=body.infer
        )
        records = []
        for i in ids:
            try:
                records.append(mem.get(i, uid))
            except MemoryNotFoundError:  # an op of the same batch deleted it
                continue
        return {"ids": ids, "memories": records}

    @app.delete("/memory/long-term", tags=["long-term"])
    def clear_memories(
        uid: str = Depends(user),
        include_conversations: bool = Query(
            False, description="also delete turns, summaries and the profile"
        ),
    ) -> dict[str, int]:
        """Delete all long-term memories of the user (working memory stays until it expires)."""
        return mem.reset(uid, keep_conversations=not include_conversations)

    @app.get("/memory/long-term/{memory_id}", response_model=MemoryRecord, tags=["long-term"])
    def get_memory(memory_id: str = memory_id, uid: str = Depends(user)) -> Any:
        """One memory; 404 when the user has no memory with this id."""
        return mem.get(memory_id, uid)

    @app.patch("/memory/long-term/{memory_id}", response_model=MemoryRecord, tags=["long-term"])
    def update_memory(body: UpdateIn, memory_id: str = memory_id, uid: str = Depends(user)) -> Any:
        """Change a memory's text or fields; the change is kept in its history."""
        return mem.update(memory_id, uid, text=body.text, data=body.data)

    @app.delete("/memory/long-term/{memory_id}", tags=["long-term"])
    def delete_memory(memory_id: str = memory_id, uid: str = Depends(user)) -> dict[str, Any]:
        """Delete one memory from every index."""
        mem.delete(memory_id, uid)
        return {"deleted": True, "id": memory_id}

    @app.get("/memory/long-term/{memory_id}/history", tags=["long-term"])
    def memory_history(
        memory_id: str = memory_id, uid: str = Depends(user)
    ) -> list[dict[str, Any]]:
        """How a memory came to be: creation, then each change."""
        return mem.history(memory_id, uid)

    @app.post("/memory/search", response_model=SearchOut, tags=["search"])
    def search(body: SearchIn, uid: str = Depends(user)) -> Any:
        """Hybrid search with the spec score; each hit explains its score."""
        tr: Any = body.time_range
        if isinstance(tr, TimeRangeIn):
            tr = (tr.start, tr.end)
        hits = mem.search(body.query, uid, limit=body.limit, filters=body.filters, time_range=tr)
        return {"results": [h.model_dump() for h in hits]}

    @app.get("/memory/recall", response_model=RecallOut, tags=["search"])
    def recall(
        query: str = Query(..., min_length=1, max_length=10_000),
        limit: int = Query(5, ge=1, le=MAX_LIMIT),
        session_id: str | None = Query(None, min_length=1, max_length=256),
        uid: str = Depends(user),
    ) -> Any:
        """Relevant past conversation turns and summaries (seed 002's shape)."""
        return mem.recall(query, uid, limit=limit, session_id=session_id)

    @app.get("/memory/profile", response_model=UserProfile, tags=["profile"])
    def get_profile(uid: str = Depends(user)) -> Any:
        """The user's profile document (empty sections when none was written)."""
        return mem.get_profile(uid)

    @app.put("/memory/profile", response_model=UserProfile, tags=["profile"])
    def put_profile(body: ProfileIn, uid: str = Depends(user)) -> Any:
        """Edit profile sections by hand; they are then protected from automatic rewrites."""
        return mem.put_profile(uid, **body.model_dump(exclude_none=True))

    @app.get(
        "/memory/working/{session_id}",
        response_model=WorkingMemoryOut,
        responses={404: {"description": "no active working memory for this session"}},
        tags=["working"],
    )
    def working(
        session_id: str = PathParam(..., min_length=1, max_length=256),
        uid: str = Depends(user),
    ) -> Any:
        """The session's working memory; 404 when absent or expired."""
        if checkpointer is not None:
            wm = _working_from_checkpointer(checkpointer, state_key, uid, session_id)
        else:
            wm = _working_from_log(mem, uid, session_id)
        ttl = timedelta(minutes=mem.config.working_memory_ttl_minutes)
        if wm is None or utcnow() - wm.updated_at > ttl:
            raise MemoryNotFoundError(f"no active working memory for session {session_id!r}")
        return wm

    return app
