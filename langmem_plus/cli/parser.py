"""The argparse parser of `langmem-plus`: global options, then one sub-command per job, each
wired to its `cmd_*` function (global options work before or after the command)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn

from langmem_plus.cli import commands_db as db
from langmem_plus.cli import commands_memories as memories
from langmem_plus.cli import commands_serve as serve
from langmem_plus.cli import commands_turns as turns
from langmem_plus.cli.options import default_db_path, version_string

__all__ = ["Parser", "UsageError", "build_parser"]

Command = Callable[[argparse.Namespace], int]
AddCommand = Callable[[str, Command, str], argparse.ArgumentParser]


class UsageError(Exception):
    """argparse found a usage problem (raised instead of exiting, so --json can report it)."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is raised, not printed, so it can be reported as JSON."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _common(p: argparse.ArgumentParser, suppress: bool) -> None:
    d = (lambda v: argparse.SUPPRESS) if suppress else (lambda v: v)
    p.add_argument(
        "--db", default=d(None),
        help="database file (env LANGMEM_PLUS_DB; default: memory.db in the user data "
        "directory, see `langmem-plus where`)",
    )  # fmt: skip
    p.add_argument(
        "--create", action="store_true", default=d(False),
        help="create the database named by --db or LANGMEM_PLUS_DB if it does not exist "
        "(without it only `init` creates one, so a mistyped path is an error)",
    )  # fmt: skip
    p.add_argument(
        "--user", default=d(None), help="user id (env LANGMEM_PLUS_USER, default 'default')"
    )
    p.add_argument(
        "--json", action="store_true", default=d(False), help="machine-readable JSON output"
    )
    p.add_argument(
        "--embeddings", choices=["default", "none"], default=d(None),
        help="'default' (offline USE model) or 'none' (keyword recall only); env LANGMEM_PLUS_EMBEDDINGS",
    )  # fmt: skip
    p.add_argument(
        "--profile", choices=["default", "coding"], default=d(None),
        help="score profile: 'coding' ranks by code symbols, recency and similarity (the "
        "default of recall), 'default' by relevance, category, recency, use and confidence",
    )  # fmt: skip


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="chat model: init_chat_model string, e.g. openai:gpt-4o-mini")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint for --model")


def _time_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--time", help="time phrase: 昨天, last week, 2026-01-03, auto")
    p.add_argument("--since", help="ISO start of the time range")
    p.add_argument("--until", help="ISO end of the time range")


def _turn_commands(add: AddCommand) -> None:
    p = add("store", turns.cmd_store, "store one conversation turn")
    p.add_argument("--conversation", help="conversation id (default: a new one)")
    p.add_argument("--role", choices=["user", "assistant", "system", "tool"], default="user")
    p.add_argument("--content", help="turn text ('-' or absent: read stdin)")
    p.add_argument("--created-at", help="ISO time of the turn (default: now)")
    p = add("recall", turns.cmd_recall, "recall relevant past turns and summaries")
    p.add_argument("--query", "-q", required=True)
    p.add_argument("--limit", type=int, default=5)
    p.add_argument("--conversation", help="only this conversation")
    _time_args(p)
    p = add("summarize", turns.cmd_summarize, "summarise turns of a conversation")
    p.add_argument("--conversation", required=True)
    p.add_argument("--from-turn", type=int)
    p.add_argument("--to-turn", type=int)
    _model_args(p)
    p = add(
        "cleanup", turns.cmd_cleanup,
        "delete old conversations, one conversation, or everything of one user",
    )  # fmt: skip
    p.add_argument("--older-than", help="e.g. 30d, 12h, 2w")
    p.add_argument("--conversation", help="conversation id")
    p.add_argument("--all", action="store_true", help="delete everything of --user")
    p.add_argument(
        "--all-users", action="store_true",
        help="with --all: every user's data (needs --yes)",
    )  # fmt: skip
    p.add_argument("--yes", action="store_true", help="confirm --all --all-users")


