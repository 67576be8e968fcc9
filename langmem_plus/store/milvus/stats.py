"""The Milvus store's BM25 statistics, kept as writes happen: per namespace, its items, its
documents (items with indexed text) and their total length in tokens. A search reads its
scope's N and mean document length, and which namespaces the scope spans, from a few small
rows instead of listing every document of the scope.

One collection, `<name>_stats`, partitioned by the namespace root as the items are. Each store
handle (a `MilvusStorage`; a process may open several) owns one row per namespace it wrote,
holding what its own writes changed there (items and documents added minus removed, tokens
added minus removed), and it is the only writer of that row: concurrent writers, in this
process or in others, never overwrite each other's counts, and a namespace's statistics are
the sum of its rows (on a Milvus Lite file every write lands because the process sends its
requests one at a time: `schema.lite_lock`). Rows are written before the items they count
(and taken back when the item write fails), so a namespace with items always has a row: the
rows are a directory of the namespaces under a prefix, and a search names those namespaces
(`ns in [...]`) instead of testing every item's namespace path.

What a reader sees: the sums are exact whenever no two handles write the same key at the same
moment. A handle counts a replaced or deleted item from the version it read before writing;
two handles replacing (or deleting) one key at once both subtract the version they read, so
the namespace's counts are then off by that item until `rebuild` (`reindex()`) recounts
(it sets a base row per namespace to the recount minus the other rows, so handles still open
keep adding to their own rows).
Between a handle's row update and its item write (one request), a reader's N and lengths
already include the items being written. `check()` compares the rows with the items.

A handle keeps its most recently written rows in memory and reads an older one back before
adding to it (only it writes that row, so the read is current). Closing a handle marks its
rows closed; `compact` (`vacuum()`) folds closed rows into one
base row per namespace (one `vacuum()` at a time: two running at once can fold a row twice).
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langmem_plus.store.milvus.schema import (
    ROOT_DEPTH,
    Names,
    h,
    in_expr,
    ns_path,
    ns_prefix_expr,
    ns_root,
)
from langmem_plus.store.seams import NS_SEP, ns_key

__all__ = ["BASE", "Counts", "ScopeStats", "StatsBook", "create_stats_collection"]

BASE = "base"
"""The writer of the rows `rebuild` and `compact` write (one per namespace)."""

MAX_SCOPE_NAMESPACES = 1000
"""A scope spanning more namespaces than this is named by its namespace path instead of a
list of namespaces (the expression would grow with the list)."""

OWN_ROWS_KEPT = 4096
"""A handle's own statistics rows kept in memory (most recently written first); older ones
are read back when written again."""

MAX_ROWS = 16_384  # Milvus's cap on one request's limit
_CHUNK = 1000
_FIELDS = ["pk", "ns", "ns_path", "writer", "n_items", "n_docs", "total_len", "closed"]


def create_stats_collection(pm: Any, client: Any, name: str, consistency: str) -> bool:
    """Create the statistics collection when missing, and load it; whether it was created."""
    made = False
    if not client.has_collection(name):
        dt = pm.DataType
        s = client.create_schema(auto_id=False, enable_dynamic_field=False)
        s.add_field("pk", dt.VARCHAR, is_primary=True, max_length=32)
        s.add_field("root", dt.VARCHAR, max_length=32, is_partition_key=True)
        s.add_field("ns", dt.VARCHAR, max_length=32)
        s.add_field("ns_path", dt.ARRAY, element_type=dt.VARCHAR, max_capacity=256, max_length=32)
        s.add_field("writer", dt.VARCHAR, max_length=32)
        s.add_field("n_items", dt.INT64)
        s.add_field("n_docs", dt.INT64)
        s.add_field("total_len", dt.INT64)
        s.add_field("closed", dt.BOOL)
        s.add_field("placeholder", dt.FLOAT_VECTOR, dim=2)  # Milvus needs a vector field
        ip = client.prepare_index_params()
        ip.add_index(field_name="placeholder", index_type="FLAT", metric_type="L2")
        client.create_collection(name, schema=s, index_params=ip, consistency_level=consistency)
        made = True
    client.load_collection(name)
    return made


@dataclass
class Counts:
    """A namespace's items, documents (items with indexed text) and tokens of its documents."""

    n_items: int = 0
    n_docs: int = 0
    total_len: int = 0

    def add(self, other: Counts, sign: int = 1) -> None:
        self.n_items += sign * other.n_items
        self.n_docs += sign * other.n_docs
        self.total_len += sign * other.total_len

    @classmethod
    def of(cls, doc_len: int) -> Counts:
        """One item with `doc_len` indexed tokens."""
        return cls(1, int(doc_len > 0), int(doc_len))


@dataclass
class ScopeStats:
    """The statistics of the namespaces one search covers."""

    namespaces: list[str]  # namespace hashes with a row (a superset of those with items)
    counts: Counts = field(default_factory=Counts)


