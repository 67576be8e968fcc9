"""Item rows as search reads them (`CandidateRow`), and the SQLite statements that read them.

A light row leaves out namespace, key and value (`None`): ranking needs only the columns of
the score (timestamps, access count, TTL, confidence, category, session) for every candidate,
and reads the full rows of the winners alone.
"""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from langgraph.store.base import MatchCondition

from langmem_plus.store.db.database import in_chunks
from langmem_plus.store.seams import (
    NS_SEP,
    CandidateRow,
    match_namespaces,
    ns_key,
)

__all__ = [
    "KIND_CODES",
    "adjacent",
    "like_rows",
    "list_namespaces",
    "namespace_full_rows",
    "namespace_ids",
    "read_item",
    "read_rows",
    "record_cells",
    "scan_rows",
]

KIND_CODES = {"episodic": "e", "semantic": "s"}
"""A record's kind as the `kind` column holds it: one letter (a row is read back with the
word, `_KIND`)."""
_KIND = "CASE i.kind WHEN 'e' THEN 'episodic' WHEN 's' THEN 'semantic' END"


def record_cells(columns: Sequence[Any]) -> tuple[Any, ...]:
    """`record_columns`'s (kind, slot, said_at, valid_from, valid_to, stale) as the item
    columns store them (the kind as its code)."""
    kind = columns[0]
    return (None if kind is None else KIND_CODES[kind], *columns[1:])


_FULL = (
    "SELECT i.id, n.ns, i.key, i.value, i.created_at, i.updated_at, i.last_accessed, "
    "i.access_count, i.ttl_minutes, i.expires_at, i.confidence, i.category, i.session, "
    f"{_KIND}, i.slot, i.said_at, i.valid_from, i.valid_to, i.stale "
    "FROM items i JOIN namespaces n ON n.id=i.ns_id "
)
_LIGHT = (
    "SELECT i.id, i.created_at, i.updated_at, i.last_accessed, i.access_count, "
    f"i.ttl_minutes, i.expires_at, i.confidence, i.category, i.session, {_KIND}, i.slot, "
    "i.said_at, i.valid_from, i.valid_to, i.stale FROM items i "
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


def namespace_full_rows(conn: sqlite3.Connection, ns_ids: Sequence[int]) -> dict[int, Any]:
    """Full rows of every item of the namespaces."""
    out: dict[int, Any] = {}
    for part, qs in in_chunks(ns_ids):
        got = list(map(_make, conn.execute(f"{_FULL}WHERE i.ns_id IN ({qs})", part)))
        out.update(zip(map(_ID, got), got, strict=True))
    return out


_SCAN_COLUMNS = frozenset({"kind", "slot", "category"})


def scan_rows(
    conn: sqlite3.Connection,
    ns_ids: Sequence[int],
    keep: Callable[[CandidateRow], bool],
    stop: int | None,
    columns: Mapping[str, str] | None = None,
) -> list[CandidateRow]:
    """Full rows of the namespaces in insertion order that `keep` accepts (up to `stop`);
    `columns`: equalities on item columns that every kept row meets (read by SQLite, with
    the `items_slot` index for a slot)."""
    out: list[CandidateRow] = []
    cols = {k: v for k, v in (columns or {}).items() if k in _SCAN_COLUMNS}
    if "kind" in cols:  # RowFilter's kind is a record's ("episodic" or "semantic")
        cols["kind"] = KIND_CODES[cols["kind"]]
    where = "".join(f" AND i.{k}=?" for k in cols)
    for part, qs in in_chunks(ns_ids):
        sql = f"{_FULL}WHERE i.ns_id IN ({qs}){where} ORDER BY i.id"
        for r in conn.execute(sql, [*part, *cols.values()]):
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


def adjacent(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, list[int]]:
    """item id -> ids of the items written just before and after it in its namespace."""
    ids = sorted(set(ids))
    if not ids:
        return {}
    probe = sorted({j for i in ids for j in (i - 1, i, i + 1)})
    ns: dict[int, int] = {}
    for part, qs in in_chunks(probe):
        ns.update(conn.execute(f"SELECT id, ns_id FROM items WHERE id IN ({qs})", part))
    ns_of = ns.get

    out: dict[int, list[int]] = {}
    lookups: list[tuple[int, int, int]] = []  # (item, step, namespace): a bounded lookup each
    for i in ids:
        own = ns_of(i)
        if own is None:
            continue
        out[i] = []
        for step in (-1, 1):
            if ns_of(i + step) != own:  # a gap or another namespace's item
                lookups.append((i, step, own))
    found = _bounded_lookups(conn, lookups)
    for i, found_ids in out.items():
        for step in (-1, 1):
            j = i + step if ns_of(i + step) == ns_of(i) else found.get((i, step))
            if j is not None:
                found_ids.append(int(j))
    return out


_LOOKUPS_PER_STATEMENT = 200  # scalar subqueries in one SELECT (3 parameters each)


def _bounded_lookups(
    conn: sqlite3.Connection, lookups: Sequence[tuple[int, int, int]]
) -> dict[tuple[int, int], int | None]:
    """(item, step) -> the nearest item of the namespace within `_WINDOW` ids before
    (step -1) or after (step 1) it, or None: all of them in one statement (a scalar subquery
    each) instead of one statement each."""
    out: dict[tuple[int, int], int | None] = {}
    for at in range(0, len(lookups), _LOOKUPS_PER_STATEMENT):
        part = lookups[at : at + _LOOKUPS_PER_STATEMENT]
        cols = ", ".join(f"({_BEFORE if step < 0 else _AFTER})" for _i, step, _ns in part)
        args = [x for i, step, own in part for x in (i, i + step * _WINDOW, own)]
        row = conn.execute(f"SELECT {cols}", args).fetchone()
        out.update({(i, step): row[n] for n, (i, step, _own) in enumerate(part)})
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
