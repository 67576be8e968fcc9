"""Graph nodes for custom `StateGraph`s: recall, extract, summarise, reconsolidate.

Each factory returns a runnable node (sync and async) usable on its own or chained; they
share `MemoryState` (messages + working memory + the assembled memory context) and find the
store and user the same way as the middleware (`store=` or `graph.compile(store=...)`;
`context["user_id"]` or `configurable.user_id`). The post-turn nodes run inline: put them
after the reply node, or use `MemoryMiddleware` for background processing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph import MessagesState
from langgraph.store.base import BaseStore
from typing_extensions import NotRequired

from langmem_plus.agent.engine import MemoryEngine
from langmem_plus.agent.middleware import inject_context
from langmem_plus.agent.run_identity import resolve_user_id
from langmem_plus.agent.working import WorkingMemory
from langmem_plus.config import MemoryConfig
from langmem_plus.episodic.conversation_log import ConversationLog
from langmem_plus.model.costs import CostCallback

__all__ = [
    "MemoryState",
    "create_extract_node",
    "create_recall_node",
    "create_reconsolidate_node",
    "create_summarize_node",
    "memory_messages",
]


class MemoryState(MessagesState):
    """Messages plus the working memory and the memory context assembled by the recall node."""

    working_memory: NotRequired[dict[str, Any] | None]
    memory_context: NotRequired[dict[str, Any] | None]


def memory_messages(state: Any, system_prompt: str | None = None) -> list[BaseMessage]:
    """The messages to send a model: a system message (prompt + memory context) + the window."""
    ctx = state.get("memory_context") if isinstance(state, dict) else None
    text = ctx.get("text", "") if isinstance(ctx, dict) else ""
    base = SystemMessage(content=system_prompt) if system_prompt else None
    system = inject_context(base, text)
    return ([system] if system is not None else []) + list(state.get("messages") or [])


class _NodeFactory:
    """Builds the engine and resolves store/user inside a running graph."""

    def __init__(
        self,
        store: BaseStore | None,
        model: Any,
        config: MemoryConfig | None,
        namespace: Sequence[str],
        clock: Callable[[], datetime] | None,
        default_user_id: str | None,
        summarize: bool = True,
        on_cost: CostCallback | None = None,
        conversation_log: ConversationLog | None = None,
    ) -> None:
        self.engine = MemoryEngine(
            store=store,
            model=model,
            config=config,
            namespace=namespace,
            clock=clock,
            summarize=summarize,
            on_cost=on_cost,
            conversation_log=conversation_log,
        )
        self.default_user_id = default_user_id

    def scope(self, config: RunnableConfig | None) -> tuple[BaseStore, str]:
        """The store and user id of the running graph (runtime context or config)."""
        from langgraph.config import get_store
        from langgraph.runtime import get_runtime

        context = None
        runtime_store = None
        try:
            runtime = get_runtime()
            context, runtime_store = runtime.context, runtime.store
        except RuntimeError:
            try:
                runtime_store = get_store()
            except RuntimeError:
                runtime_store = None
        user_id = resolve_user_id(context, dict(config or {}), self.default_user_id)
        return self.engine.resolve_store(runtime_store), user_id

    def working_memory(self, state: Any, user_id: str) -> WorkingMemory:
        """The state's working memory of `user_id`, or one made now (graphs without a recall
        node, or a thread whose working memory is another user's)."""
        wm = WorkingMemory.owned_by(state.get("working_memory"), user_id)
        if wm is not None:
            return wm
        msgs = list(state.get("messages") or [])
        humans = [m for m in msgs if isinstance(m, HumanMessage)]
        wm = WorkingMemory.new(self.engine.now(), user_id=user_id)
        return wm.model_copy(
            update={"turn_count": len(humans), "last_human_id": humans[-1].id if humans else None}
        )

    def post_node(self, steps: frozenset[str], name: str) -> RunnableLambda[Any, Any]:
        """A node that persists the new turns and runs the post-turn `steps` inline."""

        def run(state: Any, config: RunnableConfig) -> dict[str, Any]:
            store, user_id = self.scope(config)
            wm = self.working_memory(state, user_id)
            wm, _ = self.engine.persist(store, user_id, wm, list(state.get("messages") or []))
            job = self.engine.job_for(store, user_id, wm, state.get("memory_context"))
            self.engine.process(job, steps)
            return {"working_memory": wm.to_state()}

        return _runnable(run, name)


