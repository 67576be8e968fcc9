"""Chat messages as the memory layer reads them: one message→text helper, and a message's role
and text for the conversation log."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

__all__ = ["message_text", "role_and_text"]


def message_text(message: Any) -> str:
    """Plain text of a message: LangChain's `BaseMessage.text` (string content, or its text
    blocks joined; other blocks skipped); for anything else its `content` read the same way."""
    if isinstance(message, BaseMessage):
        return str(message.text)
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            block if isinstance(block, str) else block["text"]
            for block in content
            if isinstance(block, str)
            or (
                isinstance(block, Mapping)
                and block.get("type", "text") == "text"
                and isinstance(block.get("text"), str)
            )
        )
    return str(content)


def role_and_text(msg: BaseMessage) -> tuple[str, str] | None:
    """The conversation-log role and text of a message (tool calls and results summarised),
    or None for a message the log does not keep (system messages, empty replies)."""
    if isinstance(msg, HumanMessage):
        return "user", message_text(msg)
    if isinstance(msg, AIMessage):
        text = message_text(msg)
        if msg.tool_calls:
            calls = "; ".join(
                f"{tc.get('name')}({json.dumps(tc.get('args', {}), ensure_ascii=False)[:300]})"
                for tc in msg.tool_calls
            )
            if text.strip():
                return "assistant", text
            return "tool", f"[tool call] {calls}"
        return ("assistant", text) if text.strip() else None
    if isinstance(msg, ToolMessage):
        name = msg.name or "tool"
        return "tool", f"[tool result {name}] {message_text(msg)[:2000]}"
    return None
