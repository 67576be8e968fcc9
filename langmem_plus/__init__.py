"""langmem_plus: long-term memory for LangGraph and LangChain agents.

Hybrid BM25 (jieba) + FAISS recall over SQLite, under the spec's explainable weighted score;
fully offline by default.
"""

from langmem_plus.config import MemoryConfig
from langmem_plus.embeddings import default_embeddings
from langmem_plus.errors import (
    EmbeddingModelMismatchError,
    InvalidQueryError,
    LangmemPlusError,
    MemoryNotFoundError,
    ValidationError,
)
from langmem_plus.records import (
    ConversationTurn,
    MemoryRecord,
    RollingSummary,
    SessionSummary,
    UserProfile,
)
from langmem_plus.retriever import MemoryRetriever
from langmem_plus.store import HybridStore, MemorySearchItem

__version__ = "0.1.0"

__all__ = [
    "ConversationTurn",
    "EmbeddingModelMismatchError",
    "HybridStore",
    "InvalidQueryError",
    "LangmemPlusError",
    "MemoryConfig",
    "MemoryNotFoundError",
    "MemoryRecord",
    "MemoryRetriever",
    "MemorySearchItem",
    "RollingSummary",
    "SessionSummary",
    "UserProfile",
    "ValidationError",
    "default_embeddings",
]
