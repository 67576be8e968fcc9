"""Request limits of the REST API: the body size cap (ASGI middleware) and the per-key rate."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from langmem_plus.errors import ValidationError
from langmem_plus.server.apikeys import RateLimiter

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_RATE_PER_MINUTE", "BodySizeLimit", "rate_limiter"]

DEFAULT_MAX_BODY_BYTES = 1 << 20
DEFAULT_RATE_PER_MINUTE = 600.0

_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]
_ASGIApp = Callable[[_Scope, _Receive, _Send], Awaitable[None]]


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


def rate_limiter(rate_limit: RateLimiter | float | None) -> RateLimiter | None:
    """`rate_limit` as a RateLimiter: requests per minute per key, a RateLimiter, or None."""
    if rate_limit is None or isinstance(rate_limit, RateLimiter):
        return rate_limit
    if isinstance(rate_limit, bool) or not isinstance(rate_limit, (int, float)):
        raise ValidationError(
            f"rate_limit must be requests per minute, a RateLimiter or None, got {rate_limit!r}"
        )
    return RateLimiter(float(rate_limit))