def row_pk(ns_hash: str, writer: str) -> str:
    """The primary key of a writer's row of a namespace (by the namespace's hash)."""
    return h(ns_hash + "\x00" + writer)


def _row(namespace: tuple[str, ...], writer: str, c: Counts, closed: bool) -> dict[str, Any]:
    ns_hash = h(ns_key(namespace))
    return {
        "pk": row_pk(ns_hash, writer),
        "root": ns_root(namespace),
        "ns": ns_hash,
        "ns_path": ns_path(namespace),
        "writer": writer,
        "n_items": c.n_items,
        "n_docs": c.n_docs,
        "total_len": c.total_len,
        "closed": closed,
        "placeholder": [1.0, 0.0],
    }


def _counts(e: Mapping[str, Any]) -> Counts:
    return Counts(int(e["n_items"]), int(e["n_docs"]), int(e["total_len"]))


def _base_row(like: Mapping[str, Any], c: Counts) -> dict[str, Any]:
    """A namespace's base row with counts `c`, its partition fields from another of its
    rows (`like`)."""
    return {
        "pk": row_pk(like["ns"], BASE),
        "root": like["root"],
        "ns": like["ns"],
        "ns_path": list(like["ns_path"]),
        "writer": BASE,
        "n_items": c.n_items,
        "n_docs": c.n_docs,
        "total_len": c.total_len,
        "closed": True,
        "placeholder": [1.0, 0.0],
    }


