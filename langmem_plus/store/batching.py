"""Coalescing of concurrent async store calls into one batch, as LangGraph's async stores do.

LangGraph's `AsyncBatchedBaseStore` queues every `aget/asearch/aput` and runs what arrived in
the same event-loop tick as one `abatch`. `HybridStore` stays a plain `BaseStore` (its sync
methods run directly, with no event loop involved) and gets the same effect by routing each
`abatch` call through a `Coalescer`: calls made while a batch runs, or in the same tick, are
handed to the store together, so their texts are embedded in one model call and their SQLite
work runs in one transaction.

Order is kept: a store runs a batch's reads before its writes, so a call that reads starts a
new batch when the pending one already writes. Calls therefore see exactly what they would
have seen one by one, in the order they were made.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from langgraph.store.base import Op, PutOp, Result

__all__ = ["Coalescer", "GroupOutcome", "segments"]

GroupOutcome = list[Result] | BaseException
"""What one coalesced call gets back: its results, or the exception it raises."""

RunGroups = Callable[[list[list[Op]]], Awaitable[list[GroupOutcome]]]


def _writes(ops: Sequence[Op]) -> bool:
    return any(isinstance(op, PutOp) for op in ops)


def _reads(ops: Sequence[Op]) -> bool:
    return any(not isinstance(op, PutOp) for op in ops)


def segments(groups: Sequence[Sequence[Op]]) -> list[list[int]]:
    """Split calls (op lists, in arrival order) into runs that may share one batch.

    A run ends before a call that reads once the run writes, because a batch's reads see
    the store as it was before the batch's writes.
    """
    out: list[list[int]] = []
    writes = False
    for i, ops in enumerate(groups):
        if not out or (writes and _reads(ops)):
            out.append([])
            writes = False
        out[-1].append(i)
        writes = writes or _writes(ops)
    return out


@dataclass
class _LoopQueue:
    pending: list[tuple[list[Op], asyncio.Future[list[Result]]]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


class Coalescer:
    """Queues async batch calls per event loop and runs them together through `run`.

    `run` receives the op lists of the calls that share a batch and returns one outcome per
    call (its results, or the exception that call should raise).
    """

    def __init__(self, run: RunGroups) -> None:
        self._run = run
        self._lock = threading.Lock()
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopQueue] = (
            weakref.WeakKeyDictionary()
        )

    async def submit(self, ops: list[Op]) -> list[Result]:
        """Run `ops` in the next batch on this event loop; returns their results."""
        loop = asyncio.get_running_loop()
        with self._lock:
            queue = self._queues.get(loop)
            if queue is None:
                queue = self._queues[loop] = _LoopQueue()
        future: asyncio.Future[list[Result]] = loop.create_future()
        queue.pending.append((ops, future))
        if queue.task is None or queue.task.done():
            # the task's first step runs after the callbacks already scheduled in this
            # tick, so calls started together (e.g. by asyncio.gather) join one batch
            queue.task = loop.create_task(self._drain(queue))
        return await future

    async def _drain(self, queue: _LoopQueue) -> None:
        items: list[tuple[list[Op], asyncio.Future[list[Result]]]] = []
        try:
            while queue.pending:
                items, queue.pending = queue.pending, []
                items = [(ops, fut) for ops, fut in items if not fut.done()]
                for run in segments([ops for ops, _ in items]):
                    calls = [items[i] for i in run]
                    try:
                        outcomes = await self._run([ops for ops, _ in calls])
                    except asyncio.CancelledError:
                        raise
                    except Exception as exc:  # the whole batch failed: every call raises it
                        outcomes = [exc] * len(calls)
                    for (_ops, fut), outcome in zip(calls, outcomes, strict=True):
                        if fut.done():  # the caller was cancelled
                            continue
                        if isinstance(outcome, BaseException):
                            fut.set_exception(outcome)
                        else:
                            fut.set_result(outcome)
                items = []
        finally:  # cancelled (the loop is shutting down): no caller may wait forever
            for _ops, fut in [*items, *queue.pending]:
                if not fut.done():
                    fut.cancel()
