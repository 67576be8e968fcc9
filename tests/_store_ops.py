"""One item operation of a hypothesis-generated sequence applied to a store handle, shared by
the tests that replay such sequences against several caches (row cache, resident index)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from langmem_plus import HybridStore

ITEM_OPS = ("put", "delete", "used", "get", "restore")


def apply_item_op(handles: list[HybridStore], namespaces: list[tuple[str, ...]], o: Any) -> None:
    """`o` = (kind, (handle, namespace index, key number), *args) for a kind in ITEM_OPS:
    put (value, ttl), delete, used (mark_used), get (refreshing the TTL), restore (day)."""
    kind, (h, ns, key) = o[0], o[1]
    store, namespace, k = handles[h], namespaces[ns], f"k{key}"
    if kind == "put":
        store.put(namespace, k, o[2], ttl=o[3])
    elif kind == "delete":
        store.delete(namespace, k)
    elif kind == "used":
        store.mark_used(namespace, [k])
    elif kind == "get":
        store.get(namespace, k, refresh_ttl=True)
    elif kind == "restore":
        t = datetime(2024, 1, 1 + o[2] % 28, tzinfo=timezone.utc)
        store.restore_item_stats([(namespace, k, t, t, t, o[2])])
    else:
        raise ValueError(f"not an item operation: {kind!r}")
