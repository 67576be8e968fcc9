"""Query-side ranking knobs: query term frequency, pseudo-relevance feedback, neighbours."""

from __future__ import annotations

import heapq

import pytest
from conftest import HashEmbeddings
from hypothesis import given, settings
from hypothesis import strategies as st

from langmem_plus import HybridStore
from langmem_plus.store.ranking.expansion import best_pairs
from langmem_plus.store.ranking.neighbours import inherit
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.text.tokenize import QueryTerms, query_terms


def test_query_terms_count_repeats():
    q = query_terms("Bart said Bart likes dogs; Bart and dogs")
    assert dict(zip(q.terms, q.counts, strict=True))["bart"] == 3
    assert q.qtf_weights(0) == {}
    w = q.qtf_weights(1.0)
    assert w["bart"] == pytest.approx(2 * 3 / 4) and w["dog"] == pytest.approx(2 * 2 / 3)
    assert "said" not in w  # single occurrences keep weight 1
    assert QueryTerms(("a",), ()).qtf_weights(1.0) == {}  # counts unknown: no weights


def _kw_scores(store: HybridStore, q: QueryTerms, weights=None) -> dict[str, float]:
    with store._db.read() as conn:
        ns_ids = store._ns_ids(conn, ("c",))
        raw = store._kw.search(conn, ns_ids, q, k=100, weights=weights)
        keys = dict(conn.execute("SELECT id, key FROM items").fetchall())
    return {keys[i]: v for i, v in raw.items()}


def test_keyword_weights_multiply_a_terms_contribution():
    store = HybridStore(index=False)
    for i, doc in enumerate(["red apple", "green apple", "red car", "blue sky", "grey sea"]):
        store.put(("c",), f"d{i}", {"text": doc})
    q = query_terms("red apple")
    base = _kw_scores(store, q)
    only_red = _kw_scores(store, query_terms("red"))
    doubled = _kw_scores(store, q, weights={"red": 2.0})
    assert doubled["d0"] == pytest.approx(base["d0"] + only_red["d0"])
    assert doubled["d1"] == pytest.approx(base["d1"])
    store.close()


def _keys(store: HybridStore, query: str) -> list[str]:
    return [h.key for h in store.search(("c",), query=query, limit=10)]


def test_pseudo_relevance_feedback_finds_related_items():
    docs = {
        "a": "Caroline went to the pottery workshop and made a clay bowl",
        "b": "Caroline loves pottery, the clay bowl workshop was great",
        "c": "the clay bowl from the workshop cracked in the kiln",
        "d": "Melanie went camping with her kids",
        "e": "Melanie painted a sunset over the lake",
        "f": "the weather was nice all week",
    }
    docs.update({f"z{i}": f"note {i} about gardening and tomatoes" for i in range(60)})
    off = HybridStore(index=False, tuning=StoreTuning(prf_terms=0))
    on = HybridStore(index=False, tuning=StoreTuning(prf_terms=5, prf_docs=2))
    for store in (off, on):
        for k, v in docs.items():
            store.put(("c",), k, {"text": v})
    assert "c" not in _keys(off, "Caroline pottery")
    assert _keys(on, "Caroline pottery")[2] == "c"  # via clay / bowl / workshop
    assert set(_keys(on, "Caroline pottery")[:2]) == {"a", "b"}
    off.close()
    on.close()


def test_inherit_smooths_towards_best_neighbour():
    out = inherit({1: 1.0, 2: 0.0, 3: 0.5}, {1: [2], 3: [2, 4]}, alpha=0.5)
    assert out[1] == pytest.approx(1.0 / 1.5)
    assert out[2] == pytest.approx(0.5 / 1.5)  # the best neighbour counts
    assert out[4] == pytest.approx(0.25 / 1.5)  # a newcomer inherits from its neighbour


def test_neighbour_weight_brings_in_the_adjacent_turn():
    turns = [
        "Alice: what did you do at the weekend?",
        "Bob: I finally went to the aquarium downtown",
        "Bob: we saw octopus and jellyfish there",
        "Alice: nice, I stayed home",
    ] + [f"Carol: unrelated note number {i} about gardening" for i in range(30)]
    on = HybridStore(index=False, tuning=StoreTuning(neighbour_weight=0.5))
    off = HybridStore(index=False, tuning=StoreTuning(neighbour_weight=0.0))
    other = ("other",)
    for store in (on, off):
        store.put(other, "x", {"text": "aquarium tickets"})  # another namespace, written first
        for i, t in enumerate(turns):
            store.put(("c",), f"t{i}", {"text": t, "session_id": "s1" if i < 4 else "s2"})
    assert "t2" not in [h.key for h in off.search(("c",), query="aquarium", limit=1)]
    got = [h.key for h in on.search(("c",), query="aquarium", limit=3)]
    assert got[0] == "t1" and {"t0", "t2"} <= set(got)
    assert all(h.namespace == ("c",) for h in on.search(("c",), query="aquarium", limit=5))
    on.close()
    off.close()


