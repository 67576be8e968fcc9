"""A small namespace's whole keyword index held in memory as arrays (`Resident`).

A search over one small namespace asks the keyword index for the same things every time: the
query terms' ids and document frequencies, the postings of the terms it scores (the query's,
then two rounds of feedback terms), the terms of the feedback documents. Reading them term by
term from SQLite, or holding them as per-term Python objects, costs more than ranking the few
hundred documents itself. A `Resident` is loaded whole on the namespace's first search (or
its `keyword_resident_after`-th), in three statements (its terms, its documents' packed
terms, its statistics; each term's df is counted from the documents, equal to `terms.df` in a
consistent index), and answers every one of those questions from arrays: postings grouped by
term (CSR), each document's terms in term-id order.

The postings cache (kwcache.py) holds one per namespace, counts it against its memory cap and
brings it up to date with every keyword change to that namespace (the keyword feed, any
process): `patched` re-reads only the changed documents and their terms' rows (a larger change
drops it), so what it answers is what SQLite holds now. Its answers, order included, are
those of the statements it replaces (`KeywordIndex._term_rows`'s for the query terms,
`doc_term_rows`'s for documents).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from langmem_plus.store.docterms import doc_term_rows
from langmem_plus.store.sqlite import in_chunks
from langmem_plus.store.termpack import unpack_terms

__all__ = ["TERMS_CHUNK", "DocRow", "Resident", "unpack_joined", "unpack_many"]

DocRow = tuple[str, int, int, int, int, int]
"""(term, item id, tf, doc length, term id, df) of one term in one document."""

# Query terms per `terms` statement of the SQLite path (KeywordIndex reads them in chunks of
# this size); the resident answer groups them the same way.
TERMS_CHUNK = 200
_EMPTY_I = np.zeros(0, dtype=np.int64)
# Up to this many postings, a query's BM25 is summed in a Python loop, beyond it with arrays
# (the same additions either way).
_SHORT = 256
_EMPTY_F = np.zeros(0, dtype=np.float64)


def unpack_many(blobs: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decode many `doc_terms` blobs (termpack.py) at once: (blob index, term id, tf) of
    every pair, in blob order then term-id order, as `unpack_terms` gives them one by one."""
    if not blobs:
        return _EMPTY_I, _EMPTY_I, _EMPTY_I
    lens = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
    return unpack_joined(b"".join(blobs), lens)


