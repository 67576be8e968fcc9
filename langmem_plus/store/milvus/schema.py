"""The Milvus side of the store: connecting, the two collections, expressions and rows.

One pair of collections holds every user: `<name>_items` (one entity per item: value JSON,
the ranking fields, the indexed tokens with Milvus's BM25 function into a sparse vector) and
`<name>_vectors` (one entity per embedded text of an item). The partition key is the
namespace's root (its first `ROOT_DEPTH` elements: `("memories", user_id)`), so a million
users are a million key values in one collection, not a million collections, and a search
under a user's prefix names its key (Milvus reads that partition only). Collections made
before the `root` field keep the namespace hash `ns` as their partition key.

Expressions compare hashes (`h`): the primary key is a 128-bit BLAKE2 of (namespace, key),
and a namespace is matched by the hashes of all its prefixes (`ns_path`); user text enters
an expression only as an escaped literal (`like_pattern`, store/milvus/filters.py).

pymilvus (and milvus-lite for a local `*.milvus.db` file) are the optional `milvus` extra:
nothing here imports them before `connect` is called.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from langmem_plus.config import MemoryConfig
from langmem_plus.errors import MissingExtraError, StoreInUseError
from langmem_plus.model.records import record_columns
from langmem_plus.store.seams import NS_SEP, CandidateRow, ns_key

__all__ = [
    "ENTITY_FIELDS",
    "FULL_FIELDS",
    "LIGHT_FIELDS",
    "MAX_BYTES",
    "ROOT_DEPTH",
    "Names",
    "Reconnecting",
    "and_",
    "connect",
    "ensure_collections",
    "h",
    "has_field",
    "in_expr",
    "item_pk",
    "like_pattern",
    "lite_lock",
    "next_seq",
    "ns_path",
    "ns_prefix_expr",
    "ns_root",
    "root_expr",
    "to_row",
    "vector_search_params",
]

MAX_BYTES = 65_535
"""What one Milvus VARCHAR holds (UTF-8 bytes): the cap on an item's value JSON, indexed
text, key and namespace on this backend."""

LIGHT_FIELDS = [
    "seq",
    "created_at",
    "updated_at",
    "last_accessed",
    "access_count",
    "ttl_minutes",
    "expires_at",
    "confidence",
    "category",
    "session",
]
FULL_FIELDS = ["pk", "namespace", "key", "value", *LIGHT_FIELDS]
ENTITY_FIELDS = [
    "pk", "ns", "ns_path", "key_h", "namespace", "key", "value", "text", "seq", "created_at",
    "updated_at", "last_accessed", "access_count", "ttl_minutes", "expires_at", "confidence",
    "category", "session", "session_h", "doc_len", "indexed",
]  # fmt: skip
"""Every stored field of an item but the BM25 output (Milvus derives it from `text`)."""


class Names:
    """The collection names for a name prefix."""

    def __init__(self, prefix: str) -> None:
        self.items = f"{prefix}_items"
        self.vectors = f"{prefix}_vectors"
        self.log = f"{prefix}_log"
        self.stats = f"{prefix}_stats"


def h(text: str) -> str:
    """A 128-bit BLAKE2 hex digest: what expressions compare instead of user text."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def item_pk(namespace: Sequence[str], key: str) -> str:
    """The primary key of an item: the same (namespace, key) gives the same entity, so a put
    from any handle replaces it (Milvus upsert)."""
    return h(ns_key(namespace) + "\x00" + key)


def ns_path(namespace: Sequence[str]) -> list[str]:
    """Hashes of every prefix of a namespace, itself included (`array_contains` matches a
    search prefix)."""
    return [h(NS_SEP.join(namespace[: i + 1])) for i in range(len(namespace))]


ROOT_DEPTH = 2
"""Namespace elements that make the partition key (`root`): `("memories", user_id)`, so a
user's items share one partition key value and a search under that prefix names it."""


def ns_root(namespace: Sequence[str]) -> str:
    """The partition key of a namespace: the hash of its first `ROOT_DEPTH` elements."""
    return h(NS_SEP.join(namespace[:ROOT_DEPTH]))


def root_expr(prefix: Sequence[str], rooted: bool) -> str:
    """`root == ...` for a prefix of at least `ROOT_DEPTH` elements on collections that have
    the `root` partition key (Milvus then searches that key's partition only); "" else."""
    if not rooted or len(prefix) < ROOT_DEPTH:
        return ""
    return f'root == "{ns_root(prefix)}"'


