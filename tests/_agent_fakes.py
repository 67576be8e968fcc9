"""Scripted chat models for tests: GenericFakeChatModel that accepts bind_tools and
records every prompt it was sent (so tests can assert on the injected memory context), and
`Scripted`, which can also raise, for processors' retry and fallback paths."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field


class ScriptedChatModel(GenericFakeChatModel):
    """Replies from a script (AIMessages or strings, tool calls allowed); records prompts."""

    calls: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.calls.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    @property
    def system_prompts(self) -> list[str]:
        """The system message text of each call ('' when there was none)."""
        out = []
        for msgs in self.calls:
            sys = [m for m in msgs if isinstance(m, SystemMessage)]
            out.append(sys[0].text if sys else "")
        return out


class Scripted(BaseChatModel):
    """Answers (or raises) the scripted items in order, the last one for every call after;
    counts the calls and keeps every request's messages."""

    script: list[Any]
    calls: int = 0
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.seen.append(list(messages))
        item = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        if isinstance(item, BaseException):
            raise item
        msg = item if isinstance(item, AIMessage) else AIMessage(content=str(item))
        return ChatResult(generations=[ChatGeneration(message=msg)])


class ScriptedTools(Scripted):
    """Scripted model with tool calling, so `with_structured_output` goes through tools."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def scripted(replies: Sequence[AIMessage | str]) -> ScriptedChatModel:
    """A scripted model over `replies`."""
    it: Iterator[AIMessage | str] = iter(list(replies))
    return ScriptedChatModel(messages=it)


def tool_call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    """An AIMessage that calls one tool."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


class FakeClock:
    """A settable clock for expiry tests."""

    def __init__(self, start: Any = None) -> None:
        from datetime import datetime, timezone

        self.now = start or datetime(2026, 1, 3, 18, 0, tzinfo=timezone.utc)

    def __call__(self) -> Any:
        return self.now

    def advance(self, **kwargs: float) -> None:
        from datetime import timedelta

        self.now = self.now + timedelta(**kwargs)
