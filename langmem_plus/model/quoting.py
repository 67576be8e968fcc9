"""One quoting for every stored string shown to a model (injected context and tool outputs).

Recalled text is data, not instructions, so it must not be able to end the block it sits in,
start a line of its own (where it could pose as ``SYSTEM:``), or hide characters from a reader.
`quote_data` turns any string into a one-line JSON string literal in which:

* ``&``, ``<``, ``>`` and ``"`` are XML entities, so no tag can open or close and the only raw
  double quotes are the two delimiters (safe in attribute position: ``category="..."``);
* every control, format, private-use, unassigned or surrogate code point and every line or
  paragraph separator (category C*, Zl, Zp: ``\\n``, U+0085, U+2028, bidi overrides and
  isolates, tag characters U+E0000-U+E007F, ...) is a visible JSON escape (``\\n``, ``\\t``, ...
  or ``\\uXXXX``, a surrogate pair above U+FFFF), and ``\\`` is ``\\\\``.

The quoting is lossless: `unquote_data` gives back the original string, unless `max_chars`
cut it (marked by a trailing ``…``) or it held a high and a low surrogate code point side by
side (not valid Unicode; the stores refuse it), which come back as the one character they encode.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache

from langmem_plus.errors import ValidationError

__all__ = ["needs_escape", "quote_data", "unquote_data"]

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
_SHORT = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_UNENTITY = re.compile(r"&(amp|lt|gt|quot);")
_FROM_ENTITY = {"amp": "&", "lt": "<", "gt": ">", "quot": '"'}
_ELLIPSIS = "…"


@lru_cache(maxsize=4096)
def needs_escape(ch: str) -> bool:
    """Whether `ch` is invisible or breaks a line: category C* (control, format, surrogate,
    private use, unassigned), Zl or Zp."""
    cat = unicodedata.category(ch)
    return cat[0] == "C" or cat in ("Zl", "Zp")


def _piece(ch: str) -> str:
    if ch in _ENTITIES:
        return _ENTITIES[ch]
    if ch in _SHORT:
        return _SHORT[ch]
    if not needs_escape(ch):
        return ch
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def quote_data(text: str, max_chars: int | None = None) -> str:
    """`text` as one safe, visible, reversible line: a JSON string literal (see module doc).

    With `max_chars`, the whole literal (quotes included) is at most that long (at least the
    quotes and an ellipsis); a cut is marked by a trailing ``…``.
    """
    if not isinstance(text, str):
        text = str(text)
    if max_chars is not None and (not isinstance(max_chars, int) or isinstance(max_chars, bool)):
        raise ValidationError(f"max_chars must be an int or None, got {max_chars!r}")
    pieces = [_piece(c) for c in text]
    body = "".join(pieces)
    if max_chars is None or len(body) + 2 <= max_chars:
        return f'"{body}"'
    room = max(0, max_chars - 3)  # two quotes and the ellipsis
    out: list[str] = []
    used = 0
    for p in pieces:
        if used + len(p) > room:
            break
        out.append(p)
        used += len(p)
    return '"' + "".join(out) + _ELLIPSIS + '"'


def unquote_data(quoted: str) -> str:
    """The string `quote_data` was given (the inverse of `quote_data` without a cut)."""
    try:
        raw = json.loads(quoted)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"not a quoted data string: {quoted[:40]!r}") from exc
    if not isinstance(raw, str):
        raise ValidationError(f"not a quoted data string: {quoted[:40]!r}")
    return _UNENTITY.sub(lambda m: _FROM_ENTITY[m.group(1)], raw)
