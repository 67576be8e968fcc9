"""Filter matching with LangGraph `InMemoryStore` semantics, plus dotted paths and `$in`/`$nin`.

Deliberate differences from InMemoryStore: a key containing dots (``"metadata.who"``) is read
as a path when the value has no such literal key; comparison operators on a missing or
non-numeric field are False instead of raising TypeError.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langmem_plus.errors import InvalidQueryError

__all__ = ["MAX_FILTER_DEPTH", "matches", "validate_filter"]

MAX_FILTER_DEPTH = 100
_MAX_FILTER_NODES = 100_000
_OPS = {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"}
_MISSING = object()


def validate_filter(flt: Any) -> None:
    """Reject filters that are not dicts, use unknown `$` operators or nest deeper than
    `MAX_FILTER_DEPTH` (clear `InvalidQueryError`, no search; walked without recursion)."""
    if flt is None:
        return
    if not isinstance(flt, Mapping):
        raise InvalidQueryError(f"filter must be a dict, got {type(flt).__name__}")
    # (node, depth, whether the node is a condition; operator arguments are plain data)
    stack: list[tuple[Any, int, bool]] = [(flt, 0, True)]
    seen = 0
    while stack:
        node, depth, cond = stack.pop()
        seen += 1
        if seen > _MAX_FILTER_NODES:
            raise InvalidQueryError(f"filter is too large (over {_MAX_FILTER_NODES} elements)")
        if isinstance(node, (Mapping, list, tuple, set, frozenset)) and depth >= MAX_FILTER_DEPTH:
            raise InvalidQueryError(f"filter is nested deeper than {MAX_FILTER_DEPTH} levels")
        if isinstance(node, (list, tuple, set, frozenset)):
            stack.extend((v, depth + 1, cond) for v in node)
            continue
        if not isinstance(node, Mapping):
            continue
        for k, v in node.items():
            if not cond:
                stack.append((v, depth + 1, False))
                continue
            if not isinstance(k, str):
                raise InvalidQueryError(f"filter keys must be strings, got {k!r:.80}")
            if k.startswith("$"):
                if k not in _OPS:
                    raise InvalidQueryError(
                        f"unsupported filter operator {k[:80]!r}; use one of {sorted(_OPS)}"
                    )
                if k in ("$in", "$nin") and not isinstance(v, (list, tuple, set)):
                    raise InvalidQueryError(f"{k} takes a list, got {type(v).__name__}")
                stack.append((v, depth + 1, False))
            else:
                stack.append((v, depth + 1, True))


def _lookup(value: Any, key: str) -> Any:
    if not isinstance(value, Mapping):
        return _MISSING
    if key in value:
        return value[key]
    if "." in key:
        node: Any = value
        for part in key.split("."):
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            else:
                return _MISSING
        return node
    return _MISSING


def _num(x: Any) -> float | None:
    if isinstance(x, bool) or x is None or x is _MISSING:
        return None
    try:
        return float(x)
    except (TypeError, ValueError, OverflowError):
        return None


def _apply(item_value: Any, op: str, arg: Any) -> bool:
    present = None if item_value is _MISSING else item_value
    if op == "$eq":
        return bool(present == arg)
    if op == "$ne":
        return bool(present != arg)
    if op == "$in":
        return any(present == a for a in arg)
    if op == "$nin":
        return all(present != a for a in arg)
    a, b = _num(item_value), _num(arg)
    if a is None or b is None:
        return False
    if op == "$gt":
        return a > b
    if op == "$gte":
        return a >= b
    if op == "$lt":
        return a < b
    return a <= b  # $lte


def _compare(item_value: Any, flt: Any) -> bool:
    if isinstance(flt, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in flt):
            return all(_apply(item_value, k, v) for k, v in flt.items())
        if not isinstance(item_value, Mapping):
            return False
        return all(_compare(_lookup(item_value, k), v) for k, v in flt.items())
    if isinstance(flt, (list, tuple)):
        return (
            isinstance(item_value, (list, tuple))
            and len(item_value) == len(flt)
            and all(_compare(i, f) for i, f in zip(item_value, flt, strict=True))
        )
    present = None if item_value is _MISSING else item_value
    return bool(present == flt)


def matches(value: Mapping[str, Any], flt: Mapping[str, Any] | None) -> bool:
    """True when `value` satisfies every condition of `flt` (None matches everything)."""
    if not flt:
        return True
    return all(_compare(_lookup(value, k), v) for k, v in flt.items())
