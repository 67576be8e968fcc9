"""Commands that serve or show: the REST server, its API keys, the offline demo."""

from __future__ import annotations

import argparse
from pathlib import Path

from langmem_plus.cli.options import is_loopback, keys_db, open_memory, require_db
from langmem_plus.cli.output import EXIT_NOT_FOUND, EXIT_OK, emit, fail, kv, table
from langmem_plus.errors import ValidationError
from langmem_plus.model.namespaces import check_user_id
from langmem_plus.store.seams import storage_target

__all__ = ["cmd_demo", "cmd_keys", "cmd_serve"]


def cmd_serve(args: argparse.Namespace) -> int:
    """`serve`: serve the REST API (refuses a public address without an API key)."""
    from langmem_plus.server.apikeys import KeyStore

    if args.max_body_bytes < 1:
        raise ValidationError("--max-body-bytes must be at least 1")
    if args.rate_limit < 0:
        raise ValidationError("--rate-limit must be >= 0 (0: no limit)")
    if args.work_limit < 0:
        raise ValidationError("--work-limit must be >= 0 (0: no limit)")
    if args.max_messages < 1:
        raise ValidationError("--max-messages must be at least 1")
    require_db(args)
    public = not is_loopback(args.host)
    if public:  # check before loading models: an open port must never trust X-User-Id
        with KeyStore.open(keys_db(args.db)) as keys:
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

    mem = open_memory(args)
    own_keys = KeyStore.open(keys_db(args.db)) if storage_target(args.db) else None
    try:
        app = create_app(
            mem,
            keys=own_keys,
            require_keys=public,
            max_body_bytes=args.max_body_bytes,
            rate_limit=args.rate_limit or None,
            work_limit=args.work_limit or None,
            max_messages=args.max_messages,
            allowed_hosts=args.allowed_host,
        )
        uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    finally:
        mem.close()
        if own_keys is not None:
            own_keys.close()
    return EXIT_OK


def cmd_keys(args: argparse.Namespace) -> int:
    """`keys create|list|revoke`: the API keys of the REST and MCP servers."""
    from langmem_plus.server.apikeys import KeyNotFoundError, KeyStore

    if args.keys_command == "create":
        if args.admin == (args.user is not None):
            raise ValidationError("give exactly one of --user USER (a key for one user) or --admin")
        user = None if args.admin else check_user_id(args.user, "--user")
        require_db(args)
        with KeyStore.open(keys_db(args.db)) as keys:
            key, token = keys.create(user_id=user, admin=args.admin, label=args.label)
        data = {**key.to_dict(), "token": token}
        emit(
            args, data,
            lambda: f"{kv(data)}\n\nThe token is shown only now: store it safely. "
            "Use it as: Authorization: Bearer <token>",
        )  # fmt: skip
        return EXIT_OK
    if not Path(keys_db(args.db)).is_file():
        raise ValidationError(f"no database at {args.db} (give --db or LANGMEM_PLUS_DB)")
    if args.keys_command == "list":
        with KeyStore.open(keys_db(args.db)) as keys:
            rows = [k.to_dict() for k in keys.list_keys(include_revoked=args.all)]
        emit(
            args, rows,
            lambda: table(rows, ["key_id", "user_id", "admin", "label", "created_at", "active"]),
        )  # fmt: skip
        return EXIT_OK
    with KeyStore.open(keys_db(args.db)) as keys:
        try:
            data = keys.revoke(args.key_id).to_dict()
        except KeyNotFoundError as exc:
            return fail(args.json, EXIT_NOT_FOUND, type(exc).__name__, str(exc))
    emit(args, data, lambda: f"revoked {args.key_id}")
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    """`demo`: run the offline demo."""
    from langmem_plus.cli.demo import run_demo

    run_demo(db_path=args.db_given, model=args.model, base_url=args.base_url)
    return EXIT_OK
