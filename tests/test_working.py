"""Working memory model, expiry, archiving and the message window (tool pairs never split)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langmem_plus.agent.working import (
    WorkingMemory,
    archive_record,
    group_turns,
    tool_pairs_intact,
    trim_window,
)
from langmem_plus.errors import ValidationError

T0 = datetime(2026, 1, 3, 18, 0, tzinfo=timezone.utc)


def test_first_message_then_each_turn() -> None:
    wm = WorkingMemory.new(T0)
    assert wm.turn_count == 0 and wm.created_at == wm.updated_at == T0
    wm = wm.record_turn(T0, topic="面试", context_variables={"city": "上海"}, emotion="anxious")
    assert wm.turn_count == 1 and wm.current_topic == "面试" and wm.last_emotion == "anxious"
    later = T0 + timedelta(minutes=5)
    wm = wm.record_turn(later, context_variables={"company": "ACME"})
    assert wm.turn_count == 2 and wm.updated_at == later and wm.created_at == T0
    assert wm.current_topic == "面试"  # no new topic: the old one stays
    assert wm.context_variables == {"city": "上海", "company": "ACME"}


def test_state_round_trip_and_malformed() -> None:
    wm = WorkingMemory.new(T0).record_turn(T0, topic="x")
    state = wm.to_state()
    assert isinstance(state["created_at"], str)
    assert WorkingMemory.from_state(state) == wm
    assert WorkingMemory.from_state(None) is None
    assert WorkingMemory.from_state({"nonsense": 1}) is None


def test_expiry_after_30_minutes() -> None:
    wm = WorkingMemory.new(T0).record_turn(T0)
    assert not wm.is_expired(T0 + timedelta(minutes=30), 30)
    assert wm.is_expired(T0 + timedelta(minutes=31), 30)


def test_archive_record() -> None:
    wm = WorkingMemory.new(T0).record_turn(T0, topic="interviews", context_variables={"k": "v"})
    rec = archive_record(
        wm, [{"role": "user", "text": "I have an interview"}], now=T0, namespace=("memories", "u")
    )
    assert rec is not None and rec.kind == "episodic" and rec.category == "episode"
    assert "2026-01-03 18:00" in rec.text and "interviews" in rec.text
    assert rec.metadata["context_variables"] == {"k": "v"} and rec.session_id == wm.session_id
    empty = WorkingMemory.new(T0)
    assert archive_record(empty, []) is None


def _turn(i: int, tools: int = 0) -> list[BaseMessage]:
    out: list[BaseMessage] = [HumanMessage(f"q{i}", id=f"h{i}")]
    for k in range(tools):
        cid = f"c{i}-{k}"
        out.append(AIMessage("", id=f"a{i}-{k}", tool_calls=[{"name": "t", "args": {}, "id": cid}]))
        out.append(ToolMessage("r", tool_call_id=cid, id=f"t{i}-{k}"))
    out.append(AIMessage(f"a{i}", id=f"a{i}"))
    return out


def test_trim_drops_oldest_whole_turns() -> None:
    msgs = [SystemMessage("sys", id="s"), *_turn(1), *_turn(2, tools=1), *_turn(3)]
    res = trim_window(msgs, max_messages=7)
    assert [m.id for m in res.kept] == ["s", "h2", "a2-0", "t2-0", "a2", "h3", "a3"]
    assert [m.id for m in res.dropped] == ["h1", "a1"]
    # the current turn always stays even if it alone is too long
    res = trim_window(_turn(1) + _turn(2, tools=5), max_messages=3)
    assert res.kept[0].id == "h2" and len(res.kept) == 12
    with pytest.raises(ValidationError):
        trim_window(msgs, max_messages=0)


def test_trim_by_summaries_keeps_last_verbatim_turns() -> None:
    msgs = [m for i in range(1, 11) for m in _turn(i)]
    res = trim_window(
        msgs, max_messages=100, turn_count=10, summarized_through=5, keep_verbatim_turns=5
    )
    assert res.kept[0].id == "h6" and len(res.dropped) == 10
    res = trim_window(
        msgs, max_messages=100, turn_count=10, summarized_through=8, keep_verbatim_turns=5
    )
    assert res.kept[0].id == "h6"  # never fewer than 5 verbatim turns


@st.composite
def _sequences(draw: st.DrawFn) -> list[BaseMessage]:
    msgs: list[BaseMessage] = []
    if draw(st.booleans()):
        msgs.append(SystemMessage("s", id="sys"))
    n = draw(st.integers(0, 12))
    cid = 0
    for i in range(n):
        kind = draw(st.sampled_from(["human", "ai", "tools", "orphan"]))
        if kind == "human":
            msgs.append(HumanMessage(f"h{i}", id=f"h{i}"))
        elif kind == "ai":
            msgs.append(AIMessage(f"a{i}", id=f"a{i}"))
        elif kind == "tools":
            k = draw(st.integers(1, 3))
            ids = [f"c{cid + j}" for j in range(k)]
            cid += k
            msgs.append(
                AIMessage(
                    "", id=f"x{i}", tool_calls=[{"name": "t", "args": {}, "id": c} for c in ids]
                )
            )
            # results may be interleaved with a user message (an interrupted turn)
            for j, c in enumerate(ids):
                if draw(st.booleans()) and j == 0:
                    msgs.append(HumanMessage(f"mid{i}", id=f"m{i}"))
                msgs.append(ToolMessage("r", tool_call_id=c, id=f"t{c}"))
        else:
            msgs.append(ToolMessage("r", tool_call_id=f"ghost{i}", id=f"g{i}"))
    return msgs


@settings(max_examples=400, deadline=None)
@given(_sequences(), st.integers(1, 12), st.integers(0, 8), st.integers(1, 5))
def test_window_never_splits_a_tool_pair(
    msgs: list[BaseMessage], cap: int, summarized: int, verbatim: int
) -> None:
    humans = sum(isinstance(m, HumanMessage) for m in msgs)
    res = trim_window(
        msgs,
        max_messages=cap,
        turn_count=humans,
        summarized_through=summarized,
        keep_verbatim_turns=verbatim,
    )
    assert tool_pairs_intact(res.kept, msgs)
    # kept + dropped partition the input, in order, and dropped is a prefix of the body
    assert sorted(map(id, res.kept + res.dropped)) == sorted(map(id, msgs))
    body = [m for m in msgs if not (isinstance(m, SystemMessage) and m.id == "sys")]
    assert body[: len(res.dropped)] == res.dropped
    if msgs:
        assert msgs[-1] in res.kept  # the current turn always stays
    groups = group_turns(body)
    if len(res.kept) > cap:  # only the current turn (plus pinned system) may exceed the cap
        assert len([g for g in groups if g[0] in res.kept]) <= 1
