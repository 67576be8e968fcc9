"""Deletion forensics (#11 item 6): once a delete or reset returns, the deleted text is gone
from the raw bytes of the database file and its WAL, while the store is still open, with no
VACUUM — through Python, REST and MCP alike. The keyword index's terms go with it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langmem_plus.memory import Memory
from langmem_plus.store.hybrid import HybridStore
from langmem_plus.text import tokenize

SECRET_EN = "Periwinkle xylophonist Quokkaverse passphrase 88421"
SECRET_ZH = "我的保险箱暗号是紫色长颈鹿九号"
KEEP_EN = "Marmalade lighthouse keeper stays"
KEEP_ZH = "保留这条关于青花瓷茶壶的记忆"


def _raw(db: Path) -> bytes:
    """The database file and its WAL, byte for byte (the -shm holds no row data)."""
    return b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())


def _needles(*texts: str) -> list[bytes]:
    """Each text, and each of its keyword tokens long enough not to occur by chance."""
    out = [t.encode() for t in texts]
    for text in texts:
        out += [tok.encode() for tok in tokenize(text) if len(tok.encode()) >= 6]
    return out


def _assert_gone(db: Path, *texts: str) -> None:
    raw = _raw(db)
    left = [n.decode() for n in _needles(*texts) if n in raw]
    assert not left, f"still on disk: {left}"


def _assert_kept(db: Path, *texts: str) -> None:
    """The scan sees live rows (so an absence above means something)."""
    raw = _raw(db)
    for text in texts:
        assert text.encode() in raw


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "forensics.db"


@pytest.fixture
def mem(db: Path, hash_embeddings) -> Iterator[Memory]:
    m = Memory(db, embeddings=hash_embeddings)
    yield m
    m.close()


def _seed(mem: Memory, user: str = "alice") -> list[str]:
    ids = [mem.add(t, user, infer=False)[0] for t in (SECRET_EN, SECRET_ZH, KEEP_EN, KEEP_ZH)]
    return ids


# ------------------------------------------------------------------------- Python
def test_memory_delete_leaves_no_trace_while_open(mem, db):
    en, zh, _, _ = _seed(mem)
    assert SECRET_EN.encode() in _raw(db)  # written, as the baseline
    mem.delete(en, "alice")
    mem.delete(zh, "alice")
    _assert_gone(db, SECRET_EN, SECRET_ZH)
    _assert_kept(db, KEEP_EN, KEEP_ZH)
    with mem.store.db.read() as conn:
        terms = {t for (t,) in conn.execute("SELECT term FROM terms")}
    assert not terms & set(tokenize(SECRET_EN) + tokenize(SECRET_ZH)) - set(
        tokenize(KEEP_EN) + tokenize(KEEP_ZH)
    )


def test_memory_reset_removes_memories_turns_and_profile(mem, db):
    _seed(mem)
    mem.add("Bob keeps his own note about gardening", "bob", infer=False)
    mem.add_turn("alice", "s1", "user", SECRET_EN)
    mem.add_turn("alice", "s1", "assistant", SECRET_ZH)
    mem.put_profile("alice", background=SECRET_ZH)
    counts = mem.reset("alice")
    assert counts["memories_deleted"] == 4 and counts["turns_deleted"] == 2
    _assert_gone(db, SECRET_EN, SECRET_ZH, KEEP_EN, KEEP_ZH)
    _assert_kept(db, "Bob keeps his own note")


def test_store_delete_and_overwrite_to_none(db, hash_embeddings):
    with HybridStore(db, index={"embed": hash_embeddings, "dims": 64}) as store:
        store.put(("docs",), "a", {"text": SECRET_EN})
        store.put(("docs",), "b", {"text": SECRET_ZH})
        store.put(("docs",), "c", {"text": KEEP_EN})
        store.delete(("docs",), "a")
        store.batch([])  # an empty batch changes nothing
        _assert_gone(db, SECRET_EN)
        store.delete(("docs",), "b")
        _assert_gone(db, SECRET_EN, SECRET_ZH)
        _assert_kept(db, KEEP_EN)


def test_a_failed_delete_purges_nothing_and_loses_nothing(mem, db):
    en, _, _, _ = _seed(mem)
    with pytest.raises(KeyError):
        mem.delete(en, "bob")  # not bob's memory
    _assert_kept(db, SECRET_EN, KEEP_EN)
    assert mem.get(en, "alice").text == SECRET_EN


_WORDS = st.sampled_from(
    ["aardwolf", "bandicoot", "cassowary", "dugong", "echidna", "fossa", "gharial",
     "金丝猴", "丹顶鹤", "扬子鳄", "大熊猫", "白鳍豚", "中华鲟"]
)  # fmt: skip


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(
        st.lists(_WORDS, min_size=2, max_size=4).map(" ".join), min_size=2, max_size=6, unique=True
    ),
    data=st.data(),
)
def test_property_deleted_items_leave_only_what_live_items_hold(tmp_path_factory, texts, data):
    """Any set of items, any subset deleted: each deleted text is on disk only as part of what
    a live item still holds (words shared with live items may stay, whole texts may not)."""
    db = tmp_path_factory.mktemp("prop") / "p.db"
    doomed = data.draw(st.sets(st.sampled_from(range(len(texts))), min_size=1))
    with HybridStore(db, index=False) as store:
        for i, text in enumerate(texts):
            store.put(("u",), str(i), {"text": f"<{i}> {text}"})
        for i in sorted(doomed):
            store.delete(("u",), str(i))
        raw = _raw(db)
        live = " ".join(texts[i] for i in range(len(texts)) if i not in doomed)
        for i in doomed:
            assert f"<{i}> {texts[i]}".encode() not in raw
            for word in set(texts[i].split()) - set(live.split()):
                assert word.encode() not in raw, word
        for i in set(range(len(texts))) - doomed:
            assert f"<{i}> {texts[i]}".encode() in raw


# ------------------------------------------------------------------------- REST
def test_rest_delete_and_clear_leave_no_trace(mem, db):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from langmem_plus.server import create_app

    alice = {"X-User-Id": "alice"}
    with TestClient(create_app(mem), base_url="http://localhost") as client:
        ids = []
        for text in (SECRET_EN, SECRET_ZH, KEEP_EN):
            res = client.post("/memory/long-term", json={"messages": text, "infer": False},
                              headers=alice)  # fmt: skip
            ids.append(res.json()["ids"][0])
        assert SECRET_ZH.encode() in _raw(db)
        assert client.delete(f"/memory/long-term/{ids[0]}", headers=alice).status_code == 200
        assert client.delete(f"/memory/long-term/{ids[1]}", headers=alice).status_code == 200
        _assert_gone(db, SECRET_EN, SECRET_ZH)
        _assert_kept(db, KEEP_EN)

        mem.add_turn("alice", "s1", "user", SECRET_ZH)
        client.put("/memory/profile", json={"background": SECRET_EN}, headers=alice)
        assert SECRET_ZH.encode() in _raw(db) and SECRET_EN.encode() in _raw(db)
        cleared = client.delete(
            "/memory/long-term", params={"include_conversations": True}, headers=alice
        )
        assert cleared.status_code == 200 and cleared.json()["memories_deleted"] == 1
        _assert_gone(db, SECRET_EN, SECRET_ZH, KEEP_EN)


# ------------------------------------------------------------------------- MCP
def test_mcp_delete_leaves_no_trace(mem, db):
    pytest.importorskip("mcp")
    import asyncio

    from langmem_plus.mcp_server import build_server

    server = build_server(mem, user="alice")

    async def go() -> None:
        ids = []
        for text in (SECRET_EN, SECRET_ZH, KEEP_ZH):
            res = await server.call_tool("add_memory", {"text": text, "infer": False})
            ids.append(res.structured_content["ids"][0])
        assert SECRET_EN.encode() in _raw(db)
        for mid in ids[:2]:
            res = await server.call_tool("delete_memory", {"memory_id": mid})
            assert res.structured_content["deleted"] is True

    asyncio.run(go())
    _assert_gone(db, SECRET_EN, SECRET_ZH)
    _assert_kept(db, KEEP_ZH)


def test_a_reader_delays_the_purge_only_until_it_ends(mem, db):
    """Another connection reading a snapshot from before the delete keeps the old pages (it
    may still read the text); once that read ends the purge retries by itself, with no
    further call on the store, and the text leaves the disk."""
    import sqlite3

    (mid,) = mem.add(SECRET_EN, "u", infer=False)
    mem.add(KEEP_EN, "u", infer=False)
    reader = sqlite3.connect(db)
    reader.execute("BEGIN")
    assert reader.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 2
    mem.delete(mid, "u")
    assert mem.store.db.purge_pending  # the reader holds the pre-delete snapshot
    assert SECRET_EN.encode() in _raw(db)
    assert reader.execute("SELECT COUNT(*) FROM items").fetchone()[0] == 2  # it still sees it
    reader.execute("COMMIT")  # the read ends; nothing else happens on the store
    assert mem.store.db.wait_purged(timeout=60)
    assert not mem.store.db.purge_pending
    _assert_gone(db, SECRET_EN)
    _assert_kept(db, KEEP_EN)
    reader.close()


def test_a_purge_pending_at_close_is_tried_once_more(db, hash_embeddings):
    import sqlite3

    mem = Memory(db, embeddings=hash_embeddings)
    (mid,) = mem.add(SECRET_EN, "u", infer=False)
    reader = sqlite3.connect(db)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM items").fetchone()
    mem.delete(mid, "u")
    reader.execute("COMMIT")
    mem.close()  # the retrier may not have run yet: close purges
    _assert_gone(db, SECRET_EN)  # while the reader's connection is still open
    reader.close()
