"""Relevance a user can trust (issue 31, part 2): an item's relevance is its own evidence on
one scale, not its place among the candidates, and the priors never lift an item that has none."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from _agent_fakes import scripted
from hypothesis import given
from hypothesis import strategies as st
from langchain.agents import create_agent

from langmem_plus import HybridStore, Memory
from langmem_plus.agent.middleware import MemoryMiddleware
from langmem_plus.store.ranking.scoring import FusionTuning, fuse_arrays, prior_scales

TUNING = FusionTuning(
    w_standing_keyword=0.55, keyword_rate=1.5, w_evidence_keyword=0.8, background=0.2
)
QUESTION = "Where do I live?"
HOME = ["I live in Shanghai", "My home is in Shanghai"]
UNRELATED = "User loves spicy Sichuan food"


def _relevance(texts: list[str], query: str) -> dict[str, dict[str, float]]:
    with HybridStore() as store:  # the bundled USE embeddings
        for i, text in enumerate(texts):
            store.put(("u",), f"k{i}", {"text": text})
        return {h.value["text"]: h.components for h in store.search(("u",), query=query)}


def test_the_runner_up_of_two_relevant_memories_is_not_zero_for_losing() -> None:
    """Two memories about where the user lives: the second scored 0.0 (a min-max put the
    worst candidate at 0) and ~0.4 once an unrelated memory joined."""
    alone = _relevance(HOME, QUESTION)
    with_other = _relevance([*HOME, UNRELATED], QUESTION)
    for got in (alone, with_other):
        runner_up = got["My home is in Shanghai"]
        assert runner_up["evidence"] > 0
        assert runner_up["relevance"] > 0.2
    assert with_other[UNRELATED]["relevance"] < 0.05


def test_priors_never_lift_a_memory_with_no_relevance() -> None:
    """Within a question that matches something, an unrelated memory scores ~0.43 from its
    recency and default confidence alone (relevance < 0.1, evidence 0): the goal is that the
    score orders by relevance first."""
    got = _relevance([*HOME, UNRELATED, "User has a tabby cat called Miso"], QUESTION)
    for text in (UNRELATED, "User has a tabby cat called Miso"):
        assert got[text]["evidence"] == 0 and got[text]["relevance"] < 0.1
        assert got[text]["score"] < 0.1
    least_relevant = min(got[t]["score"] for t in HOME)
    assert all(got[t]["score"] < least_relevant for t in got if t not in HOME)


def _injected(texts: list[str], question: str) -> list[str]:
    """What the memory middleware puts in the model's context for `question`."""
    t0 = datetime(2026, 3, 2, 20, 0, tzinfo=timezone.utc)
    with Memory() as mem:  # the bundled USE embeddings
        for i, text in enumerate(texts):
            mem.add(text, "mei", infer=False, timestamp=t0 + timedelta(days=i))
        mw = MemoryMiddleware(debounce_s=0.0)
        agent = create_agent(scripted(["Shanghai."]), tools=[], middleware=[mw], store=mem.store)
        cfg = {"configurable": {"thread_id": "t", "user_id": "mei"}}
        out = agent.invoke({"messages": [{"role": "user", "content": question}]}, cfg)
        mw.close()
        return [m["text"] for m in out["memory_context"]["memories"]]


def test_the_middleware_injects_both_home_memories_and_nothing_without_evidence() -> None:
    question = "Which city do I live in now?"
    assert sorted(_injected([*HOME, UNRELATED], question)) == sorted(HOME)


related = st.tuples(st.floats(0, 30, allow_nan=False), st.floats(0.21, 1.0, allow_nan=False))
unrelated = st.tuples(st.just(0.0), st.floats(-1.0, 0.2, allow_nan=False))


@given(st.lists(related, min_size=1, max_size=20), st.lists(unrelated, max_size=40))
def test_adding_unrelated_candidates_never_zeroes_one_with_evidence(
    items: list[tuple[float, float]], others: list[tuple[float, float]]
) -> None:
    """Candidates with evidence of their own (a cosine above the background, any BM25) never
    score 0, alone or among any number of unrelated ones (BM25 0, a cosine at or below the
    background): how many others an item beats does not decide whether it counts."""
    n = len(items)
    for pool in (items, [*items, *others]):
        bm = np.array([b for b, _ in pool])
        cos = np.array([c for _, c in pool])
        got = fuse_arrays(bm, cos, 5.0, tuning=TUNING)
        assert np.all(got.evidence[:n] > 0)
        assert np.all(got.relevance[:n] > 0)
        assert np.all(got.relevance <= got.relevance.max())


def test_the_score_explains_itself_with_each_items_prior_scale() -> None:
    """`prior_scale` is what a hit's priors were multiplied by: the query's scale for the
    memories with evidence, their own relevance for the unrelated ones."""
    from langmem_plus.config import MemoryConfig

    cfg = MemoryConfig().score
    got = _relevance([*HOME, UNRELATED], QUESTION)
    for text, c in got.items():
        priors = (
            cfg.w_category * c["category_boost"]
            + cfg.w_recency * c["recency"]
            + cfg.w_frequency * c["frequency"]
            + cfg.w_confidence * c["confidence"]
        )
        expect = cfg.w_keyword * c["relevance"] + c["prior_scale"] * priors
        assert c["score"] == pytest.approx(expect * c["topic_boost"], rel=1e-6)
        want = c["relevance"] if text == UNRELATED else c["query_evidence"]
        assert c["prior_scale"] == pytest.approx(want)


rel = st.floats(0.0, 1.0, allow_nan=False)


@given(
    st.lists(st.tuples(rel, st.booleans()), min_size=1, max_size=30),
    st.floats(0.01, 1.0),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
)
def test_priors_never_lift_an_item_without_evidence_above_a_more_relevant_one(
    items: list[tuple[float, bool]], scale: float, floor: float, share: float
) -> None:
    """With the same priors, a candidate with no evidence whose relevance is below the gate
    never scores above any candidate at least as relevant; candidates with evidence or at the
    gate keep the query's scale."""
    relevance = np.array([min(r, 1.0) * scale for r, _ in items])
    ev = np.array([0.4 if has else 0.0 for _, has in items])
    best = scale  # no judgement: the scale is the best evidence
    got = np.broadcast_to(prior_scales(relevance, ev, scale, best, floor, share), relevance.shape)
    gate = min(floor, share * best)
    priors = 0.6  # any equal priors
    score = 0.4 * relevance + got * priors
    for i in range(len(items)):
        if ev[i] > 0 or relevance[i] >= gate:
            assert got[i] == scale
            continue
        assert got[i] <= max(relevance[i], 1e-15)
        for j in range(len(items)):
            if relevance[j] >= relevance[i]:
                assert score[i] <= score[j] + 1e-12
