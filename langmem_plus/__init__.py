"""langmem_plus: long-term memory for LangGraph and LangChain agents.

Hybrid BM25 (jieba) + FAISS recall over SQLite, under the spec's explainable weighted score;
fully offline by default.
"""

import importlib
from typing import TYPE_CHECKING, Any

from langmem_plus.agent.retriever import MemoryRetriever
from langmem_plus.config import MemoryConfig
from langmem_plus.embeddings import default_embeddings
from langmem_plus.errors import (
    EmbeddingModelMismatchError,
    InvalidQueryError,
    LangmemPlusError,
    MemoryNotFoundError,
    ValidationError,
)
from langmem_plus.model.records import (
    ConversationTurn,
    MemoryRecord,
    RollingSummary,
    SessionSummary,
    UserProfile,
)
from langmem_plus.store import HybridStore, MemorySearchItem

if TYPE_CHECKING:
    from langmem_plus.agent.middleware import MemoryMiddleware
    from langmem_plus.agent.nodes import (
        MemoryState,
        create_extract_node,
        create_recall_node,
        create_reconsolidate_node,
        create_summarize_node,
    )
    from langmem_plus.agent.tools import create_manage_memory_tool, create_search_memory_tool
    from langmem_plus.agent.working import WorkingMemory
    from langmem_plus.episodic.conversation_log import ConversationLog, InMemoryConversationLog
    from langmem_plus.memory import AsyncMemory, Memory

__version__ = "0.1.0"

# Agent-side names load on first use: `import langmem_plus` stays light for store-only users.
_LAZY = {
    "AsyncMemory": "langmem_plus.memory",
    "ConversationLog": "langmem_plus.episodic.conversation_log",
    "InMemoryConversationLog": "langmem_plus.episodic.conversation_log",
    "Memory": "langmem_plus.memory",
    "MemoryMiddleware": "langmem_plus.agent.middleware",
    "MemoryState": "langmem_plus.agent.nodes",
    "create_extract_node": "langmem_plus.agent.nodes",
    "create_reconsolidate_node": "langmem_plus.agent.nodes",
    "create_recall_node": "langmem_plus.agent.nodes",
    "create_summarize_node": "langmem_plus.agent.nodes",
    "create_manage_memory_tool": "langmem_plus.agent.tools",
    "create_search_memory_tool": "langmem_plus.agent.tools",
    "WorkingMemory": "langmem_plus.agent.working",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'langmem_plus' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# The product: the facade, the store, the retriever, the middleware, the nodes, the tools, the
# config, the errors (and the records and conversation log they take and return).
__all__ = [
    "AsyncMemory",
    "ConversationLog",
    "ConversationTurn",
    "EmbeddingModelMismatchError",
    "HybridStore",
    "InMemoryConversationLog",
    "InvalidQueryError",
    "LangmemPlusError",
    "Memory",
    "MemoryConfig",
    "MemoryMiddleware",
    "MemoryNotFoundError",
    "MemoryRecord",
    "MemoryRetriever",
    "MemorySearchItem",
    "MemoryState",
    "RollingSummary",
    "SessionSummary",
    "UserProfile",
    "ValidationError",
    "WorkingMemory",
    "create_extract_node",
    "create_manage_memory_tool",
    "create_recall_node",
    "create_reconsolidate_node",
    "create_search_memory_tool",
    "create_summarize_node",
    "default_embeddings",
]
