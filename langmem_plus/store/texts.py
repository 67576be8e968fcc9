"""The texts of an item's value that are indexed: LangGraph's `index` field paths, `"$"` for
every string in the value, and the fallback to every string when the fields find none."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langgraph.store.base import get_text_at_path, tokenize_path

__all__ = ["FieldPath", "field_paths", "string_leaves", "value_texts"]

FieldPath = tuple[str, Any]
"""A field path as written and as tokenized (`"$"` stays `"$"`)."""


def field_paths(fields: Sequence[str]) -> list[FieldPath]:
    """Tokenize LangGraph index field paths once (`"$"` means the whole value)."""
    return [(p, tokenize_path(p)) if p != "$" else (p, p) for p in fields]


def string_leaves(value: Any, out: list[str]) -> None:
    """Append every string inside `value` (dicts, lists and tuples walked in order)."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, Mapping):
        for v in value.values():
            string_leaves(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            string_leaves(v, out)


def value_texts(
    value: Mapping[str, Any],
    default_paths: Sequence[FieldPath],
    index: Literal[False] | list[str] | None,
) -> list[tuple[str, str]]:
    """(path, text) pairs to index for `value`: a put's own `index` list, or the store's
    default fields (`index=None`; when they find nothing, every string in the value), or
    nothing (`index=False`)."""
    if index is False:
        return []
    paths = default_paths if index is None else field_paths(index)
    out: list[tuple[str, str]] = []
    for path, tok in paths:
        if tok == "$":
            leaves: list[str] = []
            string_leaves(value, leaves)
            if leaves:
                out.append((path, " ".join(leaves)))
            continue
        texts = get_text_at_path(value, tok)
        if len(texts) > 1:
            out.extend((f"{path}.{i}", t) for i, t in enumerate(texts) if t)
        elif texts and texts[0]:
            out.append((path, texts[0]))
    if not out and index is None:
        leaves = []
        string_leaves(value, leaves)
        if leaves:
            out.append(("$", " ".join(leaves)))
    return out
