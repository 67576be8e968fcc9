"""The substring fallback (no keyword evidence at all): stop words and single characters never
match inside unrelated words; a real sub-word still does."""

from __future__ import annotations

from langmem_plus import HybridStore

ITEMS = [
    ("a", "Deploys go out on Fridays"),
    ("b", "User prefers dark mode"),
    ("c", "Meeting with Tom tomorrow"),
    ("d", "用户喜欢喝咖啡"),
    ("e", "我们用Kubernetes部署服务"),
]


def _store() -> HybridStore:
    store = HybridStore(index=False)  # keyword side only: what the fallback decides is visible
    for key, text in ITEMS:
        store.put(("u",), key, {"text": text})
    return store


def test_stop_words_and_single_letters_do_not_match_inside_words() -> None:
    store = _store()
    # "i" is inside "Meeting", "to" inside "Tom tomorrow", "o" in "go out": none is evidence
    assert store.search(("u",), query="I like to drink tea") == []
    assert store.search(("u",), query="what do I like to drink") == []
    assert store.search(("u",), query="a o i") == []


def test_a_sub_word_with_punctuation_still_matches() -> None:
    store = _store()
    hits = store.search(("u",), query="kubern?")
    assert [h.key for h in hits] == ["e"]
    assert hits[0].components["bm25"] > 0
