"""Shared pieces of the HybridStore modules: row layout, time conversion, the search item."""

from __future__ import annotations

import functools
import json
import operator
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import repeat
from pathlib import Path
from typing import Any, NamedTuple, Protocol, cast

import numpy as np
from langgraph.store.base import Item, MatchCondition, PutOp, SearchItem

from langmem_plus.clock import Clock
from langmem_plus.errors import InvalidQueryError
from langmem_plus.store.db.database import NS_SEP, ns_key
from langmem_plus.store.filters import matches
from langmem_plus.store.keyword.bm25 import KeywordScope
from langmem_plus.text.timeparse import parse_iso
from langmem_plus.text.tokenize import QueryTerms

__all__ = [
    "CURRENT",
    "DEFAULT_SESSION_KEYS",
    "LIKE_MAX_DOCS",
    "MILVUS_SCHEMES",
    "NS_SEP",
    "ROW_COLS",
    "SCAN_CAP",
    "SESSION",
    "CandidateRow",
    "ComponentSource",
    "MemorySearchItem",
    "PlannedPut",
    "PostingRow",
    "PutMap",
    "RowFilter",
    "SearchBackend",
    "StorageBackend",
    "TextChanged",
    "TimeRange",
    "Validity",
    "VectorSearch",
    "as_epoch",
    "from_epoch",
    "in_range",
    "match_namespaces",
    "ns_key",
    "passes",
    "prior_columns",
    "rank_fields",
    "search_hit",
    "storage_target",
    "to_item",
    "utc",
]

SCAN_CAP = 20_000
LIKE_MAX_DOCS = 50_000

ROW_COLS = (
    "i.id, n.ns, i.key, i.value, i.created_at, i.updated_at, i.last_accessed, "
    "i.access_count, i.ttl_minutes, i.expires_at"
)


class ComponentSource(Protocol):
    """Where a search hit's score components are read from on first access (the ranker's
    arrays, store/ranking/explain.py): `components(k)` is the k-th candidate's."""

    def components(self, k: int) -> dict[str, Any]: ...


class MemorySearchItem(SearchItem):
    """A search hit: `score` is the final score, `components` explains it part by part.

    `explain` (the ranker's): the components' source and this hit's index in it; the
    `components` dict is then built on first read, since most callers never read it.
    """

    __slots__ = ("_components", "_explain", "_rowid", "access_count", "last_accessed")

    def __init__(
        self,
        *,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: datetime,
        updated_at: datetime,
        score: float | None = None,
        components: dict[str, Any] | None = None,
        access_count: int = 0,
        last_accessed: datetime | None = None,
        explain: tuple[ComponentSource, int] | None = None,
    ) -> None:
        super().__init__(namespace, key, value, created_at, updated_at, score)
        self._components: dict[str, Any] | None = None
        self._explain = explain
        if explain is None or components is not None:
            self._components, self._explain = components or {}, None
        self.access_count = access_count
        self.last_accessed = last_accessed

    @classmethod
    def hit(
        cls,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: datetime,
        updated_at: datetime,
        score: float,
        access_count: int,
        last_accessed: datetime | None,
        explain: tuple[ComponentSource, int],
    ) -> MemorySearchItem:
        """The item `__init__` makes of these (a tuple namespace, datetimes), with its slots
        set directly: a search page makes ten per query (tests/test_explain_lazy.py checks
        it against `__init__`, slot by slot)."""
        item = cls.__new__(cls)
        item.namespace = namespace
        item.key = key
        item.value = value
        item.created_at = created_at
        item.updated_at = updated_at
        item.score = score
        item._components = None
        item._explain = explain
        item.access_count = access_count
        item.last_accessed = last_accessed
        return item

    @property
    def components(self) -> dict[str, Any]:
        """Each part of the score by name (the fields of `store.scoring.ScoreParts`)."""
        got = self._components
        if got is None:
            src = self._explain
            got = self._components = src[0].components(src[1]) if src is not None else {}
            self._explain = None
        return got

    @components.setter
    def components(self, value: dict[str, Any]) -> None:
        self._components, self._explain = value, None


