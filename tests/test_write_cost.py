"""What a write costs in SQL: a put that changes only an item's other fields keeps its
postings and vectors (store/sqlite/writer.py `index_key`), and one `Memory.add` of an exchange
runs a bounded number of statements (benchmarks/add_cost.py measures the same on LoCoMo)."""

from __future__ import annotations

import itertools
import sqlite3
from datetime import datetime, timedelta, timezone

from conftest import HashEmbeddings

from langmem_plus import HybridStore, Memory, MemoryConfig
from langmem_plus.text import tokenize


def _index_rows(path) -> tuple[list, list, list]:
    conn = sqlite3.connect(path)
    try:
        postings = conn.execute(
            "SELECT term_id, item_id, tf FROM postings ORDER BY 1, 2"
        ).fetchall()
        vectors = conn.execute("SELECT id, item_id, path FROM vectors ORDER BY id").fetchall()
        logs = conn.execute("SELECT op FROM vec_log ORDER BY seq").fetchall()
    finally:
        conn.close()
    return postings, vectors, logs


def test_a_put_of_the_same_text_keeps_postings_and_vectors(tmp_path, hash_index):
    path = tmp_path / "s.db"
    store = HybridStore(path, index=hash_index)
    store.put(("m",), "a", {"text": "green tea in the morning", "n": 1})
    before = _index_rows(path)
    store.put(("m",), "a", {"text": "green tea in the morning", "n": 2})  # text unchanged
    assert _index_rows(path) == before  # no vector dropped and added again, no posting
    assert store.get(("m",), "a").value["n"] == 2
    assert [h.key for h in store.search(("m",), query="green tea")] == ["a"]

    store.put(("m",), "a", {"text": "black coffee at night", "n": 3})  # text changed
    postings, vectors, _logs = _index_rows(path)
    assert postings != before[0] and vectors[0][0] != before[1][0]
    assert [h.key for h in store.search(("m",), query="coffee")] == ["a"]
    conn = sqlite3.connect(path)
    terms = {t for (t,) in conn.execute("SELECT term FROM terms")}
    conn.close()
    assert terms == set(tokenize("black coffee at night"))  # the old text's terms are gone
    store.close()
    report = HybridStore(path, index=hash_index)
    assert report.check()["ok"]
    report.close()


def test_index_fields_changed_reindex_the_same_value(tmp_path, hash_index):
    """The key is what was indexed, not the value: other index fields index it again."""
    path = tmp_path / "s.db"
    store = HybridStore(path, index=hash_index)
    store.put(("m",), "a", {"text": "green tea", "note": "violin lessons"})
    store.put(("m",), "a", {"text": "green tea", "note": "violin lessons"}, index=["note"])
    assert [h.key for h in store.search(("m",), query="violin")] == ["a"]
    store.put(("m",), "a", {"text": "green tea", "note": "violin lessons"}, index=False)
    assert store.search(("m",), query="violin") == []
    assert store.check()["ok"]
    store.close()


def test_a_new_vector_form_writes_the_same_text_again(tmp_path, hash_index):
    """The key covers the vectors' stored form: under another `vector_storage` a put of the
    same text stores its vector in the configured form, as any other put does."""
    path = tmp_path / "s.db"
    old = HybridStore(
        path, index=hash_index, config=MemoryConfig(store={"vector_storage": "float16"})
    )
    old.put(("m",), "a", {"text": "green tea in the morning"})
    old.close()
    store = HybridStore(path, index=hash_index)  # int8, the default
    store.put(("m",), "a", {"text": "green tea in the morning", "n": 2})
    conn = sqlite3.connect(path)
    (length,) = conn.execute("SELECT length(vec) FROM vectors").fetchone()
    conn.close()
    assert length == hash_index["dims"] + 4  # int8 codes and their scale, not float16
    assert [h.key for h in store.search(("m",), query="green tea")] == ["a"]
    store.close()


# --------------------------------------------------------------------------- Memory.add
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
# three conversations a week apart, each of two exchanges (a user turn and the reply)
SESSIONS = [
    [
        ("I play the violin every Tuesday evening.", "That sounds lovely."),
        ("My sister Anna lives in Lyon.", "Lyon is a beautiful city."),
    ],
    [
        ("The violin lessons moved to Thursday evening now.", "Thursday it is."),
        ("I started learning Spanish this month.", "¡Qué bien!"),
    ],
    [
        ("Anna visited me last weekend from Lyon.", "How nice to see her."),
        ("We cooked paella together.", "Delicious!"),
    ],
]


def _traced_adds(path, embeddings, metadata=None) -> list[list[str]]:
    """The SQL statements of each `Memory.add` of `SESSIONS` (a trigger's program not
    counted, as benchmarks/add_cost.py counts them)."""
    mem = Memory(path, embeddings=embeddings)
    traced: list[str] = []

    def trace(sql: str) -> None:
        # a trigger's program is traced as the statement that fired it again: counted once
        if not sql.startswith("--") and not (traced and traced[-1] == sql):
            traced.append(sql)

    mem.store._db.conn.set_trace_callback(trace)
    out = []
    for s, exchanges in enumerate(SESSIONS):
        for n, (said, reply) in enumerate(exchanges):
            traced.clear()
            msgs = [{"role": "user", "content": said}, {"role": "assistant", "content": reply}]
            at = T0 + timedelta(days=7 * s, minutes=n)
            mem.add(msgs, "u", session_id=f"s{s}", timestamp=at, metadata=metadata)
            out.append(list(traced))
    mem.close()
    return out


