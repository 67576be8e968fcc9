"""Each indexed document's terms, packed in one row (`doc_terms`), instead of a postings index.

The keyword index stores postings clustered by (term id, item id): the layout a query reads.
The other direction (an item's terms: to unindex it, for feedback terms, to refill caches) was
an index on `postings(item_id)`, which repeated every posting (issue #13 measured it as the
second largest structure per stored turn). One `doc_terms` row per document holds the same
pairs packed: term ids ascending, delta-encoded as unsigned LEB128 varints, each followed by
its term frequency, and the document's length. Readers get exactly what the index gave,
in the same order (item id, then term id).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from langmem_plus.store.db.database import in_chunks
from langmem_plus.store.db.termpack import pack_terms, unpack_terms

__all__ = [
    "DocTermRow",
    "count_pairs",
    "doc_term_rows",
    "read_doc_terms",
    "write_doc_terms",
]

DocTermRow = tuple[str, int, int, int, int, int, int]
"""(term, item id, tf, doc length, term id, df, term's ns id) of one term in one document."""


def write_doc_terms(
    conn: sqlite3.Connection, docs: Iterable[tuple[int, int, Iterable[tuple[int, int]]]]
) -> None:
    """Store (item id, doc length, [(term id, tf)]) rows; the caller owns the transaction."""
    conn.executemany(
        "INSERT OR REPLACE INTO doc_terms(item_id, dl, terms) VALUES (?, ?, ?)",
        [(item_id, dl, pack_terms(pairs)) for item_id, dl, pairs in docs],
    )


def read_doc_terms(
    conn: sqlite3.Connection, item_ids: Sequence[int]
) -> dict[int, tuple[int, list[tuple[int, int]]]]:
    """item id -> (doc length, [(term id, tf)] by term id), for the given items that have
    terms (items without tokens, or deleted since, are absent)."""
    out: dict[int, tuple[int, list[tuple[int, int]]]] = {}
    for part, marks in in_chunks(list(item_ids)):
        for item_id, dl, blob in conn.execute(
            f"SELECT item_id, dl, terms FROM doc_terms WHERE item_id IN ({marks})", part
        ):
            out[int(item_id)] = (int(dl), unpack_terms(blob))
    return out


def doc_term_rows(conn: sqlite3.Connection, item_ids: Sequence[int]) -> list[DocTermRow]:
    """Every term of the given items with its text and df, by item id then term id (what a
    join of postings and terms over an item index gave)."""
    docs = read_doc_terms(conn, sorted(set(item_ids)))
    tids = sorted({tid for _dl, pairs in docs.values() for tid, _tf in pairs})
    terms: dict[int, tuple[str, int, int]] = {}
    for part, marks in in_chunks(tids):
        for tid, term, df, ns_id in conn.execute(
            f"SELECT id, term, df, ns_id FROM terms WHERE id IN ({marks})", part
        ):
            terms[int(tid)] = (str(term), int(df), int(ns_id))
    rows: list[DocTermRow] = []
    for item_id in sorted(docs):
        dl, pairs = docs[item_id]
        for tid, tf in pairs:
            got = terms.get(tid)
            if got is not None:  # a term row lost to corruption: as the join dropped it
                rows.append((got[0], item_id, tf, dl, tid, got[1], got[2]))
    return rows


def count_pairs(conn: sqlite3.Connection) -> int:
    """(term, item) pairs held in `doc_terms`: equal to the postings' count when they agree."""
    return sum(len(unpack_terms(blob)) for (blob,) in conn.execute("SELECT terms FROM doc_terms"))
