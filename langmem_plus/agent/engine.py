"""The memory loop shared by `MemoryMiddleware` and the graph nodes: one place for the logic.

`MemoryEngine.prepare` runs before a model call (working memory, window, recall, context);
`persist` writes new messages to the conversation table; `process` (from `PostTurnSteps`)
runs the post-turn processors. `PostTurnWorker` runs `process` in a background thread,
debounced per thread, so the reply is never delayed. Store work is synchronous (SQLite);
async callers run it in a worker thread.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from langchain_core.messages import (
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
)
from langgraph.store.base import BaseStore

from langmem_plus.agent.context import (
    ContextLayers,
    build_context,
    mark_stale,
    stale_sessions,
)
from langmem_plus.agent.postturn import PostTurnJob, PostTurnSteps
from langmem_plus.agent.run_identity import namespace_for
from langmem_plus.agent.worker import PostTurnWorker
from langmem_plus.agent.working import WorkingMemory, trim_window
from langmem_plus.config import MemoryConfig
from langmem_plus.episodic.conversation_log import ConversationLog, check_log, log_of
from langmem_plus.episodic.episodes import current_only
from langmem_plus.episodic.symbol_recall import join_candidates, symbol_candidates
from langmem_plus.errors import ValidationError
from langmem_plus.memory.checks import message_time
from langmem_plus.model.costs import CostCallback, CostTimer, TurnCost, check_on_cost
from langmem_plus.model.messages import message_text, role_and_text
from langmem_plus.model.records import RollingSummary, SessionSummary
from langmem_plus.processors.processor_set import Processors
from langmem_plus.store.ranking.floor import above_floor, floor_for

__all__ = [
    "MemoryEngine",
    "PostTurnJob",
    "PostTurnWorker",
    "Prepared",
]

logger = logging.getLogger("langmem_plus.engine")

_QUERY_CHARS = 2000


def _now(clock: Callable[[], datetime] | None) -> datetime:
    now = clock() if clock is not None else datetime.now(timezone.utc)
    return now if now.tzinfo is not None else now.replace(tzinfo=timezone.utc)


@dataclass
class Prepared:
    """Result of `MemoryEngine.prepare`: the state update and what was recalled."""

    update: dict[str, Any]
    working_memory: WorkingMemory | None
    context: ContextLayers | None
    new_turn: bool
    archive_job: PostTurnJob | None = None
    cost: TurnCost | None = None


# ---------------------------------------------------------------------------- engine
@dataclass
class _OpenedTurn:
    """Where a new user turn starts: its working memory, the messages left, the messages to
    remove, an archive job for an expired session, and how many user turns are new."""

    wm: WorkingMemory
    msgs: list[BaseMessage]
    removals: list[BaseMessage]
    archive_job: PostTurnJob | None
    new_humans: int


class MemoryEngine(PostTurnSteps):
    """Recall before the model, persistence and post-turn processing after it."""

    def __init__(
        self,
        *,
        store: BaseStore | None = None,
        model: Any = None,
        config: MemoryConfig | None = None,
        namespace: Sequence[str] = ("memories", "{user_id}"),
        clock: Callable[[], datetime] | None = None,
        summarize: bool = True,
        reset_window_on_expiry: bool = True,
        show_scores: bool = False,
        on_cost: CostCallback | None = None,
        conversation_log: ConversationLog | None = None,
    ) -> None:
        if config is not None and not isinstance(config, MemoryConfig):
            raise ValidationError(f"config must be a MemoryConfig, got {type(config).__name__}")
        if store is not None and not isinstance(store, BaseStore):
            raise ValidationError(f"store must be a LangGraph BaseStore, got {type(store)!r}")
        ns = tuple(namespace)
        if not ns or not all(isinstance(p, str) and p for p in ns):
            raise ValidationError(f"namespace must be a non-empty tuple of strings, got {ns!r}")
        self.store = store
        self.config = config or MemoryConfig()
        self.namespace_template = ns
        self.clock = clock
        self.summarize = summarize
        self.reset_window_on_expiry = reset_window_on_expiry
        self.show_scores = show_scores
        self.model = model
        self._processors: Processors | None = None
        self._lock = threading.Lock()
        self.reports: deque[dict[str, Any]] = deque(maxlen=200)
        self.on_cost = check_on_cost(on_cost)
        self.conversation_log = None if conversation_log is None else check_log(conversation_log)
        self._warned_no_log = False
        if store is not None:
            self.log_for(store)  # warns now when post-turn processing cannot run

    @property
    def processors(self) -> Processors:
        """The processors of the engine's model, built on first use (once)."""
        with self._lock:
            if self._processors is None:
                self._processors = Processors.build(self.model, self.config)
            return self._processors

    def log_for(self, store: BaseStore) -> ConversationLog | None:
        """The conversation log to use with `store`: the injected one, else the store's own.

        Without either, the engine warns once: recall still runs, but turns are not logged
        and the post-turn processing (episodes, facts, summaries, profile) does not run.
        """
        log = self.conversation_log if self.conversation_log is not None else log_of(store)
        if log is None and not self._warned_no_log:
            self._warned_no_log = True
            warnings.warn(
                f"{type(store).__name__} keeps no conversation log: turns are not logged and "
                "post-turn processing is skipped; pass conversation_log= (for example "
                "InMemoryConversationLog()) or use a HybridStore",
                UserWarning,
                stacklevel=3,
            )
        return log

    # ------------------------------------------------------------------ helpers
    def now(self) -> datetime:
        """The engine's clock (injectable for tests)."""
        return _now(self.clock)

    def resolve_store(self, runtime_store: BaseStore | None) -> BaseStore:
        """The configured store, else the one the graph was compiled with."""
        store = self.store or runtime_store
        if store is None:
            raise ValidationError(
                "no store: pass store= to the middleware/node, or compile the graph with "
                "store=HybridStore(...) (create_agent(..., store=...))"
            )
        return store

    def namespace(self, user_id: str) -> tuple[str, ...]:
        """The memory namespace of a user."""
        return namespace_for(self.namespace_template, user_id)

    def analyze(self, text: str) -> tuple[str | None, dict[str, str], str | None]:
        """Topic, context variables and emotion of a user turn (TurnAnalyzer; rules offline)."""
        if not text.strip():
            return None, {}, None
        try:
            out = self.processors.analyzer.analyze(text)
        except Exception as exc:  # analysis is a hint; never block the turn
            logger.warning("turn analysis failed: %s", exc)
            return None, {}, None
        return (out.topic or None), dict(out.context_variables or {}), (out.emotion or None)

    # ------------------------------------------------------------------ persistence
    def persist(
        self,
        store: BaseStore,
        user_id: str,
        wm: WorkingMemory,
        messages: Sequence[BaseMessage],
        *,
        upto: int | None = None,
    ) -> tuple[WorkingMemory, int]:
        """Write messages after `wm.persisted_id` (up to index `upto`) to the conversation
        table; returns the working memory with the new marker and the number written."""
        msgs = list(messages)
        end = len(msgs) if upto is None else upto
        start = 0
        if wm.persisted_id is not None:
            for i, m in enumerate(msgs):
                if m.id == wm.persisted_id:
                    start = i + 1
                    break
        conv = self.log_for(store)
        written = 0
        last_id = wm.persisted_id
        for m in msgs[start:end]:
            if isinstance(m, SystemMessage):
                continue
            rt = role_and_text(m)
            if rt is not None and conv is not None:
                at = message_time(m) or self.now()
                conv.add_turn(user_id, wm.session_id, rt[0], rt[1], created_at=at)
                written += 1
            last_id = m.id
        return wm.model_copy(update={"persisted_id": last_id}), written

    # ------------------------------------------------------------------ before the model
    def prepare(
        self,
        messages: Sequence[BaseMessage],
        wm_value: Any,
        *,
        store: BaseStore,
        user_id: str,
    ) -> Prepared:
        """Before a model call: update working memory on a new user turn (expiry first), trim
        the window, recall and assemble the context layers, mark injected memories used."""
        msgs = list(messages)
        last_h = next(
            (i for i in range(len(msgs) - 1, -1, -1) if isinstance(msgs[i], HumanMessage)), None
        )
        wm = WorkingMemory.owned_by(wm_value, user_id)  # another user's is not this run's
        if last_h is None or (wm is not None and msgs[last_h].id == wm.last_human_id):
            return Prepared(update={}, working_memory=wm, context=None, new_turn=False)
        now = self.now()
        ns = self.namespace(user_id)
        opened = self._open_turn(msgs, wm, store=store, user_id=user_id, now=now)
        wm, msgs = opened.wm, opened.msgs
        last_human = next(m for m in reversed(msgs) if isinstance(m, HumanMessage))
        text = message_text(last_human)
        topic, variables, emotion = self.analyze(text)
        for _ in range(max(0, opened.new_humans - 1)):
            wm = wm.record_turn(now)
        wm = wm.record_turn(
            now, topic=topic, context_variables=variables, emotion=emotion, human_id=last_human.id
        )
        wm, dropped, rolling = self._fit_window(msgs, wm, store=store, user_id=user_id)
        removals = opened.removals + dropped
        update: dict[str, Any] = {}
        if removals:
            update["messages"] = [RemoveMessage(id=m.id) for m in removals if m.id]
        timer = CostTimer()
        layers = self.recall(store, user_id, ns, text, wm, rolling=rolling, timer=timer)
        cost = timer.finish(user_id=user_id, session_id=wm.session_id, phase="prepare", at=now)
        update["working_memory"] = wm.to_state()
        update["memory_context"] = {**layers.as_dict(), "cost": cost.as_dict()}
        self.record_cost(cost, store)
        return Prepared(update, wm, layers, True, opened.archive_job, cost)

    def _open_turn(
        self,
        msgs: list[BaseMessage],
        wm: WorkingMemory | None,
        *,
        store: BaseStore,
        user_id: str,
        now: datetime,
    ) -> _OpenedTurn:
        """The working memory a new user turn starts from: a fresh one for a new conversation
        or after expiry (the old session persisted and queued for archiving, its messages
        dropped from the window when `reset_window_on_expiry`), else the current one."""
        if wm is None:
            return _OpenedTurn(WorkingMemory.new(now, user_id=user_id), msgs, [], None, 1)
        if not wm.is_expired(now, self.config.window.working_memory_ttl_minutes):
            return _OpenedTurn(wm, msgs, [], None, self._count_new_humans(msgs, wm))
        # persist everything before the new turn, archive the old session, start afresh
        first_new = self._first_new_human(msgs, wm)
        wm, _ = self.persist(store, user_id, wm, msgs, upto=first_new)
        archive_job = self._job(store, user_id, wm, archive=wm)
        carry = wm.persisted_id
        removals: list[BaseMessage] = []
        if self.reset_window_on_expiry:
            removals = [m for m in msgs[:first_new] if not isinstance(m, SystemMessage)]
            gone = {id(m) for m in removals}
            msgs = [m for m in msgs if id(m) not in gone]
            carry = None
        fresh = WorkingMemory.new(now, user_id=user_id).model_copy(update={"persisted_id": carry})
        return _OpenedTurn(fresh, msgs, removals, archive_job, 1)

    def _fit_window(
        self, msgs: list[BaseMessage], wm: WorkingMemory, *, store: BaseStore, user_id: str
    ) -> tuple[WorkingMemory, list[BaseMessage], list[RollingSummary]]:
        """Trim the window: summarised turns leave (keeping the last few verbatim), then the
        cap; what leaves is persisted first. Returns the working memory, the dropped messages
        and the session's rolling summaries."""
        conv = self.log_for(store)
        summarized = 0
        rolling: list[RollingSummary] = []
        if conv is not None:
            rolling = conv.rolling_summaries(user_id, wm.session_id)
            if self.summarize and rolling:
                summarized = max(s.end_turn for s in rolling)
        window = trim_window(
            msgs,
            max_messages=self.config.window.max_turns,
            turn_count=wm.turn_count,
            summarized_through=summarized,
            keep_verbatim_turns=self.config.window.keep_verbatim_turns,
        )
        if not window.dropped:
            return wm, [], rolling
        idx = {m.id for m in window.dropped}
        cut = max(i for i, m in enumerate(msgs) if m.id in idx) + 1
        marker_dropped = wm.persisted_id in idx or wm.persisted_id is None
        wm, _ = self.persist(store, user_id, wm, msgs, upto=cut)
        if marker_dropped or wm.persisted_id in idx:
            wm = wm.model_copy(update={"persisted_id": None})
        return wm, list(window.dropped), rolling

    @staticmethod
    def _first_new_human(msgs: Sequence[BaseMessage], wm: WorkingMemory) -> int:
        start = 0
        if wm.last_human_id is not None:
            for i, m in enumerate(msgs):
                if m.id == wm.last_human_id:
                    start = i + 1
        for i in range(start, len(msgs)):
            if isinstance(msgs[i], HumanMessage):
                return i
        return len(msgs)

    @staticmethod
    def _count_new_humans(msgs: Sequence[BaseMessage], wm: WorkingMemory) -> int:
        idx = next((i for i, m in enumerate(msgs) if m.id == wm.last_human_id), None)
        if idx is None:
            return 1
        return max(1, sum(isinstance(m, HumanMessage) for m in msgs[idx + 1 :]))

    def recall(
        self,
        store: BaseStore,
        user_id: str,
        namespace: tuple[str, ...],
        query: str,
        wm: WorkingMemory,
        *,
        rolling: Sequence[RollingSummary] | None = None,
        mark_used: bool = True,
        timer: CostTimer | None = None,
    ) -> ContextLayers:
        """Search memories for `query` (boosting the current topic), load the other layers,
        assemble them, and mark the injected memories as used. With `timer`, the search is
        timed as stage ``recall`` and the rest as ``context``."""
        with _stage(timer, "recall"):
            hits = self._search(store, user_id, namespace, query, wm)
        with _stage(timer, "context"):
            return self._assemble(store, user_id, namespace, wm, hits, rolling, mark_used)

    def _search(
        self,
        store: BaseStore,
        user_id: str,
        namespace: tuple[str, ...],
        query: str,
        wm: WorkingMemory,
    ) -> list[Any]:
        cfg = self.config
        hits: list[Any] = []
        if cfg.context.memories and query.strip():
            q = query[:_QUERY_CHARS]
            limit = cfg.recall.retrieval_limit
            own = _keeps_validity(store)
            fetch = limit if own else limit * 2 + 10  # room for the superseded left out
            try:
                found = (
                    store.search(
                        namespace,
                        query=q,
                        limit=fetch,
                        current_topic=wm.current_topic,
                    )  # type: ignore[call-arg]
                    if own
                    else store.search(namespace, query=q, limit=fetch)
                )
                log = self.log_for(store)
                if cfg.score.profile == "coding" and log is not None:
                    extra = symbol_candidates(store, log, user_id, namespace, q, limit=fetch)
                    found = join_candidates(found, extra)
                if not own:  # another BaseStore: its search knows nothing of validity
                    found = current_only(found)
                hits = above_floor(found[:limit], floor_for(store, cfg.recall.min_relevance))
            except ValidationError:
                raise
            except Exception as exc:  # recall must never break the conversation
                logger.warning("memory recall failed: %s", exc)
        return hits

    def _assemble(
        self,
        store: BaseStore,
        user_id: str,
        namespace: tuple[str, ...],
        wm: WorkingMemory,
        hits: list[Any],
        rolling: Sequence[RollingSummary] | None,
        mark_used: bool,
    ) -> ContextLayers:
        cfg = self.config
        conv = self.log_for(store)
        profile = None
        sessions: list[SessionSummary] = []
        if conv is not None:
            if cfg.context.profile:
                profile = conv.get_profile(user_id)
            if rolling is None and cfg.context.rolling_summary:
                rolling = conv.rolling_summaries(user_id, wm.session_id)
            if cfg.context.session_summaries and cfg.context.recent_sessions:
                sessions = conv.session_summaries(
                    user_id, limit=cfg.context.recent_sessions, exclude_session=wm.session_id
                )
        sessions, replaced = stale_sessions(store, namespace, sessions)
        layers = build_context(
            config=cfg,
            profile=profile,
            rolling_summaries=list(rolling or []) if self.summarize else [],
            memories=mark_stale(store, hits),
            sessions=sessions,
            show_scores=self.show_scores,
            stale_sessions=replaced,
        )
        if mark_used and layers.memories and hasattr(store, "mark_used"):
            try:
                store.mark_used(namespace, layers.memory_keys)
            except Exception as exc:
                logger.warning("mark_used failed: %s", exc)
        return layers

    # ------------------------------------------------------------------ after the turn
    def job_for(
        self, store: BaseStore, user_id: str, wm: WorkingMemory, memory_context: Any
    ) -> PostTurnJob:
        """The post-turn job of the current turn (recalled memories taken from the context)."""
        recalled: dict[str, str] = {}
        if isinstance(memory_context, Mapping):
            for m in memory_context.get("memories") or []:
                if isinstance(m, Mapping) and m.get("key"):
                    recalled[str(m["key"])] = str(m.get("text", ""))
        return self._job(store, user_id, wm, recalled=recalled)

    def _job(self, store: BaseStore, user_id: str, wm: WorkingMemory, **extra: Any) -> PostTurnJob:
        """A post-turn job for the user's session in `wm` (`archive=` or `recalled=`)."""
        return PostTurnJob(
            store=store,
            user_id=user_id,
            namespace=self.namespace(user_id),
            session_id=wm.session_id,
            turn_count=wm.turn_count,
            log=self.log_for(store),
            **extra,
        )


def _stage(timer: CostTimer | None, name: str) -> AbstractContextManager[Any]:
    return timer.stage(name) if timer is not None else nullcontext()


def _keeps_validity(store: BaseStore) -> bool:
    """Whether `store` leaves superseded facts out itself and takes `current_topic`
    (HybridStore); another BaseStore's hits are filtered here."""
    from langmem_plus.store import HybridStore

    return isinstance(store, HybridStore)
