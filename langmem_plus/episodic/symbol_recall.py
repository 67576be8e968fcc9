"""Coding recall through the symbol index (SPEC R-PROC symbol extractor, seed 002).

Every logged turn's code symbols (functions, classes, paths, error types) go to the
conversation log's symbol index. With the ``coding`` score profile, recall looks the query's
symbols up there: the episodes holding those turns, the turns' own index entries and the
rolling summaries naming the symbols join the search candidates, ranked by the same store
search restricted to those sessions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.store.base import BaseStore

from langmem_plus.episodic.conversation_log import ConversationLog
from langmem_plus.text import extract_symbols

__all__ = ["join_candidates", "symbol_candidates"]

_LOOKUP_LIMIT = 50  # symbol-index rows read per query
_MAX_SESSIONS = 5  # sessions searched per query, best symbol relevance first


def symbol_candidates(
    store: BaseStore,
    log: ConversationLog,
    user_id: str,
    namespace: tuple[str, ...],
    query: str,
    *,
    limit: int,
    filter: Mapping[str, Any] | None = None,
    time_range: tuple[Any, Any] | None = None,
    view: Mapping[str, Any] | None = None,
) -> list[Any]:
    """Items of `namespace` tied to the turns whose symbols `query` names: episodes holding
    one of those turns (``metadata.turn_ids``), a turn's own index entry (``turn_id``), or a
    summary listing one of the symbols. Each comes from the store's search for `query`
    restricted to the turns' sessions (and `filter`, and `view`: the versions shown), so it
    carries the store's score."""
    symbols = extract_symbols(query)
    if not symbols:
        return []
    rows = log.find_symbols(user_id, symbols, limit=_LOOKUP_LIMIT)
    if not rows:
        return []
    turn_ids = {int(r["turn_id"]) for r in rows}
    sessions = list(dict.fromkeys(str(r["session_id"]) for r in rows))[:_MAX_SESSIONS]
    wanted = {s.lower() for s in symbols}
    kwargs: dict[str, Any] = {} if time_range is None else {"time_range": time_range}
    kwargs.update({k: v for k, v in (view or {}).items() if v})  # HybridStore's versions
    out: list[Any] = []
    for sid in sessions:
        flt = {"session_id": sid, **(filter or {})}
        found = store.search(namespace, query=query, filter=flt, limit=limit, **kwargs)
        out += [it for it in found if _ties(it.value, turn_ids, wanted)]
    return out


def _ties(value: Any, turn_ids: set[int], symbols: set[str]) -> bool:
    """Whether a stored value holds one of `turn_ids` or (a summary) names one of `symbols`."""
    if not isinstance(value, Mapping):
        return False
    meta = value.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    held = [*(meta.get("turn_ids") or []), value.get("turn_id")]
    if any(isinstance(t, int) and t in turn_ids for t in held):
        return True
    named = value.get("symbols") if value.get("is_summary") else None
    return isinstance(named, list) and any(str(s).lower() in symbols for s in named)


def join_candidates(found: Sequence[Any], extra: Sequence[Any]) -> list[Any]:
    """`found` plus the `extra` items it lacks (same namespace and key), best score first."""
    seen = {(tuple(it.namespace), it.key) for it in found}
    out = list(found)
    for it in extra:
        key = (tuple(it.namespace), it.key)
        if key not in seen:
            seen.add(key)
            out.append(it)
    return sorted(out, key=lambda it: -float(getattr(it, "score", None) or 0.0))