# Statements of one exchange added to a store that holds earlier conversations (the most
# of `SESSIONS`'s adds: 110 before an update that leaves an item's text kept its postings
# and vectors, 63 before the transactions below were merged): a read transaction per search
# (a fact's slot and restatement, the earlier versions), one write to read the reply it
# answers and log its turns, one write of the records with the turns linked to the
# episode's text, the vector index's catch-up and one write for the cost record
MAX_STATEMENTS_PER_EXCHANGE = 59
MAX_TRANSACTIONS_PER_EXCHANGE = 7


def test_one_exchange_costs_a_bounded_number_of_statements(tmp_path, hash_embeddings):
    adds = _traced_adds(tmp_path / "m.db", hash_embeddings)
    counts = [len(a) for a in adds]
    assert max(counts) <= MAX_STATEMENTS_PER_EXCHANGE, counts
    for statements in adds:  # an earlier episode linked to a later one is not indexed again
        assert not any(s.startswith("DELETE FROM postings") for s in statements)
        assert sum(s.startswith("BEGIN") for s in statements) <= MAX_TRANSACTIONS_PER_EXCHANGE


def test_metadata_costs_no_statement_more(tmp_path, hash_embeddings):
    """Record fields in `metadata` are set before the one write: no read-back, no second
    write (the statements are those of the same exchanges without metadata)."""
    plain = _traced_adds(tmp_path / "a.db", hash_embeddings)
    tagged = _traced_adds(tmp_path / "b.db", hash_embeddings, {"category": "hobby", "x": 1})
    assert [len(a) for a in tagged] == [len(a) for a in plain]


def test_an_earlier_version_is_not_read_again(tmp_path, hash_embeddings):
    """The earlier exchange a new one follows is written from the record its search read
    (`earlier_episodes`), not fetched again by id before the write."""
    mem = Memory(tmp_path / "m.db", embeddings=hash_embeddings)
    got: list[str] = []
    real_get = mem.store.get

    def spy(namespace, key, **kw):  # type: ignore[no-untyped-def]
        got.append(key)
        return real_get(namespace, key, **kw)

    ids = []
    for s, exchanges in enumerate(SESSIONS):
        for n, (said, reply) in enumerate(exchanges):
            msgs = [{"role": "user", "content": said}, {"role": "assistant", "content": reply}]
            at = T0 + timedelta(days=7 * s, minutes=n)
            ids.append(mem.add(msgs, "u", session_id=f"s{s}", timestamp=at)[0])
            mem.store.get = spy  # type: ignore[method-assign]  (from the second add on)
    read_by_adds = set(got)
    followed = [i for i in ids if mem.store.followers(("memories", "u"), [i])[i]]
    assert followed  # the later exchanges about Anna and the violin follow earlier ones
    assert not read_by_adds & set(followed), read_by_adds
    mem.close()


def test_a_write_inside_a_write_is_part_of_it(tmp_path):
    """`Database.write` inside a write joins it: one BEGIN/COMMIT, and an error that leaves
    the outer one rolls back what the inner one wrote."""
    from langmem_plus.store.db.database import Database

    db = Database(tmp_path / "d.db")
    traced: list[str] = []
    db.conn.set_trace_callback(traced.append)
    with db.write() as conn:
        conn.execute("INSERT INTO meta(key, value) VALUES ('a', '1')")
        with db.write() as inner:
            inner.execute("INSERT INTO meta(key, value) VALUES ('b', '2')")
    assert sum(s.startswith(("BEGIN", "COMMIT")) for s in traced) == 2
    try:
        with db.write() as conn:
            with db.write() as inner:
                inner.execute("INSERT INTO meta(key, value) VALUES ('c', '3')")
            raise RuntimeError("after the inner write")
    except RuntimeError:
        pass
    assert db.get_meta("a") == "1" and db.get_meta("b") == "2" and db.get_meta("c") is None
    with db.write() as conn:  # a fresh transaction after the rollback
        conn.execute("INSERT INTO meta(key, value) VALUES ('d', '4')")
    assert db.get_meta("d") == "4"
    db.close()


