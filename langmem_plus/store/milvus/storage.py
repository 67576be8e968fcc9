"""`StorageBackend` over Milvus (a server, a cluster, or a local Milvus Lite file): sessions,
writes, TTL and `mark_used`, and maintenance (counts, listings, TTL sweep candidates, sizes,
reindexing, integrity checks, vector backfill); reads are store/milvus/search.py's, the
collections store/milvus/schema.py's, the BM25 statistics store/milvus/stats.py's.

Listings page through the matching items with query iterators (Milvus has no distinct count or
group-by outside search), so `keys`, `check` and the TTL sweep stay O(items) as on SQLite;
`count` and `stats` count with `count(*)`.

Writes are upserts by primary key (a hash of namespace and key), so two handles writing the
same key converge on one item. Milvus has no multi-entity transaction: a batch's items are
written before their vectors, and a crash between the two leaves items without vectors,
which `check()` reports and `backfill_vectors()` repairs. Read-modify-write updates (TTL
refresh, `mark_used`, restored stats) are last-writer-wins across handles. Reads use the
configured consistency level (`MemoryConfig.store.milvus_consistency`, Strong by default: a put is
seen by the next read of every handle). A batch's changes to its namespaces' counts are
written to this handle's statistics rows before its items, and taken back when the item
write fails.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langmem_plus.clock import Clock
from langmem_plus.config import MemoryConfig
from langmem_plus.errors import ReadOnlyStoreError, ValidationError
from langmem_plus.model.records import record_columns
from langmem_plus.store.milvus.keyword import ClientBM25
from langmem_plus.store.milvus.log import MilvusConversationLog, create_log_collection
from langmem_plus.store.milvus.schema import (
    ENTITY_FIELDS,
    MAX_BYTES,
    Names,
    and_,
    connect,
    ensure_collections,
    h,
    has_field,
    in_expr,
    item_pk,
    like_pattern,
    next_seq,
    ns_path,
    ns_prefix_expr,
    ns_root,
    root_expr,
    vector_search_params,
)
from langmem_plus.store.milvus.search import MilvusSearch
from langmem_plus.store.milvus.session import MilvusSession
from langmem_plus.store.milvus.stats import Counts, StatsBook, create_stats_collection
from langmem_plus.store.ranking.versions import FOLLOWS_INDEXED, follows_of
from langmem_plus.store.seams import NS_SEP, PutMap, ns_key, rank_fields
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.text.tokenize import TOKENIZER_VERSION, tokenize

__all__ = ["MilvusStorage"]

_LITE_FLUSH_ROWS = 256  # Milvus Lite: flush after this many rows written (see after_puts)

Texts = Callable[[Mapping[str, Any]], list[tuple[str, str]]]

_EMBED_BATCH = 256
_TOKENIZER_PROPERTY = "langmem_plus.tokenizer_version"
"""The items collection's property naming the tokenizer version of its indexed tokens."""

logger = logging.getLogger("langmem_plus.store.hybrid")


def vec_entity(ent: Mapping[str, Any], j: int, vec: np.ndarray) -> dict[str, Any]:
    """The vectors collection's entity of an item's `j`-th embedded text."""
    return {
        "pk": f"{ent['pk']}:{j}",
        "item": ent["pk"],
        "seq": ent["seq"],
        "ns": ent["ns"],
        "ns_path": ent["ns_path"],
        **({"root": ent["root"]} if "root" in ent else {}),
        "vec": np.asarray(vec, dtype=np.float32).tolist(),
    }


def doc_field(value: Any) -> Any:
    """The value for the `doc` JSON field: None when it is not strict JSON (NaN, infinity),
    such an item then passes every filter expression and is filtered client-side."""
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return None
    return value


def _bytes(what: str, text: str) -> None:
    n = len(text.encode("utf-8", "surrogatepass"))
    if n > MAX_BYTES:
        raise ValidationError(
            f"{what} is {n} bytes as UTF-8; the Milvus backend stores at most {MAX_BYTES}"
        )


