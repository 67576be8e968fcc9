"""How the REST API answers errors: one ``{"detail": ...}`` line, never a 500 for bad input.

Request validation failures are 422 with ``errors`` (one entry per field, the rejected value
not echoed); the project's own errors map to 404 (not found), 422 (invalid) or 400 (the rest).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from langmem_plus.errors import (
    InvalidNamespaceError,
    LangmemPlusError,
    MemoryNotFoundError,
    ValidationError,
)

__all__ = ["install_error_handlers"]


def _error(status: int, exc: Exception) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, status_code=status)


async def _request_invalid(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
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


def _status_handler(status: int) -> Any:
    async def handler(_: Request, exc: Exception) -> JSONResponse:
        return _error(status, exc)

    return handler


def install_error_handlers(app: FastAPI) -> None:
    """Register the API's error answers on `app`."""
    app.add_exception_handler(RequestValidationError, _request_invalid)
    app.add_exception_handler(MemoryNotFoundError, _status_handler(404))
    app.add_exception_handler(ValidationError, _status_handler(422))
    app.add_exception_handler(InvalidNamespaceError, _status_handler(422))
    app.add_exception_handler(LangmemPlusError, _status_handler(400))
