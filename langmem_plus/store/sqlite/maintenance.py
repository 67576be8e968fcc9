"""Store maintenance: TTL sweeping, reindexing, counts, listings, sizes and vacuum.

`Maintenance` is given the parts it works on (the database, the keyword and vector indexes,
the embeddings); `TTLSweeper` is the background thread that sweeps expired items.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langmem_plus.model.records import record_columns
from langmem_plus.store.db.changefeed import VECTOR_FEED
from langmem_plus.store.db.database import NS_SEP, Database, in_chunks, ns_key
from langmem_plus.store.keyword.index import KeywordIndex
from langmem_plus.store.ranking.versions import FOLLOWS_INDEXED
from langmem_plus.store.seams import DEFAULT_SESSION_KEYS, rank_fields
from langmem_plus.store.sqlite.rows import record_cells
from langmem_plus.store.vector.codec import VectorStorage, encode_vec
from langmem_plus.store.vector.index import VectorIndex
from langmem_plus.text.tokenize import TOKENIZER_VERSION, tokenize

__all__ = ["TOKENIZER_META", "Maintenance", "TTLSweeper"]

logger = logging.getLogger("langmem_plus.store.hybrid")

Texts = Callable[[Any], list[tuple[str, str]]]  # item value -> (path, text) to index
_EMBED_BATCH = 256
TOKENIZER_META = "tokenizer_version"
"""The meta key of the tokenizer version the keyword index was built with (absent: 1)."""


# the expressions migration 018 indexes (`items_follows0`, `items_follows1`), verbatim
_FOLLOWS_AT = tuple(
    f"json_extract(value, '$.metadata.follows[{i}]')" for i in range(FOLLOWS_INDEXED)
)


def _prefix_where(prefix: Sequence[str], exact: bool) -> tuple[str, tuple[str, ...]]:
    if not prefix:
        return "1=1", ()
    s = ns_key(prefix)
    if exact:
        return "n.ns = ?", (s,)
    return "(n.ns = ? OR (n.ns >= ? AND n.ns < ?))", (s, s + NS_SEP, s + chr(ord(NS_SEP) + 1))


class Maintenance:
    """Reindexing, counts, listings and sizes over a store's parts (no `HybridStore`)."""

    def __init__(
        self,
        db: Database,
        keywords: KeywordIndex,
        vectors: VectorIndex | None,
        *,
        texts: Texts,
        embeddings: Embeddings | None,
        model_name: str,
        dims: int,
        vector_storage: VectorStorage,
        session_keys: Sequence[str] = DEFAULT_SESSION_KEYS,
    ) -> None:
        self._session_keys = tuple(session_keys)
        self._db = db
        self._kw = keywords
        self._vec = vectors
        self._texts = texts
        self._embeddings = embeddings
        self._model_name = model_name
        self._dims = dims
        self._storage = vector_storage

    def expired(self, now: float) -> list[tuple[tuple[str, ...], str]]:
        """(namespace, key) of the items whose TTL ran out before `now`."""
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT n.ns, i.key FROM items i JOIN namespaces n ON n.id=i.ns_id "
                "WHERE i.expires_at IS NOT NULL AND i.expires_at < ?",
                (now,),
            ).fetchall()
        return [(tuple(ns.split(NS_SEP)), key) for ns, key in rows]

    def reindex(
        self, *, vectors: bool = True, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, int]:
        """Rebuild the keyword index (and re-embed vectors) for every item from SQLite; the
        ranking and record columns (confidence, category, session, kind, slot, said_at,
        valid_from, valid_to, stale) are read from the values again, so a change of
        `session_keys` reaches the items already stored. `progress(done, total)` counts the
        texts embedded, then the items re-indexed."""
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT id, ns_id, value, indexed FROM items ORDER BY id"
            ).fetchall()
        # Items put with index=False stay out of both indexes, as they were written.
        texts = {rid: self._texts(json.loads(v)) if ix else [] for rid, _ns, v, ix in rows}
        embed = vectors and self._embeddings is not None
        n_texts = sum(len(t) for t in texts.values()) if embed else 0
        total = n_texts + len(rows)

        def tick(done: int) -> None:
            if progress is not None:
                progress(done, total)

        tick(0)
        vecs = self._embed_all(texts, tick) if embed else {}
        with self._db.write() as conn:
            docs = []
            for i, (rid, ns_id, v, _ix) in enumerate(rows, 1):
                if i % _EMBED_BATCH == 0:
                    tick(n_texts + i)
                toks = tokenize("\n".join(t for _, t in texts[rid]))
                value = json.loads(v)
                conn.execute(
                    "UPDATE items SET confidence=?, category=?, session=?, kind=?, "
                    "slot=?, said_at=?, valid_from=?, valid_to=?, stale=?, index_key=NULL WHERE id=?",
                    (
                        *rank_fields(value, self._session_keys),
                        *record_cells(record_columns(value)),
                        rid,
                    ),
                )
                docs.append((ns_id, rid, toks))
            self._index_all(conn, docs)
            if embed:
                conn.execute("DELETE FROM vectors")
                for rid, ns_id, _v, _ix in rows:
                    for (path, _t), v in zip(texts[rid], vecs.get(rid, []), strict=False):
                        conn.execute(
                            "INSERT INTO vectors(item_id, ns_id, path, vec) VALUES (?,?,?,?)",
                            (rid, ns_id, path, encode_vec(v, self._storage)),
                        )
                # A new generation: every other handle and every snapshot rebuilds from SQLite.
                VECTOR_FEED.reset(conn)
                self._db.set_meta(conn, "embedding_model", self._model_name)
                self._db.set_meta(conn, "embedding_dims", str(self._dims))
        if self._vec is not None:
            with self._db.read() as conn:
                self._vec.rebuild(conn)
        tick(total)
        return {"items": len(rows), "vectors": sum(len(v) for v in vecs.values())}

    def keep_tokens_current(self) -> bool:
        """Rebuild the keyword index when it was built by another tokenizer version
        (text/tokenize.py `TOKENIZER_VERSION`), else stamp the version; whether it was rebuilt.
        A query's tokens must be those the items were indexed under, or a word is missed
        ("movies" indexed as ``movy``, asked for as ``movi``). Only the keyword index changes
        (postings, terms, document lengths); vectors and every other column stay. A read-only
        database is searched as it is, with a warning.

        The items are read and tokenised outside any write transaction, so other writers are
        not kept waiting (tokenising is most of the time); the write transaction then re-reads
        the items and tokenises again only those whose value, or existence, changed since."""
        want = str(TOKENIZER_VERSION)
        if self._db.get_meta(TOKENIZER_META) == want:
            return False
        if self._db.read_only:
            logger.warning(
                "%s: its keyword index was built by another tokenizer version; keyword search "
                "may miss words until it is opened once where it is writable",
                self._db.path,
            )
            return False
        with self._db.read() as conn:
            seen = dict(conn.execute("SELECT id, value FROM items WHERE indexed = 1").fetchall())
        tokens = {rid: self._tokens(v) for rid, v in seen.items()}  # no transaction open
        with self._db.write() as conn:  # one opener rebuilds; the others then see the stamp
            if self._db.get_meta(TOKENIZER_META) == want:
                return False
            rows = conn.execute("SELECT ns_id, id, value FROM items WHERE indexed = 1").fetchall()
            # an item written or rewritten meanwhile (by any tokenizer) is tokenised again;
            # one deleted meanwhile is not in `rows`, so it stays out
            self._index_all(
                conn,
                [
                    (ns_id, rid, tokens[rid] if seen.get(rid) == v else self._tokens(v))
                    for ns_id, rid, v in rows
                ],
            )
        return bool(rows)

    def _tokens(self, value: str) -> list[str]:
        """The keyword tokens of an item's stored value (JSON), as a put indexes them."""
        return tokenize("\n".join(t for _, t in self._texts(json.loads(value))))

    def _index_all(self, conn: Any, docs: list[tuple[int, int, list[str]]]) -> None:
        """The keyword index rebuilt from (ns_id, item_id, tokens) of every item (an item
        left out, or with no tokens, is not indexed) and stamped with the tokenizer version."""
        self._kw.clear(conn)
        conn.execute("UPDATE namespaces SET n_docs=0, total_len=0")
        conn.execute("UPDATE items SET doc_len=0 WHERE doc_len != 0")
        conn.executemany(
            "UPDATE items SET doc_len=? WHERE id=?", [(len(t), rid) for _ns, rid, t in docs if t]
        )
        self._kw.add_many(conn, [d for d in docs if d[2]])
        self._db.set_meta(conn, TOKENIZER_META, str(TOKENIZER_VERSION))

    def _embed_all(
        self, texts: dict[int, list[tuple[str, str]]], tick: Callable[[int], None]
    ) -> dict[int, np.ndarray]:
        """item id -> its texts' vectors (one row per text), embedded in batches; `tick` gets
        the number of texts embedded after each batch."""
        assert self._embeddings is not None
        vecs: dict[int, np.ndarray] = {}
        flat = [(rid, t) for rid, ts in texts.items() for _path, t in ts]
        for i in range(0, len(flat), _EMBED_BATCH):
            chunk = flat[i : i + _EMBED_BATCH]
            arr = np.asarray(self._embeddings.embed_documents([c[1] for c in chunk]), np.float32)
            for (rid, _t), v in zip(chunk, arr, strict=True):
                vecs.setdefault(rid, np.empty((0, self._dims), np.float32))
                vecs[rid] = np.vstack([vecs[rid], v[None, :]])
            tick(i + len(chunk))
        return vecs

    def stats(self) -> dict[str, Any]:
        """Counts and sizes: items, namespaces, vectors, postings, database bytes."""
        with self._db.read() as conn:
            items = conn.execute("SELECT COUNT(*) FROM items").fetchone()[0]
            nss = conn.execute(
                "SELECT COUNT(*) FROM namespaces n "
                "WHERE EXISTS (SELECT 1 FROM items i WHERE i.ns_id=n.id)"
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
            "embedding_model": self._model_name or None,
            "faiss_vectors": self._vec.count() if self._vec else 0,
        }

    def count(self, prefix: Sequence[str], exact: bool) -> int:
        """Items in namespace `prefix` (or in and under it when not `exact`)."""
        where, args = _prefix_where(prefix, exact)
        with self._db.read() as conn:
            row = conn.execute(
                f"SELECT COUNT(*) FROM items i JOIN namespaces n ON n.id = i.ns_id WHERE {where}",
                args,
            ).fetchone()
        return int(row[0])

    def keys(self, prefix: Sequence[str], exact: bool) -> list[tuple[tuple[str, ...], str]]:
        """(namespace, key) of every item in (or under) `prefix`, in insertion order."""
        where, args = _prefix_where(prefix, exact)
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT n.ns, i.key FROM items i JOIN namespaces n ON n.id = i.ns_id "
                f"WHERE {where} ORDER BY i.id",
                args,
            ).fetchall()
        return [(tuple(ns.split(NS_SEP)), key) for ns, key in rows]

    def locate(self, key: str, prefix: Sequence[str]) -> list[tuple[str, ...]]:
        """Namespaces in (or under) `prefix` that hold an item with `key`, oldest item first."""
        where, args = _prefix_where(prefix, False)
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT n.ns FROM items i JOIN namespaces n ON n.id = i.ns_id "
                f"WHERE i.key = ? AND {where} ORDER BY i.id",
                (key, *args),
            ).fetchall()
        return [tuple(ns.split(NS_SEP)) for (ns,) in rows]

    def followers(self, namespace: Sequence[str], keys: Sequence[str]) -> dict[str, list[str]]:
        """Each of `keys` -> the episodes of `namespace` whose `metadata.follows` names it
        among its first `FOLLOWS_INDEXED` keys, oldest first: index probes of migration
        018's `items_follows*` (the expressions here are those indexed, so the plan searches
        them; tests/test_followers.py checks it), no scan."""
        want = list(dict.fromkeys(keys))
        found: dict[str, list[tuple[int, str]]] = {k: [] for k in want}
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT id FROM namespaces WHERE ns = ?", (ns_key(namespace),)
            ).fetchone()
            if row is None or not want:
                return {k: [] for k in want}
            for part, marks in in_chunks(want, 400):  # 2 x 401 variables a statement
                sql = " UNION ".join(
                    f"SELECT id, key, {expr} FROM items WHERE ns_id = ? AND kind = 'e' "
                    f"AND json_valid(value) AND {expr} IN ({marks})"
                    for expr in _FOLLOWS_AT
                )
                args = [a for _ in _FOLLOWS_AT for a in (row[0], *part)]
                for rid, key, earlier in conn.execute(sql, args):
                    found[earlier].append((rid, key))
        return {k: [key for _, key in sorted(set(v))] for k, v in found.items()}

    def restore_item_stats(
        self, rows: Sequence[tuple[str, str, float | None, float | None, float | None, int]]
    ) -> int:
        """Set (created_at, updated_at, last_accessed, access_count) of existing items, given
        as (namespace as stored, key, created, updated, last accessed, count) in epoch
        seconds; returns how many items were updated."""
        if not rows:
            return 0
        args = [(c, u, la, int(n), key, ns) for ns, key, c, u, la, n in rows]
        with self._db.write() as conn:
            before = conn.total_changes
            conn.executemany(
                "UPDATE items SET created_at = ?, updated_at = ?, last_accessed = ?, "
                "access_count = ? WHERE key = ? AND ns_id = (SELECT id FROM namespaces WHERE ns = ?)",
                args,
            )
            return conn.total_changes - before

    def db_bytes(self) -> int:
        """Bytes on disk (database + WAL), or the pages of an in-memory database."""
        path = self._db.path
        if path is None:
            with self._db.lock:
                pages = self._db.conn.execute("PRAGMA page_count").fetchone()[0]
                size = self._db.conn.execute("PRAGMA page_size").fetchone()[0]
            return int(pages) * int(size)
        return sum(os.path.getsize(p) for p in (f"{path}", f"{path}-wal") if os.path.exists(p))

    def vacuum(self) -> int:
        """Checkpoint the WAL and VACUUM so deleted text leaves the file; returns bytes freed."""
        before = self.db_bytes()
        with self._db.lock:
            conn = self._db.conn
            if self._db.path is not None:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("VACUUM")
            if self._db.path is not None:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return max(0, before - self.db_bytes())


