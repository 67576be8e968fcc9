"""Memory and AsyncMemory: the mem0-style facade over `HybridStore` (SPEC R-API).

A user's memories live in the namespace ``("memories", user_id)``; conversation turns and
rolling summaries are kept in the conversation log and indexed for recall under
``("conversations", user_id)``. `Memory` holds the logic (`_memory_core`); `AsyncMemory`
(`_memory_async`) runs the same methods in a worker thread. This module is the public door.
"""

from __future__ import annotations

from langmem_plus.memory.asynchronous import AsyncMemory
from langmem_plus.memory.core import Memory
from langmem_plus.memory.results import MAX_LIMIT, MemoryPage, SearchHit, TimeRangeArg, as_mem0

__all__ = [
    "MAX_LIMIT",
    "AsyncMemory",
    "Memory",
    "MemoryPage",
    "SearchHit",
    "TimeRangeArg",
    "as_mem0",
]
