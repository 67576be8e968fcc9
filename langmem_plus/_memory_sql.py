"""Small SQL helpers the `Memory` facade needs beyond the `BaseStore` interface.

Counting, key listing, restoring item timestamps/access statistics on import, and reclaiming
space after deletion. They read the `HybridStore` schema directly; keep them here, in one place.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langmem_plus.store import HybridStore

__all__ = [
    "count_items",
    "db_bytes",
    "enable_secure_delete",
    "keys_under",
    "namespaces_under",
    "set_item_stats",
    "vacuum",
]

_SEP = "."  # HybridStore joins namespace labels with "." (LangGraph forbids it in labels)


def _where(prefix: Sequence[str], exact: bool) -> tuple[str, tuple[str, ...]]:
    if not prefix:
        return "1=1", ()
    s = _SEP.join(prefix)
    if exact:
        return "n.ns = ?", (s,)
    return "(n.ns = ? OR (n.ns >= ? AND n.ns < ?))", (s, s + _SEP, s + chr(ord(_SEP) + 1))


def count_items(store: HybridStore, prefix: Sequence[str], *, exact: bool = True) -> int:
    """Items in namespace `prefix` (or under it when `exact` is False)."""
    where, args = _where(prefix, exact)
    with store.db.read() as conn:
        row = conn.execute(
            f"SELECT COUNT(*) FROM items i JOIN namespaces n ON n.id = i.ns_id WHERE {where}",
            args,
        ).fetchone()
    return int(row[0])


def keys_under(
    store: HybridStore, prefix: Sequence[str], *, exact: bool = False
) -> list[tuple[tuple[str, ...], str]]:
    """(namespace, key) of every item in or under `prefix`, in insertion order."""
    where, args = _where(prefix, exact)
    with store.db.read() as conn:
        rows = conn.execute(
            f"SELECT n.ns, i.key FROM items i JOIN namespaces n ON n.id = i.ns_id "
            f"WHERE {where} ORDER BY i.id",
            args,
        ).fetchall()
    return [(tuple(ns.split(_SEP)), key) for ns, key in rows]


def namespaces_under(store: HybridStore, prefix: Sequence[str]) -> list[tuple[str, ...]]:
    """Namespaces holding at least one item, in or under `prefix` (all when empty)."""
    where, args = _where(prefix, exact=False)
    with store.db.read() as conn:
        rows = conn.execute(
            f"SELECT n.ns FROM namespaces n WHERE {where} AND EXISTS "
            f"(SELECT 1 FROM items i WHERE i.ns_id = n.id) ORDER BY n.ns",
            args,
        ).fetchall()
    return [tuple(r[0].split(_SEP)) for r in rows]


def _epoch(dt: datetime | None) -> float | None:
    return None if dt is None else dt.timestamp()


def set_item_stats(
    store: HybridStore,
    rows: Sequence[tuple[Sequence[str], str, datetime, datetime, datetime | None, int]],
) -> None:
    """Restore (namespace, key, created_at, updated_at, last_accessed, access_count) of items.

    `put` stamps items with the current time; an import or a back-dated turn sets the originals.
    """
    if not rows:
        return
    args: list[tuple[Any, ...]] = [
        (_epoch(created), _epoch(updated), _epoch(last), int(count), key, _SEP.join(ns))
        for ns, key, created, updated, last, count in rows
    ]
    with store.db.write() as conn:
        conn.executemany(
            "UPDATE items SET created_at = ?, updated_at = ?, last_accessed = ?, access_count = ? "
            "WHERE key = ? AND ns_id = (SELECT id FROM namespaces WHERE ns = ?)",
            args,
        )


def db_bytes(store: HybridStore) -> int:
    """Bytes the database occupies: the file plus its WAL, or the pages of an in-memory one."""
    path = store.db.path
    if path is None:
        with store.db.lock:
            pages = store.db.conn.execute("PRAGMA page_count").fetchone()[0]
            size = store.db.conn.execute("PRAGMA page_size").fetchone()[0]
        return int(pages) * int(size)
    total = 0
    for suffix in ("", "-wal"):
        p = f"{path}{suffix}"
        if os.path.exists(p):
            total += os.path.getsize(p)
    return total


def vacuum(store: HybridStore) -> int:
    """Checkpoint the WAL and VACUUM, so deleted text leaves the file; returns bytes freed."""
    before = db_bytes(store)
    with store.db.lock:
        conn = store.db.conn
        if store.db.path is not None:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        if store.db.path is not None:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return max(0, before - db_bytes(store))


def enable_secure_delete(store: HybridStore) -> None:
    """Make SQLite overwrite deleted content with zeros (deletion is real, not just unlinked)."""
    with store.db.lock:
        store.db.conn.execute("PRAGMA secure_delete = ON")
