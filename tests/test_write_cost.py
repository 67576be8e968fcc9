"""What a write costs in SQL: a put that changes only an item's other fields keeps its
postings and vectors (store/sqlite/writer.py `index_key`), and one `Memory.add` of an exchange
runs a bounded number of statements (benchmarks/add_cost.py measures the same on LoCoMo)."""

from __future__ import annotations

import sqlite3

from langmem_plus import HybridStore
from langmem_plus.text import tokenize


def _index_rows(path) -> tuple[list, list, list]:
    conn = sqlite3.connect(path)
    try:
        postings = conn.execute(
            "SELECT term_id, item_id, tf FROM postings ORDER BY 1, 2"
        ).fetchall()
        vectors = conn.execute("SELECT id, item_id, path FROM vectors ORDER BY id").fetchall()
        logs = conn.execute("SELECT op FROM vec_log ORDER BY seq").fetchall()
    finally:
        conn.close()
    return postings, vectors, logs


def test_a_put_of_the_same_text_keeps_postings_and_vectors(tmp_path, hash_index):
    path = tmp_path / "s.db"
    store = HybridStore(path, index=hash_index)
    store.put(("m",), "a", {"text": "green tea in the morning", "n": 1})
    before = _index_rows(path)
    store.put(("m",), "a", {"text": "green tea in the morning", "n": 2})  # text unchanged
    assert _index_rows(path) == before  # no vector dropped and added again, no posting
    assert store.get(("m",), "a").value["n"] == 2
    assert [h.key for h in store.search(("m",), query="green tea")] == ["a"]

    store.put(("m",), "a", {"text": "black coffee at night", "n": 3})  # text changed
    postings, vectors, _logs = _index_rows(path)
    assert postings != before[0] and vectors[0][0] != before[1][0]
    assert [h.key for h in store.search(("m",), query="coffee")] == ["a"]
    conn = sqlite3.connect(path)
    terms = {t for (t,) in conn.execute("SELECT term FROM terms")}
    conn.close()
    assert terms == set(tokenize("black coffee at night"))  # the old text's terms are gone
    store.close()
    report = HybridStore(path, index=hash_index)
    assert report.check()["ok"]
    report.close()


def test_index_fields_changed_reindex_the_same_value(tmp_path, hash_index):
    """The key is what was indexed, not the value: other index fields index it again."""
    path = tmp_path / "s.db"
    store = HybridStore(path, index=hash_index)
    store.put(("m",), "a", {"text": "green tea", "note": "violin lessons"})
    store.put(("m",), "a", {"text": "green tea", "note": "violin lessons"}, index=["note"])
    assert [h.key for h in store.search(("m",), query="violin")] == ["a"]
    store.put(("m",), "a", {"text": "green tea", "note": "violin lessons"}, index=False)
    assert store.search(("m",), query="violin") == []
    assert store.check()["ok"]
    store.close()
