"""Memory tools for the model (active recall): search with keywords and a time range, and
edit (create / update / delete). Namespaced per user from the runtime context/config.

Their default names, `recall_memories` and `edit_memory`, are our own: LangMem's tools are
called `search_memory` and `manage_memory`, and one agent may use both sets. Every factory
takes `name=`; `check_unique_tool_names` refuses two tools of one name in one agent.

Everything stored that a tool shows the model (memory text, category, id, conversation turns,
session titles) is quoted with `langmem_plus.model.quoting.quote_data` inside one
``<memory_search_results>`` block, exactly like the injected memory context.

Natural time phrases (昨天, 上次, last week, 2026-01-03) in the query or in `time_range` are
resolved against now; 上次 / last time means the user's previous session.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, tool
from langgraph.config import get_config
from langgraph.store.base import BaseStore

from langmem_plus.agent.run_identity import namespace_for, resolve_user_id
from langmem_plus.agent.tool_results import RESULTS_TAG, format_hits, render_results
from langmem_plus.agent.working import WorkingMemory
from langmem_plus.config import MemoryConfig
from langmem_plus.episodic.conversation_log import log_of
from langmem_plus.episodic.validity import newer_statement, replacement
from langmem_plus.errors import ValidationError
from langmem_plus.model.records import MemoryRecord
from langmem_plus.text.timeparse import (
    PREVIOUS_SESSION,
    parse_time_range,
    strip_time_reference,
)
from langmem_plus.text.tokenize import tokenize

__all__ = [
    "MANAGE_TOOL_NAME",
    "RESULTS_TAG",
    "SEARCH_TOOL_NAME",
    "check_tool_name",
    "check_unique_tool_names",
    "create_manage_memory_tool",
    "create_search_memory_tool",
    "resolve_time_range",
]

SEARCH_TOOL_NAME = "recall_memories"
MANAGE_TOOL_NAME = "edit_memory"
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")

_RANGE_SPLIT = re.compile(r"\s*(?:\.\.|~|～|至|到|\bto\b|–|—)\s*")
TimeRange = tuple[datetime, datetime]


def check_tool_name(name: Any) -> str:
    """`name` if chat model APIs accept it as a tool name (1-64 of A-Z a-z 0-9 _ -)."""
    if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
        raise ValidationError(
            f"tool name must be 1-64 characters of letters, digits, '_' or '-', got {name!r}"
        )
    return name


def _tool_name(t: Any) -> str | None:
    if isinstance(t, dict):
        fn = t.get("function")
        return str(fn.get("name")) if isinstance(fn, dict) else t.get("name")
    return getattr(t, "name", None)


def check_unique_tool_names(tools: Sequence[Any], own: Sequence[BaseTool] = ()) -> None:
    """Refuse two tools of one name: a tool node keeps only one of them, silently.

    `tools` are the tools an agent offers the model; `own` are tools that must be among them
    as themselves (an agent's tool node keeps the last tool of a name, so another tool of
    the same name shows up in their place)."""
    seen: set[str] = set()
    dupes: list[str] = []
    for t in tools:
        name = _tool_name(t)
        if name is None:
            continue
        if name in seen and name not in dupes:
            dupes.append(name)
        seen.add(name)
    by_name = {_tool_name(t): t for t in tools}
    for mine in own:
        other = by_name.get(mine.name)
        if other is not None and other is not mine and mine.name not in dupes:
            dupes.append(mine.name)
    if dupes:
        raise ValidationError(
            f"two tools share the name(s) {dupes}: the agent would call only one of them. "
            "Rename one, e.g. MemoryMiddleware(tools=True, tool_names={'search': ..., "
            "'manage': ...}) or create_search_memory_tool(name=...)"
        )


def _now(clock: Callable[[], datetime] | None) -> datetime:
    now = clock() if clock is not None else datetime.now(timezone.utc)
    return now if now.tzinfo else now.replace(tzinfo=timezone.utc)


def _previous_session(
    store: BaseStore, user_id: str, current: str | None, slack_minutes: float, now: datetime
) -> TimeRange | None:
    """Span of the newest session that is not the current one (unknown current: a session
    active within the last `slack_minutes` counts as current)."""
    conv = log_of(store)
    if conv is None:
        return None
    live = now - timedelta(minutes=slack_minutes)
    for s in conv.sessions(user_id):  # newest first
        if s["session_id"] == current or (current is None and s["last_active"] >= live):
            continue
        return s["created_at"], s["last_active"] + timedelta(minutes=slack_minutes)
    return None


def resolve_time_range(
    text: str | None,
    *,
    now: datetime,
    store: BaseStore | None = None,
    user_id: str | None = None,
    current_session: str | None = None,
    slack_minutes: float = 30.0,
) -> TimeRange | None:
    """A (start, end) for a phrase (昨天 / last week / 上次 / 2026-01-03 / 'A..B'), or None."""
    if not text or not text.strip():
        return None
    parts = _RANGE_SPLIT.split(text.strip())
    if len(parts) == 2 and all(parts):
        a, b = parse_time_range(parts[0], now), parse_time_range(parts[1], now)
        if isinstance(a, tuple) and isinstance(b, tuple):
            return (a[0], b[1]) if a[0] <= b[1] else (b[0], a[1])
    found = parse_time_range(text, now)
    if found is PREVIOUS_SESSION:
        if store is None or user_id is None:
            return None
        return _previous_session(store, user_id, current_session, slack_minutes, now)
    return found if isinstance(found, tuple) else None


class _Scope:
    """Where a tool call acts: the store, the user, the namespace, the current session."""

    def __init__(
        self,
        store: BaseStore | None,
        template: Sequence[str],
        default_user_id: str | None,
        runtime: ToolRuntime | None,
    ) -> None:
        ctx = getattr(runtime, "context", None) if runtime is not None else None
        cfg: dict[str, Any] = dict(getattr(runtime, "config", None) or {})
        if not cfg:
            try:
                cfg = dict(get_config())
            except RuntimeError:
                cfg = {}
        self.user_id = resolve_user_id(ctx, cfg, default_user_id)
        resolved = store or (getattr(runtime, "store", None) if runtime is not None else None)
        if resolved is None:
            try:
                from langgraph.config import get_store

                resolved = get_store()
            except RuntimeError:
                resolved = None
        if resolved is None:
            raise ValidationError("no store: pass store= to the tool factory or compile with one")
        self.store: BaseStore = resolved
        self.namespace = namespace_for(template, self.user_id)
        state = getattr(runtime, "state", None) if runtime is not None else None
        wm = (
            WorkingMemory.owned_by(state.get("working_memory"), self.user_id)
            if isinstance(state, dict)
            else None
        )
        self.session_id = wm.session_id if wm is not None else None


def _matching_turns(scope: _Scope, query: str, tr: TimeRange, k: int = 3) -> list[dict[str, Any]]:
    """User turns of the sessions inside `tr` that share words with `query` (best first)."""
    conv = log_of(scope.store)
    words = set(tokenize(query))
    if conv is None or not words:
        return []
    scored: list[tuple[int, int, Any]] = []
    sessions = [
        s
        for s in conv.sessions(scope.user_id)
        if s["created_at"] < tr[1]
        and s["last_active"] >= tr[0]
        and s["session_id"] != scope.session_id
    ][:5]
    for s in sessions:
        for t in conv.turns(scope.user_id, s["session_id"]):
            if t.role != "user" or not tr[0] <= t.created_at < tr[1]:
                continue
            overlap = len(words & set(tokenize(t.content)))
            if overlap:
                scored.append((overlap, t.id or 0, t))
    scored.sort(key=lambda x: (-x[0], -x[1]))
    return [
        {
            "session_id": t.session_id,
            "role": t.role,
            "content": t.content[:300],
            "created_at": t.created_at.isoformat(),
        }
        for _, _, t in scored[:k]
    ]


def _query_and_range(
    scope: _Scope, cfg: MemoryConfig, now: datetime, query: str, time_range: str | None
) -> tuple[str, TimeRange | None]:
    """The search words and the time range: `time_range` if given, else a time phrase found
    in the query (taken out of the words)."""
    words, found = strip_time_reference(query or "", now)
    phrase = time_range or (found.phrase if found else None)
    tr = resolve_time_range(
        phrase,
        now=now,
        store=scope.store,
        user_id=scope.user_id,
        current_session=scope.session_id,
        slack_minutes=cfg.window.working_memory_ttl_minutes,
    )
    q = (words if found and not time_range else query or "").strip()
    return q, tr


def _search_store(scope: _Scope, q: str, tr: TimeRange | None, k: int) -> list[Any]:
    """Up to `k` hits for `q` inside `tr`; a BaseStore without `time_range` is filtered after."""
    kwargs: dict[str, Any] = {"limit": k}
    if q:
        kwargs["query"] = q
    if tr is not None:
        kwargs["time_range"] = tr
    try:
        return list(scope.store.search(scope.namespace, **kwargs))
    except TypeError:  # a BaseStore without time_range: filter afterwards
        kwargs.pop("time_range", None)
        return [
            h
            for h in scope.store.search(scope.namespace, **{**kwargs, "limit": k * 5})
            if tr is None or tr[0] <= h.created_at < tr[1]
        ][:k]


def _sessions_in(scope: _Scope, tr: TimeRange | None) -> list[dict[str, Any]]:
    """Summaries of the user's other sessions that began inside `tr`."""
    conv = log_of(scope.store)
    if tr is None or conv is None:
        return []
    return [
        {
            "session_id": s.session_id,
            "title": s.title,
            "snippet": s.snippet,
            "created_at": s.created_at.isoformat(),
        }
        for s in conv.session_summaries(scope.user_id, limit=50)
        if tr[0] <= s.created_at < tr[1] and s.session_id != scope.session_id
    ]


