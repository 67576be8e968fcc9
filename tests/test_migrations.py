"""A database written by an older schema opens, migrates and ranks like a new one."""

from __future__ import annotations

import json
import sqlite3

from langmem_plus import HybridStore
from langmem_plus.clock import ManualClock
from langmem_plus.store.db.database import SCHEMA_VERSION
from langmem_plus.store.db.termpack import unpack_terms
from langmem_plus.store.seams import rank_fields

VALUES = [
    {"text": "tea over coffee", "category": "preference", "confidence": 0.9},
    {"text": "turn one", "session_id": "s1", "confidence": 1},
    {"text": "turn two", "session_id": 7},
    {"text": "flag", "session_id": True, "chat_id": "c9", "confidence": True},
    {"text": "blank", "session_id": "", "conversation_id": "conv"},
    {"text": "odd", "category": 3, "confidence": "high"},
    {"text": "plain"},
]


def _undo_validity(conn) -> None:
    """Schema 13's items: no validity columns (migration 014) nor index key (016), nor the
    indexes of `follows` that read `kind` (018)."""
    conn.execute("DROP INDEX items_slot")
    conn.execute("DROP INDEX items_follows0")
    conn.execute("DROP INDEX items_follows1")
    for col in ("kind", "slot", "said_at", "valid_from", "valid_to", "stale", "index_key"):
        conn.execute(f"ALTER TABLE items DROP COLUMN {col}")


def _undo_doc_terms(conn) -> None:
    """Schema 9's keyword layout: the postings(item_id) index, no doc_terms."""
    conn.execute("DROP TABLE doc_terms")
    conn.execute("CREATE INDEX postings_item ON postings(item_id)")
    conn.execute("CREATE INDEX turns_created ON turns(created_at)")


def _downgrade_to_v3(path) -> None:
    """Turn a current database back into schema 3 (before kw_log and the rank columns)."""
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER items_log_update")
    conn.execute("DROP TRIGGER items_log_delete")
    for col in ("confidence", "category", "session"):
        conn.execute(f"ALTER TABLE items DROP COLUMN {col}")
    conn.execute("DROP TABLE kw_log")
    _undo_validity(conn)
    _undo_doc_terms(conn)
    conn.execute("DELETE FROM schema_version WHERE version > 3")
    conn.commit()
    conn.close()


def test_v3_database_migrates_and_backfills_rank_fields(tmp_path):
    path = tmp_path / "old.db"
    s = HybridStore(path, index=False)
    for i, v in enumerate(VALUES):
        s.put(("m",), f"k{i}", v)
    s.close()
    _downgrade_to_v3(path)

    s = HybridStore(path, index=False)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    rows = conn.execute("SELECT value, confidence, category, session FROM items").fetchall()
    assert len(rows) == len(VALUES)
    for value, conf, cat, session in rows:
        assert (conf, cat, session) == rank_fields(json.loads(value))
    conn.close()
    assert [h.key for h in s.search(("m",), query="coffee")] == ["k0"]
    s.put(("m",), "k7", {"text": "coffee again", "session_id": "s1"})
    assert {h.key for h in s.search(("m",), query="coffee")} == {"k0", "k7"}
    s.close()


def test_rank_fields_rules():
    assert rank_fields({"confidence": 2, "category": "fact", "chat_id": 0}) == (2.0, "fact", "0")
    assert rank_fields({"confidence": False, "category": ["x"]}) == (None, None, None)
    assert rank_fields(["not", "a", "dict"]) == (None, None, None)


def test_v9_database_gets_doc_terms_from_its_postings(tmp_path):
    """Migration 010 packs each item's postings into doc_terms and drops the item index; the
    keyword index then answers, unindexes and checks as before."""
    path = tmp_path / "v9.db"
    clock = ManualClock()
    s = HybridStore(path, index=False, clock=clock)
    texts = {
        "a": "I drink coffee every morning, coffee with oat milk ☕",
        "b": "用户喜欢川菜，不吃香菜",
        "c": "coffee is fine but tea is better",
        "d": "",
    }
    for k, t in texts.items():
        s.put(("m",), k, {"text": t})
    before = [(h.key, h.score) for h in s.search(("m",), query="coffee milk")]
    conn = sqlite3.connect(path)
    want = sorted(conn.execute("SELECT item_id, term_id, tf, dl FROM postings").fetchall())
    s.close()
    _undo_validity(conn)
    _undo_doc_terms(conn)
    conn.execute("DELETE FROM schema_version WHERE version > 9")
    conn.commit()
    conn.close()

    s = HybridStore(path, index=False, clock=clock)
    conn = sqlite3.connect(path)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert "postings_item" not in names and "turns_created" not in names
    got = sorted(
        (item_id, tid, tf, dl)
        for item_id, dl, blob in conn.execute("SELECT item_id, dl, terms FROM doc_terms")
        for tid, tf in unpack_terms(blob)
    )
    assert got == want and got
    conn.close()
    assert [(h.key, h.score) for h in s.search(("m",), query="coffee milk")] == before
    assert s.check()["ok"]
    s.delete(("m",), "a")
    assert [h.key for h in s.search(("m",), query="coffee milk")] == ["c"]
    assert s.check()["ok"]
    conn = sqlite3.connect(path)
    left = conn.execute("SELECT COUNT(*) FROM postings p JOIN items i ON i.id = p.item_id")
    assert left.fetchone()[0] == conn.execute("SELECT COUNT(*) FROM postings").fetchone()[0]
    conn.close()
    s.close()


