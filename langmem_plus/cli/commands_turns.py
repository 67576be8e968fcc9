"""Commands on conversation turns: store, recall, summarize, cleanup."""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from datetime import datetime, timezone

from langmem_plus.cli.options import iso_arg, open_memory, parse_span, time_arg, user_of
from langmem_plus.cli.output import EXIT_OK, emit, kv, table
from langmem_plus.errors import ValidationError
from langmem_plus.model.namespaces import check_user_id

__all__ = ["cmd_cleanup", "cmd_recall", "cmd_store", "cmd_summarize"]


def cmd_store(args: argparse.Namespace) -> int:
    """`store`: store one conversation turn (content from --content or stdin)."""
    content = sys.stdin.read() if args.content in (None, "-") else args.content
    conv = args.conversation or (f"conv-{datetime.now(timezone.utc):%Y%m%d}-{uuid.uuid4().hex[:6]}")
    created = iso_arg(args.created_at, "--created-at")
    with open_memory(args) as mem:
        turn = mem.add_turn(user_of(args), conv, args.role, content, created_at=created)
    data = {
        "turn_id": turn.id,
        "conversation_id": turn.session_id,
        "symbols_extracted": turn.symbols,
        "stored_at": turn.created_at.isoformat().replace("+00:00", "Z"),
    }
    emit(args, data, lambda: kv(data))
    return EXIT_OK


def cmd_recall(args: argparse.Namespace) -> int:
    """`recall`: relevant past turns and summaries."""
    from langmem_plus.text import tokenize

    tokenize("warm up")  # load the jieba dictionary before the timed recall
    with open_memory(args, profile="coding") as mem:
        data = mem.recall(
            args.query, user_of(args), limit=args.limit, session_id=args.conversation,
            time_range=time_arg(args),
        )  # fmt: skip

    def human() -> str:
        rows = [
            {
                **r,
                "content": r.get("content") or r.get("summary"),
                "kind": "summary" if r["is_summary"] else r.get("role"),
            }
            for r in data["results"]
        ]
        text = table(
            rows, ["relevance", "conversation_id", "turn_id", "kind", "created_at", "content"]
        )
        return (
            f"{text}\n{len(rows)} of {data['total_searched']} searched in {data['latency_ms']} ms"
        )

    emit(args, data, human)
    return EXIT_OK


def cmd_summarize(args: argparse.Namespace) -> int:
    """`summarize`: summarise turns of a conversation."""
    with open_memory(args) as mem:
        data = mem.summarize(user_of(args), args.conversation, args.from_turn, args.to_turn)
    emit(args, data, lambda: kv(data))
    return EXIT_OK


def cmd_cleanup(args: argparse.Namespace) -> int:
    """`cleanup`: delete old conversations, one conversation, or everything of a user."""
    chosen = [x for x in (args.older_than, args.conversation, args.all or None) if x is not None]
    if len(chosen) != 1:
        raise ValidationError("give exactly one of --older-than, --conversation or --all")
    user = check_user_id(args.user, "--user") if args.user is not None else None
    user = user or os.environ.get("LANGMEM_PLUS_USER") or None
    if args.all_users and user is not None:
        raise ValidationError("give --user USER or --all-users, not both")
    if args.all and user is None:
        if not args.all_users:
            raise ValidationError(
                "--all deletes everything of one user: give --user USER "
                "(or --all-users --yes to delete every user's data)"
            )
        if not args.yes:
            raise ValidationError("--all --all-users deletes every user's data: add --yes")
    with open_memory(args) as mem:
        data = mem.cleanup(
            user_id=user,
            older_than=parse_span(args.older_than) if args.older_than else None,
            session_id=args.conversation,
            everything=bool(args.all),
        )
    emit(args, data, lambda: kv(data))
    return EXIT_OK
