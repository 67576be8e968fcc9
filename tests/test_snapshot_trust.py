"""The snapshot file beside a database is checked before a byte of it is trusted (#32 item 3).

Opening a store reads `<db>.faiss` only when it is a regular file (not a FIFO, a device or a
link) no larger than the database's vectors explain, and parses only bytes whose signature
verifies: a small crafted file cannot make it allocate a gigabyte, a FIFO cannot hang it, a
sparse 64 GiB file is not read. Writing never goes through a link planted at the writer's
temp-file name, and the snapshot is private (0600).
"""

from __future__ import annotations

import io
import os
import stat
import threading
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

from langmem_plus import HybridStore
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.store.vector.snapshot import (
    SnapshotError,
    read_snapshot,
    snapshot_size_limit,
    write_snapshot,
)

pytestmark = pytest.mark.skipif(os.name != "posix", reason="FIFOs, links and modes are POSIX")

NS = ("memories", "u1")
SNAP = StoreTuning(snapshot_min_vectors=0)
TEXTS = ["lake trip in May", "the build runs on Bazel", "用户喜欢吃川菜", "a cat named Miso"]


def _store(path: Path, hash_index: dict) -> list[str]:
    """A store with a snapshot on disk; returns the keys a search for 'lake' ranks."""
    with HybridStore(path, index=hash_index, tuning=SNAP) as s:
        for i, t in enumerate(TEXTS):
            s.put(NS, f"k{i}", {"text": t})
        ranked = [h.key for h in s.search(NS, query="lake trip")]
    assert Path(f"{path}.faiss").exists()
    return ranked


def _inflating_npz(declared_bytes: int) -> bytes:
    """A ~1 MB zip whose one member declares a `declared_bytes` array (deflated zeros)."""
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1, np.uint8))
    header["shape"] = (declared_bytes,)
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(head, header)
    out = io.BytesIO()
    with (
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z,
        z.open("index_1.npy", "w", force_zip64=True) as member,
    ):
        member.write(head.getvalue())
        chunk = bytes(1 << 20)
        for _ in range(declared_bytes >> 20):
            member.write(chunk)
    return out.getvalue()


def _open_and_search(path: Path, hash_index: dict) -> tuple[list[str], bool]:
    with HybridStore(path, index=hash_index, tuning=SNAP) as s:
        return [h.key for h in s.search(NS, query="lake trip")], s._vec.rebuilt


def test_a_small_crafted_file_does_not_make_opening_allocate_its_declared_size(
    tmp_path: Path, hash_index: dict
) -> None:
    path = tmp_path / "m.db"
    ranked = _store(path, hash_index)
    crafted = _inflating_npz(1 << 30)  # a gigabyte, declared
    assert len(crafted) < 2 << 20
    Path(f"{path}.faiss").write_bytes(crafted)
    tracemalloc.start()
    try:
        got, rebuilt = _open_and_search(path, hash_index)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rebuilt and got == ranked
    assert peak < 64 << 20, f"opening allocated {peak >> 20} MiB"


def test_a_file_larger_than_the_vectors_explain_is_not_read(
    tmp_path: Path, hash_index: dict
) -> None:
    path = tmp_path / "m.db"
    ranked = _store(path, hash_index)
    with open(f"{path}.faiss", "r+b") as fh:
        fh.truncate(64 << 30)  # sparse: costs no disk, would cost 64 GiB to read
    tracemalloc.start()
    try:
        got, rebuilt = _open_and_search(path, hash_index)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rebuilt and got == ranked
    assert peak < 64 << 20


def test_a_fifo_at_the_snapshot_path_does_not_hang_the_open(
    tmp_path: Path, hash_index: dict
) -> None:
    path = tmp_path / "m.db"
    ranked = _store(path, hash_index)
    fifo = Path(f"{path}.faiss")
    fifo.unlink()
    os.mkfifo(fifo)
    result: list[tuple[list[str], bool]] = []
    opener = threading.Thread(target=lambda: result.append(_open_and_search(path, hash_index)))
    opener.start()
    opener.join(60)
    if opener.is_alive():  # the old code blocks in open(): release it, then fail
        with open(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "wb"):
            pass
        opener.join(60)
        pytest.fail("opening a store whose snapshot path is a FIFO hung")
    assert result == [(ranked, True)]


@pytest.mark.parametrize("target", ["device", "link to the real snapshot"])
def test_a_snapshot_that_is_not_a_regular_file_is_not_read(
    tmp_path: Path, hash_index: dict, target: str
) -> None:
    path = tmp_path / "m.db"
    ranked = _store(path, hash_index)
    snap = Path(f"{path}.faiss")
    real = tmp_path / "elsewhere.faiss"
    snap.rename(real)
    snap.symlink_to("/dev/zero" if target == "device" else real)
    assert _open_and_search(path, hash_index) == (ranked, True)


def test_a_link_planted_at_the_temp_name_is_not_followed(tmp_path: Path, hash_index: dict) -> None:
    path = tmp_path / "m.db"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    planted = Path(f"{path}.faiss.{os.getpid()}.{threading.get_ident()}.tmp")
    planted.symlink_to(victim)
    ranked = _store(path, hash_index)  # closes on this thread: writes through that temp name
    assert victim.read_text() == "precious"
    assert not planted.exists() and not planted.is_symlink()
    snap = Path(f"{path}.faiss")
    assert not snap.is_symlink()
    assert stat.S_IMODE(snap.stat().st_mode) == 0o600
    assert _open_and_search(path, hash_index) == (ranked, False)  # the snapshot was used


def test_the_signature_is_checked_before_anything_is_parsed(tmp_path: Path) -> None:
    key = b"k" * 32
    p = tmp_path / "s.faiss"
    arrays = {"a": np.arange(5, dtype=np.int64), "b": np.frombuffer(b"xyz", np.uint8)}
    write_snapshot(p, key, {"format": 4}, arrays)
    raw = bytearray(p.read_bytes())
    raw[10] ^= 1  # the header length: parsed only after the signature
    p.write_bytes(bytes(raw))
    with pytest.raises(SnapshotError, match="signature"):
        read_snapshot(p, key)
    write_snapshot(p, key, {"format": 4}, arrays)
    with pytest.raises(SnapshotError, match="larger"):
        read_snapshot(p, key, max_bytes=p.stat().st_size - 1)
    header, got = read_snapshot(p, key, max_bytes=p.stat().st_size)
    assert header == {"format": 4} and got["a"].tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="numeric"):
        write_snapshot(p, key, {}, {"o": np.array([object()])})


def test_the_size_limit_grows_with_the_vectors(tmp_path: Path, hash_index: dict) -> None:
    path = tmp_path / "m.db"
    _store(path, hash_index)
    import sqlite3

    conn = sqlite3.connect(path)
    small = snapshot_size_limit(conn, 64)
    assert Path(f"{path}.faiss").stat().st_size < small < 2 << 20
    assert snapshot_size_limit(conn, 512) > small
    conn.close()
