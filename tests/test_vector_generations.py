"""The vector snapshot never runs code, and a reindex is a new generation every handle sees.

A crafted `<db>.faiss` beside a database must not execute when the database is opened, and a
tampered or foreign snapshot is ignored (rebuilt from SQLite). `reindex()` replaces every
vector under new ids: another open handle, a stale snapshot, or a handle that missed log entries
must all rebuild rather than serve the old generation.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from langmem_plus import HybridStore
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.store.vector.snapshot import SnapshotError, read_snapshot, write_snapshot

NS = ("memories", "u1")
SNAP = StoreTuning(snapshot_min_vectors=0)  # write a snapshot even for a tiny store
TEXTS = {
    "a": "用户喜欢吃川菜，不吃香菜",
    "b": "The project database is PostgreSQL 15",
    "c": "User's sister lives in Berlin and works at a bakery",
    "d": "User has a cat named Miso",
    "e": "部署在周五下午进行",
    "f": "User prefers dark mode in every editor",
    "g": "用户的生日是三月十二日",
    "h": "The build runs on Bazel with remote caching",
}
QUERIES = ["川菜 香菜", "database", "sister bakery Berlin", "cat Miso", "部署 周五", "生日"]


def _fill(store: HybridStore) -> None:
    """Items whose vector ids end up far from their item ids (updates and deletes)."""
    for k, t in TEXTS.items():
        store.put(NS, k, {"text": t})
    for k in ("a", "c", "e"):  # new vectors under new ids; the old ones removed
        store.put(NS, k, {"text": TEXTS[k] + "!"})
    store.delete(NS, "d")


def _answers(store: HybridStore) -> list[list[tuple[str, float, float]]]:
    """Per query: the hits' keys, scores and vector cosines."""
    return [
        [
            # recency moves with the clock between calls: compare scores to 3 places
            (h.key, round(h.score, 3), round(float(h.components["vector"]), 4))
            for h in store.search(NS, query=q, limit=8)
        ]
        for q in QUERIES
    ]


def _index_state(store: HybridStore) -> dict[int, int]:
    """vector id -> namespace id, as the handle's FAISS indexes hold them (after a sync)."""
    with store._db.read() as conn:
        store._vec.sync(conn)
    return dict(store._vec._vec_ns)


def _db_state(store: HybridStore) -> dict[int, int]:
    """vector id -> namespace id, as SQLite holds them (the truth)."""
    with store._db.read() as conn:
        return dict(conn.execute("SELECT id, ns_id FROM vectors").fetchall())


