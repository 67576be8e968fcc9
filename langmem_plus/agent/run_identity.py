"""Who a run is for: the user id and thread id from a LangGraph run's context or config, and
the user's namespace from a template."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langmem_plus.errors import ValidationError
from langmem_plus.model.namespaces import fill_template

__all__ = ["namespace_for", "resolve_user_id", "thread_id_from_config"]


def _lookup(source: Any, key: str) -> Any:
    if source is None:
        return None
    if isinstance(source, Mapping):
        return source.get(key)
    return getattr(source, key, None)


def resolve_user_id(context: Any, config: Mapping[str, Any] | None, default: str | None) -> str:
    """The user id from the runtime context (`user_id`) or `configurable.user_id`, as str."""
    value = _lookup(context, "user_id")
    if value is None and config:
        value = (config.get("configurable") or {}).get("user_id")
    if value is None:
        value = default
    if value is None or str(value).strip() == "":
        raise ValidationError(
            "no user_id: pass context={'user_id': ...} to invoke (or "
            "config={'configurable': {'user_id': ...}}), or set default_user_id"
        )
    return str(value)


def thread_id_from_config(config: Mapping[str, Any] | None) -> str | None:
    """The checkpointer thread id of the current run, when there is one."""
    if not config:
        return None
    tid = (config.get("configurable") or {}).get("thread_id")
    return None if tid is None else str(tid)


def namespace_for(template: Sequence[str], user_id: str) -> tuple[str, ...]:
    """Fill `{user_id}` in a namespace template with the escaped id (see `model/namespaces.py`)."""
    return fill_template(template, user_id)