def test_write_with_commits_the_puts_and_the_log_together(tmp_path, hash_index):
    """`HybridStore.write_with`: the puts and what `then` writes to the store's conversation
    log in one transaction; an error in `then` leaves neither; only puts are taken."""
    import pytest
    from langgraph.store.base import GetOp, PutOp

    from langmem_plus.errors import ValidationError

    store = HybridStore(tmp_path / "s.db", index=hash_index)
    log = store.conversations
    traced: list[str] = []
    store._db.conn.set_trace_callback(traced.append)
    store.write_with(
        [PutOp(("m",), "a", {"text": "green tea"})],
        lambda: log.add_turns("u", "s", [("user", "green tea")]),
    )
    assert sum(s.startswith("BEGIN IMMEDIATE") for s in traced) == 1
    assert store.get(("m",), "a") is not None and len(log.turns("u", "s")) == 1

    def fail() -> None:
        log.add_turns("u", "s", [("user", "black coffee")])
        raise RuntimeError("the log write failed")

    with pytest.raises(RuntimeError):
        store.write_with([PutOp(("m",), "b", {"text": "black coffee"})], fail)
    assert store.get(("m",), "b") is None and len(log.turns("u", "s")) == 1
    assert "b" not in [h.key for h in store.search(("m",), query="black coffee")]
    with pytest.raises(ValidationError):
        store.write_with([GetOp(("m",), "a")], lambda: None)  # type: ignore[list-item]
    assert store.check()["ok"]
    store.close()


def test_puts_inside_an_open_write_reach_the_vector_index_once_committed(tmp_path, hash_index):
    """A batch inside a caller's write transaction leaves the FAISS index alone until the
    transaction commits (a rollback leaves no vector behind); the next read catches up."""
    import pytest

    store = HybridStore(tmp_path / "s.db", index=hash_index)
    store.put(("m",), "a", {"text": "green tea"})
    with pytest.raises(RuntimeError), store.conversations.transaction():
        store.put(("m",), "b", {"text": "black coffee"})
        raise RuntimeError("the caller's write fails")
    assert store._vec.count() == 1 and store.get(("m",), "b") is None
    with store.conversations.transaction():
        store.put(("m",), "c", {"text": "oolong tea"})
    assert store._vec.count() == 1  # not yet: nothing read since the commit
    assert "c" in [h.key for h in store.search(("m",), query="oolong tea")]
    assert store._vec.count() == 2 and store.check()["ok"]
    store.close()


class _Recording(HashEmbeddings):
    """Hash embeddings that note every document text they embed."""

    def __init__(self) -> None:
        super().__init__()
        self.documents: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents.extend(texts)
        return super().embed_documents(texts)


def test_a_record_written_again_with_its_text_is_not_embedded_again(tmp_path):
    """An exchange's write embeds its new records only: an earlier episode written again (a
    change reported about it marks it `corrected_by`) keeps its vectors without its text
    being embedded again, and the store ends as it would with every text embedded (same
    vectors, a consistent index)."""
    emb = _Recording()
    mem = Memory(tmp_path / "m.db", embeddings=emb)
    for s, exchanges in enumerate(SESSIONS):
        for n, (said, reply) in enumerate(exchanges):
            msgs = [{"role": "user", "content": said}, {"role": "assistant", "content": reply}]
            at = T0 + timedelta(days=7 * s, minutes=n)
            before = len(emb.documents)
            rec = mem.get(mem.add(msgs, "u", session_id=f"s{s}", timestamp=at)[0])
            assert rec.text in emb.documents[before:]
    marked = [r for r in mem.get_all("u").items if r.corrected_by]
    assert marked  # an earlier episode was written again (marked), its text not embedded
    assert len(emb.documents) == len(set(emb.documents))  # no text embedded twice
    assert mem.store.check()["ok"]
    mem.close()


def test_write_with_embeds_a_text_the_caller_wrongly_held_unchanged(tmp_path, hash_index):
    """`same_text` is a hint the store checks: a put whose stored text differs after all is
    embedded and indexed (the batch written again), never left with the old vectors."""
    from langgraph.store.base import PutOp

    store = HybridStore(tmp_path / "s.db", index=hash_index)
    store.put(("m",), "a", {"text": "green tea in the morning"})
    store.put(("m",), "b", {"text": "violin lessons on tuesday"})
    logged: list[int] = []
    store.write_with(
        [
            PutOp(("m",), "a", {"text": "black coffee at night"}),  # changed, held unchanged
            PutOp(("m",), "b", {"text": "violin lessons on tuesday", "n": 1}),  # unchanged
        ],
        lambda: logged.append(1),
        same_text=[(("m",), "a"), (("m",), "b")],
    )
    assert logged == [1]  # `then` ran once: in the write that committed
    assert store.search(("m",), query="black coffee at night", limit=1)[0].key == "a"
    assert store.get(("m",), "b").value["n"] == 1
    assert store.search(("m",), query="violin lessons", limit=1)[0].key == "b"
    report = store.check()
    assert report["ok"], report
    store.close()


def test_an_add_without_a_session_opens_no_empty_transaction(tmp_path, hash_embeddings):
    """Without `session_id` nothing is logged and no reply is read: no write is opened for it."""
    mem = Memory(tmp_path / "m.db", embeddings=hash_embeddings)
    mem.add("I play the violin every Tuesday evening.", "u")
    traced: list[str] = []
    mem.store._db.conn.set_trace_callback(traced.append)
    mem.add("My sister Anna lives in Lyon.", "u")
    mem.close()
    pairs = list(itertools.pairwise(traced))
    assert ("BEGIN IMMEDIATE", "COMMIT") not in pairs, traced
