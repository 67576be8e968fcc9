"""The write path of HybridStore: items, keyword postings and vectors in one transaction."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from langmem_plus.store._common import _ns_str
from langmem_plus.store.vector import encode_vec
from langmem_plus.text.tokenize import tokenize

if TYPE_CHECKING:
    from langmem_plus.store.hybrid import HybridStore
    from langmem_plus.store.plan import Plan


def ns_ids_for_write(
    store: HybridStore, conn: Any, namespaces: Iterable[tuple[str, ...]]
) -> dict[tuple[str, ...], int]:
    out: dict[tuple[str, ...], int] = {}
    for ns in set(namespaces):
        s = _ns_str(ns)
        conn.execute("INSERT OR IGNORE INTO namespaces(ns) VALUES (?)", (s,))
        out[ns] = conn.execute("SELECT id FROM namespaces WHERE ns=?", (s,)).fetchone()[0]
    return out


def apply_puts(
    store: HybridStore, conn: Any, plan: Plan, doc_vecs: np.ndarray | None, now: float
) -> None:
    ns_ids = ns_ids_for_write(store, conn, (k[0] for k in plan.puts))
    # 1. unindex whatever the touched keys held before
    old: list[tuple[int, int, int]] = []
    keys_by_ns: dict[int, list[str]] = {}
    for ns, key in plan.puts:
        keys_by_ns.setdefault(ns_ids[ns], []).append(key)
    existing: dict[tuple[int, str], tuple[int, float]] = {}
    for ns_id, keys in keys_by_ns.items():
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            marks = ",".join("?" * len(part))
            for rid, key, dl, created in conn.execute(
                f"SELECT id, key, doc_len, created_at FROM items WHERE ns_id=? AND key IN ({marks})",
                (ns_id, *part),
            ):
                existing[(ns_id, key)] = (rid, created)
                old.append((ns_id, rid, dl))
    if old:
        store._kw.remove_many(conn, old)
        drop_vectors(store, conn, [o[1] for o in old])
    # 2. write the new state
    kw_docs: list[tuple[int, int, list[str]]] = []
    vec_rows: list[tuple[int, int, str, bytes]] = []
    cursor = 0
    storage = store.config.vector_storage
    for (ns, key), p in plan.puts.items():
        ns_id = ns_ids[ns]
        prev = existing.get((ns_id, key))
        op = p.op
        if op.value is None:
            if prev is not None:
                conn.execute("DELETE FROM items WHERE id=?", (prev[0],))
            continue
        tokens = tokenize(p.keyword_text) if op.index is not False else []
        indexed = 0 if op.index is False else 1
        ttl = op.ttl
        expires = now + ttl * 60 if ttl is not None else None
        payload = json.dumps(op.value, ensure_ascii=False, separators=(",", ":"))
        fields = rank_fields(op.value)
        if prev is None:
            rid = conn.execute(
                "INSERT INTO items(ns_id, key, value, created_at, updated_at, ttl_minutes, "
                "expires_at, doc_len, indexed, confidence, category, session) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (ns_id, key, payload, now, now, ttl, expires, len(tokens), indexed, *fields),
            ).lastrowid
        else:
            rid = prev[0]
            conn.execute(
                "UPDATE items SET value=?, updated_at=?, ttl_minutes=?, expires_at=?, "
                "doc_len=?, indexed=?, confidence=?, category=?, session=? WHERE id=?",
                (payload, now, ttl, expires, len(tokens), indexed, *fields, rid),
            )
        if tokens:
            kw_docs.append((ns_id, rid, tokens))
        for path, _text in p.texts:
            assert doc_vecs is not None
            vec_rows.append((rid, ns_id, path, encode_vec(doc_vecs[cursor], storage)))
            cursor += 1
    store._kw.add_many(conn, kw_docs)
    for rid, ns_id, path, blob in vec_rows:
        vid = conn.execute(
            "INSERT INTO vectors(item_id, ns_id, path, vec) VALUES (?,?,?,?)",
            (rid, ns_id, path, blob),
        ).lastrowid
        conn.execute("INSERT INTO vec_log(ns_id, vec_id, op) VALUES (?,?,1)", (ns_id, vid))


_SESSION_KEYS = ("session_id", "chat_id", "conversation_id")


def rank_fields(value: Any) -> tuple[float | None, str | None, str | None]:
    """(confidence, category, session) of an item value, as ranking reads them.

    Confidence: a number (not a boolean). Category: a string. Session: the first of
    session_id / chat_id / conversation_id holding a non-empty string or an integer, as text
    (turns that name the same session are context for each other, store/neighbours.py).
    """
    if not isinstance(value, dict):
        return None, None, None
    conf = value.get("confidence")
    confidence = (
        float(conf) if isinstance(conf, (int, float)) and not isinstance(conf, bool) else None
    )
    cat = value.get("category")
    session = None
    for k in _SESSION_KEYS:
        v = value.get(k)
        if isinstance(v, bool) or not isinstance(v, (str, int)) or v == "":
            continue
        session = str(v)
        break
    return confidence, cat if isinstance(cat, str) else None, session


def drop_vectors(store: HybridStore, conn: Any, item_ids: Sequence[int]) -> None:
    for i in range(0, len(item_ids), 500):
        part = list(item_ids[i : i + 500])
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            f"SELECT id, ns_id FROM vectors WHERE item_id IN ({marks})", part
        ).fetchall()
        if rows:
            conn.executemany(
                "INSERT INTO vec_log(ns_id, vec_id, op) VALUES (?,?,0)",
                [(ns_id, vid) for vid, ns_id in rows],
            )
            conn.execute(f"DELETE FROM vectors WHERE item_id IN ({marks})", part)
