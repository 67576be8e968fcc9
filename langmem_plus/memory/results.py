"""What `Memory` returns: search hits, pages of memories, mem0-shaped dicts and report data."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict
from datetime import datetime
from typing import Any, SupportsIndex, overload

from pydantic import BaseModel, Field, computed_field

from langmem_plus.episodic.validity import Replacement
from langmem_plus.errors import ValidationError
from langmem_plus.memory.checks import record_of
from langmem_plus.memory.scopes import mem0_dict
from langmem_plus.model.records import MemoryRecord

__all__ = [
    "MAX_LIMIT",
    "AddResult",
    "Mem0Record",
    "MemoryPage",
    "SearchHit",
    "SearchResults",
    "TimeRangeArg",
    "as_mem0",
    "as_plain",
]

MAX_LIMIT = 1000
TimeRangeArg = (
    str | tuple[Any, Any] | list[Any] | Mapping[str, Any] | None
)  # phrase, "auto", (start, end) or {"start": ..., "end": ...}


class SearchHit(BaseModel):
    """One search result: the memory, its final score and each component of that score."""

    id: str
    text: str
    score: float
    components: dict[str, Any] = Field(default_factory=dict)
    memory: MemoryRecord
    superseded_since: datetime | None = Field(
        None, description="it states a value a later statement replaced: since when"
    )
    now: str | None = Field(None, description="the current value that replaced it")

    @classmethod
    def of(cls, item: Any, replaced: Replacement | None = None) -> SearchHit:
        """The hit of one store search result (its score and score components kept);
        `replaced`: what replaced the value it states, when it is stale."""
        rec = record_of(item)
        return cls(
            id=item.key,
            text=rec.text,
            score=float(item.score or 0.0),
            components=dict(getattr(item, "components", {}) or {}),
            memory=rec,
            superseded_since=None if replaced is None else replaced.since,
            now=None if replaced is None else replaced.now,
        )

    def to_dict(self) -> dict[str, Any]:
        """This hit in mem0's shape: id, memory (the text), score, metadata, scopes, times."""
        return mem0_dict(self.memory, self.score)

    def __getitem__(self, key: str) -> Any:
        """mem0-style reading: ``hit["memory"]`` is the text, ``hit["id"]``, ``hit["score"]``."""
        return self.to_dict()[key]

    def get(self, key: str, default: Any = None) -> Any:
        """Like ``dict.get`` on `to_dict()`."""
        return self.to_dict().get(key, default)


class SearchResults(list[SearchHit]):
    """`Memory.search`'s hits, best first: a list, that also reads as mem0 2.x's answer
    (``results["results"]`` is the list of mem0 dicts)."""

    @overload
    def __getitem__(self, key: SupportsIndex) -> SearchHit: ...
    @overload
    def __getitem__(self, key: slice) -> list[SearchHit]: ...
    @overload
    def __getitem__(self, key: str) -> list[dict[str, Any]]: ...
    def __getitem__(self, key: Any) -> Any:
        """An index or slice as on a list; ``"results"``: the hits as mem0's dicts."""
        if isinstance(key, str):
            if key != "results":
                raise KeyError(key)
            return [hit.to_dict() for hit in self]
        return super().__getitem__(key)


class Mem0Record(MemoryRecord):
    """A `MemoryRecord` as `Memory.get` returns it: it also reads as mem0's dict
    (``record["memory"]`` is the text, ``record["metadata"]``, ``record["user_id"]``)."""

    @classmethod
    def of(cls, rec: MemoryRecord) -> Mem0Record:
        """The same record, readable both ways (no copy of its fields is validated again)."""
        return cls.model_construct(_fields_set=rec.model_fields_set, **dict(rec))

    def __getitem__(self, key: str) -> Any:
        """mem0-style reading of `mem0_dict(self)`."""
        return mem0_dict(self)[key]

    def get(self, key: str, default: Any = None) -> Any:
        """Like ``dict.get`` on the mem0 dict."""
        return mem0_dict(self).get(key, default)


class AddResult(list[str]):
    """The ids `Memory.add` created or changed, in order: a list of ids, that also reads as
    mem0's answer (``result["results"]``: ``[{"id", "memory", "event"}]``; the event is
    ``UPDATE`` for a memory that was changed, e.g. a fact this call closed, ``ADD`` for the
    others). The dicts are read from the store when first asked for."""

    def __init__(
        self,
        ids: Iterable[str] = (),
        lookup: Callable[[str], MemoryRecord | None] | None = None,
    ) -> None:
        super().__init__(ids)
        self._lookup = lookup

    @overload
    def __getitem__(self, key: SupportsIndex) -> str: ...
    @overload
    def __getitem__(self, key: slice) -> list[str]: ...
    @overload
    def __getitem__(self, key: str) -> list[dict[str, Any]]: ...
    def __getitem__(self, key: Any) -> Any:
        """An index or slice as on a list; ``"results"``: mem0's event dicts."""
        if isinstance(key, str):
            if key != "results":
                raise KeyError(key)
            return [self._event(i) for i in self]
        return super().__getitem__(key)

    def _event(self, mid: str) -> dict[str, Any]:
        rec = self._lookup(mid) if self._lookup is not None else None
        if rec is None:
            return {"id": mid, "memory": None, "event": "DELETE"}
        changed = rec.valid_to is not None or rec.superseded_by or rec.metadata.get("updates")
        return {"id": mid, "memory": rec.text, "event": "UPDATE" if changed else "ADD"}


class MemoryPage(BaseModel):
    """One page of a user's memories, oldest first, with the total for paging."""

    items: list[MemoryRecord]
    total: int
    limit: int
    offset: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def next_offset(self) -> int | None:
        """Offset of the next page, or None on the last one."""
        nxt = self.offset + len(self.items)
        return nxt if nxt < self.total else None

    def __getitem__(self, key: str) -> Any:
        """mem0-style reading: ``page["results"]`` is the list of memory dicts."""
        if key != "results":
            raise KeyError(key)
        return [mem0_dict(r) for r in self.items]


def as_mem0(result: Any) -> Any:
    """A `Memory` result in mem0's shape: hits, records and pages as ``{"results": [...]}``
    of dicts, one record as a dict, add's ids as ``{"results": [{"id": ...}]}``."""
    if isinstance(result, MemoryRecord):
        return mem0_dict(result)
    if isinstance(result, SearchHit):
        return result.to_dict()
    if isinstance(result, MemoryPage | SearchResults | AddResult):
        return {"results": result["results"]}
    if isinstance(result, (list, tuple)):
        out = []
        for r in result:
            if isinstance(r, str):
                out.append({"id": r})
            elif isinstance(r, (MemoryRecord, SearchHit)):
                out.append(as_mem0(r))
            else:
                raise ValidationError(f"cannot show {type(r).__name__} in mem0's shape")
        return {"results": out}
    raise ValidationError(f"cannot show {type(result).__name__} in mem0's shape")


def as_plain(report: Any) -> Any:
    """A report as plain data: a model or dataclass as a dict, anything else as it is."""
    if isinstance(report, BaseModel):
        return report.model_dump(mode="json")
    if hasattr(report, "__dataclass_fields__"):
        return asdict(report)
    if isinstance(report, Mapping):
        return dict(report)
    return report