def from_epoch(x: float | None) -> datetime | None:
    """Epoch seconds as an aware UTC datetime (None stays None)."""
    return None if x is None else utc(x)


@functools.lru_cache(maxsize=1 << 14)
def utc(x: float) -> datetime:
    """`from_epoch` of a number, memoised: search hits' timestamps repeat (datetimes are
    immutable, so a shared one is safe)."""
    return datetime.fromtimestamp(x, tz=timezone.utc)


def as_epoch(x: datetime | float | int | str | None) -> float | None:
    """A datetime, ISO string or number as epoch seconds (naive times are UTC)."""
    if x is None:
        return None
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str):
        x = parse_iso(x)
    if x.tzinfo is None:
        x = x.replace(tzinfo=timezone.utc)
    return x.timestamp()


TimeRange = tuple[float | None, float | None]
"""(start, end) of when items were said (`CandidateRow.when`) in epoch seconds; None leaves
that end open."""


class CandidateRow(NamedTuple):
    """One item as search reads it; `namespace`, `key`, `value` are None in a light row."""

    id: int
    namespace: str | None
    key: str | None
    value: str | None  # the item's JSON
    created_at: float
    updated_at: float
    last_accessed: float | None
    access_count: int
    ttl_minutes: float | None
    expires_at: float | None
    confidence: float | None  # what the write path extracted from the value (rank_fields)
    category: str | None
    session: str | None
    # a langmem_plus record's columns (model/records.py record_columns), None for other items
    kind: str | None = None  # "episodic" or "semantic"
    slot: str | None = None  # a fact: what it is a value of
    said_at: float | None = None  # when it was said (`occurred_at`): recency, time ranges
    valid_from: float | None = None  # a fact: true from
    valid_to: float | None = None  # a fact: no longer true from (superseded)
    stale: bool = False  # an episode whose facts were all superseded, or that was corrected

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and self.expires_at < now

    @property
    def when(self) -> float:
        """When the item was said (a record's `occurred_at`), else when it was created."""
        return self.created_at if self.said_at is None else self.said_at


