"""Reading the ``X-User-Id`` header: the user id it names, decoded strictly as UTF-8."""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from langmem_plus.errors import ValidationError

__all__ = ["PERCENT_PREFIX", "decode_user_header"]

PERCENT_PREFIX = "UTF-8''"


def decode_user_header(raw: str) -> str:
    """The user id an ``X-User-Id`` header value names; ValidationError when it is not UTF-8.

    HTTP servers hand header values over decoded as Latin-1, so raw UTF-8 bytes arrive as
    mojibake (用户 would name another user): they are re-decoded, strictly. A value starting
    with ``UTF-8''`` is percent-encoded UTF-8 (RFC 8187), for clients that send ASCII only;
    an id that itself starts with that prefix must be sent that way.
    """
    try:
        data = raw.encode("latin-1")
        if raw.startswith(PERCENT_PREFIX):
            data = unquote_to_bytes(raw[len(PERCENT_PREFIX) :])
        return data.decode("utf-8")
    except UnicodeError:
        raise ValidationError(
            "X-User-Id must be UTF-8 (raw, or percent-encoded after the prefix UTF-8'')"
        ) from None
