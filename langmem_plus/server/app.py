"""`create_app`: the FastAPI app of the REST API, assembled from its limits, auth and routes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langmem_plus.errors import MissingExtraError, ValidationError
from langmem_plus.memory import Memory
from langmem_plus.server.apikeys import KeyStore, RateLimiter
from langmem_plus.server.limits import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_MESSAGES,
    DEFAULT_RATE_PER_MINUTE,
    DEFAULT_WORK_PER_MINUTE,
    BodySizeLimit,
    WorkLimits,
    rate_limiter,
)

__all__ = ["create_app"]

_DESCRIPTION = (
    "Long-term memory REST API. Authenticate with `Authorization: Bearer <API key>` "
    "(a user's key acts as its user; an admin key acts for the `X-User-Id` it names). "
    "A server with no API keys trusts `X-User-Id` and listens on loopback only. Once a key "
    "is active, every route but `/health` needs one, this schema and `/docs` included."
)


def health() -> dict[str, str]:
    """Liveness check."""
    return {"status": "ok"}


def create_app(
    memory_or_path: Memory | str | Path | None = None,
    *,
    checkpointer: Any = None,
    state_key: str = "working_memory",
    keys: KeyStore | None = None,
    require_keys: bool = False,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    rate_limit: RateLimiter | float | None = DEFAULT_RATE_PER_MINUTE,
    allowed_hosts: Sequence[str] | None = None,
    max_messages: int = DEFAULT_MAX_MESSAGES,
    max_chars: int = DEFAULT_MAX_CHARS,
    work_limit: RateLimiter | float | None = DEFAULT_WORK_PER_MINUTE,
) -> Any:
    """The FastAPI app serving `memory_or_path` (a `Memory`, a database path, or None = memory).

    Pass a LangGraph `checkpointer` to serve working memory from graph state. `keys` are the
    API keys to accept (default: those stored in the memory's database); while none is active
    the ``X-User-Id`` header is trusted, unless `require_keys` (then every call needs a key),
    and only from a loopback ``Host``: `allowed_hosts` adds host names (``"*"``: any).
    `max_body_bytes` caps request bodies; `rate_limit` is each key's requests per minute (or
    a `RateLimiter`, or None for no limit). A write carries at most `max_messages` messages
    and `max_chars` characters (413), and costs its key work units (`work_limit` a minute, or
    a `RateLimiter`, or None; 429): see `server/limits.py`.
    """
    try:
        from fastapi import FastAPI
    except ImportError:
        raise MissingExtraError.for_extra("server", "fastapi") from None
    from langmem_plus.server import routes_memories, routes_profile, routes_search
    from langmem_plus.server.handlers import install_error_handlers

    limiter = rate_limiter(rate_limit)
    work = WorkLimits.build(max_messages, max_chars, work_limit)
    hosts = _host_names(allowed_hosts)
    mem = memory_or_path if isinstance(memory_or_path, Memory) else Memory(memory_or_path)
    if keys is not None and not isinstance(keys, KeyStore):
        raise ValidationError(f"keys must be a KeyStore, got {type(keys).__name__}")
    app = FastAPI(
        title="langmem_plus",
        version="0.1.0",
        # No slash redirects: `DELETE /memory/long-term/` (an empty id) would be sent on to
        # `DELETE /memory/long-term` (delete all) by every client that follows redirects.
        redirect_slashes=False,
        description=_DESCRIPTION,
        # served by `_add_docs` behind the same access check as every route, with the docs'
        # scripts and styles from this server (they render offline)
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
    )
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes)
    app.state.memory = mem
    if keys is None and getattr(mem.store, "uri", None) is not None:
        raise ValidationError(
            "a Milvus store keeps no API keys: pass keys=KeyStore.open('keys.db') (a SQLite "
            "file the servers share)"
        )
    app.state.keys = keys if keys is not None else KeyStore(mem.store.db)
    app.state.rate_limiter = limiter
    app.state.require_keys = require_keys
    app.state.allowed_hosts = hosts
    app.state.work_limits = work
    app.state.checkpointer = checkpointer
    app.state.state_key = state_key
    install_error_handlers(app)
    app.add_api_route("/health", health, methods=["GET"], tags=["meta"], operation_id="health")
    for routes in (routes_memories, routes_search, routes_profile):
        app.include_router(routes.router)
    _add_docs(app)
    return app


def _host_names(allowed_hosts: Sequence[str] | None) -> frozenset[str] | None:
    """The extra host names a keyless server answers to, lower-cased (None: loopback only)."""
    if allowed_hosts is None:
        return None
    if isinstance(allowed_hosts, str) or not all(
        isinstance(h, str) and h.strip() for h in allowed_hosts
    ):
        raise ValidationError(f"allowed_hosts must be a list of host names, got {allowed_hosts!r}")
    return frozenset(h.strip().lower().rstrip(".") for h in allowed_hosts)


def _add_docs(app: Any) -> None:
    """`/openapi.json`, `/docs` and `/redoc`, behind the access check of every other route:
    with a key active they need one (any key: they act for no user). The pages' scripts and
    styles are served from `/docs-assets` (`docs_pages`), so they render offline."""
    from fastapi import Depends
    from fastapi.responses import JSONResponse

    from langmem_plus.server.auth import authorised
    from langmem_plus.server.docs_pages import install_docs

    def openapi(_: None = Depends(authorised)) -> JSONResponse:
        return JSONResponse(app.openapi())

    app.add_api_route("/openapi.json", openapi, methods=["GET"], include_in_schema=False)
    install_docs(app, "langmem_plus API", dependencies=[Depends(authorised)])