def prior_columns(
    rows: Sequence[CandidateRow], preferences: bool = True, now: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The score's inputs from the rows, as arrays: last used, access count, confidence
    (NULL -> NaN: "none given"), preference item (all False without `preferences`: the score
    reads it for a preference query only).

    Last used: for an item, its last access, else its last update. For a record that says
    when it was said (`said_at`), that time on the user's own timeline: its age is counted
    back from the newest record among the rows (never past `now`), not from the wall clock,
    so in an imported or long-idle history the newer of two statements still counts as newer
    (the value returned is shifted so that `now - last_used` is that age)."""
    n = len(rows)
    last = list(map(_LAST_ACCESSED, rows))
    if last.count(None) == n:  # never used (the usual case): the last update
        last_used = np.fromiter(map(_UPDATED_AT, rows), np.float64, n)
    else:
        last_used = np.array(
            [a if a is not None else r.updated_at for a, r in zip(last, rows, strict=True)],
            dtype=np.float64,
        )
    said = list(map(_SAID_AT, rows))
    if said.count(None) != n:
        known = [t for t in said if t is not None]
        shift = 0.0 if now is None else now - min(now, max(known))
        for j, t in enumerate(said):
            if t is not None:
                last_used[j] = t + shift
    conf = list(map(_CONFIDENCE, rows))
    if conf.count(None) == n:
        confidence = np.full(n, np.nan)
    else:
        confidence = np.array([c if c is not None else np.nan for c in conf], dtype=np.float64)
    return (
        last_used,
        np.fromiter(map(_ACCESS_COUNT, rows), np.float64, n),
        confidence,
        np.fromiter(map(operator.eq, map(_CATEGORY, rows), repeat("preference")), bool, n)
        if preferences
        else np.zeros(n, dtype=bool),
    )


_UPDATED_AT, _LAST_ACCESSED, _ACCESS_COUNT, _CONFIDENCE, _CATEGORY, SESSION, _SAID_AT = (
    operator.itemgetter(CandidateRow._fields.index(name))
    for name in (
        "updated_at",
        "last_accessed",
        "access_count",
        "confidence",
        "category",
        "session",
        "said_at",
    )
)


def in_range(row: CandidateRow, tr: TimeRange | None) -> bool:
    """Whether the item was said (a record's `occurred_at`, else its creation) within the time
    range (always, without one)."""
    if not tr:
        return True
    lo, hi = tr
    t = row.when
    return (lo is None or t >= lo) and (hi is None or t <= hi)


@functools.lru_cache(maxsize=4096)
def _namespace(ns: str) -> tuple[str, ...]:
    """A stored namespace as its tuple (memoised: a page's hits mostly share one)."""
    return tuple(ns.split(NS_SEP))


_SCAN = cast(Any, json.JSONDecoder()).scan_once


def _json(text: str) -> Any:
    """`json.loads` of a stored value: its C scanner called directly (a value is stored by
    `json.dumps`, so it is exactly one JSON document); anything else goes to `json.loads`."""
    try:
        got, end = _SCAN(text, 0)
    except (StopIteration, ValueError):
        return json.loads(text)
    return got if end == len(text) else json.loads(text)


def search_hit(row: CandidateRow, score: float, explain: tuple[Any, int]) -> Any:
    """The `MemorySearchItem` of a ranked full row (`to_item`'s, made directly)."""
    assert row.namespace is not None and row.key is not None and row.value is not None
    last = row.last_accessed
    item: Any = MemorySearchItem.hit(
        _namespace(row.namespace),
        row.key,
        _json(row.value),
        utc(row.created_at),
        utc(row.updated_at),
        score,
        int(row.access_count),
        None if last is None else utc(last),
        explain,
    )
    item._rowid = row.id if row.ttl_minutes is not None else None  # only TTL items refresh
    return item


def to_item(row: CandidateRow, cls: type = MemorySearchItem, **extra: Any) -> Any:
    """The `Item` (or `MemorySearchItem`, with `extra` such as score) of a full row."""
    assert row.namespace is not None and row.key is not None and row.value is not None
    kwargs: dict[str, Any] = dict(
        namespace=_namespace(row.namespace),
        key=row.key,
        value=json.loads(row.value),
        created_at=from_epoch(row.created_at),
        updated_at=from_epoch(row.updated_at),
    )
    if cls is Item:
        return Item(**kwargs)
    item: Any = MemorySearchItem(
        **kwargs,
        access_count=int(row.access_count),
        last_accessed=from_epoch(row.last_accessed),
        **extra,
    )
    item._rowid = row.id if row.ttl_minutes is not None else None  # only TTL items refresh
    return item


def match_namespaces(
    namespaces: Iterable[tuple[str, ...]],
    match_conditions: Sequence[MatchCondition] | None,
    max_depth: int | None,
) -> list[tuple[str, ...]]:
    """The namespaces that match every condition, truncated to `max_depth`, sorted and
    without duplicates (what `ListNamespacesOp` returns before offset and limit)."""
    namespaces = list(namespaces)
    if match_conditions:
        namespaces = [ns for ns in namespaces if all(_ns_match(c, ns) for c in match_conditions)]
    if max_depth is not None:
        return sorted({ns[:max_depth] for ns in namespaces})
    return sorted(set(namespaces))


def _ns_match(cond: MatchCondition, ns: tuple[str, ...]) -> bool:
    path = cond.path
    if len(ns) < len(path):
        return False
    pairs = (
        zip(ns, path, strict=False)
        if cond.match_type == "prefix"
        else zip(reversed(ns), reversed(path), strict=False)
    )
    if cond.match_type not in ("prefix", "suffix"):
        raise InvalidQueryError(f"unsupported match type: {cond.match_type}")
    return all(p == "*" or k == p for k, p in pairs)


class RowFilter:
    """A search filter split into what a row's columns answer and the rest, which needs the
    value. Column conditions: `category` equal to a string; `kind` equal to "episodic" or
    "semantic" (a record's kind); with such a `kind`, `slot` equal to a string. They give
    exactly the answers of `filters.matches` on the value, without reading it."""

    __slots__ = ("columns", "rest")

    def __init__(self, flt: Mapping[str, Any] | None) -> None:
        flt = dict(flt or {})
        cols: dict[str, str] = {}
        kind = flt.get("kind")
        if kind in ("episodic", "semantic"):
            cols["kind"] = kind
            if isinstance(flt.get("slot"), str):
                cols["slot"] = flt["slot"]
        if isinstance(flt.get("category"), str):
            cols["category"] = flt["category"]
        self.columns = cols
        self.rest = {k: v for k, v in flt.items() if k not in cols} or None

    @property
    def needs_value(self) -> bool:
        """Whether some condition reads the value (a full row)."""
        return self.rest is not None

    def __call__(self, row: CandidateRow) -> bool:
        for name, want in self.columns.items():
            if getattr(row, name) != want:
                return False
        return self.rest is None or matches(json.loads(row.value or "null"), self.rest)


def passes(
    row: CandidateRow,
    now: float,
    omit_expired: bool,
    flt: Mapping[str, Any] | RowFilter | None,
    tr: TimeRange | None,
    validity: Validity | None = None,
) -> bool:
    """Whether a row survives validity (current versions only, by default), expiry (when
    omitted), the time range and the filter (a full row when it reads the value)."""
    if not (validity or CURRENT).admits(row):
        return False
    if omit_expired and row.expired(now):
        return False
    if tr and not in_range(row, tr):
        return False
    if not flt:
        return True
    return (flt if isinstance(flt, RowFilter) else RowFilter(flt))(row)


@dataclass(frozen=True, slots=True)
class Validity:
    """Which versions a search shows. By default the current ones: a fact a later statement
    superseded (`valid_to` set) is left out. `history` shows every version (superseded facts
    ranked lower); `as_of` (epoch seconds) what was known and true then: said by then and not
    yet superseded. Items that are no langmem_plus records have no validity: always current."""

    history: bool = False
    as_of: float | None = None

    def admits(self, row: CandidateRow) -> bool:
        """Whether the row is shown."""
        if self.as_of is not None:
            start = row.valid_from if row.valid_from is not None else row.when
            return start <= self.as_of and (row.valid_to is None or self.as_of < row.valid_to)
        return self.history or row.valid_to is None

    def demoted(self, row: CandidateRow) -> bool:
        """Whether the row ranks lower, its `superseded` component 1: a superseded fact shown
        in history, or an episode whose facts were superseded or that a later turn corrected
        (not when looking back: then it was what the user said)."""
        return self.as_of is None and (row.stale or row.valid_to is not None)

    @property
    def default(self) -> bool:
        """Whether this is the default view (current versions)."""
        return not self.history and self.as_of is None


CURRENT = Validity()
"""The default view: current versions only."""


DEFAULT_SESSION_KEYS = ("session_id", "session", "thread_id", "conversation_id", "chat_id")
"""Value keys that name the session an item belongs to (`MemoryConfig.store.session_keys`)."""


class PlannedPut(Protocol):
    """One put as planned before the I/O: the op, its (path, text) pairs to embed (in the
    order of the batch's document vectors) and the text to index for keywords."""

    op: PutOp
    texts: list[tuple[str, str]]
    keyword_text: str
    unembedded: bool  # no vectors given: the stored item's must be kept (`TextChanged`)


class TextChanged(Exception):
    """A put planned `unembedded` would change the stored item's indexed text: the batch is
    embedded in full and written again (store-internal; never reaches a caller)."""


def rank_fields(
    value: Any, session_keys: Sequence[str] = DEFAULT_SESSION_KEYS
) -> tuple[float | None, str | None, str | None]:
    """(confidence, category, session) of an item value, as ranking reads them.

    Confidence: a number (not a boolean). Category: a string. Session: the first of
    `session_keys` (default: session_id, session, thread_id, conversation_id, chat_id) holding
    a non-empty string or an integer, as text (turns that name the same session are context
    for each other, store/ranking/neighbours.py).
    """
    if not isinstance(value, dict):
        return None, None, None
    conf = value.get("confidence")
    confidence = (
        float(conf) if isinstance(conf, (int, float)) and not isinstance(conf, bool) else None
    )
    cat = value.get("category")
    session = None
    for k in session_keys:
        v = value.get(k)
        if isinstance(v, bool) or not isinstance(v, (str, int)) or v == "":
            continue
        session = str(v)
        break
    return confidence, cat if isinstance(cat, str) else None, session


PostingRow = tuple[str, int, int, int, int, int]
"""(term, item id, tf, doc length, term id, df) of one term in one document."""


class VectorSearch(Protocol):
    """One query's vector side, started by `SearchBackend.vector_search`."""

    def hits(self) -> dict[int, float]:
        """item id -> best cosine of the top-k items (waits for the scan)."""
        ...

    def cosines(self, item_ids: Sequence[int]) -> dict[int, float]:
        """item id -> best cosine, for the given items that have vectors."""
        ...

    def cosines_with(self, item_ids: Sequence[int], qvec: np.ndarray) -> dict[int, float]:
        """`cosines` of the given items with another query vector (the same stored vectors)."""
        ...


class SearchBackend(Protocol):
    """What the `Ranker` reads; see the module docstring."""

    # ---------------------------------------------------------------- items
    def namespace_ids(self, conn: Any, prefix: Sequence[str]) -> list[int]: ...

    def read_item(self, conn: Any, namespace: Sequence[str], key: str) -> CandidateRow | None: ...

    def rows(self, conn: Any, ids: Iterable[int], full: bool = True) -> dict[int, CandidateRow]: ...

    def light_rows(
        self, conn: Any, ns_ids: Sequence[int], ids: Iterable[int]
    ) -> dict[int, CandidateRow]: ...

    def scan(
        self,
        conn: Any,
        ns_ids: Sequence[int],
        keep: Callable[[CandidateRow], bool],
        stop: int | None,
        flt: Mapping[str, Any] | None = None,
    ) -> list[CandidateRow]:
        """Rows in insertion order that `keep` accepts, up to `stop`; `flt` is the search
        filter `keep` applies, which a backend may also run itself to read fewer rows."""
        ...

    def substring_candidates(
        self, conn: Any, ns_ids: Sequence[int], word: str, k: int
    ) -> list[tuple[int, str]]: ...

    def adjacent(self, conn: Any, ids: Iterable[int]) -> dict[int, list[int]]:
        """item id -> the items written just before and after it in its namespace."""
        ...

    def list_namespaces(
        self,
        conn: Any,
        now: float | None,
        match_conditions: Sequence[MatchCondition] | None,
        max_depth: int | None,
    ) -> list[tuple[str, ...]]: ...

    # ---------------------------------------------------------------- keyword
    def query_scope(self) -> AbstractContextManager[None]: ...

    def keyword_search(
        self,
        conn: Any,
        ns_ids: Sequence[int],
        q: QueryTerms,
        k: int,
        extra_candidates: Iterable[int] | Callable[[], Iterable[int]] = (),
        weights: Mapping[str, float] | None = None,
    ) -> dict[int, float]: ...

    def keyword_score(
        self,
        conn: Any,
        ns_ids: Sequence[int],
        q: QueryTerms,
        items: Iterable[int],
        weights: Mapping[str, float] | None = None,
    ) -> dict[int, float]: ...

    def keyword_docs(self, conn: Any, ns_ids: Sequence[int]) -> int: ...

    def keyword_scope(
        self,
        conn: Any,
        ns_ids: Sequence[int],
        q: QueryTerms,
        weights: Mapping[str, float] | None = None,
    ) -> KeywordScope:
        """The query's scope as stored: its documents and how many of them hold each term
        found (store/keyword/bm25.py `KeywordScope`). The keyword statistics (the query's IDF
        mass, the terms the scope holds, its common words) are computed from it once, for
        every backend (`bm25.query_mass`, `held_terms`, `term_counts`). `weights` (the query's
        keyword weights) change no count; a backend may use them to share the query's
        prepared statistics with its keyword search."""
        ...

    def doc_terms(self, conn: Any, item_ids: Sequence[int]) -> Iterable[PostingRow]: ...

    # ---------------------------------------------------------------- vector
    @property
    def has_vectors(self) -> bool: ...

    def vector_search(
        self, conn: Any, ns_ids: Sequence[int], qvec: np.ndarray, k: int
    ) -> VectorSearch: ...


MILVUS_SCHEMES = ("milvus://", "http://", "https://", "tcp://")
"""URI prefixes that name a Milvus server; a path ending in `.milvus.db` names Milvus Lite."""


PutMap = Mapping[tuple[tuple[str, ...], str], PlannedPut]
"""A batch's puts by (namespace, key), last put of a key wins (a value of None deletes)."""


def storage_target(path: str | os.PathLike[str] | None) -> str | None:
    """The Milvus URI a store path names, or None for SQLite.

    `milvus://host:19530` is `http://host:19530` (what pymilvus connects to); `http(s)://` and
    `tcp://` URIs are kept; a local path ending in `.milvus.db` is a Milvus Lite file.
    """
    if path is None:
        return None
    text = os.fspath(path)
    low = text.lower()
    if low.startswith("milvus://"):
        return "http://" + text[len("milvus://") :]
    if low.startswith(MILVUS_SCHEMES):
        return text
    if low.endswith(".milvus.db"):
        return str(Path(text))
    return None


class StorageBackend(Protocol):
    """A store's storage: sessions, writes and maintenance (see the module docstring)."""

    read_only: bool
    where: str  # the storage's location, for messages ("memories.db", "milvus://...")

    @property
    def search(self) -> SearchBackend:
        """What the ranker reads."""
        ...

    # ---------------------------------------------------------------- sessions
    def batch_lock(self) -> AbstractContextManager[Any]:
        """Held for one batch: its reads and its writes run without another batch between."""
        ...

    def read(self) -> AbstractContextManager[Any]:
        """A read session (one snapshot for the batch's reads); yields what the reads take."""
        ...

    def write(self) -> AbstractContextManager[Any]:
        """A write session (one transaction where the storage has them)."""
        ...

    def before_reads(self, conn: Any) -> None:
        """Bring derived indexes up to date before a batch's reads."""
        ...

    # ---------------------------------------------------------------- writes
    def apply_puts(self, conn: Any, puts: PutMap, doc_vecs: np.ndarray | None, now: float) -> None:
        """Write the puts (a value of None deletes); `doc_vecs` has one row per (path, text)
        of the puts, in their order."""
        ...

    def after_puts(self) -> None:
        """Bring derived indexes up to date after a batch's puts."""
        ...

    def refresh_ttl(self, conn: Any, item_ids: Sequence[int], now: float) -> None:
        """Restart the TTL of the items read (ids as the batch's reads gave them)."""
        ...

    def mark_used(self, namespace: Sequence[str], keys: Sequence[str], ts: float | None) -> int:
        """Add 1 to `access_count` and set `last_accessed` of these items; how many exist."""
        ...

    # ---------------------------------------------------------------- maintenance
    def expired(self, now: float) -> list[tuple[tuple[str, ...], str]]: ...

    def reindex(
        self, *, vectors: bool = True, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, int]: ...

    def stats(self) -> dict[str, Any]: ...

    def count(self, prefix: Sequence[str], exact: bool) -> int: ...

    def keys(self, prefix: Sequence[str], exact: bool) -> list[tuple[tuple[str, ...], str]]: ...

    def locate(self, key: str, prefix: Sequence[str]) -> list[tuple[str, ...]]: ...

    def followers(self, namespace: Sequence[str], keys: Sequence[str]) -> dict[str, list[str]]:
        """Each of `keys` -> the keys of the episodes in `namespace` (exactly) whose
        `metadata.follows` names it among its first `FOLLOWS_INDEXED` keys (store/ranking/
        versions.py), in insertion order: an index lookup, no scan of the namespace."""
        ...

    def restore_item_stats(
        self, rows: Sequence[tuple[str, str, float | None, float | None, float | None, int]]
    ) -> int: ...

    def db_bytes(self) -> int: ...

    def vacuum(self) -> int: ...

    def check(self) -> dict[str, Any]: ...

    def backfill_vectors(self) -> int: ...

    def conversation_log(self, clock: Clock) -> Any:
        """The conversation log kept beside the items (turns, summaries, profiles)."""
        ...

    def close(self) -> None: ...
