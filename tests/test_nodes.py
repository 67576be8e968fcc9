"""Memory nodes in custom StateGraphs, with a file checkpointer, sync and async, one by one."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
from typing import Any

from _agent_fakes import scripted
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

from langmem_plus import HybridStore, MemoryConfig
from langmem_plus.agent.nodes import (
    MemoryState,
    create_extract_node,
    create_recall_node,
    create_reconsolidate_node,
    create_summarize_node,
    memory_messages,
)


def _graph(model: Any, nodes: list[tuple[str, Any]]) -> StateGraph:
    g = StateGraph(MemoryState)

    def reply(state: MemoryState) -> dict[str, Any]:
        return {"messages": [model.invoke(memory_messages(state, "You are helpful."))]}

    names = []
    for name, node in nodes:
        g.add_node(name, node)
        names.append(name)
    g.add_node("reply", reply)
    order = [n for n in names if n == "recall"] + ["reply"] + [n for n in names if n != "recall"]
    g.add_edge(START, order[0])
    for a, b in itertools.pairwise(order):
        g.add_edge(a, b)
    g.add_edge(order[-1], END)
    return g


def _say(app: Any, text: str, thread: str, user: str = "u") -> dict[str, Any]:
    return app.invoke(
        {"messages": [{"role": "user", "content": text}]},
        {"configurable": {"thread_id": thread, "user_id": user}},
    )


def test_full_pipeline_with_sqlite_checkpointer(tmp_path: Any) -> None:
    store = HybridStore(tmp_path / "m.db", index=False)
    conn = sqlite3.connect(tmp_path / "c.sqlite", check_same_thread=False)
    model = scripted(["Noted.", "You like Rust."])
    app = _graph(
        model,
        [
            ("recall", create_recall_node()),
            ("extract", create_extract_node()),
            ("summarize", create_summarize_node()),
            ("reconsolidate", create_reconsolidate_node()),
        ],
    ).compile(store=store, checkpointer=SqliteSaver(conn))
    out = _say(app, "My favorite programming language is Rust.", "t1")
    assert out["working_memory"]["turn_count"] == 1
    assert any("Rust" in i.value["text"] for i in store.search(("memories", "u"), limit=10))
    _say(app, "Which language do I like?", "t2")
    assert "Rust" in model.system_prompts[-1] and model.system_prompts[-1].startswith("You are")
    assert len(store.conversations.turns("u")) == 4
    conn.close()
    store.close()


def test_nodes_one_by_one_and_async() -> None:
    store = HybridStore(index=False)
    # extract alone (no recall node): still persists and extracts
    app = _graph(scripted(["ok"]), [("extract", create_extract_node(store))]).compile()
    _say(app, "I live in Lisbon.", "a")
    assert any("Lisbon" in i.value["text"] for i in store.search(("memories", "u"), limit=10))
    # recall alone, async
    model = scripted(["You live in Lisbon."])
    app = _graph(model, [("recall", create_recall_node(store))]).compile()
    asyncio.run(
        app.ainvoke(
            {"messages": [{"role": "user", "content": "where do I live?"}]},
            {"configurable": {"user_id": "u"}},
        )
    )
    assert "Lisbon" in model.system_prompts[-1]
    # another user's recall sees nothing of u
    model2 = scripted(["?"])
    app = _graph(model2, [("recall", create_recall_node(store))]).compile()
    _say(app, "where do I live?", "b", user="w")
    assert "Lisbon" not in model2.system_prompts[-1]


def test_summarize_node_rolls_every_five_turns_after_ten() -> None:
    store = HybridStore(index=False)
    cfg = MemoryConfig(window={"max_turns": 100})
    summarize = create_summarize_node(store, config=cfg)
    app = _graph(
        scripted([f"reply {i}" for i in range(12)]),
        [("recall", create_recall_node(store, config=cfg)), ("summarize", summarize)],
    ).compile(
        checkpointer=__import__("langgraph.checkpoint.memory", fromlist=["x"]).InMemorySaver()
    )
    for i in range(12):
        out = _say(app, f"we talk about topic {i}", "s")
    sid = out["working_memory"]["session_id"]
    rolling = store.conversations.rolling_summaries("u", sid)
    assert [(r.start_turn, r.end_turn) for r in rolling] == [(1, 5)]
    assert store.conversations.session_summaries("u", limit=5)
    # summarised turns left the window, the last ones stay verbatim
    assert "we talk about topic 0" not in str(out["messages"])
    assert "we talk about topic 11" in str(out["messages"])


def test_reconsolidate_node_grows_updates_of_recalled_episode() -> None:
    from langmem_plus.model.records import MemoryRecord

    store = HybridStore(index=False)
    ep = MemoryRecord(
        kind="episodic",
        category="episode",
        text="用户在准备杭州的面试",
        metadata={"time": "2026-01-03T18:00:00+00:00", "updates": []},
    )
    store.put(("memories", "u"), ep.id, ep.to_value())
    app = _graph(
        scripted(["加油！"]),
        [
            ("recall", create_recall_node(store)),
            ("reconsolidate", create_reconsolidate_node(store)),
        ],
    ).compile()
    out = _say(app, "杭州的面试我通过了一面", "r")
    assert out["memory_context"]["memories"][0]["key"] == ep.id
    after = store.get(("memories", "u"), ep.id).value
    assert len(after["metadata"]["updates"]) >= 1
    assert after["metadata"]["time"] == "2026-01-03T18:00:00+00:00"


def test_nodes_report_each_turns_cost() -> None:
    store = HybridStore(index=False)
    seen: list[Any] = []
    app = _graph(
        scripted(["ok"]),
        [
            ("recall", create_recall_node(store, on_cost=seen.append)),
            ("extract", create_extract_node(store, on_cost=seen.append)),
        ],
    ).compile()
    _say(app, "I switched to the 6am spin class", "t")
    phases = {c.phase: {s.stage for s in c.stages} for c in seen}
    assert {"recall", "context"} <= phases["prepare"]
    assert "knowledge" in phases["post_turn"]
    assert all(c.calls == 0 for c in seen)  # offline: no model call
