"""`create_app`: the FastAPI app of the REST API, assembled from its limits, auth and routes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langmem_plus.errors import MissingExtraError, ValidationError
from langmem_plus.memory import Memory
from langmem_plus.server.apikeys import KeyStore, RateLimiter
from langmem_plus.server.limits import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_RATE_PER_MINUTE,
    BodySizeLimit,
    rate_limiter,
)

__all__ = ["create_app"]

_DESCRIPTION = (
    "Long-term memory REST API. Authenticate with `Authorization: Bearer <API key>` "
    "(a user's key acts as its user; an admin key acts for the `X-User-Id` it names). "
    "A server with no API keys trusts `X-User-Id` and listens on loopback only."
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
) -> Any:
    """The FastAPI app serving `memory_or_path` (a `Memory`, a database path, or None = memory).

    Pass a LangGraph `checkpointer` to serve working memory from graph state. `keys` are the
    API keys to accept (default: those stored in the memory's database); while none is active
    the ``X-User-Id`` header is trusted, unless `require_keys` (then every call needs a key).
    `max_body_bytes` caps request bodies; `rate_limit` is each key's requests per minute (or
    a `RateLimiter`, or None for no limit).
    """
    try:
        from fastapi import FastAPI
    except ImportError:
        raise MissingExtraError.for_extra("server", "fastapi") from None
    from langmem_plus.server import routes_memories, routes_profile, routes_search
    from langmem_plus.server.handlers import install_error_handlers

    limiter = rate_limiter(rate_limit)
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
    app.state.checkpointer = checkpointer
    app.state.state_key = state_key
    install_error_handlers(app)
    app.add_api_route("/health", health, methods=["GET"], tags=["meta"], operation_id="health")
    for routes in (routes_memories, routes_search, routes_profile):
        app.include_router(routes.router)
    return app
