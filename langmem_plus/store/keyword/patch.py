"""Bringing a held `Resident` keyword index up to date after keyword changes to a few of its
documents (store/keyword/resident.py): the same answers as reading it whole again, from the changed
documents' rows and their terms' rows. New items only (the agent loop's writes) append to the
held arrays; anything else groups every pair again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from langmem_plus.store.db.database import in_chunks
from langmem_plus.store.db.termpack import unpack_terms
from langmem_plus.store.keyword.resident import Resident

__all__ = ["appends_only", "patched"]

Doc = tuple[int, int, list[tuple[int, int]]]  # item id, length, its (term id, tf) pairs


def patched(old: Resident, conn: sqlite3.Connection, item_ids: Iterable[int]) -> Resident:
    """`old` after keyword changes to the given items (added, rewritten or removed): the
    same answers as `Resident.load` would read now. The caller synced the change feed in this
    read transaction; `old` is left as it was (a search holding it keeps a consistent index)."""
    new = Resident(old.ns_id)
    new.read_stats(conn)
    changed = sorted(set(item_ids))
    docs: list[Doc] = []
    for part, marks in in_chunks(changed):
        docs.extend(
            (int(i), int(dl), unpack_terms(blob))
            for i, dl, blob in conn.execute(
                "SELECT d.item_id, d.dl, d.terms FROM items i JOIN doc_terms d "
                f"ON d.item_id = i.id WHERE +i.ns_id = ? AND i.id IN ({marks})",
                (old.ns_id, *part),
            )
        )
    docs.sort()
    old_pos = [p for p in map(old.pos_of.get, changed) if p is not None]
    held = _patch_terms(new, conn, old, old_pos, docs)
    # the changed documents' pairs as stored now (terms without a row left out)
    get = held.get
    n_doc: list[int] = []
    n_term: list[int] = []
    n_tf: list[int] = []
    for k, (_i, _dl, doc_pairs) in enumerate(docs):
        for tid, count in doc_pairs:
            j = get(tid)
            if j is not None:
                n_doc.append(k)
                n_term.append(j)
                n_tf.append(count)
    if not old_pos and appends_only(old, docs):  # new items only (the usual case)
        new.append_docs(old, docs, n_doc, n_term, n_tf)
        return new
    counts: np.ndarray = np.diff(np.asarray(old.doc_ptr, dtype=np.int64))
    o_doc = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    o_term, o_tf = old.p_term, old.p_tf
    ids, dls = old.id_list, old.dl_list
    if old_pos:  # the changed documents' old pairs out, the rest renumbered
        keep = np.ones(len(ids), dtype=np.bool_)
        keep[old_pos] = False
        ok = keep[o_doc]
        o_doc, o_term, o_tf = (np.cumsum(keep) - 1)[o_doc[ok]], o_term[ok], o_tf[ok]
        gone = set(old_pos)
        ids = [i for p, i in enumerate(ids) if p not in gone]
        dls = [d for p, d in enumerate(dls) if p not in gone]
    base = len(ids)
    doc = np.concatenate([o_doc, np.array(n_doc, dtype=np.int64) + base])
    term = np.concatenate([o_term, np.array(n_term, dtype=np.int32)])
    tf = np.concatenate([o_tf, np.array(n_tf, dtype=np.int32)])
    ids = [*ids, *(d[0] for d in docs)]
    dls = [*dls, *(d[1] for d in docs)]
    if docs and base and docs[0][0] < ids[base - 1]:  # not all past the held ids: re-sort
        order = np.argsort(np.array(ids, dtype=np.int64), kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        doc = rank[doc]
        by_doc = np.argsort(doc, kind="stable")  # each document's pairs kept in order
        doc, term, tf = doc[by_doc], term[by_doc], tf[by_doc]
        ids = [ids[i] for i in order.tolist()]
        dls = [dls[i] for i in order.tolist()]
    new.set_docs(ids, dls, doc, term, tf)
    return new


def appends_only(old: Resident, docs: Sequence[Doc]) -> bool:
    """Whether `docs` (by id) all come after every held document (their ids only grow)."""
    return bool(docs) and (not old.id_list or docs[0][0] > old.id_list[-1])


def _patch_terms(
    new: Resident,
    conn: sqlite3.Connection,
    old: Resident,
    old_pos: Sequence[int],
    docs: Sequence[Doc],
) -> dict[int, int]:
    """`old`'s term table, set on `new`, with the rows of every term the change may have
    touched (the changed documents' old and new terms) read again: dfs updated, rows gone
    dropped from the lookups (SQLite may reuse a deleted row's id), new terms appended.
    Returns live term id -> term index for those terms."""
    doc_ptr, tid_of = old.doc_ptr, old.tid_list
    affected = {
        tid_of[t] for p in old_pos for t in old.p_term[doc_ptr[p] : doc_ptr[p + 1]].tolist()
    }
    affected.update(tid for _i, _dl, pairs in docs for tid, _tf in pairs)
    now: dict[int, tuple[str, int]] = {}
    for part, marks in in_chunks(sorted(affected)):
        for tid, term, df in conn.execute(
            # `+ns_id`: by primary key (the planner may otherwise walk the namespace's terms)
            f"SELECT id, term, df FROM terms WHERE +ns_id = ? AND id IN ({marks})",
            (new.ns_id, *part),
        ):
            now[int(tid)] = (str(term), int(df))
    terms, tids, dfs = list(old.terms), list(tid_of), list(old.df_list)
    term_ix = dict(old.term_ix)
    held = _held_ids(old, old_pos, now)
    for tid in sorted(affected):
        j, row = held.get(tid), now.get(tid)
        if j is None:
            continue
        if row is None or row[0] != terms[j]:  # the row is gone (its id may be reused)
            del term_ix[terms[j]]
            del held[tid]
        else:
            dfs[j] = row[1]
    for tid in sorted(affected):
        if tid not in held and tid in now:  # a term new to the namespace
            term_ix[now[tid][0]] = held[tid] = len(terms)
            terms.append(now[tid][0])
            tids.append(tid)
            dfs.append(now[tid][1])
    new.set_terms(terms, tids, dfs, term_ix)
    return held


def _held_ids(
    old: Resident, old_pos: Sequence[int], now: Mapping[int, tuple[str, int]]
) -> dict[int, int]:
    """Term id -> term index of `old`'s live terms among those a change touched: the terms of
    the changed documents `old` held (a term row is deleted, and its id may be reused, only
    once every document holding it changed), and the terms whose rows `now` read that still
    name the term `old` holds under that id (new documents' terms already held)."""
    live, tids, terms = old.term_ix.get, old.tid_list, old.terms
    held: dict[int, int] = {}
    doc_ptr = old.doc_ptr
    for p in old_pos:
        for t in old.p_term[doc_ptr[p] : doc_ptr[p + 1]].tolist():
            if live(terms[t]) == t:
                held[tids[t]] = t
    for tid, (term, _df) in now.items():
        j = live(term)
        if j is not None and tids[j] == tid:
            held[tid] = j
    return held
