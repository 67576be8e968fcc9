"""What one `batch` will do, decided before any I/O: the ops, the texts to embed, the queries.

`HybridStore._plan` builds a `Plan` (pure: validation and text extraction only), the
embeddings are computed for it, then the store runs it in one read and one write
transaction. `MemorySearchOp` is the store's own search op: LangGraph's `SearchOp` plus
`current_topic` and `time_range`, so that searches with extras take the same path.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from langgraph.store.base import Op, PutOp, SearchOp

from langmem_plus.errors import InvalidQueryError
from langmem_plus.store.seams import CURRENT, TimeRange, Validity, as_epoch

__all__ = [
    "DocumentVectors",
    "MemorySearchOp",
    "Plan",
    "PutPlan",
    "merge_plans",
    "time_range_of",
]


class DocumentVectors(NamedTuple):
    """The vectors a put of a value stores (`HybridStore.document_vectors`): one row per
    indexed text, with the texts they embed, so that a write reuses them only for those."""

    texts: tuple[str, ...]
    vectors: Any  # np.ndarray, float32, one row per text


@dataclass
class PutPlan:
    """One put (or delete, when `op.value` is None) and the texts it indexes."""

    op: PutOp
    texts: list[tuple[str, str]] = field(default_factory=list)  # (path, text) to embed
    keyword_text: str = ""
    # not embedded: the caller holds the stored item's indexed text unchanged, so the writer
    # keeps its vectors (and raises `TextChanged` should the stored text differ after all)
    unembedded: bool = False
    # given by the caller (`HybridStore.write_with(vectors=...)`): one row per text, not
    # embedded again
    vectors: Any = None


@dataclass
class Plan:
    """The ops of a batch in order, its puts by (namespace, key), its distinct queries."""

    ops: list[Op]
    puts: dict[tuple[tuple[str, ...], str], PutPlan]
    queries: list[str]


def merge_plans(plans: Sequence[Plan]) -> Plan:
    """One plan running several plans' ops in order (a later put of the same key wins)."""
    if len(plans) == 1:
        return plans[0]
    ops: list[Op] = []
    puts: dict[tuple[tuple[str, ...], str], PutPlan] = {}
    queries: list[str] = []
    for p in plans:
        ops.extend(p.ops)
        puts.update(p.puts)
        queries.extend(p.queries)
    return Plan(ops=ops, puts=puts, queries=list(dict.fromkeys(queries)))


def time_range_of(time_range: Any) -> TimeRange | None:
    """`search(time_range=...)` as epoch seconds; bad input raises `InvalidQueryError`."""
    if time_range is None:
        return None
    if not isinstance(time_range, (tuple, list)) or len(time_range) != 2:
        raise InvalidQueryError("time_range must be a (start, end) pair; use None for open ends")
    try:
        tr = (as_epoch(time_range[0]), as_epoch(time_range[1]))
    except (TypeError, ValueError) as exc:
        raise InvalidQueryError(
            f"time_range bounds must be datetimes, epoch seconds or ISO strings: {exc}"
        ) from None
    if tr[0] is not None and tr[1] is not None and tr[0] > tr[1]:
        raise InvalidQueryError("time_range start is after its end")
    return tr


class MemorySearchOp(SearchOp):
    """A `SearchOp` with HybridStore's extras: `current_topic` (items on it get the topic
    boost), `time_range` (bounds of when items were said, epoch seconds) and the versions
    shown (`validity`: current ones unless `include_superseded` or `as_of`); `query_vector`:
    the dense side's vector when the caller already holds one (the query text is then not
    embedded; its keyword side is unchanged). Runs through `batch`; a plain `SearchOp` shows
    the current versions."""

    current_topic: str | None
    time_range: TimeRange | None
    validity: Validity
    query_vector: Any

    def __new__(
        cls,
        namespace_prefix: tuple[str, ...],
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        query: str | None = None,
        refresh_ttl: bool = True,
        *,
        current_topic: str | None = None,
        time_range: Any = None,
        include_superseded: bool = False,
        as_of: Any = None,
        query_vector: Any = None,
    ) -> MemorySearchOp:
        self = super().__new__(cls, namespace_prefix, filter, limit, offset, query, refresh_ttl)
        self.current_topic = current_topic
        self.time_range = time_range_of(time_range)
        self.validity = validity_of(include_superseded, as_of)
        self.query_vector = query_vector
        return self


def validity_of(include_superseded: Any, as_of: Any) -> Validity:
    """The versions a search shows; bad input raises `InvalidQueryError`."""
    if not isinstance(include_superseded, bool):
        raise InvalidQueryError("include_superseded must be True or False")
    if as_of is None:
        return Validity(history=True) if include_superseded else CURRENT
    if isinstance(as_of, bool):
        raise InvalidQueryError("as_of must be a datetime, epoch seconds or an ISO string")
    try:
        at = as_epoch(as_of)
    except (TypeError, ValueError, AttributeError) as exc:
        raise InvalidQueryError(
            f"as_of must be a datetime, epoch seconds or an ISO string: {exc}"
        ) from None
    if at is None or not math.isfinite(at):
        raise InvalidQueryError("as_of must be a finite time")
    return Validity(history=include_superseded, as_of=at)
