"""The relevance judgement (store/ranking/judgement.py): the scale of a query's absolute relevance is the
calibrated chance that the searched namespaces hold something about it. It changes scores,
never an order; it applies only to the embeddings it was fitted for; the floor chosen with it
is the default floor of those stores."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from _letters import Letters
from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus.clock import ManualClock
from langmem_plus.config import MemoryConfig
from langmem_plus.embeddings import USE_MODEL_NAME
from langmem_plus.store.hybrid import HybridStore
from langmem_plus.store.ranking.floor import DEFAULT_FLOOR, above_floor, floor_for
from langmem_plus.store.ranking.judgement import (
    FEATURES,
    Judgement,
    QueryFacts,
    judgement_for,
    load_judgements,
    query_facts,
)
from langmem_plus.text.names import name_terms
from langmem_plus.text.tokenize import query_terms


class LettersAsUse(Letters):
    """The same vectors under the bundled model's name: the judgement fitted for it applies
    (its mechanics are tested here; its calibration only means something for the model)."""

    model_name = USE_MODEL_NAME
    background_cosine = 0.2


DOCS = [
    "Caroline went to the LGBTQ support group on Tuesday",
    "Melanie painted a sunrise over the lake",
    "the user likes green tea in the afternoon",
    "deploys go out on fridays after the standup",
    "Caroline is researching adoption agencies",
    "Melanie ran a charity race for mental health",
]
QUERIES = [
    "What did Caroline research?",
    "when did Melanie paint a sunrise",
    "What did Oskar say about the race?",
    "green tea",
    "zzz qqq",
    "How do I debug a TypeError in processOrder?",
]


def test_names_are_words_written_like_names_not_sentence_openers() -> None:
    assert name_terms("What did Caroline research?") == ["carolin"]
    assert name_terms("我在写 OrderService，processOrder 函数总是抛 TypeError，怎么排查？") == [
        "orderservice",
        "processorder",
        "typeerror",
    ]
    # a transcript's speaker label is a name; a role label, a calendar word, an opener are not
    assert name_terms("Bart: hi there\nAssistant: hello Bart!") == ["bart"]
    assert name_terms("What was my mood on May 2nd? Tell me Monday's plan.") == []
    assert name_terms("Explain it. Please do.") == []
    assert name_terms("Bart在圣诞节晚会上跳舞") == []  # opens the text, no label
    # the first word after a speaker label opens the utterance: not a name
    assert name_terms("Bart: Wow, that's great!\nAssistant: Put on your best outfit, Bart.") == [
        "bart"
    ]
    assert name_terms("User: Haha ok\nAssistant: Alright, see you at Lisa's") == ["lisa"]
    assert name_terms("Mr. Smith: Hello there") == ["smith"]


def test_query_facts_count_only_the_names_the_scope_never_saw() -> None:
    q = query_terms("Did Caroline and Oskar go running?")
    asked: list[int] = []

    def held() -> frozenset[str]:
        asked.append(1)
        return frozenset({"carolin", "run"})

    facts = query_facts("Did Caroline and Oskar go running?", q, held)
    assert facts.unseen_names == 0.5  # Caroline held, Oskar not; "running" is no name
    # no name: the scope is not asked
    assert query_facts("what tea do I like", query_terms("what tea do I like"), held) == QueryFacts(
        0.0
    )
    assert len(asked) == 1


@settings(max_examples=200, deadline=None)
@given(
    st.floats(0, 1), st.floats(-1, 1), st.floats(0, 1),
    st.floats(0, 0.5), st.floats(0, 0.5), st.floats(0, 0.5),
)  # fmt: skip
def test_the_scale_is_a_probability_monotone_in_its_evidence(
    ev: float, cos: float, unseen: float, d_ev: float, d_cos: float, d_un: float
) -> None:
    j = load_judgements()[USE_MODEL_NAME]
    facts = QueryFacts(unseen)
    s = j.scale(ev, cos, facts)
    assert 0.0 <= s <= 1.0
    assert j.scale(min(1.0, ev + d_ev), cos, facts) >= s
    assert j.scale(ev, min(1.0, cos + d_cos), facts) >= s
    assert j.scale(ev, cos, QueryFacts(min(1.0, unseen + d_un))) <= s


def test_the_shipped_judgement_is_for_the_bundled_model_and_well_formed() -> None:
    raw = json.loads(
        resources.files("langmem_plus").joinpath("data/relevance_judgement.json").read_text()
    )
    assert set(raw["models"]) == {USE_MODEL_NAME}
    j = load_judgements()[USE_MODEL_NAME]
    assert raw["models"][USE_MODEL_NAME]["features"] == list(FEATURES)
    assert 0.0 < j.floor < 1.0
    # the signs the fit is held to (benchmarks/calibration_fit.py): more evidence, a higher
    # cosine never lower the scale; a name the store never saw never raises it
    assert j.coefficients[0] >= 0 and j.coefficients[1] >= 0 and j.coefficients[2] <= 0
    assert judgement_for(Letters()) is None and judgement_for(object()) is None
    with pytest.raises(ValueError):
        Judgement("m", (1.0,), 0.0, 0.2)
    with pytest.raises(ValueError):
        Judgement("m", (1.0, 1.0, -1.0), 0.0, 1.5)


def _ranked(store: HybridStore, query: str) -> list[tuple[str, float, dict]]:
    return [
        (h.key, float(h.score or 0), dict(h.components))
        for h in store.search(("t",), query=query, limit=10)
    ]


def test_the_judgement_changes_the_scale_never_the_order() -> None:
    off = MemoryConfig(store={"relevance_judgement": False})
    clock = ManualClock(1_700_000_000.0)  # the same recency in both stores
    with (
        HybridStore(index={"dims": 26, "embed": LettersAsUse()}, clock=clock) as judged,
        HybridStore(index={"dims": 26, "embed": LettersAsUse()}, config=off, clock=clock) as plain,
    ):
        assert judged.relevance_judgement is not None and plain.relevance_judgement is None
        for store in (judged, plain):
            for i, text in enumerate(DOCS):
                store.put(("t",), f"k{i}", {"text": text})
        for query in QUERIES:
            a, b = _ranked(judged, query), _ranked(plain, query)
            assert [k for k, _, _ in a] == [k for k, _, _ in b], query
            scale, best = a[0][2]["query_evidence"], b[0][2]["query_evidence"]
            assert a[0][2]["best_evidence"] == pytest.approx(best)
            facts = QueryFacts(a[0][2]["unseen_names"])
            want = judged.relevance_judgement.scale(best, a[0][2]["best_cosine"], facts)
            assert scale == pytest.approx(want)
            for (_, sa, ca), (_, sb, cb) in zip(a, b, strict=True):
                assert 0.0 <= ca["relevance"] <= scale + 1e-12
                assert ca["relevance"] * best == pytest.approx(cb["relevance"] * scale, abs=1e-12)
                assert sa * best == pytest.approx(sb * scale, rel=1e-9, abs=1e-12)
        # a name the store never saw lowers the scale; one it holds does not count against it
        oskar = _ranked(judged, "What did Oskar say about the race?")[0][2]
        melanie = _ranked(judged, "What did Melanie say about the race?")[0][2]
        assert oskar["unseen_names"] == 1.0 and melanie["unseen_names"] == 0.0


def test_other_embeddings_and_keyword_only_stores_keep_the_best_evidence_as_scale() -> None:
    with (
        HybridStore(index={"dims": 26, "embed": Letters()}) as other,
        HybridStore(index=False) as keywords,
    ):
        assert other.relevance_judgement is None and keywords.relevance_judgement is None
        for store in (other, keywords):
            store.put(("t",), "a", {"text": "the user likes green tea"})
            store.put(("t",), "b", {"text": "deploys go out on fridays"})
            top = store.search(("t",), query="green tea")[0].components
            assert top["query_evidence"] == pytest.approx(top["best_evidence"])
            assert top["query_evidence"] == pytest.approx(top["relevance"])
        assert floor_for(other, None) == DEFAULT_FLOOR
        assert floor_for(keywords, None) == 0.0 and floor_for(keywords, 0.5) == 0.0


def test_the_default_floor_is_the_one_chosen_with_the_judgement() -> None:
    assert MemoryConfig().recall.min_relevance is None
    with HybridStore(index={"dims": 26, "embed": LettersAsUse()}) as store:
        j = store.relevance_judgement
        assert j is not None and floor_for(store, None) == j.floor
        assert floor_for(store, 0.05) == 0.05  # an explicit floor wins
        store.put(("t",), "a", {"text": "the user likes green tea"})
        hits = store.search(("t",), query="green tea")
        assert above_floor(hits, floor_for(store, 0.0)) == hits
