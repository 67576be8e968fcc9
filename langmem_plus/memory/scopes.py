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
    "call_user",
    "config_kwargs",
    "llm_model",
    "mem0_dict",
    "pick_id",
    "pick_limit",
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


def call_user(user_id: str | None, filters: Mapping[str, Any] | None) -> str:
    """The user a call is about: the `user_id` argument (mem0 1.x) or the ``user_id`` of
    `filters` (mem0 2.x); given both, they must agree."""
    flt = check_mapping("filters", filters)
    in_filter = flt.get("user_id")
    if in_filter is not None and not isinstance(in_filter, str):
        raise ValidationError(
            "filters user_id must be one user id (a string): a user's memories are its own "
            f"namespace, so operators such as {in_filter!r:.60} cannot span users"
        )
    if user_id is None and in_filter is None:
        raise ValidationError('give the user: user_id="..." or filters={"user_id": "..."}')
    if user_id is not None and in_filter is not None and in_filter != user_id:
        raise ValidationError("filter user_id differs from the user_id argument")
    return check_id("user_id", user_id if user_id is not None else in_filter)


def pick_limit(limit: int, top_k: int | None, default: int) -> int:
    """How many results: `limit` (mem0 1.x) or `top_k` (mem0 2.x); a `limit` other than the
    `default` and a different `top_k` are refused."""
    if top_k is None:
        return limit
    if limit != default and limit != top_k:
        raise ValidationError("give the number of results once: limit or top_k")
    return top_k


