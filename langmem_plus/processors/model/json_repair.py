"""Cut a model's JSON answer out of its text and repair it (fences, prose around it, trailing
commas, single quotes, Python literals, an answer cut off), then fit it to a schema."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

__all__ = ["extract_json", "parse_into"]

T = TypeVar("T", bound=BaseModel)

_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA_RE = re.compile(r",\s*([}\]])")
_SINGLE_QUOTED_RE = re.compile(r"'((?:[^'\\]|\\.)*)'")
_PY_LITERALS = ((r"\bTrue\b", "true"), (r"\bFalse\b", "false"), (r"\bNone\b", "null"))


def _balanced_object(text: str, close_truncated: bool = True) -> str | None:
    """The first balanced {...} (or [...]) block of `text`, respecting strings; a block cut
    off mid-answer is closed, or ``None`` when `close_truncated` is false."""
    start = next((i for i, ch in enumerate(text) if ch in "{["), -1)
    if start < 0:
        return None
    pairs = {"{": "}", "[": "]"}
    stack: list[str] = []
    in_str: str | None = None
    escape = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == in_str:
                in_str = None
            continue
        if ch in "\"'":
            in_str = ch
        elif ch in pairs:
            stack.append(pairs[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
            if not stack:
                return text[start : i + 1]
    if not close_truncated:
        return None
    tail = in_str or ""
    return text[start:] + tail + "".join(reversed(stack))


def _repairs(block: str) -> list[str]:
    fixed = _TRAILING_COMMA_RE.sub(r"\1", block)
    candidates = [block, fixed]
    quoted = _SINGLE_QUOTED_RE.sub(lambda m: json.dumps(m.group(1)), fixed)
    for pattern, repl in _PY_LITERALS:
        quoted = re.sub(pattern, repl, quoted)
    candidates.append(quoted)
    return candidates


def extract_json(text: str, *, close_truncated: bool = True) -> Any:
    """The first JSON object/array found in a model's text answer, repaired if needed
    (code fences, prose around it, trailing commas, single quotes, Python literals, and an
    answer cut off mid-way unless `close_truncated` is false). ``None`` when nothing parses."""
    if not isinstance(text, str) or not text.strip():
        return None
    sources = [m.group(1) for m in _FENCE_RE.finditer(text)] + [text]
    for source in sources:
        block = _balanced_object(source, close_truncated)
        if block is None:
            continue
        for candidate in _repairs(block):
            try:
                return json.loads(candidate)
            except (ValueError, TypeError):
                continue
    return None


def parse_into(schema: type[T], data: Any, *, close_truncated: bool = True) -> T | None:
    """Validate `data` (a dict, a JSON string, or a list for single-list schemas) as
    `schema`; ``None`` when it does not fit (or, without `close_truncated`, is cut off)."""
    if isinstance(data, schema):
        return data
    if isinstance(data, str):
        data = extract_json(data, close_truncated=close_truncated)
    if data is None:
        return None
    if isinstance(data, list):
        list_fields = [
            name
            for name, field in schema.model_fields.items()
            if getattr(field.annotation, "__origin__", None) is list
        ]
        if len(list_fields) != 1:
            return None
        data = {list_fields[0]: data}
    if isinstance(data, dict) and len(data) == 1:
        # some models wrap the answer: {"Schema": {...}} or {"properties": {...}}
        ((key, inner),) = data.items()
        if key not in schema.model_fields and isinstance(inner, dict):
            data = inner
    try:
        return schema.model_validate(data)
    except PydanticValidationError:
        return None
