"""Who a REST call acts for: the API key (or the trusted ``X-User-Id``), checked per request.

A user's key acts as its user (an ``X-User-Id`` naming anyone else is 403); an admin key acts
for the user its ``X-User-Id`` names; while no key is active (and keys are not required) the
header is trusted, and then only from a loopback ``Host`` (``localhost``, ``127.0.0.0/8``,
``::1``, or a name in ``allowed_hosts``): a web page that rebinds its own name to 127.0.0.1
sends its own name, and is refused (400). Each key's calls pass the app's rate limiter (429
with ``Retry-After``). The app's key store, limiter, `require_keys` and allowed hosts live on
``app.state`` (set by `create_app`); the key that authorised a call (or ``None``) is left on
``request.state.key`` for the routes' work budget. Needs the ``[server]`` extra (FastAPI);
`create_app` imports this module only once it is there.
"""

from __future__ import annotations

import ipaddress
import math

from fastapi import Depends, Header, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from langmem_plus.errors import ValidationError
from langmem_plus.memory import Memory
from langmem_plus.memory.checks import check_label
from langmem_plus.server.apikeys import ApiKey, AuthenticationError
from langmem_plus.server.limits import CHARS_PER_UNIT
from langmem_plus.server.userheader import decode_user_header

__all__ = ["authorised", "bearer", "caller", "charge_work", "host_allowed", "memory_of"]

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


def host_allowed(host_header: str | None, allowed: frozenset[str] | None) -> bool:
    """Whether a request's ``Host`` names this machine's loopback (``localhost``, an address
    in 127.0.0.0/8 or ``::1``, any port) or a name in `allowed` (``*`` allows any)."""
    if allowed is not None and "*" in allowed:
        return True
    host = (host_header or "").strip().lower()
    if host.startswith("["):  # [::1]:8000
        host = host[1 : host.find("]")] if "]" in host else ""
    elif host.count(":") == 1:  # name:port (a bare IPv6 address has more colons)
        host = host.split(":", 1)[0]
    host = host.rstrip(".")
    if host == "localhost" or (allowed is not None and host in allowed):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _key(request: Request, credentials: HTTPAuthorizationCredentials | None) -> ApiKey | None:
    """The caller's key; None only while the server trusts X-User-Id (from a loopback Host)."""
    state = request.app.state
    if credentials is None:
        if state.require_keys or state.keys.active_count() > 0:
            raise _deny(401, "this server needs an API key: Authorization: Bearer <key>",
                        _CHALLENGE)  # fmt: skip
        if not host_allowed(request.headers.get("host"), state.allowed_hosts):
            raise _deny(
                400,
                "this server has no API key, so it trusts X-User-Id only from a loopback Host "
                "(localhost, 127.0.0.1, [::1]); create a key, or allow the host name "
                "(create_app(allowed_hosts=...), serve --allowed-host)",
            )
        request.state.key = None
        return None
    try:
        key: ApiKey = state.keys.authenticate(credentials.credentials)
    except AuthenticationError as exc:
        raise _deny(401, str(exc), _CHALLENGE) from None
    request.state.key = key
    return key


def _within_rate(request: Request, key: ApiKey) -> None:
    limiter = request.app.state.rate_limiter
    if limiter is None:
        return
    wait = limiter.acquire(key.key_id)
    if wait > 0:
        raise _deny(429, f"rate limit reached; retry in {wait:.1f} s",
                    {"Retry-After": str(max(1, math.ceil(wait)))})  # fmt: skip


def authorised(
    request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(bearer)
) -> None:
    """Any valid key, or a trusted loopback call while no key is active (a FastAPI dependency
    of the routes that act for no user: the schema and the docs); 400/401/429 otherwise."""
    key = _key(request, credentials)
    if key is not None:
        _within_rate(request, key)


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


def charge_work(request: Request, messages: int, chars: int) -> None:
    """Refuse a write over the request limits (413) or over its key's work budget (429).

    `messages` and `chars` are what the write carries (see `server/limits.py`); the budget
    is the key's that authorised the call (a call without a key has none to spend).
    """
    limits = request.app.state.work_limits
    if messages > limits.max_messages:
        raise _deny(
            413,
            f"{messages} messages in one request; at most {limits.max_messages} are accepted: "
            "send them in several requests",
        )
    if chars > limits.max_chars:
        raise _deny(
            413,
            f"{chars} characters in one request; at most {limits.max_chars} are accepted: "
            "send them in several requests",
        )
    key: ApiKey | None = getattr(request.state, "key", None)
    if limits.budget is None or key is None:
        return
    units = limits.units(messages, chars)
    wait = limits.budget.acquire(key.key_id, units)
    if wait > 0:
        raise _deny(
            429,
            f"work budget of this key reached ({units} units asked; a message counts 1, every "
            f"{CHARS_PER_UNIT} characters 1 more); retry in {wait:.1f} s",
            {"Retry-After": str(max(1, math.ceil(wait)))},
        )
