"""Memory / AsyncMemory: the mem0-style facade (SPEC R-API, R-LIFE export/import)."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone

import pytest

from langmem_plus.errors import MemoryNotFoundError, ValidationError
from langmem_plus.memory import AsyncMemory, Memory, MemoryPage, SearchHit
from langmem_plus.model.records import SessionSummary, utcnow

SPEC_COMPONENTS = {"keyword", "category_boost", "recency", "frequency", "confidence", "score"}


@pytest.fixture
def mem(hash_embeddings):
    m = Memory(embeddings=hash_embeddings)
    yield m
    m.close()


@pytest.fixture
def kw_mem():
    m = Memory(embeddings=False)
    yield m
    m.close()


# ---------------------------------------------------------------------------- add / get
def test_add_raw_stores_each_message_as_given(mem):
    ids = mem.add(
        [
            {"role": "user", "content": "I like green tea"},
            {"role": "assistant", "content": "Noted"},
        ],
        "alice",
        infer=False,
        metadata={"category": "preference", "origin": "import"},
    )
    assert len(ids) == 2
    first = mem.get(ids[0], "alice")
    assert first.text == "I like green tea"
    assert first.category == "preference"
    assert first.who == "user"
    assert first.metadata["origin"] == "import"
    assert first.namespace == ("memories", "alice")
    assert mem.get(ids[1], "alice").who == "assistant"


def test_add_infer_keeps_the_exchange_verbatim(kw_mem):
    said = "我叫小明。I prefer dark mode in my editor."
    ids = kw_mem.add(said, "bob")
    episode = kw_mem.get(ids[0], "bob")
    assert episode.kind == "episodic" and episode.text == said
    # chit-chat is kept too, as an episode that matters less
    [chat] = kw_mem.add("thanks!", "bob")
    assert kw_mem.get(chat, "bob").importance < episode.importance


def test_add_with_session_logs_turns(kw_mem):
    kw_mem.add("I use OrderService daily", "carol", session_id="s1", infer=False)
    turns = kw_mem.store.conversations.turns("carol", "s1")
    assert [t.content for t in turns] == ["I use OrderService daily"]
    assert kw_mem.recall("OrderService", "carol")["results"][0]["turn_id"] == turns[0].id


def test_add_accepts_langchain_messages(kw_mem):
    from langchain_core.messages import AIMessage, HumanMessage

    ids = kw_mem.add([HumanMessage("remember my badge is 4411"), AIMessage("ok")], "u", infer=False)
    assert kw_mem.get(ids[0], "u").text == "remember my badge is 4411"


@pytest.mark.parametrize(
    ("messages", "user_id"),
    [
        ("", "u"),
        ([], "u"),
        (123, "u"),
        ([{"role": "wizard", "content": "x"}], "u"),
        ("text", ""),
        ("text", "bad\ud800id"),
        ("text", None),
        ("text", "x" * 300),
    ],
)
def test_add_rejects_bad_input(kw_mem, messages, user_id):
    with pytest.raises(ValidationError):
        kw_mem.add(messages, user_id, infer=False)


def test_add_rejects_bad_metadata_and_infer(kw_mem):
    with pytest.raises(ValidationError):
        kw_mem.add("x", "u", metadata=["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        kw_mem.add("x", "u", metadata={"confidence": 7})
    with pytest.raises(ValidationError):
        kw_mem.add("x", "u", infer="yes")  # type: ignore[arg-type]


def test_get_missing_and_cross_user(mem):
    (mid,) = mem.add("I live in Lyon", "alice", infer=False)
    with pytest.raises(MemoryNotFoundError):
        mem.get("nope", "alice")
    with pytest.raises(MemoryNotFoundError):
        mem.get(mid, "mallory")  # users are isolated


# ---------------------------------------------------------------------------- search
def test_search_explains_the_score(mem):
    mem.add(
        "I prefer Python for scripting", "alice", infer=False, metadata={"category": "preference"}
    )
    mem.add("My cat is called Miso", "alice", infer=False)
    hits = mem.search("I like Python", "alice", limit=5)
    assert hits and isinstance(hits[0], SearchHit)
    top = hits[0]
    assert "Python" in top.text
    assert set(top.components) >= SPEC_COMPONENTS
    assert top.components["category_boost"] == pytest.approx(1.5)  # preference query
    assert top.score == pytest.approx(top.components["score"])
    assert mem.search("quantum chromodynamics", "nobody") == []


def test_search_filters_and_limits(mem):
    for i in range(6):
        mem.add(f"fact number {i} about rust", "u", infer=False, metadata={"tags": [f"t{i}"]})
    mem.add("a rust preference", "u", infer=False, metadata={"category": "preference"})
    assert len(mem.search("rust", "u", limit=3)) == 3
    prefs = mem.search("rust", "u", filters={"category": "preference"})
    assert [h.memory.category for h in prefs] == ["preference"]


def test_search_time_range(mem):
    (mid,) = mem.add("we talked about interviews", "u", infer=False)
    now = utcnow()
    assert mem.search("interviews", "u", time_range=(now - timedelta(hours=1), None))
    assert not mem.search("interviews", "u", time_range=(None, now - timedelta(days=1)))
    assert not mem.search("interviews", "u", time_range="yesterday")
    assert mem.search("interviews", "u", time_range={"start": (now - timedelta(1)).isoformat()})
    assert mem.search("interviews today", "u", time_range="auto")[0].id == mid


@pytest.mark.parametrize(
    "kwargs",
    [
        {"query": ""},
        {"query": None},
        {"limit": 0},
        {"limit": True},
        {"limit": 10**6},
        {"filters": "category=fact"},
        {"time_range": "no time words here"},
        {"time_range": ("not a date", None)},
        {"time_range": (1, 2, 3)},
        {"time_range": {"begin": 1}},
        {"time_range": ({"x": 1}, None)},
    ],
)
def test_search_rejects_bad_input(mem, kwargs):
    args = {"query": "x", "user_id": "u", **kwargs}
    with pytest.raises(ValidationError):
        mem.search(**args)


# ---------------------------------------------------------------------------- paging
def test_get_all_pages_with_total(kw_mem):
    ids = kw_mem.add([{"role": "user", "content": f"fact {i}"} for i in range(7)], "u", infer=False)
    page = kw_mem.get_all("u", limit=3, offset=0)
    assert isinstance(page, MemoryPage)
    assert page.total == 7 and [r.id for r in page.items] == ids[:3] and page.next_offset == 3
    last = kw_mem.get_all("u", limit=3, offset=6)
    assert [r.id for r in last.items] == ids[6:] and last.next_offset is None
    assert kw_mem.get_all("nobody").total == 0
    with pytest.raises(ValidationError):
        kw_mem.get_all("u", limit=0)
    with pytest.raises(ValidationError):
        kw_mem.get_all("u", offset=-1)


# ---------------------------------------------------------------------------- update / history
def test_update_text_and_fields_records_history(kw_mem):
    (mid,) = kw_mem.add("I work at Acme", "u", infer=False)
    rec = kw_mem.update(mid, "u", text="I work at Globex")
    assert rec.text == "I work at Globex"
    assert kw_mem.search("Globex", "u")[0].id == mid
    assert kw_mem.search("Acme", "u") == []
    kw_mem.update(mid, "u", data={"category": "fact", "tags": ["job"], "metadata": {"k": 1}})
    rec = kw_mem.get(mid, "u")
    assert rec.tags == ["job"] and rec.metadata["k"] == 1
    hist = kw_mem.history(mid, "u")
    assert [h["event"] for h in hist] == ["ADD", "UPDATE", "UPDATE"]
    assert hist[0]["text"] == "I work at Acme"
    assert hist[1]["old_text"] == "I work at Acme" and hist[1]["text"] == "I work at Globex"


def test_update_rejects_bad_input(kw_mem):
    (mid,) = kw_mem.add("x marks the spot", "u", infer=False)
    for kwargs in ({}, {"text": "  "}, {"data": {"id": "other"}}, {"data": {"confidence": 2}}):
        with pytest.raises(ValidationError):
            kw_mem.update(mid, "u", **kwargs)
    with pytest.raises(MemoryNotFoundError):
        kw_mem.update("missing", "u", text="y")


# ---------------------------------------------------------------------------- delete / reset
def test_delete_and_reset_are_scoped_to_the_user(kw_mem):
    (a,) = kw_mem.add("alice likes jazz", "alice", infer=False)
    (b,) = kw_mem.add("bob likes jazz", "bob", infer=False)
    kw_mem.add_turn("alice", "s", "user", "jazz tonight?")
    kw_mem.add_turn("bob", "s", "user", "jazz tomorrow?")
    kw_mem.delete(a, "alice")
    with pytest.raises(MemoryNotFoundError):
        kw_mem.get(a, "alice")
    with pytest.raises(MemoryNotFoundError):
        kw_mem.delete(a, "alice")
    kw_mem.add("alice again", "alice", infer=False)
    counts = kw_mem.reset("alice")
    assert counts["memories_deleted"] == 1 and counts["turns_deleted"] == 1
    assert kw_mem.get_all("alice").total == 0
    assert kw_mem.recall("jazz", "alice")["results"] == []
    assert kw_mem.get(b, "bob").text == "bob likes jazz"
    assert kw_mem.recall("jazz", "bob")["results"]


def test_reset_can_keep_conversations(kw_mem):
    kw_mem.add("note", "u", infer=False)
    kw_mem.add_turn("u", "s", "user", "hello there friend")
    assert kw_mem.reset("u", keep_conversations=True) == {"memories_deleted": 1}
    assert kw_mem.recall("friend", "u")["results"]


# ---------------------------------------------------------------------------- profile
def test_profile_edit_marks_sections(kw_mem):
    assert kw_mem.get_profile("u").render() == ""
    prof = kw_mem.put_profile("u", reply_style="short answers")
    assert prof.edited_by_user == ["reply_style"]
    assert kw_mem.get_profile("u").reply_style == "short answers"
    with pytest.raises(ValidationError):
        kw_mem.put_profile("u", mood="happy")


# ---------------------------------------------------------------------------- conversations
def test_recall_result_shape(kw_mem):
    kw_mem.add_turn("dev", "conv-1", "user", "processPayment has a race condition")
    kw_mem.add_turn("dev", "conv-1", "assistant", "wrap processPayment in a mutex")
    kw_mem.add_turn("dev", "conv-2", "user", "validateOrder needs a refactor")
    kw_mem.summarize("dev", "conv-1")
    out = kw_mem.recall("processPayment 的问题", "dev", limit=5)
    assert set(out) == {"results", "total_searched", "latency_ms"}
    assert out["total_searched"] == 4
    turn_rows = [r for r in out["results"] if not r["is_summary"]]
    assert set(turn_rows[0]) == {
        "conversation_id", "turn_id", "role", "content", "relevance", "created_at", "is_summary"
    }  # fmt: skip
    assert all("processPayment" in r["content"] for r in turn_rows)
    summaries = [r for r in out["results"] if r["is_summary"]]
    assert summaries and summaries[0]["turn_id"] is None and "summary" in summaries[0]
    only2 = kw_mem.recall("refactor", "dev", session_id="conv-2")["results"]
    assert {r["conversation_id"] for r in only2} == {"conv-2"}


def test_summarize_validates_range(kw_mem):
    with pytest.raises(MemoryNotFoundError):
        kw_mem.summarize("dev", "missing")
    kw_mem.add_turn("dev", "c", "user", "one")
    with pytest.raises(ValidationError):
        kw_mem.summarize("dev", "c", from_turn=2)


def test_cleanup_older_than_keeps_recent(kw_mem):
    old = utcnow() - timedelta(days=60)
    kw_mem.add_turn("u", "old-conv", "user", "ancient cachemanager talk", created_at=old)
    kw_mem.add_turn("u", "new-conv", "user", "fresh cachemanager talk")
    out = kw_mem.cleanup(older_than=timedelta(days=30))
    assert out["conversations_deleted"] == 1 and out["turns_deleted"] == 1
    assert "space_freed_kb" in out
    rows = kw_mem.recall("cachemanager", "u")["results"]
    assert [r["conversation_id"] for r in rows] == ["new-conv"]
    with pytest.raises(ValidationError):
        kw_mem.cleanup()


# ---------------------------------------------------------------------------- export / import
def _populate(m: Memory) -> None:
    ids = m.add(
        [{"role": "user", "content": "我喜欢川菜"}, {"role": "user", "content": "I live in Lyon"}],
        "alice",
        infer=False,
        metadata={"category": "preference", "source_chat_ids": ["c1"]},
    )
    m.update(ids[1], "alice", text="I live in Paris")
    m.store.mark_used(("memories", "alice"), [ids[0]])
    m.add("bob's fact", "bob", infer=False)
    m.add_turn("alice", "c1", "user", "OrderService fails", created_at=utcnow() - timedelta(days=2))
    m.add_turn("alice", "c1", "assistant", "check processPayment")
    m.summarize("alice", "c1")
    m.store.conversations.set_session_summary(
        SessionSummary(user_id="alice", session_id="c1", title="Orders", snippet="OrderService")
    )
    m.put_profile("alice", background="backend developer")
    m.store.put(("app", "settings"), "theme", {"dark": True})  # any other namespace too


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_export_import_round_trip_is_lossless(hash_embeddings, fmt):
    with Memory(embeddings=hash_embeddings) as a, Memory(embeddings=hash_embeddings) as b:
        _populate(a)
        first = a.export(format=fmt)
        counts = b.import_(first)
        assert counts["items"] == 4 and counts["turns"] == 2 and counts["profiles"] == 1
        assert b.export(format=fmt) == first
        # indexes were rebuilt: search and recall work on the imported copy
        assert b.search("川菜", "alice")[0].memory.access_count == 1
        assert b.recall("OrderService", "alice")["results"]
        # importing again changes nothing
        b.import_(first)
        assert b.export(format=fmt) == first


def test_export_one_user_and_bad_imports(kw_mem):
    _populate(kw_mem)
    data = json.loads(kw_mem.export("bob"))
    assert {tuple(i["namespace"]) for i in data["items"]} == {("memories", "bob")}
    assert data["turns"] == []
    for bad in (
        "",
        "not json",
        '{"format": "other"}',
        "[1, 2]",
        '{"format": "langmem_plus.export", "version": 99}',
    ):
        with pytest.raises(ValidationError):
            kw_mem.import_(bad)
    with pytest.raises(ValidationError):
        kw_mem.export(format="xml")  # type: ignore[arg-type]


def test_import_logs(kw_mem, tmp_path):
    (tmp_path / "chat-a.txt").write_text(
        "[2026-01-03 18:00] user: 我在准备 OrderService 的面试\nassistant: 加油！\n继续说\n",
        encoding="utf-8",
    )
    (tmp_path / "chat-b.jsonl").write_text(
        json.dumps({"role": "user", "content": "I prefer vim"}) + "\n"
        + json.dumps({"role": "assistant", "content": "ok"}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    out = kw_mem.import_logs(tmp_path, "u", infer=True)
    assert out["files"] == 2 and out["turns"] == 4 and out["sessions"] == 2
    assert out["memories"] >= 1
    turns = kw_mem.store.conversations.turns("u", "chat-a")
    assert turns[0].created_at == datetime(2026, 1, 3, 18, 0, tzinfo=timezone.utc)
    assert turns[1].content == "加油！\n继续说"
    assert kw_mem.recall("OrderService", "u")["results"][0]["conversation_id"] == "chat-a"
    with pytest.raises(ValidationError):
        kw_mem.import_logs(tmp_path / "missing", "u")


# ---------------------------------------------------------------------------- lifecycle
def test_consolidate_runs_per_user(mem):
    pytest.importorskip("langmem_plus.episodic.lifecycle")
    mem.add(
        "we went hiking on Saturday",
        "u",
        infer=False,
        metadata={"kind": "episodic", "category": "episode"},
    )
    report = mem.consolidate("u")
    assert set(report) == {"u"}


def test_stats_and_users(kw_mem):
    _populate(kw_mem)
    stats = kw_mem.stats()
    assert stats["users"] == 2 and stats["turns"] == 2 and stats["items"] >= 4
    assert kw_mem.users() == ["alice", "bob"]


def test_constructor_validation(tmp_path):
    with pytest.raises(ValidationError):
        Memory(tmp_path / "a.db", store=object())  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Memory(store=object())  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Memory(config={"w_keyword": 1})  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- async
def test_async_memory_mirrors_sync(hash_embeddings):
    async def go() -> None:
        am = AsyncMemory(embeddings=hash_embeddings)
        ids = await am.add("I like hiking", "u", infer=False)
        assert (await am.get(ids[0], "u")).text == "I like hiking"
        assert (await am.search("hiking", "u"))[0].id == ids[0]
        await am.update(ids[0], "u", text="I like climbing")
        assert len(await am.history(ids[0], "u")) == 2
        assert (await am.get_all("u")).total == 1
        await am.add_turn("u", "s", "user", "climbing in Fontainebleau")
        assert (await am.recall("Fontainebleau", "u"))["results"]
        await am.put_profile("u", reply_style="brief")
        assert (await am.get_profile("u")).reply_style == "brief"
        text = await am.export("u")
        await am.delete(ids[0], "u")
        with pytest.raises(MemoryNotFoundError):
            await am.get(ids[0], "u")
        await am.import_(text)
        assert (await am.get(ids[0], "u")).text == "I like climbing"
        await am.reset("u")
        assert (await am.get_all("u")).total == 0
        await am.close()

    asyncio.run(go())


def test_an_injected_clock_dates_records_turns_updates_and_cleanup() -> None:
    now = [datetime(2030, 5, 1, 12, 0, tzinfo=timezone.utc).timestamp()]
    with Memory(embeddings=False, clock=lambda: now[0]) as m:
        start = datetime.fromtimestamp(now[0], tz=timezone.utc)
        ids = m.add("I like green tea", "u1", session_id="s1")
        assert m.get(ids[0]).occurred_at == start
        turn = m.add_turn("u1", "s2", "user", "hello")
        assert turn.created_at == start
        now[0] += 86400 * 3
        assert m.update(ids[0], text="I like black tea").updated_at == start + timedelta(days=3)
        counts = m.cleanup(user_id="u1", older_than=2)  # days, counted on the injected clock
        assert counts["turns_deleted"] >= 1
        assert m.store.conversations.turns("u1") == []
        assert m.store.clock() == now[0]  # the store Memory opened reads the same clock


def test_clock_must_be_callable() -> None:
    with pytest.raises(ValidationError, match="clock"):
        Memory(embeddings=False, clock=12.5)  # type: ignore[arg-type]
