"""The Ranker's seam and the store's search op: searches with extras go through `batch`, the
ranker reads storage only through its `SearchBackend`, rows are typed."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import numpy as np
import pytest
from conftest import HashEmbeddings

from langmem_plus import HybridStore
from langmem_plus.errors import InvalidQueryError
from langmem_plus.store.db.database import in_chunks
from langmem_plus.store.plan import MemorySearchOp
from langmem_plus.store.ranking.ranker import Ranker, RankQuery
from langmem_plus.store.seams import CandidateRow
from langmem_plus.store.sqlite.rows import read_rows

EMB = HashEmbeddings(16)
INDEX = {"dims": 16, "embed": EMB, "fields": ["text"]}
TEXTS = [
    "alpha beta gamma",
    "beta gamma delta",
    "the cat sat on the mat",
    "gamma ray burst",
    "alpha and omega",
    "delta airlines flight",
]


def _store(tmp_path: Any) -> HybridStore:
    store = HybridStore(tmp_path / "r.db", index=INDEX)
    for i, t in enumerate(TEXTS):
        store.put(("u",), f"k{i}", {"text": t, "session_id": "s1" if i < 3 else None})
    day = 86400.0
    store.restore_item_stats(
        [
            (("u",), f"k{i}", datetime.fromtimestamp(i * day, timezone.utc), _utc(i), None, 0)
            for i in range(len(TEXTS))
        ]
    )
    return store


def _utc(i: int) -> datetime:
    return datetime.fromtimestamp(i * 86400.0, timezone.utc)


def test_memory_search_op_runs_through_batch_like_search(tmp_path) -> None:
    store = _store(tmp_path)
    tr = (_utc(1), _utc(3))
    op = MemorySearchOp(("u",), query="gamma", current_topic="ray", time_range=tr)
    (got,) = store.batch([op])
    want = store.search(("u",), query="gamma", current_topic="ray", time_range=tr)
    keys = [h.key for h in got]
    assert keys == [h.key for h in want]
    # within the range: k1..k3; k2 has no "gamma" and comes as k1's session neighbour
    assert keys == ["k3", "k1", "k2"]
    assert got[0].components["topic_boost"] > 1.0  # "ray": the topic boost applied
    # without a query: a scan in insertion order, within the time range
    (scan,) = store.batch([MemorySearchOp(("u",), time_range=(_utc(2), None))])
    assert [h.key for h in scan] == ["k2", "k3", "k4", "k5"]
    store.close()


@pytest.mark.parametrize("bad", [(1.0,), (5.0, 1.0), ("not a date", None), "2024-01-01"], ids=str)
def test_memory_search_op_refuses_a_bad_time_range(bad) -> None:
    with pytest.raises(InvalidQueryError):
        MemorySearchOp(("u",), query="x", time_range=bad)


class _Recording:
    """A backend that delegates to another and records which methods the ranker called."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.called: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        self.called.add(name)
        return getattr(self.inner, name)


def test_ranker_reads_storage_only_through_its_backend(tmp_path) -> None:
    store = _store(tmp_path)
    rec = _Recording(store._backend)
    ranker = Ranker(store.config, store.tuning, rec, store._keyword_text, store._omit_expired)
    ranker.term_vectors = store._ranker.term_vectors  # the store's word vectors (not storage)
    q = np.asarray(EMB.embed_query("gamma delta"), np.float32)
    with store._db.read() as conn:
        rq = RankQuery(store._ns_ids(conn, ("u",)), "gamma delta", q, None, 3, 0, 1e9)
        mine = ranker.rank(conn, rq)
        theirs = store._ranker.rank(conn, rq)
    assert [(h.key, h.score, h.components) for h in mine] == [
        (h.key, h.score, h.components) for h in theirs
    ]
    assert len(mine) == 3
    assert {"keyword_search", "vector_search", "light_rows", "rows", "keyword_scope"} <= rec.called
    store.close()


def test_candidate_rows_are_typed_and_light_rows_leave_the_value_out(tmp_path) -> None:
    store = _store(tmp_path)
    with store._db.read() as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM items ORDER BY id")]
        full = read_rows(conn, ids[:2])
        light = read_rows(conn, ids[:2], full=False)
    row = full[ids[0]]
    assert isinstance(row, CandidateRow)
    assert (row.namespace, row.key, row.session) == ("u", "k0", "s1")
    assert light[ids[0]].value is None and light[ids[0]].created_at == row.created_at
    assert light[ids[1]]._replace(namespace="u", key="k1", value=full[ids[1]].value) == full[ids[1]]
    store.close()


def test_chunks_split_in_order_without_loss() -> None:
    assert [p for p, _ in in_chunks(list(range(7)), 3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(in_chunks([])) == []
