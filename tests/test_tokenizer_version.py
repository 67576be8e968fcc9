"""A database whose keyword index was built by another tokenizer version is rebuilt on open
(store/sqlite/maintenance.py `keep_tokens_current`): a query's tokens meet the items' again,
vectors untouched."""

from __future__ import annotations

import logging
import re
import sqlite3

import pytest
from milvus_fixtures import requires_lite

from langmem_plus import HybridStore
from langmem_plus.store.sqlite import maintenance as maint_mod
from langmem_plus.store.sqlite import writer as writer_mod
from langmem_plus.store.sqlite.maintenance import TOKENIZER_META, Maintenance
from langmem_plus.text.tokenize import TOKENIZER_VERSION, tokenize

NS = ("memories", "u1")
ITEMS = {
    "m": "I love horror movies",
    "b": "My e-bike got a flat tyre",
    "s": "She studied cookies and parties",
    "z": "用户喜欢吃川菜",
}


def _old_tokenize(text: str) -> list[str]:
    """Tokens of an earlier version: lower-cased words, nothing folded ("movies", "e-bike")."""
    return [w.lower() for w in re.findall(r"[\w-]+", text)]


def _old_store(path, monkeypatch, stamp: str | None, index=False) -> None:
    """A database written with `_old_tokenize`, stamped `stamp` (None: no stamp, as a
    database written before the stamp existed)."""
    with monkeypatch.context() as m:
        m.setattr(writer_mod, "tokenize", _old_tokenize)
        s = HybridStore(path, index=index)
        for key, text in ITEMS.items():
            s.put(NS, key, {"text": text})
        s.put(NS, "hidden", {"text": "movies I never index"}, index=False)
        with s._db.write() as conn:
            if stamp is None:
                conn.execute("DELETE FROM meta WHERE key=?", (TOKENIZER_META,))
            else:
                s._db.set_meta(conn, TOKENIZER_META, stamp)
        s.close()


def _keys(store: HybridStore, query: str) -> set[str]:
    return {h.key for h in store.search(NS, query=query, limit=10)}


def _terms(store: HybridStore) -> set[str]:
    with store._db.read() as conn:
        return {t for (t,) in conn.execute("SELECT term FROM terms")}


@pytest.mark.parametrize("stamp", [None, "1"])
def test_old_tokens_are_rebuilt_on_open(tmp_path, monkeypatch, stamp):
    path = tmp_path / "m.db"
    _old_store(path, monkeypatch, stamp)
    s = HybridStore(path, index=False)
    try:
        # each query also names a word the old tokens hold ("flat", "horror"), so the result is
        # the keyword index's, not the substring fallback's (it runs without keyword evidence)
        assert _keys(s, "what movie? flat") == {"m", "b"}
        assert _keys(s, "bike horror") == {"b", "m"}
        assert _keys(s, "study the cookie party, horror") == {"s", "m"}
        assert _keys(s, "川菜") == {"z"}
        assert {"movi", "bik", "studi"} <= _terms(s) and "movies" not in _terms(s)
        assert s._db.get_meta(TOKENIZER_META) == str(TOKENIZER_VERSION)
        assert s.check()["ok"], s.check()  # lengths, document frequencies, namespace counts
        assert _keys(s, "never index") == set()  # an unindexed item stays out
    finally:
        s.close()


def test_without_the_rebuild_the_old_tokens_miss(tmp_path, monkeypatch):
    """What the rebuild repairs: old postings under the current stamp miss "movie"."""
    path = tmp_path / "m.db"
    _old_store(path, monkeypatch, str(TOKENIZER_VERSION))
    s = HybridStore(path, index=False)
    try:
        assert _keys(s, "what movie? flat") == {"b"} and "movies" in _terms(s)
        assert _keys(s, "bike horror") == {"m"}
    finally:
        s.close()


def _vectors_and_keys(path) -> tuple[list, list]:
    conn = sqlite3.connect(path)
    try:
        return (
            conn.execute("SELECT item_id, path, vec FROM vectors ORDER BY id").fetchall(),
            conn.execute("SELECT key, index_key FROM items ORDER BY id").fetchall(),
        )
    finally:
        conn.close()


def test_the_rebuild_leaves_vectors_and_index_keys(tmp_path, monkeypatch, hash_index):
    path = tmp_path / "m.db"
    _old_store(path, monkeypatch, "1", index=hash_index)
    before = _vectors_and_keys(path)
    assert before[0]  # the items have vectors
    s = HybridStore(path, index=hash_index)
    try:
        assert "movi" in _terms(s) and "movies" not in _terms(s)
        assert s.check()["ok"], s.check()
        assert _keys(s, "what movie? flat") >= {"m", "b"}
    finally:
        s.close()
    assert _vectors_and_keys(path) == before


