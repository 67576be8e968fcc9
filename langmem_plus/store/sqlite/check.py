"""Integrity of a HybridStore: `check` (a report) and `backfill_vectors` (missing vectors).

Opening a database reads only the pages it needs, so a corrupt page elsewhere goes unseen
until a read reaches it; `check` reads everything: SQLite's `integrity_check`, then whether
the keyword index (postings, terms, namespace statistics) and the vectors agree with the
items table, and whether the in-memory FAISS index holds what SQLite holds.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langmem_plus.store.db.database import Database, in_chunks
from langmem_plus.store.keyword.docterms import count_pairs
from langmem_plus.store.seams import PlannedPut
from langmem_plus.store.vector.codec import VectorStorage
from langmem_plus.store.vector.index import VectorIndex, encode_vec

__all__ = ["backfill_vectors", "check", "count_missing_vectors", "mark_vectorless"]

logger = logging.getLogger("langmem_plus.store.hybrid")

VECTORLESS_META = "vectorless_writes"  # set when items were written with embeddings off
_BATCH = 256

# Items that should be in the keyword index: indexed and with at least one token.
_MISSING_VECTORS = (
    "SELECT COUNT(*) FROM items i WHERE i.indexed = 1 AND i.doc_len > 0 "
    "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.item_id = i.id)"
)
_KEYWORD_CHECKS = {
    "postings_of_missing_items": "SELECT COUNT(DISTINCT item_id) FROM postings "
    "WHERE item_id NOT IN (SELECT id FROM items)",
    "items_missing_postings": "SELECT COUNT(*) FROM items i WHERE i.doc_len > 0 AND i.id NOT IN "
    "(SELECT item_id FROM postings)",
    "items_missing_doc_terms": "SELECT COUNT(*) FROM items i WHERE i.doc_len > 0 AND i.id NOT IN "
    "(SELECT item_id FROM doc_terms)",
    "doc_terms_of_missing_items": "SELECT COUNT(*) FROM doc_terms "
    "WHERE item_id NOT IN (SELECT id FROM items)",
    "items_with_wrong_length": "SELECT COUNT(*) FROM (SELECT item_id, SUM(tf) AS n FROM postings "
    "GROUP BY item_id) p JOIN items i ON i.id = p.item_id WHERE p.n != i.doc_len",
    "terms_with_wrong_df": "SELECT COUNT(*) FROM terms t WHERE t.df != "
    "(SELECT COUNT(*) FROM postings p WHERE p.term_id = t.id)",
    "namespaces_with_wrong_stats": "SELECT COUNT(*) FROM namespaces n WHERE "
    "n.n_docs != (SELECT COUNT(*) FROM items i WHERE i.ns_id = n.id AND i.doc_len > 0) "
    "OR n.total_len != (SELECT COALESCE(SUM(i.doc_len), 0) FROM items i WHERE i.ns_id = n.id)",
}
_VECTOR_CHECKS = {
    "vectors_of_missing_items": "SELECT COUNT(*) FROM vectors "
    "WHERE item_id NOT IN (SELECT id FROM items)",
    "vectors_in_wrong_namespace": "SELECT COUNT(*) FROM vectors v JOIN items i "
    "ON i.id = v.item_id WHERE v.ns_id != i.ns_id",
}


@contextmanager
def _reading(db: Database) -> Iterator[sqlite3.Connection]:
    """A read transaction whose end survives a corrupt database (COMMIT can fail then)."""
    with db.lock:
        db.conn.execute("BEGIN")
        try:
            yield db.conn
        finally:
            try:
                db.conn.execute("COMMIT")
            except sqlite3.DatabaseError:
                if db.conn.in_transaction:
                    try:
                        db.conn.execute("ROLLBACK")
                    except sqlite3.DatabaseError:
                        logger.warning("could not end the read transaction of check()")


def count_missing_vectors(conn: sqlite3.Connection) -> int:
    """Items with text to index but no vector (written while embeddings were off)."""
    return int(conn.execute(_MISSING_VECTORS).fetchone()[0])


def check(db: Database, vec: VectorIndex | None) -> dict[str, Any]:
    """The integrity report of a store's database and vector index; `ok` is False when any
    problem was found."""
    problems: list[str] = []
    with _reading(db) as conn:
        try:
            integrity = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(100)")]
        except sqlite3.DatabaseError as exc:  # a page too damaged to walk at all
            integrity = [f"integrity_check failed: {exc}"]
        if integrity != ["ok"]:
            problems += [f"sqlite: {line}" for line in integrity]
        counts: dict[str, Any] = {}
        try:
            counts["items"] = conn.execute("SELECT COUNT(*) FROM items").fetchone()[0]
            counts["vectors"] = conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
            keyword = {k: int(conn.execute(q).fetchone()[0]) for k, q in _KEYWORD_CHECKS.items()}
            postings = int(conn.execute("SELECT COUNT(*) FROM postings").fetchone()[0])
            keyword["doc_terms_postings_difference"] = abs(count_pairs(conn) - postings)
            vectors = {k: int(conn.execute(q).fetchone()[0]) for k, q in _VECTOR_CHECKS.items()}
            vectors["items_missing_vectors"] = count_missing_vectors(conn)
        except sqlite3.DatabaseError as exc:
            problems.append(f"could not compare the indexes with the items: {exc}")
            keyword, vectors = {}, {}
        if vec is not None and not problems:
            vec.sync(conn)
            vectors["faiss_vectors"] = vec.count()
    problems += [
        f"keyword index: {v} {k.replace('_', ' ')} (run `langmem-plus reindex`)"
        for k, v in keyword.items()
        if v
    ]
    for k, v in vectors.items():
        if k in ("faiss_vectors", "items_missing_vectors") or not v:
            continue
        problems.append(f"vectors: {v} {k.replace('_', ' ')} (run `langmem-plus reindex`)")
    if vec is not None and vectors.get("items_missing_vectors"):
        problems.append(
            f"vectors: {vectors['items_missing_vectors']} items have no vectors (written with "
            "embeddings off); run `langmem-plus reindex` or HybridStore.backfill_vectors()"
        )
    if "faiss_vectors" in vectors and vectors["faiss_vectors"] != counts.get("vectors"):
        problems.append(
            f"vectors: the FAISS index holds {vectors['faiss_vectors']} vectors, SQLite "
            f"{counts.get('vectors')}; reopen the store or run `langmem-plus reindex`"
        )
    return {
        "ok": not problems,
        "problems": problems,
        "integrity": integrity,
        **counts,
        "keyword": keyword,
        "vector_index": vectors,
    }


def mark_vectorless(db: Database, conn: sqlite3.Connection, puts: Mapping[Any, PlannedPut]) -> None:
    """Note in the database that items with text were written without vectors."""
    if any(p.keyword_text and p.op.index is not False for p in puts.values()):
        db.set_meta(conn, VECTORLESS_META, "1")


def warn_missing_vectors(db: Database, where: str) -> None:
    """On opening with embeddings: one warning when items have no vectors (see backfill);
    `where` names the store in the warning."""
    with db.read() as conn:
        marked = db.get_meta(VECTORLESS_META) is not None
        no_vectors = conn.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is None
        if not marked and not no_vectors:
            return
        missing = count_missing_vectors(conn)
    if missing:
        logger.warning(
            "%d items in %s have no vectors (written with embeddings off), so vector search "
            "cannot find them; run `langmem-plus reindex` or HybridStore.backfill_vectors()",
            missing,
            where,
        )
    elif marked and not db.read_only:
        with db.write() as conn:
            conn.execute("DELETE FROM meta WHERE key = ?", (VECTORLESS_META,))


def backfill_vectors(
    db: Database,
    vec: VectorIndex,
    embeddings: Embeddings,
    texts: Callable[[Mapping[str, Any]], list[tuple[str, str]]],
    storage: VectorStorage,
) -> int:
    """Embed and store vectors for the items that have none; returns how many got vectors.
    `texts` gives an item value's (path, text) pairs to embed."""
    with db.read() as conn:
        rows = conn.execute(
            "SELECT i.id, i.ns_id, i.value FROM items i WHERE i.indexed = 1 AND NOT EXISTS "
            "(SELECT 1 FROM vectors v WHERE v.item_id = i.id) ORDER BY i.id"
        ).fetchall()
    done = 0
    for chunk, _qs in in_chunks(rows, _BATCH):
        todo = [
            (rid, ns_id, value, path, text)
            for rid, ns_id, value in chunk
            for path, text in texts(json.loads(value))
        ]
        if not todo:
            continue
        vecs = np.asarray(embeddings.embed_documents([t[4] for t in todo]), np.float32)
        with db.write() as conn:
            fresh: dict[int, bool] = {}
            for (rid, ns_id, value, path, _text), v in zip(todo, vecs, strict=True):
                if rid not in fresh:  # unchanged since read, and still without vectors
                    row = conn.execute("SELECT value FROM items WHERE id = ?", (rid,)).fetchone()
                    has = conn.execute("SELECT 1 FROM vectors WHERE item_id = ?", (rid,))
                    fresh[rid] = row is not None and row[0] == value and has.fetchone() is None
                if not fresh[rid]:
                    continue
                vid = conn.execute(
                    "INSERT INTO vectors(item_id, ns_id, path, vec) VALUES (?,?,?,?)",
                    (rid, ns_id, path, encode_vec(v, storage)),
                ).lastrowid
                conn.execute("INSERT INTO vec_log(ns_id, vec_id, op) VALUES (?,?,1)", (ns_id, vid))
        done += sum(fresh.values())
    with db.write() as conn:
        if count_missing_vectors(conn) == 0:
            conn.execute("DELETE FROM meta WHERE key = ?", (VECTORLESS_META,))
    with db.read() as conn:
        vec.sync(conn)
    return done
