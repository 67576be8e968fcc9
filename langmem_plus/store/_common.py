"""Shared pieces of the HybridStore modules: row layout, time conversion, the search item."""

from __future__ import annotations

import functools
from datetime import datetime, timezone
from typing import Any, Protocol

from langgraph.store.base import SearchItem

from langmem_plus.store.sqlite import NS_SEP, ns_key
from langmem_plus.text.timeparse import parse_iso

__all__ = [
    "LIKE_MAX_DOCS",
    "NS_SEP",
    "ROW_COLS",
    "SCAN_CAP",
    "ComponentSource",
    "MemorySearchItem",
    "as_epoch",
    "from_epoch",
    "ns_key",
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
    arrays, store/explain.py): `components(k)` is the k-th candidate's."""

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

    def dict(self) -> dict:
        out = super().dict()
        out["components"] = self.components
        return out


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
