"""MemoryMiddleware: long-term and working memory for `langchain.agents.create_agent`.

Before each new user turn it updates the working memory, bounds the message window, recalls
memories for the message and topic and assembles the context layers; the layers reach the
model through `request.override(system_message=...)`, never by editing stored messages. After
the agent's turn it writes the new messages to the conversation table and hands the
post-turn processors to a background worker (debounced per thread); `flush()` waits for it.
"""

from __future__ import annotations

import asyncio
import atexit
import warnings
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from typing_extensions import NotRequired

from langmem_plus.agent.engine import MemoryEngine, PostTurnJob, PostTurnWorker
from langmem_plus.agent.run_identity import resolve_user_id, thread_id_from_config
from langmem_plus.agent.worker import DEFAULT_CLOSE_TIMEOUT_S, CloseReport
from langmem_plus.agent.working import WorkingMemory
from langmem_plus.config import MemoryConfig
from langmem_plus.episodic.conversation_log import ConversationLog
from langmem_plus.errors import ValidationError
from langmem_plus.model.costs import CostCallback

__all__ = ["MemoryAgentState", "MemoryMiddleware", "inject_context"]


class MemoryAgentState(AgentState[Any]):
    """Agent state plus the working memory and the last injected memory context."""

    working_memory: NotRequired[dict[str, Any] | None]
    memory_context: NotRequired[dict[str, Any] | None]


def inject_context(system: SystemMessage | None, context_text: str) -> SystemMessage | None:
    """The system message with the memory context appended (a new message; none is edited)."""
    if not context_text:
        return system
    if system is None:
        return SystemMessage(content=context_text)
    content = system.content
    if isinstance(content, str):
        return SystemMessage(content=f"{content}\n\n{context_text}" if content else context_text)
    return SystemMessage(content=[*content, {"type": "text", "text": context_text}])


def _current_config() -> dict[str, Any]:
    try:
        return dict(get_config())
    except RuntimeError:  # outside a runnable context
        return {}


_live: weakref.WeakSet[MemoryMiddleware] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:  # pragma: no cover - interpreter shutdown
    for mw in list(_live):
        mw.flush(timeout=10)


