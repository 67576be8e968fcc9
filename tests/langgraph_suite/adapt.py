"""How LangGraph's store test files build the store under test: HybridStore in their place.

`InMemoryStore(index=...)` and `SqliteStore.from_conn_string(conn, index=...)` (and
`AsyncSqliteStore`, whose `async with` HybridStore's opener supports) become HybridStores with
the same `index` (no index: no vectors, as in LangGraph). LangGraph's tests read
`SearchItem.score` as the query's similarity, so the store runs with the score weighing the
text relevance only (the spec's priors, category, recency, use and confidence, set to 0): a
supported configuration, documented in docs/concepts.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langmem_plus.config import MemoryConfig
from langmem_plus.store import HybridStore
from langmem_plus.store.conventions import StoreOpener

RELEVANCE_ONLY = MemoryConfig(
    score={"w_keyword": 1.0, "w_category": 0, "w_recency": 0, "w_frequency": 0, "w_confidence": 0}
)


def _index(index: Any) -> Any:
    """LangGraph's index config for HybridStore, passed as it is (`distance_type` "cosine"
    included); none means no vectors, as in LangGraph."""
    return index or False


class HybridInMemoryStore(HybridStore):
    """An in-memory HybridStore built with InMemoryStore's arguments."""

    def __init__(self, *, index: Any = None, ttl: Any = None) -> None:
        super().__init__(None, index=_index(index), config=RELEVANCE_ONLY, ttl=ttl)


class HybridSqliteStore(HybridStore):
    """A HybridStore opened with SqliteStore's `from_conn_string` arguments."""

    @classmethod
    def from_conn_string(  # type: ignore[override]
        cls, conn_string: str | Path, *, index: Any = None, ttl: Any = None, **_: Any
    ) -> StoreOpener[HybridStore]:
        return HybridStore.from_conn_string(
            conn_string, index=_index(index), config=RELEVANCE_ONLY, ttl=ttl
        )
