"""Large namespaces switch to an HNSW index; deletes, updates and reopen stay correct."""

from __future__ import annotations

from conftest import HashEmbeddings
from langgraph.store.base import PutOp

from langmem_plus import HybridStore
from langmem_plus.store.tuning import StoreTuning


def _store(path) -> HybridStore:
    return HybridStore(
        path,
        index={"dims": 64, "embed": HashEmbeddings(), "fields": ["text"]},
        tuning=StoreTuning(ann_threshold=1000, hnsw_ef_search=256),
    )


def test_hnsw_switch_delete_update_and_reopen(tmp_path):
    path = tmp_path / "ann.db"
    s = _store(path)
    s.batch(
        [
            PutOp(("big",), f"k{i}", {"text": f"note number {i} about topic{i % 37}"})
            for i in range(1300)
        ]
    )
    idx = s._vec._ns[next(iter(s._vec._ns))]
    assert idx.approximate and s._vec.count() == 1300
    hit = s.search(("big",), query="note number 777 about topic0", limit=1)[0]
    assert hit.key == "k777"
    s.delete(("big",), "k777")
    assert all(h.key != "k777" for h in s.search(("big",), query="note number 777", limit=20))
    s.put(("big",), "k778", {"text": "completely different words entirely"})
    assert s.search(("big",), query="completely different words", limit=1)[0].key == "k778"
    assert s._vec.count() == 1299
    s.close()
    s2 = _store(path)
    assert not s2._vec.rebuilt and s2._vec._ns[next(iter(s2._vec._ns))].approximate
    assert s2.search(("big",), query="completely different words", limit=1)[0].key == "k778"
    assert all(h.key != "k777" for h in s2.search(("big",), query="note number 777", limit=20))
    s2.close()


def _ns_index(s: HybridStore):
    assert s._vec is not None and len(s._vec._ns) == 1
    return next(iter(s._vec._ns.values()))


def test_hnsw_removed_vectors_are_skipped_then_compacted(tmp_path):
    """HNSW cannot remove a vector: a deleted one stays in the graph, skipped by every search,
    until the dead are a fifth of it; then the graph is rebuilt (flat again below the
    threshold). A reopened store knows which of the snapshot's vectors are dead."""
    path = tmp_path / "ann.db"
    s = _store(path)
    s.batch([PutOp(("big",), f"k{i}", {"text": f"entry {i} topic{i % 41}"}) for i in range(1200)])
    assert _ns_index(s).approximate
    for i in range(0, 150):
        s.delete(("big",), f"k{i}")
    idx = _ns_index(s)
    assert idx.approximate and len(idx.dead) == 150 and s._vec.count() == 1050
    hits = s.search(("big",), query="entry 7 topic7", limit=50)
    assert hits and all(int(h.key[1:]) >= 150 for h in hits)
    s.close()
    s = _store(path)
    idx = _ns_index(s)
    assert not s._vec.rebuilt and idx.approximate and len(idx.dead) == 150
    assert all(int(h.key[1:]) >= 150 for h in s.search(("big",), query="entry 7", limit=50))
    for i in range(150, 400):  # past a fifth dead, and below the threshold once compacted
        s.delete(("big",), f"k{i}")
    idx = _ns_index(s)
    assert not idx.approximate and not idx.dead and s._vec.count() == 800
    assert s.search(("big",), query="entry 555 topic22", limit=1)[0].key == "k555"
    assert all(int(h.key[1:]) >= 400 for h in s.search(("big",), query="entry 7", limit=50))
    s.close()
