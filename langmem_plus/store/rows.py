"""Item rows as search reads them (`CandidateRow`), and the SQLite statements that read them.

A light row leaves out namespace, key and value (`None`): ranking needs only the columns of
the score (timestamps, access count, TTL, confidence, category, session) for every candidate,
and reads the full rows of the winners alone.
"""

from __future__ import annotations

import functools
import json
import operator
import sqlite3
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from itertools import repeat
from typing import Any, NamedTuple, cast

import numpy as np
from langgraph.store.base import Item, MatchCondition

from langmem_plus.errors import InvalidQueryError
from langmem_plus.store._common import NS_SEP, MemorySearchItem, from_epoch, ns_key, utc
from langmem_plus.store.filters import matches
from langmem_plus.store.plan import TimeRange
from langmem_plus.store.sqlite import in_chunks

__all__ = [
    "SESSION",
    "CandidateRow",
    "adjacent",
    "in_range",
    "like_rows",
    "list_namespaces",
    "match_namespaces",
    "namespace_full_rows",
    "namespace_ids",
    "namespace_rows",
    "prior_columns",
    "read_item",
    "read_rows",
    "scan_rows",
    "search_hit",
    "to_item",
]


class CandidateRow(NamedTuple):
    """One item as search reads it; `namespace`, `key`, `value` are None in a light row."""

    id: int
    namespace: str | None
    key: str | None
    value: str | None  # the item's JSON
    created_at: float
    updated_at: float
    last_accessed: float | None
    access_count: int
    ttl_minutes: float | None
    expires_at: float | None
    confidence: float | None  # what the write path extracted from the value (rank_fields)
    category: str | None
    session: str | None

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and self.expires_at < now


_FULL = (
    "SELECT i.id, n.ns, i.key, i.value, i.created_at, i.updated_at, i.last_accessed, "
    "i.access_count, i.ttl_minutes, i.expires_at, i.confidence, i.category, i.session "
    "FROM items i JOIN namespaces n ON n.id=i.ns_id "
)
_LIGHT = (
    "SELECT i.id, i.created_at, i.updated_at, i.last_accessed, i.access_count, "
    "i.ttl_minutes, i.expires_at, i.confidence, i.category, i.session FROM items i "
)
_make = CandidateRow._make
_ID = operator.itemgetter(0)


def _light(r: Sequence[Any]) -> CandidateRow:
    return CandidateRow(r[0], None, None, None, *r[1:])


def read_rows(conn: sqlite3.Connection, ids: Iterable[int], full: bool = True) -> dict[int, Any]:
    """Rows of the items `ids` that exist (full, or light with `full=False`)."""
    out: dict[int, Any] = {}
    sql, make = (_FULL, _make) if full else (_LIGHT, _light)
    for part, qs in in_chunks(list(ids)):
        for row in conn.execute(f"{sql}WHERE i.id IN ({qs})", part):
            out[row[0]] = make(row)
    return out


def namespace_rows(conn: sqlite3.Connection, ns_ids: Sequence[int]) -> dict[int, Any]:
    """Light rows of every item of the namespaces."""
    out: dict[int, Any] = {}
    for part, qs in in_chunks(ns_ids):
        out.update(
            (r[0], _light(r)) for r in conn.execute(f"{_LIGHT}WHERE i.ns_id IN ({qs})", part)
        )
    return out


def namespace_full_rows(conn: sqlite3.Connection, ns_ids: Sequence[int]) -> dict[int, Any]:
    """Full rows of every item of the namespaces."""
    out: dict[int, Any] = {}
    for part, qs in in_chunks(ns_ids):
        got = list(map(_make, conn.execute(f"{_FULL}WHERE i.ns_id IN ({qs})", part)))
        out.update(zip(map(_ID, got), got, strict=True))
    return out