def _search(
    scope: _Scope, cfg: MemoryConfig, now: datetime, query: str, time_range: str | None,
    limit: int | None,
) -> tuple[str, dict[str, Any]]:  # fmt: skip
    """The search tool's answer: text for the model and the artifact for code."""
    k = cfg.recall.retrieval_limit if limit is None else max(1, min(int(limit), 50))
    q, tr = _query_and_range(scope, cfg, now, query, time_range)
    hit_lines, items = format_hits(
        _search_store(scope, q, tr, k),
        lambda it: replacement(scope.store, tuple(it.namespace), it.value),
        lambda it: newer_statement(scope.store, tuple(it.namespace), it.value, it.key),
    )
    sessions = _sessions_in(scope, tr)
    turns = _matching_turns(scope, q, tr) if tr is not None else []
    text = render_results(hit_lines, turns, sessions)
    rng = None if tr is None else [tr[0].isoformat(), tr[1].isoformat()]
    return text, {
        "memories": items,
        "sessions": sessions,
        "turns": turns,
        "time_range": rng,
        "query": q,
    }


def create_search_memory_tool(
    store: BaseStore | None = None,
    *,
    namespace: Sequence[str] = ("memories", "{user_id}"),
    config: MemoryConfig | None = None,
    default_user_id: str | None = None,
    clock: Callable[[], datetime] | None = None,
    name: str = SEARCH_TOOL_NAME,
) -> BaseTool:
    """A tool (named `name`, ``recall_memories`` by default) that searches the user's memories
    by keywords and an optional time range.

    Returns text for the model (each memory's kind, category, date, text and id) and, as
    artifact for code, each hit with its score and score components.
    """
    check_tool_name(name)
    cfg = config or MemoryConfig()
    template = tuple(namespace)

    def _run(
        query: str, time_range: str | None, limit: int | None, runtime: ToolRuntime | None
    ) -> tuple[str, dict[str, Any]]:
        scope = _Scope(store, template, default_user_id, runtime)
        return _search(scope, cfg, _now(clock), query, time_range, limit)

    @tool(name, response_format="content_and_artifact")
    def search_memory(
        query: str,
        time_range: str | None = None,
        limit: int | None = None,
        runtime: ToolRuntime = None,  # type: ignore[assignment]
    ) -> tuple[str, dict[str, Any]]:
        """Search the user's long-term memories.

        Args:
            query: keywords to look for (a time phrase like 昨天 / last week may be included).
            time_range: optional time phrase or range: 昨天, 上次, last week, 2026-01-03,
                or '2026-01-01..2026-01-05'.
            limit: how many memories to return (default from config).
        """
        return _run(query, time_range, limit, runtime)

    async def _asearch(
        query: str,
        time_range: str | None = None,
        limit: int | None = None,
        runtime: ToolRuntime = None,  # type: ignore[assignment]
    ) -> tuple[str, dict[str, Any]]:
        return await asyncio.to_thread(_run, query, time_range, limit, runtime)

    search_memory.coroutine = _asearch  # type: ignore[attr-defined]
    return search_memory