def ns_prefix_expr(prefix: Sequence[str], rooted: bool = False) -> str:
    """The expression of the items in namespace `prefix` or under it ("" for all); with
    `rooted`, the partition key condition too (`root_expr`)."""
    if not prefix:
        return ""
    return and_(root_expr(prefix, rooted), f'array_contains(ns_path, "{h(ns_key(prefix))}")')


def in_expr(field: str, values: Iterable[str]) -> str:
    """`field in [...]` over hashes or hex keys (never user text)."""
    quoted = ",".join('"' + v + '"' for v in values)
    return f"{field} in [{quoted}]"


def like_pattern(word: str) -> str | None:
    """A Milvus string literal for `value like "%word%"`, wildcards and quotes escaped; None
    for a word with characters a literal cannot carry (control characters)."""
    if any(ord(c) < 0x20 for c in word):
        return None
    esc = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return '"%' + esc.replace("\\", "\\\\").replace('"', '\\"') + '%"'


def and_(*parts: str) -> str:
    """The conjunction of the non-empty expressions."""
    got = [p for p in parts if p]
    return " and ".join(f"({p})" for p in got)


_seq_lock = threading.Lock()
_last_seq = 0


def next_seq() -> int:
    """A fresh insertion-order number: wall-clock nanoseconds, strictly increasing within
    the process (items of another process written in the same nanosecond could tie)."""
    global _last_seq
    with _seq_lock:
        _last_seq = max(_last_seq + 1, time.time_ns())
        return _last_seq


def to_row(ent: Mapping[str, Any], full: bool) -> CandidateRow:
    """A `CandidateRow` from a Milvus entity (its id is the item's `seq`); a record's time and
    validity are read from its value (model/records.py record_columns), as the SQLite
    backend's write path stores them."""
    value = ent.get("value")
    validity = (
        record_columns(json.loads(value))
        if isinstance(value, str) and '"kind":' in value
        else (None, None, None, None, None, False)
    )
    return CandidateRow(
        int(ent["seq"]),
        ent["namespace"] if full else None,
        ent["key"] if full else None,
        ent["value"] if full else None,
        float(ent["created_at"]),
        float(ent["updated_at"]),
        ent.get("last_accessed"),
        int(ent["access_count"]),
        ent.get("ttl_minutes"),
        ent.get("expires_at"),
        ent.get("confidence"),
        ent.get("category"),
        ent.get("session"),
        *validity,
    )


def _pymilvus(uri: str) -> Any:
    try:
        pymilvus = importlib.import_module("pymilvus")
    except ImportError as exc:
        raise MissingExtraError.for_extra("milvus", "pymilvus") from exc
    if "://" not in uri:
        try:
            importlib.import_module("milvus_lite")
        except ImportError as exc:
            raise MissingExtraError.for_extra("milvus", "milvus-lite") from exc
    return pymilvus


class _NoLiteMvccNotice(logging.Filter):
    """Drops pymilvus's notice that Milvus Lite gives query iterators no MVCC timestamp
    (Lite reads are strong anyway): one line per listing otherwise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "mvccTs" not in record.getMessage()


_lite_locks: dict[str, threading.RLock] = {}
_lite_locks_guard = threading.Lock()


def lite_lock(path: str) -> AbstractContextManager[Any]:
    """The lock every request to the Milvus Lite file `path` holds in this process.

    Milvus Lite runs inside the process (one server per file, shared by every client of it)
    and does not isolate concurrent requests: it numbers each write from a counter it reads
    and stores back unguarded, so two writes at once can push the counter back, and a later
    write of a row that gets the number of the row's last write is dropped silently (a
    handle's statistics row then keeps a stale count); and of two flushes at once, the one
    holding the earlier rows can publish second, which Lite refuses, and those rows vanish
    from view. One request at a time per file makes every write land. Another process
    cannot open the file at all (Lite holds an exclusive lock on it), so this process-wide
    lock is the whole guard."""
    key = os.path.realpath(path)
    with _lite_locks_guard:
        return _lite_locks.setdefault(key, threading.RLock())


class _LockedIterator:
    """A query iterator whose pages are requested under the Milvus Lite file's lock."""

    def __init__(self, it: Any, lock: AbstractContextManager[Any]) -> None:
        self._it, self._lock = it, lock

    def next(self) -> Any:
        with self._lock:
            return self._it.next()

    def close(self) -> None:
        with self._lock:
            self._it.close()


