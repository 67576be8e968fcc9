"""Who a REST call acts for: the API key (or the trusted ``X-User-Id``), checked per request.

A user's key acts as its user (an ``X-User-Id`` naming anyone else is 403); an admin key acts
for the user its ``X-User-Id`` names; while no key is active (and keys are not required) the
header is trusted. Each key's calls pass the app's rate limiter (429 with ``Retry-After``).
The app's key store, limiter and `require_keys` live on ``app.state`` (set by `create_app`).
Needs the ``[server]`` extra (FastAPI); `create_app` imports this module only once it is there.
"""

from __future__ import annotations

import math

from fastapi import Depends, Header, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from langmem_plus.errors import ValidationError
from langmem_plus.memory import Memory
from langmem_plus.memory.checks import check_label
from langmem_plus.server.apikeys import ApiKey, AuthenticationError
from langmem_plus.server.userheader import decode_user_header

__all__ = ["bearer", "caller", "memory_of"]

bearer = HTTPBearer(
    auto_error=False,
    description="an API key from `langmem-plus keys create` (needed once any key exists)",
)

_CHALLENGE = {"WWW-Authenticate": "Bearer"}


def _deny(status: int, detail: str, headers: dict[str, str] | None = None) -> HTTPException:
    return HTTPException(status_code=status, detail=detail, headers=headers)


def memory_of(request: Request) -> Memory:
    """The `Memory` the app serves."""
    memory: Memory = request.app.state.memory
    return memory


def _key(request: Request, credentials: HTTPAuthorizationCredentials | None) -> ApiKey | None:
    """The caller's key; None only while the server trusts X-User-Id."""
    state = request.app.state
    if credentials is None:
        if state.require_keys or state.keys.active_count() > 0:
            raise _deny(401, "this server needs an API key: Authorization: Bearer <key>",
                        _CHALLENGE)  # fmt: skip
        return None
    try:
        key: ApiKey = state.keys.authenticate(credentials.credentials)
    except AuthenticationError as exc:
        raise _deny(401, str(exc), _CHALLENGE) from None
    return key


def _within_rate(request: Request, key: ApiKey) -> None:
    limiter = request.app.state.rate_limiter
    if limiter is None:
        return
    wait = limiter.acquire(key.key_id)
    if wait > 0:
        raise _deny(429, f"rate limit reached; retry in {wait:.1f} s",
                    {"Retry-After": str(max(1, math.ceil(wait)))})  # fmt: skip


def caller(
    request: Request,
    credentials: HTTPAuthorizationCredentials | None = Depends(bearer),
    x_user_id: str | None = Header(
        None,
        alias="X-User-Id",
        description="the user to act for: required without a key, or with an admin key; "
        "with a user's key it may only name that user",
    ),
) -> str:
    """The user id the call acts for (a FastAPI dependency); 400/401/403/422/429 otherwise."""
    if x_user_id is not None:
        try:
            x_user_id = decode_user_header(x_user_id)
        except ValidationError as exc:
            raise _deny(400, str(exc)) from None
    key = _key(request, credentials)
    if key is not None:
        _within_rate(request, key)
    if key is not None and not key.admin:
        assert key.user_id is not None
        if x_user_id is not None and x_user_id != key.user_id:
            raise _deny(403, "this API key acts for one user; X-User-Id names another")
        return key.user_id
    if x_user_id is None:
        need = "an admin key must name the user" if key is not None else "it is required"
        raise _deny(422, f"X-User-Id header missing: {need}")
    return check_label("X-User-Id", x_user_id)
