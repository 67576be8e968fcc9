"""BM25's share in the fusion follows how much of the query the keyword side matched (issue 31,
part 2, "keyword fusion costs top-5 on paraphrases"): a question in other words than the memory
is ordered by the embedding, a question the keywords match is fused as before."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from langmem_plus import HybridStore
from langmem_plus.store.ranking.scoring import FusionTuning, fuse_arrays, keyword_share
from langmem_plus.store.tuning import StoreTuning

PREFERENCES = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "preferences.jsonl"


def _tuning(full_at: float) -> FusionTuning:
    return FusionTuning(
        w_standing_keyword=0.55,
        keyword_rate=1.5,
        w_evidence_keyword=0.8,
        background=0.2,
        full_share_evidence=full_at,
    )


def _rank_of(relevance: np.ndarray, i: int) -> int:
    return list(np.argsort(-relevance, kind="stable")).index(i) + 1


def test_with_no_keyword_evidence_the_embedding_orders() -> None:
    """A paraphrase: the memory the embedding finds first (candidate 0, no BM25) against a few
    candidates whose BM25 comes from a word that is a tiny share of the query's IDF mass. Full
    share (main's fusion): those few stand out in standard scores and push it to 4th."""
    bm = np.array([0.0, 3.3, 2.2, 1.4, 1.4, 1.4, 1.3, 0.8, *[0.0] * 28])
    cos = np.array([0.30, 0.15, 0.18, 0.20, 0.16, 0.12, 0.11, 0.21, *np.linspace(0.05, 0.25, 28)])
    full = fuse_arrays(bm, cos, 1000.0, tuning=_tuning(0.0))
    assert _rank_of(full.relevance, 0) > 1
    got = fuse_arrays(bm, cos, 1000.0, tuning=_tuning(StoreTuning().fusion_full_share_evidence))
    assert _rank_of(got.relevance, 0) == 1
    # the evidence (each item's own) does not move; only the order does
    assert np.array_equal(got.evidence, full.evidence)


pools = st.integers(2, 40).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(0, 30, allow_nan=False), min_size=n, max_size=n),
        st.lists(st.floats(-1, 1, allow_nan=False), min_size=n, max_size=n),
    )
)


@given(pools, st.floats(0.05, 0.9))
def test_a_query_the_keywords_match_is_fused_as_before(
    pool: tuple[list[float], list[float]], full_at: float
) -> None:
    """When the best keyword candidate's evidence reaches `full_at`, BM25 keeps its full
    share: the relevance is bit for bit the full-share fusion's."""
    bm, cos = np.array(pool[0]), np.array(pool[1])
    mass = 1.0
    if float(1 - np.exp(-1.5 * bm.max() / mass)) < full_at:
        bm[0] = -np.log(1 - full_at) / 1.5 * mass + 1.0  # a match of more than full_at
    full = fuse_arrays(bm, cos, mass, tuning=_tuning(0.0))
    got = fuse_arrays(bm, cos, mass, tuning=_tuning(full_at))
    assert np.array_equal(got.relevance, full.relevance)


@given(st.lists(st.floats(0, 1, allow_nan=False), max_size=30), st.floats(0, 1), st.floats(0, 1))
def test_the_keyword_share_grows_with_the_evidence_up_to_its_weight(
    keyword: list[float], w: float, full_at: float
) -> None:
    k = np.array(keyword)
    share = keyword_share(w, k, full_at)
    assert 0.0 <= share <= w
    if full_at == 0 or not keyword or max(keyword) >= full_at:
        assert share == w
    more = keyword_share(w, np.append(k, 1.0), full_at)
    assert more >= share and more == w


def _preferences_zh() -> tuple[list[tuple[str, str]], dict[str, list[str]]]:
    for line in PREFERENCES.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["lang"] == "zh":
            memories = [(m["key"], m["text"]) for m in row["memories"]]
            return memories, {q["question"]: q["gold"] for q in row["questions"]}
    raise AssertionError("no zh unit in the preference set")


@pytest.mark.parametrize("question", ["我最喜欢用哪种编程语言？", "我是早起型的人吗？"])
def test_a_preference_asked_in_other_words_is_in_the_top_five(question: str) -> None:
    """Two questions of the preference set that share no word with their memory ("Go", "起床"):
    its keyword hits are common words (喜欢) or substrings (早上), and the memory the embedding
    puts in its top 5 was 7th and 6th with BM25's full share."""
    memories, gold = _preferences_zh()
    with HybridStore() as store:  # the bundled USE embeddings
        for key, text in memories:
            store.put(("u",), key, {"text": text})
        top5 = [h.key for h in store.search(("u",), query=question, limit=5)]
    assert set(gold[question]) & set(top5)
