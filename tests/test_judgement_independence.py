"""The relevance judgement scales a query's hits alike and never moves the ranking — not even by
a rounding: the second feedback round weighs its documents by the relevance before the
judgement's scale, so a refitted judgement leaves every ranking and every keyword score
bit-identical (found when a refit moved raw BM25 in the last bit, issue 14)."""

from __future__ import annotations

import random

from conftest import HashEmbeddings

from langmem_plus import HybridStore, MemoryConfig
from langmem_plus.clock import ManualClock
from langmem_plus.embeddings import USE_MODEL_NAME

WORDS = [
    "coffee",
    "tea",
    "garden",
    "hiking",
    "Berlin",
    "Tokyo",
    "rent",
    "budget",
    "salary",
    "knee",
    "doctor",
    "guitar",
    "piano",
    "dinner",
    "shellfish",
    "allergy",
    "vegan",
    "sister",
    "wedding",
    "flight",
    "hotel",
    "Kyoto",
    "Postgres",
    "deploy",
    "Friday",
    "cat",
    "sneezing",
    "vet",
    "novel",
    "reading",
    "running",
    "marathon",
    "Caroline",
    "Melanie",
    "adoption",
    "painting",
]


RARE = [
    f"{a}{b}{c}"
    for a in ("blue", "red", "old", "new", "tall")
    for b in ("fox", "owl", "elm", "bay", "cap", "den", "fin", "gem")
    for c in ("ra", "to", "mi", "ke", "su", "no", "pe", "lu")
]  # 320 words: each in a few of the 120 memories, the feedback rounds' terms


class UseNamed(HashEmbeddings):
    """Hash embeddings under the bundled model's name, so the store applies its judgement."""

    model_name = USE_MODEL_NAME


def _store(judged: bool) -> HybridStore:
    emb = UseNamed(dims=64)
    store = HybridStore(
        index={"dims": emb.dims, "embed": emb, "fields": ["text"]},
        config=MemoryConfig(store={"relevance_judgement": judged}),
        clock=ManualClock(1_700_000_000.0),
    )
    rng = random.Random(7)
    for i in range(120):  # common words and rare ones (the feedback rounds' terms)
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 8))]
        words += [rng.choice(RARE) for _ in range(rng.randint(3, 8))]
        rng.shuffle(words)
        store.put(("u",), f"m{i}", {"text": " ".join(words), "session": f"s{i // 10}"})
    return store


def test_the_judgement_moves_no_keyword_score_and_no_rank() -> None:
    judged, plain = _store(True), _store(False)
    assert judged.relevance_judgement is not None and plain.relevance_judgement is None
    rng = random.Random(11)
    queries = [
        " ".join(rng.choice([*WORDS, *RARE]) for _ in range(rng.randint(2, 6))) + "?"
        for _ in range(150)
    ]
    queries += ["What did Caroline say about the adoption?", "Melanie: running\nAssistant: ok"]
    for q in queries:
        a = judged.search(("u",), query=q, limit=10)
        b = plain.search(("u",), query=q, limit=10)
        assert [h.key for h in a] == [h.key for h in b], q
        for x, y in zip(a, b, strict=True):
            for name in ("bm25", "bm25_norm", "vector", "vector_norm", "evidence"):
                assert x.components[name] == y.components[name], (q, x.key, name)
    judged.close()
    plain.close()
