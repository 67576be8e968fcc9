"""Files the product creates are its owner's alone (#32 item 7): the database (and its WAL,
shared-memory and key files), the vector snapshot and `export -o` are 0600 whatever the
umask, and none is written through a symbolic link."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from langmem_plus.cli import main
from langmem_plus.errors import ValidationError
from langmem_plus.memory import Memory
from langmem_plus.server.apikeys import KeyStore
from langmem_plus.store.hybrid import HybridStore
from langmem_plus.store.tuning import StoreTuning

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes and links are POSIX")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def umask_022() -> Iterator[None]:
    """The common default, under which a plain create is 0644 (world-readable)."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_new_database_and_its_side_files_are_private(tmp_path: Path, hash_embeddings) -> None:
    db = tmp_path / "m.db"
    store = HybridStore(
        db,
        index={"dims": hash_embeddings.dims, "embed": hash_embeddings, "fields": ["text"]},
        tuning=StoreTuning(snapshot_min_vectors=0),
    )
    mem = Memory(store=store)
    mem.add("my PIN is 4711", "alice", infer=False)
    side = [Path(f"{db}-wal"), Path(f"{db}-shm")]
    assert all(p.exists() for p in side)
    for p in (db, *side):
        assert _mode(p) == 0o600, p
    mem.close()
    store.close()  # a store passed in is the caller's to close
    assert _mode(Path(f"{db}.faiss")) == 0o600  # the snapshot written on close
    with KeyStore.open(tmp_path / "keys.db") as keys:
        keys.create(user_id="alice")
    assert _mode(tmp_path / "keys.db") == 0o600


def test_an_existing_database_keeps_its_mode(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    db.touch(mode=0o640)
    os.chmod(db, 0o640)  # the owner chose group-readable
    Memory(db, embeddings=False).close()
    assert _mode(db) == 0o640


def test_a_dangling_link_at_the_database_path_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "planted.db"
    target.parent.mkdir()
    link = tmp_path / "m.db"
    link.symlink_to(target)
    with pytest.raises(ValidationError, match="symbolic link"):
        Memory(link, embeddings=False)
    assert not target.exists()


@pytest.fixture
def run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LANGMEM_PLUS_DB", str(tmp_path / "m.db"))
    monkeypatch.setenv("LANGMEM_PLUS_EMBEDDINGS", "none")

    def _run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    assert _run("init")[0] == 0  # a database named by LANGMEM_PLUS_DB must exist first
    assert _run("add", "my PIN is 4711", "--no-infer", "--user", "alice")[0] == 0
    return _run


def test_export_output_is_private(run, tmp_path: Path) -> None:
    out = tmp_path / "export.json"
    assert run("export", "-o", str(out))[0] == 0
    assert _mode(out) == 0o600 and "4711" in out.read_text("utf-8")
    out.write_text("old")
    os.chmod(out, 0o644)
    assert run("export", "-o", str(out))[0] == 0  # an existing file is replaced, private
    assert _mode(out) == 0o600 and "4711" in out.read_text("utf-8")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_export_refuses_to_write_through_a_link(run, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "export.json"
    link.symlink_to(victim)
    code, _, err = run("export", "-o", str(link))
    assert code != 0 and "symbolic link" in err
    assert victim.read_text() == "precious" and link.is_symlink()
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "created-elsewhere.json")
    assert run("export", "-o", str(dangling))[0] != 0
    assert not (tmp_path / "created-elsewhere.json").exists()
    code, _, err = run("export", "-o", str(tmp_path))  # a directory
    assert code != 0 and "not a regular file" in err
    code, _, err = run("export", "-o", str(tmp_path / "missing" / "x.json"))
    assert code != 0 and "cannot write" in err
