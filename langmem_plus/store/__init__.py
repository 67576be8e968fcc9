"""HybridStore: SQLite truth, BM25 + FAISS indexes derived from it."""

from langmem_plus.store.hybrid import HybridStore, MemorySearchItem

__all__ = ["HybridStore", "MemorySearchItem"]