class TTLSweeper:
    """A daemon thread that calls `sweep` every interval until stopped."""

    def __init__(self, sweep: Callable[[], object]) -> None:
        self._sweep = sweep
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    @property
    def running(self) -> bool:
        """Whether a sweeper thread was started and not stopped since."""
        return self._thread is not None

    def start(self, interval_minutes: float) -> None:
        """Start sweeping every `interval_minutes` (nothing when already running)."""
        if self._thread is not None:
            return
        self._stop.clear()

        def loop() -> None:
            while not self._stop.wait(float(interval_minutes) * 60):
                try:
                    self._sweep()
                except Exception as exc:  # keep sweeping; report
                    logger.warning("TTL sweep failed: %s", exc)

        self._thread = threading.Thread(target=loop, name="langmem-ttl-sweeper", daemon=True)
        self._thread.start()

    @property
    def stop_requested(self) -> bool:
        """Whether the thread was asked to end."""
        return self._stop.is_set()

    def request_stop(self) -> None:
        """Ask the thread to end after its current sweep (does not wait)."""
        self._stop.set()

    def stop(self, timeout: float | None = None) -> bool:
        """Stop the thread and wait up to `timeout`; true when it has ended (or never ran)."""
        if self._thread is None:
            return True
        self._stop.set()
        self._thread.join(timeout)
        alive = self._thread.is_alive()
        self._thread = None
        return not alive