class _Boom:
    """Unpickling this creates a marker file: proof that opening ran code."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (Path.touch, (Path(self.marker),))


def test_crafted_pickle_beside_database_does_not_run(tmp_path, hash_index):
    path = tmp_path / "m.db"
    s = HybridStore(path, index=hash_index, tuning=SNAP)
    _fill(s)
    expected = _answers(s)
    s.close()
    marker = tmp_path / "pwned"
    (tmp_path / "m.db.faiss").write_bytes(pickle.dumps(_Boom(str(marker))))
    s2 = HybridStore(path, index=hash_index, tuning=SNAP)
    assert not marker.exists()
    assert s2._vec.rebuilt  # the file was not trusted
    assert _answers(s2) == expected
    s2.close()
    assert not marker.exists()


def test_tampered_snapshot_is_rebuilt(tmp_path, hash_index):
    path = tmp_path / "m.db"
    s = HybridStore(path, index=hash_index, tuning=SNAP)
    _fill(s)
    expected = _answers(s)
    s.close()
    snap = tmp_path / "m.db.faiss"
    raw = bytearray(snap.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    snap.write_bytes(bytes(raw))
    s2 = HybridStore(path, index=hash_index, tuning=SNAP)
    assert s2._vec.rebuilt
    assert _answers(s2) == expected
    s2.close()


def test_snapshot_of_another_database_is_ignored(tmp_path, hash_index):
    other = HybridStore(tmp_path / "other.db", index=hash_index, tuning=SNAP)
    for i in range(30):
        other.put(NS, f"x{i}", {"text": f"unrelated memory number {i}"})
    other.close()
    path = tmp_path / "m.db"
    s = HybridStore(path, index=hash_index, tuning=SNAP)
    _fill(s)
    expected = _answers(s)
    s.close()
    (tmp_path / "m.db.faiss").write_bytes((tmp_path / "other.db.faiss").read_bytes())
    s2 = HybridStore(path, index=hash_index, tuning=SNAP)
    assert s2._vec.rebuilt
    assert _answers(s2) == expected
    s2.close()


def test_snapshot_roundtrip_and_signature(tmp_path):
    key, other_key = b"k" * 32, b"j" * 32
    p = tmp_path / "s.faiss"
    arrays = {"a": np.arange(5, dtype=np.int64), "b": np.frombuffer(b"xyz", np.uint8)}
    write_snapshot(p, key, {"format": 3, "n": 1}, arrays)
    header, got = read_snapshot(p, key)
    assert header == {"format": 3, "n": 1}
    assert set(got) == {"a", "b"} and got["a"].tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(SnapshotError):
        read_snapshot(p, other_key)
    p.write_bytes(b"")
    with pytest.raises(SnapshotError):
        read_snapshot(p, key)
    with pytest.raises(ValueError):
        write_snapshot(p, key, {}, {"mac": np.zeros(1)})
    assert [f.name for f in tmp_path.iterdir()] == ["s.faiss"]  # no temp file left


def test_reindex_is_seen_by_another_open_handle(tmp_path, hash_index):
    path = tmp_path / "m.db"
    a = HybridStore(path, index=hash_index, tuning=SNAP)
    b = HybridStore(path, index=hash_index, tuning=SNAP)
    _fill(a)
    _answers(b)  # b holds the current generation in memory
    a.reindex()
    fresh = HybridStore(path, index=hash_index, tuning=SNAP)
    assert _index_state(b) == _db_state(b)
    assert _answers(b) == _answers(fresh)
    # more writes after the reindex, through both handles: still in step
    a.put(NS, "i", {"text": "User's dentist appointment moved to Oct 3"})
    b.put(NS, "b", {"text": "The project database is now MySQL 8"})
    fresh2 = HybridStore(path, index=hash_index, tuning=SNAP)
    assert _index_state(a) == _index_state(b) == _db_state(a)
    assert _answers(a) == _answers(b) == _answers(fresh2)
    for s in (a, b, fresh, fresh2):
        s.close()
    reopened = HybridStore(path, index=hash_index, tuning=SNAP)
    rebuilt = HybridStore(path, index=hash_index, tuning=SNAP)
    rebuilt._vec.rebuild(rebuilt._db.conn)
    assert _answers(reopened) == _answers(rebuilt)
    reopened.close()
    rebuilt.close()


def test_stale_snapshot_after_reindex_is_not_served(tmp_path, hash_index):
    path = tmp_path / "m.db"
    s = HybridStore(path, index=hash_index, tuning=SNAP)
    _fill(s)
    s.close()  # snapshot of generation 1
    stale = (tmp_path / "m.db.faiss").read_bytes()
    s = HybridStore(path, index=hash_index, tuning=SNAP)
    s.reindex()
    s.close()
    (tmp_path / "m.db.faiss").write_bytes(stale)  # as if the process had died before saving
    s2 = HybridStore(path, index=hash_index, tuning=SNAP)
    fresh = HybridStore(path, index=hash_index, tuning=SNAP)
    fresh._vec.rebuild(fresh._db.conn)
    assert _index_state(s2) == _db_state(s2)
    assert _answers(s2) == _answers(fresh)
    s2.close()
    fresh.close()


def test_crash_right_after_reindex(tmp_path, hash_index):
    """A process killed right after reindex (no close, no snapshot) leaves nothing stale."""
    path = tmp_path / "m.db"
    s = HybridStore(path, index=hash_index, tuning=SNAP)
    _fill(s)
    s.close()  # a snapshot of the old generation stays on disk
    here = Path(__file__).parent
    code = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(here)!r})
        from conftest import HashEmbeddings
        from langmem_plus import HybridStore
        from langmem_plus.store.tuning import StoreTuning
        e = HashEmbeddings()
        s = HybridStore({str(path)!r}, index={{"dims": e.dims, "embed": e, "fields": ["text"]}},
                        tuning=StoreTuning(snapshot_min_vectors=0))
        s.reindex()
        os._exit(0)  # no close: as a kill -9 right after the reindex committed
        """
    )
    env = {**os.environ, "PYTHONPATH": str(here.parent)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)
    s2 = HybridStore(path, index=hash_index, tuning=SNAP)
    fresh = HybridStore(path, index=hash_index, tuning=SNAP)
    fresh._vec.rebuild(fresh._db.conn)
    assert _index_state(s2) == _db_state(s2)
    assert _answers(s2) == _answers(fresh)
    s2.close()
    fresh.close()


def test_handle_behind_a_fully_compacted_log_rebuilds(tmp_path, hash_index):
    path = tmp_path / "m.db"
    a = HybridStore(path, index=hash_index, tuning=SNAP)
    b = HybridStore(path, index=hash_index, tuning=SNAP)
    _fill(a)
    _answers(b)
    a.put(NS, "b", {"text": "The project database moved to SQLite"})
    a.delete(NS, "f")
    with a._db.write() as conn:
        a._vec.sync(conn)
        a._vec.compact_log(conn)  # every entry b has not seen is gone
        assert conn.execute("SELECT COUNT(*) FROM vec_log").fetchone()[0] == 0
    fresh = HybridStore(path, index=hash_index, tuning=SNAP)
    assert _index_state(b) == _db_state(b)
    assert _answers(b) == _answers(fresh)
    for s in (a, b, fresh):
        s.close()
