"""The BaseStore conformance suite (`langmem_plus.testing`) against LangGraph's stores and ours.

Where the backends differ, the difference is a declared `known_gaps` entry (a strict xfail),
and docs/concepts.md ("Differences from LangGraph's stores") says the same.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from conftest import HashEmbeddings
from langgraph.store.base import BaseStore, Item, SearchOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langmem_plus import HybridStore
from langmem_plus.testing import GAPS, BaseStoreConformance


def _index() -> dict:
    emb = HashEmbeddings()
    return {"dims": emb.dims, "embed": emb, "fields": ["text"]}


class TestInMemoryStore(BaseStoreConformance):
    known_gaps = frozenset(
        {
            "filter_dotted_key",
            "filter_in",
            "filter_comparison_mixed_types",
            "filter_unknown_operator_refused",
            "update_keeps_created_at",
            "list_namespaces_drops_empty",
        }
    )

    @pytest.fixture
    def store(self) -> Iterator[BaseStore]:
        yield InMemoryStore(index=_index())  # type: ignore[arg-type]

    def age(self, store: BaseStore, namespace: tuple[str, ...], key: str, seconds: float) -> None:
        data = store._data  # type: ignore[attr-defined]
        old: Item = data[namespace][key]
        back = timedelta(seconds=seconds)
        data[namespace][key] = Item(
            value=old.value,
            key=key,
            namespace=namespace,
            created_at=old.created_at - back,
            updated_at=old.updated_at - back,
        )


class TestSqliteStore(BaseStoreConformance):
    # without sqlite-vec (this Python's sqlite3 cannot load extensions) it has no vector index:
    # a query is ignored and every hit's score is None
    ranks_queries = False
    known_gaps = frozenset(
        {
            "filter_nested_dict",
            "filter_in",
            "filter_comparison_mixed_types",
            "update_keeps_created_at",
            "async",
        }
    )

    @pytest.fixture
    def store(self) -> Iterator[BaseStore]:
        with SqliteStore.from_conn_string(":memory:") as s:
            s.setup()
            yield s

    def expire(self, store: BaseStore, namespace: tuple[str, ...], key: str) -> None:
        conn: sqlite3.Connection = store.conn  # type: ignore[attr-defined]
        conn.execute(
            "UPDATE store SET expires_at = datetime('now', '-1 hour') WHERE prefix=? AND key=?",
            (".".join(namespace), key),
        )

    def age(self, store: BaseStore, namespace: tuple[str, ...], key: str, seconds: float) -> None:
        store.conn.execute(  # type: ignore[attr-defined]
            "UPDATE store SET created_at = datetime(created_at, ?), "
            "updated_at = datetime(updated_at, ?) WHERE prefix=? AND key=?",
            (f"-{seconds} seconds", f"-{seconds} seconds", ".".join(namespace), key),
        )


class TestHybridStore(BaseStoreConformance):
    @pytest.fixture
    def store(self) -> Iterator[BaseStore]:
        with HybridStore(index=_index()) as s:
            yield s

    def expire(self, store: BaseStore, namespace: tuple[str, ...], key: str) -> None:
        hybrid: HybridStore = store  # type: ignore[assignment]
        with hybrid.db.write() as conn:
            conn.execute(
                "UPDATE items SET expires_at=? WHERE key=? AND ns_id="
                "(SELECT id FROM namespaces WHERE ns=?)",
                (time.time() - 3600, key, ".".join(namespace)),
            )

    def age(self, store: BaseStore, namespace: tuple[str, ...], key: str, seconds: float) -> None:
        hybrid: HybridStore = store  # type: ignore[assignment]
        with hybrid.db.write() as conn:
            conn.execute(
                "UPDATE items SET created_at=created_at-?, updated_at=updated_at-? WHERE key=? "
                "AND ns_id=(SELECT id FROM namespaces WHERE ns=?)",
                (seconds, seconds, key, ".".join(namespace)),
            )


class TestHybridStoreKeywordOnly(TestHybridStore):
    """`index=False`: no vectors; queries rank by BM25 alone."""

    @pytest.fixture
    def store(self) -> Iterator[BaseStore]:
        with HybridStore(index=False) as s:
            yield s


class TestHybridStoreOmitExpired(TestHybridStore):
    """`ttl={"omit_expired": True}` (LangGraph's TTLConfig key) hides expired items at once."""

    omits_expired = True

    @pytest.fixture
    def store(self) -> Iterator[BaseStore]:
        with HybridStore(index=False, ttl={"omit_expired": True}) as s:
            yield s


def test_gap_names_are_checked(request: pytest.FixtureRequest) -> None:
    class Typo(BaseStoreConformance):
        known_gaps = frozenset({"filter_dotted"})

    with pytest.raises(ValueError, match="unknown conformance gap"):
        Typo()._gap(request, "filter_dotted")
    assert set(GAPS) >= TestInMemoryStore.known_gaps | TestSqliteStore.known_gaps


class _FilterDroppingStore(InMemoryStore):
    """A store with the bug the suite must catch: a query makes it ignore the filter."""

    def batch(self, ops: Any) -> list[Any]:
        ops = [
            SearchOp(op.namespace_prefix, None, op.limit, op.offset, op.query)
            if isinstance(op, SearchOp) and op.query
            else op
            for op in ops
        ]
        return super().batch(ops)


def test_the_suite_catches_a_filter_dropped_by_a_query(request: pytest.FixtureRequest) -> None:
    suite = BaseStoreConformance()
    suite.test_filter_holds_with_a_query(InMemoryStore(), request)  # the real one passes
    with pytest.raises(AssertionError):
        suite.test_filter_holds_with_a_query(_FilterDroppingStore(), request)