def _manage(scope: _Scope, action: str, content: str | None, id: str | None, category: str) -> str:
    """Carry out one edit of the manage tool; a message for the model either way."""
    if action == "create":
        if not content or not content.strip():
            return "Error: 'create' needs content."
        rec = MemoryRecord(
            text=content.strip(),
            category=category,  # type: ignore[arg-type]
            source="user_stated",
            session_id=scope.session_id,
            chat_id=scope.session_id,
        )
        scope.store.put(scope.namespace, rec.id, rec.to_value())
        return f"created memory {rec.id}"
    if not id:
        return f"Error: '{action}' needs the memory id."
    item = scope.store.get(scope.namespace, id)
    if item is None:
        return f"Error: no memory with id {id!r} for this user."
    if action == "delete":
        scope.store.delete(scope.namespace, id)
        return f"deleted memory {id}"
    if not content or not content.strip():
        return "Error: 'update' needs content."
    rec = MemoryRecord.from_item(item)
    rec = rec.model_copy(update={"text": content.strip(), "updated_at": datetime.now(timezone.utc)})
    updates = list(rec.metadata.get("updates") or [])
    updates.append({"at": rec.updated_at.isoformat(), "by": "tool", "text": content.strip()})
    rec.metadata = {**rec.metadata, "updates": updates}
    scope.store.put(scope.namespace, id, rec.to_value())
    return f"updated memory {id}"


