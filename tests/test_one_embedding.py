"""One embedding per exchange: `Memory.add` embeds the episode's text once, as a document,
and its earlier-versions search reuses that vector as its dense side (its keyword side stays
the user's words); a store that is not a HybridStore keeps searching with the words."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from conftest import HashEmbeddings
from langgraph.store.memory import InMemoryStore

from langmem_plus import HybridStore, Memory
from langmem_plus.episodic.episodes import EpisodeKeeper
from langmem_plus.errors import ValidationError
from langmem_plus.model.records import MemoryRecord

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
EARLIER = ("My sister Anna lives in Lyon.", "Lyon is a beautiful city.")
LATER = ("Anna visited me last weekend from Lyon.", "How nice to see her.")  # no change reported


class Counting(HashEmbeddings):
    """Hash embeddings that record each call: ("doc", texts) or ("query", text)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, object]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(("doc", list(texts)))
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.calls.append(("query", text))
        return super().embed_query(text)


def _hybrid(path, emb: HashEmbeddings) -> HybridStore:  # type: ignore[no-untyped-def]
    return HybridStore(path, index={"dims": emb.dims, "embed": emb, "fields": ["text"]})


def _add(mem: Memory, said: str, reply: str, day: int) -> str:
    msgs = [{"role": "user", "content": said}, {"role": "assistant", "content": reply}]
    return mem.add(msgs, "u", session_id=f"s{day}", timestamp=T0 + timedelta(days=day))[0]


def test_an_exchange_is_embedded_once_and_its_search_embeds_no_query(tmp_path):
    emb = Counting()
    mem = Memory(tmp_path / "m.db", embeddings=emb)
    first = _add(mem, *EARLIER, day=0)
    emb.calls.clear()
    later = _add(mem, *LATER, day=7)
    queries = [c for c in emb.calls if c[0] == "query"]
    # the exchange's text (single words are the ranker's common-word vectors, not a record)
    docs = [t for kind, texts in emb.calls if kind == "doc" for t in texts if " " in t]  # type: ignore[union-attr]
    assert queries == []
    assert len(docs) == 1 and LATER[0] in docs[0], emb.calls
    assert mem.get(later).metadata.get("follows") == [first]  # the search found it
    assert mem.store.followers(("memories", "u"), [first]) == {first: [later]}
    # the stored vector is the exchange's: a search with its words finds it first
    (ns,) = mem.store.locate(later)
    assert mem.store.search(ns, query=LATER[0], filter={"kind": "episodic"})[0].key == later
    mem.close()


def test_the_same_links_as_a_search_with_the_words(tmp_path):
    """The document vector links what a search embedding the user's words links here."""
    found = []
    for name, store in (("hybrid", None), ("memory", InMemoryStore())):
        keeper = EpisodeKeeper()
        target = store or _hybrid(tmp_path / f"{name}.db", HashEmbeddings())
        ids = []
        for day, (said, reply) in enumerate((EARLIER, LATER)):
            turns = [{"role": "user", "text": said}, {"role": "assistant", "text": reply}]
            kept = keeper.keep(
                target,
                ("u",),
                turns,
                session_id=f"s{day}",
                occurred_at=T0 + timedelta(days=7 * day),
            )
            ids.append(kept.episode_id)
        rec = MemoryRecord.from_item(target.get(("u",), ids[1]))
        found.append(rec.metadata.get("follows") == [ids[0]])
    assert found == [True, True]


def test_search_takes_a_given_vector_and_checks_it(tmp_path):
    emb = Counting()
    store = _hybrid(tmp_path / "s.db", emb)
    store.put(("m",), "a", {"text": "green tea in the morning"})
    store.put(("m",), "b", {"text": "black coffee at night"})
    given = store.document_vectors([{"text": "black coffee at night"}])[0]
    assert given is not None and given.vectors.shape == (1, emb.dims)
    emb.calls.clear()
    hits = store.search(("m",), query="coffee", query_vector=given.vectors[0])
    assert hits[0].key == "b"
    assert not [c for c in emb.calls if c[0] == "query"]
    for bad in ([1.0, 2.0], [float("nan")] * emb.dims, "abc"):
        with pytest.raises(ValidationError):
            store.search(("m",), query="coffee", query_vector=bad)  # type: ignore[arg-type]
    store.close()


def test_given_vectors_are_stored_only_for_the_text_they_embed(tmp_path):
    emb = Counting()
    store = _hybrid(tmp_path / "s.db", emb)
    from langgraph.store.base import PutOp

    given = store.document_vectors([{"text": "green tea in the morning"}])[0]
    assert given is not None
    far = given._replace(vectors=-given.vectors)  # a vector unlike the text's own
    emb.calls.clear()
    store.write_with(
        [PutOp(("m",), "a", {"text": "green tea in the morning"})],
        lambda: None,
        vectors={(("m",), "a"): far},
    )
    assert not [c for c in emb.calls if c[0] == "doc" and " " in c[1][0]]  # type: ignore[index]
    # stored as given: the dense side scores it against the given vector
    hit = store.search(("m",), query="zzz", query_vector=-given.vectors[0])
    assert [h.key for h in hit] == ["a"]
    # another text under the same key: embedded as usual, the given vectors are not used
    store.write_with(
        [PutOp(("m",), "a", {"text": "black coffee at night"})],
        lambda: None,
        vectors={(("m",), "a"): far},
    )
    assert any(c[0] == "doc" and c[1] == ["black coffee at night"] for c in emb.calls)
    assert np.isfinite(given.vectors).all()
    store.close()


def test_an_exchange_and_its_facts_are_embedded_in_one_call(tmp_path):
    """The episode and the facts drawn from it share one document embedding call."""
    emb = Counting()
    mem = Memory(tmp_path / "f.db", embeddings=emb)
    _add(mem, *EARLIER, day=0)
    emb.calls.clear()
    _add(mem, "I work as a nurse at the city hospital.", "That sounds demanding.", day=7)
    record_calls = [
        texts
        for kind, texts in emb.calls
        if kind == "doc" and any(" " in t for t in texts)  # type: ignore[union-attr]
    ]
    assert [c for c in emb.calls if c[0] == "query"] == []
    assert len(record_calls) == 1, emb.calls
    texts = record_calls[0]
    assert len(texts) >= 2 and any("nurse" in t and "demanding" in t for t in texts)  # type: ignore[union-attr]
    mem.close()


def test_asearch_takes_a_given_vector_as_search_does(tmp_path):
    import asyncio

    store = _hybrid(tmp_path / "a.db", HashEmbeddings())
    store.put(("u",), "k", {"text": "black coffee at night"})
    (given,) = store.document_vectors([{"text": "black coffee at night"}])
    assert given is not None
    sync = store.search(("u",), query="coffee", query_vector=given.vectors[0])
    got = asyncio.run(store.asearch(("u",), query="coffee", query_vector=given.vectors[0]))
    assert [h.key for h in got] == [h.key for h in sync] == ["k"]
    with pytest.raises(ValidationError):
        asyncio.run(store.asearch(("u",), query="coffee", query_vector=[1.0, 2.0]))
    with pytest.raises(ValidationError):
        store.document_vectors({"text": "not a list"})  # type: ignore[arg-type]
    store.close()