def test_neighbour_smoothing_needs_a_shared_session():
    """Independent memories (no session) and turns of other sessions pass nothing on."""
    s = HybridStore(index=False, tuning=StoreTuning(neighbour_weight=0.5))
    s.put(("m",), "a", {"text": "went to the aquarium downtown"})
    s.put(("m",), "b", {"text": "octopus and jellyfish were there"})
    s.put(("m",), "c", {"text": "the aquarium was crowded", "session_id": "s1"})
    s.put(("m",), "d", {"text": "we left early", "session_id": "s2"})
    keys = [h.key for h in s.search(("m",), query="aquarium", limit=4)]
    assert keys[:2] in (["a", "c"], ["c", "a"])
    hits = {h.key: h for h in s.search(("m",), query="aquarium", limit=4)}
    assert hits.get("b") is None or hits["b"].components["keyword"] == 0
    assert hits.get("d") is None or hits["d"].components["keyword"] == 0
    s.close()


@pytest.mark.parametrize(
    ("session_a", "session_b", "smoothed"),
    [
        ({"session_id": "s1"}, {"session_id": "s1"}, True),
        ({"session_id": 7}, {"session_id": "7"}, True),  # compared as text
        ({"chat_id": "c"}, {"chat_id": "c"}, True),  # the next key when session_id is absent
        ({"session_id": True}, {"session_id": True}, False),  # booleans name no session
        ({"session_id": ""}, {"session_id": ""}, False),  # nor empty strings
        ({"session_id": "s1"}, {"session_id": "s2"}, False),
    ],
)
def test_session_keys_decide_smoothing(session_a, session_b, smoothed):
    s = HybridStore(index=False, tuning=StoreTuning(neighbour_weight=0.5))
    s.put(("m",), "a", {"text": "went to the aquarium downtown", **session_a})
    s.put(("m",), "b", {"text": "octopus and jellyfish were there", **session_b})
    for i in range(5):
        s.put(("m",), f"z{i}", {"text": f"unrelated gardening note {i}"})
    hits = {h.key: h for h in s.search(("m",), query="aquarium", limit=3)}
    assert ("b" in hits) is smoothed
    s.close()


def test_inherit_lets_an_answer_keep_its_questions_relevance():
    out = inherit({1: 1.0, 2: 0.2}, {1: [2]}, alpha=0.5, answers={1: 2}, beta=0.9)
    assert out[2] == pytest.approx(0.9)  # max(smoothed, beta * f(question))
    assert out[1] == pytest.approx(1.0 / 1.5)
    assert inherit({1: 1.0, 2: 0.2}, {1: [2]}, alpha=0.5)[2] == pytest.approx(0.7 / 1.5)


LENA_NICO = [
    "Lena: guess what, we got a puppy last weekend!",
    "Nico: oh what breed is he?",
    "Lena: a dachshund, his name's Pretzel",
    "Nico: cute, does he sleep through the night yet",
    "Lena: not really, he cries a lot",
    "Lena: anyway how was your trip to Lisbon",
]


@pytest.mark.parametrize("embed", [False, True])
def test_answer_outranks_its_question(embed):
    """Issue #14: "What breed is Lena's puppy?" matches the question turn; its answer, the
    next turn of the session, must rank above it (`answer_weight`), and not without it."""
    index = {"dims": 64, "embed": HashEmbeddings(64), "fields": ["text"]} if embed else False
    keys = {}
    for weight in (0.0, 1.0):
        s = HybridStore(index=index, tuning=StoreTuning(answer_weight=weight))
        for i, t in enumerate(LENA_NICO):
            s.put(("chat",), f"t{i}", {"text": t, "session_id": "s1"})
        keys[weight] = [h.key for h in s.search(("chat",), query="What breed is Lena's puppy?")]
        s.close()
    assert keys[0.0].index("t1") < keys[0.0].index("t2")  # the fault: question first
    assert keys[1.0].index("t2") < keys[1.0].index("t1")  # the answer inherits and wins


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.integers(-5, 40),
        st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.0, -1.0, 1e-300, 3.25]) | st.floats(-10, 10),
        max_size=30,
    ),
    st.integers(0, 8),
)
def test_best_pairs_is_heapq_nlargest_of_score_id_pairs(scores, n):
    """The feedback documents: the n best (score, id) pairs, ties to the larger id, exactly
    as `heapq.nlargest` orders them (the threshold shortcut may not change the answer)."""
    want = heapq.nlargest(n, zip(scores.values(), scores, strict=True))
    got = best_pairs(n, scores)
    assert got == want
    assert [i for _, i in got] == [i for _, i in want]
