"""One write path: the same messages through `Memory.add`, the middleware and the graph
nodes give the same episodes, facts, sources and validity (one exchange grouping, one
`EpisodeKeeper`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from _agent_fakes import FakeClock, scripted
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph

from langmem_plus import HybridStore
from langmem_plus.agent.middleware import MemoryMiddleware
from langmem_plus.agent.nodes import MemoryState, create_extract_node, create_recall_node
from langmem_plus.episodic.episodes import Turn, exchanges
from langmem_plus.memory import Memory

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
USER = "u"
NS = ("memories", USER)
# each exchange: the user's messages (two in a row in the first), then the reply
CONVERSATION: list[tuple[list[str], str]] = [
    (["hi, quick one", "I live in Paris. I am allergic to peanuts."], "Noted, Paris!"),
    (["My favourite drink is green tea."], "Green tea, lovely."),
    (["I moved to Rome last month."], "Rome, how exciting!"),
]
# 45 minutes apart: each exchange opens a new session, as a returning user would
GAP = timedelta(minutes=45)


def _shape(store: HybridStore) -> set[tuple[Any, ...]]:
    """What the writes made, independent of ids and write times: each record's kind, text,
    roles, whether it is current, and the texts of its sources and successor."""
    items = {it.key: it.value for it in store.search(NS, limit=500, include_superseded=True)}

    def text(key: str | None) -> str | None:
        return None if key is None else items.get(key, {}).get("text")

    out = set()
    for value in items.values():
        if "working_memory_archive" in (value.get("tags") or ()):
            continue  # an expired session's summary: the agent's working memory, not add's
        meta = value.get("metadata") or {}
        out.add(
            (
                value["kind"],
                value["text"],
                tuple(meta.get("roles") or ()),
                value.get("valid_to") is None,
                value.get("occurred_at"),
                tuple(sorted(str(text(s)) for s in value.get("source_ids") or ())),
                text(value.get("superseded_by")),
                bool(value.get("facts_superseded")),
            )
        )
    return out


def _by_memory_add() -> set[tuple[Any, ...]]:
    mem = Memory(embeddings=False)
    for i, (said, reply) in enumerate(CONVERSATION):
        msgs = [{"role": "user", "content": t} for t in said]
        msgs.append({"role": "assistant", "content": reply})
        mem.add(msgs, USER, session_id=f"s{i}", timestamp=T0 + i * GAP)
    return _shape(mem.store)


def _by_middleware() -> set[tuple[Any, ...]]:
    store = HybridStore(index=False)
    clock = FakeClock(T0)
    mw = MemoryMiddleware(clock=clock, debounce_s=0.0)
    model = scripted([reply for _, reply in CONVERSATION])
    agent = create_agent(
        model, tools=[], middleware=[mw], store=store, checkpointer=InMemorySaver()
    )
    cfg: Any = {"configurable": {"thread_id": "t", "user_id": USER}}
    for i, (said, _) in enumerate(CONVERSATION):
        clock.now = T0 + i * GAP
        agent.invoke({"messages": [HumanMessage(t) for t in said]}, cfg)
        mw.flush()
    mw.close()
    return _shape(store)


def _by_nodes() -> set[tuple[Any, ...]]:
    store = HybridStore(index=False)
    clock = FakeClock(T0)
    replies = iter([reply for _, reply in CONVERSATION])

    def model(state: Any) -> dict[str, Any]:
        return {"messages": [AIMessage(next(replies))]}

    graph = StateGraph(MemoryState)
    graph.add_node("recall", create_recall_node(store, clock=clock))
    graph.add_node("model", model)
    graph.add_node("extract", create_extract_node(store, clock=clock))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "model")
    graph.add_edge("model", "extract")
    graph.add_edge("extract", END)
    app = graph.compile(checkpointer=InMemorySaver())
    cfg: Any = {"configurable": {"thread_id": "n", "user_id": USER}}
    for i, (said, _) in enumerate(CONVERSATION):
        clock.now = T0 + i * GAP
        app.invoke({"messages": [HumanMessage(t) for t in said]}, cfg)
    return _shape(store)


def test_the_same_messages_make_the_same_memory_through_every_write_door() -> None:
    by_add = _by_memory_add()
    assert by_add == _by_middleware()
    assert by_add == _by_nodes()
    # what they made: three episodes (two user turns in a row are one exchange), facts with
    # their sources, and the moved-from city closed by the moved-to one
    episodes = [r for r in by_add if r[0] == "episodic"]
    assert len(episodes) == 3
    assert ("user", "user", "assistant") in {r[2] for r in episodes}
    closed = {r[1]: r[6] for r in by_add if r[0] == "semantic" and not r[3]}
    assert closed == {"User lives in Paris": "User moved to Rome"}


def test_one_grouping() -> None:
    turns = [
        Turn("user", "a"),
        Turn("user", "b"),
        Turn("tool", "x"),
        Turn("assistant", " "),
        Turn("assistant", "c"),
        Turn("user", "d"),
        Turn("system", "s"),
        Turn("assistant", "e"),
        Turn("assistant", "f"),
    ]
    got = [[t.text for t in ex] for ex in exchanges(turns)]
    assert got == [["a", "b", "c"], ["d", "e", "f"]]


def test_a_long_exchange_is_kept_whole_in_several_episodes() -> None:
    from langmem_plus.episodic.episodes import EPISODE_MAX_CHARS

    mem = Memory(embeddings=False)
    msgs = [{"role": "user", "content": f"{i} " + "x" * 9_990} for i in range(12)]
    msgs.append({"role": "assistant", "content": "ok"})
    ids = mem.add(msgs, USER)  # a project error before, never the whole exchange
    episodes = [mem.get(i, USER) for i in ids if mem.get(i, USER).kind == "episodic"]
    assert len(episodes) == 2 and all(len(e.text) <= EPISODE_MAX_CHARS for e in episodes)
    kept = "\n".join(e.text for e in episodes)
    assert all(m["content"] in kept for m in msgs)
    long = exchanges([Turn("user", "y" * (EPISODE_MAX_CHARS * 2 + 5))])
    assert [len(ex[0].text) for ex in long] == [EPISODE_MAX_CHARS, EPISODE_MAX_CHARS, 5]
