"""A name most memories hold no longer crowds out the memory a question needs
(`store.vector_common_term_ratio`, store/ranking/common_terms.py).

The examples are written for issue #14 ("booking a team dinner with Oskar, anything I should
watch out for?" should surface the allergy, not every Oskar memory) and run on the bundled USE
embeddings, with which the ratio was chosen.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest
from conftest import CountingEmbeddings
from hypothesis import given, settings
from hypothesis import strategies as st
from milvus_fixtures import LiteFile, requires_lite

from langmem_plus import HybridStore
from langmem_plus.clock import ManualClock
from langmem_plus.store.ranking.common_terms import (
    MIN_DOCS,
    TermVectors,
    common_words,
    project_out,
)
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.text.tokenize import query_terms, term_surfaces

EN = [
    "Oskar prefers a window seat and always takes the 7am train when he visits the Hamburg office",
    "Oskar's birthday is on March 14th and he is a big fan of dark chocolate",
    "Had a long 1:1 with Oskar about the Q3 roadmap, he wants the billing migration done before "
    "summer",
    "Oskar is moving to the Berlin office in September, his family stays in Munich until Christmas",
    "Oskar plays five-a-side football on Thursday evenings, so keep those free for him",
    "Oskar recommended Thinking in Systems over lunch in March, says it changed how he plans",
    "I'm severely allergic to shellfish, so any restaurant we pick needs a proper allergen menu; "
    "even a trace of shrimp paste sends me to hospital",
    "The team has two vegetarians, Priya and Tom, and Lena doesn't drink alcohol",
    "Deploys go out on Fridays after the standup",
    "I prefer dark mode in every editor and terminal",
    "My manager asked me to keep the offsite budget under 2,000 euros",
    "Our offsite last year was in a brewery and people complained it was too loud to talk",
]
ZH = [
    "小林下个月要从上海调到深圳分公司，他老婆孩子暂时留在上海",
    "小林是周杰伦的铁粉，上次演唱会抢了两张票",
    "和小林1:1聊了Q3的roadmap，他希望支付迁移在暑假前搞定",
    "小林每周四晚上踢五人制足球，那天别约他开会",
    "小林的生日是3月14号，喜欢黑巧克力",
    "小林推荐了《系统之美》这本书，说对他做计划很有帮助",
    "我对虾蟹严重过敏，哪怕酱料里有一点虾酱都会进医院，选餐厅一定要看过敏原菜单",
    "团队里Priya和Tom吃素，Lena不喝酒",
    "每周五站会后发布上线",
    "我在所有编辑器里都用深色主题",
    "经理说团建预算不能超过两千欧",
    "去年团建去了一家精酿酒吧，大家都说太吵没法聊天",
]
ALLERGY = "m6"
# the fault as it was: no projection, and BM25's full share in the fusion whatever the query's
# keyword evidence (with `fusion_full_share_evidence`, the name's few, weak keyword hits no longer
# order these questions either: the allergy is first in four of the five cases without the
# projection, tests/test_fusion_keyword_share.py)
OFF = StoreTuning(vector_common_term_ratio=0, fusion_full_share_evidence=0)
# (memories, question, the allergy's rank at worst with the common name projected out)
CASES = [
    (
        EN,
        "planning dinner with Oskar at a seafood restaurant tonight, anything I should keep "
        "in mind?",
        1,
    ),
    (
        EN,
        "taking Oskar out for seafood on Friday, is there anything I need to be careful about?",
        1,
    ),
    (ZH, "小林说今晚去吃海鲜自助，我该注意点什么", 3),
    (ZH, "今晚带小林去吃海鲜大餐，有什么要注意的吗？", 3),
    (ZH, "taking 小林 out for seafood tonight, anything I need to be careful about?", 3),
]


def _store(memories: Sequence[str], tuning: StoreTuning | None = None) -> HybridStore:
    store = HybridStore(tuning=tuning, clock=ManualClock(1_700_000_000.0))
    for i, text in enumerate(memories):
        store.put(("u",), f"m{i}", {"text": text})
    return store


def _rank(store: HybridStore, query: str, key: str) -> int:
    keys = [h.key for h in store.search(("u",), query=query, limit=12)]
    return keys.index(key) + 1


@pytest.fixture(scope="module")
def stores() -> Iterator[dict[str, tuple[HybridStore, HybridStore]]]:
    got = {"en": (_store(EN), _store(EN, OFF)), "zh": (_store(ZH), _store(ZH, OFF))}
    yield got
    for pair in got.values():
        for s in pair:
            s.close()


@pytest.mark.parametrize(("memories", "query", "worst"), CASES, ids=[c[1][:24] for c in CASES])
def test_a_name_most_memories_hold_no_longer_crowds_out_the_allergy(
    stores: dict[str, tuple[HybridStore, HybridStore]],
    memories: list[str],
    query: str,
    worst: int,
) -> None:
    on, off = stores["en" if memories is EN else "zh"]
    # the fault: the name pulls the memories about Oskar / 小林 above the allergy
    assert _rank(off, query, ALLERGY) > worst
    assert _rank(on, query, ALLERGY) <= worst


def test_the_projection_orders_but_leaves_every_score_component_as_it_was(
    stores: dict[str, tuple[HybridStore, HybridStore]],
) -> None:
    """The cosine a hit reports and its evidence are the whole query's: a memory about Oskar
    is still evidence for a question about him; the name only stops deciding the order."""
    on, off = stores["en"]
    query = CASES[0][1]
    a = {h.key: h.components for h in on.search(("u",), query=query, limit=12)}
    b = {h.key: h.components for h in off.search(("u",), query=query, limit=12)}
    assert a.keys() == b.keys()
    for key in a:
        for name in ("vector", "vector_norm", "bm25_norm", "evidence"):
            assert a[key][name] == pytest.approx(b[key][name], abs=1e-6), (key, name)
    assert [h.key for h in on.search(("u",), query=query)] != [
        h.key for h in off.search(("u",), query=query)
    ]


def test_a_word_few_memories_hold_changes_nothing() -> None:
    memories = [
        t.replace("Oskar", name) for t, name in zip(EN, ["Oskar", "Ines", "Rui"] * 4, strict=True)
    ]
    on, off = _store(memories), _store(memories, StoreTuning(vector_common_term_ratio=0))
    query = "planning dinner with Oskar at a seafood restaurant tonight"
    assert [(h.key, h.score) for h in on.search(("u",), query=query, limit=12)] == [
        (h.key, h.score) for h in off.search(("u",), query=query, limit=12)
    ]
    on.close()
    off.close()


def test_common_words_are_read_as_the_query_writes_them() -> None:
    q = query_terms("what did Caroline's dog and Caroline do at the 圣诞节晚会?")
    df = {"carolin": 5, "dog": 2, "圣诞节": 9}
    assert common_words("what did Caroline's dog ... 圣诞节晚会", q, df, 10, 0.4) == [
        "Caroline",
        "圣诞节",
    ]
    assert common_words("x", q, df, 10, 0.0) == []  # off
    assert common_words("x", q, {"dog": 2}, 4, 0.4) == []  # fewer than MIN_DOCS documents
    assert MIN_DOCS == 3
    assert term_surfaces("Oskar's 小林 processOrder")["order"] == "processOrder"


def test_word_vectors_are_embedded_once_and_the_cache_is_bounded() -> None:
    emb = CountingEmbeddings(16)
    vectors = TermVectors(emb, size=2)
    first = vectors(["Oskar", "小林", "Oskar"])
    assert emb.embedded == ["Oskar", "小林"]  # one call, each word once
    assert [float(np.linalg.norm(v)) for v in first] == pytest.approx([1.0, 1.0, 1.0])
    assert np.array_equal(first[0], first[2])
    vectors(["小林", "Oskar"])
    assert emb.embedded == ["Oskar", "小林"]  # cached
    vectors(["Ines"])  # the least recently used word ("小林") leaves the cache
    vectors(["Oskar"])
    assert emb.embedded == ["Oskar", "小林", "Ines"]
    vectors(["小林"])
    assert emb.embedded == ["Oskar", "小林", "Ines", "小林"]


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**31 - 1),
    st.integers(1, 4),
)
def test_the_projected_vector_is_orthogonal_to_every_direction_and_keeps_its_length(
    seed: int, n: int
) -> None:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=32).astype(np.float32)
    dirs = [rng.normal(size=32) for _ in range(n)]
    dirs.append(dirs[0] * 2.0)  # a repeated direction adds nothing
    out = project_out(q, dirs)
    assert out.dtype == q.dtype
    assert float(np.linalg.norm(out)) == pytest.approx(float(np.linalg.norm(q)), rel=1e-5)
    for d in dirs:
        assert abs(float(out @ d)) / float(np.linalg.norm(d)) < 1e-4 * float(np.linalg.norm(q))
    assert np.array_equal(project_out(q, []), q)


@requires_lite
def test_milvus_ranks_the_allergy_as_sqlite_does(tmp_path_factory: pytest.TempPathFactory) -> None:
    lite = LiteFile(tmp_path_factory.mktemp("milvus_common"))
    for memories, query, worst in (CASES[0], CASES[2]):
        sqlite = _store(memories)
        milvus = lite.open(clock=ManualClock(1_700_000_000.0))
        for i, text in enumerate(memories):
            milvus.put(("u",), f"m{i}", {"text": text})
        want = [h.key for h in sqlite.search(("u",), query=query, limit=6)]
        assert [h.key for h in milvus.search(("u",), query=query, limit=6)] == want
        assert _rank(milvus, query, ALLERGY) <= worst
        sqlite.close()
        milvus.close()


def test_the_issues_own_question_ranks_the_allergy_as_if_it_named_no_one(
    stores: dict[str, tuple[HybridStore, HybridStore]],
) -> None:
    """Issue 14's exact words: the name cost the allergy two ranks (8th against 6th), with the
    projection it costs at most one (6th; without the name 5th, where the question's one
    keyword hit, "team", is too little of it to order the rest). What is left is the model's:
    USE gives the question and the allergy a cosine near its background."""
    on, off = stores["en"]
    with_name = "booking a team dinner with Oskar, anything I should watch out for?"
    without = "booking a team dinner, anything I should watch out for?"
    cost_on = _rank(on, with_name, ALLERGY) - _rank(on, without, ALLERGY)
    cost_off = _rank(off, with_name, ALLERGY) - _rank(off, without, ALLERGY)  # the fault
    assert cost_on <= 1 < cost_off
    assert _rank(on, with_name, ALLERGY) < _rank(off, with_name, ALLERGY)
