"""`AsyncMemory`: `Memory`'s methods as coroutines, each run in a worker thread.

Every method is a thin shell that forwards its parameters to the same `Memory` method, so the
logic exists once; tests/test_memory_async_parity.py fails when the two classes' public
methods or parameters differ.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal, TypeVar

from langchain_core.embeddings import Embeddings

from langmem_plus.config import MemoryConfig
from langmem_plus.episodic.conversation_log import ConversationLog
from langmem_plus.errors import ValidationError
from langmem_plus.memory.core import Memory
from langmem_plus.memory.results import AddResult, MemoryPage, SearchResults, TimeRangeArg
from langmem_plus.model.costs import CostCallback
from langmem_plus.model.records import ConversationTurn, MemoryRecord, UserProfile
from langmem_plus.store import HybridStore

__all__ = ["AsyncMemory"]

T = TypeVar("T")


class AsyncMemory:
    """Async twin of `Memory`: the same methods, run in a worker thread (the loop never blocks).

    `memory` wraps an existing `Memory`; otherwise one is built from the other arguments.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        store: HybridStore | None = None,
        model: Any = None,
        config: MemoryConfig | None = None,
        embeddings: Embeddings | Literal[False] | None = None,
        on_cost: CostCallback | None = None,
        conversation_log: ConversationLog | None = None,
        clock: Callable[[], float] | None = None,
        memory: Memory | None = None,
    ) -> None:
        if memory is not None and not isinstance(memory, Memory):
            raise ValidationError(f"memory must be a Memory, got {type(memory).__name__}")
        self.sync: Memory = memory or Memory(
            path,
            store=store,
            model=model,
            config=config,
            embeddings=embeddings,
            on_cost=on_cost,
            conversation_log=conversation_log,
            clock=clock,
        )

    @staticmethod
    async def _run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.to_thread(fn, *args, **kwargs)

    # ------------------------------------------------------------------ synchronous helpers
    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> AsyncMemory:
        """See `Memory.from_config`."""
        return cls(memory=Memory.from_config(config))

    @staticmethod
    def namespace(user_id: str) -> tuple[str, str]:
        """See `Memory.namespace`."""
        return Memory.namespace(user_id)

    def now(self) -> datetime:
        """See `Memory.now`."""
        return self.sync.now()

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ the Memory methods
    async def close(self) -> None:
        """See `Memory.close`."""
        await self._run(self.sync.close)

    async def add(
        self,
        messages: Any,
        user_id: str,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = True,
        timestamp: datetime | str | float | None = None,
        *,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> AddResult:
        """See `Memory.add`."""
        return await self._run(
            self.sync.add, messages, user_id, session_id, metadata, infer, timestamp,
            agent_id=agent_id, run_id=run_id,
        )  # fmt: skip

    async def search(
        self,
        query: str,
        user_id: str | None = None,
        limit: int = 5,
        filters: Mapping[str, Any] | None = None,
        time_range: TimeRangeArg = None,
        *,
        include_superseded: bool = False,
        as_of: datetime | str | float | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        threshold: float | None = None,
        top_k: int | None = None,
    ) -> SearchResults:
        """See `Memory.search`."""
        return await self._run(
            self.sync.search, query, user_id, limit, filters, time_range,
            include_superseded=include_superseded, as_of=as_of, agent_id=agent_id,
            run_id=run_id, threshold=threshold, top_k=top_k,
        )  # fmt: skip

    async def get(
        self, id: str | None = None, user_id: str | None = None, *, memory_id: str | None = None
    ) -> MemoryRecord:
        """See `Memory.get`."""
        return await self._run(self.sync.get, id, user_id, memory_id=memory_id)

    async def get_all(
        self,
        user_id: str | None = None,
        limit: int = 100,
        offset: int = 0,
        *,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        top_k: int | None = None,
    ) -> MemoryPage:
        """See `Memory.get_all`."""
        return await self._run(
            self.sync.get_all, user_id, limit, offset,
            agent_id=agent_id, run_id=run_id, filters=filters, top_k=top_k,
        )  # fmt: skip

    async def history(
        self, id: str | None = None, user_id: str | None = None, *, memory_id: str | None = None
    ) -> list[dict[str, Any]]:
        """See `Memory.history`."""
        return await self._run(self.sync.history, id, user_id, memory_id=memory_id)

    async def update(
        self,
        id: str | None = None,
        user_id: str | None = None,
        text: str | None = None,
        data: str | Mapping[str, Any] | None = None,
        *,
        memory_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> MemoryRecord:
        """See `Memory.update`."""
        return await self._run(
            self.sync.update, id, user_id, text, data, memory_id=memory_id, metadata=metadata
        )

    async def delete(
        self, id: str | None = None, user_id: str | None = None, *, memory_id: str | None = None
    ) -> dict[str, str]:
        """See `Memory.delete`."""
        return await self._run(self.sync.delete, id, user_id, memory_id=memory_id)

    async def delete_all(
        self,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, int]:
        """See `Memory.delete_all`."""
        return await self._run(self.sync.delete_all, user_id, agent_id, run_id)

    async def reset(
        self, user_id: str | None = None, *, keep_conversations: bool = False
    ) -> dict[str, int]:
        """See `Memory.reset`."""
        return await self._run(self.sync.reset, user_id, keep_conversations=keep_conversations)

    async def vacuum(self) -> int:
        """See `Memory.vacuum`."""
        return await self._run(self.sync.vacuum)

    async def users(self) -> list[str]:
        """See `Memory.users`."""
        return await self._run(self.sync.users)

    async def consolidate(
        self, user_id: str | None = None, *, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, Any]:
        """See `Memory.consolidate`."""
        return await self._run(self.sync.consolidate, user_id, progress=progress)

    async def stats(self) -> dict[str, Any]:
        """See `Memory.stats`."""
        return await self._run(self.sync.stats)

    async def get_profile(self, user_id: str) -> UserProfile:
        """See `Memory.get_profile`."""
        return await self._run(self.sync.get_profile, user_id)

    async def put_profile(self, user_id: str, **sections: str | None) -> UserProfile:
        """See `Memory.put_profile`."""
        return await self._run(self.sync.put_profile, user_id, **sections)

    async def add_turn(
        self,
        user_id: str,
        session_id: str,
        role: str,
        content: str,
        created_at: datetime | None = None,
    ) -> ConversationTurn:
        """See `Memory.add_turn`."""
        return await self._run(self.sync.add_turn, user_id, session_id, role, content, created_at)

    async def recall(
        self,
        query: str,
        user_id: str,
        limit: int = 5,
        session_id: str | None = None,
        time_range: TimeRangeArg = None,
    ) -> dict[str, Any]:
        """See `Memory.recall`."""
        return await self._run(self.sync.recall, query, user_id, limit, session_id, time_range)

    async def summarize(
        self,
        user_id: str,
        session_id: str,
        from_turn: int | None = None,
        to_turn: int | None = None,
    ) -> dict[str, Any]:
        """See `Memory.summarize`."""
        return await self._run(self.sync.summarize, user_id, session_id, from_turn, to_turn)

    async def cleanup(
        self,
        *,
        user_id: str | None = None,
        older_than: timedelta | float | None = None,
        session_id: str | None = None,
        everything: bool = False,
    ) -> dict[str, Any]:
        """See `Memory.cleanup`."""
        return await self._run(
            self.sync.cleanup, user_id=user_id, older_than=older_than,
            session_id=session_id, everything=everything,
        )  # fmt: skip

    async def export(
        self, user_id: str | None = None, format: Literal["json", "jsonl"] = "json"
    ) -> str:
        """See `Memory.export`."""
        return await self._run(self.sync.export, user_id, format)

    async def import_(
        self,
        data: str | bytes | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, int]:
        """See `Memory.import_`."""
        return await self._run(self.sync.import_, data, progress=progress)

    async def import_logs(
        self,
        directory: str | Path,
        user_id: str = "default",
        *,
        infer: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, int]:
        """See `Memory.import_logs`."""
        return await self._run(
            self.sync.import_logs, directory, user_id, infer=infer, progress=progress
        )
