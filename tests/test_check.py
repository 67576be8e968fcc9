"""#11 item 10: opening read-only, odd files, `check` (integrity and index agreement), vectors
of items written with embeddings off (one warning on open, backfill), `langmem-plus check`."""

from __future__ import annotations

import json
import logging
import os
import sqlite3

import pytest
from conftest import HashEmbeddings

from langmem_plus import HybridStore
from langmem_plus.cli import main
from langmem_plus.errors import ReadOnlyStoreError, ValidationError


def _index() -> dict:
    return {"dims": 16, "embed": HashEmbeddings(16), "fields": ["text"]}


def _fill(path, n: int = 30, index=None) -> None:
    with HybridStore(path, index=_index() if index is None else index) as store:
        for i in range(n):
            store.put(("m", f"u{i % 3}"), f"k{i}", {"text": f"memory number {i} about topic {i}"})
        store.put(("m", "u0"), "notext", {"n": 1})
        store.put(("m", "u0"), "hidden", {"text": "not indexed"}, index=False)
        store.delete(("m", "u0"), "notext")
        store.delete(("m", "u1"), "k1")


# ---------------------------------------------------------------- check()
def test_a_clean_store_checks_ok(tmp_path):
    _fill(tmp_path / "m.db")
    with HybridStore(tmp_path / "m.db", index=_index()) as store:
        report = store.check()
    assert report["ok"], report["problems"]
    assert report["integrity"] == ["ok"]
    assert report["items"] == 30  # 30 + hidden - k1
    assert report["vector_index"]["faiss_vectors"] == report["vectors"] == 29
    assert set(report["keyword"].values()) == {0}


def test_keyword_statistics_survive_deleting_items_without_tokens():
    store = HybridStore(index=False)
    store.put(("a",), "x", {"text": "hello world"})
    store.put(("a",), "k", {"n": 1})
    store.delete(("a",), "k")
    store.put(("a",), "j", {"text": "skip"}, index=False)
    store.delete(("a",), "j")
    assert store.check()["ok"]
    n_docs = store.db.conn.execute("SELECT n_docs FROM namespaces").fetchone()[0]
    assert n_docs == 1


def test_index_disagreement_is_reported(tmp_path):
    _fill(tmp_path / "m.db")
    with sqlite3.connect(tmp_path / "m.db") as conn:
        conn.execute("DELETE FROM postings WHERE item_id = (SELECT id FROM items WHERE key='k2')")
        conn.execute("DELETE FROM items WHERE key = 'k3'")  # leaves its postings and vectors
    with HybridStore(tmp_path / "m.db", index=_index()) as store:
        report = store.check()
    assert not report["ok"]
    kw = report["keyword"]
    assert kw["items_missing_postings"] == 1
    assert kw["postings_of_missing_items"] == 1
    assert report["vector_index"]["vectors_of_missing_items"] == 1
    assert any("reindex" in p for p in report["problems"])
    with HybridStore(tmp_path / "m.db", index=_index()) as store:
        store.reindex()
        report = store.check()
    # reindex rebuilds both indexes from the items table
    assert report["keyword"]["items_missing_postings"] == 0
    assert report["vector_index"]["vectors_of_missing_items"] == 0
    assert report["ok"], report["problems"]