class Reconnecting:
    """A `MilvusClient` that reconnects once when its connection is gone (codes 1, 2), then
    retries the call: Milvus Lite's daemon exits after a while without requests, a server may
    restart, and gRPC may drop an idle shared connection ("too many pings"). The new client
    has a connection of its own (pymilvus shares one per URI, and a dropped shared one can
    fail its own recovery). On a Milvus Lite file every call (and every page of a query
    iterator) holds the file's `lite_lock`."""

    def __init__(
        self,
        pymilvus: Any,
        kwargs: dict[str, Any],
        lock: AbstractContextManager[Any] | None = None,
    ) -> None:
        self._pm, self._kwargs = pymilvus, kwargs
        self._lock: AbstractContextManager[Any] = lock if lock is not None else nullcontext()
        with self._lock:
            try:
                self._client = pymilvus.MilvusClient(**kwargs)
            except pymilvus.MilvusException as exc:
                if exc.code not in (1, 2):
                    raise
                self._client = pymilvus.MilvusClient(**kwargs, dedicated=True)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if not callable(method):
            return method

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                got = self._call(name, args, kwargs)
            return _LockedIterator(got, self._lock) if name.endswith("_iterator") else got

        return call

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            return getattr(self._client, name)(*args, **kwargs)
        except self._pm.MilvusException as exc:
            if exc.code not in (1, 2) or name == "close":  # 1: closed, 2: unreachable
                raise
            self._client = self._pm.MilvusClient(**self._kwargs, dedicated=True)
            return getattr(self._client, name)(*args, **kwargs)


def connect(uri: str, token: str | None = None) -> tuple[Any, Any]:
    """(pymilvus module, client) for a server URI or a local Milvus Lite file (whose requests
    go one at a time: `lite_lock`)."""
    pymilvus = _pymilvus(uri)
    log = logging.getLogger("pymilvus.client.iterator.query_iterator")
    if not any(isinstance(f, _NoLiteMvccNotice) for f in log.filters):
        log.addFilter(_NoLiteMvccNotice())
    kwargs: dict[str, Any] = {"uri": uri}
    if token:
        kwargs["token"] = token
    if "://" in uri:
        return pymilvus, Reconnecting(pymilvus, kwargs)
    try:
        return pymilvus, Reconnecting(pymilvus, kwargs, lite_lock(uri))
    except pymilvus.MilvusException as exc:
        if _held_elsewhere(uri):
            raise StoreInUseError(
                f"{uri}: another process has this Milvus Lite file open (Lite opens a file in "
                "one process at a time); close the store there, or run a Milvus server for "
                "several processes (docs/scale-out.md)"
            ) from exc
        raise