def unpack_joined(joined: bytes, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`unpack_many` of blobs given joined, with each one's length in `lens`."""
    raw = np.frombuffer(joined, dtype=np.uint8)
    if not len(raw):
        return _EMPTY_I, _EMPTY_I, _EMPTY_I
    last = raw < 0x80  # the last byte of each varint
    if not last[-1]:
        raise ValueError("truncated doc_terms blob")
    ends = np.flatnonzero(last)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    varint: np.ndarray = np.cumsum(last) - last  # varint number of every byte
    shift = (np.arange(len(raw)) - starts[varint]) * 7
    vals = np.add.reduceat((raw & 0x7F).astype(np.int64) << shift, starts)
    # varints per blob: the blobs' byte ranges, counted in varint ends
    if int(lens.sum()) != len(raw):
        raise ValueError("doc_terms blob lengths do not add up")
    bounds = np.cumsum(lens)
    if not last[bounds[lens > 0] - 1].all():  # a blob cut inside a varint
        raise ValueError("truncated doc_terms blob")
    per_blob = np.searchsorted(ends, bounds, side="left") - np.searchsorted(
        ends, bounds - lens, side="left"
    )
    if np.any(per_blob % 2):
        raise ValueError("truncated doc_terms blob")
    pairs = per_blob // 2
    blob = np.repeat(np.arange(len(lens), dtype=np.int64), pairs)
    delta, tf = vals[0::2], vals[1::2]
    # term ids: running sums of the deltas, restarted at each blob
    run = np.cumsum(delta)
    first = np.cumsum(pairs) - pairs  # each blob's first pair
    has = pairs > 0
    offset = np.zeros(len(lens), dtype=np.int64)
    offset[has] = run[first[has]] - delta[first[has]]
    return blob, run - offset[blob], tf


class Resident:
    """One namespace's terms, postings and document terms (see the module docstring)."""

    __slots__ = (
        "_dl_list",
        "_doc_ptr",
        "_p_term",
        "_p_tf",
        "_ptr",
        "_sat",
        "_t_tf",
        "df_list",
        "dl",
        "id_list",
        "idf_of",
        "ids",
        "n_docs",
        "ns_id",
        "pos_of",
        "t_pos",
        "term_ix",
        "terms",
        "tid_list",
        "total_len",
        "weight",
    )

    def __init__(self, ns_id: int) -> None:
        self.ns_id = ns_id
        self.n_docs = 0
        self.total_len = 0
        self.terms: list[str] = []
        self.term_ix: dict[str, int] = {}  # live term -> term index
        self.tid_list: list[int] = []
        self.df_list: list[int] = []
        self.idf_of: dict[int, float] = {}  # df -> IDF, kept by the keyword index
        self.ids = _EMPTY_I  # item ids of the documents, ascending
        self.id_list: list[int] = []
        self.pos_of: dict[int, int] = {}
        self.dl = _EMPTY_F
        self._ptr: list[int] = [0]  # term index -> its postings' slice
        self.t_pos = _EMPTY_I  # postings' document positions, grouped by term (int32)
        self._t_tf = _EMPTY_I  # their tf (int32)
        self._doc_ptr: list[int] = [0]  # document -> its pairs' slice of the two below
        self._p_term = _EMPTY_I  # term index of each (document, term) pair (int32)
        self._p_tf = _EMPTY_I  # its tf (int32)
        self._dl_list: list[int] = []
        # (k1, b, avgdl), the postings' saturation, and both position and saturation as lists
        self._sat: (
            tuple[tuple[float, float, float], np.ndarray, tuple[list[int], list[float]] | None]
            | None
        ) = None
        self.weight = 0  # memory, in postings (the postings cache's unit)

    @classmethod
    def load(cls, conn: sqlite3.Connection, ns_id: int) -> Resident:
        """Read the namespace's keyword index whole (three statements, each one row: the
        terms and the documents come as arrays aggregated by SQLite, not a row per term)."""
        self = cls(ns_id)
        self._read_stats(conn)
        # (id, term) from the (ns_id, term) index alone; a term's df is counted from the
        # documents below (it equals `terms.df` in a consistent index)
        got = conn.execute(
            "SELECT json_group_array(id), json_group_array(term) FROM terms WHERE ns_id = ?",
            (ns_id,),
        ).fetchone()
        tids: list[int] = json.loads(got[0])
        terms: list[str] = json.loads(got[1])
        got = conn.execute(
            "SELECT json_group_array(d.item_id), json_group_array(d.dl), "
            "json_group_array(length(d.terms)), group_concat(hex(d.terms), '') "
            "FROM items i JOIN doc_terms d ON d.item_id = i.id WHERE i.ns_id = ?",
            (ns_id,),
        ).fetchone()
        ids = np.array(json.loads(got[0]), dtype=np.int64)
        dls = np.array(json.loads(got[1]), dtype=np.int64)
        lens = np.array(json.loads(got[2]), dtype=np.int64)
        blob, tid, tf = unpack_joined(bytes.fromhex(got[3] or ""), lens)
        # documents by item id (the aggregate follows the namespace index's order)
        order = np.argsort(ids, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        doc = rank[blob]
        by_doc = np.argsort(doc, kind="stable")  # each document's pairs kept in order
        doc, tid, tf = doc[by_doc], tid[by_doc], tf[by_doc]
        # term id -> term index (a pair whose term row is gone is left out, as the join did)
        tids_a = np.array(tids, dtype=np.int64)
        by_tid = np.argsort(tids_a, kind="stable")
        srt = tids_a[by_tid]
        at = np.searchsorted(srt, tid)
        ok = at < len(srt)
        ok[ok] = srt[at[ok]] == tid[ok]
        term = by_tid[at[ok]]
        n = len(terms)
        self._set_terms(
            terms,
            tids,
            np.bincount(term, minlength=n).tolist(),
            dict(zip(terms, range(n), strict=True)),
        )
        self._set_docs(ids[order].tolist(), dls[order].tolist(), doc[ok], term, tf[ok])
        return self

    def patched(self, conn: sqlite3.Connection, item_ids: Iterable[int]) -> Resident:
        """This index after keyword changes to the given items (added, rewritten or
        removed): the same answers as `load` would read now, from the changed documents' rows
        and their terms' rows instead of the whole namespace. The caller synced the change
        feed in this read transaction; this object is left as it was (a search holding it
        keeps a consistent index)."""
        new = Resident(self.ns_id)
        new._read_stats(conn)
        changed = sorted(set(item_ids))
        docs: list[tuple[int, int, list[tuple[int, int]]]] = []
        for part, marks in in_chunks(changed):
            docs.extend(
                (int(i), int(dl), unpack_terms(blob))
                for i, dl, blob in conn.execute(
                    "SELECT d.item_id, d.dl, d.terms FROM items i JOIN doc_terms d "
                    f"ON d.item_id = i.id WHERE +i.ns_id = ? AND i.id IN ({marks})",
                    (self.ns_id, *part),
                )
            )
        docs.sort()
        old_pos = [p for p in map(self.pos_of.get, changed) if p is not None]
        held = new._patch_terms(conn, self, old_pos, docs)
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
        counts: np.ndarray = np.diff(np.asarray(self._doc_ptr, dtype=np.int64))
        o_doc = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        o_term, o_tf = self._p_term, self._p_tf
        ids, dls = self.id_list, self._dl_list
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
        new._set_docs(ids, dls, doc, term, tf)
        return new

    # ---------------------------------------------------------------- building
    def _read_stats(self, conn: sqlite3.Connection) -> None:
        """The namespace's document count and total length, from its row."""
        row = conn.execute(
            "SELECT n_docs, total_len FROM namespaces WHERE id = ?", (self.ns_id,)
        ).fetchone()
        self.n_docs, self.total_len = (int(row[0]), int(row[1])) if row else (0, 0)

    def _patch_terms(
        self,
        conn: sqlite3.Connection,
        old: Resident,
        old_pos: Sequence[int],
        docs: Sequence[tuple[int, int, list[tuple[int, int]]]],
    ) -> dict[int, int]:
        """`old`'s term table with the rows of every term the change may have touched (the
        changed documents' old and new terms) read again: dfs updated, rows gone dropped from
        the lookups (SQLite may reuse a deleted row's id), new terms appended. Returns live
        term id -> term index."""
        doc_ptr, tid_of = old._doc_ptr, old.tid_list
        affected = {
            tid_of[t] for p in old_pos for t in old._p_term[doc_ptr[p] : doc_ptr[p + 1]].tolist()
        }
        affected.update(tid for _i, _dl, pairs in docs for tid, _tf in pairs)
        now: dict[int, tuple[str, int]] = {}
        for part, marks in in_chunks(sorted(affected)):
            for tid, term, df in conn.execute(
                # `+ns_id`: by primary key (the planner may otherwise walk the namespace's terms)
                f"SELECT id, term, df FROM terms WHERE +ns_id = ? AND id IN ({marks})",
                (self.ns_id, *part),
            ):
                now[int(tid)] = (str(term), int(df))
        terms, tids, dfs = list(old.terms), list(tid_of), list(old.df_list)
        term_ix = dict(old.term_ix)
        held = {tids[j]: j for j in term_ix.values()}  # live term id -> term index
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
        self._set_terms(terms, tids, dfs, term_ix)
        return held

    def _set_terms(
        self, terms: list[str], tids: list[int], dfs: list[int], term_ix: dict[str, int]
    ) -> None:
        """The term table: text, id and df per term index; `term_ix` maps the live ones."""
        self.terms, self.tid_list, self.df_list, self.term_ix = terms, tids, dfs, term_ix

    def _set_docs(
        self, ids: list[int], dls: list[int], doc: np.ndarray, term: np.ndarray, tf: np.ndarray
    ) -> None:
        """The documents (item ids ascending, lengths) and their (document, term index, tf)
        pairs, grouped by document in term-id order; builds both directions' lookups."""
        n = len(ids)
        self.id_list = ids
        self.ids = np.array(ids, dtype=np.int64)
        self.pos_of = dict(zip(ids, range(n), strict=True))
        self.dl = np.array(dls, dtype=np.float64)
        doc_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(doc, minlength=n), out=doc_ptr[1:])
        self._doc_ptr = doc_ptr.tolist()
        self._p_term, self._p_tf = term.astype(np.int32), tf.astype(np.int32)
        self._dl_list = dls
        # postings grouped by term, documents ascending within a term
        order = np.argsort(term, kind="stable")
        ptr = np.zeros(len(self.terms) + 1, dtype=np.int64)
        np.cumsum(np.bincount(term, minlength=len(self.terms)), out=ptr[1:])
        self._ptr = ptr.tolist()
        self.t_pos = doc[order].astype(np.int32)
        self._t_tf = self._p_tf[order]
        # in the postings cache's unit (~8 bytes), as measured with the search's lists made:
        # ~64 bytes per posting (arrays and the short loop's lists; ~28 more where its
        # document position is past CPython's small ints), ~220 per term (its text, lookup,
        # id, df and slice), ~150 per document
        past = len(tf) * max(0, n - 256) // max(n, 1)
        self.weight = 8 * len(tf) + 4 * past + 28 * len(self.terms) + 19 * n

    # ---------------------------------------------------------------- reads
    def term_rows(
        self, terms: Sequence[str]
    ) -> tuple[dict[str, tuple[list[int], int]], dict[int, int]]:
        """term -> ([term id], df) and term id -> namespace for the exact `terms`, in the
        order the SQLite path gives them (per chunk of the query's terms, by term)."""
        found: dict[str, tuple[list[int], int]] = {}
        tid_ns: dict[int, int] = {}
        ix = self.term_ix
        tids, df, ns_id = self.tid_list, self.df_list, self.ns_id
        if len(terms) <= TERMS_CHUNK:
            chunks: Sequence[Sequence[str]] = [terms]
        else:
            chunks = [part for part, _marks in in_chunks(list(terms), TERMS_CHUNK)]
        for part in chunks:
            for term in sorted(set(part)):
                j = ix.get(term)
                if j is None:
                    continue
                tid = tids[j]
                got = found.get(term)
                found[term] = ([tid], df[j]) if got is None else ([*got[0], tid], got[1] + df[j])
                tid_ns[tid] = ns_id
        return found, tid_ns

    def bm25(
        self,
        order: Sequence[str],
        found: Mapping[str, tuple[list[int], int]],
        idf: Mapping[str, float],
        k1: float,
        b: float,
        avgdl: float,
        budget: int,
    ) -> dict[int, float] | None:
        """item id -> the nonzero BM25 sum of the terms `order` (each weighed by its `idf`,
        counted once per term id in `found`), added term by term in that order: the sums
        `PostingsScoring._bm25` and `MemoryScoring._accumulate` give, to the last bit. None
        when `_accumulate`'s scan `budget` would defer a term (its path answers then)."""
        ptr, ix = self._ptr, self.term_ix
        spans = []
        total = 0
        summed = False
        for term in order:
            ids, df = found[term]
            if df > budget and summed:
                return None
            j = ix.get(term)
            lo, hi = (ptr[j], ptr[j + 1]) if j is not None else (0, 0)
            for _tid in ids:
                budget -= hi - lo
                if hi > lo:
                    summed = True
                    spans.append((lo, hi, idf[term]))
                    total += hi - lo
        if total <= _SHORT:  # few postings: a loop costs less than array calls
            pos_l, sat_l = self._lists(k1, b, avgdl)
            ids_l = self.id_list
            sums: dict[int, float] = {}
            get = sums.get
            for lo, hi, w in spans:
                for p, v in zip(pos_l[lo:hi], sat_l[lo:hi], strict=True):
                    i = ids_l[p]
                    sums[i] = get(i, 0.0) + v * w
            return {i: v for i, v in sums.items() if v != 0}
        sat = self.saturation(k1, b, avgdl)
        acc = np.zeros(len(self.ids), dtype=np.float64)
        for lo, hi, w in spans:
            acc[self.t_pos[lo:hi]] += sat[lo:hi] * w
        nz = np.flatnonzero(acc)
        return dict(zip(self.ids[nz].tolist(), acc[nz].tolist(), strict=True))

    def saturation(self, k1: float, b: float, avgdl: float) -> np.ndarray:
        """Every posting's BM25 term-frequency part, tf·(k1 + 1) / (tf + k1·(1 - b + b·dl /
        avgdl)), aligned with `t_pos`: the operations of `PostingsScoring._bm25`, element by
        element, so a term's score is this times its IDF exactly as there."""
        key = (k1, b, avgdl)
        if self._sat is None or self._sat[0] != key:
            tf, dl = self._t_tf.astype(np.float64), self.dl[self.t_pos]
            denom = tf + k1 * (1 - b + b * dl / (avgdl or 1.0))
            self._sat = key, tf * (k1 + 1) / denom, None
        return self._sat[1]

    def _lists(self, k1: float, b: float, avgdl: float) -> tuple[list[int], list[float]]:
        """`t_pos` and `saturation` as Python lists (for the loop over few postings)."""
        sat = self.saturation(k1, b, avgdl)
        assert self._sat is not None
        lists = self._sat[2]
        if lists is None:
            lists = self.t_pos.tolist(), sat.tolist()
            self._sat = self._sat[0], sat, lists
        return lists

    def doc_rows(self, conn: sqlite3.Connection, item_ids: Sequence[int]) -> list[DocRow]:
        """Every term of the given items as `DocRow`s, by item id then term id (the order of
        `doc_term_rows`, which answers for items that are not documents of this namespace).
        Made from the arrays on each call, not kept: a long-lived index would otherwise grow
        by a row per posting as its documents are read."""
        ids = sorted(set(item_ids))
        get = self.pos_of.get
        out: list[DocRow] = []
        foreign: list[int] = []
        for i in ids:
            p = get(i)
            if p is None:
                foreign.append(i)
            else:
                out.extend(self._doc(i, p))
        if not foreign:
            return out
        other: dict[int, list[DocRow]] = {}
        for term, item_id, tf, dl, tid, df, _ns in doc_term_rows(conn, foreign):
            other.setdefault(item_id, []).append((term, item_id, tf, dl, tid, df))
        rows: list[DocRow] = []
        for i in ids:
            p = get(i)
            rows.extend(other.get(i, ()) if p is None else self._doc(i, p))
        return rows

    def _doc(self, item_id: int, p: int) -> list[DocRow]:
        """A document's `DocRow`s."""
        lo, hi = self._doc_ptr[p], self._doc_ptr[p + 1]
        terms, tids, df = self.terms, self.tid_list, self.df_list
        dl = self._dl_list[p]
        return [
            (terms[t], item_id, tf, dl, tids[t], df[t])
            for t, tf in zip(self._p_term[lo:hi].tolist(), self._p_tf[lo:hi].tolist(), strict=True)
        ]
