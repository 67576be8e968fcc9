"""The write side of the keyword index: documents indexed and unindexed in SQLite.

A put touches only the postings of that item, its packed terms (store/keyword/docterms.py)
and the document frequencies of its terms, so writes cost the same at 1k or 1M items. Every
change goes to the keyword feed (store/db/changefeed.py) in the same transaction, so every
process's caches see it. `KeywordIndex` (store/keyword/index.py) calls these.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Sequence

from langmem_plus.store.db.changefeed import KEYWORD_FEED, OP_ADD, OP_REMOVE, Change
from langmem_plus.store.db.database import in_chunks
from langmem_plus.store.keyword.docterms import read_doc_terms, write_doc_terms

__all__ = ["add_docs", "clear", "log_changes", "remove_docs"]

# Keyword feed entries kept by compaction; caches further behind reload lazily.
_LOG_KEEP = 4096


def add_docs(
    conn: sqlite3.Connection, docs: Sequence[tuple[int, int, list[str]]], compact: bool
) -> None:
    """Index documents given as (ns_id, item_id, tokens); the caller owns the transaction.
    `compact`: trim the keyword feed to its newest entries after logging."""
    if not docs:
        return
    per_ns_terms: dict[int, Counter[str]] = {}
    ns_delta: dict[int, list[int]] = {}
    counted: list[tuple[int, int, Counter[str], int]] = []
    for ns_id, item_id, tokens in docs:
        tf = Counter(tokens)
        counted.append((ns_id, item_id, tf, len(tokens)))
        per_ns_terms.setdefault(ns_id, Counter()).update(tf.keys())
        d = ns_delta.setdefault(ns_id, [0, 0])
        d[0] += 1
        d[1] += len(tokens)
    term_ids: dict[int, dict[str, int]] = {}  # ns_id -> term -> its id
    for ns_id, dfs in per_ns_terms.items():
        # one statement per namespace, however many terms (a JSON object term -> df)
        conn.execute(
            "INSERT INTO terms(ns_id, term, df) SELECT ?, key, value FROM json_each(?) "
            "WHERE true ON CONFLICT(ns_id, term) DO UPDATE SET df = df + excluded.df",
            (ns_id, json.dumps(dfs, ensure_ascii=False)),
        )
        ids = term_ids.setdefault(ns_id, {})
        for part, marks in in_chunks(list(dfs)):
            ids.update(
                (term, tid)
                for tid, term in conn.execute(
                    f"SELECT id, term FROM terms WHERE ns_id=? AND term IN ({marks})",
                    (ns_id, *part),
                )
            )
    # each document's (term id, tf) pairs, read once for its postings and its packed row
    pairs = [
        (item_id, dl, [(term_ids[ns_id][t], n) for t, n in tf.items()])
        for ns_id, item_id, tf, dl in counted
    ]
    rows = [[tid, item_id, n, dl] for item_id, dl, ps in pairs for tid, n in ps]
    if rows:  # one statement for every posting of the batch
        conn.execute(
            "INSERT INTO postings(term_id, item_id, tf, dl) SELECT json_extract(value, "
            "'$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), "
            "json_extract(value, '$[3]') FROM json_each(?)",
            (json.dumps(rows),),
        )
    write_doc_terms(conn, [p for p in pairs if p[2]])
    conn.executemany(
        "UPDATE namespaces SET n_docs = n_docs + ?, total_len = total_len + ? WHERE id = ?",
        [(d[0], d[1], ns_id) for ns_id, d in ns_delta.items()],
    )
    log_changes(conn, [(ns_id, item_id, OP_ADD) for ns_id, item_id, _t in docs], compact)


def remove_docs(
    conn: sqlite3.Connection, docs: Sequence[tuple[int, int, int]], compact: bool
) -> None:
    """Unindex documents given as (ns_id, item_id, doc_len); `compact` as for `add_docs`."""
    if not docs:
        return
    ids = [d[1] for d in docs]
    term_dec: Counter[int] = Counter()
    counted: set[int] = set()  # the documents add_docs counted: those with postings
    gone: list[tuple[int, int]] = []
    for item_id, (_dl, pairs) in read_doc_terms(conn, ids).items():
        counted.add(item_id)
        for tid, _tf in pairs:
            term_dec[tid] += 1
            gone.append((tid, item_id))
    conn.executemany("DELETE FROM postings WHERE term_id = ? AND item_id = ?", gone)
    for part, marks in in_chunks(ids):
        conn.execute(f"DELETE FROM doc_terms WHERE item_id IN ({marks})", part)
    conn.executemany(
        "UPDATE terms SET df = df - ? WHERE id = ?", [(n, t) for t, n in term_dec.items()]
    )
    conn.executemany("DELETE FROM terms WHERE id = ? AND df <= 0", [(t,) for t in term_dec])
    ns_delta: dict[int, list[int]] = {}
    for ns_id, item_id, dl in docs:
        if item_id not in counted:
            continue  # a document without tokens was never counted (add_docs)
        d = ns_delta.setdefault(ns_id, [0, 0])
        d[0] += 1
        d[1] += dl
    conn.executemany(
        "UPDATE namespaces SET n_docs = n_docs - ?, total_len = total_len - ? WHERE id = ?",
        [(d[0], d[1], ns_id) for ns_id, d in ns_delta.items()],
    )
    log_changes(conn, [(ns_id, item_id, OP_REMOVE) for ns_id, item_id, _dl in docs], compact)


def log_changes(conn: sqlite3.Connection, entries: list[Change], compact: bool) -> None:
    """Every keyword change goes to the keyword feed (all processes' caches replay it)."""
    KEYWORD_FEED.append(conn, entries)
    if compact:
        KEYWORD_FEED.keep_newest(conn, _LOG_KEEP)


def clear(conn: sqlite3.Connection) -> None:
    """Empty the index before a rebuild (reindex): every process's cache drops it."""
    for table in ("postings", "doc_terms", "terms"):
        conn.execute(f"DELETE FROM {table}")
    KEYWORD_FEED.reset(conn)