def test_a_new_store_is_stamped_and_an_open_one_not_rebuilt_again(tmp_path):
    path = tmp_path / "m.db"
    s = HybridStore(path, index=False)
    assert s._db.get_meta(TOKENIZER_META) == str(TOKENIZER_VERSION)
    s.put(NS, "m", {"text": "I love horror movies"})
    s.close()
    s = HybridStore(path, index=False)
    try:
        assert s._maint.keep_tokens_current() is False  # current: nothing to do
        assert _keys(s, "movie") == {"m"}
    finally:
        s.close()


def test_reindex_stamps_the_version(tmp_path, monkeypatch):
    path = tmp_path / "m.db"
    _old_store(path, monkeypatch, str(TOKENIZER_VERSION))
    s = HybridStore(path, index=False)
    try:
        with s._db.write() as conn:
            s._db.set_meta(conn, TOKENIZER_META, "1")
        s.reindex()
        assert s._db.get_meta(TOKENIZER_META) == str(TOKENIZER_VERSION)
        assert _keys(s, "what movie? flat") == {"m", "b"}
    finally:
        s.close()


def test_read_only_old_database_opens_with_a_warning(tmp_path, monkeypatch, caplog):
    path = tmp_path / "m.db"
    _old_store(path, monkeypatch, "1")
    with caplog.at_level(logging.WARNING, logger="langmem_plus.store.hybrid"):
        s = HybridStore(path, index=False, read_only=True)
    try:
        assert "tokenizer version" in caplog.text
        assert s._db.get_meta(TOKENIZER_META) == "1"  # nothing written
        assert _keys(s, "horror") == {"m"}  # what still meets is found
    finally:
        s.close()


@requires_lite
def test_milvus_lite_old_tokens_are_rebuilt_on_open(tmp_path, monkeypatch, hash_index):
    """The same on Milvus Lite: the items' tokens and the statistics rows are rebuilt, the
    vectors stay."""
    from langmem_plus.store.milvus import storage as milvus_storage

    path = tmp_path / "t.milvus.db"

    def vectors(store: HybridStore) -> list:
        st = store._storage
        got = st.client.query(st.names.vectors, filter='pk != ""', output_fields=["pk", "vec"])
        return sorted((e["pk"], [round(float(x), 6) for x in e["vec"]]) for e in got)

    with monkeypatch.context() as m:
        m.setattr(milvus_storage, "tokenize", _old_tokenize)
        s = HybridStore(path, index=hash_index)
        for key, text in ITEMS.items():
            s.put(NS, key, {"text": text})
        st = s._storage
        st.client.alter_collection_properties(
            st.names.items, properties={milvus_storage._TOKENIZER_PROPERTY: "1"}
        )
        assert "m" not in _milvus_keyword_keys(s, "what movie? flat")  # old tokens miss
        before = vectors(s)
        s.close()
    s = HybridStore(path, index=hash_index)
    try:
        st = s._storage
        props = st.client.describe_collection(st.names.items)["properties"]
        assert props[milvus_storage._TOKENIZER_PROPERTY] == str(TOKENIZER_VERSION)
        assert _milvus_keyword_keys(s, "what movie? flat") == {"m", "b"}
        assert _milvus_keyword_keys(s, "bike horror") == {"b", "m"}
        assert s.check()["ok"], s.check()  # the statistics rows equal a recount
        assert vectors(s) == before and before
    finally:
        s.close()


def _milvus_keyword_keys(store: HybridStore, query: str) -> set[str]:
    """The keys whose keyword score is positive (the vector side left out)."""
    hits = store.search(NS, query=query, limit=10)
    return {h.key for h in hits if h.components.get("bm25", 0) > 0}


NEW = "Parties with cookies every weekend"


def _indexed(store: HybridStore) -> dict[str, list[str]]:
    """key -> the terms its postings hold."""
    with store._db.read() as conn:
        rows = conn.execute(
            "SELECT i.key, t.term FROM postings p JOIN terms t ON t.id = p.term_id "
            "JOIN items i ON i.id = p.item_id"
        ).fetchall()
    got: dict[str, list[str]] = {}
    for key, term in rows:
        got.setdefault(key, []).append(term)
    return {k: sorted(v) for k, v in got.items()}


def _write_lock_is_free(path) -> bool:
    """Whether another connection takes the write lock at once (no busy wait)."""
    other = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        assert "locked" in str(exc)
        return False
    else:
        other.execute("ROLLBACK")
        return True
    finally:
        other.close()


