"""A newer version of an episode is noted once, on the newer episode (`metadata.follows`);
the store finds an episode's followers with an index lookup (`HybridStore.followers`), on
SQLite and Milvus Lite alike, and nothing rewrites the earlier row to link it."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest
from langgraph.store.base import InvalidNamespaceError
from milvus_fixtures import LiteFile, requires_lite

from langmem_plus import HybridStore, Memory
from langmem_plus.episodic.episodes import episode_record
from langmem_plus.episodic.validity import newer_statement
from langmem_plus.episodic.versions import MAX_LATER, later_versions
from langmem_plus.errors import ValidationError
from langmem_plus.store.db.database import SCHEMA_VERSION

U = "u"
NS = ("memories", U)
T0 = datetime(2025, 1, 1, 9, tzinfo=timezone.utc)


def _episode(said: str, day: int, follows: list[str] | None = None) -> dict:
    turns = [{"role": "user", "text": said}, {"role": "assistant", "text": "Ok."}]
    rec = episode_record(NS, turns, session_id=f"s{day}", occurred_at=T0 + timedelta(days=day))
    if follows:
        rec.metadata = {**rec.metadata, "follows": follows}
    return rec.to_value()


def _fill(store: HybridStore) -> None:
    store.put(NS, "a", _episode("I drive a Corolla", 0))
    store.put(NS, "b", _episode("I sold the Corolla, I take the bus", 10, ["a"]))
    store.put(NS, "c", _episode("The bus is late again", 20, ["b"]))
    store.put(NS, "d", _episode("Back to driving, a Civic now", 30, ["x", "a"]))  # second key
    store.put(("memories", "other"), "e", _episode("I drive a Corolla too", 40, ["a"]))
    store.put(NS, "f", {"text": "not an episode", "metadata": {"follows": ["a"]}})
    store.put(NS, 'say "hi"\\', _episode("Hi", 50, ['say "hi"\\']))  # no plain literal


def _lookups(store: HybridStore) -> None:
    got = store.followers(NS, ["a", "b", "c", "nobody"])
    assert got == {"a": ["b", "d"], "b": ["c"], "c": [], "nobody": []}
    assert store.followers(("memories", "other"), ["a"]) == {"a": ["e"]}
    assert store.followers(("memories", "nobody"), ["a"]) == {"a": []}
    odd = 'say "hi"\\'
    assert store.followers(NS, [odd, "a"]) == {odd: [odd], "a": ["b", "d"]}
    store.delete(NS, "b")  # a later episode's links go with its row
    # (c still names b in its own value: `Memory.delete` takes that too, tested below)
    assert store.followers(NS, ["a", "b"]) == {"a": ["d"], "b": ["c"]}


def test_followers_are_found_by_the_newer_rows(tmp_path) -> None:
    store = HybridStore(tmp_path / "s.db", index=False)
    _fill(store)
    _lookups(store)
    store.close()


@requires_lite
def test_milvus_finds_the_same_followers(tmp_path) -> None:
    store = LiteFile(tmp_path).open(index=False)
    _fill(store)
    _lookups(store)
    store.close()


def test_the_lookup_probes_the_indexes_and_scans_nothing(tmp_path) -> None:
    store = HybridStore(tmp_path / "s.db", index=False)
    for n in range(30):
        store.put(NS, f"k{n}", _episode(f"turn {n}", n, [f"k{n - 1}", f"k{n - 2}"] if n else None))
    traced: list[str] = []
    store._db.conn.set_trace_callback(traced.append)
    assert store.followers(NS, ["k3"]) == {"k3": ["k4", "k5"]}
    store._db.conn.set_trace_callback(None)
    (sql,) = [s for s in traced if "follows" in s]
    plan = [r[3] for r in store._db.conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
    assert any("items_follows0" in p for p in plan) and any("items_follows1" in p for p in plan)
    assert not [p for p in plan if p.startswith("SCAN")], plan
    store.close()


def test_bad_arguments_get_the_stores_error(tmp_path) -> None:
    store = HybridStore(tmp_path / "s.db", index=False)
    for bad in ("a", [""], [3], None):
        with pytest.raises(ValidationError):
            store.followers(NS, bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidNamespaceError):
        store.followers(("a", ""), ["k"])
    assert store.followers(NS, []) == {}
    store.close()


_LAPTOPS = [
    (0, "s1", "My work laptop is a ThinkPad X1 Carbon running Ubuntu, battery is toast"),
    (40, "s2", "Been on a MacBook Air for work since March, best laptop I have had"),
]


def _say(mem: Memory, day: int, sid: str, text: str) -> str:
    msgs = [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]
    return mem.add(msgs, U, session_id=sid, timestamp=T0 + timedelta(days=day))[0]


def _laptops(mem: Memory) -> tuple[str, str]:
    """An earlier exchange and a later one about the same thing (no change word: no mark)."""
    old, new = (_say(mem, *said) for said in _LAPTOPS)
    return old, new


def test_keeping_a_newer_version_leaves_the_earlier_row_as_it_was(tmp_path) -> None:
    mem = Memory(tmp_path / "m.db", embeddings=False)
    old = _say(mem, *_LAPTOPS[0])
    row = "SELECT value, updated_at FROM items WHERE key = ?"
    before = mem.store._db.conn.execute(row, (old,)).fetchone()
    new = _say(mem, *_LAPTOPS[1])
    assert old in mem.get(new).metadata["follows"]
    assert mem.store._db.conn.execute(row, (old,)).fetchone() == before
    item = mem.store.get(NS, old)
    assert item is not None
    got = newer_statement(mem.store, NS, item.value, old)
    assert got is not None and "MacBook Air" in got.now
    mem.close()


def test_a_question_is_no_later_version_and_the_newest_are_read() -> None:
    store = HybridStore(index=False)
    store.put(NS, "a", _episode("Our cat Miso eats salmon kibble", 0))
    store.put(NS, "q", _episode("Does Miso still like the salmon kibble?", 1, ["a"]))
    for n in range(MAX_LATER + 2):
        store.put(NS, f"l{n}", _episode(f"Miso eats duck pate now, {n} tins", 2 + n, ["a"]))
    got = [r.id for r in later_versions(store, NS, "a")]
    assert got == [f"l{n}" for n in range(2, MAX_LATER + 2)]
    assert store.followers(NS, ["a"])["a"][0] == "q"  # the question follows it all the same


def test_deleting_an_episode_takes_its_links(tmp_path) -> None:
    mem = Memory(tmp_path / "m.db", embeddings=False)
    old, new = _laptops(mem)
    assert mem.store.followers(NS, [old]) == {old: [new]}
    mem.delete(old)  # the later episode no longer names it
    assert "follows" not in mem.get(new).metadata
    assert mem.store.followers(NS, [old]) == {old: []}
    mem.close()
    mem = Memory(tmp_path / "n.db", embeddings=False)
    old, new = _laptops(mem)
    mem.delete(new)  # its own link goes with its row
    assert mem.store.followers(NS, [old]) == {old: []}
    item = mem.store.get(NS, old)
    assert item is not None and newer_statement(mem.store, NS, item.value, old) is None
    mem.close()


def test_export_and_import_keep_the_links(tmp_path) -> None:
    mem = Memory(tmp_path / "m.db", embeddings=False)
    old, new = _laptops(mem)
    other = Memory(tmp_path / "n.db", embeddings=False)
    other.import_(mem.export(U))
    assert other.store.followers(NS, [old]) == {old: [new]}
    item = other.store.get(NS, old)
    assert item is not None
    got = newer_statement(other.store, NS, item.value, old)
    assert got is not None and "MacBook Air" in got.now
    mem.close()
    other.close()


def test_a_schema_17_database_moves_its_back_links_onto_the_later_episodes(tmp_path) -> None:
    path = tmp_path / "v17.db"
    s = HybridStore(path, index=False)
    s.put(NS, "a", _episode("I drive a Corolla", 0))
    s.put(NS, "b", _episode("I sold the Corolla", 10, ["a"]))
    s.put(NS, "c", _episode("Took the bus, no Corolla", 20))  # its `follows` was lost
    s.put(NS, "d", _episode("The bus is late", 30, ["b"]))
    s.close()
    conn = sqlite3.connect(path)  # back to schema 17: back links on the earlier rows
    conn.execute("DROP INDEX items_follows0")
    conn.execute("DROP INDEX items_follows1")
    for key, later in (("a", ["b", "c", "gone"]), ("b", ["d"])):
        (text,) = conn.execute("SELECT value FROM items WHERE key = ?", (key,)).fetchone()
        value = json.loads(text)
        value["metadata"]["followed_by"] = later
        conn.execute("UPDATE items SET value = ? WHERE key = ?", (json.dumps(value), key))
    conn.execute("DELETE FROM schema_version WHERE version > 17")
    conn.commit()
    conn.close()
    s = HybridStore(path, index=False)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()
    for key in "abcd":
        item = s.get(NS, key)
        assert item is not None and "followed_by" not in item.value["metadata"]
    assert s.get(NS, "c").value["metadata"]["follows"] == ["a"]  # type: ignore[union-attr]
    assert s.followers(NS, ["a", "b", "c"]) == {"a": ["b", "c"], "b": ["d"], "c": []}
    s.close()
