"""Commands on the database as a whole: where, init, export, import, reindex, check,
consolidate, stats."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from langmem_plus.cli.options import (
    db_label,
    default_db_path,
    is_lite_dir,
    is_server_db,
    open_memory,
    user_of,
)
from langmem_plus.cli.output import (
    EXIT_OK,
    EXIT_PROBLEMS,
    Progress,
    emit,
    kv,
    table,
    write_private,
)
from langmem_plus.errors import ValidationError
from langmem_plus.model.namespaces import check_user_id

__all__ = [
    "cmd_check",
    "cmd_consolidate",
    "cmd_export",
    "cmd_import",
    "cmd_init",
    "cmd_reindex",
    "cmd_stats",
    "cmd_where",
]


def cmd_where(args: argparse.Namespace) -> int:
    """Which database file the commands use, why, and whether it exists (opens nothing)."""
    path = Path(args.db)
    data = {
        "db": db_label(args.db),
        "source": args.db_source,
        "exists": None if is_server_db(args.db) else path.is_file() or is_lite_dir(path),
        "default": str(default_db_path()),
    }
    emit(args, data, lambda: kv(data))
    return EXIT_OK


def cmd_init(args: argparse.Namespace) -> int:
    """`init`: create the database (idempotent)."""
    from langmem_plus.store.db.database import SCHEMA_VERSION

    existed = not is_server_db(args.db) and Path(args.db).exists()
    mem = open_memory(args)
    mem.close()
    data = {
        "db": db_label(args.db),
        "schema_version": SCHEMA_VERSION,
        "created": not existed,
    }
    emit(args, data, lambda: kv(data))
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    """`export`: memories and conversations as JSON or JSON Lines (file or stdout)."""
    with open_memory(args) as mem:
        text = mem.export(args.user, args.format)
    text = text if text.endswith("\n") else text + "\n"
    if args.output and args.output != "-":
        write_private(args.output, text)
        if not args.json:
            print(f"exported to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    """`import`: an export, or plain conversation logs (--from-logs)."""
    if bool(args.file) == bool(args.from_logs):
        raise ValidationError("give a FILE (or - for stdin) or --from-logs DIR, not both")
    bar = Progress("importing")
    try:
        with open_memory(args) as mem:
            if args.from_logs:
                data = mem.import_logs(
                    args.from_logs, user_of(args), infer=args.infer, progress=bar
                )
            else:
                if args.file == "-":
                    text = sys.stdin.read()
                else:
                    path = Path(args.file)
                    if not path.is_file():
                        raise ValidationError(f"no such file: {args.file}")
                    text = path.read_text(encoding="utf-8")
                data = mem.import_(text, progress=bar)
    finally:
        bar.close()
    emit(args, data, lambda: kv(data))
    return EXIT_OK


def cmd_reindex(args: argparse.Namespace) -> int:
    """`reindex`: rebuild the keyword and vector indexes from SQLite."""
    bar = Progress("reindexing")
    try:
        with open_memory(args) as mem:
            data = mem.store.reindex(progress=bar)
    finally:
        bar.close()
    emit(args, data, lambda: kv(data))
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    """Integrity report of the database (read-only): exit 0 when clean, 1 with problems."""
    import sqlite3

    from langmem_plus.store import HybridStore

    path: Any = args.db if is_server_db(args.db) else Path(args.db)
    if not is_server_db(args.db) and not (path.is_file() or is_lite_dir(path)):
        raise ValidationError(f"no database at {path}")
    index: Any = False if args.embeddings == "none" else None
    try:
        try:
            store = HybridStore(path, index=index, read_only=True)
        except sqlite3.DatabaseError:  # vectors unreadable: check the tables without them
            store = HybridStore(path, index=False, read_only=True)
        with store:
            report = store.check()
    except sqlite3.DatabaseError as exc:
        report = {"ok": False, "problems": [f"sqlite: cannot open the database: {exc}"]}

    def human() -> str:
        if report["ok"]:
            return f"ok: {report.get('items', 0)} items, indexes agree, integrity_check ok"
        return "\n".join(["problems:", *(f"  {p}" for p in report["problems"])])

    emit(args, report, human)
    return EXIT_OK if report["ok"] else EXIT_PROBLEMS


def cmd_consolidate(args: argparse.Namespace) -> int:
    """`consolidate`: merge near-duplicate episodic memories."""
    bar = Progress("consolidating")
    try:
        with open_memory(args) as mem:
            data = mem.consolidate(args.user, progress=bar)
    finally:
        bar.close()
    emit(
        args,
        data,
        lambda: (
            "\n".join(
                f"{u}: {json.dumps(r, ensure_ascii=False, default=str)}" for u, r in data.items()
            )
            or "(no users)"
        ),
    )
    return EXIT_OK


def cmd_stats(args: argparse.Namespace) -> int:
    """`stats`: counts and sizes (or per-stage turn costs with --costs)."""
    if args.costs:
        return _cost_stats(args)
    with open_memory(args) as mem:
        data = {"db": db_label(args.db), **mem.stats()}
    emit(args, data, lambda: kv(data))
    return EXIT_OK


def _cost_stats(args: argparse.Namespace) -> int:
    """`stats --costs`: p50/p95 ms per stage and model calls/tokens per turn, from the
    persisted turn costs (all users, or the --user given)."""
    from langmem_plus.model.costs import summarize_costs

    user = check_user_id(args.user, "--user") if args.user is not None else None
    with open_memory(args) as mem:
        rows = mem.store.conversations.cost_rows(user_id=user)
    data = {"db": db_label(args.db), "user": user, **summarize_costs(rows)}

    def human() -> str:
        if not rows:
            return "(no turn costs recorded yet)"
        phases = [{"phase": k, **v} for k, v in data["phases"].items()]
        cols = ["p50_ms", "p95_ms", "calls_per_turn", "prompt_tokens_per_turn",
                "completion_tokens_per_turn"]  # fmt: skip
        return "\n\n".join(
            [
                table(phases, ["phase", "turns", *cols]),
                table(data["stages"], ["phase", "stage", "runs", *cols]),
            ]
        )

    emit(args, data, human)
    return EXIT_OK
