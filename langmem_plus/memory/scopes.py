"""mem0's vocabulary on the `Memory` facade: scopes, filters, result dicts and configs.

Scope mapping (documented in docs/guides/from_mem0.md): a memory lives in its user's
namespace ``("memories", user_id)`` as before; mem0's `agent_id` and `run_id` are kept as
``metadata.agent_id`` / ``metadata.run_id`` on the record and become filters, so a user's
memories stay in one namespace whatever agent or run wrote them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langmem_plus.errors import ValidationError
from langmem_plus.memory.checks import FIELD_WORDS, check_id, check_mapping
from langmem_plus.model.records import MemoryRecord

__all__ = [
    "SCOPE_KEYS",
    "config_kwargs",
    "mem0_dict",
    "pick_id",
    "scope_metadata",
    "translate_filters",
]

SCOPE_KEYS = ("agent_id", "run_id")
_RECORD_FIELDS = frozenset(MemoryRecord.model_fields) - {"id", "namespace"}
_OUR_KEYS = ("path", "model", "embeddings", "config", "store")


def pick_id(id: str | None, memory_id: str | None) -> str:
    """The memory id given as `id` or as mem0's `memory_id` (exactly one of them)."""
    if id is not None and memory_id is not None and id != memory_id:
        raise ValidationError("give the memory id once: id or memory_id")
    value = id if id is not None else memory_id
    if value is None:
        raise ValidationError("give the memory id (id or memory_id)")
    return check_id("id", value)


def scope_metadata(agent_id: str | None, run_id: str | None) -> dict[str, str]:
    """The metadata entries that place a memory in an agent's and a run's scope."""
    out: dict[str, str] = {}
    for name, value in (("agent_id", agent_id), ("run_id", run_id)):
        if value is not None:
            out[name] = check_id(name, value)
    return out


def translate_filters(
    filters: Mapping[str, Any] | None,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """mem0-style filters as store filters on the record.

    A key that names a record field filters that field (``{"category": "preference"}``),
    unless its value is a word the field cannot hold (``{"category": "food"}``): then, like a
    key that is no record field (``{"topic": "food"}``), it is looked up in `metadata`.
    Dotted paths and ``$`` operators pass unchanged; `agent_id`/`run_id` add scope filters.
    A `user_id` filter must equal the `user_id` argument (the user is the namespace).
    """
    out: dict[str, Any] = {}
    for key, value in check_mapping("filters", filters).items():
        if not isinstance(key, str):
            raise ValidationError(f"filter keys must be strings, got {key!r}")
        if key in ("AND", "OR", "NOT"):
            raise ValidationError(
                f"{key} filters are not supported: give one dict of conditions (all must hold)"
            )
        if key == "user_id":
            if value != user_id:
                raise ValidationError("filter user_id differs from the user_id argument")
            continue
        out[_filter_key(key, value)] = value
    for name, scope in scope_metadata(agent_id, run_id).items():
        out[f"metadata.{name}"] = scope
    return out


def _filter_key(key: str, value: Any) -> str:
    if key.startswith("$") or "." in key:
        return key
    if key in _RECORD_FIELDS:
        vocab = FIELD_WORDS.get(key)
        if vocab is None or not isinstance(value, str) or value in vocab:
            return key
    return f"metadata.{key}"


def mem0_dict(rec: MemoryRecord, score: float | None = None) -> dict[str, Any]:
    """One memory in mem0's result shape: id, memory (the text), metadata, scopes, times."""
    meta = {k: v for k, v in rec.metadata.items() if k not in SCOPE_KEYS}
    out: dict[str, Any] = {
        "id": rec.id,
        "memory": rec.text,
        "user_id": _user_of(rec),
        "agent_id": rec.metadata.get("agent_id"),
        "run_id": rec.metadata.get("run_id"),
        "metadata": meta,
        "categories": [rec.category],
        "created_at": rec.created_at.isoformat(),
        "updated_at": rec.updated_at.isoformat(),
    }
    if score is not None:
        out["score"] = score
    return out


def _user_of(rec: MemoryRecord) -> str | None:
    from langmem_plus.model.namespaces import unescape_label

    return unescape_label(rec.namespace[1]) if len(rec.namespace) > 1 else None


def config_kwargs(config: Any) -> dict[str, Any]:
    """`Memory.from_config`'s dict as Memory(...) keyword arguments.

    Our keys: path, model, embeddings, config (a MemoryConfig or its fields as a dict), store.
    mem0's keys: ``llm`` ({"provider", "config": {"model"}}) becomes the chat model string
    ``"provider:model"``; ``history_db_path`` is the database path; ``version`` is accepted
    and ignored (results always read both ways). Anything else is refused by name.
    """
    from langmem_plus.config import MemoryConfig

    cfg = check_mapping("config", config)
    if cfg.get("history_db_path") is not None:
        if cfg.get("path") is not None:
            raise ValidationError("give either path or history_db_path, not both")
        cfg["path"] = cfg.pop("history_db_path")
    cfg.pop("history_db_path", None)
    version = cfg.pop("version", None)
    if version is not None and not isinstance(version, str):
        raise ValidationError(f"version must be a string such as 'v1.1', got {version!r}")
    if "llm" in cfg:
        if cfg.get("model") is not None:
            raise ValidationError("give either model or llm, not both")
        cfg["model"] = _llm_model(cfg.pop("llm"))
    bad = sorted(k for k in cfg if k not in _OUR_KEYS)
    if bad:
        raise ValidationError(
            f"unknown config keys {bad}; accepted: {sorted(_OUR_KEYS)}, llm, history_db_path, "
            "version (vector stores and embedders are configured on HybridStore)"
        )
    inner = cfg.get("config")
    if isinstance(inner, Mapping):
        try:
            cfg["config"] = MemoryConfig(**inner)
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"invalid config.config: {str(exc)[:300]}") from None
    return cfg


def _llm_model(llm: Any) -> str:
    llm = check_mapping("llm", llm)
    provider = llm.get("provider")
    model = check_mapping("llm.config", llm.get("config")).get("model")
    if not isinstance(provider, str) or not provider.strip():
        raise ValidationError("llm.provider must be a non-empty string (e.g. 'openai')")
    if not isinstance(model, str) or not model.strip():
        raise ValidationError("llm.config.model must be a non-empty string (e.g. 'gpt-4o-mini')")
    return f"{provider}:{model}"
