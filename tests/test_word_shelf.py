"""The common words' vectors are kept in the database by model (store/sqlite/wordshelf.py): a new
store handle or process reads them instead of embedding the words again, ranks exactly as the
handle that embedded them, writes them only inside a write transaction (or at close), and
ignores a stored row it cannot read whole. A model known by its class name alone keeps none.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from conftest import CountingEmbeddings
from langchain_core.embeddings import Embeddings

from langmem_plus import HybridStore
from langmem_plus.clock import ManualClock
from langmem_plus.store.tuning import StoreTuning

MEMORIES = [
    "Oskar prefers a window seat and always takes the 7am train to the Hamburg office, rain or "
    "shine 🚆",
    "Oskar's birthday is on March 14th and he is a big fan of dark chocolate, the 85 % kind",
    "Had a long 1:1 with Oskar about the Q3 roadmap, he wants the billing migration done first",
    "Oskar is moving to the Berlin office in September, his family stays in Munich until then",
    "Oskar plays five-a-side football on Thursday evenings, so keep those free for him",
    "Oskar recommended Thinking in Systems over lunch, says it changed how he plans",
    "I'm severely allergic to shellfish, so any restaurant we pick needs a proper allergen menu",
    "The team has two vegetarians, Priya and Tom, and Lena doesn't drink alcohol",
    "Deploys go out on Fridays after the standup",
    "My manager asked me to keep the offsite budget under 2,000 euros",
]
QUERY = "booking a team dinner with Oskar next week, anything I should watch out for?"


class Counting(CountingEmbeddings):
    """Counting hash embeddings of the dimension the tests store."""

    def __init__(self) -> None:
        super().__init__(32)


class Unnamed(Embeddings):
    """The same vectors from a class with no model name of its own."""

    def __init__(self) -> None:
        self.inner = Counting()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def _open(path: Path, emb: Embeddings, read_only: bool | None = None) -> HybridStore:
    return HybridStore(
        path,
        index={"embed": emb, "dims": 32, "fields": ["text"]},
        clock=ManualClock(1_700_000_000.0),
        read_only=read_only,
    )


def _ranking(store: HybridStore, query: str = QUERY) -> list[tuple[str, float]]:
    return [(h.key, h.score or 0.0) for h in store.search(("u",), query=query, limit=10)]


def _filled(path: Path) -> None:
    store = _open(path, Counting())
    for i, text in enumerate(MEMORIES):
        store.put(("u",), f"m{i}", {"text": text})
    store.close()


def _rows(path: Path) -> list[tuple[str, str, int]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT model, word, length(vec) FROM word_vectors").fetchall()


def test_a_new_handle_reads_the_word_instead_of_embedding_it(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    _filled(path)
    emb = Counting()
    store = _open(path, emb)
    first = _ranking(store)
    assert "Oskar" in emb.embedded  # the common word, embedded on the first search
    assert _rows(path) == []  # a search writes nothing
    store.put(("u",), "extra", {"text": "Lena prefers Italian food"})  # the next write keeps it
    # a one-word hash vector is +-1 in one place: float32 holds it exactly (4 B a dimension)
    assert _rows(path) == [("Counting:test-hash-embeddings@32", "Oskar", 32 * 4)]
    store.close()

    again = Counting()
    reopened = _open(path, again)
    _ranking(reopened)
    assert "Oskar" not in again.embedded
    reopened.delete(("u",), "extra")
    assert _ranking(reopened) == first  # bit for bit the ranking of the handle that embedded
    reopened.close()


def test_words_embedded_by_searches_alone_are_kept_at_close(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    _filled(path)
    store = _open(path, Counting())
    _ranking(store)
    store.close()
    assert [w for _m, w, _n in _rows(path)] == ["Oskar"]
    emb = Counting()
    with _open(path, emb) as reopened:
        _ranking(reopened)
    assert "Oskar" not in emb.embedded


def test_a_model_without_a_name_of_its_own_keeps_no_words(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    emb = Unnamed()
    store = _open(path, emb)
    for i, text in enumerate(MEMORIES):
        store.put(("u",), f"m{i}", {"text": text})
    _ranking(store)
    store.close()
    assert _rows(path) == []
    again = Unnamed()
    with _open(path, again) as reopened:
        _ranking(reopened)
    assert "Oskar" in again.inner.embedded


def test_a_row_that_cannot_be_read_whole_is_embedded_again(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    _filled(path)
    store = _open(path, Counting())
    first = _ranking(store)
    store.close()
    key = _rows(path)[0][0]
    for bad in (b"\x00" * 7, np.full(32, np.nan).tobytes(), np.ones(64).tobytes(), "not bytes"):
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE word_vectors SET vec = ? WHERE model = ?", (bad, key))
        emb = Counting()
        with _open(path, emb) as reopened:
            assert _ranking(reopened) == first
        assert "Oskar" in emb.embedded
        assert _rows(path)[0][2] == 32 * 4  # written whole again at close


def test_a_read_only_store_reads_the_words_and_writes_none(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    _filled(path)
    store = _open(path, Counting())
    _ranking(store)
    store.close()
    emb = Counting()
    with _open(path, emb, read_only=True) as ro:
        _ranking(ro)
        _ranking(ro, "what does Oskar do on Thursday evenings with Priya?")
    assert "Oskar" not in emb.embedded
    assert [w for _m, w, _n in _rows(path)] == ["Oskar"]  # nothing new written


def test_words_waiting_for_a_write_are_bounded(tmp_path: Path) -> None:
    from langmem_plus.store.sqlite import wordshelf

    path = tmp_path / "m.db"
    _filled(path)
    store = _open(path, Counting())
    shelf = store._storage.words  # type: ignore[attr-defined]
    vec = np.ones(32) / np.sqrt(32)
    shelf.keep({f"w{i}": vec for i in range(wordshelf.MAX_PENDING + 10)})
    shelf.keep({"wrong size": np.ones(8)})
    assert len(shelf._pending) == wordshelf.MAX_PENDING
    assert "w0" not in shelf._pending and f"w{wordshelf.MAX_PENDING + 9}" in shelf._pending
    store.close()
    assert len(_rows(path)) == wordshelf.MAX_PENDING


class Float32Counting(Counting):
    """Embeddings whose values are float32 numbers (as the bundled USE model's are)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [_as_f32(v) for v in super().embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        return _as_f32(super().embed_query(text))


class Float64Counting(Counting):
    """Embeddings whose values float32 cannot hold (a third of the hash vector)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[x / 3 for x in v] for v in super().embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        return [x / 3 for x in super().embed_query(text)]


def _as_f32(v: list[float]) -> list[float]:
    return np.asarray(v, dtype=np.float32).astype(np.float64).tolist()


@pytest.mark.parametrize(("kind", "width"), [(Float32Counting, 4), (Float64Counting, 8)])
def test_a_word_takes_the_bytes_its_values_need_and_reads_back_exactly(
    tmp_path: Path, kind: type[Counting], width: int
) -> None:
    path = tmp_path / "m.db"
    store = _open(path, kind())
    for i, text in enumerate(MEMORIES):
        store.put(("u",), f"m{i}", {"text": text})
    first = _ranking(store)
    store.close()
    assert [(w, n) for _m, w, n in _rows(path)] == [("Oskar", 32 * width)]
    emb = kind()
    with _open(path, emb) as reopened:
        assert _ranking(reopened) == first  # bit for bit
    assert "Oskar" not in emb.embedded


def test_keep_word_vectors_false_keeps_none(tmp_path: Path) -> None:

    path = tmp_path / "m.db"
    cfg = StoreTuning(keep_word_vectors=False)
    emb = Counting()
    store = HybridStore(path, index={"embed": emb, "dims": 32, "fields": ["text"]}, tuning=cfg)
    for i, text in enumerate(MEMORIES):
        store.put(("u",), f"m{i}", {"text": text})
    _ranking(store)
    store.close()
    assert "Oskar" in emb.embedded
    assert _rows(path) == []
