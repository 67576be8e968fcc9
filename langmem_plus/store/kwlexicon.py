"""A small namespace's keyword lookups, remembered between searches (`Lexicon`).

A search over one small namespace asks the same few things again and again: the query terms'
ids and document frequencies, the feedback documents' terms, the postings of the terms it
scores. The postings cache (store/kwcache.py) keeps one `Lexicon` per namespace and drops it
with any keyword change to that namespace (the keyword feed), so what it answers is what
SQLite holds now. It fills as searches ask (no whole-namespace read); its answers, order
included, are those of the statements it replaces.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

import numpy as np

from langmem_plus.store.docterms import doc_term_rows
from langmem_plus.store.sqlite import in_chunks

__all__ = ["ROW_WEIGHT", "TERMS_CHUNK", "DocRow", "Lexicon"]

DocRow = tuple[str, int, int, int, int, int]
"""(term, item id, tf, doc length, term id, df) of one term in one document."""

# What the postings cache's memory cap counts for each value held here: a value held as
# Python objects takes about as much memory as this many postings held in arrays.
ROW_WEIGHT = 16
# Query terms per `terms` statement (KeywordIndex reads them in chunks of this size).
TERMS_CHUNK = 200


class Lexicon:
    """One namespace's remembered keyword lookups; `grow(n)` is told of every n values added
    (the owner counts them against its memory cap)."""

    __slots__ = ("by_term", "docs", "grow", "held", "ns_id", "terms")

    def __init__(self, ns_id: int, grow: Callable[[int], None]) -> None:
        self.ns_id = ns_id
        self.grow = grow
        self.held = 0  # values added, each counted ROW_WEIGHT times by the owner
        self.terms: dict[str, tuple[int, int] | None] = {}  # None: not in the namespace
        self.docs: dict[int, list[DocRow]] = {}
        self.by_term: dict[str, list[tuple[int, float, float]]] = {}

    def term_rows(
        self, conn: sqlite3.Connection, terms: Sequence[str]
    ) -> tuple[dict[str, tuple[list[int], int]], dict[int, int]]:
        """term -> ([term id], df) and term id -> namespace for the exact `terms`, in the
        order the `terms` statement gives them (per chunk of the query's terms, by term)."""
        unknown = [t for t in dict.fromkeys(terms) if t not in self.terms]
        if unknown:
            for part, marks in in_chunks(unknown, TERMS_CHUNK):
                for tid, term, df in conn.execute(
                    f"SELECT id, term, df FROM terms WHERE ns_id = ? AND term IN ({marks})",
                    (self.ns_id, *part),
                ):
                    self.terms[term] = (tid, df)
            for t in unknown:
                self.terms.setdefault(t, None)
            self._grow(len(unknown))
        found: dict[str, tuple[list[int], int]] = {}
        tid_ns: dict[int, int] = {}
        for part, _marks in in_chunks(list(terms), TERMS_CHUNK):
            for term in sorted(set(part)):
                got = self.terms[term]
                if got is None:
                    continue
                tid, df = got
                ids, total = found.get(term, ([], 0))
                ids.append(tid)
                found[term] = (ids, total + df)
                tid_ns[tid] = self.ns_id
        return found, tid_ns

    def doc_rows(self, conn: sqlite3.Connection, item_ids: Sequence[int]) -> list[DocRow]:
        """Every term of the given items as `DocRow`s, by item id then term id (the order of
        `doc_term_rows`); items of this namespace are remembered."""
        ids = sorted(set(item_ids))
        missing = [i for i in ids if i not in self.docs]
        got: dict[int, list[DocRow]] = {}
        foreign: set[int] = set()  # items of another namespace: answered, not remembered
        for term, item_id, tf, dl, tid, df, ns_id in doc_term_rows(conn, missing):
            got.setdefault(item_id, []).append((term, item_id, tf, dl, tid, df))
            if ns_id != self.ns_id:
                foreign.add(item_id)
        added = 0
        for item_id, rows in got.items():
            if item_id not in foreign:
                self.docs[item_id] = rows
                added += len(rows)
        self._grow(added)
        out: list[DocRow] = []
        for i in ids:
            out.extend(self.docs.get(i) or got.get(i, []))
        return out

    def postings(
        self,
        term: str,
        load: Callable[[str], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
    ) -> list[tuple[int, float, float]]:
        """A term's (item id, tf, doc length) postings; `load` gives the postings cache's
        (local numbers, tf, item ids, doc lengths) the first time."""
        got = self.by_term.get(term)
        if got is None:
            _local, tf, items, dl = load(term)
            got = self.by_term[term] = list(
                zip(items.tolist(), tf.tolist(), dl.tolist(), strict=True)
            )
            self._grow(len(got))
        return got

    def _grow(self, n: int) -> None:
        if n:
            self.held += n
            self.grow(n)
