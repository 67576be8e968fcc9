"""Large namespaces switch to an IVF index; deletes, updates and reopen stay correct."""

from __future__ import annotations

from conftest import HashEmbeddings
from langgraph.store.base import PutOp

from langmem_plus import HybridStore, MemoryConfig


def _store(path) -> HybridStore:
    return HybridStore(
        path,
        index={"dims": 64, "embed": HashEmbeddings(), "fields": ["text"]},
        config=MemoryConfig(store={"ann_threshold": 1000, "ivf_nprobe": 256}),
    )


def test_ivf_switch_delete_update_and_reopen(tmp_path):
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
