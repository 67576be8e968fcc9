"""The command line's values: where the database is, time spans and dates, the user, the chat
model, and the `Memory` they open."""

from __future__ import annotations

import argparse
import logging
import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from langmem_plus.errors import ValidationError
from langmem_plus.model.namespaces import check_user_id
from langmem_plus.store.seams import storage_target
from langmem_plus.text.timeparse import parse_iso

__all__ = [
    "chat_model",
    "db_label",
    "default_db_path",
    "is_lite_dir",
    "is_loopback",
    "is_server_db",
    "iso_arg",
    "keys_db",
    "open_memory",
    "parse_span",
    "quiet_jieba",
    "require_db",
    "time_arg",
    "user_of",
    "version_string",
]

_SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks", "": "days"}


def default_db_path() -> Path:
    """Where the database lives when neither --db nor LANGMEM_PLUS_DB says: ``memory.db`` in
    the platform's user data directory (e.g. ``~/.local/share/langmem-plus`` on Linux)."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("langmem-plus", appauthor=False)) / "memory.db"


def version_string() -> str:
    """The installed version of langmem-plus (the source tree's when not installed)."""
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


def parse_span(text: str) -> timedelta:
    """'30d', '12h', '90m', '2w' or a bare number of days → timedelta."""
    m = _SPAN.match(text or "")
    if not m:
        raise ValidationError(f"cannot read {text!r} as a time span; use e.g. 30d, 12h, 2w")
    return timedelta(**{_UNITS[m.group(2)]: float(m.group(1))})


def iso_arg(text: str | None, name: str) -> datetime | None:
    """An ISO date/time option as an aware datetime (UTC when no zone is given), or None."""
    if text is None:
        return None
    try:
        dt = parse_iso(text)
    except ValueError:
        raise ValidationError(f"{name} must be an ISO date/time, got {text!r}") from None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def time_arg(args: argparse.Namespace) -> Any:
    """The time range of --time (a phrase) or --since/--until (ISO), or None."""
    if args.time and (args.since or args.until):
        raise ValidationError("use --time or --since/--until, not both")
    if args.time:
        return args.time
    if args.since or args.until:
        return (iso_arg(args.since, "--since"), iso_arg(args.until, "--until"))
    return None


def chat_model(args: argparse.Namespace) -> Any:
    """`--model` as an init_chat_model string, or an OpenAI-compatible model at `--base-url`
    (built without client retries and with the default request timeout, as every model the
    library builds)."""
    if not getattr(args, "model", None):
        if getattr(args, "base_url", None):
            raise ValidationError("--base-url needs --model (the model name at that endpoint)")
        return None
    if not getattr(args, "base_url", None):
        return args.model
    from langmem_plus.processors.model.structured import build_model

    name = args.model.split(":", 1)[1] if args.model.startswith("openai:") else args.model
    return build_model(
        f"openai:{name}",
        base_url=args.base_url,
        api_key=os.environ.get("OPENAI_API_KEY") or "EMPTY",
    )


def require_db(args: argparse.Namespace) -> None:
    """Refuse a database named by --db or LANGMEM_PLUS_DB that does not exist (a typo would
    otherwise create an empty one and its folders), unless the command is `init` or --create
    is given; the error names the default database. The default database is created on
    first use."""
    source = getattr(args, "db_source", "default")
    if args.command == "init" or getattr(args, "create", False):
        return
    require_named_db(args.db, source, hint=f"`langmem-plus --db {args.db} init`, or add --create")


def require_named_db(db: str, source: str, *, hint: str) -> None:
    """Refuse `db` named by `source` (a flag or an environment variable; "default": the
    default database, created on first use) when no database is there: the error names the
    default database and says how to create this one (`hint`)."""
    if source == "default" or is_server_db(db):
        return
    path = Path(db)
    if path.is_file() or is_lite_dir(path):
        return
    default = default_db_path()
    state = "exists" if default.is_file() else "not created yet"
    raise ValidationError(
        f"no database at {path.resolve()} (from {source}); the default database is "
        f"{default} ({state}). Create this one with {hint}"
    )


def open_memory(args: argparse.Namespace, *, profile: str = "default") -> Any:
    """The `Memory` on --db with the chosen score profile, embeddings and model (a database
    named but missing is refused, see `require_db`)."""
    from langmem_plus.config import MemoryConfig
    from langmem_plus.memory import Memory

    require_db(args)

    config = MemoryConfig(score={"profile": args.profile or profile})  # type: ignore[arg-type]
    if args.embeddings == "none":
        return Memory(args.db, model=chat_model(args), config=config, embeddings=False)
    return Memory(args.db, model=chat_model(args), config=config)


def user_of(args: argparse.Namespace) -> str:
    """The --user given (an empty one is an error, never 'default'), else the env var or 'default'."""
    if args.user is not None:
        return check_user_id(args.user, "--user")
    return os.environ.get("LANGMEM_PLUS_USER") or "default"


def is_loopback(host: str) -> bool:
    """True for 'localhost' and addresses in 127.0.0.0/8 or ::1 (nothing else can reach them)."""
    import ipaddress

    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def is_server_db(db: str) -> bool:
    """Whether `--db` names a Milvus server (``milvus://host:19530``) rather than a file."""
    uri = storage_target(db)
    return uri is not None and "://" in uri


def db_label(db: str) -> str:
    """`--db` as reports show it: a server URI as given, a file as its absolute path."""
    return db if is_server_db(db) else str(Path(db).resolve())


def is_lite_dir(path: Path) -> bool:
    """Whether `path` is a Milvus Lite database (a folder named ``*.milvus.db``)."""
    return path.is_dir() and storage_target(str(path)) is not None


def keys_db(db: str) -> str:
    """The SQLite file holding the API keys: the database itself, or for a Milvus store
    ``LANGMEM_PLUS_KEYS_DB``, else (Milvus Lite) ``<folder>.keys.db`` beside its folder."""
    env = os.environ.get("LANGMEM_PLUS_KEYS_DB")
    if storage_target(db) is None:
        return db
    if env:
        return env
    if is_server_db(db):
        raise ValidationError(
            "a Milvus server keeps no API keys: set LANGMEM_PLUS_KEYS_DB to a SQLite file "
            "shared by the servers (e.g. on a volume)"
        )
    return db.rstrip("/\\") + ".keys.db"
