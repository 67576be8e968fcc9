"""Request limits of the REST API: the body size cap (ASGI middleware), the per-key rate, and
the work one request and one key may ask for.

Work is what a write costs the server after the body is parsed: keeping each message as an
episode and deriving facts from it (about 6 ms a message, and 3 ms per 1,000 characters, on
2 cores). One request carries at most `max_messages` messages and `max_chars` characters
(413 above), and each key has a budget of work units a minute (429 with ``Retry-After``): a
message counts 1 unit, and every `CHARS_PER_UNIT` characters one more.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from langmem_plus.errors import ValidationError
from langmem_plus.server.apikeys import RateLimiter

__all__ = [
    "CHARS_PER_UNIT",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_MESSAGES",
    "DEFAULT_RATE_PER_MINUTE",
    "DEFAULT_WORK_PER_MINUTE",
    "BodySizeLimit",
    "WorkLimits",
    "rate_limiter",
]

DEFAULT_MAX_BODY_BYTES = 1 << 20
DEFAULT_RATE_PER_MINUTE = 600.0
DEFAULT_MAX_MESSAGES = 100
DEFAULT_MAX_CHARS = 100_000  # what one episode (the exchange as one text) may hold
DEFAULT_WORK_PER_MINUTE = 1200.0
CHARS_PER_UNIT = 2000

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


@dataclass(frozen=True)
class WorkLimits:
    """What one request may carry (`max_messages`, `max_chars`, counting one character per
    message for the line between them) and each key's budget of work units (None: none)."""

    max_messages: int = DEFAULT_MAX_MESSAGES
    max_chars: int = DEFAULT_MAX_CHARS
    budget: RateLimiter | None = None

    def __post_init__(self) -> None:
        for name in ("max_messages", "max_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValidationError(f"{name} must be a positive integer, got {value!r}")

    @staticmethod
    def units(messages: int, chars: int) -> int:
        """Work units of `messages` messages holding `chars` characters."""
        return messages + chars // CHARS_PER_UNIT

    @classmethod
    def build(
        cls, max_messages: int, max_chars: int, per_minute: RateLimiter | float | None
    ) -> WorkLimits:
        """The limits, the budget made from units per minute (a burst that admits the
        largest request) or given as a RateLimiter (its burst must admit it)."""
        plain = cls(max_messages, max_chars)
        if per_minute is None:
            return plain
        largest = cls.units(max_messages, max_chars)
        if isinstance(per_minute, RateLimiter):
            budget = per_minute
        elif isinstance(per_minute, bool) or not isinstance(per_minute, (int, float)):
            raise ValidationError(
                f"work_limit must be work units per minute, a RateLimiter or None, "
                f"got {per_minute!r}"
            )
        else:
            default = RateLimiter(float(per_minute))  # checks it is positive and finite
            budget = RateLimiter(float(per_minute), burst=max(default.burst, largest))
        if budget.burst < largest:
            raise ValidationError(
                f"the work budget's burst ({budget.burst}) must admit the largest request "
                f"({largest} units: {max_messages} messages, {max_chars} characters)"
            )
        return cls(max_messages, max_chars, budget)