def translate_filters(
    filters: Mapping[str, Any] | None,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """mem0-style filters (1.x and 2.x) as store filters on the record.

    A key that names a record field filters that field (``{"category": "preference"}``),
    unless its value is a word the field cannot hold (``{"category": "food"}``): then, like a
    key that is no record field (``{"topic": "food"}``), it is looked up in `metadata`;
    ``{"metadata": {...}}`` names metadata keys explicitly. mem0 2.x's operators (``eq``,
    ``ne``, ``in``, ``nin``, ``gt``, ``gte``, ``lt``, ``lte``, ``contains``, ``icontains``),
    its wildcard ``"*"`` (the key is present) and its ``AND`` / ``OR`` / ``NOT`` groups
    become the store's (``$in``, ``$exists``, ``$or`` …); the store's own ``$`` spellings and
    dotted paths pass unchanged. An operator that is none of these is refused, never read as
    a value that matches nothing. `agent_id`/`run_id` (arguments or filter keys) become
    ``metadata.agent_id`` / ``metadata.run_id``. A `user_id` filter must equal the `user_id`
    argument (the user is the namespace, see `call_user`).
    """
    out: dict[str, Any] = {}
    for key, value in check_mapping("filters", filters).items():
        if key == "user_id":
            if value != user_id:
                raise ValidationError("filter user_id differs from the user_id argument")
            continue
        _merge(out, _condition(key, value))
    for name, scope in scope_metadata(agent_id, run_id).items():
        _merge(out, {f"metadata.{name}": scope})
    return out


_MEM0_OPS = frozenset({"eq", "ne", "in", "nin", "gt", "gte", "lt", "lte", "contains", "icontains"})
_GROUPS = {"AND": "$and", "OR": "$or", "NOT": "$not"}
_TIME_FIELDS = frozenset({"created_at", "updated_at", "timestamp"})


def _merge(out: dict[str, Any], cond: dict[str, Any]) -> None:
    """Add `cond` to `out`; two conditions on one key both hold (``$and``)."""
    for key, value in cond.items():
        if key in out and out[key] != value:
            out.setdefault("$and", []).append({key: value})
        else:
            out[key] = value


def _condition(key: Any, value: Any) -> dict[str, Any]:
    """One mem0 condition (a key and its value) as store conditions."""
    if not isinstance(key, str):
        raise ValidationError(f"filter keys must be strings, got {key!r:.80}")
    if key in _GROUPS:
        return {_GROUPS[key]: _group(key, value)}
    if key == "user_id":
        raise ValidationError(
            "user_id is the namespace: give it once, at the top of filters or as user_id="
        )
    if key in _TIME_FIELDS:
        raise ValidationError(
            f"{key} filters are not supported: search(time_range=(start, end)) narrows by time"
        )
    if key == "metadata" and isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for sub, cond in value.items():
            if not isinstance(sub, str) or sub.startswith("$"):
                raise ValidationError(f"metadata filter keys must be field names, got {sub!r:.80}")
            _merge(out, {f"metadata.{sub}": _value(f"metadata.{sub}", cond)})
        return out
    if key.startswith("$") or "." in key:
        return {key: value}  # the store's own spelling
    if key in SCOPE_KEYS:
        return {f"metadata.{key}": _value(key, value)}
    return {_filter_key(key, value): _value(key, value)}


def _group(name: str, value: Any) -> list[dict[str, Any]]:
    """The filters of an AND / OR / NOT group, each translated."""
    if isinstance(value, Mapping) and name == "NOT":
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise ValidationError(f"{name} takes a non-empty list of filters")
    out = []
    for f in value:
        if not isinstance(f, Mapping):
            raise ValidationError(f"each filter of {name} must be a dict, got {type(f).__name__}")
        sub: dict[str, Any] = {}
        for k, v in f.items():
            _merge(sub, _condition(k, v))
        out.append(sub)
    return out


def _value(key: str, value: Any) -> Any:
    """A condition's value: ``"*"`` is presence, an operator dict gets the store's spelling."""
    if isinstance(value, str) and value == "*":
        return {"$exists": True}
    if not isinstance(value, Mapping):
        return value
    out: dict[str, Any] = {}
    for op, arg in value.items():
        if isinstance(op, str) and op in _MEM0_OPS:
            out[f"${op}"] = arg
        elif isinstance(op, str) and op.startswith("$"):
            out[op] = arg  # the store's spelling; the store checks it
        else:
            raise ValidationError(
                f"unknown filter operator {op!r:.60} on {key!r:.60}; use one of "
                f"{sorted(_MEM0_OPS)} (or {{'metadata': {{...}}}} / a dotted path such as "
                f"'{key}.{op}' for a nested value)"
            )
    return out


def _filter_key(key: str, value: Any) -> str:
    if key in _RECORD_FIELDS:
        vocab = FIELD_WORDS.get(key)
        if vocab is None or all(w in vocab for w in _words(value)):
            return key
    return f"metadata.{key}"


def _words(value: Any) -> list[Any]:
    """The plain values a condition compares with (an operator's argument, a list's items)."""
    if isinstance(value, Mapping):
        return [w for arg in value.values() for w in _words(arg)]
    if isinstance(value, (list, tuple)):
        return list(value)
    return [] if isinstance(value, str) and value == "*" else [value]


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
    mem0's keys: ``llm`` ({"provider", "config": {"model", ...}}, see `llm_model`);
    ``history_db_path`` is the database path; ``version`` is accepted and ignored (results
    always read both ways). Anything else is refused by name.
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
    llm = cfg.pop("llm", None)
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
    if llm is not None:
        if cfg.get("model") is not None:
            raise ValidationError("give either model or llm, not both")
        given = cfg.get("config")
        cfg["model"] = llm_model(llm, given if isinstance(given, MemoryConfig) else None)
    return cfg


# mem0's `llm.config` keys that are honoured; a base URL key only with its provider
_LLM_SETTINGS = ("temperature", "max_tokens", "top_p")
_BASE_URL_KEYS = {
    "openai": "openai_base_url",
    "anthropic": "anthropic_base_url",
    "ollama": "ollama_base_url",
    "vllm": "vllm_base_url",
    "lmstudio": "lmstudio_base_url",
}
# local servers reached through their OpenAI-compatible API: (default base URL, path to add)
_OPENAI_COMPATIBLE = {
    "ollama": ("http://localhost:11434", "/v1"),
    "vllm": ("http://localhost:8000/v1", ""),
    "lmstudio": ("http://localhost:1234/v1", ""),
}


def llm_model(llm: Any, config: Any = None) -> Any:
    """mem0's ``llm`` config as our model: ``"provider:model"`` when that is all it says;
    otherwise a model built now (no client retries, the request timeout of `config`) with
    the settings it gives — ``api_key``, ``temperature``, ``max_tokens``, ``top_p`` and the
    provider's base URL (``openai_base_url``, ``anthropic_base_url``; ``ollama_base_url``,
    ``vllm_base_url`` and ``lmstudio_base_url`` reach those servers through their
    OpenAI-compatible API, so providers ollama, vllm and lmstudio need no extra package).
    Any other key, or a base URL of another provider, is refused by name."""
    from langmem_plus.processors.model.structured import build_model

    provider, model, opts, own_url = _checked_llm(llm)
    kwargs = {k: opts[k] for k in _LLM_SETTINGS if opts.get(k) is not None}
    if opts.get("api_key") is not None:
        kwargs["api_key"] = opts["api_key"]
    base_url = opts.get(own_url) if own_url else None
    if provider in _OPENAI_COMPATIBLE:
        default, path = _OPENAI_COMPATIBLE[provider]
        url = str(base_url or default).rstrip("/")
        kwargs["base_url"] = url if not path or url.endswith(path) else url + path
        kwargs.setdefault("api_key", provider)  # these servers take any key
        return build_model(f"openai:{model}", config, **kwargs)
    if base_url is not None:
        kwargs["base_url"] = base_url
    if not kwargs:
        return f"{provider}:{model}"
    try:
        return build_model(f"{provider}:{model}", config, **kwargs)
    except ImportError as exc:
        raise ValidationError(f"llm provider {provider!r} cannot load: {exc}") from None


def _checked_llm(llm: Any) -> tuple[str, str, dict[str, Any], str | None]:
    """mem0's ``llm`` config checked key by key: its provider, model, remaining options and
    the provider's own base-URL key (None when it has none)."""
    llm = check_mapping("llm", llm)
    extra = sorted(k for k in llm if k not in ("provider", "config"))
    if extra:
        raise ValidationError(f"unknown llm keys {extra}; accepted: provider, config")
    provider = llm.get("provider")
    opts = check_mapping("llm.config", llm.get("config"))
    model = opts.pop("model", None)
    if not isinstance(provider, str) or not provider.strip():
        raise ValidationError("llm.provider must be a non-empty string (e.g. 'openai')")
    if not isinstance(model, str) or not model.strip():
        raise ValidationError("llm.config.model must be a non-empty string (e.g. 'gpt-4o-mini')")
    own_url = _BASE_URL_KEYS.get(provider)
    urls = sorted(k for k in opts if k.endswith("_base_url") and k != own_url)
    if urls:
        raise ValidationError(
            f"llm.config {urls} do not apply to provider {provider!r}"
            + (f"; its base URL key is {own_url!r}" if own_url else "")
        )
    known = {*_LLM_SETTINGS, "api_key", *([own_url] if own_url else [])}
    bad = sorted(k for k in opts if k not in known)
    if bad:
        raise ValidationError(
            f"llm.config keys {bad} are not supported; accepted: model, {', '.join(sorted(known))}"
        )
    return provider, model, opts, own_url