def _database_commands(add: AddCommand) -> None:
    p = add("export", db.cmd_export, "export memories and conversations")
    p.add_argument("--format", choices=["json", "jsonl"], default="json")
    p.add_argument("--output", "-o", help="file (default: stdout)")
    p = add("import", db.cmd_import, "import an export, or plain conversation logs")
    p.add_argument("file", nargs="?", help="export file, or - for stdin")
    p.add_argument("--from-logs", metavar="DIR", help="directory of plain conversation logs")
    p.add_argument("--infer", action="store_true", help="also extract memories from the logs")
    _model_args(p)
    add("reindex", db.cmd_reindex, "rebuild the keyword and vector indexes from SQLite")
    add("check", db.cmd_check, "check integrity and index agreement (exit 1 on problems)")
    add("consolidate", db.cmd_consolidate, "merge near-duplicate episodic memories")
    p = add("stats", db.cmd_stats, "counts and sizes")
    p.add_argument(
        "--costs", action="store_true",
        help="per-stage cost of turns instead: p50/p95 ms, model calls and tokens per turn",
    )  # fmt: skip


def _memory_commands(add: AddCommand) -> None:
    p = add(
        "add", memories.cmd_add, "add a long-term memory (kept as an episode, its facts derived)"
    )
    p.add_argument("text")
    p.add_argument("--conversation")
    p.add_argument("--category", choices=["preference", "fact", "pattern", "episode"])
    p.add_argument("--no-infer", action="store_true", help="store the text as given")
    _model_args(p)
    p = add("search", memories.cmd_search, "search long-term memories")
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=5)
    _time_args(p)
    p = add("list", memories.cmd_list, "list long-term memories")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--offset", type=int, default=0)
    p = add("get", memories.cmd_get, "show one memory")
    p.add_argument("id")
    p.add_argument("--history", action="store_true", help="include its change history")
    p = add("delete", memories.cmd_delete, "delete one memory")
    p.add_argument("id")


def _serve_commands(add: AddCommand, common: argparse.ArgumentParser) -> None:
    p = add("demo", serve.cmd_demo, "run the offline demo")
    _model_args(p)
    p = add("serve", serve.cmd_serve, "serve the REST API (needs the [server] extra)")
    p.add_argument(
        "--host", default="127.0.0.1",
        help="address to bind; anything but loopback needs an API key (see `keys create`)",
    )  # fmt: skip
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--max-body-bytes", type=int, default=1 << 20,
        help="largest request body accepted (413 above it; default 1 MiB)",
    )  # fmt: skip
    p.add_argument(
        "--rate-limit", type=float, default=600.0,
        help="requests per minute per API key (429 above it; 0: no limit; default 600)",
    )  # fmt: skip
    p.add_argument(
        "--work-limit", type=float, default=1200.0,
        help="work units per minute per API key for writes: a message counts 1, every 2,000 "
        "characters 1 more (429 above it; 0: no limit; default 1200)",
    )  # fmt: skip
    p.add_argument(
        "--max-messages", type=int, default=100,
        help="messages one request may carry (413 above it; default 100)",
    )  # fmt: skip
    p.add_argument(
        "--allowed-host", action="append", default=None, metavar="NAME",
        help="a Host name a server without API keys also answers to (repeatable; it answers "
        "only to localhost, 127.0.0.0/8 and [::1] otherwise)",
    )  # fmt: skip
    p = add("keys", serve.cmd_keys, "create, list and revoke API keys of the REST and MCP servers")
    ks = p.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    kc = ks.add_parser(
        "create", parents=[common],
        help="a new key for --user USER, or --admin (any user); prints the token once",
    )  # fmt: skip
    kc.add_argument("--admin", action="store_true", help="a key that may act for any user")
    kc.add_argument("--label", help="a note to tell keys apart (e.g. where it is used)")
    kl = ks.add_parser("list", parents=[common], help="active keys (ids, users; never tokens)")
    kl.add_argument("--all", action="store_true", help="include revoked keys")
    kr = ks.add_parser("revoke", parents=[common], help="revoke a key by its id")
    kr.add_argument("key_id", help="the key id shown by `keys list`")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of `langmem-plus` (global options work before or after the command)."""
    parser = Parser(
        prog="langmem-plus",
        description="Long-term memory for LangGraph/LangChain agents.",
        epilog=f"database: --db, else LANGMEM_PLUS_DB, else {default_db_path()}",
    )
    parser.add_argument("--version", action="version", version=f"langmem-plus {version_string()}")
    _common(parser, suppress=False)
    common = Parser(add_help=False)
    _common(common, suppress=True)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, fn: Command, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help, description=help)
        p.set_defaults(func=fn)
        return p

    add("where", db.cmd_where, "print which database file is used and whether it exists")
    add("init", db.cmd_init, "create the database (idempotent)")
    _turn_commands(add)
    _database_commands(add)
    _memory_commands(add)
    _serve_commands(add, common)
    return parser
