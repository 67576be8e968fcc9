"""The Milvus backend's keyword side scores with this project's BM25 (store/milvus/keyword.py): the
same items, the same query give the same BM25 values and the same ranking as on SQLite, with
pseudo-relevance feedback and repeated query terms, and over a prefix spanning namespaces; Milvus's
own BM25 (`store.milvus_client_bm25_max_docs = 0`, or a scope above it) scores differently.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from milvus_fixtures import LiteFile, requires_lite

from langmem_plus import HybridStore
from langmem_plus.clock import ManualClock
from langmem_plus.store.tuning import StoreTuning

pytestmark = requires_lite

WORDS = [
    "川菜",
    "香菜",
    "火锅",
    "北京",
    "上海",
    "北京大学",
    "大学",
    "学生",
    "咖啡",
    "喜欢",
    "吃",
    "用户",
    "工作",
    "旅行",
    "猫",
    "狗",
    "coffee",
    "tea",
    "running",
    "python",
    "engineer",
    "backend",
    "dog",
    "cat",
    "travel",
    "Caroline",
    "Melanie",
]
QUERIES = [
    "川菜",
    "北京 大学",
    "北京大学的学生",
    "coffee python",
    "喜欢 吃 香菜 香菜",  # a repeated term weighs more
    "Caroline went running with her dog",
    "学生 旅行 engineer",
    "what does Melanie like to drink",
]
T0 = 1_700_000_000.0


def _corpus(seed: int, n: int) -> list[str]:
    rnd = random.Random(seed)
    return [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 12))) for _ in range(n)]


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory) -> LiteFile:
    return LiteFile(tmp_path_factory.mktemp("milvus_kw"))


def _fill(store: HybridStore, docs: Sequence[str]) -> None:
    for i, d in enumerate(docs):
        store.put(("u", str(i % 3)), f"k{i}", {"text": d})


def _ranked(store: HybridStore, prefix: tuple[str, ...], query: str) -> list[tuple]:
    hits = store.search(prefix, query=query, limit=10)
    return [(h.namespace, h.key, h.components["bm25"], h.score) for h in hits]


@pytest.fixture
def pair(lite: LiteFile) -> Iterator[tuple[HybridStore, HybridStore]]:
    clock = ManualClock(T0)
    sqlite = HybridStore(index=False, clock=clock)
    milvus = lite.open(index=False, clock=clock)
    yield sqlite, milvus
    sqlite.close()
    milvus.close()


def _assert_same(a: list[tuple], b: list[tuple]) -> None:
    assert [x[:2] for x in a] == [x[:2] for x in b]
    for x, y in zip(a, b, strict=True):
        assert x[2] == pytest.approx(y[2], rel=1e-9, abs=1e-12)
        assert x[3] == pytest.approx(y[3], rel=1e-9, abs=1e-12)


def test_keyword_scores_and_ranking_equal_sqlite(pair: tuple[HybridStore, HybridStore]) -> None:
    sqlite, milvus = pair
    docs = _corpus(1, 240)
    for s in pair:
        _fill(s, docs)
    for query in QUERIES:
        want = _ranked(sqlite, ("u", "0"), query)
        assert want, query
        _assert_same(_ranked(milvus, ("u", "0"), query), want)


def test_a_prefix_over_namespaces_scores_as_sqlite_without_feedback(lite: LiteFile) -> None:
    """Over several namespaces both score with the pooled statistics. Feedback is off here:
    SQLite counts a feedback term's documents in the feedback documents' namespaces only,
    Milvus in the whole scope (docs/scale-out.md)."""
    clock = ManualClock(T0)
    cfg = StoreTuning(prf_terms=0)
    stores = (
        HybridStore(index=False, clock=clock, tuning=cfg),
        lite.open(index=False, clock=clock, tuning=cfg),
    )
    docs = _corpus(4, 150)
    for s in stores:
        _fill(s, docs)
    for query in QUERIES:
        _assert_same(_ranked(stores[1], ("u",), query), _ranked(stores[0], ("u",), query))
    for s in stores:
        s.close()


def test_milvus_own_bm25_scores_differently(lite: LiteFile) -> None:
    """With the client-side scoring off, Milvus's BM25 (its IDF) gives other values: the
    equality above is the client-side scoring's doing."""
    clock = ManualClock(T0)
    off = StoreTuning(milvus_client_bm25_max_docs=0)
    sqlite = HybridStore(index=False, clock=clock)
    milvus = lite.open(index=False, clock=clock, tuning=off)
    docs = _corpus(2, 120)
    for s in (sqlite, milvus):
        _fill(s, docs)
    differ = 0
    for query in QUERIES:
        a, b = _ranked(sqlite, ("u",), query), _ranked(milvus, ("u",), query)
        assert b, query  # Milvus's BM25 still finds the matches
        differ += [x[2] for x in a] != pytest.approx([x[2] for x in b], rel=1e-6)
    assert differ >= len(QUERIES) // 2
    sqlite.close()
    milvus.close()