def _between_read_and_write(monkeypatch, action) -> list[bool]:
    """Run `action()` once, on the rebuild's first tokenising call: after its read, before its
    write transaction; returns [True] once it ran."""
    ran: list[bool] = []

    def hooked(text: str) -> list[str]:
        if not ran:
            ran.append(True)
            action()
        return tokenize(text)

    monkeypatch.setattr(maint_mod, "tokenize", hooked)
    return ran


def test_the_write_lock_is_free_while_the_rebuild_tokenises(tmp_path, monkeypatch):
    """Another connection takes the write lock at once (no busy wait) while items are
    tokenised: the rebuild holds it only for writing the index."""
    path = tmp_path / "m.db"
    _old_store(path, monkeypatch, "1")

    def take_the_write_lock() -> None:
        assert _write_lock_is_free(path)
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("INSERT INTO meta(key, value) VALUES ('probe', 'x')")
        finally:
            other.close()

    ran = _between_read_and_write(monkeypatch, take_the_write_lock)
    s = HybridStore(path, index=False)
    try:
        assert ran == [True]
        assert s._db.get_meta("probe") == "x"
        assert _keys(s, "what movie? flat") == {"m", "b"}
        assert s.check()["ok"], s.check()
    finally:
        s.close()


def test_writes_made_during_the_rebuild_are_indexed_and_deletes_stay(tmp_path, monkeypatch):
    """Between the rebuild's read and its write, another store (a process already on the
    current tokenizer, and one still on the old one) adds, rewrites and deletes items: each
    is indexed by its current text with the current tokens, the deleted one stays deleted,
    nothing twice."""
    path = tmp_path / "m.db"
    _old_store(path, monkeypatch, "1")
    with monkeypatch.context() as m:  # a process that opened before the stamp changed
        m.setattr(Maintenance, "keep_tokens_current", lambda self: False)
        other = HybridStore(path, index=False)

    def write_meanwhile() -> None:
        assert _write_lock_is_free(path)  # else the writes below would wait on the rebuild
        other.put(NS, "new", {"text": NEW})  # current code
        other.delete(NS, "s")
        with monkeypatch.context() as m:  # old code: its own (old) tokens
            m.setattr(writer_mod, "tokenize", _old_tokenize)
            other.put(NS, "b", {"text": "My e-bike shows horror movies now"})
            other.put(NS, "old", {"text": "Studies of bikes"})

    try:
        ran = _between_read_and_write(monkeypatch, write_meanwhile)
        s = HybridStore(path, index=False)
        try:
            assert ran == [True]
            texts = {**ITEMS, "b": "My e-bike shows horror movies now", "new": NEW}
            texts["old"] = "Studies of bikes"
            del texts["s"]
            # every indexed item holds exactly its current text's current tokens, once
            assert _indexed(s) == {k: sorted(set(tokenize(t))) for k, t in texts.items()}
            with s._db.read() as conn:
                n_docs = conn.execute("SELECT SUM(n_docs) FROM namespaces").fetchone()[0]
            assert n_docs == len(texts) == 5
            assert _keys(s, "cookie party") == {"new"}  # "s" (cookies, parties) is gone
            assert s.get(NS, "s") is None and s.get(NS, "new") is not None
            assert s.check()["ok"], s.check()
        finally:
            s.close()
    finally:
        other.close()


def test_a_rebuild_done_meanwhile_by_another_opener_is_not_repeated(tmp_path, monkeypatch):
    """Two stores open the old database at once: the one that writes first rebuilds, the
    other sees the stamp in its write transaction and leaves the index as it is."""
    path = tmp_path / "m.db"
    _old_store(path, monkeypatch, "1")
    rebuilds: list[int] = []
    index_all = Maintenance._index_all

    def counted(self, conn, docs):  # type: ignore[no-untyped-def]
        rebuilds.append(len(docs))
        index_all(self, conn, docs)

    monkeypatch.setattr(Maintenance, "_index_all", counted)
    opened: list[HybridStore] = []

    def open_another() -> None:
        assert _write_lock_is_free(path)  # else this open would wait on the rebuild
        opened.append(HybridStore(path, index=False))

    ran = _between_read_and_write(monkeypatch, open_another)
    s = HybridStore(path, index=False)
    try:
        assert ran == [True] and rebuilds == [4]  # the inner opener's only
        assert _indexed(s) == {k: sorted(set(tokenize(t))) for k, t in ITEMS.items()}
        assert s.check()["ok"], s.check()
    finally:
        s.close()
        for o in opened:
            o.close()
