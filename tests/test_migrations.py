"""A database written by an older schema opens, migrates and ranks like a new one."""

from __future__ import annotations

import json
import sqlite3

from langmem_plus import HybridStore
from langmem_plus.store.sqlite import SCHEMA_VERSION
from langmem_plus.store.writer import rank_fields

VALUES = [
    {"text": "tea over coffee", "category": "preference", "confidence": 0.9},
    {"text": "turn one", "session_id": "s1", "confidence": 1},
    {"text": "turn two", "session_id": 7},
    {"text": "flag", "session_id": True, "chat_id": "c9", "confidence": True},
    {"text": "blank", "session_id": "", "conversation_id": "conv"},
    {"text": "odd", "category": 3, "confidence": "high"},
    {"text": "plain"},
]


def _downgrade_to_v3(path) -> None:
    """Turn a current database back into schema 3 (before kw_log and the rank columns)."""
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER items_log_update")
    conn.execute("DROP TRIGGER items_log_delete")
    for col in ("confidence", "category", "session"):
        conn.execute(f"ALTER TABLE items DROP COLUMN {col}")
    conn.execute("DROP TABLE kw_log")
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
