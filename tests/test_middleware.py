"""MemoryMiddleware in real create_agent graphs with a scripted chat model (offline)."""

from __future__ import annotations

import asyncio
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from _agent_fakes import FakeClock, scripted, tool_call
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langmem_plus import HybridStore, MemoryConfig
from langmem_plus.agent.middleware import MemoryMiddleware, inject_context
from langmem_plus.errors import ValidationError


@tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"It is sunny in {city}."


def _cfg(thread: str, user: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def _say(agent: Any, text: str, cfg: dict[str, Any]) -> dict[str, Any]:
    return agent.invoke({"messages": [{"role": "user", "content": text}]}, cfg)


def _texts(store: HybridStore, user: str) -> list[str]:
    return [it.value["text"] for it in store.search(("memories", user), limit=100)]


def test_three_sessions_recall_correction_and_tool_calls() -> None:
    store = HybridStore(index=False)
    clock = FakeClock()
    mw = MemoryMiddleware(clock=clock, debounce_s=0.0)
    model = scripted(
        [
            tool_call("get_weather", {"city": "Berlin"}, "call-1"),
            "Noted! It is sunny in Berlin.",
            "Good to know.",
            "You live in Munich and like Rust.",
        ]
    )
    agent = create_agent(
        model, tools=[get_weather], middleware=[mw], store=store, checkpointer=InMemorySaver()
    )
    cfg = _cfg("thread-a", "alice")

    # session 1: a fact and a preference, with a tool call inside the turn
    out = _say(agent, "I live in Berlin and my favorite language is Rust. Weather?", cfg)
    assert any(isinstance(m, ToolMessage) for m in out["messages"])
    s1 = out["working_memory"]["session_id"]
    assert out["working_memory"]["turn_count"] == 1
    mw.flush()
    texts = _texts(store, "alice")
    assert any("Berlin" in t for t in texts)
    assert any("Rust" in t for t in texts)

    # session 2 (45 minutes later: the working memory expired): a correction
    clock.advance(minutes=45)
    out = _say(agent, "Actually I live in Munich, not Berlin.", cfg)
    s2 = out["working_memory"]["session_id"]
    assert s2 != s1 and out["working_memory"]["turn_count"] == 1
    # the expired session's window was archived and cleared
    assert not any("Weather?" in str(m.content) for m in out["messages"])
    mw.flush()
    texts = _texts(store, "alice")
    assert any("Munich" in t for t in texts)
    assert not any("Berlin" in t and "Munich" not in t and "lives" in t for t in texts)
    archived = [
        it
        for it in store.search(("memories", "alice"), limit=100)
        if "working_memory_archive" in it.value.get("tags", [])
    ]
    assert archived and archived[0].value["session_id"] == s1

    # session 3: the fact of session 1 and the corrected fact are recalled
    clock.advance(hours=2)
    out = _say(agent, "Where do I live, and which language do I like?", cfg)
    prompt = model.system_prompts[-1]
    assert "Munich" in prompt and "Rust" in prompt
    # the correction replaced the old fact: no semantic memory says Berlin any more, and the
    # corrected fact ranks first among recalled memories about where the user lives
    facts = [it.value for it in store.search(("memories", "alice"), limit=100)]
    assert not any(v["kind"] == "semantic" and "Berlin" in v["text"] for v in facts)
    recalled = [m["text"] for m in out["memory_context"]["memories"]]
    assert "User lives in Munich" in recalled
    assert not any("lives in Berlin" in t for t in recalled)
    assert "<memory_context>" in prompt
    # every turn is kept in the conversation table, across sessions
    mw.flush()
    turns = store.conversations.turns("alice")
    assert {t.session_id for t in turns} >= {s1, s2}
    assert any(t.role == "tool" for t in turns)
    assert store.conversations.session_summaries("alice", limit=10) is not None


def test_injection_goes_through_request_not_state() -> None:
    store = HybridStore(index=False)
    store.put(("memories", "bob"), "m1", {"text": "Bob likes green tea", "category": "preference"})
    mw = MemoryMiddleware()
    model = scripted(["Green tea it is."])
    agent = create_agent(model, system_prompt="You are helpful.", middleware=[mw], store=store)
    out = _say(agent, "What tea do I like?", _cfg("t", "bob"))
    assert model.system_prompts[0].startswith("You are helpful.")
    assert "Bob likes green tea" in model.system_prompts[0]
    # stored messages are untouched: no system message was written into the state
    assert not any(isinstance(m, SystemMessage) for m in out["messages"])
    assert out["memory_context"]["memories"][0]["components"]["score"] > 0
    mw.close()


def test_mark_used_once_per_injection() -> None:
    store = HybridStore(index=False)
    store.put(("memories", "u"), "m1", {"text": "u plays the cello", "category": "fact"})
    mw = MemoryMiddleware(background=False)
    agent = create_agent(
        scripted(["a", "b"]), middleware=[mw], store=store, checkpointer=InMemorySaver()
    )

    def uses() -> int:
        hits = store.search(("memories", "u"), query="cello", limit=10)
        return next(h.access_count for h in hits if h.key == "m1")

    _say(agent, "cello practice tips?", _cfg("t", "u"))
    assert uses() == 1
    _say(agent, "more about the cello", _cfg("t", "u"))
    assert uses() == 2


def test_two_users_concurrently_isolated() -> None:
    store = HybridStore(index=False)
    mw = MemoryMiddleware(debounce_s=0.0)
    agents = {}
    models = {}
    for user in ("ann", "ben"):
        models[user] = scripted(["ok"] * 10)
        agents[user] = create_agent(
            models[user], middleware=[mw], store=store, checkpointer=InMemorySaver()
        )
    facts = {"ann": "My dog is called Pixel.", "ben": "My cat is called Mango."}

    def run(user: str) -> None:
        for i in range(3):
            _say(
                agents[user],
                facts[user] if i == 0 else f"tell me something {i}",
                _cfg(f"{user}-t", user),
            )

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(run, ["ann", "ben"]))
    mw.flush()
    ann, ben = _texts(store, "ann"), _texts(store, "ben")
    assert any("Pixel" in t for t in ann) and not any("Mango" in t for t in ann)
    assert any("Mango" in t for t in ben) and not any("Pixel" in t for t in ben)
    _say(agents["ann"], "what is my pet called? is it a cat or a dog?", _cfg("ann-t", "ann"))
    prompt = models["ann"].system_prompts[-1]
    assert "Pixel" in prompt and "Mango" not in prompt
    turns = store.conversations.turns("ann")
    assert turns and all(t.user_id == "ann" for t in turns)
    assert not any("Mango" in t.content for t in turns)


