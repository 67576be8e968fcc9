"""One memory, whichever door: the same conversation, then the same question through every
way in (the store, the retriever, both tool sets, Memory, middleware, nodes, REST, MCP, CLI)
gives the same current answer — the corrected fact, never the one it superseded."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from _agent_fakes import scripted
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from langmem_plus import HybridStore, MemoryRetriever
from langmem_plus.agent.middleware import MemoryMiddleware
from langmem_plus.agent.nodes import MemoryState, create_recall_node
from langmem_plus.agent.tools import create_search_memory_tool
from langmem_plus.cli import main
from langmem_plus.clock import ManualClock
from langmem_plus.memory import Memory

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
USER = "u"
NS = ("memories", USER)
QUESTION = "where does the user live"
OLD, NEW = "User lives in Paris", "User moved to Rome"


def _converse(mem: Memory) -> None:
    mem.add(
        [
            {"role": "user", "content": "I live in Paris."},
            {"role": "assistant", "content": "Paris is lovely."},
        ],
        USER,
        session_id="s1",
        timestamp=T0,
    )
    mem.add(
        [
            {"role": "user", "content": "I moved to Rome last month."},
            {"role": "assistant", "content": "Rome, how exciting!"},
        ],
        USER,
        session_id="s2",
        timestamp=T0 + timedelta(days=40),
    )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "m.db"
    with Memory(path, embeddings=False, clock=ManualClock(T0.timestamp() + 50 * 86400)) as mem:
        _converse(mem)
    return path


def _facts(texts: list[str]) -> list[str]:
    """The fact texts among what a door returned, in its order."""
    return [t for t in texts if t in (OLD, NEW)]


def _check(door: str, texts: list[str]) -> None:
    facts = _facts(texts)
    assert facts and facts[0] == NEW, (door, texts)
    assert OLD not in facts, (door, texts)


def test_every_door_shows_the_current_fact(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mem = Memory(db, embeddings=False)
    store = mem.store
    seen: dict[str, list[str]] = {}
    seen["HybridStore.search"] = [h.value["text"] for h in store.search(NS, query=QUESTION)]
    seen["HybridStore.asearch"] = [
        h.value["text"] for h in asyncio.run(store.asearch(NS, query=QUESTION))
    ]
    # LangGraph's BaseStore.batch with a plain SearchOp: what any LangGraph code does
    from langgraph.store.base import SearchOp

    (found,) = store.batch([SearchOp(NS, None, 10, 0, QUESTION)])
    seen["BaseStore.batch"] = [h.value["text"] for h in found]
    seen["MemoryRetriever"] = [
        d.page_content for d in MemoryRetriever(store=store, user_id=USER).invoke(QUESTION)
    ]
    ours = create_search_memory_tool(store, default_user_id=USER)
    seen["memory tool"] = [str(ours.invoke({"query": QUESTION}))]
    langmem = pytest.importorskip("langmem")
    theirs = langmem.create_search_memory_tool(namespace=NS, store=store)
    out = json.loads(theirs.invoke({"query": QUESTION}))
    seen["LangMem search_memory"] = [it["value"]["text"] for it in out]
    # lean: what a tool needs, no ranking internals, no fields at their default
    assert all("components" not in it and "tags" not in it["value"] for it in out)
    assert all("created_at" not in it["value"] for it in out)  # the item's own, said then
    seen["Memory.search"] = [h.text for h in mem.search(QUESTION, USER)]
    seen["REST"] = _rest(mem)
    seen["MCP"] = _mcp(mem)
    seen["middleware"] = _middleware(store)
    seen["nodes"] = _nodes(store)
    mem.close()
    seen["CLI"] = _cli(db, capsys)
    for door, texts in seen.items():
        if door == "memory tool":  # one text block: the fact lines in order
            block = texts[0]
            assert NEW in block and OLD not in block, block
            continue
        _check(door, texts)


def test_history_is_one_argument_away(db: Path) -> None:
    with Memory(db, embeddings=False) as mem:
        store = mem.store
        texts = [h.value["text"] for h in store.search(NS, query=QUESTION, include_superseded=True)]
        assert OLD in texts and NEW in texts
        old = next(
            h
            for h in store.search(NS, query=QUESTION, include_superseded=True)
            if h.value["text"] == OLD
        )
        assert old.components["superseded"] == 1.0
        then = [h.value["text"] for h in store.search(NS, query=QUESTION, as_of=T0 + timedelta(1))]
        assert _facts(then) == [OLD]
        assert _facts([h.text for h in mem.search(QUESTION, USER, as_of=T0 + timedelta(1))]) == [
            OLD
        ]
        # the episode whose fact was superseded is shown, but ranked lower and marked
        episode = next(
            h for h in store.search(NS, query="Paris") if "I live in Paris" in h.value["text"]
        )
        assert episode.components["superseded"] == 1.0


def _rest(mem: Memory) -> list[str]:
    from fastapi.testclient import TestClient

    from langmem_plus.server import create_app

    with TestClient(create_app(mem), base_url="http://localhost") as client:
        r = client.post(
            "/memory/search", json={"query": QUESTION, "limit": 10}, headers={"X-User-Id": USER}
        )
        assert r.status_code == 200, r.text
        return [h["text"] for h in r.json()["results"]]


def _mcp(mem: Memory) -> list[str]:
    pytest.importorskip("mcp")
    from langmem_plus.mcp_server import build_server

    server = build_server(mem, user=USER)
    res = asyncio.run(server.call_tool("search_memory", {"query": QUESTION, "limit": 10}))
    return [r["text"] for r in res.structured_content["results"]]  # stored text as it is


def _middleware(store: HybridStore) -> list[str]:
    model = scripted(["You live in Rome."])
    mw = MemoryMiddleware(debounce_s=0.0)
    agent = create_agent(
        model, tools=[], middleware=[mw], store=store, checkpointer=InMemorySaver()
    )
    cfg: Any = {"configurable": {"thread_id": "t", "user_id": USER}}
    out = agent.invoke({"messages": [HumanMessage(QUESTION)]}, cfg)
    mw.close()
    return [m["text"] for m in out["memory_context"]["memories"]]


def _nodes(store: HybridStore) -> list[str]:
    graph = StateGraph(MemoryState)
    graph.add_node("recall", create_recall_node(store))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", END)
    app = graph.compile(checkpointer=InMemorySaver())
    cfg: Any = {"configurable": {"thread_id": "n", "user_id": USER}}
    out = app.invoke({"messages": [HumanMessage(QUESTION)]}, cfg)
    return [m["text"] for m in out["memory_context"]["memories"]]


def _cli(db: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    args = ["--db", str(db), "--embeddings", "none", "--user", USER, "search", QUESTION, "--json"]
    assert main(args) == 0
    return [h["text"] for h in json.loads(capsys.readouterr().out)["results"]]