def create_manage_memory_tool(
    store: BaseStore | None = None,
    *,
    namespace: Sequence[str] = ("memories", "{user_id}"),
    default_user_id: str | None = None,
    name: str = MANAGE_TOOL_NAME,
) -> BaseTool:
    """A tool (named `name`, ``edit_memory`` by default) that creates, updates or deletes one
    memory of the current user."""
    check_tool_name(name)
    template = tuple(namespace)

    def _run(
        action: str,
        content: str | None,
        id: str | None,
        category: str,
        runtime: ToolRuntime | None,
    ) -> str:
        return _manage(
            _Scope(store, template, default_user_id, runtime), action, content, id, category
        )

    @tool(name)
    def manage_memory(
        action: Literal["create", "update", "delete"],
        content: str | None = None,
        id: str | None = None,
        category: Literal["preference", "fact", "pattern", "episode"] = "fact",
        runtime: ToolRuntime = None,  # type: ignore[assignment]
    ) -> str:
        """Create, update or delete a memory about the user.

        Args:
            action: 'create' a new memory, 'update' one (needs id), or 'delete' one (needs id).
            content: the memory text for create/update, one short statement.
            id: the memory id (from the memory search results) for update/delete.
            category: preference, fact, pattern or episode.
        """
        return _run(action, content, id, category, runtime)

    async def _amanage(
        action: Literal["create", "update", "delete"],
        content: str | None = None,
        id: str | None = None,
        category: Literal["preference", "fact", "pattern", "episode"] = "fact",
        runtime: ToolRuntime = None,  # type: ignore[assignment]
    ) -> str:
        return await asyncio.to_thread(_run, action, content, id, category, runtime)

    manage_memory.coroutine = _amanage  # type: ignore[attr-defined]
    return manage_memory
