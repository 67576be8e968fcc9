"""A small namespace's whole keyword index held in memory as arrays (`Resident`).

A search over one small namespace asks the keyword index for the same things every time: the
query terms' ids and document frequencies, the postings of the terms it scores (the query's,
then two rounds of feedback terms), the terms of the feedback documents. Reading them term by
term from SQLite, or holding them as per-term Python objects, costs more than ranking the few
hundred documents itself. A `Resident` is loaded whole on the namespace's first search, in
three statements (its terms, its documents' packed
terms, its statistics; each term's df is counted from the documents, equal to `terms.df` in a
consistent index), and answers every one of those questions from arrays: postings grouped by
term (CSR), each document's terms in term-id order.

The postings cache (store/keyword/cache.py) holds one per namespace, counts it against its memory cap and
brings it up to date with every keyword change to that namespace (the keyword feed, any
process): `patch.patched` (store/keyword/patch.py) re-reads only the changed documents and their terms' rows (a
larger change drops it), so what it answers is what SQLite holds now. Its answers, order included, are
those of the statements it replaces (`KeywordIndex._term_rows`'s for the query terms,
`doc_term_rows`'s for documents).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence

import numpy as np

from langmem_plus.store.db.database import in_chunks
from langmem_plus.store.db.termpack import unpack_joined
from langmem_plus.store.keyword.bm25 import Okapi
from langmem_plus.store.keyword.docterms import doc_term_rows

__all__ = ["TERMS_CHUNK", "DocRow", "Resident"]

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


class Resident:
    """One namespace's terms, postings and document terms (see the module docstring)."""

    __slots__ = (
        "_sat",
        "df_list",
        "dl",
        "dl_list",
        "doc_ptr",
        "id_list",
        "ids",
        "n_docs",
        "ns_id",
        "p_term",
        "p_tf",
        "pos_of",
        "ptr",
        "t_pos",
        "t_tf",
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
        self.ids: np.ndarray = _EMPTY_I  # item ids of the documents, ascending
        self.id_list: list[int] = []
        self.pos_of: dict[int, int] = {}
        self.dl: np.ndarray = _EMPTY_F
        self.ptr: list[int] = [0]  # term index -> its postings' slice
        self.t_pos: np.ndarray = _EMPTY_I  # postings' document positions, grouped by term (int32)
        self.t_tf: np.ndarray = _EMPTY_I  # their tf (int32)
        self.doc_ptr: list[int] = [0]  # document -> its pairs' slice of the two below
        self.p_term: np.ndarray = _EMPTY_I  # term index of each (document, term) pair (int32)
        self.p_tf: np.ndarray = _EMPTY_I  # its tf (int32)
        self.dl_list: list[int] = []
        # (k1, b, avgdl) and the postings' saturation under them
        self._sat: tuple[tuple[float, float, float], np.ndarray] | None = None
        self.weight = 0  # memory, in postings (the postings cache's unit, ~8 bytes)

    @classmethod
    def load(cls, conn: sqlite3.Connection, ns_id: int) -> Resident:
        """Read the namespace's keyword index whole (three statements, each one row: the
        terms and the documents come as arrays aggregated by SQLite, not a row per term)."""
        self = cls(ns_id)
        self.read_stats(conn)
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
        self.set_terms(
            terms,
            tids,
            np.bincount(term, minlength=n).tolist(),
            dict(zip(terms, range(n), strict=True)),
        )
        self.set_docs(ids[order].tolist(), dls[order].tolist(), doc[ok], term, tf[ok])
        return self

    # ---------------------------------------------------------------- building
    def read_stats(self, conn: sqlite3.Connection) -> None:
        """The namespace's document count and total length, from its row."""
        row = conn.execute(
            "SELECT n_docs, total_len FROM namespaces WHERE id = ?", (self.ns_id,)
        ).fetchone()
        self.n_docs, self.total_len = (int(row[0]), int(row[1])) if row else (0, 0)

    def set_terms(
        self, terms: list[str], tids: list[int], dfs: list[int], term_ix: dict[str, int]
    ) -> None:
        """The term table: text, id and df per term index; `term_ix` maps the live ones."""
        self.terms, self.tid_list, self.df_list, self.term_ix = terms, tids, dfs, term_ix

    def set_docs(
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
        self.doc_ptr = doc_ptr.tolist()
        self.p_term, self.p_tf = term.astype(np.int32), tf.astype(np.int32)
        self.dl_list = dls
        # postings grouped by term, documents ascending within a term
        order = np.argsort(term, kind="stable")
        ptr = np.zeros(len(self.terms) + 1, dtype=np.int64)
        np.cumsum(np.bincount(term, minlength=len(self.terms)), out=ptr[1:])
        self.ptr = ptr.tolist()
        self.t_pos = doc[order].astype(np.int32)
        self.t_tf = self.p_tf[order]
        self.weight = self._weight_of(len(tf), n)

    def append_docs(
        self,
        old: Resident,
        docs: Sequence[tuple[int, int, list[tuple[int, int]]]],
        n_doc: list[int],
        n_term: list[int],
        n_tf: list[int],
    ) -> None:
        """`set_docs` of `old`'s documents followed by `docs` (ids past every held one) and
        their pairs (`n_doc`: the position in `docs`): the same arrays, built by appending
        to `old`'s instead of grouping every pair again. Each new posting goes at the end of
        its term's group (its document comes after every held one); new terms' groups follow
        the held ones, in term-index order."""
        base = len(old.id_list)
        add_ids, add_dls = [d[0] for d in docs], [d[1] for d in docs]
        ids, n = [*old.id_list, *add_ids], base + len(docs)
        self.id_list = ids
        self.ids = np.concatenate([old.ids, np.array(add_ids, dtype=np.int64)])
        pos_of = dict(old.pos_of)
        pos_of.update(zip(add_ids, range(base, n), strict=True))
        self.pos_of = pos_of
        self.dl = np.concatenate([old.dl, np.array(add_dls, dtype=np.float64)])
        self.dl_list = [*old.dl_list, *add_dls]
        nd = np.array(n_doc, dtype=np.int64)
        nt = np.array(n_term, dtype=np.int32)
        ntf = np.array(n_tf, dtype=np.int32)
        ends = old.doc_ptr[-1] + np.cumsum(np.bincount(nd, minlength=len(docs)))
        self.doc_ptr = [*old.doc_ptr, *ends.tolist()]
        self.p_term = np.concatenate([old.p_term, nt]).astype(np.int32, copy=False)
        self.p_tf = np.concatenate([old.p_tf, ntf]).astype(np.int32, copy=False)
        held_terms, n_terms = len(old.ptr) - 1, len(self.terms)
        by_term = np.lexsort((nd, nt))  # by term, then document
        jt = nt[by_term].astype(np.int64)
        old_ptr = np.asarray(old.ptr, dtype=np.int64)
        # where each new posting lands: the end of its term's held group, shifted by the new
        # postings before it (`np.insert`'s placement, its targets ascending)
        at = old_ptr[np.minimum(jt + 1, held_terms)] + np.arange(len(jt))
        held_at = np.ones(len(old.t_pos) + len(jt), dtype=np.bool_)
        held_at[at] = False
        t_pos = np.empty(len(held_at), dtype=np.int32)
        t_pos[at], t_pos[held_at] = nd[by_term] + base, old.t_pos
        t_tf = np.empty(len(held_at), dtype=np.int32)
        t_tf[at], t_tf[held_at] = ntf[by_term], old.t_tf
        self.t_pos, self.t_tf = t_pos, t_tf
        ptr = np.empty(n_terms + 1, dtype=np.int64)
        ptr[: held_terms + 1] = old_ptr
        ptr[held_terms + 1 :] = old_ptr[-1]
        ptr[1:] += np.cumsum(np.bincount(jt, minlength=n_terms))
        self.ptr = ptr.tolist()
        self.weight = self._weight_of(len(self.p_tf), n)

    def _weight_of(self, postings: int, n: int) -> int:
        """Memory in the postings cache's unit (~8 bytes), as tracemalloc measures a loaded
        index with its saturation: 24 bytes per posting (four int32 arrays and the float64
        saturation), ~220 per term (its text, lookup, id, df and slice), ~150 per document."""
        return 3 * postings + 28 * len(self.terms) + 19 * n

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
        okapi: Okapi,
        avgdl: float,
        budget: int,
    ) -> dict[int, float] | None:
        """item id -> the nonzero BM25 sum of the terms `order` (each weighed by its `idf`,
        counted once per term id in `found`), added term by term in that order: the sums the
        SQLite and per-term paths give, to the last bit (store/keyword/scan.py, memory.py).
        None when the per-term path's scan `budget` would defer a term (it answers then)."""
        ptr, ix = self.ptr, self.term_ix
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
        if total <= _SHORT:  # few postings: a loop costs less than array calls (each span
            # made a list when read: whole lists held would double the index's memory)
            sat_a, pos_a = self.saturation(okapi, avgdl), self.t_pos
            ids_l = self.id_list
            sums: dict[int, float] = {}
            get = sums.get
            for lo, hi, w in spans:
                for p, v in zip(pos_a[lo:hi].tolist(), sat_a[lo:hi].tolist(), strict=True):
                    i = ids_l[p]
                    sums[i] = get(i, 0.0) + v * w
            return {i: v for i, v in sums.items() if v != 0}
        sat = self.saturation(okapi, avgdl)
        acc = np.zeros(len(self.ids), dtype=np.float64)
        for lo, hi, w in spans:
            acc[self.t_pos[lo:hi]] += sat[lo:hi] * w
        nz = np.flatnonzero(acc)
        return dict(zip(self.ids[nz].tolist(), acc[nz].tolist(), strict=True))

    def saturation(self, okapi: Okapi, avgdl: float) -> np.ndarray:
        """Every posting's BM25 term-frequency part (`bm25.saturation`), aligned with `t_pos`,
        kept while the mean length holds: a term's score is this times its IDF, as on every
        other path."""
        key = (okapi.k1, okapi.b, avgdl)
        if self._sat is None or self._sat[0] != key:
            tf, dl = self.t_tf.astype(np.float64), self.dl[self.t_pos]
            self._sat = key, okapi.saturation(tf, dl, avgdl)
        return self._sat[1]

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
        lo, hi = self.doc_ptr[p], self.doc_ptr[p + 1]
        terms, tids, df = self.terms, self.tid_list, self.df_list
        dl = self.dl_list[p]
        return [
            (terms[t], item_id, tf, dl, tids[t], df[t])
            for t, tf in zip(self.p_term[lo:hi].tolist(), self.p_tf[lo:hi].tolist(), strict=True)
        ]
