"""The relevance judgement over the Milvus backend (Milvus Lite): the names a query mentions are
looked up in the scope as on SQLite, with this project's BM25 statistics and with Milvus's own
(a scope above `store.milvus_client_bm25_max_docs`), and the judged scale matches SQLite's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from milvus_fixtures import LiteFile, requires_lite
from test_relevance_judgement import DOCS, QUERIES, LettersAsUse

from langmem_plus import HybridStore
from langmem_plus.clock import ManualClock
from langmem_plus.store.tuning import StoreTuning

pytestmark = requires_lite
T0 = 1_700_000_000.0


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory) -> LiteFile:
    return LiteFile(tmp_path_factory.mktemp("milvus_judgement"))


def _fill(store: HybridStore) -> None:
    for i, text in enumerate(DOCS):
        store.put(("t",), f"k{i}", {"text": text})


@pytest.fixture
def sqlite() -> Iterator[HybridStore]:
    with HybridStore(index={"dims": 26, "embed": LettersAsUse()}, clock=ManualClock(T0)) as s:
        _fill(s)
        yield s


@pytest.mark.parametrize("client_bm25_max_docs", [16_383, 0])
def test_the_judgement_reads_the_same_names_and_scales_as_on_sqlite(
    lite: LiteFile, sqlite: HybridStore, client_bm25_max_docs: int
) -> None:
    cfg = StoreTuning(milvus_client_bm25_max_docs=client_bm25_max_docs)
    milvus = lite.open(
        index={"dims": 26, "embed": LettersAsUse()}, tuning=cfg, clock=ManualClock(T0)
    )
    try:
        _fill(milvus)
        assert milvus.relevance_judgement == sqlite.relevance_judgement
        for query in QUERIES:
            want = sqlite.search(("t",), query=query, limit=3)
            got = milvus.search(("t",), query=query, limit=3)
            a, b = got[0].components, want[0].components
            assert a["unseen_names"] == b["unseen_names"], query
            if client_bm25_max_docs:  # the same BM25: the same scale (vectors: float32 vs int8)
                assert [h.key for h in got] == [h.key for h in want], query
                assert a["query_evidence"] == pytest.approx(b["query_evidence"], abs=0.02)
        oskar = milvus.search(("t",), query="What did Oskar say about the race?")[0]
        assert oskar.components["unseen_names"] == 1.0
    finally:
        milvus.close()
