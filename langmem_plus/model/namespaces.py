"""User ids as namespace labels: one reversible escaping, used by every interface.

LangGraph namespace labels cannot contain '.', so a user id such as ``john.smith`` must be
escaped before it becomes a label. Escaping (never replacing) keeps the mapping injective:
``john.smith`` becomes ``john%2Esmith`` and ``john_smith`` stays itself, so two users can
never share a namespace. Ids made only of ordinary characters (no '.', '%', control or
format characters) are unchanged, so existing databases keep their namespaces.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from langmem_plus.errors import ValidationError

__all__ = [
    "MAX_USER_ID",
    "MEMORY_ROOT",
    "check_user_id",
    "escape_label",
    "fill_template",
    "unescape_label",
    "user_namespace",
]

MEMORY_ROOT = "memories"
MAX_USER_ID = 256
_ESCAPE_RE = re.compile(r"%[0-9A-F]{2}")


def _needs_escape(ch: str) -> bool:
    # '.', the escape character itself, and everything invisible (controls, format characters
    # such as bidi overrides, separators other than the plain space, surrogates)
    if ch in ".%":
        return True
    cat = unicodedata.category(ch)
    return cat[0] == "C" or cat in ("Zl", "Zp")


def check_user_id(value: Any, name: str = "user_id") -> str:
    """A user id: a non-blank string of at most 256 characters without lone surrogates."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{name} must be a non-empty string, got {value!r}")
    if len(value) > MAX_USER_ID:
        raise ValidationError(f"{name} must be at most {MAX_USER_ID} characters")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        raise ValidationError(f"{name} must be valid Unicode (it holds a lone surrogate)")
    return value


def escape_label(user_id: str) -> str:
    """The namespace label for `user_id`: '.', '%' and invisible characters as %XX (UTF-8)."""
    if not any(_needs_escape(c) for c in user_id):
        return user_id
    out = []
    for ch in user_id:
        if _needs_escape(ch):
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")))
        else:
            out.append(ch)
    return "".join(out)


def unescape_label(label: str) -> str:
    """The user id a label was made from (the inverse of `escape_label`)."""
    if "%" not in label:
        return label
    raw = bytearray()
    pos = 0
    for m in _ESCAPE_RE.finditer(label):
        raw += label[pos : m.start()].encode("utf-8", "surrogatepass")
        raw.append(int(m.group()[1:], 16))
        pos = m.end()
    raw += label[pos:].encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "surrogatepass")


def user_namespace(user_id: str, root: str = MEMORY_ROOT) -> tuple[str, str]:
    """The namespace of a user's memories: ``(root, escape_label(user_id))``."""
    return (root, escape_label(check_user_id(user_id)))


def fill_template(template: Sequence[str], user_id: str) -> tuple[str, ...]:
    """Fill ``{user_id}`` in a namespace template with the user's escaped label."""
    label = escape_label(check_user_id(user_id))
    return tuple(str(p).replace("{user_id}", label) for p in template)
