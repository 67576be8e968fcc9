"""Commands on long-term memories: add, search, list, get, delete."""

from __future__ import annotations

import argparse

from langmem_plus.cli.options import open_memory, time_arg, user_of
from langmem_plus.cli.output import EXIT_OK, emit, kv, table

__all__ = ["cmd_add", "cmd_delete", "cmd_get", "cmd_list", "cmd_search"]


def cmd_add(args: argparse.Namespace) -> int:
    """`add`: add a long-term memory."""
    meta = {"category": args.category} if args.category else None
    with open_memory(args) as mem:
        ids = mem.add(
            args.text,
            user_of(args),
            session_id=args.conversation,
            metadata=meta,
            infer=not args.no_infer,
        )
        rows = [mem.get(i, user_of(args)).model_dump(mode="json") for i in ids]
    emit(args, {"ids": ids, "memories": rows}, lambda: table(rows, ["id", "category", "text"]))
    return EXIT_OK


def cmd_search(args: argparse.Namespace) -> int:
    """`search`: search long-term memories."""
    with open_memory(args) as mem:
        hits = mem.search(args.query, user_of(args), limit=args.limit, time_range=time_arg(args))
    data = {"results": [h.model_dump(mode="json", exclude={"memory"}) for h in hits]}
    rows = [
        {"score": round(h.score, 4), "id": h.id, "category": h.memory.category, "text": h.text}
        for h in hits
    ]
    emit(args, data, lambda: table(rows, ["score", "id", "category", "text"]))
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    """`list`: a page of long-term memories."""
    with open_memory(args) as mem:
        page = mem.get_all(user_of(args), limit=args.limit, offset=args.offset)
    data = page.model_dump(mode="json")
    emit(
        args, data,
        lambda: table(data["items"], ["id", "category", "updated_at", "text"])
        + f"\n{len(page.items)} of {page.total} (offset {page.offset})",
    )  # fmt: skip
    return EXIT_OK


def cmd_get(args: argparse.Namespace) -> int:
    """`get`: one memory (with --history, its changes)."""
    with open_memory(args) as mem:
        data = mem.get(args.id, user_of(args)).model_dump(mode="json")
        if args.history:
            data["history"] = mem.history(args.id, user_of(args))
    emit(args, data, lambda: kv(data))
    return EXIT_OK


def cmd_delete(args: argparse.Namespace) -> int:
    """`delete`: delete one memory."""
    with open_memory(args) as mem:
        mem.delete(args.id, user_of(args))
    data = {"deleted": True, "id": args.id}
    emit(args, data, lambda: f"deleted {args.id}")
    return EXIT_OK