def prior_columns(
    rows: Sequence[CandidateRow], preferences: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The score's inputs from the rows, as arrays: last used (last access, else the last
    update), access count, confidence (NULL -> NaN: "none given"), preference item (all
    False without `preferences`: the score reads it for a preference query only)."""
    n = len(rows)
    last = list(map(_LAST_ACCESSED, rows))
    if last.count(None) == n:  # never used (the usual case): the last update
        last_used = np.fromiter(map(_UPDATED_AT, rows), np.float64, n)
    else:
        last_used = np.array(
            [a if a is not None else r.updated_at for a, r in zip(last, rows, strict=True)],
            dtype=np.float64,
        )
    conf = list(map(_CONFIDENCE, rows))
    if conf.count(None) == n:
        confidence = np.full(n, np.nan)
    else:
        confidence = np.array([c if c is not None else np.nan for c in conf], dtype=np.float64)
    return (
        last_used,
        np.fromiter(map(_ACCESS_COUNT, rows), np.float64, n),
        confidence,
        np.fromiter(map(operator.eq, map(_CATEGORY, rows), repeat("preference")), bool, n)
        if preferences
        else np.zeros(n, dtype=bool),
    )


_UPDATED_AT, _LAST_ACCESSED, _ACCESS_COUNT, _CONFIDENCE, _CATEGORY, SESSION = (
    operator.itemgetter(CandidateRow._fields.index(name))
    for name in (
        "updated_at",
        "last_accessed",
        "access_count",
        "confidence",
        "category",
        "session",
    )
)


def in_range(row: CandidateRow, tr: TimeRange | None) -> bool:
    """Whether the item was created within the time range (always, without one)."""
    if not tr:
        return True
    lo, hi = tr
    return (lo is None or row.created_at >= lo) and (hi is None or row.created_at <= hi)


def scan_rows(
    conn: sqlite3.Connection,
    ns_ids: Sequence[int],
    keep: Callable[[CandidateRow], bool],
    stop: int | None,
) -> list[CandidateRow]:
    """Full rows of the namespaces in insertion order that `keep` accepts (up to `stop`)."""
    out: list[CandidateRow] = []
    for part, qs in in_chunks(ns_ids):
        for r in conn.execute(f"{_FULL}WHERE i.ns_id IN ({qs}) ORDER BY i.id", part):
            row = _make(r)
            if keep(row):
                out.append(row)
                if stop is not None and len(out) >= stop:
                    return out
    return out


def read_item(conn: sqlite3.Connection, namespace: Sequence[str], key: str) -> CandidateRow | None:
    """The full row of one item, or None."""
    r = conn.execute(f"{_FULL}WHERE n.ns=? AND i.key=?", (ns_key(namespace), key)).fetchone()
    return None if r is None else _make(r)


@functools.lru_cache(maxsize=4096)
def _namespace(ns: str) -> tuple[str, ...]:
    """A stored namespace as its tuple (memoised: a page's hits mostly share one)."""
    return tuple(ns.split(NS_SEP))


_SCAN = cast(Any, json.JSONDecoder()).scan_once


def _json(text: str) -> Any:
    """`json.loads` of a stored value: its C scanner called directly (a value is stored by
    `json.dumps`, so it is exactly one JSON document); anything else goes to `json.loads`."""
    try:
        got, end = _SCAN(text, 0)
    except (StopIteration, ValueError):
        return json.loads(text)
    return got if end == len(text) else json.loads(text)


def search_hit(row: CandidateRow, score: float, explain: tuple[Any, int]) -> Any:
    """The `MemorySearchItem` of a ranked full row (`to_item`'s, made directly)."""
    assert row.namespace is not None and row.key is not None and row.value is not None
    last = row.last_accessed
    item: Any = MemorySearchItem.hit(
        _namespace(row.namespace),
        row.key,
        _json(row.value),
        utc(row.created_at),
        utc(row.updated_at),
        score,
        int(row.access_count),
        None if last is None else utc(last),
        explain,
    )
    item._rowid = row.id if row.ttl_minutes is not None else None  # only TTL items refresh
    return item


def to_item(row: CandidateRow, cls: type = MemorySearchItem, **extra: Any) -> Any:
    """The `Item` (or `MemorySearchItem`, with `extra` such as score) of a full row."""
    assert row.namespace is not None and row.key is not None and row.value is not None
    kwargs: dict[str, Any] = dict(
        namespace=_namespace(row.namespace),
        key=row.key,
        value=json.loads(row.value),
        created_at=from_epoch(row.created_at),
        updated_at=from_epoch(row.updated_at),
    )
    if cls is Item:
        return Item(**kwargs)
    item: Any = MemorySearchItem(
        **kwargs,
        access_count=int(row.access_count),
        last_accessed=from_epoch(row.last_accessed),
        **extra,
    )
    item._rowid = row.id if row.ttl_minutes is not None else None  # only TTL items refresh
    return item


def namespace_ids(conn: sqlite3.Connection, prefix: Sequence[str]) -> list[int]:
    """Ids of the namespace `prefix` and of every namespace under it (all with `()`)."""
    if not prefix:
        return [r[0] for r in conn.execute("SELECT id FROM namespaces ORDER BY id")]
    s = ns_key(prefix)
    return [
        r[0]
        for r in conn.execute(
            "SELECT id FROM namespaces WHERE ns=? OR (ns >= ? AND ns < ?) ORDER BY id",
            (s, s + NS_SEP, s + chr(ord(NS_SEP) + 1)),
        )
    ]


def like_rows(
    conn: sqlite3.Connection, ns_ids: Sequence[int], word: str, k: int
) -> list[tuple[int, str]]:
    """(id, value JSON) of up to `k` indexed items whose stored JSON contains `word`, newest
    first: the pre-selection of the substring fallback (the caller confirms on the text)."""
    pat = "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    out: list[tuple[int, str]] = []
    for part, qs in in_chunks(ns_ids):
        out.extend(
            conn.execute(
                f"SELECT id, value FROM items WHERE ns_id IN ({qs}) AND indexed = 1 "
                f"AND value LIKE ? ESCAPE '\\' ORDER BY id DESC LIMIT ?",
                (*part, pat, k),
            )
        )
    return out


# How far (in item ids) to look for the previous / next item of the same namespace; beyond
# it (many namespaces written interleaved) an item simply has no neighbour.
_WINDOW = 64
_BEFORE = "SELECT id FROM items WHERE id < ? AND id >= ? AND ns_id = ? ORDER BY id DESC LIMIT 1"
_AFTER = "SELECT id FROM items WHERE id > ? AND id <= ? AND ns_id = ? ORDER BY id LIMIT 1"


def adjacent(
    conn: sqlite3.Connection, ids: Iterable[int], same: Collection[int] = ()
) -> dict[int, list[int]]:
    """item id -> ids of the items written just before and after it in its namespace.
    `same`: items known to be in one namespace (a one-namespace search's candidates); when
    every one of `ids` is among them, their namespace is read for one item only."""
    ids = sorted(set(ids))
    if not ids:
        return {}
    share = bool(same) and all(i in same for i in ids)
    if share:
        probe = sorted({ids[0], *(j for i in ids for j in (i - 1, i + 1) if j not in same)})
    else:
        probe = sorted({j for i in ids for j in (i - 1, i, i + 1)})
    ns: dict[int, int] = {}
    for part, qs in in_chunks(probe):
        ns.update(conn.execute(f"SELECT id, ns_id FROM items WHERE id IN ({qs})", part))
    shared = ns.get(ids[0]) if share else None

    def ns_of(j: int) -> int | None:
        return shared if shared is not None and j in same else ns.get(j)

    out: dict[int, list[int]] = {}
    for i in ids:
        own = ns_of(i)
        if own is None:
            continue
        found: list[int] = []
        for step, sql in ((-1, _BEFORE), (1, _AFTER)):
            j = i + step
            if ns_of(j) == own:
                found.append(j)
            else:  # a gap or another namespace's item: bounded lookup
                row = conn.execute(sql, (i, i + step * _WINDOW, own)).fetchone()
                if row is not None:
                    found.append(int(row[0]))
        out[i] = found
    return out


def list_namespaces(
    conn: sqlite3.Connection,
    now: float | None,
    match_conditions: Sequence[MatchCondition] | None,
    max_depth: int | None,
) -> list[tuple[str, ...]]:
    """Namespaces holding items (unexpired ones when `now` is given), matched and truncated
    as LangGraph's `ListNamespacesOp` asks, sorted."""
    sql = "SELECT n.ns FROM namespaces n WHERE EXISTS (SELECT 1 FROM items i WHERE i.ns_id=n.id"
    if now is not None:
        rows = conn.execute(sql + " AND (i.expires_at IS NULL OR i.expires_at >= ?))", (now,))
    else:
        rows = conn.execute(sql + ")")
    return match_namespaces([tuple(r[0].split(NS_SEP)) for r in rows], match_conditions, max_depth)


def match_namespaces(
    namespaces: Iterable[tuple[str, ...]],
    match_conditions: Sequence[MatchCondition] | None,
    max_depth: int | None,
) -> list[tuple[str, ...]]:
    """The namespaces that match every condition, truncated to `max_depth`, sorted and
    without duplicates (what `ListNamespacesOp` returns before offset and limit)."""
    namespaces = list(namespaces)
    if match_conditions:
        namespaces = [ns for ns in namespaces if all(_ns_match(c, ns) for c in match_conditions)]
    if max_depth is not None:
        return sorted({ns[:max_depth] for ns in namespaces})
    return sorted(set(namespaces))


def _ns_match(cond: MatchCondition, ns: tuple[str, ...]) -> bool:
    path = cond.path
    if len(ns) < len(path):
        return False
    pairs = (
        zip(ns, path, strict=False)
        if cond.match_type == "prefix"
        else zip(reversed(ns), reversed(path), strict=False)
    )
    if cond.match_type not in ("prefix", "suffix"):
        raise InvalidQueryError(f"unsupported match type: {cond.match_type}")
    return all(p == "*" or k == p for k, p in pairs)


def passes(
    row: CandidateRow,
    now: float,
    omit_expired: bool,
    flt: Mapping[str, Any] | None,
    tr: TimeRange | None,
) -> bool:
    """Whether a row survives expiry (when omitted), the time range and the filter (which
    needs a full row)."""
    if omit_expired and row.expired(now):
        return False
    if tr and not in_range(row, tr):
        return False
    return not flt or matches(json.loads(row.value or "null"), flt)
