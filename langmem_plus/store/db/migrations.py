"""The schema as numbered migrations: index i brings a database from version i to i + 1.

Never edit a released step; append a new one (store/db/database.py applies them on open).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

from langmem_plus.model.records import RECORD_DEFAULTS, record_columns
from langmem_plus.store.db.termpack import pack_terms

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Step"]

Step = str | Callable[[sqlite3.Connection], None]
"""One statement, or a function run on the migrating connection (in its transaction)."""


def _backfill_doc_terms(conn: sqlite3.Connection) -> None:
    """Fill `doc_terms` (store/keyword/docterms.py) from the postings of a database written before it."""
    rows = conn.execute("SELECT item_id, term_id, tf, dl FROM postings ORDER BY item_id, term_id")
    current: int | None = None
    dl = 0
    pairs: list[tuple[int, int]] = []
    batch: list[tuple[int, int, bytes]] = []
    for item_id, tid, tf, plen in rows:
        if item_id != current:
            if current is not None:
                batch.append((current, dl, pack_terms(pairs)))
            current, dl, pairs = item_id, plen, []
        pairs.append((tid, tf))
    if current is not None:
        batch.append((current, dl, pack_terms(pairs)))
    conn.executemany("INSERT OR REPLACE INTO doc_terms(item_id, dl, terms) VALUES (?, ?, ?)", batch)


def _backfill_validity(conn: sqlite3.Connection) -> None:
    """Fill the record columns of the records stored so far from their values."""
    rows = conn.execute(
        "SELECT id, value FROM items WHERE json_valid(value) "
        "AND json_extract(value, '$.kind') IN ('episodic', 'semantic')"
    ).fetchall()
    conn.executemany(
        "UPDATE items SET kind=?, slot=?, said_at=?, valid_from=?, valid_to=?, stale=? WHERE id=?",
        [(*record_columns(json.loads(v)), rid) for rid, v in rows],
    )


def _lean_record_values(conn: sqlite3.Connection) -> None:
    """Leave out of the records stored so far the fields at their default that they kept
    (tier, who, source, ...: a filter reads a missing one as its default); a fact's
    confidence stays (the score reads it). The stored text is otherwise the same."""
    drop = {k: v for k, v in RECORD_DEFAULTS.items() if k != "confidence"}
    rows = conn.execute("SELECT id, value FROM items WHERE kind IS NOT NULL").fetchall()
    changed = []
    for rid, text in rows:
        value = json.loads(text)
        lean = {k: v for k, v in value.items() if not (k in drop and _same(v, drop[k]))}
        if len(lean) < len(value):
            changed.append((json.dumps(lean, ensure_ascii=False, separators=(",", ":")), rid))
    conn.executemany("UPDATE items SET value=? WHERE id=?", changed)


def _same(stored: object, default: object) -> bool:
    """A stored field equal to its default, of the same JSON type (1 is no `true`)."""
    return type(stored) is type(default) and stored == default


def _move_followed_by(conn: sqlite3.Connection) -> None:
    """An episode's later versions were noted on it too (`metadata.followed_by`); the link is
    now kept on the later episode alone (its `metadata.follows`, found through 018's
    indexes). A later episode whose `follows` lacks the earlier one gets it added; the earlier
    one's `followed_by` goes. Nothing else in either value changes."""
    rows = conn.execute(
        "SELECT id, ns_id, key, value FROM items WHERE kind = 'e' "
        "AND instr(value, '\"followed_by\"') AND json_valid(value)"
    ).fetchall()
    changed: dict[int, dict[str, Any]] = {}
    for rid, ns_id, key, text in rows:
        value = changed.get(rid) or json.loads(text)
        meta = value.get("metadata")
        if not isinstance(meta, dict) or "followed_by" not in meta:
            continue
        later = meta.pop("followed_by")
        changed[rid] = value
        for lkey in later if isinstance(later, list) else ():
            got = conn.execute(
                "SELECT id, value FROM items WHERE ns_id = ? AND key = ? AND kind = 'e' "
                "AND json_valid(value)",
                (ns_id, str(lkey)),
            ).fetchone()
            if got is None:
                continue  # a later episode deleted since: its link went with it
            newer = changed.get(got[0]) or json.loads(got[1])
            nmeta = newer.setdefault("metadata", {})
            follows = nmeta.get("follows") if isinstance(nmeta.get("follows"), list) else []
            if key not in follows:
                nmeta["follows"] = [*follows, key]
                changed[got[0]] = newer
    conn.executemany(
        "UPDATE items SET value = ? WHERE id = ?",
        [(json.dumps(v, ensure_ascii=False, separators=(",", ":")), r) for r, v in changed.items()],
    )


