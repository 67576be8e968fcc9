"""Code symbol extraction: functions, classes, paths, error types, identifiers."""

from __future__ import annotations

import re

__all__ = ["extract_symbols", "symbol_kind"]

_PATH_RE = re.compile(
    r"(?<![\w/.])(?:\.{0,2}/)?(?:[\w.\-]+/)+[\w.\-]+\.[A-Za-z0-9]{1,8}\b|\b[\w\-]+\.(?:py|ts|tsx|js|jsx|go|rs|java|kt|c|h|cpp|hpp|cs|rb|php|swift|sql|md|json|yaml|yml|toml|sh)\b"
)
_ERROR_RE = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning)\b")
_CLASS_RE = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b")
_CAMEL_FUNC_RE = re.compile(r"\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b")
_SNAKE_RE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_CALL_RE = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def symbol_kind(symbol: str) -> str:
    """Classify a symbol as 'path', 'error', 'class' or 'function'."""
    if "/" in symbol or (re.search(r"\.[A-Za-z0-9]{1,8}$", symbol) and "." in symbol):
        return "path"
    if _ERROR_RE.fullmatch(symbol):
        return "error"
    if symbol[:1].isupper():
        return "class"
    return "function"


def extract_symbols(text: str) -> list[str]:
    """Code symbols mentioned in `text`, de-duplicated in order of first appearance."""
    if not text:
        return []
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []

    def add(m: re.Match[str], group: int = 0) -> None:
        start, end = m.span(group)
        if any(s <= start < e for s, e in taken):
            return
        taken.append((start, end))
        found.append((start, m.group(group)))

    for m in _PATH_RE.finditer(text):
        add(m)
    for m in _ERROR_RE.finditer(text):
        add(m)
    for m in _CLASS_RE.finditer(text):
        add(m)
    for m in _CAMEL_FUNC_RE.finditer(text):
        add(m)
    for m in _SNAKE_RE.finditer(text):
        add(m)
    for m in _CALL_RE.finditer(text):
        name = m.group(1)
        if len(name) > 2 and not name.isupper():
            add(m, 1)
    seen: dict[str, None] = {}
    for _, sym in sorted(found):
        sym = sym.rstrip(".")
        if sym and sym not in seen:
            seen[sym] = None
    return list(seen)
