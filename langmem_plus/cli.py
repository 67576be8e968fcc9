"""`langmem-plus`: the command line, a thin shell over `Memory`.

Readable tables by default (aligned by display width, so Chinese text lines up), ``--json``
for machines — errors included; progress bars go to stderr; exit codes: 0 ok, 1 not found,
2 usage or validation error, 3 anything else (one line on stderr).

The database is ``--db``, else ``LANGMEM_PLUS_DB``, else ``memory.db`` in the platform's user
data directory (platformdirs), so every command finds the same memories from any working
directory; ``langmem-plus where`` prints which file that is.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import unicodedata
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, NoReturn, TextIO

from langmem_plus.errors import LangmemPlusError, MemoryNotFoundError, ValidationError
from langmem_plus.namespaces import check_user_id

__all__ = ["build_parser", "default_db_path", "display_width", "main", "quiet_jieba"]

EXIT_OK, EXIT_NOT_FOUND, EXIT_USAGE, EXIT_ERROR = 0, 1, 2, 3
_SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks", "": "days"}


# ---------------------------------------------------------------------------- helpers
def default_db_path() -> Path:
    """Where the database lives when neither --db nor LANGMEM_PLUS_DB says: ``memory.db`` in
    the platform's user data directory (e.g. ``~/.local/share/langmem-plus`` on Linux)."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("langmem-plus", appauthor=False)) / "memory.db"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("langmem-plus")
    except PackageNotFoundError:  # running from a source tree
        from langmem_plus import __version__

        return __version__


def quiet_jieba() -> None:
    """Keep jieba's dictionary-loading lines off the terminal (its logger logs at DEBUG to
    stderr by default; importing it first means no later import resets the level)."""
    try:
        import jieba
    except ImportError:  # pragma: no cover - jieba is a core dependency
        return
    jieba.setLogLevel(logging.WARNING)