def test_working_memory_survives_restart_with_sqlite_checkpointer(tmp_path: Any) -> None:
    db = tmp_path / "mem.db"
    ck = tmp_path / "ckpt.sqlite"
    store = HybridStore(db, index=False)
    conn = sqlite3.connect(ck, check_same_thread=False)
    mw = MemoryMiddleware(background=False)
    agent = create_agent(
        scripted(["hi"]), middleware=[mw], store=store, checkpointer=SqliteSaver(conn)
    )
    out = _say(agent, "I am learning the violin.", _cfg("th", "carol"))
    sid = out["working_memory"]["session_id"]
    conn.close()
    store.close()

    # a new process: everything reopened from the files
    store2 = HybridStore(db, index=False)
    conn2 = sqlite3.connect(ck, check_same_thread=False)
    mw2 = MemoryMiddleware(background=False)
    agent2 = create_agent(
        scripted(["sure"]), middleware=[mw2], store=store2, checkpointer=SqliteSaver(conn2)
    )
    state = agent2.get_state(_cfg("th", "carol")).values
    assert state["working_memory"]["session_id"] == sid
    out = _say(agent2, "What am I learning?", _cfg("th", "carol"))
    assert out["working_memory"]["session_id"] == sid
    assert out["working_memory"]["turn_count"] == 2
    assert len(store2.conversations.turns("carol", sid)) == 4
    conn2.close()
    store2.close()


def test_window_is_bounded_and_dropped_turns_stay_in_table() -> None:
    store = HybridStore(index=False)
    cfg = MemoryConfig(
        window={
            "max_turns": 6,
            "summarize_after": 4,
            "summarize_every": 2,
            "keep_verbatim_turns": 2,
        }
    )
    mw = MemoryMiddleware(config=cfg, background=False)
    model = scripted(
        [
            x
            for i in range(8)
            for x in (tool_call("get_weather", {"city": f"C{i}"}, f"c{i}"), f"reply {i}")
        ]
    )
    agent = create_agent(
        model, tools=[get_weather], middleware=[mw], store=store, checkpointer=InMemorySaver()
    )
    for i in range(8):
        out = _say(agent, f"question number {i}", _cfg("w", "dan"))
        msgs = out["messages"]
        # the model never saw a ToolMessage without its AIMessage
        for call in model.calls:
            seen: set[str] = set()
            for m in call:
                if isinstance(m, AIMessage):
                    seen.update(tc["id"] for tc in m.tool_calls)
                if isinstance(m, ToolMessage):
                    assert m.tool_call_id in seen
    # state window: the last turn (4 messages) plus at most one more whole turn
    assert len(msgs) <= 8
    assert isinstance(msgs[0], HumanMessage)
    assert out["working_memory"]["turn_count"] == 8
    users = [t for t in store.conversations.turns("dan") if t.role == "user"]
    assert [t.content for t in users] == [f"question number {i}" for i in range(8)]


