"""Deletion is real: delete, reset and cleanup leave no trace in SQLite, the keyword index
(terms/postings), the vectors (table and FAISS), nor — after VACUUM — in the database file."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from langmem_plus.memory import Memory
from langmem_plus.model.records import utcnow
from langmem_plus.store.hybrid import HybridStore
from langmem_plus.store.tuning import StoreTuning

SECRET = "zebrafishmarker"
SECRET_ZH = "紫罗兰密码"


@pytest.fixture
def mem(tmp_path, hash_embeddings):
    m = Memory(tmp_path / "mem.db", embeddings=hash_embeddings)
    yield m
    m.close()


def _sql(mem: Memory, query: str, *args: object) -> int:
    with mem.store.db.read() as conn:
        return int(conn.execute(query, args).fetchone()[0])


def _traces(mem: Memory, needle: str) -> dict[str, int]:
    """Every place a text could linger, as row counts."""
    like = f"%{needle}%"
    return {
        "items": _sql(mem, "SELECT COUNT(*) FROM items WHERE value LIKE ?", like),
        "terms": _sql(mem, "SELECT COUNT(*) FROM terms WHERE term LIKE ?", like),
        "postings": _sql(
            mem,
            "SELECT COUNT(*) FROM postings p JOIN terms t ON t.id = p.term_id WHERE t.term LIKE ?",
            like,
        ),
        "turns": _sql(mem, "SELECT COUNT(*) FROM turns WHERE content LIKE ?", like),
        "symbols": _sql(
            mem,
            "SELECT COUNT(*) FROM symbol_index WHERE symbol LIKE ? OR context LIKE ?",
            like,
            like,
        ),
        "summaries": _sql(mem, "SELECT COUNT(*) FROM rolling_summaries WHERE summary LIKE ?", like),
    }


def _orphans(mem: Memory) -> dict[str, int]:
    """Index rows whose item is gone, and FAISS vectors beyond the vectors table."""
    stats = mem.store.stats()
    return {
        "postings": _sql(
            mem, "SELECT COUNT(*) FROM postings WHERE item_id NOT IN (SELECT id FROM items)"
        ),
        "vectors": _sql(
            mem, "SELECT COUNT(*) FROM vectors WHERE item_id NOT IN (SELECT id FROM items)"
        ),
        "faiss_extra": stats["faiss_vectors"] - stats["vectors"],
        "dead_terms": _sql(mem, "SELECT COUNT(*) FROM terms WHERE df <= 0"),
    }


def _file_bytes(mem: Memory) -> bytes:
    mem.vacuum()
    path = Path(str(mem.store.db.path))
    data = b""
    for p in (path, Path(f"{path}-wal")):
        if p.exists():
            data += p.read_bytes()
    return data


def _absent(mem: Memory, *needles: str) -> None:
    for needle in needles:
        assert not any(_traces(mem, needle).values()), _traces(mem, needle)
        assert needle.encode() not in _file_bytes(mem)
    assert not any(_orphans(mem).values()), _orphans(mem)


def test_sanity_the_checks_see_live_data(mem):
    mem.add(f"my code word is {SECRET} {SECRET_ZH}", "alice", infer=False)
    mem.add_turn("alice", "s", "user", f"{SECRET}Service crashed")
    assert _traces(mem, SECRET)["items"] == 2 and _traces(mem, SECRET)["terms"] >= 1
    # the logged turn reads its words from its searchable mirror item: stored once
    assert _traces(mem, SECRET)["turns"] == 0
    assert [t.content for t in mem.store.conversations.turns("alice")] == [
        f"{SECRET}Service crashed"
    ]
    assert mem.store.stats()["faiss_vectors"] == 2
    assert SECRET.encode() in _file_bytes(mem)
    assert SECRET_ZH.encode() in _file_bytes(mem)


def test_delete_one_memory_leaves_no_trace(mem):
    (mid,) = mem.add(f"my code word is {SECRET} {SECRET_ZH}", "alice", infer=False)
    mem.update(mid, "alice", text=f"my code word is still {SECRET} {SECRET_ZH}")
    (keep,) = mem.add("I like tea", "alice", infer=False)
    vectors_before = mem.store.stats()["vectors"]
    mem.delete(mid, "alice")
    assert mem.store.stats()["vectors"] == vectors_before - 1
    assert all(SECRET not in h.text for h in mem.search(SECRET, "alice"))
    _absent(mem, SECRET, SECRET_ZH)
    assert mem.get(keep, "alice").text == "I like tea"


def test_reset_removes_everything_of_the_user(mem):
    mem.add(f"{SECRET} fact", "alice", infer=False)
    mem.add(f"another {SECRET_ZH} fact", "alice", infer=False)
    mem.add_turn("alice", "s1", "user", f"{SECRET}Service fails in src/{SECRET}.ts")
    mem.summarize("alice", "s1")
    mem.put_profile("alice", background=f"works on {SECRET}")
    mem.add("bob keeps his tea", "bob", infer=False)
    counts = mem.reset("alice")
    assert counts["memories_deleted"] == 2 and counts["turns_deleted"] == 1
    assert mem.store.conversations.get_profile("alice") is None
    _absent(mem, SECRET, SECRET_ZH)
    assert mem.get_all("bob").total == 1


def test_cleanup_by_age_conversation_and_all(mem):
    old = utcnow() - timedelta(days=45)
    mem.add_turn("alice", "old", "user", f"{SECRET} in OldService", created_at=old)
    mem.add_turn("alice", "live", "user", "LiveService is fine")
    out = mem.cleanup(older_than=timedelta(days=30))
    assert out["turns_deleted"] == 1
    _absent(mem, SECRET)
    assert mem.recall("LiveService", "alice")["results"]

    mem.add_turn("alice", "conv-x", "user", f"{SECRET_ZH} 讨论")
    mem.summarize("alice", "conv-x")
    mem.cleanup(session_id="conv-x")
    _absent(mem, SECRET_ZH)

    mem.add(f"{SECRET} memory", "bob", infer=False)
    out = mem.cleanup(everything=True)
    assert out["memories_deleted"] == 1
    _absent(mem, SECRET)
    assert mem.store.stats()["items"] == 0 and mem.store.stats()["faiss_vectors"] == 0


def test_faiss_snapshot_does_not_resurrect_deleted_vectors(tmp_path, hash_embeddings):
    path = tmp_path / "snap.db"
    snap = StoreTuning(snapshot_min_vectors=0)  # write the snapshot even for one vector
    index = {"embed": hash_embeddings}
    with HybridStore(path, index=index, tuning=snap) as store, Memory(store=store) as m:
        (mid,) = m.add(f"{SECRET} snapshot", "alice", infer=False)
        m.delete(mid, "alice")
    assert (tmp_path / "snap.db.faiss").exists()
    with HybridStore(path, index=index, tuning=snap) as store, Memory(store=store) as m:
        stats = m.store.stats()
        assert stats["vectors"] == 0 and stats["faiss_vectors"] == 0
        assert all(SECRET not in h.text for h in m.search(SECRET, "alice"))
