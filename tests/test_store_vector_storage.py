"""Compact vectors (int8 + scale, float16 still read) and the FAISS snapshot only where it pays."""

from __future__ import annotations

import numpy as np
import pydantic
import pytest
from conftest import HashEmbeddings
from langgraph.store.base import PutOp

from langmem_plus import HybridStore, MemoryConfig
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.store.vector.index import decode_vec, decode_vecs, encode_vec

TEXTS = {
    "a": "用户喜欢吃川菜",
    "b": "The project database is PostgreSQL 15",
    "c": "User's sister lives in Berlin",
    "d": "User has a cat named Miso",
    "e": "Fixed TypeError in OrderService.process() at src/orders/service.ts",
}
QUERIES = ["川菜", "database postgres", "sister Berlin", "cat Miso", "TypeError OrderService"]


def _unit(rows: int, dims: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((rows, dims)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


# ------------------------------------------------------------------ encoding
def test_int8_and_float16_round_trip() -> None:
    vecs = _unit(20, 512)
    i8 = [encode_vec(v) for v in vecs]
    f16 = [encode_vec(v, "float16") for v in vecs]
    assert {len(b) for b in i8} == {516} and {len(b) for b in f16} == {1024}
    d8, d16 = decode_vecs(i8, 512), decode_vecs(f16, 512)
    assert d8.dtype == np.float32 and d8.shape == (20, 512)
    # int8: each coordinate within half a quantisation step of the original
    step = np.abs(vecs).max(axis=1, keepdims=True) / 127
    assert np.all(np.abs(d8 - vecs) <= step / 2 + 1e-7)
    cos = np.sum(d8 * vecs, axis=1) / np.linalg.norm(d8, axis=1)
    assert cos.min() > 0.9999 - 1e-3
    assert np.allclose(d16, vecs, atol=1e-3)
    assert np.array_equal(decode_vec(i8[3], 512), d8[3])


def test_mixed_formats_decode_in_order() -> None:
    vecs = _unit(6, 64, seed=1)
    blobs = [encode_vec(v, "int8" if i % 2 else "float16") for i, v in enumerate(vecs)]
    mixed = decode_vecs(blobs, 64)
    for i, b in enumerate(blobs):
        assert np.array_equal(mixed[i], decode_vecs([b], 64)[0])
    assert np.allclose(mixed, vecs, atol=0.01)
    assert decode_vecs([], 64).shape == (0, 64)


def test_small_dims_always_float16_and_edge_values() -> None:
    for dims in (1, 3, 4):  # at 4 dims the two lengths would collide (8 bytes)
        v = np.arange(1, dims + 1, dtype=np.float32)
        assert len(encode_vec(v)) == 2 * dims
        assert np.array_equal(decode_vec(encode_vec(v), dims), v)
    assert len(encode_vec(np.ones(5))) == 9  # from 5 dims on, int8
    assert not decode_vec(encode_vec(np.zeros(16)), 16).any()
    big = np.full(8, 1e6, dtype=np.float32)  # beyond float16's range: int8 + scale keeps it
    assert np.allclose(decode_vec(encode_vec(big), 8), big)
    with pytest.raises(ValueError, match="neither float16"):
        decode_vecs([b"\x00" * 7], 16)


def test_config_validates_storage_and_snapshot_threshold() -> None:
    assert MemoryConfig().store.vector_storage == "int8"
    with pytest.raises(pydantic.ValidationError):
        MemoryConfig(store={"vector_storage": "int4"})  # type: ignore[arg-type]
    with pytest.raises(pydantic.ValidationError):
        StoreTuning(snapshot_min_vectors=-1)


# ------------------------------------------------------------------ stores
def _fill(store: HybridStore, keys: str = "abcde") -> None:
    store.batch([PutOp(("m", "u1"), k, {"text": TEXTS[k]}) for k in keys])


def _top(store: HybridStore) -> list[str]:
    return [store.search(("m", "u1"), query=q, limit=1)[0].key for q in QUERIES]


def _blob_lengths(store: HybridStore) -> list[int]:
    with store._db.read() as conn:
        return [len(r[0]) for r in conn.execute("SELECT vec FROM vectors ORDER BY id")]


def test_new_writes_are_int8(tmp_path, hash_index) -> None:
    s = HybridStore(tmp_path / "m.db", index=hash_index)
    _fill(s)
    assert set(_blob_lengths(s)) == {hash_index["dims"] + 4}
    assert _top(s) == list("abcde")
    s.close()


def test_legacy_float16_database_keeps_working(tmp_path, hash_index) -> None:
    path = tmp_path / "old.db"
    dims = hash_index["dims"]
    old_cfg = MemoryConfig(store={"vector_storage": "float16"})  # what older versions wrote
    s = HybridStore(path, index=hash_index, config=old_cfg)
    _fill(s, "abc")
    assert set(_blob_lengths(s)) == {2 * dims}
    s.close()
    assert not (tmp_path / "old.db.faiss").exists()  # tiny store: no snapshot
    new_cfg = MemoryConfig()
    s2 = HybridStore(path, index=hash_index, config=new_cfg)  # rebuilt from float16 rows
    assert s2._vec is not None and s2._vec.rebuilt and s2._vec.count() == 3
    _fill(s2, "de")  # new rows: int8, beside the old ones
    assert sorted(_blob_lengths(s2)) == [dims + 4] * 2 + [2 * dims] * 3
    assert _top(s2) == list("abcde")
    emb = hash_index["embed"]
    # the exact-cosine pass of search (candidates FAISS did not return) over mixed rows
    q = np.asarray(emb.embed_query("User has a sister"), np.float32)
    with s2._db.read() as conn:
        ids = dict(conn.execute("SELECT key, id FROM items").fetchall())
        got = s2._backend.stored_cosines(conn, list(ids.values()), q)
    for key, rid in ids.items():
        want = float(np.dot(q, emb.embed_query(TEXTS[key])))
        assert abs(got[rid] - want) < 0.01, key
    s2.close()
    s3 = HybridStore(path, index=hash_index, config=new_cfg)  # rebuild over mixed rows
    assert s3._vec is not None and s3._vec.count() == 5
    assert _top(s3) == list("abcde")
    assert s3.reindex() == {"items": 5, "vectors": 5}  # re-embedding writes the configured form
    assert set(_blob_lengths(s3)) == {dims + 4}
    assert _top(s3) == list("abcde")
    s3.close()


def test_int8_and_float16_stores_rank_alike(tmp_path, hash_index) -> None:
    a = HybridStore(tmp_path / "a.db", index=hash_index)
    b = HybridStore(
        tmp_path / "b.db",
        index=hash_index,
        config=MemoryConfig(store={"vector_storage": "float16"}),
    )
    _fill(a)
    _fill(b)
    for q in QUERIES:
        ha = a.search(("m", "u1"), query=q, limit=5)
        hb = b.search(("m", "u1"), query=q, limit=5)
        assert [h.key for h in ha] == [h.key for h in hb]
        for x, y in zip(ha, hb, strict=True):
            assert abs(x.components["vector"] - y.components["vector"]) < 0.01
    a.close()
    b.close()


def test_four_dim_store_writes_float16(tmp_path) -> None:
    emb = HashEmbeddings(dims=4)
    s = HybridStore(tmp_path / "d4.db", index={"dims": 4, "embed": emb, "fields": ["text"]})
    _fill(s, "ab")
    assert set(_blob_lengths(s)) == {8}
    s.close()
    s2 = HybridStore(tmp_path / "d4.db", index={"dims": 4, "embed": emb, "fields": ["text"]})
    assert s2._vec is not None and s2._vec.count() == 2
    assert s2.search(("m", "u1"), query="川菜", limit=1)[0].key == "a"
    s2.close()


# ------------------------------------------------------------------ snapshot threshold
def test_small_store_writes_no_snapshot_and_removes_a_stale_one(tmp_path, hash_index) -> None:
    path = tmp_path / "m.db"
    snap = tmp_path / "m.db.faiss"
    s = HybridStore(path, index=hash_index, tuning=StoreTuning(snapshot_min_vectors=0))
    _fill(s)
    s.close()
    assert snap.exists()
    s2 = HybridStore(path, index=hash_index)  # default threshold: far above 5 vectors
    assert s2._vec is not None and not s2._vec.rebuilt  # the old snapshot is still read
    s2.delete(("m", "u1"), "e")
    s2.close()
    assert not snap.exists()  # below the threshold: the stale snapshot is removed
    s3 = HybridStore(path, index=hash_index)
    assert s3._vec is not None and s3._vec.rebuilt and s3._vec.count() == 4
    assert _top(s3)[:4] == list("abcd")
    s3.close()
    assert not snap.exists()


def test_snapshot_written_at_the_threshold(tmp_path, hash_index) -> None:
    path = tmp_path / "m.db"
    snap = tmp_path / "m.db.faiss"
    cfg = StoreTuning(snapshot_min_vectors=5)
    s = HybridStore(path, index=hash_index, tuning=cfg)
    _fill(s, "abcd")
    s.close()
    assert not snap.exists()  # 4 < 5
    s2 = HybridStore(path, index=hash_index, tuning=cfg)
    _fill(s2, "e")
    s2.close()
    assert snap.exists()  # 5 >= 5
    s3 = HybridStore(path, index=hash_index, tuning=cfg)
    assert s3._vec is not None and not s3._vec.rebuilt
    assert _top(s3) == list("abcde")
    s3.close()


def test_ivf_namespace_always_snapshotted(tmp_path) -> None:
    emb = HashEmbeddings()
    cfg = StoreTuning(ann_threshold=1000)  # snapshot_min_vectors stays at its default
    assert cfg.snapshot_min_vectors > 1100
    path = tmp_path / "ivf.db"
    s = HybridStore(path, index={"dims": 64, "embed": emb, "fields": ["text"]}, tuning=cfg)
    s.batch([PutOp(("big",), f"k{i}", {"text": f"note {i} topic{i % 37}"}) for i in range(1100)])
    assert s._vec is not None and s._vec.wants_snapshot()
    s.close()
    assert (tmp_path / "ivf.db.faiss").exists()
