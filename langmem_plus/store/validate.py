"""Boundary checks of HybridStore's calls: every op, constructor argument and search extra is
checked before any work is done, and `CheckedStore` applies the checks to LangGraph's public
store methods (which would otherwise turn a non-string key into one with `str()`).

Bad input gets the project's own error (`ValidationError`, `InvalidQueryError`,
`InvalidNamespaceError`), never a `RecursionError`, `UnicodeEncodeError`, `TypeError` or a
hang. The checks of one value (text, key, namespace, JSON, a put's size) live in
`value_checks` and are re-exported here.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from langgraph.store.base import (
    NOT_PROVIDED,
    GetOp,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchOp,
)

from langmem_plus.errors import InvalidQueryError, ValidationError
from langmem_plus.store.filters import validate_filter
from langmem_plus.store.value_checks import (
    MAX_DEPTH,
    MAX_INT,
    MAX_KEY_CHARS,
    MAX_LABEL_CHARS,
    MAX_LABELS,
    MAX_VALUE_FACTOR,
    check_json,
    check_key,
    check_namespace,
    check_put_size,
    check_text,
    has_lone_surrogate,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_KEY_CHARS",
    "MAX_LABELS",
    "MAX_LABEL_CHARS",
    "MAX_QUERY_WINDOW",
    "MAX_VALUE_FACTOR",
    "check_init",
    "check_interval",
    "check_json",
    "check_key",
    "check_namespace",
    "check_op",
    "check_ops",
    "check_path",
    "check_put_size",
    "check_refresh",
    "check_search_extras",
    "check_stat_rows",
    "check_text",
    "check_time_range",
    "check_ttl",
    "has_lone_surrogate",
]

MAX_QUERY_WINDOW = 10_000  # offset + limit of a ranked (query) search
_MAX_INDEX_PATHS = 100


def _int(name: str, value: Any, lo: int, hi: int, error: type[ValidationError]) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise error(f"{name} must be an integer from {lo} to {hi}, got {value!r:.80}")
    return value


def _bool(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ValidationError(f"{name} must be True or False, got {value!r:.80}")


def check_ttl(ttl: Any) -> None:
    """None, or a TTL in minutes LangGraph accepts."""
    if ttl is None or ttl is NOT_PROVIDED:
        return
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)):
        raise ValidationError(f"ttl must be a number of minutes or None, got {ttl!r:.80}")
    if ttl <= 0 or ttl > 1e12 or not math.isfinite(ttl):  # compared first: a huge int
        raise ValidationError(f"ttl must be a positive, finite number of minutes, got {ttl!r}")


def _index(index: Any) -> None:
    if index is None or index is False:
        return
    if not isinstance(index, list):
        raise ValidationError("index must be False, None or a list of field paths")
    if len(index) > _MAX_INDEX_PATHS:
        raise ValidationError(f"index lists at most {_MAX_INDEX_PATHS} field paths")
    for path in index:
        check_text("index field path", path)
        if not path or len(path) > 256:
            raise ValidationError("index field paths must be 1 to 256 characters")


def check_op(op: Any, max_value_chars: int = 1_000_000) -> None:
    """Check one store operation as `batch` receives it (raises before anything runs).

    `max_value_chars` bounds the walk of a put's value (each element is at least one
    character of its JSON); the size limits themselves are `check_put_size`'s.
    """
    if isinstance(op, PutOp):
        check_namespace(op.namespace)
        if not op.namespace:
            raise ValidationError("namespace must not be empty for a put")
        check_key(op.key)
        check_ttl(op.ttl)
        if op.value is not None:
            if not isinstance(op.value, Mapping):
                raise ValidationError(f"value must be a dict, got {type(op.value).__name__}")
            check_json(op.value, f"value for key {op.key[:80]!r}", max_nodes=max_value_chars)
            _index(op.index)
    elif isinstance(op, GetOp):
        check_namespace(op.namespace)
        check_key(op.key)
        _bool("refresh_ttl", op.refresh_ttl)
    elif isinstance(op, SearchOp):
        check_namespace(op.namespace_prefix, what="namespace_prefix")
        _int("limit", op.limit, 0, 2**62, InvalidQueryError)
        _int("offset", op.offset, 0, 2**62, InvalidQueryError)
        validate_filter(op.filter)
        if op.query is not None:
            check_text("query", op.query, error=InvalidQueryError)
            if op.query and op.limit + op.offset > MAX_QUERY_WINDOW:
                raise InvalidQueryError(
                    f"offset + limit of a search with a query must be at most "
                    f"{MAX_QUERY_WINDOW}, got {op.offset + op.limit}"
                )
        _bool("refresh_ttl", op.refresh_ttl)
    elif isinstance(op, ListNamespacesOp):
        conds = op.match_conditions
        if conds is None:
            conds = ()
        if not isinstance(conds, (tuple, list)):
            raise InvalidQueryError("match_conditions must be a tuple of MatchCondition")
        for cond in conds:
            if not isinstance(cond, MatchCondition) or cond.match_type not in ("prefix", "suffix"):
                raise InvalidQueryError("match_conditions hold prefix or suffix MatchConditions")
            check_namespace(cond.path, what=f"{cond.match_type} path")
        if op.max_depth is not None:
            _int("max_depth", op.max_depth, 1, MAX_LABELS, InvalidQueryError)
        _int("limit", op.limit, 0, 2**62, InvalidQueryError)
        _int("offset", op.offset, 0, 2**62, InvalidQueryError)
    else:
        raise ValidationError(f"unknown store operation: {type(op).__name__}")


def check_ops(ops: Any, max_value_chars: int = 1_000_000) -> list[Op]:
    """The operations of a `batch` as a list, each checked."""
    if isinstance(ops, (str, bytes, Mapping)) or not isinstance(ops, Iterable):
        raise ValidationError(f"ops must be a list of store operations, got {type(ops).__name__}")
    out = list(ops)
    for op in out:
        check_op(op, max_value_chars)
    return out


def check_time_range(time_range: Any) -> None:
    """A `(start, end)` pair of datetimes, finite epoch seconds, ISO strings or None."""
    if time_range is None:
        return
    if not isinstance(time_range, (tuple, list)) or len(time_range) != 2:
        raise InvalidQueryError("time_range must be a (start, end) pair; use None for open ends")
    for bound in time_range:
        if bound is None or isinstance(bound, datetime):
            continue
        if isinstance(bound, str):
            check_text("time_range bound", bound, error=InvalidQueryError)
            if len(bound) > 64:
                raise InvalidQueryError("time_range bounds given as text must be ISO dates")
            continue
        if isinstance(bound, bool) or not isinstance(bound, (int, float)):
            raise InvalidQueryError(
                f"time_range bounds must be datetimes, epoch seconds or ISO strings, "
                f"got {type(bound).__name__}"
            )
        if abs(bound) > 1e14 or not math.isfinite(bound):  # int compared exactly, first
            raise InvalidQueryError(f"time_range bound {bound!r:.40} is not a usable time")


def check_search_extras(current_topic: Any, time_range: Any) -> None:
    """`current_topic` (None or a string) and `time_range` of `HybridStore.search`."""
    if current_topic is not None:
        check_text("current_topic", current_topic, error=InvalidQueryError)
    check_time_range(time_range)


def _positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(f"{name} must be a positive number, got {value!r:.80}")
    if value <= 0 or value > 1e12 or not math.isfinite(value):
        raise ValidationError(f"{name} must be a positive, finite number, got {value!r:.80}")


def check_path(path: Any, what: str = "path") -> None:
    """A filesystem path: a str or os.PathLike without NUL or lone surrogates."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValidationError(f"{what} must be a file path, got {type(path).__name__}")
    text = os.fspath(path)
    if not isinstance(text, str):
        raise ValidationError(f"{what} must be a text path, got bytes")
    if not text or "\x00" in text or has_lone_surrogate(text):
        raise ValidationError(f"{what} must be a non-empty path without NUL or lone surrogates")


