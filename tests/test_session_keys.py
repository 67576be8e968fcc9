"""Which value key names an item's session: the common names all give the conversation-context
smoothing, the list is configurable, and `reindex()` applies a change to stored items."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import HashEmbeddings

from langmem_plus import HybridStore, MemoryConfig
from langmem_plus.clock import ManualClock

EMB = HashEmbeddings(32)
INDEX = {"dims": 32, "embed": EMB, "fields": ["text"]}
# Two sessions; the answers share no word with the question, their neighbours do.
TURNS = [
    ("s1", "Nico: what breed is your new puppy?"),
    ("s1", "Lena: a dachshund, his name is Pretzel"),
    ("s1", "Nico: cute, how old?"),
    ("s2", "Lena: work was busy this week"),
    ("s2", "Nico: mine too, deadlines everywhere"),
    ("s2", "Lena: at least the weekend is close"),
]
QUERY = "what breed is the puppy"


def _ranking(key: str | None, config: MemoryConfig | None = None) -> list[tuple[str, float]]:
    store = HybridStore(index=INDEX, config=config, clock=ManualClock())
    for i, (session, text) in enumerate(TURNS):
        value: dict[str, Any] = {"text": text}
        if key is not None:
            value[key] = session
        store.put(("conv",), f"t{i}", value)
    hits = store.search(("conv",), query=QUERY, limit=6)
    store.close()
    return [(h.key, round(float(h.score or 0.0), 9)) for h in hits]


def test_the_smoothing_changes_the_ranking_here() -> None:
    # the premise of the tests below: without a session the scores differ
    assert _ranking(None) != _ranking("session_id")


@pytest.mark.parametrize("key", ["session", "thread_id", "conversation_id", "chat_id"])
def test_every_common_session_key_gives_the_same_ranking_as_session_id(key: str) -> None:
    assert _ranking(key) == _ranking("session_id")


def test_the_session_keys_are_configurable() -> None:
    custom = MemoryConfig(store={"session_keys": ["dialogue"]})
    assert _ranking("dialogue", custom) == _ranking("session_id")
    # a key left out of the list is not read any more
    assert _ranking("session_id", custom) == _ranking(None)


def test_a_bad_session_key_list_is_refused() -> None:
    with pytest.raises(ValueError, match="session_keys"):
        MemoryConfig(store={"session_keys": [""]})
    with pytest.raises(ValueError):
        MemoryConfig(store={"session_keys": []})


def test_reindex_applies_a_new_key_list_to_stored_items(tmp_path: Any) -> None:
    path = tmp_path / "m.db"
    with HybridStore(path, index=INDEX, clock=ManualClock()) as store:
        for i, (session, text) in enumerate(TURNS):
            store.put(("conv",), f"t{i}", {"text": text, "dialogue": session})
    custom = MemoryConfig(store={"session_keys": ["dialogue"]})
    with HybridStore(path, index=INDEX, config=custom, clock=ManualClock()) as store:
        before = [
            (h.key, round(float(h.score or 0.0), 9))
            for h in store.search(("conv",), query=QUERY, limit=6)
        ]
        store.reindex()
        after = [
            (h.key, round(float(h.score or 0.0), 9))
            for h in store.search(("conv",), query=QUERY, limit=6)
        ]
    assert {k for k, _ in before} == {k for k, _ in after}
    assert [k for k, _ in after] == [k for k, _ in _ranking("dialogue", custom)]
    assert before != after
