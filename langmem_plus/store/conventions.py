"""LangGraph store conventions that one `HybridStore` serves to sync and async callers alike.

LangGraph splits its SQLite store in two classes: `SqliteStore` (sync `setup()`,
`sweep_ttl()`, ...) and `AsyncSqliteStore` (the same names, awaited). `HybridStore` is one
class for both, so these methods return values that are usable as they are *and* awaitable:
`store.sweep_ttl()` is an `int`, and `await store.sweep_ttl()` gives the same `int`. The work
is done when the method is called; awaiting only hands the result over (the `a`-prefixed
twins, e.g. `asweep_ttl`, run the work in a worker thread instead).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

from langmem_plus.errors import ValidationError

__all__ = [
    "INDEX_KEYS",
    "AwaitableBool",
    "AwaitableInt",
    "SetupDone",
    "StoreOpener",
    "SweeperFuture",
    "index_config",
]

INDEX_KEYS = ("dims", "embed", "fields", "text_fields", "distance_type")
"""The `IndexConfig` keys HybridStore honours (`text_fields` is SqliteStore's spelling of
`fields`; `distance_type` only as ``"cosine"``, what HybridStore computes). Any other key, or
another distance, is refused: a setting HybridStore cannot honour is never ignored."""


def _value(v: Any) -> Generator[Any, None, Any]:
    """A generator that finishes at once with `v`: the body of an already-done awaitable."""
    return v
    yield  # pragma: no cover - makes this function a generator


class AwaitableInt(int):
    """An `int` that can also be awaited (gives itself as a plain `int`)."""

    def __await__(self) -> Generator[Any, None, int]:
        return _value(int(self))


class AwaitableBool(int):
    """A truth value (0 or 1, compares equal to False/True) that can also be awaited."""

    def __new__(cls, value: bool) -> AwaitableBool:
        return super().__new__(cls, 1 if value else 0)

    def __repr__(self) -> str:
        return repr(bool(self))

    def __await__(self) -> Generator[Any, None, bool]:
        return _value(bool(self))


class SetupDone:
    """What `setup()` returns: nothing to use, but awaitable like `AsyncSqliteStore.setup()`."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return _value(None)

    def __repr__(self) -> str:
        return "SetupDone()"


class SweeperFuture(concurrent.futures.Future[None]):
    """Done when the TTL sweeper stops; `cancel()` stops it (as `SqliteStore`'s future does).

    Awaiting it gives the future itself at once, as `await AsyncSqliteStore.start_ttl_sweeper()`
    gives the sweeper's task; `asyncio.wrap_future(fut)` waits for the sweeper to end.
    """

    def __await__(self) -> Generator[Any, None, SweeperFuture]:
        return _value(self)


def index_config(index: Any) -> Any:
    """LangGraph's `IndexConfig` as HybridStore reads it: `text_fields` (SqliteStore's
    spelling) becomes `fields`, ``distance_type="cosine"`` is accepted (the only distance it
    computes), and keys or values HybridStore cannot honour raise `ValidationError`."""
    if not isinstance(index, Mapping):
        return index  # None, False or a wrong type: `validate.check_init` reports it
    unknown = sorted(str(k) for k in index if k not in INDEX_KEYS)
    if unknown:
        raise ValidationError(
            f"HybridStore does not support the index key(s) {unknown}; it reads "
            f"{list(INDEX_KEYS)} (text_fields is SqliteStore's name for fields). Remove "
            "them rather than have them ignored."
        )
    cfg = dict(index)
    distance = cfg.pop("distance_type", "cosine")
    if distance != "cosine":
        raise ValidationError(
            f"HybridStore compares vectors by cosine only; distance_type {distance!r:.40} "
            "cannot be honoured (give 'cosine' or leave it out)"
        )
    if "text_fields" in cfg:
        text_fields = cfg.pop("text_fields")
        if isinstance(text_fields, str):
            text_fields = [text_fields]
        if cfg.get("fields") is not None and cfg["fields"] != text_fields:
            raise ValidationError(
                f"index fields {cfg['fields']!r:.80} and text_fields {text_fields!r:.80} "
                "disagree; give one of them"
            )
        cfg["fields"] = text_fields
    return cfg


def store_path(conn_string: Any) -> str | Path | None:
    """A `from_conn_string` argument as a `HybridStore` path (`":memory:"` is in memory)."""
    if isinstance(conn_string, Path):
        return conn_string
    if not isinstance(conn_string, str):
        raise ValidationError(
            f"conn_string must be a path or ':memory:', got {type(conn_string).__name__}"
        )
    if conn_string in (":memory:", ""):
        return None
    return conn_string


class _Closable(Protocol):
    def close(self) -> None: ...


S = TypeVar("S", bound=_Closable)


class StoreOpener(Generic[S]):
    """`HybridStore.from_conn_string(...)`: a context manager for `with` and `async with`.

    The store opens on entry (in a worker thread under `async with`, so the event loop keeps
    running while migrations run and indexes load) and closes on exit.
    """

    def __init__(self, cls: Any, path: str | Path | None, **kwargs: Any) -> None:
        self._cls = cls  # the store class: called with (path, **kwargs)
        self._path = path
        self._kwargs = kwargs
        self._store: S | None = None

    def _open(self) -> S:
        if self._store is not None:
            raise ValidationError("this from_conn_string(...) context is already open")
        store: S = self._cls(self._path, **self._kwargs)
        self._store = store
        return store

    def _close(self) -> None:
        store, self._store = self._store, None
        if store is not None:
            store.close()

    def __enter__(self) -> S:
        return self._open()

    def __exit__(self, *exc: object) -> Literal[False]:
        self._close()
        return False

    async def __aenter__(self) -> S:
        return await asyncio.to_thread(self._open)

    async def __aexit__(self, *exc: object) -> Literal[False]:
        await asyncio.to_thread(self._close)
        return False
