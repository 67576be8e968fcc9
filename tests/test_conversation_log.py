"""ConversationLog: HybridStore provides one, another store gets one injected (or a warning
once), the in-memory log gives an InMemoryStore user the whole post-turn path."""

from __future__ import annotations

import warnings
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from _agent_fakes import FakeClock, scripted
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langmem_plus import HybridStore, Memory, MemoryConfig
from langmem_plus.agent.middleware import MemoryMiddleware
from langmem_plus.episodic.conversation_log import (
    ConversationLog,
    InMemoryConversationLog,
    check_log,
    log_of,
)
from langmem_plus.errors import ValidationError
from langmem_plus.model.records import RollingSummary, SessionSummary, UserProfile

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def _say(agent: Any, text: str, user: str = "ann") -> dict[str, Any]:
    cfg = {"configurable": {"thread_id": "t1", "user_id": user}}
    return agent.invoke({"messages": [{"role": "user", "content": text}]}, cfg)


def test_hybrid_store_provides_a_log_and_a_plain_store_does_not() -> None:
    store = HybridStore(index=False)
    assert isinstance(store.conversations, ConversationLog)
    assert log_of(store) is store.conversations
    assert log_of(InMemoryStore()) is None
    assert isinstance(InMemoryConversationLog(), ConversationLog)


def test_a_log_missing_methods_is_refused_at_construction() -> None:
    class Half:
        def add_turn(self, *a: Any, **k: Any) -> None: ...

    with pytest.raises(ValidationError, match="find_symbols"):
        check_log(Half())
    with pytest.raises(ValidationError, match="conversation_log"):
        MemoryMiddleware(InMemoryStore(), conversation_log=Half())  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="conversation_log"):
        Memory(embeddings=False, conversation_log=Half())  # type: ignore[arg-type]


def test_a_store_without_a_log_warns_once_at_construction() -> None:
    with pytest.warns(UserWarning, match="no conversation log"):
        mw = MemoryMiddleware(InMemoryStore(), background=False, clock=FakeClock())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second warning would raise
        agent = create_agent(scripted(["Hi."]), middleware=[mw], checkpointer=InMemorySaver())
        out = _say(agent, "Hello there.")
    assert out["working_memory"]["turn_count"] == 1  # recall and context still ran
    assert mw.reports[-1]["note"].startswith("no conversation log")


def test_no_warning_with_a_log() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MemoryMiddleware(InMemoryStore(), conversation_log=InMemoryConversationLog())
        MemoryMiddleware(HybridStore(index=False))


def test_in_memory_store_gets_the_full_post_turn_path_through_the_middleware() -> None:
    store, log = InMemoryStore(), InMemoryConversationLog()
    config = MemoryConfig(
        window={"summarize_after": 2, "summarize_every": 2, "keep_verbatim_turns": 1}
    )
    mw = MemoryMiddleware(
        store, conversation_log=log, config=config, background=False, clock=FakeClock()
    )
    replies = ["Noted.", "Nice.", "Got it.", "Sure."]
    agent = create_agent(scripted(replies), middleware=[mw], checkpointer=InMemorySaver())
    _say(agent, "I live in Berlin and I prefer short answers.")
    _say(agent, "My dog is called Bao.")
    _say(agent, "The bug is in processOrder in src/order.ts.")
    report = mw.reports[-1]
    assert "note" not in report
    turns = log.turns("ann")
    assert [t.role for t in turns][:2] == ["user", "assistant"]
    assert all(t.is_collected for t in turns)  # the knowledge step ran over them
    texts = [it.value["text"] for it in store.search(("memories", "ann"), limit=50)]
    assert any("Berlin" in t for t in texts)  # episodes and facts were written
    assert log.rolling_summaries("ann")  # rolling summaries
    assert log.session_summaries("ann", limit=5)  # the session's title
    assert log.find_symbols("ann", ["processorder"])  # the symbol index


def test_in_memory_log_round_trip_and_deletion() -> None:
    log = InMemoryConversationLog()
    a = log.add_turn("u", "s1", "user", "call fooBar now", created_at=T0)
    log.add_turn("u", "s2", "user", "later", created_at=T0 + timedelta(days=2))
    log.add_turn("v", "s1", "user", "other user", created_at=T0)
    assert [t.content for t in log.turns("u")] == ["call fooBar now", "later"]
    assert log.turns("u", "s1", uncollected_only=True)[0].id == a.id
    log.mark_collected([a.id or 0])
    assert log.turns("u", "s1", uncollected_only=True) == []
    assert [s["session_id"] for s in log.sessions("u")] == ["s2", "s1"]
    assert log.find_symbols("u", ["FOOBAR"])[0]["turn_id"] == a.id
    assert log.find_symbols("v", ["fooBar"]) == []
    saved = log.add_rolling_summary(
        RollingSummary(user_id="u", session_id="s1", start_turn=1, end_turn=1, summary="x")
    )
    assert saved.id == 1 and log.rolling_summaries("u", "s1") == [saved]
    log.set_session_summary(SessionSummary(user_id="u", session_id="s1", title="t", snippet="s"))
    assert log.session_summaries("u", exclude_session="s1") == []
    log.put_profile(UserProfile(user_id="u", background="dev"))
    assert log.users() == ["u", "v"]
    with pytest.raises(ValidationError):
        log.add_turn("u", "s1", "robot", "x")
    with pytest.raises(ValidationError):
        log.delete()
    counts = log.delete(user_id="u", older_than=T0 + timedelta(days=1))
    assert counts["turns_deleted"] == 1 and [t.content for t in log.turns("u")] == ["later"]
    assert log.get_profile("u") is not None  # a time-bounded delete keeps the profile
    log.delete(user_id="u")
    assert log.get_profile("u") is None and log.users() == ["v"]
    assert log.delete_all()["turns_deleted"] == 1 and log.users() == []


def test_memory_uses_an_injected_log() -> None:
    log = InMemoryConversationLog()
    with Memory(embeddings=False, conversation_log=log) as mem:
        mem.add_turn("ann", "s1", "user", "I use FastAPI at work")
        assert [t.content for t in log.turns("ann")] == ["I use FastAPI at work"]
        assert mem.store.conversations.turns("ann") == []
        assert mem.recall("FastAPI", "ann")["results"]
        said = [
            {"role": "user", "content": "I moved to Lyon"},
            {"role": "assistant", "content": "Ok"},
        ]
        assert mem.add(said, "ann", session_id="s2")
        assert [t.content for t in log.turns("ann", "s2")] == ["I moved to Lyon", "Ok"]
        assert mem.store.conversations.turns("ann") == []  # nothing went to the store's log


def test_recent_turns_are_the_last_of_the_session_in_order() -> None:
    """`recent_turns` (the bounded read `Memory.add` makes for the reply a turn answers) is
    the tail of `turns`, shared text included; a bad limit is refused."""
    store = HybridStore(index=False)
    log = store.conversations
    log.add_turns(
        "u", "s", [("user", f"q{i}") if i % 2 == 0 else ("assistant", f"a{i}") for i in range(9)]
    )
    log.add_turns("u", "other", [("user", "elsewhere")])
    log.add_turns("v", "s", [("user", "someone else")])
    for n in (1, 4, 9, 20):
        assert log.recent_turns("u", "s", n) == log.turns("u", "s")[-n:]
    assert log.recent_turns("u", "none", 4) == []
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValidationError):
            log.recent_turns("u", "s", bad)  # type: ignore[arg-type]


def test_memory_add_reads_only_the_end_of_a_long_session(tmp_path) -> None:
    """The reply a turn answers is read from the session's last turns, not from all of it:
    the cost of an add does not grow with the conversation."""
    mem = Memory(tmp_path / "m.db", embeddings=False)
    log = mem.store.conversations
    log.add_turns("u", "s", [("user", "hello"), ("assistant", "Your order ships Monday.")] * 50)
    calls: list[tuple[Any, ...]] = []
    real = log.turns

    def spy(*args: Any, **kw: Any) -> Any:
        calls.append(args)
        return real(*args, **kw)

    log.turns = spy  # type: ignore[method-assign]
    assert mem.writer.last_reply("u", "s") == "Your order ships Monday."
    mem.add("No, it was Tuesday.", "u", session_id="s")
    assert calls == []
    mem.close()
