"""Working memory (SPEC R-WM): per-session state kept in the graph state, expiry, and the window.

`WorkingMemory` is stored in the LangGraph state as a JSON-safe dict (so any checkpointer
persists it); it expires after `working_memory_ttl_minutes` of inactivity, and the caller
archives what matters first (`archive_record`). `trim_window` bounds the message window by
whole turns, so an AIMessage with tool calls never loses its ToolMessages.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel, ConfigDict, Field, field_validator

from langmem_plus.errors import ValidationError
from langmem_plus.model.messages import message_text
from langmem_plus.model.records import MemoryRecord, as_aware

__all__ = [
    "WindowResult",
    "WorkingMemory",
    "archive_record",
    "group_turns",
    "message_text",
    "tool_pairs_intact",
    "trim_window",
]

_MAX_CONTEXT_VARS = 32


class WorkingMemory(BaseModel):
    """The working memory of one session, kept in graph state under `working_memory`.

    `user_id` is whose it is: set by the run that opens it, and only that user's runs and
    REST calls see it (`owned_by`). `last_human_id` and `persisted_id` are bookkeeping: the
    last user message counted as a turn, and the last message already written to the
    conversation table.
    """

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    session_id: str = Field(default_factory=lambda: uuid.uuid4().hex, min_length=1)
    user_id: str | None = None
    current_topic: str | None = None
    context_variables: dict[str, str] = Field(default_factory=dict)
    turn_count: int = Field(0, ge=0)
    last_emotion: str | None = None
    created_at: datetime
    updated_at: datetime
    last_human_id: str | None = None
    persisted_id: str | None = None

    @field_validator("created_at", "updated_at", mode="before")
    @classmethod
    def _tz(cls, v: Any) -> Any:
        return as_aware(v)

    @classmethod
    def new(
        cls, now: datetime, session_id: str | None = None, user_id: str | None = None
    ) -> WorkingMemory:
        """A fresh working memory for a new session (turn_count 0 until the first message)."""
        now = as_aware(now)
        kwargs: dict[str, Any] = {"created_at": now, "updated_at": now, "user_id": user_id}
        if session_id:
            kwargs["session_id"] = session_id
        return cls(**kwargs)

    @classmethod
    def from_state(cls, value: Any) -> WorkingMemory | None:
        """Rebuild from the state value (dict, model or None); malformed values give None."""
        if value is None:
            return None
        if isinstance(value, WorkingMemory):
            return value
        if isinstance(value, Mapping):
            try:
                return cls.model_validate(dict(value))
            except Exception:
                return None
        return None

    @classmethod
    def owned_by(cls, value: Any, user_id: str) -> WorkingMemory | None:
        """The state's working memory as `user_id` may see it: None when it belongs to another
        user (a thread run for someone else), adopted (`user_id` set) when it names nobody."""
        wm = cls.from_state(value)
        if wm is None or wm.user_id == user_id:
            return wm
        if wm.user_id is not None:
            return None
        return wm.model_copy(update={"user_id": user_id})

    def to_state(self) -> dict[str, Any]:
        """JSON-safe dict for the graph state (checkpointers serialise it as is)."""
        return self.model_dump(mode="json")

    def is_expired(self, now: datetime, ttl_minutes: float) -> bool:
        """True when the session has been idle for longer than `ttl_minutes`."""
        return as_aware(now) - self.updated_at > timedelta(minutes=ttl_minutes)

    def record_turn(
        self,
        now: datetime,
        *,
        topic: str | None = None,
        context_variables: Mapping[str, Any] | None = None,
        emotion: str | None = None,
        human_id: str | None = None,
    ) -> WorkingMemory:
        """A copy updated for one new user turn: turn_count +1, updated_at, analysis fields."""
        merged = dict(self.context_variables)
        for k, v in (context_variables or {}).items():
            if v is None or str(v).strip() == "":
                continue
            merged[str(k)[:64]] = str(v)[:256]
        if len(merged) > _MAX_CONTEXT_VARS:  # keep the most recent keys
            merged = dict(list(merged.items())[-_MAX_CONTEXT_VARS:])
        return self.model_copy(
            update={
                "turn_count": self.turn_count + 1,
                "updated_at": max(as_aware(now), self.updated_at),
                "current_topic": (topic or "").strip() or self.current_topic,
                "context_variables": merged,
                "last_emotion": (emotion or "").strip() or self.last_emotion,
                "last_human_id": human_id if human_id is not None else self.last_human_id,
            }
        )


# ---------------------------------------------------------------------------- messages
def _tool_call_ids(message: BaseMessage) -> list[str]:
    if isinstance(message, AIMessage):
        return [str(tc.get("id")) for tc in message.tool_calls if tc.get("id")]
    return []


def group_turns(messages: Sequence[BaseMessage]) -> list[list[BaseMessage]]:
    """Split messages into turns: a turn starts at a user message, unless a tool call of the
    previous turn is still waiting for its result (then the message stays in that turn)."""
    groups: list[list[BaseMessage]] = []
    pending: set[str] = set()
    for msg in messages:
        if (isinstance(msg, HumanMessage) and not pending) or not groups:
            groups.append([msg])
            if not isinstance(msg, HumanMessage):
                pending.update(_tool_call_ids(msg))
            continue
        groups[-1].append(msg)
        pending.update(_tool_call_ids(msg))
        if isinstance(msg, ToolMessage):
            pending.discard(str(msg.tool_call_id))
    return groups


@dataclass(frozen=True)
class WindowResult:
    """Messages kept in the window and those that left it (oldest first)."""

    kept: list[BaseMessage]
    dropped: list[BaseMessage]


def trim_window(
    messages: Sequence[BaseMessage],
    *,
    max_messages: int,
    turn_count: int | None = None,
    summarized_through: int = 0,
    keep_verbatim_turns: int = 5,
) -> WindowResult:
    """Bound the message window by whole turns (oldest first), never splitting a tool pair.

    Turns numbered <= `summarized_through` (they live on as rolling summaries) leave while
    more than `keep_verbatim_turns` turns remain; then, past `max_messages`, the oldest turn
    leaves until the window fits. Leading system messages and the current turn always stay.
    """
    if max_messages < 1:
        raise ValidationError(f"max_messages must be >= 1, got {max_messages}")
    msgs = list(messages)
    n_pinned = 0
    while n_pinned < len(msgs) and isinstance(msgs[n_pinned], SystemMessage):
        n_pinned += 1
    pinned, body = msgs[:n_pinned], msgs[n_pinned:]
    groups = group_turns(body)
    numbers: list[int | None] = [None] * len(groups)
    if turn_count is not None:
        n = turn_count
        for i in range(len(groups) - 1, -1, -1):
            if isinstance(groups[i][0], HumanMessage):
                numbers[i] = n
                n -= 1
    start = 0
    if summarized_through > 0:
        while len(groups) - start > keep_verbatim_turns:
            num = numbers[start]
            if num is not None and num > summarized_through:
                break
            start += 1
    total = len(pinned) + sum(len(g) for g in groups[start:])
    while total > max_messages and len(groups) - start > 1:
        total -= len(groups[start])
        start += 1
    kept = pinned + [m for g in groups[start:] for m in g]
    dropped = [m for g in groups[:start] for m in g]
    return WindowResult(kept=kept, dropped=dropped)


def tool_pairs_intact(kept: Sequence[BaseMessage], original: Sequence[BaseMessage]) -> bool:
    """True when no tool call of `original` has its AIMessage and ToolMessage on different
    sides of the window (one kept, the other dropped)."""
    kept_ids = {id(m) for m in kept}
    owner: dict[str, bool] = {}
    for m in original:
        for tc in _tool_call_ids(m):
            owner.setdefault(tc, id(m) in kept_ids)
    for m in original:
        if (
            isinstance(m, ToolMessage)
            and str(m.tool_call_id) in owner
            and owner[str(m.tool_call_id)] != (id(m) in kept_ids)
        ):
            return False
    return True


# ---------------------------------------------------------------------------- archive
def archive_record(
    wm: WorkingMemory,
    turns: Sequence[Mapping[str, str]],
    *,
    summary: str | None = None,
    now: datetime | None = None,
    namespace: tuple[str, ...] = (),
) -> MemoryRecord | None:
    """The episodic memory that archives an expired session: its summary, topic and variables.

    Returns None when the session had nothing worth keeping (no user text and no variables).
    """
    user_text = [t.get("text", "") for t in turns if t.get("role") == "user" and t.get("text")]
    if not user_text and not wm.context_variables and not wm.current_topic:
        return None
    at = wm.created_at.astimezone(timezone.utc)
    text = (summary or "").strip()
    if not text:
        topic = wm.current_topic or "; ".join(s[:60] for s in user_text[:3])
        text = f"[{at:%Y-%m-%d %H:%M}] {topic}".strip()
    stamp = as_aware(now) if now is not None else datetime.now(timezone.utc)
    return MemoryRecord(
        namespace=namespace,
        kind="episodic",
        category="episode",
        text=text[:4000],
        session_id=wm.session_id,
        chat_id=wm.session_id,
        confidence=0.6,
        source="system",
        created_at=stamp,
        updated_at=stamp,
        tags=["working_memory_archive"],
        metadata={
            "time": at.isoformat(),
            "context": wm.current_topic or "",
            "thing": summary or "",
            "context_variables": dict(wm.context_variables),
            "last_emotion": wm.last_emotion,
            "turn_count": wm.turn_count,
            "source_chat_ids": [wm.session_id],
            "updates": [],
        },
    )