class StatsBook:
    """One handle's view of the statistics collection: its own rows (what its writes
    changed; the most recently written ones also kept in memory), and the sums readers take
    (see the module docstring)."""

    def __init__(self, client: Any, names: Names, consistency: str) -> None:
        self.client = client
        self.name = names.stats
        self.items = names.items
        self.consistency = consistency
        self.writer = uuid.uuid4().hex
        self._own: OrderedDict[tuple[str, ...], Counts] = OrderedDict()
        self._wrote = False

    # ---------------------------------------------------------------- writes
    def add(self, changes: Mapping[tuple[str, ...], Counts], sign: int = 1) -> None:
        """Add the changes to this handle's rows (one upsert for the batch; a row not held
        in memory is read back first, so a long-lived handle holds `OWN_ROWS_KEPT` at most)."""
        missing = [ns for ns in changes if ns not in self._own]
        if missing:
            pks = [row_pk(h(ns_key(ns)), self.writer) for ns in missing]
            got = {e["pk"]: e for e in self._by_pks(pks)}
            for ns, pk in zip(missing, pks, strict=True):
                self._own[ns] = _counts(got[pk]) if pk in got else Counts()
        rows = []
        for namespace, c in changes.items():
            mine = self._own[namespace]
            mine.add(c, sign)
            self._own.move_to_end(namespace)
            rows.append(_row(namespace, self.writer, mine, False))
        self._upsert(rows)
        self._wrote = self._wrote or bool(rows)
        while len(self._own) > OWN_ROWS_KEPT:
            self._own.popitem(last=False)

    def _by_pks(self, pks: Sequence[str]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for i in range(0, len(pks), _CHUNK):
            out.extend(
                self.client.query(
                    self.name,
                    filter=in_expr("pk", pks[i : i + _CHUNK]),
                    output_fields=["pk", "n_items", "n_docs", "total_len"],
                    consistency_level=self.consistency,
                )
            )
        return out

    def close(self) -> None:
        """Mark this handle's rows closed: they never change again, `compact` may fold them."""
        if self._wrote:
            rows = self._query_all(self.name, f'writer == "{self.writer}"', [*_FIELDS, "root"])
            self._upsert([{**e, "closed": True, "placeholder": [1.0, 0.0]} for e in rows])
        self._own.clear()
        self._wrote = False

    def _query_all(self, collection: str, expr: str, fields: list[str]) -> list[dict[str, Any]]:
        it = self.client.query_iterator(
            collection,
            batch_size=_CHUNK,
            filter=expr or 'pk != ""',
            output_fields=fields,
            consistency_level=self.consistency,
        )
        out: list[dict[str, Any]] = []
        try:
            while page := it.next():
                out.extend(page)
        finally:
            it.close()
        return out

    def recount(self) -> dict[tuple[str, ...], Counts]:
        """Every namespace's counts from its items (one pass over the items)."""
        out: dict[tuple[str, ...], Counts] = {}
        for e in self._query_all(self.items, "", ["namespace", "doc_len"]):
            ns = tuple(e["namespace"].split(NS_SEP))
            out.setdefault(ns, Counts()).add(Counts.of(int(e["doc_len"])))
        return out

    def sums(self) -> dict[str, Counts]:
        """Every namespace's counts as its rows say (by namespace hash)."""
        out: dict[str, Counts] = {}
        for e in self._query_all(self.name, "", ["ns", "n_items", "n_docs", "total_len"]):
            out.setdefault(e["ns"], Counts()).add(_counts(e))
        return out

    def differences(self) -> int:
        """How many namespaces' rows disagree with a recount of their items."""
        want = {h(ns_key(ns)): c for ns, c in self.recount().items()}
        got = self.sums()
        return sum(got.get(k, Counts()) != want.get(k, Counts()) for k in {*want, *got})

    def _upsert(self, rows: list[dict[str, Any]]) -> None:
        for i in range(0, len(rows), _CHUNK):
            self.client.upsert(self.name, rows[i : i + _CHUNK])

    def rebuild(self) -> int:
        """Recount every namespace from its items and set its base row so that its rows sum
        to that count. Other handles' rows stay as they are (a handle still open goes on
        adding to its own row), so the sums are exact when no handle writes during the
        recount. How many base rows were written."""
        counts = {h(ns_key(ns)): (ns, c) for ns, c in self.recount().items()}
        others: dict[str, Counts] = {}
        like: dict[str, dict[str, Any]] = {}  # a row of each namespace (its partition fields)
        for e in self._query_all(self.name, "", [*_FIELDS, "root"]):
            like.setdefault(e["ns"], e)
            if e["writer"] != BASE:
                others.setdefault(e["ns"], Counts()).add(_counts(e))
        bases = []
        for key in {*counts, *others}:
            base = Counts()
            if key in counts:
                base.add(counts[key][1])
            base.add(others.get(key, Counts()), -1)
            if key in counts:
                bases.append(_row(counts[key][0], BASE, base, True))
            else:  # no items left: the base row cancels the other rows
                bases.append(_base_row(like[key], base))
        self._upsert(bases)
        return len(bases)

    def compact(self) -> int:
        """Fold the closed rows of each namespace into its base row; how many rows went."""
        closed = self._query_all(self.name, "closed == true", [*_FIELDS, "root"])
        by_ns: dict[str, list[dict[str, Any]]] = {}
        for e in closed:
            by_ns.setdefault(e["ns"], []).append(e)
        folded: list[str] = []
        bases: list[dict[str, Any]] = []
        for rows in by_ns.values():
            others = [e for e in rows if e["writer"] != BASE]
            if not others:
                continue
            total = Counts()
            for e in rows:
                total.add(_counts(e))
            bases.append(_base_row(rows[0], total))
            folded.extend(e["pk"] for e in others)
        self._upsert(bases)
        for i in range(0, len(folded), _CHUNK):
            self.client.delete(self.name, filter=in_expr("pk", folded[i : i + _CHUNK]))
        return len(folded)

    # ---------------------------------------------------------------- reads
    def scope(self, conn: Any, prefix: Sequence[str], rooted: bool) -> ScopeStats | None:
        """The sums of the namespaces under `prefix`, or None when they span more rows than
        one request returns (then the caller counts the items instead)."""
        expr, deep = self._rows_expr(prefix, rooted)
        got = conn.query(self.name, expr, ["ns", "ns_path", "n_items", "n_docs", "total_len"],
                         limit=MAX_ROWS)  # fmt: skip
        if len(got) >= MAX_ROWS:
            return None
        if deep:  # a prefix below the root: the root's rows, then those under the prefix
            want = h(ns_key(prefix))
            got = [e for e in got if want in e["ns_path"]]
        out = ScopeStats(sorted({e["ns"] for e in got}))
        for e in got:
            out.counts.add(_counts(e))
        return out

    @staticmethod
    def _rows_expr(prefix: Sequence[str], rooted: bool) -> tuple[str, bool]:
        """The rows' expression for a prefix, and whether the rows must still be narrowed to
        those under it (a prefix longer than the root: one partition key, then client-side)."""
        if len(prefix) >= ROOT_DEPTH:
            return f'root == "{ns_root(prefix)}"', len(prefix) > ROOT_DEPTH
        return ns_prefix_expr(prefix, False), False


def scope_expr(prefix: Sequence[str], stats: ScopeStats, rooted: bool) -> str:
    """The items' (and vectors') expression of the scope: the partition key alone for a
    user's prefix, else the namespaces the rows name (a path test above
    `MAX_SCOPE_NAMESPACES`)."""
    if not prefix:
        return ""
    root = f'root == "{ns_root(prefix)}"' if rooted and len(prefix) >= ROOT_DEPTH else ""
    if root and len(prefix) == ROOT_DEPTH:
        return root
    if len(stats.namespaces) > MAX_SCOPE_NAMESPACES:
        return ns_prefix_expr(prefix, rooted)
    names = in_expr("ns", stats.namespaces) if stats.namespaces else 'ns == ""'
    return f"({root}) and ({names})" if root else names