def display_width(text: str) -> int:
    """Terminal columns `text` takes: wide and full-width characters (CJK) count 2,
    combining marks and zero-width characters 0."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def _clip(text: str, width: int) -> str:
    """`text` cut to at most `width` columns, with an ellipsis when cut."""
    if display_width(text) <= width:
        return text
    out, used = [], 0
    for ch in text:
        w = display_width(ch)
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


class Progress:
    """A tiny progress bar on stderr, drawn only when stderr is a terminal (or forced)."""

    def __init__(self, label: str, stream: TextIO | None = None, force: bool | None = None):
        self.label = label
        self.stream = stream or sys.stderr
        env = os.environ.get("LANGMEM_PLUS_PROGRESS")
        self.enabled = force if force is not None else (
            env == "1" or (env != "0" and self.stream.isatty())
        )  # fmt: skip
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        width = 30
        filled = int(width * done / total)
        bar = "#" * filled + "." * (width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()


def parse_span(text: str) -> timedelta:
    """'30d', '12h', '90m', '2w' or a bare number of days → timedelta."""
    m = _SPAN.match(text or "")
    if not m:
        raise ValidationError(f"cannot read {text!r} as a time span; use e.g. 30d, 12h, 2w")
    return timedelta(**{_UNITS[m.group(2)]: float(m.group(1))})


def _iso_arg(text: str | None, name: str) -> datetime | None:
    if text is None:
        return None
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError(f"{name} must be an ISO date/time, got {text!r}") from None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _table(rows: Sequence[dict[str, Any]], columns: Sequence[str], width: int = 60) -> str:
    """Plain aligned text table; long cells are shortened with an ellipsis."""
    if not rows:
        return "(none)"

    def cell(v: Any) -> str:
        s = (
            ""
            if v is None
            else (json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else str(v))
        )
        return _clip(s.replace("\n", " "), width)

    body = [[cell(r.get(c)) for c in columns] for r in rows]
    widths = [
        max(display_width(c), *(display_width(b[i]) for b in body)) for i, c in enumerate(columns)
    ]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(_pad(c, w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(columns), line(["-" * w for w in widths]), *map(line, body)])


def _kv(data: dict[str, Any]) -> str:
    return "\n".join(
        f"{k}: {json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v}"
        for k, v in data.items()
    )


def _model(args: argparse.Namespace) -> Any:
    """`--model` as an init_chat_model string, or an OpenAI-compatible model at `--base-url`."""
    if not getattr(args, "model", None):
        if getattr(args, "base_url", None):
            raise ValidationError("--base-url needs --model (the model name at that endpoint)")
        return None
    if not getattr(args, "base_url", None):
        return args.model
    from langchain_openai import ChatOpenAI

    name = args.model.split(":", 1)[1] if args.model.startswith("openai:") else args.model
    return ChatOpenAI(
        model=name, base_url=args.base_url, api_key=os.environ.get("OPENAI_API_KEY") or "EMPTY"
    )


def _open(args: argparse.Namespace, *, profile: str = "default") -> Any:
    from langmem_plus.config import MemoryConfig
    from langmem_plus.memory import Memory

    config = MemoryConfig(score={"profile": args.profile or profile})  # type: ignore[arg-type]
    if args.embeddings == "none":
        return Memory(args.db, model=_model(args), config=config, embeddings=False)
    return Memory(args.db, model=_model(args), config=config)


def _user(args: argparse.Namespace) -> str:
    """The --user given (an empty one is an error, never 'default'), else the env var or 'default'."""
    if args.user is not None:
        return check_user_id(args.user, "--user")
    return os.environ.get("LANGMEM_PLUS_USER") or "default"


def _emit(args: argparse.Namespace, data: Any, human: Callable[[], str] | None = None) -> None:
    if args.json or human is None:
        print(json.dumps(data, ensure_ascii=False, indent=None if args.json else 2, default=str))
    else:
        print(human())


# ---------------------------------------------------------------------------- commands
def cmd_init(args: argparse.Namespace) -> int:
    from langmem_plus.store.sqlite import SCHEMA_VERSION

    existed = Path(args.db).exists()
    mem = _open(args)
    mem.close()
    data = {
        "db": str(Path(args.db).resolve()),
        "schema_version": SCHEMA_VERSION,
        "created": not existed,
    }
    _emit(args, data, lambda: _kv(data))
    return EXIT_OK


def cmd_store(args: argparse.Namespace) -> int:
    content = sys.stdin.read() if args.content in (None, "-") else args.content
    conv = args.conversation or (f"conv-{datetime.now(timezone.utc):%Y%m%d}-{uuid.uuid4().hex[:6]}")
    created = _iso_arg(args.created_at, "--created-at")
    with _open(args) as mem:
        turn = mem.add_turn(_user(args), conv, args.role, content, created_at=created)
    data = {
        "turn_id": turn.id,
        "conversation_id": turn.session_id,
        "symbols_extracted": turn.symbols,
        "stored_at": turn.created_at.isoformat().replace("+00:00", "Z"),
    }
    _emit(args, data, lambda: _kv(data))
    return EXIT_OK


def _time_arg(args: argparse.Namespace) -> Any:
    if args.time and (args.since or args.until):
        raise ValidationError("use --time or --since/--until, not both")
    if args.time:
        return args.time
    if args.since or args.until:
        return (_iso_arg(args.since, "--since"), _iso_arg(args.until, "--until"))
    return None


def cmd_recall(args: argparse.Namespace) -> int:
    from langmem_plus.text import tokenize

    tokenize("warm up")  # load the jieba dictionary before the timed recall
    with _open(args, profile="coding") as mem:
        data = mem.recall(
            args.query, _user(args), limit=args.limit, session_id=args.conversation,
            time_range=_time_arg(args),
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
        table = _table(
            rows, ["relevance", "conversation_id", "turn_id", "kind", "created_at", "content"]
        )
        return (
            f"{table}\n{len(rows)} of {data['total_searched']} searched in {data['latency_ms']} ms"
        )

    _emit(args, data, human)
    return EXIT_OK


def cmd_summarize(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        data = mem.summarize(_user(args), args.conversation, args.from_turn, args.to_turn)
    _emit(args, data, lambda: _kv(data))
    return EXIT_OK


def cmd_cleanup(args: argparse.Namespace) -> int:
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
    with _open(args) as mem:
        data = mem.cleanup(
            user_id=user,
            older_than=parse_span(args.older_than) if args.older_than else None,
            session_id=args.conversation,
            everything=bool(args.all),
        )
    _emit(args, data, lambda: _kv(data))
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        text = mem.export(args.user, args.format)
    text = text if text.endswith("\n") else text + "\n"
    if args.output and args.output != "-":
        Path(args.output).write_text(text, encoding="utf-8")
        if not args.json:
            print(f"exported to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    if bool(args.file) == bool(args.from_logs):
        raise ValidationError("give a FILE (or - for stdin) or --from-logs DIR, not both")
    bar = Progress("importing")
    try:
        with _open(args) as mem:
            if args.from_logs:
                data = mem.import_logs(args.from_logs, _user(args), infer=args.infer, progress=bar)
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
    _emit(args, data, lambda: _kv(data))
    return EXIT_OK


def cmd_reindex(args: argparse.Namespace) -> int:
    bar = Progress("reindexing")
    bar(0, 1)
    try:
        with _open(args) as mem:
            data = mem.store.reindex()
        bar(1, 1)
    finally:
        bar.close()
    _emit(args, data, lambda: _kv(data))
    return EXIT_OK


EXIT_PROBLEMS = 1  # `check`: the database has problems


def cmd_check(args: argparse.Namespace) -> int:
    """Integrity report of the database (read-only): exit 0 when clean, 1 with problems."""
    import sqlite3

    from langmem_plus.store import HybridStore

    path = Path(args.db)
    if not path.is_file():
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

    _emit(args, report, human)
    return EXIT_OK if report["ok"] else EXIT_PROBLEMS


def cmd_consolidate(args: argparse.Namespace) -> int:
    bar = Progress("consolidating")
    try:
        with _open(args) as mem:
            data = mem.consolidate(args.user, progress=bar)
    finally:
        bar.close()
    _emit(
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


def cmd_where(args: argparse.Namespace) -> int:
    """Which database file the commands use, why, and whether it exists (opens nothing)."""
    path = Path(args.db)
    data = {
        "db": str(path.resolve()),
        "source": args.db_source,
        "exists": path.is_file(),
        "default": str(default_db_path()),
    }
    _emit(args, data, lambda: _kv(data))
    return EXIT_OK


def cmd_stats(args: argparse.Namespace) -> int:
    if args.costs:
        return _cost_stats(args)
    with _open(args) as mem:
        data = {"db": str(Path(args.db).resolve()), **mem.stats()}
    _emit(args, data, lambda: _kv(data))
    return EXIT_OK


def _cost_stats(args: argparse.Namespace) -> int:
    """`stats --costs`: p50/p95 ms per stage and model calls/tokens per turn, from the
    persisted turn costs (all users, or the --user given)."""
    from langmem_plus.costs import summarize_costs

    user = check_user_id(args.user, "--user") if args.user is not None else None
    with _open(args) as mem:
        rows = mem.store.conversations.cost_rows(user_id=user)
    data = {"db": str(Path(args.db).resolve()), "user": user, **summarize_costs(rows)}

    def human() -> str:
        if not rows:
            return "(no turn costs recorded yet)"
        phases = [{"phase": k, **v} for k, v in data["phases"].items()]
        cols = ["p50_ms", "p95_ms", "calls_per_turn", "prompt_tokens_per_turn",
                "completion_tokens_per_turn"]  # fmt: skip
        return "\n\n".join(
            [
                _table(phases, ["phase", "turns", *cols]),
                _table(data["stages"], ["phase", "stage", "runs", *cols]),
            ]
        )

    _emit(args, data, human)
    return EXIT_OK


def cmd_add(args: argparse.Namespace) -> int:
    meta = {"category": args.category} if args.category else None
    with _open(args) as mem:
        ids = mem.add(
            args.text,
            _user(args),
            session_id=args.conversation,
            metadata=meta,
            infer=not args.no_infer,
        )
        rows = [mem.get(i, _user(args)).model_dump(mode="json") for i in ids]
    _emit(args, {"ids": ids, "memories": rows}, lambda: _table(rows, ["id", "category", "text"]))
    return EXIT_OK


def cmd_search(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        hits = mem.search(args.query, _user(args), limit=args.limit, time_range=_time_arg(args))
    data = {"results": [h.model_dump(mode="json", exclude={"memory"}) for h in hits]}
    rows = [
        {"score": round(h.score, 4), "id": h.id, "category": h.memory.category, "text": h.text}
        for h in hits
    ]
    _emit(args, data, lambda: _table(rows, ["score", "id", "category", "text"]))
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        page = mem.get_all(_user(args), limit=args.limit, offset=args.offset)
    data = page.model_dump(mode="json")
    _emit(
        args, data,
        lambda: _table(data["items"], ["id", "category", "updated_at", "text"])
        + f"\n{len(page.items)} of {page.total} (offset {page.offset})",
    )  # fmt: skip
    return EXIT_OK


def cmd_get(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        data = mem.get(args.id, _user(args)).model_dump(mode="json")
        if args.history:
            data["history"] = mem.history(args.id, _user(args))
    _emit(args, data, lambda: _kv(data))
    return EXIT_OK


def cmd_delete(args: argparse.Namespace) -> int:
    with _open(args) as mem:
        mem.delete(args.id, _user(args))
    data = {"deleted": True, "id": args.id}
    _emit(args, data, lambda: f"deleted {args.id}")
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from langmem_plus.demo import run_demo

    run_demo(db_path=args.db_given, model=args.model, base_url=args.base_url)
    return EXIT_OK


def is_loopback(host: str) -> bool:
    """True for 'localhost' and addresses in 127.0.0.0/8 or ::1 (nothing else can reach them)."""
    import ipaddress

    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def cmd_serve(args: argparse.Namespace) -> int:
    from langmem_plus.apikeys import KeyStore

    if args.max_body_bytes < 1:
        raise ValidationError("--max-body-bytes must be at least 1")
    if args.rate_limit < 0:
        raise ValidationError("--rate-limit must be >= 0 (0: no limit)")
    public = not is_loopback(args.host)
    if public:  # check before loading models: an open port must never trust X-User-Id
        with KeyStore.open(args.db) as keys:
            if keys.active_count() == 0:
                raise ValidationError(
                    f"refusing to serve on {args.host}: with no API key, any caller could act "
                    "as any user. Create one (langmem-plus keys create --user U, or --admin) "
                    "or bind 127.0.0.1"
                )
    try:
        import uvicorn
    except ImportError:
        from langmem_plus.errors import MissingExtraError

        raise MissingExtraError.for_extra("server", "uvicorn") from None
    from langmem_plus.server import create_app

    mem = _open(args)
    try:
        app = create_app(
            mem,
            require_keys=public,
            max_body_bytes=args.max_body_bytes,
            rate_limit=args.rate_limit or None,
        )
        uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    finally:
        mem.close()
    return EXIT_OK


def cmd_keys(args: argparse.Namespace) -> int:
    from langmem_plus.apikeys import KeyNotFoundError, KeyStore

    if args.keys_command == "create":
        if args.admin == (args.user is not None):
            raise ValidationError("give exactly one of --user USER (a key for one user) or --admin")
        user = None if args.admin else check_user_id(args.user, "--user")
        with KeyStore.open(args.db) as keys:
            key, token = keys.create(user_id=user, admin=args.admin, label=args.label)
        data = {**key.to_dict(), "token": token}
        _emit(
            args, data,
            lambda: f"{_kv(data)}\n\nThe token is shown only now: store it safely. "
            "Use it as: Authorization: Bearer <token>",
        )  # fmt: skip
        return EXIT_OK
    if not Path(args.db).is_file():
        raise ValidationError(f"no database at {args.db} (give --db or LANGMEM_PLUS_DB)")
    if args.keys_command == "list":
        with KeyStore.open(args.db) as keys:
            rows = [k.to_dict() for k in keys.list_keys(include_revoked=args.all)]
        _emit(
            args, rows,
            lambda: _table(rows, ["key_id", "user_id", "admin", "label", "created_at", "active"]),
        )  # fmt: skip
        return EXIT_OK
    with KeyStore.open(args.db) as keys:
        try:
            data = keys.revoke(args.key_id).to_dict()
        except KeyNotFoundError as exc:
            return _fail(args.json, EXIT_NOT_FOUND, type(exc).__name__, str(exc))
    _emit(args, data, lambda: f"revoked {args.key_id}")
    return EXIT_OK


# ---------------------------------------------------------------------------- parser
def _common(p: argparse.ArgumentParser, suppress: bool) -> None:
    d = (lambda v: argparse.SUPPRESS) if suppress else (lambda v: v)
    p.add_argument(
        "--db", default=d(None),
        help="database file (env LANGMEM_PLUS_DB; default: memory.db in the user data "
        "directory, see `langmem-plus where`)",
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


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of `langmem-plus` (global options work before or after the command)."""
    parser = _Parser(
        prog="langmem-plus",
        description="Long-term memory for LangGraph/LangChain agents.",
        epilog=f"database: --db, else LANGMEM_PLUS_DB, else {default_db_path()}",
    )
    parser.add_argument("--version", action="version", version=f"langmem-plus {_version()}")
    _common(parser, suppress=False)
    common = _Parser(add_help=False)
    _common(common, suppress=True)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(
        name: str, fn: Callable[[argparse.Namespace], int], help: str
    ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help, description=help)
        p.set_defaults(func=fn)
        return p

    add("where", cmd_where, "print which database file is used and whether it exists")
    add("init", cmd_init, "create the database (idempotent)")
    p = add("store", cmd_store, "store one conversation turn")
    p.add_argument("--conversation", help="conversation id (default: a new one)")
    p.add_argument("--role", choices=["user", "assistant", "system", "tool"], default="user")
    p.add_argument("--content", help="turn text ('-' or absent: read stdin)")
    p.add_argument("--created-at", help="ISO time of the turn (default: now)")
    p = add("recall", cmd_recall, "recall relevant past turns and summaries")
    p.add_argument("--query", "-q", required=True)
    p.add_argument("--limit", type=int, default=5)
    p.add_argument("--conversation", help="only this conversation")
    _time_args(p)
    p = add("summarize", cmd_summarize, "summarise turns of a conversation")
    p.add_argument("--conversation", required=True)
    p.add_argument("--from-turn", type=int)
    p.add_argument("--to-turn", type=int)
    _model_args(p)
    p = add(
        "cleanup", cmd_cleanup,
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
    p = add("export", cmd_export, "export memories and conversations")
    p.add_argument("--format", choices=["json", "jsonl"], default="json")
    p.add_argument("--output", "-o", help="file (default: stdout)")
    p = add("import", cmd_import, "import an export, or plain conversation logs")
    p.add_argument("file", nargs="?", help="export file, or - for stdin")
    p.add_argument("--from-logs", metavar="DIR", help="directory of plain conversation logs")
    p.add_argument("--infer", action="store_true", help="also extract memories from the logs")
    _model_args(p)
    add("reindex", cmd_reindex, "rebuild the keyword and vector indexes from SQLite")
    add("check", cmd_check, "check integrity and index agreement (exit 1 on problems)")
    p = add("consolidate", cmd_consolidate, "merge near-duplicate episodic memories")
    p = add("stats", cmd_stats, "counts and sizes")
    p.add_argument(
        "--costs", action="store_true",
        help="per-stage cost of turns instead: p50/p95 ms, model calls and tokens per turn",
    )  # fmt: skip
    p = add("add", cmd_add, "add a long-term memory (runs the knowledge monitor)")
    p.add_argument("text")
    p.add_argument("--conversation")
    p.add_argument("--category", choices=["preference", "fact", "pattern", "episode"])
    p.add_argument("--no-infer", action="store_true", help="store the text as given")
    _model_args(p)
    p = add("search", cmd_search, "search long-term memories")
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=5)
    _time_args(p)
    p = add("list", cmd_list, "list long-term memories")
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--offset", type=int, default=0)
    p = add("get", cmd_get, "show one memory")
    p.add_argument("id")
    p.add_argument("--history", action="store_true", help="include its change history")
    p = add("delete", cmd_delete, "delete one memory")
    p.add_argument("id")
    p = add("demo", cmd_demo, "run the offline demo")
    _model_args(p)
    p = add("serve", cmd_serve, "serve the REST API (needs the [server] extra)")
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
    p = add("keys", cmd_keys, "create, list and revoke API keys of the REST and MCP servers")
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
    return parser