class MilvusStorage:
    """The Milvus storage of `HybridStore` (see the module docstring)."""

    def __init__(
        self,
        uri: str,
        *,
        read_only: bool,
        config: MemoryConfig,
        tuning: StoreTuning,
        embeddings: Embeddings | None,
        model_name: str,
        dims: int,
        texts: Texts,
        token: str | None = None,
    ) -> None:
        self.where = uri
        self.read_only = read_only
        self.names = Names(config.store.milvus_collection)
        self.consistency = config.store.milvus_consistency
        self.session_keys = tuple(config.store.session_keys)
        self.embeddings, self.model_name, self.dims, self.texts = (
            embeddings,
            model_name,
            dims,
            texts,
        )
        self.local = None if "://" in uri else Path(uri)
        if self.local is not None and not read_only:
            self.local.parent.mkdir(parents=True, exist_ok=True)
        self._pm, self.client = connect(uri, token or os.environ.get("MILVUS_TOKEN"))
        ensure_collections(
            self._pm,
            self.client,
            self.names,
            dims if embeddings else 0,
            config,
            read_only,
            (tuning.bm25_k1, tuning.bm25_b),
        )
        # collections made before the `doc` field run every filter client-side
        self.has_doc = has_field(self.client, self.names.items, "doc")
        # collections made before the `root` partition key are searched without it
        self.rooted = has_field(self.client, self.names.items, "root")
        self.fields = [
            *ENTITY_FIELDS,
            *(["doc"] if self.has_doc else []),
            *(["root"] if self.rooted else []),
        ]
        self.book = self._open_stats(read_only)
        cap = tuning.milvus_client_bm25_max_docs
        self.backend = MilvusSearch(
            embeddings is not None,
            vector_search_params(config),
            tuning.common_term_ratio,
            ClientBM25(tuning.bm25_k1, tuning.bm25_b, cap) if cap else None,
            filter_field="doc" if self.has_doc else None,
            rooted=self.rooted,
            stats=self.book,
        )
        self._lock = threading.RLock()
        self._unsealed = 0  # rows written to Milvus Lite since its last flush
        self._session: MilvusSession | None = None
        self._keep_tokens_current()

    def _keep_tokens_current(self) -> bool:
        """Re-tokenise the items (their indexed tokens and lengths, then the statistics rows)
        when the items collection was stamped by another tokenizer version (a collection
        property; none: before the stamp), else stamp it; whether it re-tokenised. Vectors
        stay. A read-only handle searches as it is, with a warning."""
        if not self.client.has_collection(self.names.items):
            return False  # read-only over nothing
        props = self.client.describe_collection(self.names.items).get("properties") or {}
        if props.get(_TOKENIZER_PROPERTY) == str(TOKENIZER_VERSION):
            return False
        if self.read_only:
            logger.warning(
                "%s: its keyword index was built by another tokenizer version; keyword search "
                "may miss words until it is opened once writable",
                self.where,
            )
            return False
        if self._count(self.names.items):
            self.reindex(vectors=False)  # stamps the version
            return True
        self._stamp_tokens()
        return False

    def _stamp_tokens(self) -> None:
        """Record the tokenizer version the items' tokens were made with."""
        self.client.alter_collection_properties(
            self.names.items, properties={_TOKENIZER_PROPERTY: str(TOKENIZER_VERSION)}
        )

    def _open_stats(self, read_only: bool) -> StatsBook | None:
        """The statistics rows (store/milvus/stats.py): created with the collections, or counted
        from the items when they predate them; None for a read-only handle on such items."""
        if read_only and not self.client.has_collection(self.names.stats):
            return None
        made = not read_only and create_stats_collection(
            self._pm, self.client, self.names.stats, self.consistency
        )
        if read_only:
            self.client.load_collection(self.names.stats)
        book = StatsBook(self.client, self.names, self.consistency)
        if made and self._count(self.names.items):
            book.rebuild()
        return book

    @property
    def search(self) -> MilvusSearch:
        """What the ranker reads."""
        return self.backend

    # ---------------------------------------------------------------- sessions
    @contextmanager
    def batch_lock(self) -> Iterator[None]:
        """One session (and its ids) for the batch's reads and writes."""
        with self._lock:
            self._session = self._new_session()
            try:
                yield
            finally:
                self._session = None

    @contextmanager
    def read(self) -> Iterator[MilvusSession]:
        yield self._session or self._new_session()

    @contextmanager
    def write(self) -> Iterator[MilvusSession]:
        if self.read_only:
            raise ReadOnlyStoreError(f"{self.where} was opened read-only")
        with self._lock:
            yield self._session or self._new_session()

    def before_reads(self, conn: Any) -> None:
        return None

    # ---------------------------------------------------------------- writes
    def _entity(
        self,
        ns: tuple[str, ...],
        key: str,
        value: Any,
        index: bool,
        keyword_text: str,
        prev: Mapping[str, Any] | None,
        ttl: float | None,
        now: float,
    ) -> dict[str, Any]:
        payload = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        tokens = tokenize(keyword_text) if index else []
        text = " ".join(tokens)
        nsk = ns_key(ns)
        _bytes("the namespace", nsk)
        _bytes(f"the key {key[:40]!r}", key)
        _bytes(f"the value of {key[:40]!r}", payload)
        _bytes(f"the indexed text of {key[:40]!r}", text)
        conf, cat, session = rank_fields(value, self.session_keys)
        said = record_columns(value)[2]  # a new record is dated when it was said
        born = now if said is None else said
        return {
            "pk": item_pk(ns, key),
            "ns": h(nsk),
            "ns_path": ns_path(ns),
            "key_h": h(key),
            "namespace": nsk,
            "key": key,
            "value": payload,
            "text": text,
            "seq": prev["seq"] if prev else next_seq(),
            "created_at": prev["created_at"] if prev else born,
            "updated_at": now if prev else born,
            "last_accessed": prev.get("last_accessed") if prev else None,
            "access_count": prev["access_count"] if prev else 0,
            "ttl_minutes": ttl,
            "expires_at": now + ttl * 60 if ttl is not None else None,
            "confidence": conf,
            "category": cat,
            "session": session,
            "session_h": h(session) if session else "",
            "doc_len": len(tokens),
            "indexed": index,
            **({"doc": doc_field(value)} if self.has_doc else {}),
            **({"root": ns_root(ns)} if self.rooted else {}),
        }

    def apply_puts(
        self, conn: MilvusSession, puts: PutMap, doc_vecs: np.ndarray | None, now: float
    ) -> None:
        """Upsert the new items (keeping the created time, insertion order and use counts of
        those that exist), delete the deleted ones, then replace their vectors."""
        pks = {nk: item_pk(*nk) for nk in puts}
        prev = {
            e["pk"]: e
            for e in conn.by_pks(
                "items",
                "pk",
                list(pks.values()),
                ["pk", "seq", "created_at", "last_accessed", "access_count", "doc_len"],
            )
        }
        rows: list[dict[str, Any]] = []
        vecs: list[dict[str, Any]] = []
        cursor = 0
        for (ns, key), p in puts.items():
            op = p.op
            if op.value is None:
                continue
            pk = pks[(ns, key)]
            ent = self._entity(
                ns,
                key,
                op.value,
                op.index is not False,
                p.keyword_text,
                prev.get(pk),
                op.ttl,
                now,
            )
            rows.append(ent)
            for j, _text in enumerate(p.texts):
                assert doc_vecs is not None
                vecs.append(vec_entity(ent, j, doc_vecs[cursor]))
                cursor += 1
        gone = [pks[nk] for nk, p in puts.items() if p.op.value is None and pks[nk] in prev]
        touched = [r["pk"] for r in rows] + gone
        changes = self._changes(puts, pks, prev, {r["pk"]: r for r in rows})
        if self.book is not None and changes:
            self.book.add(changes)  # before the items: a namespace with items has a row
        try:
            if gone:
                self.client.delete(self.names.items, filter=in_expr("pk", gone))
            if rows:
                self.client.upsert(self.names.items, rows)
        except BaseException:
            if self.book is not None and changes:
                self.book.add(changes, -1)
            raise
        self._unsealed += len(rows) + len(gone)
        self._replace_vectors(touched, vecs)

    @staticmethod
    def _changes(
        puts: PutMap,
        pks: Mapping[tuple[tuple[str, ...], str], str],
        prev: Mapping[str, Mapping[str, Any]],
        new: Mapping[str, Mapping[str, Any]],
    ) -> dict[tuple[str, ...], Counts]:
        """What the batch changes in each namespace's counts (store/milvus/stats.py): the new
        versions added, the versions read before it removed."""
        out: dict[tuple[str, ...], Counts] = {}
        for ns, key in puts:
            pk = pks[(ns, key)]
            old, now = prev.get(pk), new.get(pk)
            if old is None and now is None:
                continue
            c = out.setdefault(ns, Counts())
            if old is not None:
                c.add(Counts.of(int(old["doc_len"])), -1)
            if now is not None:
                c.add(Counts.of(int(now["doc_len"])))
        return {ns: c for ns, c in out.items() if c != Counts()}

    def _replace_vectors(self, items: Sequence[str], vecs: list[dict[str, Any]]) -> None:
        if not self.embeddings or not items:
            return
        for i in range(0, len(items), 1000):
            self.client.delete(self.names.vectors, filter=in_expr("item", items[i : i + 1000]))
        if vecs:
            self.client.upsert(self.names.vectors, vecs)

    def after_puts(self) -> None:
        """Milvus Lite: seal what was written once enough piled up (its unsealed rows are
        searched without an index). A server seals segments by itself."""
        if self.local is not None and self._unsealed >= _LITE_FLUSH_ROWS:
            self._flush()

    def _flush(self) -> None:
        for name in (self.names.items, self.names.vectors):
            if self.client.has_collection(name):
                self.client.flush(name)
        self._unsealed = 0

    def _rewrite(
        self, conn: MilvusSession, pks: Sequence[str], change: Callable[[dict[str, Any]], bool]
    ) -> int:
        """Read the items, let `change` edit each (true: write it back); how many changed."""
        ents = conn.by_pks("items", "pk", list(dict.fromkeys(pks)), self.fields)
        changed = [e for e in ents if change(e)]
        if changed:
            self.client.upsert(self.names.items, changed)
        return len(changed)

    def refresh_ttl(self, conn: MilvusSession, item_ids: Sequence[int], now: float) -> None:
        def restart(e: dict[str, Any]) -> bool:
            if e.get("ttl_minutes") is None:
                return False
            e["expires_at"] = now + float(e["ttl_minutes"]) * 60
            return True

        self._rewrite(conn, conn.pks_of(item_ids), restart)

    def mark_used(self, namespace: Sequence[str], keys: Sequence[str], ts: float | None) -> int:
        def used(e: dict[str, Any]) -> bool:
            e["access_count"] = int(e["access_count"]) + 1
            e["last_accessed"] = ts
            return True

        with self.write() as conn:
            return self._rewrite(conn, [item_pk(namespace, k) for k in keys], used)

    # ---------------------------------------------------------------- maintenance
    def restore_item_stats(
        self, rows: Sequence[tuple[str, str, float | None, float | None, float | None, int]]
    ) -> int:
        if not rows:
            return 0
        want = {h(ns + "\x00" + key): (c, u, la, n) for ns, key, c, u, la, n in rows}

        def restore(e: dict[str, Any]) -> bool:
            c, u, la, n = want[e["pk"]]
            e.update(created_at=c, updated_at=u, last_accessed=la, access_count=int(n))
            return True

        with self.write() as conn:
            return self._rewrite(conn, list(want), restore)

    def conversation_log(self, clock: Clock) -> MilvusConversationLog:
        """The conversation log in the `<name>_log` collection (created on first use)."""
        create_log_collection(self._pm, self.client, self.names.log, self.consistency)
        return MilvusConversationLog(self._new_session(), self.names.log, clock)

    def close(self) -> None:
        if self.book is not None and not self.read_only:
            self.book.close()
        if self.local is not None and self._unsealed and not self.read_only:
            self._flush()
        self.client.close()

    # ---------------------------------------------------------------- maintenance
    def _new_session(self) -> MilvusSession:
        return MilvusSession(self.client, self.names, self.consistency)

    def _all(self, expr: str, fields: list[str]) -> list[dict[str, Any]]:
        """Every item matching `expr`, in insertion order."""
        got = list(self._new_session().query_all(self.names.items, expr, [*fields, "seq"]))
        return sorted(got, key=lambda e: int(e["seq"]))

    def expired(self, now: float) -> list[tuple[tuple[str, ...], str]]:
        got = self._all(f"expires_at < {float(now)!r}", ["namespace", "key"])
        return [(tuple(e["namespace"].split(NS_SEP)), e["key"]) for e in got]

    def _prefix(self, prefix: Sequence[str], exact: bool) -> str:
        if not prefix:
            return ""
        if exact:
            return and_(root_expr(prefix, self.rooted), f'ns == "{h(ns_key(prefix))}"')
        return ns_prefix_expr(prefix, self.rooted)

    def count(self, prefix: Sequence[str], exact: bool) -> int:
        expr = self._prefix(prefix, exact)
        got = self._new_session().query(self.names.items, expr, ["count(*)"])
        return int(got[0]["count(*)"]) if got else 0

    def keys(self, prefix: Sequence[str], exact: bool) -> list[tuple[tuple[str, ...], str]]:
        got = self._all(self._prefix(prefix, exact), ["namespace", "key"])
        return [(tuple(e["namespace"].split(NS_SEP)), e["key"]) for e in got]

    def locate(self, key: str, prefix: Sequence[str]) -> list[tuple[str, ...]]:
        expr = and_(f'key_h == "{h(key)}"', self._prefix(prefix, False))
        return [tuple(e["namespace"].split(NS_SEP)) for e in self._all(expr, ["namespace"])]

    def followers(self, namespace: Sequence[str], keys: Sequence[str]) -> dict[str, list[str]]:
        """The episodes naming each of `keys` in their `follows` (seams.StorageBackend): a
        JSON-contains filter on `doc` within the namespace's partition (a `like` on the value
        for keys a literal cannot carry, or collections without `doc`), checked exactly here."""
        want = list(dict.fromkeys(keys))
        if not want:
            return {}
        plain = all(not any(c in '"\\' or ord(c) < 0x20 for c in k) for k in want)
        quoted = ",".join(f'"{k}"' for k in want)
        links = (
            f'json_contains_any(doc["metadata"]["follows"], [{quoted}])'
            if plain and self.has_doc
            else f"value like {like_pattern(chr(34) + 'follows' + chr(34))}"
        )
        found: dict[str, list[str]] = {k: [] for k in want}
        for e in self._all(and_(self._prefix(namespace, True), links), ["key", "value"]):
            for earlier in follows_of(json.loads(e["value"]))[:FOLLOWS_INDEXED]:
                if earlier in found and e["key"] not in found[earlier]:
                    found[earlier].append(e["key"])
        return found

    def stats(self) -> dict[str, Any]:
        """Counts by `count(*)`; the namespaces from one pass over the namespace hashes (Milvus
        has no distinct count), unsorted."""
        ns = {e["ns"] for e in self._new_session().query_all(self.names.items, "", ["ns"])}
        return {
            "items": self._count(self.names.items),
            "namespaces": len(ns),
            "vectors": self._count(self.names.vectors),
            "postings": None,  # Milvus keeps its own BM25 index
            "db_bytes": self.db_bytes(),
            "embedding_model": self.model_name or None,
            "faiss_vectors": 0,
        }

    def _count(self, collection: str) -> int:
        if not self.client.has_collection(collection):
            return 0
        got = self._new_session().query(collection, "", ["count(*)"])
        return int(got[0]["count(*)"]) if got else 0

    def db_bytes(self) -> int:
        """Bytes of a local Milvus Lite file (0 for a server: ask the cluster's metrics)."""
        if self.local is None or not self.local.exists():
            return 0
        if self.local.is_file():
            return self.local.stat().st_size
        return sum(p.stat().st_size for p in self.local.rglob("*") if p.is_file())

    def vacuum(self) -> int:
        """Milvus compacts deleted entities in the background; here the statistics rows of
        closed handles are folded (store/milvus/stats.py). Returns 0 (no bytes are measured)."""
        if self.book is not None and not self.read_only:
            self.book.compact()
        return 0

    def _embed(self, ents: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Vector entities of the items' texts, embedded in batches."""
        assert self.embeddings is not None
        flat = [
            (e, j, t)
            for e in ents
            if e["indexed"]
            for j, (_p, t) in enumerate(self.texts(json.loads(e["value"])))
        ]
        out: list[dict[str, Any]] = []
        for i in range(0, len(flat), _EMBED_BATCH):
            chunk = flat[i : i + _EMBED_BATCH]
            arr = np.asarray(self.embeddings.embed_documents([c[2] for c in chunk]), np.float32)
            out.extend(vec_entity(e, j, v) for (e, j, _t), v in zip(chunk, arr, strict=True))
        return out

    def reindex(
        self, *, vectors: bool = True, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, int]:
        """Re-tokenise every item and re-read its ranking fields (and re-embed it);
        `progress(done, total)` counts the items written, then the vectors."""
        ents = self._all("", self.fields)
        embed = vectors and self.embeddings is not None
        total = len(ents) * (2 if embed else 1)
        if progress is not None:
            progress(0, total)
        for e in ents:
            value = json.loads(e["value"])
            toks = tokenize("\n".join(t for _, t in self.texts(value))) if e["indexed"] else []
            conf, cat, session = rank_fields(value, self.session_keys)
            e.update(text=" ".join(toks), doc_len=len(toks), confidence=conf, category=cat)
            e.update(session=session, session_h=h(session) if session else "")
            if self.has_doc:
                e["doc"] = doc_field(value)
        for i in range(0, len(ents), 1000):
            self.client.upsert(self.names.items, ents[i : i + 1000])
            if progress is not None:
                progress(min(i + 1000, len(ents)), total)
        if self.book is not None:
            self.book.rebuild()
        self._stamp_tokens()
        n_vecs = 0
        if embed:
            vecs = self._embed(ents)
            self.client.delete(self.names.vectors, filter='pk != ""')
            for i in range(0, len(vecs), 1000):
                self.client.upsert(self.names.vectors, vecs[i : i + 1000])
            n_vecs = len(vecs)
        if progress is not None:
            progress(total, total)
        return {"items": len(ents), "vectors": n_vecs}

    def _vector_items(self) -> set[str]:
        if not self.client.has_collection(self.names.vectors):
            return set()
        return {e["item"] for e in self._new_session().query_all(self.names.vectors, "", ["item"])}

    def check(self) -> dict[str, Any]:
        """Items and vectors agree: no vector of a missing item, and (with embeddings) every
        indexed item with text has vectors."""
        items = {e["pk"]: e for e in self._all("", ["pk", "doc_len", "indexed"])}
        have = self._vector_items()
        problems: list[str] = []
        orphans = len(have - set(items))
        if orphans:
            problems.append(f"{orphans} items have vectors but no item entity")
        if self.embeddings is not None:
            missing = sum(
                1 for pk, e in items.items() if e["indexed"] and e["doc_len"] and pk not in have
            )
            if missing:
                problems.append(f"{missing} indexed items have no vectors (backfill_vectors)")
        if self.book is not None:
            problems.extend(self._check_stats())
        return {"ok": not problems, "problems": problems, "items": len(items)}

    def _check_stats(self) -> list[str]:
        """The statistics rows against a recount of the items (store/milvus/stats.py)."""
        assert self.book is not None
        off = self.book.differences()
        if off:
            return [f"the statistics of {off} namespaces differ from their items (reindex)"]
        return []

    def backfill_vectors(self) -> int:
        if self.embeddings is None:
            return 0
        have = self._vector_items()
        todo = [e for e in self._all("indexed == true", self.fields) if e["pk"] not in have]
        vecs = self._embed(todo)
        for i in range(0, len(vecs), 1000):
            self.client.upsert(self.names.vectors, vecs[i : i + 1000])
        return len({v["item"] for v in vecs})