def test_missing_user_id_is_a_clear_error() -> None:
    agent = create_agent(
        scripted(["x"]), middleware=[MemoryMiddleware()], store=HybridStore(index=False)
    )
    with pytest.raises(ValidationError, match="user_id"):
        agent.invoke({"messages": [{"role": "user", "content": "hi"}]})


def test_runtime_context_user_id_and_no_store_error() -> None:
    from dataclasses import dataclass

    @dataclass
    class Ctx:
        user_id: int

    store = HybridStore(index=False)
    mw = MemoryMiddleware(background=False)
    agent = create_agent(scripted(["ok"]), middleware=[mw], store=store, context_schema=Ctx)
    agent.invoke(
        {"messages": [{"role": "user", "content": "Remember that my locker is 42."}]},
        context=Ctx(user_id=7),
    )
    assert store.conversations.turns("7")
    with pytest.raises(ValidationError, match="store"):
        create_agent(scripted(["x"]), middleware=[MemoryMiddleware()]).invoke(
            {"messages": [{"role": "user", "content": "hi"}]}, _cfg("t", "u")
        )


def test_async_agent_and_aflush() -> None:
    store = HybridStore(index=False)
    mw = MemoryMiddleware(debounce_s=5.0)
    agent = create_agent(
        scripted(["Nice."]), middleware=[mw], store=store, checkpointer=InMemorySaver()
    )

    async def main() -> None:
        await agent.ainvoke(
            {"messages": [{"role": "user", "content": "I love sailing."}]}, _cfg("as", "eve")
        )
        assert mw.worker.pending >= 1  # debounced: still waiting, the reply was not delayed
        await mw.aflush()

    asyncio.run(main())
    assert any("sailing" in t for t in _texts(store, "eve"))


def test_inject_context_keeps_list_content() -> None:
    sys = SystemMessage(content=[{"type": "text", "text": "base"}])
    out = inject_context(sys, "CTX")
    assert out is not None and out.content[-1] == {"type": "text", "text": "CTX"}
    assert inject_context(None, "") is None


def test_turn_becomes_an_episode_with_derived_facts_and_a_true_profile() -> None:
    store = HybridStore(index=False)
    mw = MemoryMiddleware(background=False)
    agent = create_agent(
        scripted(["好可爱！", "好的", "记下了"]),
        middleware=[mw],
        store=store,
        checkpointer=InMemorySaver(),
    )
    said = "介绍一下我家狗子：柯基，叫豆包，两岁，天天拆家🐶 嗯…我住在杭州滨江"
    _say(agent, said, _cfg("t", "u"))
    report = mw.reports[-1]
    [episode] = report["episodes"]
    ep = store.get(("memories", "u"), episode)
    assert ep is not None and ep.value["kind"] == "episodic"
    assert ep.value["text"] == f"{said}\n好可爱！"  # the exchange, verbatim
    facts = [store.get(("memories", "u"), f).value for f in report["facts"]]
    assert all(f["source_ids"] == [episode] for f in facts)
    profile = store.conversations.get_profile("u")
    # the dog's name never becomes the user's (the profile is built from derived facts)
    assert profile is None or "用户叫豆包" not in profile.background
    _say(agent, "搬家了，现在住在西湖区，离公司近多了", _cfg("t", "u"))
    _say(agent, "thanks", _cfg("t", "u"))
    assert len(store.search(("memories", "u"), filter={"kind": "episodic"}, limit=10)) == 3


def test_a_message_time_dates_its_episode() -> None:
    store = HybridStore(index=False)
    mw = MemoryMiddleware(background=False)
    agent = create_agent(
        scripted(["ok"]), middleware=[mw], store=store, checkpointer=InMemorySaver()
    )
    said = HumanMessage(
        "we moved the standup to 9:30", additional_kwargs={"timestamp": "2024-04-15T09:00:00Z"}
    )
    agent.invoke({"messages": [said]}, _cfg("t", "u"))
    [episode] = mw.reports[-1]["episodes"]
    value = store.get(("memories", "u"), episode).value
    assert value["occurred_at"].startswith("2024-04-15T09:00:00")
