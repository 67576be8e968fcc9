"""Finding memories in the store: the owner of an id, every memory matching a filter, the
users' namespaces, and how a memory came to be (its update log and supersession chain)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langmem_plus.errors import MemoryNotFoundError, ValidationError
from langmem_plus.memory.checks import record_of
from langmem_plus.memory.results import MAX_LIMIT
from langmem_plus.model.namespaces import MEMORY_ROOT
from langmem_plus.model.records import MemoryRecord
from langmem_plus.store import HybridStore

__all__ = ["history", "matching", "owner", "record_events", "supersession_chain", "user_spaces"]


def owner(store: HybridStore, mid: str) -> tuple[str, str]:
    """The user namespace holding memory `mid` (one indexed lookup across all users)."""
    found = [ns for ns in store.locate(mid, (MEMORY_ROOT,)) if len(ns) == 2]
    if not found:
        raise MemoryNotFoundError(f"no memory {mid!r}")
    if len(found) > 1:
        raise ValidationError(f"memory id {mid!r} exists for several users: give user_id")
    return (found[0][0], found[0][1])


def matching(store: HybridStore, ns: tuple[str, ...], flt: dict[str, Any]) -> list[Any]:
    """Every item of namespace `ns` (not below it) matching store filter `flt`, oldest first,
    superseded facts included."""
    out: list[Any] = []
    offset = 0
    while True:
        page = store.search(ns, filter=flt, limit=MAX_LIMIT, offset=offset, include_superseded=True)
        out += [it for it in page if tuple(it.namespace) == ns]
        if len(page) < MAX_LIMIT:
            return out
        offset += MAX_LIMIT


def user_spaces(store: HybridStore, *, deeper: bool = False) -> list[tuple[str, ...]]:
    """The users' memory namespaces ``("memories", <user>)`` (with `deeper`, also those
    below one)."""
    return [
        ns
        for ns in store.list_namespaces(prefix=(MEMORY_ROOT,), limit=2**62)
        if len(ns) == 2 or (deeper and len(ns) > 2)
    ]


def history(store: HybridStore, rec: MemoryRecord) -> list[dict[str, Any]]:
    """Every event of `rec`'s validity chain, oldest first (see `Memory.history`)."""
    out: list[dict[str, Any]] = []
    for fact in supersession_chain(store, rec):
        out += record_events(fact)
    out.sort(key=lambda e: e.get("at") or "")
    return [_with_mem0_keys(e) for e in out]


def _with_mem0_keys(event: dict[str, Any]) -> dict[str, Any]:
    """An event also in mem0's history shape: memory_id, old_memory, new_memory, created_at,
    is_deleted."""
    if event["event"] == "SUPERSEDED":
        old, new = event.get("text"), event.get("new_text")
    else:
        old, new = event.get("old_text"), event.get("text")
    return {
        **event,
        "memory_id": event["id"],
        "old_memory": old,
        "new_memory": new,
        "created_at": event.get("at"),
        "is_deleted": False,
    }


def supersession_chain(store: HybridStore, rec: MemoryRecord) -> list[MemoryRecord]:
    """The facts linked to `rec` by supersession, oldest first (cycles cannot occur)."""
    ns = rec.namespace
    seen = {rec.id}
    older: list[MemoryRecord] = []
    frontier = [rec.id]
    while frontier:
        nxt = []
        for fid in frontier:
            for it in store.search(
                ns, filter={"superseded_by": fid}, limit=100, include_superseded=True
            ):
                if it.key not in seen:
                    seen.add(it.key)
                    prev = record_of(it)
                    older.append(prev)
                    nxt.append(prev.id)
        frontier = nxt
    newer: list[MemoryRecord] = []
    cur = rec
    while cur.superseded_by and cur.superseded_by not in seen:
        seen.add(cur.superseded_by)
        item = store.get(ns, cur.superseded_by)
        if item is None:
            break
        cur = record_of(item)
        newer.append(cur)
    older.sort(key=lambda r: r.valid_from or r.created_at)
    return [*older, rec, *newer]


def record_events(rec: MemoryRecord) -> list[dict[str, Any]]:
    """ADD, UPDATE and SUPERSEDED events of one record (its `metadata.updates` log)."""
    updates = rec.metadata.get("updates")
    entries = [u for u in updates if isinstance(u, Mapping)] if isinstance(updates, list) else []
    first_text = rec.text
    for u in entries:
        if isinstance(u.get("old_text"), str):
            first_text = u["old_text"]
            break
    start = rec.valid_from or rec.created_at
    out: list[dict[str, Any]] = [
        {
            "event": "ADD",
            "id": rec.id,
            "at": start.isoformat(),
            "text": first_text,
            "source_ids": list(rec.source_ids),
        }
    ]
    for u in entries:
        event = str(u.get("event", "UPDATE"))
        entry = {"event": event, "id": rec.id, "at": u.get("at") or u.get("time")}
        if event == "SUPERSEDED":
            entry.update(by=u.get("by"), text=rec.text, new_text=u.get("text"))
        else:
            entry.update(old_text=u.get("old_text"), text=u.get("new_text", u.get("text")))
        entry["detail"] = dict(u)
        out.append(entry)
    return out