def test_corruption_in_a_page_opening_does_not_read_is_found(tmp_path):
    path = tmp_path / "m.db"
    with HybridStore(path, index=False) as store:
        store.batch([])
        for i in range(0, 3000, 500):
            from langgraph.store.base import PutOp

            store.batch(
                [
                    PutOp(("m",), f"k{j}", {"text": f"item {j} " + "padding " * 20})
                    for j in range(i, i + 500)
                ]
            )
    size = path.stat().st_size
    page = 4096
    victim = (size // page) // 2 * page  # a page in the middle: items or postings
    with open(path, "r+b") as f:
        f.seek(victim)
        f.write(b"\xde\xad\xbe\xef" * (page // 4))
    with HybridStore(path, index=False) as store:  # opening does not notice
        report = store.check()
    assert not report["ok"]
    assert report["integrity"] != ["ok"]
    assert any(p.startswith("sqlite:") for p in report["problems"])


# ---------------------------------------------------------------- vectors written later
def test_items_written_without_embeddings_warn_once_and_backfill(tmp_path, caplog):
    path = tmp_path / "m.db"
    _fill(path, n=6, index=False)
    caplog.set_level(logging.WARNING, logger="langmem_plus.store.hybrid")
    with HybridStore(path, index=_index()) as store:
        warnings = [r for r in caplog.records if "have no vectors" in r.getMessage()]
        assert len(warnings) == 1
        assert "5 items" in warnings[0].getMessage()
        report = store.check()
        assert not report["ok"]
        assert report["vector_index"]["items_missing_vectors"] == 5
        assert store.backfill_vectors() == 5
        assert store.backfill_vectors() == 0
        report = store.check()
        assert report["ok"], report["problems"]
        hits = store.search(("m",), query="memory number 4 about topic 4", limit=1)
        assert hits[0].key == "k4" and hits[0].components["vector"] > 0.99
    caplog.clear()
    with HybridStore(path, index=_index()):
        assert not [r for r in caplog.records if "have no vectors" in r.getMessage()]


def test_later_writes_with_embeddings_off_are_noticed_too(tmp_path, caplog):
    path = tmp_path / "m.db"
    _fill(path, n=3)
    with HybridStore(path, index=False) as store:
        store.put(("m", "u0"), "late", {"text": "written without vectors"})
    caplog.set_level(logging.WARNING, logger="langmem_plus.store.hybrid")
    with HybridStore(path, index=_index()) as store:
        assert any("1 items" in r.getMessage() for r in caplog.records)
        # reindex embeds them too (k0, k2, late); the index=False item stays without
        assert store.reindex()["vectors"] == 3
        assert store.check()["ok"]


# ---------------------------------------------------------------- opening
def test_read_only_open_reads_and_refuses_writes(tmp_path):
    path = tmp_path / "m.db"
    _fill(path, n=6)
    before = path.read_bytes()
    with HybridStore(path, index=_index(), read_only=True) as store:
        assert store.get(("m", "u0"), "k0").value["text"].startswith("memory number 0")
        assert store.search(("m",), query="topic 5", limit=1)[0].key == "k5"
        assert store.check()["ok"]
        with pytest.raises(ReadOnlyStoreError, match="read-only"):
            store.put(("m", "u0"), "new", {"text": "x"})
        with pytest.raises(ReadOnlyStoreError):
            store.delete(("m", "u0"), "k0")
        assert isinstance(ReadOnlyStoreError("x"), PermissionError)
    assert path.read_bytes() == before


def test_read_only_is_detected_from_permissions(tmp_path, monkeypatch):
    path = tmp_path / "m.db"
    _fill(path, n=3)
    monkeypatch.setattr(os, "access", lambda p, mode: mode != os.W_OK)
    with HybridStore(path, index=_index()) as store:
        assert store.db.read_only
        assert store.count(("m",), exact=False) == 3
        with pytest.raises(ReadOnlyStoreError):
            store.put(("m",), "x", {"text": "x"})
    with pytest.raises(ReadOnlyStoreError, match="no database"):
        HybridStore(tmp_path / "absent.db", index=False, read_only=True)
    with pytest.raises(ReadOnlyStoreError, match="read-only"):
        HybridStore(tmp_path / "new.db", index=False)


def test_a_zero_length_file_opens_as_an_empty_store(tmp_path):
    path = tmp_path / "m.db"
    path.touch()
    with HybridStore(path, index=False) as store:
        assert store.count() == 0
        store.put(("m",), "k", {"text": "first"})
    with HybridStore(path, index=False) as store:
        assert store.get(("m",), "k") is not None


def test_a_file_that_is_not_sqlite_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"my precious notes, not a database\n" * 10)
    before = path.read_bytes()
    with pytest.raises(ValidationError, match="not a SQLite database"):
        HybridStore(path, index=False)
    assert path.read_bytes() == before
    assert not (tmp_path / "notes.txt-wal").exists()


def test_another_applications_database_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    with pytest.raises(ValidationError, match="another application"):
        HybridStore(path, index=False)
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"invoices"}


# ---------------------------------------------------------------- CLI
def _cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_check(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LANGMEM_PLUS_EMBEDDINGS", "none")
    path = tmp_path / "m.db"
    _fill(path, n=6, index=False)
    code, out, _ = _cli(capsys, "check", "--db", str(path))
    assert code == 0 and out.startswith("ok:")
    code, out, _ = _cli(capsys, "check", "--db", str(path), "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] is True and report["items"] == 6
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE namespaces SET n_docs = n_docs + 5")
    code, out, _ = _cli(capsys, "check", "--db", str(path), "--json")
    assert code == 1
    assert json.loads(out)["keyword"]["namespaces_with_wrong_stats"] >= 1
    code, out, _ = _cli(capsys, "check", "--db", str(path))
    assert code == 1 and "problems:" in out and "wrong stats" in out
    code, _, err = _cli(capsys, "check", "--db", str(tmp_path / "absent.db"))
    assert code == 2 and "no database" in err
    assert not (tmp_path / "absent.db").exists()
