"""REST API over `Memory`: FastAPI, OpenAPI schema at ``/openapi.json``.

Every call acts for one user. With API keys configured (``langmem-plus keys create``), a call
needs ``Authorization: Bearer <key>``: a user's key acts as that user (an ``X-User-Id`` naming
anyone else is 403), an admin key acts for the user its ``X-User-Id`` names. With no key
configured the ``X-User-Id`` header is trusted as is, which is why ``langmem-plus serve``
then binds loopback only, and the app answers only to a loopback ``Host`` (DNS rebinding;
``allowed_hosts`` adds names). The schema (``/openapi.json``) and ``/docs`` pass the same check
as every route. User ids: 1-256 characters, valid Unicode (model/namespaces.py escapes
them); ``X-User-Id`` carries them as UTF-8, either raw or percent-encoded after the RFC 8187
prefix ``UTF-8''`` (``UTF-8''%E7%94%A8%E6%88%B7`` is 用户), anything else is a 400. Paths are
exact (no slash redirects). Bodies over ``max_body_bytes`` are refused (413) before any
parsing; each key gets a token-bucket rate limit (429 with ``Retry-After``); a write carries
at most ``max_messages`` messages and ``max_chars`` characters (413) and spends its key's
budget of work units (429; see ``server/limits.py``). Bad input gets
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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langmem_plus.server.app import create_app
    from langmem_plus.server.limits import (
        DEFAULT_MAX_BODY_BYTES,
        DEFAULT_RATE_PER_MINUTE,
        BodySizeLimit,
    )
    from langmem_plus.server.userheader import decode_user_header

# FastAPI loads on first use: the MCP server and the CLI use `server.apikeys` without it
_LAZY = {
    "DEFAULT_MAX_BODY_BYTES": "langmem_plus.server.limits",
    "DEFAULT_RATE_PER_MINUTE": "langmem_plus.server.limits",
    "BodySizeLimit": "langmem_plus.server.limits",
    "create_app": "langmem_plus.server.app",
    "decode_user_header": "langmem_plus.server.userheader",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'langmem_plus.server' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_RATE_PER_MINUTE",
    "BodySizeLimit",
    "create_app",
    "decode_user_header",
]
