"""Checks of one value at the store boundary: text, key, namespace, a JSON value's types,
depth and numbers, and a put's size; each raises the project's own error."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from langgraph.store.base import InvalidNamespaceError

from langmem_plus.errors import ValidationError

__all__ = [
    "MAX_DEPTH",
    "MAX_INT",
    "MAX_KEY_CHARS",
    "MAX_LABELS",
    "MAX_LABEL_CHARS",
    "MAX_VALUE_FACTOR",
    "check_json",
    "check_key",
    "check_namespace",
    "check_put_size",
    "check_text",
    "has_lone_surrogate",
]

MAX_DEPTH = 100  # nesting of a value or a filter (dicts and lists)
MAX_KEY_CHARS = 1024
MAX_LABEL_CHARS = 1024
MAX_LABELS = 64
MAX_VALUE_FACTOR = 10  # a value's JSON may be this many times config.max_item_chars
MAX_INT = 2**63 - 1


def has_lone_surrogate(text: str) -> bool:
    """True when `text` holds a lone surrogate (U+D800..U+DFFF): not encodable as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_text(name: str, value: Any, *, error: type[ValidationError] = ValidationError) -> str:
    """A string that is valid Unicode (no lone surrogate)."""
    if not isinstance(value, str):
        raise error(f"{name} must be a string, got {type(value).__name__}")
    if has_lone_surrogate(value):
        raise error(f"{name} must be valid Unicode (it holds a lone surrogate such as '\\ud800')")
    return value


def check_key(key: Any) -> str:
    """An item key: a non-empty string of at most 1024 characters, no NUL, valid Unicode."""
    check_text("key", key)
    if not key:
        raise ValidationError("key must be a non-empty string")
    if len(key) > MAX_KEY_CHARS or "\x00" in key:
        raise ValidationError(f"key must be at most {MAX_KEY_CHARS} characters, without NUL")
    return str(key)


def check_namespace(namespace: Any, *, what: str = "namespace") -> tuple[str, ...]:
    """A namespace (or prefix/suffix path): a tuple of labels LangGraph and SQLite accept.

    Labels are non-empty strings without '.' or NUL, valid Unicode, at most 1024 characters;
    at most 64 labels. A list is taken as a tuple; a bare string is refused (it would be
    read as one label per character).
    """
    if not isinstance(namespace, (tuple, list)):
        raise InvalidNamespaceError(
            f"{what} must be a tuple of strings, got {type(namespace).__name__}"
        )
    if len(namespace) > MAX_LABELS:
        raise InvalidNamespaceError(f"{what} has {len(namespace)} labels; at most {MAX_LABELS}")
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(
                f"{what} labels must be strings, got {type(label).__name__}"
            )
        if not label or "." in label or "\x00" in label:
            raise InvalidNamespaceError(
                f"{what} labels must be non-empty and contain no '.' or NUL, got {label[:80]!r}"
            )
        if len(label) > MAX_LABEL_CHARS:
            raise InvalidNamespaceError(f"{what} labels must be at most {MAX_LABEL_CHARS} chars")
        if has_lone_surrogate(label):
            raise InvalidNamespaceError(f"{what} labels must be valid Unicode (lone surrogate)")
    return tuple(namespace)


def check_json(
    value: Any,
    what: str,
    *,
    max_depth: int = MAX_DEPTH,
    max_nodes: int | None = None,
    error: type[ValidationError] = ValidationError,
) -> None:
    """Walk `value` (without recursion) and reject what JSON and SQLite cannot hold exactly.

    Dict keys must be strings; leaves must be strings (valid Unicode), booleans, None,
    finite floats or integers that fit 64 bits; nesting at most `max_depth` (a cycle
    exceeds it); at most `max_nodes` nodes when given (bounds the walk of a huge value).
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    nodes = 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if max_nodes is not None and nodes > max_nodes:
            raise error(f"{what} is too large (more than {max_nodes} elements)")
        if isinstance(node, str):
            if has_lone_surrogate(node):
                raise error(f"{what} holds a string with a lone surrogate (not valid Unicode)")
        elif node is None or isinstance(node, bool):
            continue
        elif isinstance(node, int):
            if not -MAX_INT - 1 <= node <= MAX_INT:
                raise error(f"{what} holds an integer outside the 64-bit range")
        elif isinstance(node, float):
            if not math.isfinite(node):
                raise error(f"{what} holds {node!r}; only finite numbers are valid JSON")
        elif isinstance(node, Mapping):
            if depth >= max_depth:
                raise error(f"{what} is nested deeper than {max_depth} levels")
            for k, v in node.items():
                if not isinstance(k, str):
                    raise error(
                        f"{what} has a non-string key {type(k).__name__}: keys must be strings"
                    )
                if has_lone_surrogate(k):
                    raise error(f"{what} has a key with a lone surrogate (not valid Unicode)")
                stack.append((v, depth + 1))
        elif isinstance(node, (list, tuple)):
            if depth >= max_depth:
                raise error(f"{what} is nested deeper than {max_depth} levels")
            stack.extend((v, depth + 1) for v in node)
        else:
            raise error(f"{what} holds a {type(node).__name__}, which is not JSON-serialisable")


def check_put_size(key: str, value: Mapping[str, Any], index_text: int, max_chars: int) -> None:
    """Refuse a put whose text to index exceeds `max_chars` or whose JSON exceeds 10x that."""
    if index_text > max_chars:
        raise ValidationError(
            f"item {key[:80]!r} has {index_text} characters of text to index; the maximum is "
            f"{max_chars} (MemoryConfig.store.max_item_chars). Split it into smaller items."
        )
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    if size > max_chars * MAX_VALUE_FACTOR:
        raise ValidationError(
            f"item {key[:80]!r} is {size} characters as JSON; the maximum is "
            f"{max_chars * MAX_VALUE_FACTOR} ({MAX_VALUE_FACTOR} x MemoryConfig.store.max_item_chars)"
        )
