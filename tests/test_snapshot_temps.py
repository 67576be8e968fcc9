"""A snapshot writer killed mid-write leaves `<db>.faiss.<pid>.<tid>.tmp`; opening cleans it.

Only temp names the snapshot writer makes are touched, and only when their process is gone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from langmem_plus.store.hybrid import HybridStore
from langmem_plus.store.tuning import StoreTuning
from langmem_plus.store.vector.snapshot import remove_stale_temp_files

pytestmark = pytest.mark.skipif(os.name != "posix", reason="pid liveness is POSIX-only")


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(proc.stdout)


def test_temp_files_of_dead_writers_go_live_and_foreign_ones_stay(tmp_path: Path) -> None:
    snap = tmp_path / "m.db.faiss"
    dead = tmp_path / f"m.db.faiss.{_dead_pid()}.140234.tmp"
    live = tmp_path / f"m.db.faiss.{os.getpid()}.140234.tmp"
    foreign = [
        tmp_path / "m.db.faiss.notapid.1.tmp",
        tmp_path / "other.db.faiss.1.1.tmp",
        tmp_path / "m.db.faiss.tmp",
        tmp_path / "m.db",
    ]
    for p in (dead, live, *foreign):
        p.write_bytes(b"partial")
    assert remove_stale_temp_files(snap) == 1
    assert not dead.exists()
    assert live.exists() and all(p.exists() for p in foreign)
    assert remove_stale_temp_files(snap) == 0


def test_opening_a_store_removes_a_killed_writers_temp_file(tmp_path: Path, hash_index) -> None:
    path = tmp_path / "m.db"
    config = StoreTuning(snapshot_min_vectors=0)
    with HybridStore(path, index=hash_index, tuning=config) as store:
        store.put(("ns",), "k", {"text": "lake trip"})
    snap = tmp_path / "m.db.faiss"
    assert snap.exists()
    left = tmp_path / f"m.db.faiss.{_dead_pid()}.7.tmp"
    left.write_bytes(snap.read_bytes()[:100])  # what a kill mid-write leaves
    with HybridStore(path, index=hash_index, tuning=config) as store:
        assert not left.exists()
        assert [h.key for h in store.search(("ns",), query="lake trip")] == ["k"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []
