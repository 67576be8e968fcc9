"""One message→text helper for the whole memory layer (LangChain's `BaseMessage.text`)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langmem_plus.memory.checks import normalize_messages
from langmem_plus.model.messages import message_text, role_and_text

BLOCKS = [{"type": "text", "text": "a"}, "b", {"type": "image_url", "image_url": "x"}]


def test_a_message_reads_as_langchain_reads_it() -> None:
    msg = AIMessage(content=BLOCKS)
    assert message_text(msg) == str(msg.text) == "ab"
    assert message_text(HumanMessage(content="plain")) == "plain"


def test_raw_content_and_objects_read_the_same_way() -> None:
    assert message_text(BLOCKS) == "ab"
    assert message_text("text") == "text"
    assert message_text(SystemMessage(content=BLOCKS)) == "ab"


def test_memory_add_reads_content_blocks_with_the_same_helper() -> None:
    msgs = normalize_messages([{"role": "user", "content": BLOCKS}, HumanMessage(content=BLOCKS)])
    assert [m["text"] for m in msgs] == ["ab", "ab"]


def test_roles_and_text_for_the_conversation_log() -> None:
    call = AIMessage(content="", tool_calls=[{"name": "f", "args": {"x": 1}, "id": "c1"}])
    assert role_and_text(HumanMessage(content="hi")) == ("user", "hi")
    assert role_and_text(call) == ("tool", '[tool call] f({"x": 1})')
    assert role_and_text(ToolMessage(content="ok", tool_call_id="c1", name="f")) == (
        "tool",
        "[tool result f] ok",
    )
    assert role_and_text(AIMessage(content="")) is None
    assert role_and_text(SystemMessage(content="sys")) is None