def _runnable(
    fn: Callable[[Any, RunnableConfig], dict[str, Any]], name: str
) -> RunnableLambda[Any, Any]:
    async def afn(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return await asyncio.to_thread(fn, state, config)

    return RunnableLambda(fn, afunc=afn, name=name)


def create_recall_node(
    store: BaseStore | None = None,
    *,
    namespace: Sequence[str] = ("memories", "{user_id}"),
    config: MemoryConfig | None = None,
    model: Any = None,
    summarize: bool = True,
    default_user_id: str | None = None,
    clock: Callable[[], datetime] | None = None,
    on_cost: CostCallback | None = None,
    conversation_log: ConversationLog | None = None,
) -> RunnableLambda[Any, Any]:
    """Node: working memory (expiry archived inline), bounded window, recall + context layers.

    Writes `working_memory` and `memory_context`; `memory_messages(state)` builds the prompt.
    `on_cost` receives each turn's `TurnCost` (per-stage ms, model calls, tokens).
    `conversation_log` is the conversation database when the store has none (any
    `ConversationLog`, e.g. `InMemoryConversationLog()` for an `InMemoryStore`).
    """
    factory = _NodeFactory(
        store, model, config, namespace, clock, default_user_id, summarize, on_cost,
        conversation_log,
    )  # fmt: skip

    def recall(state: Any, config: RunnableConfig) -> dict[str, Any]:
        store_, user_id = factory.scope(config)
        prep = factory.engine.prepare(
            list(state.get("messages") or []),
            state.get("working_memory"),
            store=store_,
            user_id=user_id,
        )
        if prep.archive_job is not None:
            factory.engine.process(prep.archive_job)
        return prep.update

    node = _runnable(recall, "memory_recall")
    node.engine = factory.engine  # type: ignore[attr-defined]
    return node


def _post_node(
    steps: frozenset[str],
    name: str,
    store: BaseStore | None,
    model: Any,
    config: MemoryConfig | None,
    namespace: Sequence[str],
    clock: Callable[[], datetime] | None,
    default_user_id: str | None,
    on_cost: CostCallback | None = None,
    conversation_log: ConversationLog | None = None,
) -> RunnableLambda[Any, Any]:
    """A post-turn node running `steps` (the shared body of the node factories below)."""
    factory = _NodeFactory(
        store, model, config, namespace, clock, default_user_id, True, on_cost, conversation_log
    )
    node = factory.post_node(steps, name)
    node.engine = factory.engine  # type: ignore[attr-defined]
    return node


def create_extract_node(
    store: BaseStore | None = None,
    *,
    namespace: Sequence[str] = ("memories", "{user_id}"),
    config: MemoryConfig | None = None,
    model: Any = None,
    default_user_id: str | None = None,
    clock: Callable[[], datetime] | None = None,
    on_cost: CostCallback | None = None,
    conversation_log: ConversationLog | None = None,
) -> RunnableLambda[Any, Any]:
    """Node: persist new turns, keep each exchange as an episode, derive its facts (closing the
    ones they replace), update the profile."""
    return _post_node(
        frozenset({"knowledge", "profile"}),
        "memory_extract",
        store,
        model,
        config,
        namespace,
        clock,
        default_user_id,
        on_cost,
        conversation_log,
    )


def create_summarize_node(
    store: BaseStore | None = None,
    *,
    namespace: Sequence[str] = ("memories", "{user_id}"),
    config: MemoryConfig | None = None,
    model: Any = None,
    default_user_id: str | None = None,
    clock: Callable[[], datetime] | None = None,
    on_cost: CostCallback | None = None,
    conversation_log: ConversationLog | None = None,
) -> RunnableLambda[Any, Any]:
    """Node: persist new turns, then rolling summaries (every 5 turns once 10 are reached)
    and the session title + snippet after the first reply."""
    return _post_node(
        frozenset({"rolling", "session"}),
        "memory_summarize",
        store,
        model,
        config,
        namespace,
        clock,
        default_user_id,
        on_cost,
        conversation_log,
    )


def create_reconsolidate_node(
    store: BaseStore | None = None,
    *,
    namespace: Sequence[str] = ("memories", "{user_id}"),
    config: MemoryConfig | None = None,
    model: Any = None,
    default_user_id: str | None = None,
    clock: Callable[[], datetime] | None = None,
    on_cost: CostCallback | None = None,
    conversation_log: ConversationLog | None = None,
) -> RunnableLambda[Any, Any]:
    """Node: rewrite the recalled episodic memories with the new exchange's context."""
    return _post_node(
        frozenset({"reconsolidate"}),
        "memory_reconsolidate",
        store,
        model,
        config,
        namespace,
        clock,
        default_user_id,
        on_cost,
        conversation_log,
    )