class MemoryMiddleware(AgentMiddleware[MemoryAgentState, Any]):
    """Memory for `create_agent`: recall + layered context before the model, processing after.

    After each turn the exchange is kept verbatim as an episode (its message times as
    `occurred_at`), facts are derived from it with their sources — one model call with
    `model`, precision-first rules without — and facts it replaces are closed, never
    overwritten. `store` defaults to the store given to `create_agent(store=...)`; `model` drives the
    processors (a chat model or `init_chat_model` string; None = offline rules). The user is
    `context["user_id"]` or `config["configurable"]["user_id"]`; each user has its own
    namespace (`("memories", "{user_id}")` by default). `tools=True` adds the memory tools,
    ``recall_memories`` and ``edit_memory`` (rename them with
    ``tool_names={"search": ..., "manage": ...}``); two tools of one name in the agent raise
    `ValidationError` at the first model call. `background=False` runs the processors inline (deterministic, slower).
    `on_cost` receives a `TurnCost` (per-stage ms, model calls, tokens) for the recall and
    context before each new turn and for the post-turn steps after it (the latter from the
    background worker's thread); the same records are in `memory_context["cost"]` and
    `reports[i]["stage_costs"]`, and a HybridStore persists them for `stats --costs`.
    Turns, summaries and the profile go to the store's conversation log (a HybridStore's);
    with another store pass `conversation_log` (e.g. `InMemoryConversationLog()`), or the
    middleware warns once and recalls without logging turns or processing them.
    """

    state_schema = MemoryAgentState

    def __init__(
        self,
        store: BaseStore | None = None,
        model: Any = None,
        config: MemoryConfig | None = None,
        *,
        namespace: Sequence[str] = ("memories", "{user_id}"),
        default_user_id: str | None = None,
        background: bool = True,
        debounce_s: float = 1.0,
        summarize: bool = True,
        store_episodes: bool | None = None,
        reset_window_on_expiry: bool = True,
        show_scores: bool = False,
        tools: bool = False,
        tool_names: Mapping[str, str] | None = None,
        clock: Callable[[], datetime] | None = None,
        on_cost: CostCallback | None = None,
        conversation_log: ConversationLog | None = None,
    ) -> None:
        super().__init__()
        if store_episodes is not None:
            warnings.warn(
                "store_episodes has no effect: every exchange is kept as an episode now "
                "(it will be removed in the next release)",
                DeprecationWarning,
                stacklevel=2,
            )
        self.engine = MemoryEngine(
            store=store,
            model=model,
            config=config,
            namespace=namespace,
            clock=clock,
            summarize=summarize,
            reset_window_on_expiry=reset_window_on_expiry,
            show_scores=show_scores,
            on_cost=on_cost,
            conversation_log=conversation_log,
        )
        self.config = self.engine.config
        self.default_user_id = default_user_id
        self.background = background
        self.worker = PostTurnWorker(
            self.engine.process, debounce_s=debounce_s, max_pending=self.config.llm.queue_limit
        )
        self.tools: Sequence[BaseTool] = []
        names = dict(tool_names or {})
        if set(names) - {"search", "manage"}:
            raise ValidationError(f"tool_names takes 'search' and 'manage', got {sorted(names)!r}")
        if tools:
            from langmem_plus.agent.tools import (
                MANAGE_TOOL_NAME,
                SEARCH_TOOL_NAME,
                create_manage_memory_tool,
                create_search_memory_tool,
            )

            self.tools = [
                create_search_memory_tool(
                    store=store,
                    namespace=namespace,
                    config=self.config,
                    name=names.get("search", SEARCH_TOOL_NAME),
                ),
                create_manage_memory_tool(
                    store=store, namespace=namespace, name=names.get("manage", MANAGE_TOOL_NAME)
                ),
            ]
        elif names:
            raise ValidationError("tool_names needs tools=True")
        _live.add(self)

    # ------------------------------------------------------------------ helpers
    def _who(self, runtime: Runtime[Any]) -> tuple[BaseStore, str, dict[str, Any]]:
        cfg = _current_config()
        user_id = resolve_user_id(getattr(runtime, "context", None), cfg, self.default_user_id)
        store = self.engine.resolve_store(getattr(runtime, "store", None))
        return store, user_id, cfg

    def _dispatch(self, key: str, job: PostTurnJob) -> None:
        if self.background:
            self.worker.submit(key, job)
        else:
            self.engine.process(job)

    @property
    def reports(self) -> list[dict[str, Any]]:
        """Reports of the post-turn processing runs so far (newest last)."""
        return list(self.engine.reports)

    # ------------------------------------------------------------------ hooks
    def before_model(self, state: MemoryAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """On a new user turn: working memory, window, recall and context (state update)."""
        store, user_id, cfg = self._who(runtime)
        prep = self.engine.prepare(
            state["messages"], state.get("working_memory"), store=store, user_id=user_id
        )
        if prep.archive_job is not None:
            key = thread_id_from_config(cfg) or f"{user_id}:{prep.archive_job.session_id}"
            self._dispatch(key, prep.archive_job)
        return prep.update or None

    async def abefore_model(
        self, state: MemoryAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async twin of `before_model` (store work runs in a thread)."""
        return await asyncio.to_thread(self.before_model, state, runtime)

    def _request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        if self.tools:
            from langmem_plus.agent.tools import check_unique_tool_names

            check_unique_tool_names(list(request.tools or []), own=self.tools)
        ctx = request.state.get("memory_context") if request.state else None
        text = ctx.get("text") if isinstance(ctx, dict) else None
        if not text:
            return request
        return request.override(system_message=inject_context(request.system_message, text))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> Any:
        """Inject the assembled memory context into this model call's system message."""
        return handler(self._request(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> Any:
        """Async twin of `wrap_model_call`."""
        return await handler(self._request(request))

    def after_agent(self, state: MemoryAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Persist the turn's messages, then queue the post-turn processors (background)."""
        if WorkingMemory.from_state(state.get("working_memory")) is None:
            return None
        store, user_id, cfg = self._who(runtime)
        wm = WorkingMemory.owned_by(state.get("working_memory"), user_id)
        if wm is None:  # another user's: this run opened none of its own
            return None
        wm, _ = self.engine.persist(store, user_id, wm, state["messages"])
        job = self.engine.job_for(store, user_id, wm, state.get("memory_context"))
        self._dispatch(thread_id_from_config(cfg) or f"{user_id}:{wm.session_id}", job)
        return {"working_memory": wm.to_state()}

    async def aafter_agent(
        self, state: MemoryAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Async twin of `after_agent`."""
        return await asyncio.to_thread(self.after_agent, state, runtime)

    # ------------------------------------------------------------------ lifecycle
    def flush(self, timeout: float | None = None) -> bool:
        """Run all queued post-turn work now and wait for it (tests, shutdown)."""
        return self.worker.flush(timeout)

    async def aflush(self, timeout: float | None = None) -> bool:
        """Async twin of `flush`."""
        return await asyncio.to_thread(self.worker.flush, timeout)

    def close(self, timeout: float | None = DEFAULT_CLOSE_TIMEOUT_S) -> CloseReport:
        """Run the queued post-turn work for at most `timeout` seconds (default 30; None: until
        done), then stop the background worker. Returns in bounded time even when the model
        hangs; the `CloseReport` (true when nothing was left) names the jobs dropped before
        they started and those still running — their turns stay in the conversation log and
        are processed by the session's next job."""
        return self.worker.close(timeout)
