"""Maintenance of HybridStore: TTL sweeping, reindexing, counts, sizes, vacuum."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
from langgraph.store.base import PutOp

from langmem_plus.store._common import _SEP, _as_epoch
from langmem_plus.store.vector import encode_vec
from langmem_plus.store.vector import log_reset as vec_log_reset
from langmem_plus.text.tokenize import tokenize

if TYPE_CHECKING:
    from langmem_plus.store.hybrid import HybridStore

logger = logging.getLogger("langmem_plus.store.hybrid")


# ---------------------------------------------------------------- TTL
def sweep_ttl(store: HybridStore) -> int:
    """Delete expired items from every index; returns how many were removed."""
    store._ensure_open()
    now = store.clock()
    with store._db.read() as conn:
        rows = conn.execute(
            "SELECT n.ns, i.key FROM items i JOIN namespaces n ON n.id=i.ns_id "
            "WHERE i.expires_at IS NOT NULL AND i.expires_at < ?",
            (now,),
        ).fetchall()
    if rows:
        store.batch([PutOp(tuple(ns.split(_SEP)), key, None) for ns, key in rows])
    return len(rows)


def start_ttl_sweeper(store: HybridStore, sweep_interval_minutes: float | None = None) -> None:
    """Start a daemon thread that sweeps expired items periodically."""
    if store._sweeper is not None:
        return
    interval = sweep_interval_minutes or (store.ttl_config or {}).get("sweep_interval_minutes") or 5
    store._sweeper_stop.clear()

    def loop() -> None:
        while not store._sweeper_stop.wait(float(interval) * 60):
            try:
                sweep_ttl(
                    store,
                )
            except Exception as exc:  # keep sweeping; report
                logger.warning("TTL sweep failed: %s", exc)

    store._sweeper = threading.Thread(target=loop, name="langmem-ttl-sweeper", daemon=True)
    store._sweeper.start()


def stop_ttl_sweeper(store: HybridStore, timeout: float | None = None) -> bool:
    if store._sweeper is None:
        return True
    store._sweeper_stop.set()
    store._sweeper.join(timeout)
    alive = store._sweeper.is_alive()
    store._sweeper = None
    return not alive


# ---------------------------------------------------------------- maintenance
def reindex(store: HybridStore, *, vectors: bool = True) -> dict[str, int]:
    """Rebuild the keyword index (and re-embed vectors) for every item from SQLite."""
    store._ensure_open()
    with store._db.read() as conn:
        rows = conn.execute("SELECT id, ns_id, value, indexed FROM items ORDER BY id").fetchall()
    # Items put with index=False stay out of both indexes, as they were written.
    texts = {rid: store._texts(json.loads(v), None) if ix else [] for rid, _ns, v, ix in rows}
    vecs: dict[int, np.ndarray] = {}
    if vectors and store.embeddings is not None:
        flat = [(rid, path, t) for rid, ts in texts.items() for path, t in ts]
        for i in range(0, len(flat), 256):
            chunk = flat[i : i + 256]
            arr = np.asarray(store.embeddings.embed_documents([c[2] for c in chunk]), np.float32)
            for (rid, _path, _t), v in zip(chunk, arr, strict=True):
                vecs.setdefault(rid, np.empty((0, store.dims), np.float32))
                vecs[rid] = np.vstack([vecs[rid], v[None, :]])
    with store._db.write() as conn:
        conn.execute("DELETE FROM postings")
        conn.execute("DELETE FROM terms")
        store._kw.rebuilt(conn)
        conn.execute("UPDATE namespaces SET n_docs=0, total_len=0")
        docs = []
        for rid, ns_id, _v, _ix in rows:
            toks = tokenize("\n".join(t for _, t in texts[rid]))
            conn.execute("UPDATE items SET doc_len=? WHERE id=?", (len(toks), rid))
            if toks:
                docs.append((ns_id, rid, toks))
        store._kw.add_many(conn, docs)
        if vectors and store.embeddings is not None:
            conn.execute("DELETE FROM vectors")
            for rid, ns_id, _v, _ix in rows:
                for (path, _t), v in zip(texts[rid], vecs.get(rid, []), strict=False):
                    conn.execute(
                        "INSERT INTO vectors(item_id, ns_id, path, vec) VALUES (?,?,?,?)",
                        (rid, ns_id, path, encode_vec(v, store.config.vector_storage)),
                    )
            # A new generation: every other handle and every snapshot rebuilds from SQLite.
            vec_log_reset(conn)
            store._db.set_meta(conn, "embedding_model", store.model_name)
            store._db.set_meta(conn, "embedding_dims", str(store.dims))
    if store._vec is not None:
        with store._db.read() as conn:
            store._vec.rebuild(conn)
    return {"items": len(rows), "vectors": sum(len(v) for v in vecs.values())}


def stats(store: HybridStore) -> dict[str, Any]:
    """Counts and sizes: items, namespaces, vectors, postings, database bytes."""
    store._ensure_open()
    with store._db.read() as conn:
        items = conn.execute("SELECT COUNT(*) FROM items").fetchone()[0]
        nss = conn.execute(
            "SELECT COUNT(*) FROM namespaces n WHERE EXISTS (SELECT 1 FROM items i WHERE i.ns_id=n.id)"
        ).fetchone()[0]
        vecs = conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        posts = conn.execute("SELECT COUNT(*) FROM postings").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        psize = conn.execute("PRAGMA page_size").fetchone()[0]
    return {
        "items": items,
        "namespaces": nss,
        "vectors": vecs,
        "postings": posts,
        "db_bytes": pages * psize,
        "embedding_model": store.model_name or None,
        "faiss_vectors": store._vec.count() if store._vec else 0,
    }


def _prefix_where(prefix: Sequence[str], exact: bool) -> tuple[str, tuple[str, ...]]:
    if not prefix:
        return "1=1", ()
    s = _SEP.join(prefix)
    if exact:
        return "n.ns = ?", (s,)
    return "(n.ns = ? OR (n.ns >= ? AND n.ns < ?))", (s, s + _SEP, s + chr(ord(_SEP) + 1))


def count(store: HybridStore, prefix: Sequence[str], exact: bool) -> int:
    """Items in namespace `prefix` (or in and under it when not `exact`)."""
    store._ensure_open()
    where, args = _prefix_where(prefix, exact)
    with store._db.read() as conn:
        row = conn.execute(
            f"SELECT COUNT(*) FROM items i JOIN namespaces n ON n.id = i.ns_id WHERE {where}",
            args,
        ).fetchone()
    return int(row[0])


def keys(
    store: HybridStore, prefix: Sequence[str], exact: bool
) -> list[tuple[tuple[str, ...], str]]:
    """(namespace, key) of every item in (or under) `prefix`, in insertion order."""
    store._ensure_open()
    where, args = _prefix_where(prefix, exact)
    with store._db.read() as conn:
        rows = conn.execute(
            f"SELECT n.ns, i.key FROM items i JOIN namespaces n ON n.id = i.ns_id "
            f"WHERE {where} ORDER BY i.id",
            args,
        ).fetchall()
    return [(tuple(ns.split(_SEP)), key) for ns, key in rows]


def locate(store: HybridStore, key: str, prefix: Sequence[str]) -> list[tuple[str, ...]]:
    """Namespaces in (or under) `prefix` that hold an item with `key`, oldest item first."""
    store._ensure_open()
    where, args = _prefix_where(prefix, False)
    with store._db.read() as conn:
        rows = conn.execute(
            f"SELECT n.ns FROM items i JOIN namespaces n ON n.id = i.ns_id "
            f"WHERE i.key = ? AND {where} ORDER BY i.id",
            (key, *args),
        ).fetchall()
    return [tuple(ns.split(_SEP)) for (ns,) in rows]


def restore_item_stats(
    store: HybridStore,
    rows: Sequence[tuple[Sequence[str], str, datetime, datetime, datetime | None, int]],
) -> int:
    """Set created_at, updated_at, last_accessed, access_count of existing items (import)."""
    store._ensure_open()
    args = [
        (_as_epoch(created), _as_epoch(updated), _as_epoch(last), int(n), key, _SEP.join(ns))
        for ns, key, created, updated, last, n in rows
    ]
    if not args:
        return 0
    with store._db.write() as conn:
        before = conn.total_changes
        conn.executemany(
            "UPDATE items SET created_at = ?, updated_at = ?, last_accessed = ?, access_count = ? "
            "WHERE key = ? AND ns_id = (SELECT id FROM namespaces WHERE ns = ?)",
            args,
        )
        return conn.total_changes - before


def db_bytes(store: HybridStore) -> int:
    """Bytes on disk (database + WAL), or the pages of an in-memory database."""
    path = store._db.path
    if path is None:
        with store._db.lock:
            pages = store._db.conn.execute("PRAGMA page_count").fetchone()[0]
            size = store._db.conn.execute("PRAGMA page_size").fetchone()[0]
        return int(pages) * int(size)
    return sum(os.path.getsize(p) for p in (f"{path}", f"{path}-wal") if os.path.exists(p))


def vacuum(store: HybridStore) -> int:
    """Checkpoint the WAL and VACUUM so deleted text leaves the file; returns bytes freed."""
    store._ensure_open()
    before = db_bytes(store)
    with store._db.lock:
        conn = store._db.conn
        if store._db.path is not None:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        if store._db.path is not None:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return max(0, before - db_bytes(store))
