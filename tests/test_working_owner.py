"""Working memory belongs to the user whose run opened it, however the graph got that user.

A graph receives its user through the runtime context (a dict or an object), through
``configurable.user_id`` or from ``default_user_id``. Whichever it was, the working memory
in the checkpoint names its user, ``GET /memory/working/{session}`` shows it to that user's
key only (404 to anyone else's), and another user's run on the same thread starts its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from _agent_fakes import scripted
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from langmem_plus import HybridStore
from langmem_plus.agent.middleware import MemoryMiddleware
from langmem_plus.agent.nodes import MemoryState, create_recall_node, memory_messages
from langmem_plus.agent.working import WorkingMemory
from langmem_plus.memory import Memory

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from langmem_plus.server import create_app
from langmem_plus.server.apikeys import KeyStore

TEXT = "I am planning a trip to Kyoto on 2026-05-01, my budget is 3000 dollars."


@dataclass
class Ctx:
    user_id: str


# how a run names its user: (invoke kwargs, default_user_id)
WAYS: dict[str, tuple[dict[str, Any], str | None]] = {
    "context dict": ({"context": {"user_id": "bob"}}, None),
    "context object": ({"context": Ctx("bob")}, None),
    "configurable": ({"config_user": "bob"}, None),
    "default_user_id": ({}, "bob"),
}


@pytest.fixture
def mem() -> Iterator[Memory]:
    m = Memory(embeddings=False)
    yield m
    m.close()


def _config(thread: str, how: dict[str, Any]) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": thread}
    if "config_user" in how:
        conf["user_id"] = how["config_user"]
    return {"configurable": conf}


def _run_nodes(store: HybridStore, saver: InMemorySaver, how: dict[str, Any], default: str | None):
    model = scripted(["Sounds good."])
    g = StateGraph(MemoryState, context_schema=Ctx if isinstance(how.get("context"), Ctx) else None)
    g.add_node("recall", create_recall_node(default_user_id=default))
    g.add_node(
        "reply", lambda s: {"messages": [model.invoke(memory_messages(s, "You are helpful."))]}
    )
    g.add_edge(START, "recall").add_edge("recall", "reply").add_edge("reply", END)
    app = g.compile(store=store, checkpointer=saver)
    kwargs = {"context": how["context"]} if "context" in how else {}
    app.invoke({"messages": [{"role": "user", "content": TEXT}]}, _config("s1", how), **kwargs)


def _run_agent(store: HybridStore, saver: InMemorySaver, how: dict[str, Any], default: str | None):
    mw = MemoryMiddleware(background=False, default_user_id=default)
    ctx = how.get("context")
    agent = create_agent(
        scripted(["Sounds good."]), middleware=[mw], store=store, checkpointer=saver,
        context_schema=type(ctx) if isinstance(ctx, Ctx) else None,
    )  # fmt: skip
    kwargs = {"context": ctx} if ctx is not None else {}
    agent.invoke({"messages": [{"role": "user", "content": TEXT}]}, _config("s1", how), **kwargs)
    mw.close()


@pytest.mark.parametrize("way", list(WAYS))
@pytest.mark.parametrize("runner", [_run_nodes, _run_agent], ids=["nodes", "create_agent"])
def test_only_its_users_key_reads_a_sessions_working_memory(mem, way, runner) -> None:
    how, default = WAYS[way]
    saver = InMemorySaver()
    runner(mem.store, saver, how, default)
    keys = KeyStore(mem.store.db)
    alice = {"Authorization": f"Bearer {keys.create(user_id='alice')[1]}"}
    bob = {"Authorization": f"Bearer {keys.create(user_id='bob')[1]}"}
    admin = keys.create(admin=True)[1]
    client = TestClient(create_app(mem, checkpointer=saver, rate_limit=None))
    own = client.get("/memory/working/s1", headers=bob)
    assert own.status_code == 200, own.text
    assert own.json()["turn_count"] == 1 and own.json()["source"] == "checkpointer"
    assert "user_id" not in own.json()
    assert client.get("/memory/working/s1", headers=alice).status_code == 404
    as_alice = {"Authorization": f"Bearer {admin}", "X-User-Id": "alice"}
    assert client.get("/memory/working/s1", headers=as_alice).status_code == 404
    as_bob = {"Authorization": f"Bearer {admin}", "X-User-Id": "bob"}
    assert client.get("/memory/working/s1", headers=as_bob).status_code == 200


def test_a_checkpoint_that_names_no_user_is_shown_to_nobody(mem) -> None:
    """Fail closed: a working memory written without a user (by hand, or by an older
    version) cannot be attributed, so no key reads it."""

    from typing_extensions import TypedDict

    from langmem_plus.model.records import utcnow

    class S(TypedDict, total=False):
        working_memory: dict

    def node(state: S) -> S:
        now = utcnow()
        return {
            "working_memory": WorkingMemory.new(now, session_id="t").record_turn(now).to_state()
        }

    saver = InMemorySaver()
    g = StateGraph(S).add_node("n", node).add_edge(START, "n").add_edge("n", END)
    g.compile(checkpointer=saver).invoke({}, {"configurable": {"thread_id": "t"}})
    client = TestClient(create_app(mem, checkpointer=saver), base_url="http://localhost")
    for user in ("alice", "bob", "default"):
        assert client.get("/memory/working/t", headers={"X-User-Id": user}).status_code == 404


def test_another_users_run_on_the_same_thread_starts_its_own_working_memory(mem) -> None:
    saver = InMemorySaver()
    _run_agent(mem.store, saver, {"context": {"user_id": "bob"}}, None)
    bobs = saver.get_tuple({"configurable": {"thread_id": "s1"}}).checkpoint["channel_values"]
    assert bobs["working_memory"]["user_id"] == "bob"
    model = scripted(["Hello."])
    mw = MemoryMiddleware(background=False)
    agent = create_agent(model, middleware=[mw], store=mem.store, checkpointer=saver)
    out = agent.invoke(
        {"messages": [{"role": "user", "content": "hello there"}]},
        {"configurable": {"thread_id": "s1"}},
        context={"user_id": "alice"},
    )
    mw.close()
    wm = out["working_memory"]
    assert wm["user_id"] == "alice" and wm["turn_count"] == 1
    assert wm["session_id"] != bobs["working_memory"]["session_id"]
    assert "3000" not in str(wm["context_variables"]) and "Kyoto" not in str(wm)


def test_owned_by_adopts_an_unnamed_one_and_refuses_anothers() -> None:
    from datetime import datetime, timezone

    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    bob = WorkingMemory.new(now, user_id="bob").to_state()
    assert WorkingMemory.owned_by(bob, "alice") is None
    assert WorkingMemory.owned_by(bob, "bob").user_id == "bob"
    unnamed = WorkingMemory.new(now).to_state()
    assert WorkingMemory.owned_by(unnamed, "alice").user_id == "alice"
    assert WorkingMemory.owned_by(None, "alice") is None
