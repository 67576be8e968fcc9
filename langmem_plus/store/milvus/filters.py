"""Search filters as Milvus expressions over the items' `doc` JSON field (a copy of the value).

The expression is a pre-filter: every item the filter accepts (filters.py, InMemoryStore's
semantics) satisfies it, and the exact filter still runs on what Milvus returns. Only what
translates without changing that runs in Milvus:

* equality with a string, or with a finite number (also matching true/false for 1/0, as
  Python's `True == 1` does), a plain value or `$eq`, and `$in` over such values;
* `$gt`, `$gte`, `$lt`, `$lte` with a finite number (strings stay in: the exact filter reads
  a numeric string as its number);
* nested conditions (`{"meta": {"who": "ann"}}`) as a JSON path; a dotted key
  (`"meta.who"`) as the literal key or the path, either may hold.

Everything else (`$ne`, `$nin`, None, booleans, lists, keys or strings with quotes,
backslashes or control characters) is left to the exact filter, and so is a condition on a
record field that its default satisfies (``{"tier": "normal"}``): a record's value leaves that
field out at its default (model/records.py `RECORD_DEFAULTS`), and the exact filter reads it
as the default. An item whose value is not
strict JSON (NaN, infinities) has no `doc` and always passes the pre-filter.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from langmem_plus.model.records import RECORD_DEFAULTS
from langmem_plus.store.filters import matches

__all__ = ["MAX_IN_VALUES", "filter_expr"]

MAX_IN_VALUES = 100
"""`$in` lists longer than this are left to the exact filter (one comparison per value)."""

_RANGE = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def _safe(text: str) -> bool:
    return not any(c in '"\\' or ord(c) < 0x20 for c in text)


def _number(x: Any) -> bool:
    """A finite int or float (not a bool) that a double holds exactly enough to compare."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    return abs(x) < 2**53 if isinstance(x, int) else math.isfinite(x)


def _literal(v: Any) -> str | None:
    """A Milvus literal for a string or a finite number; None for anything else."""
    if isinstance(v, str):
        return f'"{v}"' if _safe(v) else None
    if _number(v):
        return repr(int(v)) if isinstance(v, int) else repr(float(v))
    return None


def _equal(path: str, v: Any) -> str | None:
    lit = _literal(v)
    if lit is None:
        return None
    alts = [f"{path} == {lit}"]
    if _number(v) and v in (0, 1):  # Python: True == 1, False == 0
        alts.append(f"{path} == {'true' if v == 1 else 'false'}")
    return " or ".join(alts)


def _op(path: str, op: str, arg: Any) -> str | None:
    if op == "$eq":
        return _equal(path, arg)
    if op == "$in" and isinstance(arg, (list, tuple, set)) and 0 < len(arg) <= MAX_IN_VALUES:
        alts = [_equal(path, a) for a in arg]
        return None if any(a is None for a in alts) else " or ".join(f"({a})" for a in alts)
    if op in _RANGE and _number(arg):
        return f'{path} {_RANGE[op]} {_literal(arg)} or {path} like "%"'
    return None


def _condition(paths: list[str], flt: Any) -> str | None:
    """The expression of one filter value at the given paths (either may hold)."""
    if not paths:
        return None
    alts: list[str] = []
    for path in paths:
        got = _at(path, flt)
        if got is None:
            return None  # a path without an expression: anything may match there
        alts.append(got)
    return " or ".join(f"({a})" for a in alts)


def _at(path: str, flt: Any) -> str | None:
    if isinstance(flt, Mapping):
        ops = [k for k in flt if isinstance(k, str) and k.startswith("$")]
        if ops:
            parts = [_op(path, k, v) for k, v in flt.items()]
        else:
            parts = [_condition(_paths(path, k), v) for k, v in flt.items()]
        got = [p for p in parts if p is not None]
        return " and ".join(f"({p})" for p in got) if got else None
    return _equal(path, flt)


def _paths(base: str, key: Any) -> list[str]:
    """The JSON paths a filter key may name: the literal key, and for a dotted key the path."""
    if not isinstance(key, str) or not key or not _safe(key) or key.startswith("$"):
        return []  # `$and`/`$or`/`$not` groups are left to the exact filter
    out = [f'{base}["{key}"]']
    if "." in key and all(key.split(".")):
        out.append(base + "".join(f'["{part}"]' for part in key.split(".")))
    return out


def filter_expr(flt: Mapping[str, Any] | None, field: str = "doc") -> str:
    """The pre-filter expression of a search filter over `field` ("" when nothing of it can
    run in Milvus). Items without `field` (values that are not strict JSON) always pass."""
    if not flt:
        return ""
    parts = []
    for key, cond in flt.items():
        if key in RECORD_DEFAULTS and matches({"kind": "semantic"}, {key: cond}):
            continue  # a record may hold it by leaving the field out
        paths = _paths(field, key)
        got = _condition(paths, cond) if paths else None
        if got is not None:
            parts.append(got)
    if not parts:
        return ""
    return f"{field} is null or (" + " and ".join(f"({p})" for p in parts) + ")"
