"""SQLite is the truth: reopen, lose the FAISS snapshot, crash mid-way — same answers."""

from __future__ import annotations

import pytest
from conftest import HashEmbeddings

from langmem_plus import EmbeddingModelMismatchError, HybridStore
from langmem_plus.store.db.database import SCHEMA_VERSION
from langmem_plus.store.tuning import StoreTuning

QUERIES = ["川菜", "database postgres", "sister Berlin", "cat"]
# These tests are about the FAISS snapshot: write one even for a tiny store.
SNAP = StoreTuning(snapshot_min_vectors=0)


def _fill(store: HybridStore) -> None:
    store.put(("memories", "u1"), "a", {"text": "用户喜欢吃川菜"})
    store.put(("memories", "u1"), "b", {"text": "The project database is PostgreSQL 15"})
    store.put(("memories", "u1"), "c", {"text": "User's sister lives in Berlin"})
    store.put(("memories", "u1"), "d", {"text": "User has a cat"})
    store.delete(("memories", "u1"), "d")


def _answers(store: HybridStore) -> list[list[tuple[str, float]]]:
    return [
        [(h.key, round(h.score, 4)) for h in store.search(("memories", "u1"), query=q, limit=3)]
        for q in QUERIES
    ]


def test_close_reopen_same_answers(tmp_path, hash_index):
    path = tmp_path / "m.db"
    s = HybridStore(path, index=hash_index, tuning=SNAP)
    _fill(s)
    before = _answers(s)
    s.close()
    assert (tmp_path / "m.db.faiss").exists()
    s2 = HybridStore(path, index=hash_index, tuning=SNAP)
    assert not s2._vec.rebuilt  # served from the snapshot
    assert _answers(s2) == before
    assert s2.get(("memories", "u1"), "a").value == {"text": "用户喜欢吃川菜"}
    s2.close()


def test_missing_faiss_file_is_rebuilt(tmp_path, hash_index):
    path = tmp_path / "m.db"
    s = HybridStore(path, index=hash_index, tuning=SNAP)
    _fill(s)
    before = _answers(s)
    s.close()
    (tmp_path / "m.db.faiss").unlink()
    s2 = HybridStore(path, index=hash_index, tuning=SNAP)
    assert s2._vec.rebuilt
    assert _answers(s2) == before
    s2.close()


def test_stale_snapshot_is_not_served(tmp_path, hash_index):
    path = tmp_path / "m.db"
    s = HybridStore(path, index=hash_index, tuning=SNAP)
    _fill(s)
    s.close()
    # Another writer changes the database without touching the snapshot (e.g. a crash
    # after COMMIT but before the snapshot was rewritten).
    other = HybridStore(path, index=hash_index, tuning=SNAP)
    other.put(("memories", "u1"), "e", {"text": "User plays the cello"})
    other.delete(("memories", "u1"), "a")
    other._db.close()  # simulate a crash: no snapshot save
    other._closed = True
    s2 = HybridStore(path, index=hash_index, tuning=SNAP)
    hits = s2.search(("memories", "u1"), query="cello", limit=5)
    assert hits[0].key == "e"
    assert "a" not in {h.key for h in s2.search(("memories", "u1"), query="川菜", limit=5)}
    assert s2._vec.count() == 3
    s2.close()


def test_corrupt_snapshot_rebuilds(tmp_path, hash_index):
    path = tmp_path / "m.db"
    s = HybridStore(path, index=hash_index, tuning=SNAP)
    _fill(s)
    before = _answers(s)
    s.close()
    (tmp_path / "m.db.faiss").write_bytes(b"garbage")
    s2 = HybridStore(path, index=hash_index, tuning=SNAP)
    assert _answers(s2) == before
    s2.close()


def test_two_handles_see_each_others_writes(tmp_path, hash_index):
    path = tmp_path / "m.db"
    a = HybridStore(path, index=hash_index)
    b = HybridStore(path, index=hash_index)
    a.put(("n",), "x", {"text": "violin lessons on monday"})
    hits = b.search(("n",), query="violin", limit=1)
    assert hits and hits[0].key == "x" and hits[0].components["vector"] > 0
    b.delete(("n",), "x")
    assert a.search(("n",), query="violin") == []
    a.close()
    b.close()


def test_model_mismatch_is_reported(tmp_path, hash_index):
    path = tmp_path / "m.db"
    s = HybridStore(path, index=hash_index)
    _fill(s)
    s.close()
    other = HashEmbeddings(dims=32)
    other.model_name = "another-model"
    with pytest.raises(EmbeddingModelMismatchError, match="test-hash-embeddings"):
        HybridStore(path, index={"dims": 32, "embed": other})
    s3 = HybridStore.reembed(path, index={"dims": 32, "embed": other})
    assert s3.search(("memories", "u1"), query="sister Berlin", limit=1)[0].key == "c"
    assert s3.stats()["vectors"] == 3
    s3.close()


def test_schema_version_and_pragmas(tmp_path, hash_index):
    path = tmp_path / "m.db"
    s = HybridStore(path, index=hash_index)
    conn = s._db.conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    s.close()


def test_keyword_only_store_reopens(tmp_path):
    path = tmp_path / "k.db"
    s = HybridStore(path, index=False)
    s.put(("a",), "k", {"text": "hello world"})
    s.close()
    s2 = HybridStore(path, index=False)
    assert s2.search(("a",), query="world")[0].key == "k"
    s2.close()


def test_reindex_rebuilds_everything(tmp_path, hash_index):
    path = tmp_path / "m.db"
    s = HybridStore(path, index=hash_index)
    _fill(s)
    before = _answers(s)
    with s._db.write() as conn:
        conn.execute("DELETE FROM postings")
        conn.execute("DELETE FROM terms")
    assert s.reindex() == {"items": 3, "vectors": 3}
    assert _answers(s) == before
    s.close()
