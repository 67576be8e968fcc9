"""Filter matching with LangGraph `InMemoryStore` semantics, plus dotted paths, `$in`/`$nin`,
text and presence operators and logical groups.

Beyond InMemoryStore's `$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`: `$in` / `$nin` (a list of
values), `$contains` (a substring of a text, or an element of a list), `$icontains` (the
same, ignoring case), `$exists` (true: the field is present). At the level of conditions,
`$and` and `$or` take a non-empty list of filters, and `$not` a filter or a list of them
(true when none of them holds). An unknown `$` operator is refused, never read as a field.

Deliberate differences from InMemoryStore: a key containing dots (``"metadata.who"``) is read
as a path when the value has no such literal key; a comparison between two texts that are not
numbers compares them as text (ISO dates sort so), and one between a number and anything
else that is not a number, or with a missing field, is False instead of raising TypeError.

A langmem_plus record's value leaves its fields at their default out (model/records.py
`to_value`); a filter reads such a missing field as its default (`RECORD_DEFAULTS`: tier,
who, source, importance, verified, ...), so ``{"tier": "normal"}`` matches a record stored
without one. Only a record's own top-level fields; any other value is read as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langmem_plus.errors import InvalidQueryError
from langmem_plus.model.records import with_record_defaults

__all__ = ["MAX_FILTER_DEPTH", "matches", "validate_filter"]

MAX_FILTER_DEPTH = 100
_MAX_FILTER_NODES = 100_000
_OPS = {
    "$eq",
    "$ne",
    "$gt",
    "$gte",
    "$lt",
    "$lte",
    "$in",
    "$nin",
    "$contains",
    "$icontains",
    "$exists",
}
_LOGICAL = {"$and", "$or", "$not"}
_MISSING = object()


def _check_logical(key: str, v: Any) -> list[Any]:
    """The filters a logical group holds (validated): `$and`/`$or` a non-empty list of dicts,
    `$not` a dict or such a list."""
    items = [v] if key == "$not" and isinstance(v, Mapping) else v
    if not isinstance(items, (list, tuple)) or not items:
        what = (
            "a filter or a non-empty list of filters"
            if key == "$not"
            else "a non-empty list of filters"
        )
        raise InvalidQueryError(f"{key} takes {what}, got {type(v).__name__}")
    if not all(isinstance(i, Mapping) for i in items):
        raise InvalidQueryError(f"each filter of {key} must be a dict")
    return list(items)


def _check_operator(k: str, v: Any) -> None:
    if k not in _OPS:
        raise InvalidQueryError(
            f"unsupported filter operator {k[:80]!r}; use one of {sorted(_OPS)}"
            + (" (groups of conditions: $and, $or, $not)" if k in _LOGICAL else "")
        )
    if k in ("$in", "$nin") and not isinstance(v, (list, tuple, set)):
        raise InvalidQueryError(f"{k} takes a list, got {type(v).__name__}")
    if k == "$exists" and not isinstance(v, bool):
        raise InvalidQueryError(f"$exists takes true or false, got {v!r:.80}")


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
        if cond and any(k in _OPS for k in node) and not all(k in _OPS for k in node):
            raise InvalidQueryError(
                "a field's filter is either operators ($eq, $in, ...) or nested fields, not both"
            )
        for k, v in node.items():
            if not cond:
                stack.append((v, depth + 1, False))
                continue
            if not isinstance(k, str):
                raise InvalidQueryError(f"filter keys must be strings, got {k!r:.80}")
            if k in _LOGICAL:
                stack.extend((f, depth + 1, True) for f in _check_logical(k, v))
            elif k.startswith("$"):
                _check_operator(k, v)
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


def _contains(item_value: Any, arg: Any, fold: bool) -> bool:
    """`arg` is a substring of a text, or an element of a list (texts compared casefolded
    when `fold`)."""
    if isinstance(item_value, str) and isinstance(arg, str):
        return arg.casefold() in item_value.casefold() if fold else arg in item_value
    if isinstance(item_value, (list, tuple)):
        if fold and isinstance(arg, str):
            want = arg.casefold()
            return any(isinstance(e, str) and e.casefold() == want for e in item_value)
        return any(e == arg for e in item_value)
    return False


def _order(item_value: Any, arg: Any) -> tuple[Any, Any] | None:
    """The two sides of a comparison: numbers, or two texts that are not numbers."""
    a, b = _num(item_value), _num(arg)
    if a is not None and b is not None:
        return a, b
    if isinstance(item_value, str) and isinstance(arg, str) and a is None and b is None:
        return item_value, arg
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
    if op == "$exists":
        return (item_value is not _MISSING) is arg
    if op in ("$contains", "$icontains"):
        return _contains(present, arg, op == "$icontains")
    sides = _order(item_value, arg)
    if sides is None:
        return False
    a, b = sides
    if op == "$gt":
        return bool(a > b)
    if op == "$gte":
        return bool(a >= b)
    if op == "$lt":
        return bool(a < b)
    return bool(a <= b)  # $lte


def _group(value: Any, key: str, arg: Any) -> bool:
    """A logical group over one condition level (`value` is the mapping it applies to)."""
    items = [arg] if isinstance(arg, Mapping) else list(arg)
    if key == "$and":
        return all(_holds(value, f) for f in items)
    if key == "$or":
        return any(_holds(value, f) for f in items)
    return not any(_holds(value, f) for f in items)  # $not: none of them holds


def _holds(value: Any, flt: Mapping[str, Any]) -> bool:
    """Every condition of the mapping `flt` holds for `value` (fields and logical groups)."""
    for k, v in flt.items():
        if k in _LOGICAL:
            if not _group(value, k, v):
                return False
        elif not _compare(_lookup(value, k), v):
            return False
    return True


def _compare(item_value: Any, flt: Any) -> bool:
    if isinstance(flt, Mapping):
        if any(k in _OPS for k in flt):
            return all(_apply(item_value, k, v) for k, v in flt.items())
        if not isinstance(item_value, Mapping):
            return False
        return _holds(item_value, flt)
    if isinstance(flt, (list, tuple)):
        return (
            isinstance(item_value, (list, tuple))
            and len(item_value) == len(flt)
            and all(_compare(i, f) for i, f in zip(item_value, flt, strict=True))
        )
    present = None if item_value is _MISSING else item_value
    return bool(present == flt)


def matches(value: Mapping[str, Any], flt: Mapping[str, Any] | None) -> bool:
    """True when `value` satisfies every condition of `flt` (None matches everything); a
    record's fields left out at their default read as that default."""
    if not flt:
        return True
    return _holds(with_record_defaults(value), flt)