def test_v13_database_gets_the_validity_of_its_records(tmp_path):
    """Migration 014 reads each record's time and validity from its value: a superseded fact
    stored by an older version is left out of search at once, and dated when it was said."""
    path = tmp_path / "v13.db"
    s = HybridStore(path, index=False, clock=ManualClock())
    ns = ("memories", "u")
    s.put(ns, "old", {"kind": "semantic", "text": "User lives in Paris",
                      "occurred_at": "2024-01-01T00:00:00+00:00",
                      "valid_to": "2024-06-01T00:00:00+00:00", "superseded_by": "new"})  # fmt: skip
    s.put(ns, "new", {"kind": "semantic", "text": "User lives in Rome",
                      "occurred_at": "2024-06-01T00:00:00+00:00"})  # fmt: skip
    s.put(ns, "plain", {"text": "lives in a flat"})
    s.close()
    conn = sqlite3.connect(path)
    _undo_validity(conn)
    conn.execute("DELETE FROM schema_version WHERE version > 13")
    conn.commit()
    conn.close()

    s = HybridStore(path, index=False, clock=ManualClock())
    assert {h.key for h in s.search(ns, query="lives")} == {"new", "plain"}
    assert {h.key for h in s.search(ns, query="lives", include_superseded=True)} == {
        "old",
        "new",
        "plain",
    }
    assert [h.key for h in s.search(ns, query="lives", as_of="2024-03-01T00:00:00Z")] == ["old"]
    s.close()


def test_the_word_vectors_table_of_schema_14_is_dropped(tmp_path):
    path = tmp_path / "v14.db"
    HybridStore(path, index=False).close()
    conn = sqlite3.connect(path)  # back to schema 14: its table of word vectors, one row
    conn.execute(
        "CREATE TABLE word_vectors (model TEXT NOT NULL, word TEXT NOT NULL, vec BLOB NOT NULL,"
        " PRIMARY KEY (model, word)) WITHOUT ROWID"
    )
    conn.execute("INSERT INTO word_vectors VALUES ('m:1@2', 'oskar', x'0000')")
    conn.execute("ALTER TABLE items DROP COLUMN index_key")  # migration 016
    conn.execute("DELETE FROM schema_version WHERE version > 14")
    conn.commit()
    conn.close()
    HybridStore(path, index=False).close()
    conn = sqlite3.connect(path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    version = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
    conn.close()
    assert "word_vectors" not in tables and version == SCHEMA_VERSION


def test_records_of_schema_16_lose_the_fields_they_kept_at_their_default_and_kind_words(
    tmp_path,
):
    from datetime import datetime, timezone

    from langmem_plus.model.records import MemoryRecord

    path = tmp_path / "v16.db"
    said = datetime(2024, 1, 1, tzinfo=timezone.utc)
    kept = {"tier": "normal", "who": "user", "source": "user_stated"}
    fact = {**MemoryRecord(text="User lives in Rome", occurred_at=said).to_value(), **kept}
    core = {**MemoryRecord(text="User is Ann", tier="core", occurred_at=said).to_value()}
    episode = {"kind": "episodic", "category": "episode", **kept, "text": "u: hi", "verified": 1}
    s = HybridStore(path, index=False)
    for key, v in (("fact", fact), ("core", core), ("episode", episode), ("plain", kept)):
        s.put(("m",), key, v)
    s.close()
    conn = sqlite3.connect(path)  # back to schema 16: values as written then, text index keys
    for key, v in (("fact", fact), ("episode", episode)):
        text = json.dumps(v, ensure_ascii=False, separators=(",", ":"))
        conn.execute("UPDATE items SET value=?, index_key=? WHERE key=?", (text, "ab" * 16, key))
    conn.execute(
        "UPDATE items SET kind = CASE kind WHEN 'e' THEN 'episodic' WHEN 's' THEN 'semantic' END"
    )
    conn.execute("DELETE FROM schema_version WHERE version > 16")
    conn.commit()
    conn.close()
    s = HybridStore(path, index=False)
    got = {k: s.get(("m",), k).value for k in ("fact", "core", "episode", "plain")}
    assert got["fact"] == {k: v for k, v in fact.items() if k not in kept}
    assert list(got["fact"]) == [k for k in fact if k not in kept]  # in the order written
    assert got["fact"]["confidence"] == 0.9  # a fact keeps its confidence
    assert got["core"] == core and got["core"]["tier"] == "core"
    assert got["episode"] == {k: v for k, v in episode.items() if k not in kept}  # 1 stays
    assert got["plain"] == kept  # no record: left as it is
    assert {h.key for h in s.search(("m",), filter={"tier": "normal", "who": "user"})} == {
        "fact",
        "episode",
        "plain",
    }
    assert [h.key for h in s.search(("m",), filter={"kind": "episodic"})] == ["episode"]
    assert {h.key for h in s.search(("m",), filter={"kind": "semantic"})} == {"fact", "core"}
    s.close()
    conn = sqlite3.connect(path)
    kinds = dict(conn.execute("SELECT key, kind FROM items"))
    assert kinds == {"fact": "s", "core": "s", "episode": "e", "plain": None}
    keys = dict(conn.execute("SELECT key, typeof(index_key) FROM items"))
    version = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0]
    conn.close()
    assert keys["fact"] == keys["episode"] == "null" and keys["core"] == "blob"
    assert version == SCHEMA_VERSION