def check_init(path: Any, index: Any, config: Any, ttl: Any, read_only: Any) -> None:
    """The arguments of `HybridStore(...)`, checked before anything is opened."""
    from langmem_plus.config import MemoryConfig  # config imports nothing of the store

    if path is not None:
        check_path(path)
    if config is not None and not isinstance(config, MemoryConfig):
        raise ValidationError(f"config must be a MemoryConfig, got {type(config).__name__}")
    if read_only is not None and not isinstance(read_only, bool):
        raise ValidationError(f"read_only must be True, False or None, got {read_only!r:.80}")
    if index is not None and index is not False:
        if not isinstance(index, Mapping):
            raise ValidationError("index must be an IndexConfig dict, False or None")
        dims = index.get("dims")
        if dims is not None and (
            isinstance(dims, bool) or not isinstance(dims, int) or not 0 < dims <= 65_536
        ):
            raise ValidationError(f"index dims must be a positive int, got {dims!r:.80}")
        embed = index.get("embed")
        if embed is not None and not (isinstance(embed, str) or callable(embed) or
                                      hasattr(embed, "embed_documents")):  # fmt: skip
            raise ValidationError("index embed must be an Embeddings, a function or a model name")
        fields = index.get("fields")
        if fields is not None:
            if not isinstance(fields, list) or not fields:
                raise ValidationError("index fields must be a non-empty list of field paths")
            for f in fields:
                check_text("index field path", f)
    if ttl is not None:
        if not isinstance(ttl, Mapping):
            raise ValidationError(f"ttl must be a TTLConfig dict, got {type(ttl).__name__}")
        for name in ("default_ttl", "sweep_interval_minutes"):
            if ttl.get(name) is not None:
                _positive(f"ttl {name}", ttl[name])


def check_stat_rows(rows: Any) -> list[Any]:
    """Rows of `restore_item_stats` as a list: (namespace, key, created, updated, last, count)."""
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
        raise ValidationError("rows must be a list of (namespace, key, created_at, updated_at, "
                              "last_accessed, access_count)")  # fmt: skip
    rows = list(rows)
    for row in rows:
        if not isinstance(row, (tuple, list)) or len(row) != 6:
            raise ValidationError("each row must be (namespace, key, created_at, updated_at, "
                                  "last_accessed, access_count)")  # fmt: skip
        ns, key, created, updated, last, count = row
        check_namespace(ns)
        check_key(key)
        for name, t in (("created_at", created), ("updated_at", updated), ("last", last)):
            if t is None and name == "last":
                continue
            if not isinstance(t, datetime):
                raise ValidationError(f"{name} must be a datetime, got {type(t).__name__}")
        _int("access_count", count, 0, MAX_INT, ValidationError)
    return rows


def check_interval(name: str, value: Any) -> None:
    """None or a positive, finite number (sweeper intervals and timeouts)."""
    if value is not None:
        _positive(name, value)


def check_refresh(refresh_ttl: Any) -> None:
    """None, True or False."""
    if refresh_ttl is not None:
        _bool("refresh_ttl", refresh_ttl)
