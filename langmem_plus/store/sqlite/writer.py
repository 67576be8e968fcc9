"""The write path: items, keyword postings and vectors of a batch's puts in one transaction.

`ItemWriter` is given the parts it writes (the keyword index and the vector storage form); the
caller (`HybridStore`) owns the transaction, the plan and the embeddings. Every change reaches
the change feeds (store/db/changefeed.py) in the same transaction, so the in-memory structures of
every process catch up before their next use.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from langgraph.store.base import PutOp

from langmem_plus.model.records import record_columns
from langmem_plus.store.db.changefeed import OP_ADD, OP_REMOVE, VECTOR_FEED
from langmem_plus.store.db.database import in_chunks, ns_key
from langmem_plus.store.keyword.index import KeywordIndex
from langmem_plus.store.seams import DEFAULT_SESSION_KEYS, PlannedPut, TextChanged, rank_fields
from langmem_plus.store.sqlite.rows import record_cells
from langmem_plus.store.vector.codec import VectorStorage, encode_vec
from langmem_plus.text.tokenize import tokenize

__all__ = [
    "ItemWriter",
    "index_key",
]


def index_key(put: PlannedPut, storage: VectorStorage) -> bytes:
    """A digest of what a put's postings and vectors are made from (its keyword text, the
    (path, text) pairs embedded and the vectors' stored form): a put of an item whose stored
    key is the same keeps them. 8 bytes, stored as a blob (a key in an older form, 32 hex
    digits, never equals one: that item is indexed again on its next put)."""
    made_of = json.dumps([put.keyword_text, put.texts, storage], ensure_ascii=False)
    return hashlib.blake2b(made_of.encode(), digest_size=8).digest()


class ItemWriter:
    """Writes planned puts (and deletions: a put of None) into the caller's transaction."""

    def __init__(
        self,
        keywords: KeywordIndex,
        vector_storage: VectorStorage,
        session_keys: Sequence[str] = DEFAULT_SESSION_KEYS,
    ) -> None:
        self._kw = keywords
        self._storage = vector_storage
        self._session_keys = tuple(session_keys)

    @staticmethod
    def namespace_ids(
        conn: sqlite3.Connection, namespaces: Iterable[tuple[str, ...]]
    ) -> dict[tuple[str, ...], int]:
        """The id of each namespace, created when new (a known one: one statement)."""
        out: dict[tuple[str, ...], int] = {}
        for ns in set(namespaces):
            s = ns_key(ns)
            row = conn.execute("SELECT id FROM namespaces WHERE ns=?", (s,)).fetchone()
            if row is None:
                row = (conn.execute("INSERT INTO namespaces(ns) VALUES (?)", (s,)).lastrowid,)
            out[ns] = int(row[0])
        return out

    def apply_puts(
        self,
        conn: sqlite3.Connection,
        puts: Mapping[tuple[tuple[str, ...], str], PlannedPut],
        doc_vecs: np.ndarray | None,
        now: float,
    ) -> None:
        """Unindex what the touched keys held, then write their new state (or delete them).
        A put whose `index_key` is the item's stored one changes only the row: its postings
        and vectors already hold the same text.

        `doc_vecs`: one row per (path, text) of the puts, in their order (none for a put
        planned `unembedded`: should its stored index key differ, `TextChanged` is raised and
        the caller's transaction rolls back).
        """
        ns_ids = self.namespace_ids(conn, (k[0] for k in puts))
        keys = {k: index_key(p, self._storage) for k, p in puts.items() if p.op.value is not None}
        existing, same = self._unindex_existing(conn, puts, ns_ids, keys)
        kw_docs: list[tuple[int, int, list[str]]] = []
        vec_rows: list[tuple[int, int, str, bytes]] = []
        cursor = 0
        for (ns, key), p in puts.items():
            ns_id = ns_ids[ns]
            prev = existing.get((ns_id, key))
            op = p.op
            if op.value is None:
                if prev is not None:
                    conn.execute("DELETE FROM items WHERE id=?", (prev,))
                continue
            kept = (ns_id, key) in same
            tokens = tokenize(p.keyword_text) if op.index is not False else []
            rid = self._write_item(conn, ns_id, key, op, len(tokens), prev, now, keys[(ns, key)])
            if tokens and not kept:
                kw_docs.append((ns_id, rid, tokens))
            if p.unembedded:  # its vectors are those stored: they must be kept
                if p.texts and not kept:
                    raise TextChanged(f"{key} would index another text")
                continue
            for path, _text in p.texts:
                assert doc_vecs is not None
                if not kept:
                    vec_rows.append((rid, ns_id, path, encode_vec(doc_vecs[cursor], self._storage)))
                cursor += 1
        self._kw.add_many(conn, kw_docs)
        added: list[tuple[int, int, int]] = []
        for rid, ns_id, path, blob in vec_rows:
            vid = conn.execute(
                "INSERT INTO vectors(item_id, ns_id, path, vec) VALUES (?,?,?,?)",
                (rid, ns_id, path, blob),
            ).lastrowid
            assert vid is not None
            added.append((ns_id, vid, OP_ADD))
        VECTOR_FEED.append(conn, added)

    def _unindex_existing(
        self,
        conn: sqlite3.Connection,
        puts: Mapping[tuple[tuple[str, ...], str], PlannedPut],
        ns_ids: Mapping[tuple[str, ...], int],
        keys: Mapping[tuple[tuple[str, ...], str], bytes],
    ) -> tuple[dict[tuple[int, str], int], set[tuple[int, str]]]:
        """Remove the postings and vectors of the keys that exist, except where the put's
        index key is the stored one; returns (ns id, key) -> item id, and the kept keys."""
        keys_by_ns: dict[int, list[str]] = {}
        for ns, key in puts:
            keys_by_ns.setdefault(ns_ids[ns], []).append(key)
        wanted = {(ns_ids[ns], key): k for (ns, key), k in keys.items()}
        old: list[tuple[int, int, int]] = []
        existing: dict[tuple[int, str], int] = {}
        same: set[tuple[int, str]] = set()
        for ns_id, ns_keys in keys_by_ns.items():
            for part, marks in in_chunks(ns_keys):
                for rid, key, dl, stored in conn.execute(
                    f"SELECT id, key, doc_len, index_key FROM items "
                    f"WHERE ns_id=? AND key IN ({marks})",
                    (ns_id, *part),
                ):
                    existing[(ns_id, key)] = rid
                    if stored is not None and wanted.get((ns_id, key)) == stored:
                        same.add((ns_id, key))
                    else:
                        old.append((ns_id, rid, dl))
        if old:
            self._kw.remove_many(conn, old)
            self.drop_vectors(conn, [o[1] for o in old])
        return existing, same

    def _write_item(
        self,
        conn: sqlite3.Connection,
        ns_id: int,
        key: str,
        op: PutOp,
        doc_len: int,
        prev: int | None,
        now: float,
        key_of_index: bytes,
    ) -> int:
        """Insert the item, or update the existing row `prev`; returns its id. A new
        langmem_plus record is dated when it was said (its `occurred_at`), so an imported
        history keeps its dates in one write."""
        indexed = 0 if op.index is False else 1
        ttl = op.ttl
        expires = now + ttl * 60 if ttl is not None else None
        payload = json.dumps(op.value, ensure_ascii=False, separators=(",", ":"))
        record = record_columns(op.value)
        fields = (*rank_fields(op.value, self._session_keys), *record_cells(record))
        if prev is None:
            said = record[2]
            born = now if said is None else said  # a record: dated when it was said
            rid = conn.execute(
                "INSERT INTO items(ns_id, key, value, created_at, updated_at, ttl_minutes, "
                "expires_at, doc_len, indexed, confidence, category, session, kind, slot, "
                "said_at, valid_from, valid_to, stale, index_key) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    ns_id,
                    key,
                    payload,
                    born,
                    born,
                    ttl,
                    expires,
                    doc_len,
                    indexed,
                    *fields,
                    key_of_index,
                ),
            ).lastrowid
            assert rid is not None
            return rid
        conn.execute(
            "UPDATE items SET value=?, updated_at=?, ttl_minutes=?, expires_at=?, doc_len=?, "
            "indexed=?, confidence=?, category=?, session=?, kind=?, slot=?, said_at=?, "
            "valid_from=?, valid_to=?, stale=?, index_key=? WHERE id=?",
            (payload, now, ttl, expires, doc_len, indexed, *fields, key_of_index, prev),
        )
        return prev

    @staticmethod
    def drop_vectors(conn: sqlite3.Connection, item_ids: Sequence[int]) -> None:
        """Delete the vectors of these items (logged for every vector index)."""
        for part, marks in in_chunks(item_ids):
            rows = conn.execute(
                f"SELECT id, ns_id FROM vectors WHERE item_id IN ({marks})", part
            ).fetchall()
            if rows:
                VECTOR_FEED.append(conn, [(ns_id, vid, OP_REMOVE) for vid, ns_id in rows])
                conn.execute(f"DELETE FROM vectors WHERE item_id IN ({marks})", part)