def _held_elsewhere(path: str) -> bool:
    """Whether another open file description holds Milvus Lite's advisory lock on `path`
    (its `LOCK` file); False where it cannot be told (no such file, no `fcntl`)."""
    try:
        import fcntl
    except ImportError:  # Windows: Lite locks with msvcrt; leave its own error
        return False
    try:
        fd = os.open(os.path.join(path, "LOCK"), os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _nullable(schema: Any, dt: Any, name: str, **kw: Any) -> None:
    schema.add_field(name, dt, nullable=True, **kw)


def _items_schema(pm: Any, client: Any, bm25_k1: float, bm25_b: float) -> tuple[Any, Any]:
    dt = pm.DataType
    s = client.create_schema(auto_id=False, enable_dynamic_field=False)
    s.add_field("pk", dt.VARCHAR, is_primary=True, max_length=32)
    s.add_field("ns", dt.VARCHAR, max_length=32)
    s.add_field("root", dt.VARCHAR, max_length=32, is_partition_key=True)  # ns_root
    s.add_field("ns_path", dt.ARRAY, element_type=dt.VARCHAR, max_capacity=256, max_length=32)
    s.add_field("key_h", dt.VARCHAR, max_length=32)
    s.add_field("namespace", dt.VARCHAR, max_length=MAX_BYTES)
    s.add_field("key", dt.VARCHAR, max_length=MAX_BYTES)
    s.add_field("value", dt.VARCHAR, max_length=MAX_BYTES)
    # the value again, for filter expressions (store/milvus/filters.py)
    _nullable(s, dt.JSON, "doc")
    s.add_field(
        "text",
        dt.VARCHAR,
        max_length=MAX_BYTES,
        enable_analyzer=True,
        analyzer_params={"tokenizer": "jieba"},
    )
    s.add_field("sparse", dt.SPARSE_FLOAT_VECTOR)
    s.add_field("seq", dt.INT64)
    s.add_field("created_at", dt.DOUBLE)
    s.add_field("updated_at", dt.DOUBLE)
    _nullable(s, dt.DOUBLE, "last_accessed")
    s.add_field("access_count", dt.INT64)
    _nullable(s, dt.DOUBLE, "ttl_minutes")
    _nullable(s, dt.DOUBLE, "expires_at")
    _nullable(s, dt.DOUBLE, "confidence")
    _nullable(s, dt.VARCHAR, "category", max_length=MAX_BYTES)
    _nullable(s, dt.VARCHAR, "session", max_length=MAX_BYTES)
    s.add_field("session_h", dt.VARCHAR, max_length=32)
    s.add_field("doc_len", dt.INT64)
    s.add_field("indexed", dt.BOOL)
    s.add_function(
        pm.Function(
            name="bm25",
            function_type=pm.FunctionType.BM25,
            input_field_names=["text"],
            output_field_names=["sparse"],
        )
    )
    ip = client.prepare_index_params()
    ip.add_index(
        field_name="sparse",
        index_type="SPARSE_INVERTED_INDEX",
        metric_type="BM25",
        params={"bm25_k1": bm25_k1, "bm25_b": bm25_b},
    )
    return s, ip


def _vectors_schema(
    pm: Any, client: Any, dims: int, config: MemoryConfig, rooted: bool
) -> tuple[Any, Any]:
    """The vectors collection, partitioned as the items are (`rooted`: by `root`)."""
    dt = pm.DataType
    s = client.create_schema(auto_id=False, enable_dynamic_field=False)
    s.add_field("pk", dt.VARCHAR, is_primary=True, max_length=48)
    s.add_field("item", dt.VARCHAR, max_length=32)
    s.add_field("seq", dt.INT64)
    s.add_field("ns", dt.VARCHAR, max_length=32, is_partition_key=not rooted)
    if rooted:
        s.add_field("root", dt.VARCHAR, max_length=32, is_partition_key=True)  # ns_root
    s.add_field("ns_path", dt.ARRAY, element_type=dt.VARCHAR, max_capacity=256, max_length=32)
    s.add_field("vec", dt.FLOAT_VECTOR, dim=dims)
    kind = config.store.milvus_vector_index
    params: dict[str, Any] = {}
    if kind == "HNSW":
        params = {"M": 16, "efConstruction": 200}
    elif kind == "IVF_FLAT":
        params = {"nlist": 1024}
    ip = client.prepare_index_params()
    ip.add_index(field_name="vec", index_type=kind, metric_type="COSINE", params=params)
    return s, ip


def vector_search_params(config: MemoryConfig) -> dict[str, Any]:
    """The search parameters of the configured vector index."""
    kind = config.store.milvus_vector_index
    if kind == "HNSW":
        return {"metric_type": "COSINE", "params": {"ef": config.store.milvus_hnsw_ef}}
    if kind == "IVF_FLAT":
        return {"metric_type": "COSINE", "params": {"nprobe": config.store.milvus_ivf_nprobe}}
    return {"metric_type": "COSINE"}


def has_field(client: Any, collection: str, field: str) -> bool:
    """Whether the collection exists and has the field (collections made by an earlier
    version lack the later fields)."""
    if not client.has_collection(collection):
        return False
    return any(f["name"] == field for f in client.describe_collection(collection)["fields"])


def ensure_collections(
    pm: Any,
    client: Any,
    names: Names,
    dims: int,
    config: MemoryConfig,
    read_only: bool,
    bm25: tuple[float, float] = (1.5, 0.3),
) -> None:
    """Create the collections when missing (vectors only with embeddings) and load them;
    `bm25`: (k1, b) of Milvus's own BM25 function (store/tuning.py)."""
    consistency = config.store.milvus_consistency
    if not client.has_collection(names.items) and not read_only:
        schema, ip = _items_schema(pm, client, *bm25)
        client.create_collection(
            names.items, schema=schema, index_params=ip, consistency_level=consistency
        )
    if dims and not client.has_collection(names.vectors) and not read_only:
        rooted = has_field(client, names.items, "root")  # items made by an earlier version?
        schema, ip = _vectors_schema(pm, client, dims, config, rooted)
        client.create_collection(
            names.vectors, schema=schema, index_params=ip, consistency_level=consistency
        )
    for name in (names.items, names.vectors):
        if client.has_collection(name):
            client.load_collection(name)