class _UsageError(Exception):
    """argparse found a usage problem (raised instead of exiting, so --json can report it)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is raised, not printed, so it can be reported as JSON."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{self.prog}: {message}")


def _fail(json_out: bool, code: int, kind: str, message: str) -> int:
    """Report an error on stderr (one line; a JSON object with --json) and return `code`."""
    message = message.splitlines()[0] if message else kind
    if json_out:
        print(
            json.dumps(
                {"error": {"type": kind, "message": message, "exit_code": code}},
                ensure_ascii=False,
            ),
            file=sys.stderr,
        )
    else:
        print(f"error: {message}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `langmem-plus`; returns the exit code."""
    quiet_jieba()
    argv = list(sys.argv[1:] if argv is None else argv)
    json_out = "--json" in argv
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except _UsageError as exc:
        if not json_out:
            parser.print_usage(sys.stderr)
        return _fail(json_out, EXIT_USAGE, "UsageError", str(exc))
    except SystemExit as exc:  # --help / --version (0)
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_USAGE
    env_db = os.environ.get("LANGMEM_PLUS_DB")
    args.db_given = args.db or env_db
    args.db_source = "--db" if args.db else "LANGMEM_PLUS_DB" if env_db else "default"
    args.db = args.db or env_db or str(default_db_path())
    args.embeddings = args.embeddings or os.environ.get("LANGMEM_PLUS_EMBEDDINGS") or "default"
    if args.embeddings not in ("default", "none"):
        return _fail(
            args.json, EXIT_USAGE, "UsageError",
            "LANGMEM_PLUS_EMBEDDINGS must be 'default' or 'none'",
        )  # fmt: skip
    if args.command not in ("where", "demo") and args.db_source == "default":
        Path(args.db).parent.mkdir(parents=True, exist_ok=True)
    try:
        return int(args.func(args))
    except MemoryNotFoundError as exc:
        return _fail(args.json, EXIT_NOT_FOUND, type(exc).__name__, str(exc))
    except (ValidationError, ValueError) as exc:
        return _fail(args.json, EXIT_USAGE, type(exc).__name__, str(exc))
    except KeyboardInterrupt:
        return _fail(args.json, EXIT_ERROR, "KeyboardInterrupt", "interrupted")
    except BrokenPipeError:  # `langmem-plus list | head`: the reader has all it wants
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (LangmemPlusError, Exception) as exc:  # one clear line, never a traceback
        return _fail(args.json, EXIT_ERROR, type(exc).__name__, f"{type(exc).__name__}: {exc}")


if __name__ == "__main__":
    sys.exit(main())
