"""One small exception tree. Every error subclasses a builtin and says how to fix the problem."""

from __future__ import annotations

from langgraph.store.base import InvalidNamespaceError

__all__ = [
    "EmbeddingModelMismatchError",
    "InvalidNamespaceError",
    "InvalidQueryError",
    "LangmemPlusError",
    "MemoryNotFoundError",
    "MissingExtraError",
    "ReadOnlyStoreError",
    "StoreClosedError",
    "StoreInUseError",
    "ValidationError",
]


class LangmemPlusError(Exception):
    """Base class of every error raised on purpose by langmem_plus."""


class ValidationError(LangmemPlusError, ValueError):
    """Input rejected at a public boundary; nothing was written."""


class InvalidQueryError(ValidationError):
    """A search argument (limit, offset, filter, time range) is malformed."""


class MemoryNotFoundError(LangmemPlusError, KeyError):
    """No memory with that id exists in the caller's namespace."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else "memory not found"


class EmbeddingModelMismatchError(LangmemPlusError, ValueError):
    """The store's vectors were made by a different embedding model than the one configured."""


class StoreClosedError(LangmemPlusError, RuntimeError):
    """The store was closed; open a new one."""


class StoreInUseError(LangmemPlusError, RuntimeError):
    """Another process holds the database (a Milvus Lite file opens in one process at a time:
    close the other process's store, or run a Milvus server for several processes)."""


class ReadOnlyStoreError(LangmemPlusError, PermissionError):
    """The database was opened read-only (read-only media or no write permission)."""


class UnsupportedBackendError(LangmemPlusError, NotImplementedError):
    """The store's backend (e.g. Milvus) does not offer this operation."""


class MissingExtraError(LangmemPlusError, ImportError):
    """An optional dependency is missing; the message names the exact `pip install`."""

    @classmethod
    def for_extra(cls, extra: str, module: str) -> MissingExtraError:
        return cls(
            f"{module!r} is not installed. Install it with: pip install 'langmem-plus[{extra}]'"
        )