# Migration 011's trigger body: the turns that read their text from the OLD item get their
# span of it back as their own content, and lose the link.
_GIVE_BACK_TEXT = """UPDATE turns SET content = COALESCE((
                SELECT substr(json_extract(OLD.value, '$.text'), x.start + 1, x.stop - x.start)
                FROM turn_text x WHERE x.turn_id = turns.id), content)
            WHERE id IN (SELECT turn_id FROM turn_text WHERE item_id = OLD.id);
            DELETE FROM turn_text WHERE item_id = OLD.id;"""


MIGRATIONS: list[str | tuple[Step, ...]] = [
    # 001_initial
    """
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS namespaces (
        id INTEGER PRIMARY KEY,
        ns TEXT NOT NULL UNIQUE,
        n_docs INTEGER NOT NULL DEFAULT 0,
        total_len INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE IF NOT EXISTS items (
        id INTEGER PRIMARY KEY,
        ns_id INTEGER NOT NULL REFERENCES namespaces(id),
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        last_accessed REAL,
        access_count INTEGER NOT NULL DEFAULT 0,
        ttl_minutes REAL,
        expires_at REAL,
        doc_len INTEGER NOT NULL DEFAULT 0,
        UNIQUE (ns_id, key)
    );
    CREATE INDEX IF NOT EXISTS items_expires ON items(expires_at) WHERE expires_at IS NOT NULL;
    CREATE TABLE IF NOT EXISTS terms (
        id INTEGER PRIMARY KEY,
        ns_id INTEGER NOT NULL,
        term TEXT NOT NULL,
        df INTEGER NOT NULL DEFAULT 0,
        UNIQUE (ns_id, term)
    );
    CREATE TABLE IF NOT EXISTS postings (
        term_id INTEGER NOT NULL,
        item_id INTEGER NOT NULL,
        tf INTEGER NOT NULL,
        dl INTEGER NOT NULL,
        PRIMARY KEY (term_id, item_id)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS postings_item ON postings(item_id);
    CREATE TABLE IF NOT EXISTS vectors (
        id INTEGER PRIMARY KEY,
        item_id INTEGER NOT NULL,
        ns_id INTEGER NOT NULL,
        path TEXT NOT NULL,
        vec BLOB NOT NULL
    );
    CREATE INDEX IF NOT EXISTS vectors_item ON vectors(item_id);
    CREATE TABLE IF NOT EXISTS vec_log (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        ns_id INTEGER NOT NULL,
        vec_id INTEGER NOT NULL,
        op INTEGER NOT NULL
    );
    """,
    # 002_conversations: turns, rolling/session summaries, profiles, symbol index
    """
    CREATE TABLE IF NOT EXISTS turns (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        symbols TEXT NOT NULL DEFAULT '[]',
        created_at REAL NOT NULL,
        is_collected INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX IF NOT EXISTS turns_session ON turns(user_id, session_id, id);
    CREATE INDEX IF NOT EXISTS turns_created ON turns(created_at);
    CREATE TABLE IF NOT EXISTS rolling_summaries (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        start_turn INTEGER NOT NULL,
        end_turn INTEGER NOT NULL,
        summary TEXT NOT NULL,
        key_symbols TEXT NOT NULL DEFAULT '[]',
        key_decisions TEXT NOT NULL DEFAULT '[]',
        created_at REAL NOT NULL
    );
    CREATE INDEX IF NOT EXISTS rolling_session ON rolling_summaries(user_id, session_id);
    CREATE TABLE IF NOT EXISTS session_summaries (
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        title TEXT NOT NULL,
        snippet TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (user_id, session_id)
    );
    CREATE TABLE IF NOT EXISTS profiles (
        user_id TEXT PRIMARY KEY,
        doc TEXT NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE TABLE IF NOT EXISTS symbol_index (
        symbol TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        turn_id INTEGER NOT NULL,
        relevance REAL NOT NULL,
        context TEXT,
        PRIMARY KEY (symbol, user_id, session_id, turn_id)
    );
    CREATE INDEX IF NOT EXISTS symbol_user ON symbol_index(user_id, symbol);
    """,
    # 003_items_indexed: items put with index=False stay out of every text match
    """
    ALTER TABLE items ADD COLUMN indexed INTEGER NOT NULL DEFAULT 1;
    """,
    # 004_kw_log: keyword-index change log; in-memory postings caches replay it (keyword.py)
    """
    CREATE TABLE IF NOT EXISTS kw_log (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        ns_id INTEGER NOT NULL,
        item_id INTEGER NOT NULL,
        op INTEGER NOT NULL
    );
    """,
    # 005_item_rank_fields: what ranking reads from an item's value, as plain columns (read
    # for every candidate of every search; JSON extraction there cost ~0.3 ms per query)
    """
    ALTER TABLE items ADD COLUMN confidence REAL;
    ALTER TABLE items ADD COLUMN category TEXT;
    ALTER TABLE items ADD COLUMN session TEXT;
    UPDATE items SET
        confidence = CASE WHEN json_valid(value)
            AND json_type(value, '$.confidence') IN ('integer', 'real')
            THEN json_extract(value, '$.confidence') END,
        category = CASE WHEN json_valid(value) AND json_type(value, '$.category') = 'text'
            THEN json_extract(value, '$.category') END,
        session = CASE WHEN json_valid(value) THEN COALESCE(
            CASE WHEN json_type(value, '$.session_id') IN ('text', 'integer')
                AND json_extract(value, '$.session_id') != ''
                THEN CAST(json_extract(value, '$.session_id') AS TEXT) END,
            CASE WHEN json_type(value, '$.chat_id') IN ('text', 'integer')
                AND json_extract(value, '$.chat_id') != ''
                THEN CAST(json_extract(value, '$.chat_id') AS TEXT) END,
            CASE WHEN json_type(value, '$.conversation_id') IN ('text', 'integer')
                AND json_extract(value, '$.conversation_id') != ''
                THEN CAST(json_extract(value, '$.conversation_id') AS TEXT) END) END;
    """,
    # 006_item_change_log: every UPDATE of a ranking column and every DELETE of an item, by any
    # writer, also goes to kw_log as op 3, so in-memory row caches (store/sqlite/rowcache.py) can drop what
    # changed. (A tuple: trigger bodies hold ';', so these statements are run whole.)
    (
        """
        CREATE TRIGGER IF NOT EXISTS items_log_update
        AFTER UPDATE OF created_at, updated_at, last_accessed, access_count, ttl_minutes,
            expires_at, confidence, category, session ON items
        BEGIN
            INSERT INTO kw_log(ns_id, item_id, op) VALUES (NEW.ns_id, NEW.id, 3);
        END
        """,
        """
        CREATE TRIGGER IF NOT EXISTS items_log_delete AFTER DELETE ON items
        BEGIN
            INSERT INTO kw_log(ns_id, item_id, op) VALUES (OLD.ns_id, OLD.id, 3);
        END
        """,
    ),
    # 007_turn_text: a logged turn whose exchange is kept as an episode item shares that
    # item's text (its span in it) instead of holding a second copy (store/sqlite/conversations.py)
    """
    CREATE TABLE IF NOT EXISTS turn_text (
        turn_id INTEGER PRIMARY KEY,
        item_id INTEGER NOT NULL,
        start INTEGER NOT NULL,
        stop INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS turn_text_item ON turn_text(item_id);
    """,
    # 008_item_key: find an item by key across namespaces in one index probe
    # (`HybridStore.locate`: Memory.get(id) without a user id)
    "CREATE INDEX IF NOT EXISTS items_key ON items(key);",
    # 009_turn_costs: what each turn cost per stage (langmem_plus/costs.py), for
    # `langmem-plus stats --costs`; one row per stage, `cost_id` groups a turn's stages
    """
    CREATE TABLE IF NOT EXISTS turn_costs (
        id INTEGER PRIMARY KEY,
        cost_id TEXT NOT NULL,
        phase TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT,
        stage TEXT NOT NULL,
        ms REAL NOT NULL,
        calls INTEGER NOT NULL DEFAULT 0,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL
    );
    CREATE INDEX IF NOT EXISTS turn_costs_user ON turn_costs(user_id, created_at);
    """,
    # 010_doc_terms: an item's terms packed in one row (store/keyword/docterms.py) replace the
    # postings(item_id) index, which repeated every posting; `turns(created_at)` goes too
    # (only an age cut-off over all users read it: that maintenance scans the turns)
    (
        "CREATE TABLE IF NOT EXISTS doc_terms "
        "(item_id INTEGER PRIMARY KEY, dl INTEGER NOT NULL, terms BLOB NOT NULL)",
        _backfill_doc_terms,
        "DROP INDEX IF EXISTS postings_item",
        "DROP INDEX IF EXISTS turns_created",
    ),
    # 011_keep_shared_turn_text: a turn that reads its text from an item (turn_text) gets its
    # own copy back before that item is deleted or its text changes, whoever deletes it
    # (decay, TTL, a user's delete, another process): what was said is never lost
    (
        f"""
        CREATE TRIGGER IF NOT EXISTS items_unshare_delete BEFORE DELETE ON items
        WHEN EXISTS (SELECT 1 FROM turn_text WHERE item_id = OLD.id)
        BEGIN
            {_GIVE_BACK_TEXT}
        END
        """,
        f"""
        CREATE TRIGGER IF NOT EXISTS items_unshare_update BEFORE UPDATE OF value ON items
        WHEN json_extract(NEW.value, '$.text') IS NOT json_extract(OLD.value, '$.text')
            AND EXISTS (SELECT 1 FROM turn_text WHERE item_id = OLD.id)
        BEGIN
            {_GIVE_BACK_TEXT}
        END
        """,
    ),
    # 012_log_value_updates: an UPDATE of an item's value, key or namespace is logged to kw_log
    # (op 3) like one of its ranking columns: the row cache holds small namespaces' full rows
    # (store/sqlite/rowcache.py), and a writer outside the store's API may change only the value
    (
        "DROP TRIGGER IF EXISTS items_log_update",
        """
        CREATE TRIGGER IF NOT EXISTS items_log_update
        AFTER UPDATE OF created_at, updated_at, last_accessed, access_count, ttl_minutes,
            expires_at, confidence, category, session, value, key, ns_id ON items
        BEGIN
            INSERT INTO kw_log(ns_id, item_id, op) VALUES (NEW.ns_id, NEW.id, 3);
        END
        """,
    ),
    # 013_word_vectors: the unit vectors of the words the common-word projection embeds, by
    # embedding model (store/sqlite/wordshelf.py): a new process reads them instead of embedding
    (
        """
        CREATE TABLE IF NOT EXISTS word_vectors (
            model TEXT NOT NULL,
            word TEXT NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (model, word)
        ) WITHOUT ROWID
        """,
    ),
    # 014_record_columns: a record's kind, slot, own time and validity as columns
    # (model/records.py record_columns), so every search leaves superseded facts out and ranks
    # corrected episodes lower, whichever door it comes through (store/seams.py Validity),
    # and finds records by kind or slot without reading values
    (
        "ALTER TABLE items ADD COLUMN kind TEXT",
        "ALTER TABLE items ADD COLUMN slot TEXT",
        "ALTER TABLE items ADD COLUMN said_at REAL",
        "ALTER TABLE items ADD COLUMN valid_from REAL",
        "ALTER TABLE items ADD COLUMN valid_to REAL",
        "ALTER TABLE items ADD COLUMN stale INTEGER NOT NULL DEFAULT 0",
        _backfill_validity,
        # a fact's other values are found by slot (the write path closes them)
        "CREATE INDEX IF NOT EXISTS items_slot ON items(ns_id, slot) WHERE slot IS NOT NULL",
    ),
    # 015_drop_word_vectors: the table of 013 goes (a common word is embedded again by each
    # new process; keeping it saved one model call on a user's first search, no measured share
    # of a search: docs/benchmarks.md, speed layers)
    ("DROP TABLE IF EXISTS word_vectors",),
    # 016_index_key: a digest of what an item's postings and vectors were made from
    # (store/sqlite/writer.py `index_key`): a put that changes only other fields (an episode's
    # links, a fact's validity) keeps them instead of unindexing and indexing the same text
    ("ALTER TABLE items ADD COLUMN index_key TEXT",),
    # 017_lean_records: records keep no field at its default in their value (model/records.py
    # `to_value`, `RECORD_DEFAULTS`); a record's kind is a letter (store/sqlite/rows.py
    # `KIND_CODES`); index keys are 8-byte blobs (a key of 016's form, 32 hex digits, is
    # cleared: that item's next put indexes it again)
    (
        _lean_record_values,
        "UPDATE items SET kind = CASE kind WHEN 'episodic' THEN 'e' WHEN 'semantic' THEN 's' "
        "ELSE kind END WHERE kind IS NOT NULL",
        "UPDATE items SET index_key = NULL WHERE typeof(index_key) = 'text'",
    ),
    # 018_follows_index: a newer version of an episode is noted on the newer episode alone
    # (`metadata.follows`); an episode's followers are found through these indexes of the
    # first two keys it names (store/ranking/versions.py `FOLLOWS_INDEXED`; store/sqlite/
    # storage.py `followers`), not by rewriting the earlier row (`followed_by`, moved here)
    (
        _move_followed_by,
        "CREATE INDEX IF NOT EXISTS items_follows0 ON items(ns_id, "
        "json_extract(value, '$.metadata.follows[0]')) WHERE kind = 'e' AND json_valid(value) "
        "AND json_extract(value, '$.metadata.follows[0]') IS NOT NULL",
        "CREATE INDEX IF NOT EXISTS items_follows1 ON items(ns_id, "
        "json_extract(value, '$.metadata.follows[1]')) WHERE kind = 'e' AND json_valid(value) "
        "AND json_extract(value, '$.metadata.follows[1]') IS NOT NULL",
    ),
]

SCHEMA_VERSION = len(MIGRATIONS)