def test_a_scope_above_the_cap_keeps_milvus_bm25(lite: LiteFile) -> None:
    cfg = StoreTuning(milvus_client_bm25_max_docs=5)
    milvus = lite.open(index=False, tuning=cfg)
    _fill(milvus, _corpus(3, 30))
    small = milvus.search(("u", "0"), query="川菜 咖啡", limit=5)
    assert small and all(h.components["bm25"] > 0 for h in small)
    milvus.put(("v",), "only", {"text": "川菜 咖啡"})  # a scope of one document: client-side
    hit = milvus.search(("v",), query="川菜", limit=5)[0]
    assert hit.key == "only" and hit.components["bm25"] > 0
    milvus.close()


def test_a_subword_match_of_milvus_is_not_a_term_match(
    pair: tuple[HybridStore, HybridStore],
) -> None:
    """Milvus's jieba analyses the stored tokens again and may match a part of one (a
    shorter word in a longer Chinese word, `node` in `node.js`); only the stored tokens
    decide, as on SQLite."""
    docs = [
        "我在北京大学读书",
        "北京的冬天很冷",
        "大学生活",
        "北京大学 北京 大学",
        "I use c++ and node.js daily",
        "send an e-mail to @alice #urgent",
        "the API_KEY env var, version v2.0.1",
        "日本語のテキスト 中文english混合",
    ]
    for s in pair:
        for i, d in enumerate(docs):
            s.put(("z",), f"d{i}", {"text": d})
    for query in ("北京", "大学", "北京大学", "node.js", "e-mail", "API_KEY", "v2.0.1", "日本語"):
        want = _ranked(pair[0], ("z",), query)
        assert want, query
        _assert_same(_ranked(pair[1], ("z",), query), want)


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    docs=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join),
        min_size=1,
        max_size=25,
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
)
def test_any_corpus_and_query_score_as_on_sqlite(
    lite: LiteFile, docs: list[str], query: str
) -> None:
    clock = ManualClock(T0)
    sqlite = HybridStore(index=False, clock=clock)
    milvus = lite.open(index=False, clock=clock)
    for s in (sqlite, milvus):
        _fill(s, docs)
    _assert_same(_ranked(milvus, ("u", "0"), query), _ranked(sqlite, ("u", "0"), query))
    sqlite.close()
    milvus.close()


def test_session_neighbours_score_as_on_sqlite(pair: tuple[HybridStore, HybridStore]) -> None:
    """Turns of one session lend each other relevance (`store.neighbour_weight`, the
    question-to-answer pass): read from Milvus by session, the same scores as on SQLite."""
    docs = _corpus(5, 120)
    for s in pair:
        for i, d in enumerate(docs):
            s.put(("c",), f"t{i}", {"text": d, "session_id": f"s{i // 10}"})
    for query in QUERIES:
        want = _ranked(pair[0], ("c",), query)
        assert want, query
        _assert_same(_ranked(pair[1], ("c",), query), want)
