"""REST API over `Memory`: FastAPI, OpenAPI schema at ``/openapi.json``.

Every call acts for one user. With API keys configured (``langmem-plus keys create``), a call
needs ``Authorization: Bearer <key>``: a user's key acts as that user (an ``X-User-Id`` naming
anyone else is 403), an admin key acts for the user its ``X-User-Id`` names. With no key
configured the ``X-User-Id`` header is trusted as is, which is why ``langmem-plus serve``
then binds loopback only. User ids: 1-256 characters, valid Unicode (namespaces.py escapes
them); ``X-User-Id`` carries them as UTF-8, either raw or percent-encoded after the RFC 8187
prefix ``UTF-8''`` (``UTF-8''%E7%94%A8%E6%88%B7`` is 用户), anything else is a 400. Paths are
exact (no slash redirects). Bodies over ``max_body_bytes`` are refused (413) before any
parsing; each key gets a token-bucket rate limit (429 with ``Retry-After``). Bad input gets
a 4xx with a clear ``detail``, never a 500.

The schema is true to the app: every status a route can answer is declared with the body it
sends (every error is ``{"detail": "<one line>"}``; a 422 from request validation adds
``errors``, one entry per field), and every operation has a stable ``operationId`` for
generated clients.

Working memory (``GET /memory/working/{session_id}``): with a LangGraph ``checkpointer`` the
session's ``working_memory`` state value is read from its latest checkpoint (``thread_id`` =
session id); without one it is reconstructed from the conversation log (turn count and times
of the session's turns). Either way a session idle past ``working_memory_ttl_minutes`` is
gone (404), as the spec expires it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote_to_bytes

from pydantic import BaseModel, ConfigDict, Field

from langmem_plus._memory_checks import check_label
from langmem_plus.apikeys import ApiKey, AuthenticationError, KeyStore, RateLimiter
from langmem_plus.errors import (
    InvalidNamespaceError,
    LangmemPlusError,
    MemoryNotFoundError,
    MissingExtraError,
    ValidationError,
)
from langmem_plus.memory import MAX_LIMIT, Memory
from langmem_plus.records import MemoryRecord, UserProfile, utcnow

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_RATE_PER_MINUTE",
    "BodySizeLimit",
    "create_app",
    "decode_user_header",
]

DEFAULT_MAX_BODY_BYTES = 1 << 20
DEFAULT_RATE_PER_MINUTE = 600.0
_MAX_TEXT = 100_000

_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]
_ASGIApp = Callable[[_Scope, _Receive, _Send], Awaitable[None]]


_PERCENT_PREFIX = "UTF-8''"


def decode_user_header(raw: str) -> str:
    """The user id an ``X-User-Id`` header value names; ValidationError when it is not UTF-8.

    HTTP servers hand header values over decoded as Latin-1, so raw UTF-8 bytes arrive as
    mojibake (用户 would name another user): they are re-decoded, strictly. A value starting
    with ``UTF-8''`` is percent-encoded UTF-8 (RFC 8187), for clients that send ASCII only;
    an id that itself starts with that prefix must be sent that way.
    """
    try:
        data = raw.encode("latin-1")
        if raw.startswith(_PERCENT_PREFIX):
            data = unquote_to_bytes(raw[len(_PERCENT_PREFIX) :])
        return data.decode("utf-8")
    except UnicodeError:
        raise ValidationError(
            "X-User-Id must be UTF-8 (raw, or percent-encoded after the prefix UTF-8'')"
        ) from None


class BodySizeLimit:
    """ASGI middleware: refuse a request body over `max_bytes` with 413, before parsing.

    A declared ``Content-Length`` over the limit is refused without reading a byte; a body
    sent without one (chunked) is counted as it streams and refused once past the limit. The
    body (at most `max_bytes`) is read here and handed on whole, so no route sees a partial
    or oversized body.
    """

    def __init__(self, app: _ASGIApp, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValidationError(f"max_bytes must be a positive integer, got {max_bytes!r}")
        self.app = app
        self.max_bytes = max_bytes

    @staticmethod
    async def _reply(send: _Send, status: int, detail: str) -> None:
        body = json.dumps({"detail": detail}).encode()
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = f"request body is larger than the limit of {self.max_bytes} bytes"
        for name, value in scope.get("headers") or ():
            if name.lower() == b"content-length":
                if not value.strip().isdigit():
                    await self._reply(send, 400, "malformed Content-Length header")
                    return
                if int(value) > self.max_bytes:
                    await self._reply(send, 413, too_large)
                    return
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body") or b""
            seen += len(chunk)
            if seen > self.max_bytes:
                await self._reply(send, 413, too_large)
                return
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        replayed = False

        async def replay() -> _Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()  # after the body: wait for a disconnect, as servers do

        await self.app(scope, replay, send)


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

    text: str | None = Field(None, min_length=1, max_length=_MAX_TEXT)
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


_ACCESS_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "API key missing, malformed, unknown or revoked"},
    403: {"model": ErrorOut, "description": "the key may not act for the X-User-Id given"},
    413: {"model": ErrorOut, "description": "request body over the size limit"},
    429: {
        "model": ErrorOut,
        "description": "rate limit of the key reached; retry after Retry-After seconds",
        "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "seconds"}},
    },
}


_ROUTE_RESPONSES: dict[int | str, dict[str, Any]] = {
    **_ACCESS_RESPONSES,
    400: {"model": ErrorOut, "description": "the request cannot be carried out as given"},
    422: {"model": ValidationErrorOut, "description": "invalid input"},
}
_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "the user has no memory with this id"}
}


class RecallOut(BaseModel):
    """Relevant past turns and summaries, how many were searched, and how long it took."""

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


def _limiter(rate_limit: RateLimiter | float | None) -> RateLimiter | None:
    if rate_limit is None or isinstance(rate_limit, RateLimiter):
        return rate_limit
    if isinstance(rate_limit, bool) or not isinstance(rate_limit, (int, float)):
        raise ValidationError(
            f"rate_limit must be requests per minute, a RateLimiter or None, got {rate_limit!r}"
        )
    return RateLimiter(float(rate_limit))


def create_app(
    memory_or_path: Memory | str | Path | None = None,
    *,
    checkpointer: Any = None,
    state_key: str = "working_memory",
    keys: KeyStore | None = None,
    require_keys: bool = False,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    rate_limit: RateLimiter | float | None = DEFAULT_RATE_PER_MINUTE,
) -> Any:
    """The FastAPI app serving `memory_or_path` (a `Memory`, a database path, or None = memory).

    Pass a LangGraph `checkpointer` to serve working memory from graph state. `keys` are the
    API keys to accept (default: those stored in the memory's database); while none is active
    the ``X-User-Id`` header is trusted, unless `require_keys` (then every call needs a key).
    `max_body_bytes` caps request bodies; `rate_limit` is each key's requests per minute (or
    a `RateLimiter`, or None for no limit).
    """
    try:
        from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Query, Request
        from fastapi import Path as PathParam
        from fastapi.exceptions import RequestValidationError
        from fastapi.responses import JSONResponse
        from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
    except ImportError:
        raise MissingExtraError.for_extra("server", "fastapi") from None

    limiter = _limiter(rate_limit)
    mem = memory_or_path if isinstance(memory_or_path, Memory) else Memory(memory_or_path)
    if keys is not None and not isinstance(keys, KeyStore):
        raise ValidationError(f"keys must be a KeyStore, got {type(keys).__name__}")
    key_store = keys if keys is not None else KeyStore(mem.store.db)
    app = FastAPI(
        title="langmem_plus",
        version="0.1.0",
        # No slash redirects: `DELETE /memory/long-term/` (an empty id) would be sent on to
        # `DELETE /memory/long-term` (delete all) by every client that follows redirects.
        redirect_slashes=False,
        description=(
            "Long-term memory REST API. Authenticate with `Authorization: Bearer <API key>` "
            "(a user's key acts as its user; an admin key acts for the `X-User-Id` it names). "
            "A server with no API keys trusts `X-User-Id` and listens on loopback only."
        ),
    )
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes)
    app.state.memory = mem
    app.state.keys = key_store
    app.state.rate_limiter = limiter
    app.state.require_keys = require_keys
    bearer = HTTPBearer(
        auto_error=False,
        description="an API key from `langmem-plus keys create` (needed once any key exists)",
    )

    def _deny(status: int, detail: str, headers: dict[str, str] | None = None) -> HTTPException:
        return HTTPException(status_code=status, detail=detail, headers=headers)

    def _key(credentials: HTTPAuthorizationCredentials | None) -> ApiKey | None:
        """The caller's key; None only while the server trusts X-User-Id."""
        challenge = {"WWW-Authenticate": "Bearer"}
        if credentials is None:
            if require_keys or key_store.active_count() > 0:
                raise _deny(401, "this server needs an API key: Authorization: Bearer <key>",
                            challenge)  # fmt: skip
            return None
        try:
            return key_store.authenticate(credentials.credentials)
        except AuthenticationError as exc:
            raise _deny(401, str(exc), challenge) from None

    def user(
        credentials: HTTPAuthorizationCredentials | None = Depends(bearer),
        x_user_id: str | None = Header(
            None,
            alias="X-User-Id",
            description="the user to act for: required without a key, or with an admin key; "
            "with a user's key it may only name that user",
        ),
    ) -> str:
        if x_user_id is not None:
            try:
                x_user_id = decode_user_header(x_user_id)
            except ValidationError as exc:
                raise _deny(400, str(exc)) from None
        key = _key(credentials)
        if key is not None and limiter is not None:
            wait = limiter.acquire(key.key_id)
            if wait > 0:
                raise _deny(429, f"rate limit reached; retry in {wait:.1f} s",
                            {"Retry-After": str(max(1, math.ceil(wait)))})  # fmt: skip
        if key is not None and not key.admin:
            assert key.user_id is not None
            if x_user_id is not None and x_user_id != key.user_id:
                raise _deny(403, "this API key acts for one user; X-User-Id names another")
            return key.user_id
        if x_user_id is None:
            need = "an admin key must name the user" if key is not None else "it is required"
            raise _deny(422, f"X-User-Id header missing: {need}")
        return check_label("X-User-Id", x_user_id)

    router = APIRouter(responses=_ROUTE_RESPONSES)

    def _error(status: int, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def _request_invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {
                "loc": [p if isinstance(p, int) else str(p) for p in e.get("loc", ())],
                "msg": str(e.get("msg", "")),
                "type": str(e.get("type", "")),
            }
            for e in exc.errors()
        ]
        summary = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors[:5]
        ).replace("\n", " ")
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        return JSONResponse(
            {"detail": f"invalid request: {summary}{more}", "errors": errors}, status_code=422
        )

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

    @app.get("/health", tags=["meta"], operation_id="health")
    def health() -> dict[str, str]:
        """Liveness check."""
        return {"status": "ok"}

    @router.get(
        "/memory/long-term", response_model=PageOut, tags=["long-term"],
        operation_id="listMemories",
    )  # fmt: skip
    def list_memories(
        uid: str = Depends(user),
        limit: int = Query(20, ge=1, le=MAX_LIMIT),
        offset: int = Query(0, ge=0, le=10**12),
    ) -> Any:
        """List the user's long-term memories (oldest first) with the total for paging."""
        return mem.get_all(uid, limit=limit, offset=offset).model_dump()

    @router.post(
        "/memory/long-term", response_model=AddOut, status_code=201, tags=["long-term"],
        operation_id="addMemories",
    )  # fmt: skip
    def add_memory(body: AddIn, uid: str = Depends(user)) -> Any:
        """Remember a text or messages: each exchange kept as an episode, facts derived."""
        msgs = body.messages if isinstance(body.messages, str) else [
            m.model_dump() for m in body.messages
        ]  # fmt: skip
        ids = mem.add(
            msgs,
            uid,
            session_id=body.session_id,
            metadata=body.metadata,
            infer=body.infer,
            timestamp=body.timestamp,
        )
        records = []
        for i in ids:
            try:
                records.append(mem.get(i, uid))
            except MemoryNotFoundError:  # an op of the same batch deleted it
                continue
        return {"ids": ids, "memories": records}

    @router.delete("/memory/long-term", tags=["long-term"], operation_id="clearMemories")
    def clear_memories(
        uid: str = Depends(user),
        include_conversations: bool = Query(
            False, description="also delete turns, summaries and the profile"
        ),
    ) -> dict[str, int]:
        """Delete all long-term memories of the user (working memory stays until it expires)."""
        return mem.reset(uid, keep_conversations=not include_conversations)

    @router.get(
        "/memory/long-term/{memory_id}", response_model=MemoryRecord, tags=["long-term"],
        responses=_NOT_FOUND, operation_id="getMemory",
    )  # fmt: skip
    def get_memory(memory_id: str = memory_id, uid: str = Depends(user)) -> Any:
        """One memory; 404 when the user has no memory with this id."""
        return mem.get(memory_id, uid)

    @router.patch(
        "/memory/long-term/{memory_id}", response_model=MemoryRecord, tags=["long-term"],
        responses=_NOT_FOUND, operation_id="updateMemory",
    )  # fmt: skip
    def update_memory(body: UpdateIn, memory_id: str = memory_id, uid: str = Depends(user)) -> Any:
        """Change a memory's text or fields; the change is kept in its history."""
        return mem.update(memory_id, uid, text=body.text, data=body.data)

    @router.delete(
        "/memory/long-term/{memory_id}", tags=["long-term"], responses=_NOT_FOUND,
        operation_id="deleteMemory",
    )  # fmt: skip
    def delete_memory(memory_id: str = memory_id, uid: str = Depends(user)) -> dict[str, Any]:
        """Delete one memory from every index."""
        mem.delete(memory_id, uid)
        return {"deleted": True, "id": memory_id}

    @router.get(
        "/memory/long-term/{memory_id}/history", tags=["long-term"], responses=_NOT_FOUND,
        operation_id="getMemoryHistory",
    )  # fmt: skip
    def memory_history(
        memory_id: str = memory_id, uid: str = Depends(user)
    ) -> list[dict[str, Any]]:
        """How a memory came to be: creation, then each change."""
        return mem.history(memory_id, uid)

    @router.post(
        "/memory/search", response_model=SearchOut, tags=["search"],
        operation_id="searchMemories",
    )  # fmt: skip
    def search(body: SearchIn, uid: str = Depends(user)) -> Any:
        """Hybrid search, best first; each hit explains its score. `offset` pages on."""
        tr: Any = body.time_range
        if isinstance(tr, TimeRangeIn):
            tr = (tr.start, tr.end)
        if body.offset + body.limit > MAX_LIMIT:
            raise ValidationError(
                f"offset + limit must be at most {MAX_LIMIT}, got {body.offset} + {body.limit}"
            )
        hits = mem.search(
            body.query, uid, limit=body.offset + body.limit, filters=body.filters, time_range=tr
        )
        return {"results": [h.model_dump() for h in hits[body.offset :]]}

    @router.get(
        "/memory/recall", response_model=RecallOut, tags=["search"],
        operation_id="recallConversations",
    )  # fmt: skip
    def recall(
        query: str = Query(..., min_length=1, max_length=10_000),
        limit: int = Query(5, ge=1, le=MAX_LIMIT),
        session_id: str | None = Query(None, min_length=1, max_length=256),
        uid: str = Depends(user),
    ) -> Any:
        """Relevant past conversation turns and summaries, best first."""
        return mem.recall(query, uid, limit=limit, session_id=session_id)

    @router.get(
        "/memory/profile", response_model=UserProfile, tags=["profile"],
        operation_id="getProfile",
    )  # fmt: skip
    def get_profile(uid: str = Depends(user)) -> Any:
        """The user's profile document (empty sections when none was written)."""
        return mem.get_profile(uid)

    @router.put(
        "/memory/profile", response_model=UserProfile, tags=["profile"],
        operation_id="updateProfile",
    )  # fmt: skip
    def put_profile(body: ProfileIn, uid: str = Depends(user)) -> Any:
        """Edit profile sections by hand; they are then protected from automatic rewrites."""
        return mem.put_profile(uid, **body.model_dump(exclude_none=True))

    @router.get(
        "/memory/working/{session_id}",
        response_model=WorkingMemoryOut,
        responses={
            404: {"model": ErrorOut, "description": "no active working memory for this session"}
        },
        tags=["working"],
        operation_id="getWorkingMemory",
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

    app.include_router(router)
    return app
