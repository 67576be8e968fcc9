"""`main`: run one `langmem-plus` command and map what goes wrong to an exit code and one line.

Exit codes: 0 ok, 1 not found, 2 usage or validation error, 3 anything else (one line on
stderr, a JSON object with ``--json``); never a traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from langmem_plus.cli.options import default_db_path, is_server_db, quiet_jieba
from langmem_plus.cli.output import EXIT_ERROR, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE, fail
from langmem_plus.cli.parser import UsageError, build_parser
from langmem_plus.errors import LangmemPlusError, MemoryNotFoundError, ValidationError

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `langmem-plus`; returns the exit code."""
    quiet_jieba()
    argv = list(sys.argv[1:] if argv is None else argv)
    json_out = "--json" in argv
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        if not json_out:
            parser.print_usage(sys.stderr)
        return fail(json_out, EXIT_USAGE, "UsageError", str(exc))
    except SystemExit as exc:  # --help / --version (0)
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_USAGE
    env_db = os.environ.get("LANGMEM_PLUS_DB")
    args.db_given = args.db or env_db
    args.db_source = "--db" if args.db else "LANGMEM_PLUS_DB" if env_db else "default"
    args.db = args.db or env_db or str(default_db_path())
    args.embeddings = args.embeddings or os.environ.get("LANGMEM_PLUS_EMBEDDINGS") or "default"
    if args.embeddings not in ("default", "none"):
        return fail(
            args.json, EXIT_USAGE, "UsageError",
            "LANGMEM_PLUS_EMBEDDINGS must be 'default' or 'none'",
        )  # fmt: skip
    if (
        args.command not in ("where", "demo")
        and args.db_source == "default"
        and not is_server_db(args.db)
    ):
        Path(args.db).parent.mkdir(parents=True, exist_ok=True)
    try:
        return int(args.func(args))
    except MemoryNotFoundError as exc:
        return fail(args.json, EXIT_NOT_FOUND, type(exc).__name__, str(exc))
    except (ValidationError, ValueError) as exc:
        return fail(args.json, EXIT_USAGE, type(exc).__name__, str(exc))
    except KeyboardInterrupt:
        return fail(args.json, EXIT_ERROR, "KeyboardInterrupt", "interrupted")
    except BrokenPipeError:  # `langmem-plus list | head`: the reader has all it wants
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (LangmemPlusError, Exception) as exc:  # one clear line, never a traceback
        return fail(args.json, EXIT_ERROR, type(exc).__name__, f"{type(exc).__name__}: {exc}")
