"""Memory and AsyncMemory: the mem0-style facade over `HybridStore` (SPEC R-API).

A user's memories live in the namespace ``("memories", user_id)``; conversation turns and
rolling summaries are kept in the conversation table and indexed for recall under
``("conversations", user_id)``. `AsyncMemory` runs the same methods in a worker thread, so
the logic is written once.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp
from pydantic import BaseModel, Field, computed_field

from langmem_plus._memory_checks import (
    SETTABLE,
    check_id,
    check_int,
    check_label,
    check_mapping,
    check_time,
    make_record,
    normalize_messages,
    record_of,
    with_metadata,
)
from langmem_plus._memory_scopes import (
    config_kwargs,
    mem0_dict,
    pick_id,
    scope_metadata,
    translate_filters,
)
from langmem_plus._memory_turns import ConversationIndex
from langmem_plus.config import MemoryConfig
from langmem_plus.costs import CostCallback, CostTimer, TurnCost, check_on_cost, deliver
from langmem_plus.episodes import EpisodeKeeper, current_view, split_exchanges
from langmem_plus.errors import MemoryNotFoundError, ValidationError
from langmem_plus.namespaces import MEMORY_ROOT, unescape_label, user_namespace
from langmem_plus.records import ConversationTurn, MemoryRecord, UserProfile, utcnow
from langmem_plus.store import HybridStore

__all__ = ["AsyncMemory", "Memory", "MemoryPage", "SearchHit", "as_mem0"]

MAX_LIMIT = 1000
TimeRangeArg = (
    str | tuple[Any, Any] | list[Any] | Mapping[str, Any] | None
)  # phrase, "auto", (start, end) or {"start": ..., "end": ...}


class SearchHit(BaseModel):
    """One search result: the memory, its final score and each component of that score."""

    id: str
    text: str
    score: float
    components: dict[str, Any] = Field(default_factory=dict)
    memory: MemoryRecord

    def to_dict(self) -> dict[str, Any]:
        """This hit in mem0's shape: id, memory (the text), score, metadata, scopes, times."""
        return mem0_dict(self.memory, self.score)

    def __getitem__(self, key: str) -> Any:
        """mem0-style reading: ``hit["memory"]`` is the text, ``hit["id"]``, ``hit["score"]``."""
        return self.to_dict()[key]

    def get(self, key: str, default: Any = None) -> Any:
        """Like ``dict.get`` on `to_dict()`."""
        return self.to_dict().get(key, default)


class MemoryPage(BaseModel):
    """One page of a user's memories, oldest first, with the total for paging."""

    items: list[MemoryRecord]
    total: int
    limit: int
    offset: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def next_offset(self) -> int | None:
        """Offset of the next page, or None on the last one."""
        nxt = self.offset + len(self.items)
        return nxt if nxt < self.total else None

    def __getitem__(self, key: str) -> Any:
        """mem0-style reading: ``page["results"]`` is the list of memory dicts."""
        if key != "results":
            raise KeyError(key)
        return [mem0_dict(r) for r in self.items]


def as_mem0(result: Any) -> Any:
    """A `Memory` result in mem0's shape: hits, records and pages as ``{"results": [...]}``
    of dicts, one record as a dict, add's ids as ``{"results": [{"id": ...}]}``."""
    if isinstance(result, MemoryRecord):
        return mem0_dict(result)
    if isinstance(result, SearchHit):
        return result.to_dict()
    if isinstance(result, MemoryPage):
        return {"results": result["results"]}
    if isinstance(result, (list, tuple)):
        out = []
        for r in result:
            if isinstance(r, str):
                out.append({"id": r})
            elif isinstance(r, (MemoryRecord, SearchHit)):
                out.append(as_mem0(r))
            else:
                raise ValidationError(f"cannot show {type(r).__name__} in mem0's shape")
        return {"results": out}
    raise ValidationError(f"cannot show {type(result).__name__} in mem0's shape")


def _record_events(rec: MemoryRecord) -> list[dict[str, Any]]:
    """ADD, UPDATE and SUPERSEDED events of one record (its `metadata.updates` log)."""
    updates = rec.metadata.get("updates")
    entries = [u for u in updates if isinstance(u, Mapping)] if isinstance(updates, list) else []
    first_text = rec.text
    for u in entries:
        if isinstance(u.get("old_text"), str):
            first_text = u["old_text"]
            break
    start = rec.valid_from or rec.created_at
    out: list[dict[str, Any]] = [
        {
            "event": "ADD",
            "id": rec.id,
            "at": start.isoformat(),
            "text": first_text,
            "source_ids": list(rec.source_ids),
        }
    ]
    for u in entries:
        event = str(u.get("event", "UPDATE"))
        entry = {"event": event, "id": rec.id, "at": u.get("at") or u.get("time")}
        if event == "SUPERSEDED":
            entry.update(by=u.get("by"), text=rec.text, new_text=u.get("text"))
        else:
            entry.update(old_text=u.get("old_text"), text=u.get("new_text", u.get("text")))
        entry["detail"] = dict(u)
        out.append(entry)
    return out


# ---------------------------------------------------------------------------- Memory
class Memory:
    """Long-term memory for one application, many users: add, search, manage, export.

    `Memory("memory.db")` persists to SQLite; `Memory()` keeps everything in memory.
    `model` (a LangChain chat model or `init_chat_model` string) drives the processors behind
    `add(..., infer=True)` and `summarize`; without one they run their offline rules.
    `embeddings=False` turns vectors off (keyword recall only).
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        store: HybridStore | None = None,
        model: Any = None,
        config: MemoryConfig | None = None,
        embeddings: Embeddings | Literal[False] | None = None,
        on_cost: CostCallback | None = None,
    ) -> None:
        if store is not None and path is not None:
            raise ValidationError("give either path or store, not both")
        if store is not None and embeddings is not None:
            raise ValidationError("embeddings belong to the store: configure them on the store")
        if store is not None and not isinstance(store, HybridStore):
            raise ValidationError(f"store must be a HybridStore, got {type(store).__name__}")
        if config is not None and not isinstance(config, MemoryConfig):
            raise ValidationError(f"config must be a MemoryConfig, got {type(config).__name__}")
        self._owns_store = store is None
        if store is None:
            index: Any = (
                False
                if embeddings is False
                else (None if embeddings is None else {"embed": embeddings})
            )
            store = HybridStore(path, index=index, config=config or MemoryConfig())
        self.store: HybridStore = store
        self.config: MemoryConfig = config or store.config
        self.model = model
        self.turns = ConversationIndex(self.store, self.config, model)
        self._episodes: EpisodeKeeper | None = None
        self.on_cost = check_on_cost(on_cost)
        self.last_cost: TurnCost | None = None  # what the last `add` cost, per stage

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Memory:
        """A Memory from a dict: our keys (path, model, embeddings, config, store) or mem0's
        (``llm``: provider and model, ``history_db_path``, ``version``); others are refused."""
        return cls(**config_kwargs(config))

    def close(self) -> None:
        """Close the store if this Memory opened it (a passed-in store stays open)."""
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def namespace(user_id: str) -> tuple[str, str]:
        """The namespace of a user's memories: ``("memories", <user_id escaped>)``.

        The id is escaped, never replaced ('.' as ``%2E``), so two users never share one.
        """
        return user_namespace(user_id)

    # ------------------------------------------------------------------ add
    def add(
        self,
        messages: Any,
        user_id: str,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = True,
        timestamp: datetime | str | float | None = None,
        *,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[str]:
        """Remember `messages` (text, a message or a list); returns the ids created or changed.

        `infer=True` keeps every exchange (a user turn and its reply) verbatim as an episodic
        memory and derives facts from it — by the chat model when one is configured, by
        precision-first rules otherwise — each with `source_ids` (its episodes); a fact that a
        later statement replaces is closed (`valid_to`, `superseded_by`), never overwritten.
        `infer=False` stores each user/assistant message as given. `timestamp` is when the
        messages were said (imported history keeps its dates; recency is computed from it).
        With `session_id` the turns are also logged in the conversation table. Record fields
        in `metadata` (category, tags, who, confidence, …) set the field; the rest, and a word a
        field cannot hold (``{"category": "food"}``), is kept in `metadata`. mem0's `agent_id`
        and `run_id` scope the memories: kept as ``metadata.agent_id`` / ``metadata.run_id``.
        What the call cost (ms, model calls, tokens per stage) becomes `last_cost` (a
        `TurnCost`), goes to `on_cost` and is persisted for ``langmem-plus stats --costs``.
        """
        self.namespace(user_id)
        msgs = normalize_messages(messages)
        meta = {**check_mapping("metadata", metadata), **scope_metadata(agent_id, run_id)}
        with_metadata(MemoryRecord(text="probe"), meta)  # reject bad fields before writing
        sid = None if session_id is None else check_id("session_id", session_id)
        if not isinstance(infer, bool):
            raise ValidationError("infer must be True or False")
        at = check_time("timestamp", timestamp)
        timer = CostTimer()
        if not infer:
            with timer.stage("store"):
                if sid is not None:
                    self._log(user_id, sid, msgs, at, index=True)
                ids = self._add_raw(self.namespace(user_id), msgs, sid, meta, at)
        else:
            ids = self._keep(user_id, msgs, sid, meta, at, log=sid is not None, timer=timer)
        self.last_cost = timer.finish(user_id=user_id, session_id=sid, phase="add", at=utcnow())
        deliver(self.last_cost, on_cost=self.on_cost, store=self.store)
        return ids

    def _log(
        self,
        user_id: str,
        sid: str,
        msgs: list[dict[str, str]],
        at: datetime | None,
        *,
        index: bool,
    ) -> list[int]:
        ids = []
        for m in msgs:
            if m["text"].strip():
                turn = self.turns.add_turn(
                    user_id, sid, m["role"], m["text"], created_at=at, index=index
                )
                ids.append(turn.id if turn.id is not None else -1)
        return ids

    def _add_raw(
        self,
        ns: tuple[str, str],
        msgs: list[dict[str, str]],
        sid: str | None,
        meta: dict[str, Any],
        at: datetime | None,
    ) -> list[str]:
        from langmem_plus.text import extract_symbols

        records = []
        when = {} if at is None else {"created_at": at, "updated_at": at, "occurred_at": at}
        for m in msgs:
            if m["role"] not in ("user", "assistant") or not m["text"].strip():
                continue
            rec = make_record(
                namespace=ns,
                text=m["text"],
                who=m["role"],
                session_id=sid,
                symbols=extract_symbols(m["text"]),
                source="user_stated" if m["role"] == "user" else "inferred",
                **when,
            )
            records.append(with_metadata(rec, meta))
        self.store.batch([PutOp(ns, r.id, r.to_value()) for r in records])
        if at is not None:
            self.store.restore_item_stats([(ns, r.id, at, at, None, 0) for r in records])
        return [r.id for r in records]

    def _keeper(self) -> EpisodeKeeper:
        if self._episodes is None:
            deriver = None
            if self.model is not None:
                from langmem_plus import processors

                cls = getattr(processors, "FactDeriver", None)
                deriver = cls(self.model, self.config) if cls is not None else None
            self._episodes = EpisodeKeeper(self.config, deriver)
        return self._episodes

    def _keep(
        self,
        user_id: str,
        msgs: list[dict[str, str]],
        sid: str | None,
        meta: dict[str, Any],
        at: datetime | None,
        *,
        log: bool,
        timer: CostTimer,
    ) -> list[str]:
        """Each exchange of `msgs` becomes an episode; facts are derived and superseded
        (timed as stage ``knowledge``, with the FactDeriver's calls and tokens)."""
        ns = self.namespace(user_id)
        context = self._last_reply(user_id, sid) if sid is not None else None
        ids: list[str] = []
        for exchange in split_exchanges(msgs):
            turn_ids = self._log(user_id, sid, exchange, at, index=False) if log and sid else []
            with timer.stage("knowledge", meter=False) as tally:
                kept = self._keeper().keep(
                    self.store,
                    ns,
                    exchange,
                    session_id=sid,
                    occurred_at=at or utcnow(),
                    context=context,
                    turn_ids=turn_ids,
                )
                tally.add_usage(kept.cost)
            ids += kept.ids
            replies = [t["text"] for t in exchange if t["role"] == "assistant"]
            context = replies[-1] if replies else context
        if meta:
            changed = []
            for i in ids:
                item = self.store.get(ns, i)
                if item is not None:
                    changed.append(with_metadata(record_of(item), meta))
            self.store.batch(
                [PutOp(ns, r.id, r.to_value(compact=r.kind == "episodic")) for r in changed]
            )
            # a put stamps the write time: keep each record's own (recency is computed from it)
            self.store.restore_item_stats(
                [
                    (ns, r.id, r.created_at, r.updated_at, r.last_accessed, r.access_count)
                    for r in changed
                ]
            )
        return list(dict.fromkeys(ids))

    def _last_reply(self, user_id: str, sid: str) -> str | None:
        """The last assistant turn logged in the session (what an untied correction answers)."""
        for turn in reversed(self.store.conversations.turns(user_id, sid)[-4:]):
            if turn.role == "assistant":
                return turn.content
        return None

    # ------------------------------------------------------------------ read
    def search(
        self,
        query: str,
        user_id: str,
        limit: int = 5,
        filters: Mapping[str, Any] | None = None,
        time_range: TimeRangeArg = None,
        *,
        include_superseded: bool = False,
        as_of: datetime | str | float | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        threshold: float | None = None,
    ) -> list[SearchHit]:
        """Memories of `user_id` most relevant to `query`, best first, each with its score parts.

        Episodes (exchanges kept verbatim) and current facts; a superseded fact is left out
        unless `include_superseded` (then marked, and ranked lower), and `as_of` shows what
        was known and true at that time. An episode whose facts were all superseded ranks
        lower (`components["superseded"]`). `filters` matches record fields
        (``{"category": "preference"}``); `time_range` is a ``(start, end)`` pair (datetimes,
        ISO strings or epoch seconds; None = open), a time phrase (``"昨天"``, ``"last week"``)
        or ``"auto"`` to take the phrase from the query. An empty result is an empty list.
        A filter key that is no record field, or a word the field cannot hold, is looked up in
        `metadata` (``{"topic": "food"}`` matches ``metadata.topic``); `agent_id` / `run_id`
        keep one agent's or run's memories; `threshold` drops hits scoring below it. Hits
        also read as mem0's dicts (``hit["memory"]``; `as_mem0` for ``{"results": [...]}``).
        """
        ns = self.namespace(user_id)
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query must be a non-empty string")
        check_int("limit", limit, 1, MAX_LIMIT)
        if not isinstance(include_superseded, bool):
            raise ValidationError("include_superseded must be True or False")
        when = check_time("as_of", as_of)
        flt = translate_filters(filters, user_id=user_id, agent_id=agent_id, run_id=run_id) or None
        if threshold is not None and (
            isinstance(threshold, bool)
            or not isinstance(threshold, (int, float))
            or not math.isfinite(threshold)
        ):
            raise ValidationError(f"threshold must be a finite number, got {threshold!r}")
        query, tr = self.turns.time_range(time_range, query, user_id)
        fetch = min(MAX_LIMIT, limit * 2 + 10)
        found = self.store.search(ns, query=query, filter=flt, limit=fetch, time_range=tr)
        cfg = self.store.config
        items = current_view(
            found,
            limit=limit,
            include_superseded=include_superseded,
            as_of=when,
            recency=(cfg.w_recency, cfg.recency_half_life_days),
        )
        hits = []
        for it in items:
            rec = record_of(it)
            hits.append(
                SearchHit(
                    id=it.key,
                    text=rec.text,
                    score=float(it.score or 0.0),
                    components=dict(getattr(it, "components", {}) or {}),
                    memory=rec,
                )
            )
        if threshold is not None:
            hits = [h for h in hits if h.score >= threshold]
        return hits

    def get(
        self, id: str | None = None, user_id: str | None = None, *, memory_id: str | None = None
    ) -> MemoryRecord:
        """The memory `id` (mem0's `memory_id`); raises MemoryNotFoundError when absent.

        Ids are unique across users, so `user_id` is optional; given, it must be the owner.
        """
        mid = pick_id(id, memory_id)
        ns = self._owner(mid) if user_id is None else self.namespace(user_id)
        item = self.store.get(ns, mid)
        if item is None:
            who = "" if user_id is None else f" for user {user_id!r}"
            raise MemoryNotFoundError(f"no memory {mid!r}{who}")
        return record_of(item)

    def _owner(self, mid: str) -> tuple[str, str]:
        """The user namespace holding memory `mid` (one indexed lookup across all users)."""
        found = [ns for ns in self.store.locate(mid, (MEMORY_ROOT,)) if len(ns) == 2]
        if not found:
            raise MemoryNotFoundError(f"no memory {mid!r}")
        if len(found) > 1:
            raise ValidationError(f"memory id {mid!r} exists for several users: give user_id")
        return (found[0][0], found[0][1])

    def get_all(
        self,
        user_id: str,
        limit: int = 100,
        offset: int = 0,
        *,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> MemoryPage:
        """One page of the user's memories (oldest first) and the total count.

        `agent_id`, `run_id` and `filters` (as in `search`) narrow it to matching memories.
        """
        ns = self.namespace(user_id)
        check_int("limit", limit, 1, MAX_LIMIT)
        check_int("offset", offset, 0, 10**12)
        flt = translate_filters(filters, user_id=user_id, agent_id=agent_id, run_id=run_id)
        if flt:
            matching = [record_of(it) for it in self._matching(ns, flt)]
            return MemoryPage(
                items=matching[offset : offset + limit],
                total=len(matching),
                limit=limit,
                offset=offset,
            )
        items = self.store.search(ns, limit=limit + 1, offset=offset)
        own = [record_of(it) for it in items if tuple(it.namespace) == ns][:limit]
        return MemoryPage(items=own, total=self.store.count(ns), limit=limit, offset=offset)

    def _matching(self, ns: tuple[str, ...], flt: dict[str, Any]) -> list[Any]:
        """Every item of namespace `ns` (not below it) matching store filter `flt`, oldest first."""
        out: list[Any] = []
        offset = 0
        while True:
            page = self.store.search(ns, filter=flt, limit=MAX_LIMIT, offset=offset)
            out += [it for it in page if tuple(it.namespace) == ns]
            if len(page) < MAX_LIMIT:
                return out
            offset += MAX_LIMIT

    def history(
        self, id: str | None = None, user_id: str | None = None, *, memory_id: str | None = None
    ) -> list[dict[str, Any]]:
        """How memory `id` came to be, oldest first: for a fact, the whole validity chain.

        Each fact of the chain (the ones it replaced, itself, the ones that replaced it) gives
        an ``ADD`` event with its sources and validity; each closing a ``SUPERSEDED`` event
        naming the newer fact; changes made through `update` follow as ``UPDATE`` events.
        """
        rec = self.get(id, user_id, memory_id=memory_id)
        chain = self._chain(rec)
        out: list[dict[str, Any]] = []
        for fact in chain:
            out += _record_events(fact)
        out.sort(key=lambda e: e.get("at") or "")
        return out

    def _chain(self, rec: MemoryRecord) -> list[MemoryRecord]:
        """The facts linked to `rec` by supersession, oldest first (cycles cannot occur)."""
        ns = rec.namespace
        seen = {rec.id}
        older: list[MemoryRecord] = []
        frontier = [rec.id]
        while frontier:
            nxt = []
            for fid in frontier:
                for it in self.store.search(ns, filter={"superseded_by": fid}, limit=100):
                    if it.key not in seen:
                        seen.add(it.key)
                        prev = record_of(it)
                        older.append(prev)
                        nxt.append(prev.id)
            frontier = nxt
        newer: list[MemoryRecord] = []
        cur = rec
        while cur.superseded_by and cur.superseded_by not in seen:
            seen.add(cur.superseded_by)
            item = self.store.get(ns, cur.superseded_by)
            if item is None:
                break
            cur = record_of(item)
            newer.append(cur)
        older.sort(key=lambda r: r.valid_from or r.created_at)
        return [*older, rec, *newer]

    # ------------------------------------------------------------------ write
    def update(
        self,
        id: str | None = None,
        user_id: str | None = None,
        text: str | None = None,
        data: str | Mapping[str, Any] | None = None,
        *,
        memory_id: str | None = None,
    ) -> MemoryRecord:
        """Change a memory's text and/or fields; the change is logged in `metadata.updates`.

        `data` is a dict of fields, or the new text as in mem0 (``update(id, data="text")``).
        """
        id = pick_id(id, memory_id)
        if isinstance(data, str):
            if text is not None:
                raise ValidationError("give the new text once: text or data")
            text, data = data, None
        rec = self.get(id, user_id)
        fields = check_mapping("data", data)
        if text is None and not fields:
            raise ValidationError("give text or data to update")
        if text is not None and (not isinstance(text, str) or not text.strip()):
            raise ValidationError("text must be a non-empty string")
        bad = sorted(set(fields) - SETTABLE)
        if bad:
            raise ValidationError(f"cannot update {bad}; settable: {sorted(SETTABLE)}")
        if text is not None:
            fields["text"] = text
        now = utcnow()
        meta = dict(rec.metadata)
        if isinstance(fields.get("metadata"), Mapping):
            meta.update(fields.pop("metadata"))
        elif "metadata" in fields:
            raise ValidationError("data.metadata must be a dict")
        entry: dict[str, Any] = {"event": "UPDATE", "at": now.isoformat(), "source": "api"}
        if "text" in fields and fields["text"] != rec.text:
            from langmem_plus.text import extract_symbols

            entry.update(old_text=rec.text, new_text=fields["text"])
            fields.setdefault("symbols", extract_symbols(fields["text"]))
        changed = sorted(k for k in fields if k not in ("text", "symbols"))
        if changed:
            entry["fields"] = changed
        meta["updates"] = [*(meta.get("updates") or []), entry]
        new = make_record(**{**rec.model_dump(), **fields, "metadata": meta, "updated_at": now})
        self.store.put(rec.namespace, rec.id, new.to_value())
        item = self.store.get(rec.namespace, rec.id)
        if item is None:  # deleted meanwhile by another writer
            raise MemoryNotFoundError(f"no memory {id!r}")
        return record_of(item)

    def delete(
        self, id: str | None = None, user_id: str | None = None, *, memory_id: str | None = None
    ) -> None:
        """Delete memory `id` from SQLite, the keyword index and the vectors."""
        rec = self.get(id, user_id, memory_id=memory_id)
        self.store.delete(rec.namespace, rec.id)

    def delete_all(
        self,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, int]:
        """Delete the memories of a user, an agent or a run (mem0's `delete_all`).

        Scopes combine: ``delete_all(user_id="alice", run_id="r1")`` deletes only alice's
        memories of run r1. Without `user_id` every user's memories in the scope go.
        Conversations and profiles stay (`reset` deletes those too).
        """
        scopes = scope_metadata(agent_id, run_id)
        if user_id is None and not scopes:
            raise ValidationError("give user_id, agent_id or run_id (delete_all deletes a scope)")
        if user_id is not None:
            spaces: list[tuple[str, ...]] = [self.namespace(user_id)]
        else:
            spaces = [
                ns
                for ns in self.store.list_namespaces(prefix=(MEMORY_ROOT,), limit=2**62)
                if len(ns) == 2
            ]
        flt = translate_filters(None, agent_id=agent_id, run_id=run_id)
        keys: list[tuple[tuple[str, ...], str]] = []
        for ns in spaces:
            if flt:
                keys += [(ns, it.key) for it in self._matching(ns, flt)]
            else:
                keys += [(n, k) for n, k in self.store.keys(ns, exact=True)]
        self._delete_keys(keys)
        return {"memories_deleted": len(keys)}

    def reset(self, user_id: str, *, keep_conversations: bool = False) -> dict[str, int]:
        """Delete everything of a user: memories, and (unless kept) turns, summaries, profile."""
        ns = self.namespace(user_id)
        keys = self.store.keys(ns)
        self._delete_keys(keys)
        counts = {"memories_deleted": len(keys)}
        if not keep_conversations:
            counts.update(self.turns.delete_user(user_id))
        return counts

    def _delete_keys(self, keys: Sequence[tuple[tuple[str, ...], str]]) -> None:
        for i in range(0, len(keys), 500):
            self.store.batch([PutOp(ns, key, None) for ns, key in keys[i : i + 500]])

    def vacuum(self) -> int:
        """Reclaim space and purge deleted text from the database file; returns bytes freed."""
        return self.store.vacuum()

    # ------------------------------------------------------------------ lifecycle jobs
    def users(self) -> list[str]:
        """Every user with memories, turns or a profile."""
        with_mem = [
            unescape_label(ns[1])
            for ns in self.store.list_namespaces(prefix=(MEMORY_ROOT,), limit=2**62)
            if len(ns) > 1
        ]
        return sorted(set(with_mem) | set(self.store.conversations.users()))

    def consolidate(
        self, user_id: str | None = None, *, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, Any]:
        """Merge near-duplicate episodes and separate similar ones (SPEC R-LIFE), per user."""
        from langmem_plus.lifecycle import consolidate

        users = [check_label("user_id", user_id)] if user_id is not None else self.users()
        out: dict[str, Any] = {}
        for i, uid in enumerate(users, 1):
            report = consolidate(
                self.store, self.namespace(uid), embeddings=self.store.embeddings,
                config=self.config,
            )  # fmt: skip
            out[uid] = _as_dict(report)
            if progress:
                progress(i, len(users))
        return out

    def stats(self) -> dict[str, Any]:
        """Store counts and sizes plus users, sessions and turns."""
        conv = self.store.conversations
        sessions = conv.sessions()
        return {
            **self.store.stats(),
            "users": len(self.users()),
            "sessions": len(sessions),
            "turns": sum(s["turn_count"] for s in sessions),
        }

    # ------------------------------------------------------------------ profile
    def get_profile(self, user_id: str) -> UserProfile:
        """The user's profile document (empty sections when none was written yet)."""
        uid = check_label("user_id", user_id)
        return self.store.conversations.get_profile(uid) or UserProfile(user_id=uid)

    def put_profile(self, user_id: str, **sections: str | None) -> UserProfile:
        """Edit profile sections by hand (reply_style, language_habits, background).

        Sections given here are marked as edited by the user, so the profile writer never
        silently overwrites them.
        """
        return self.turns.edit_profile(self.get_profile(user_id), sections)

    # ------------------------------------------------------------------ conversations
    def add_turn(
        self,
        user_id: str,
        session_id: str,
        role: str,
        content: str,
        created_at: datetime | None = None,
    ) -> ConversationTurn:
        """Log one conversation turn and index it for `recall`."""
        return self.turns.add_turn(user_id, session_id, role, content, created_at=created_at)

    def recall(
        self,
        query: str,
        user_id: str,
        limit: int = 5,
        session_id: str | None = None,
        time_range: TimeRangeArg = None,
    ) -> dict[str, Any]:
        """Relevant past turns and summaries: `results` (each with its relevance), `total_searched`, `latency_ms`."""
        return self.turns.recall(
            query, user_id, limit=limit, session_id=session_id, time_range=time_range
        )

    def summarize(
        self,
        user_id: str,
        session_id: str,
        from_turn: int | None = None,
        to_turn: int | None = None,
    ) -> dict[str, Any]:
        """Summarise turns `from_turn..to_turn` (1-based positions) of a conversation."""
        return self.turns.summarize(user_id, session_id, from_turn, to_turn)

    def cleanup(
        self,
        *,
        user_id: str | None = None,
        older_than: timedelta | float | None = None,
        session_id: str | None = None,
        everything: bool = False,
    ) -> dict[str, Any]:
        """Delete conversations older than a span (days), one conversation, or everything.

        Counts what went and reports `space_freed_kb` after a VACUUM.
        """
        before = self.store.db_bytes()
        if everything and user_id is not None:
            counts: dict[str, Any] = self.reset(user_id)
        elif everything:
            keys = self.store.keys(())
            counts = {"memories_deleted": sum(1 for ns, _ in keys if ns[0] == MEMORY_ROOT)}
            self._delete_keys(keys)
            counts.update(self.turns.delete_all())
        else:
            counts = self.turns.cleanup(
                user_id=user_id, older_than=older_than, session_id=session_id
            )
        self.store.vacuum()
        counts["space_freed_kb"] = max(0, before - self.store.db_bytes()) // 1024
        return counts

    # ------------------------------------------------------------------ export / import
    def export(self, user_id: str | None = None, format: Literal["json", "jsonl"] = "json") -> str:
        """Everything (or one user's data) as JSON or JSON Lines; `import_` restores it exactly."""
        from langmem_plus._memory_transfer import export

        return export(self, user_id, format)

    def import_(
        self, data: str | bytes | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *, progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, int]:  # fmt: skip
        """Load an `export` (JSON text, JSON Lines text or the parsed dict); returns counts."""
        from langmem_plus._memory_transfer import import_data

        return import_data(self, data, progress=progress)

    def import_logs(
        self,
        directory: str | Path,
        user_id: str = "default",
        *,
        infer: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, int]:
        """Import plain conversation logs (``role: text`` lines, JSON or JSONL), one session per
        file; with `infer=True` memories are extracted from each session too."""
        from langmem_plus._memory_transfer import import_logs

        return import_logs(self, directory, user_id, infer=infer, progress=progress)


def _as_dict(report: Any) -> Any:
    if isinstance(report, BaseModel):
        return report.model_dump(mode="json")
    if hasattr(report, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(report)
    if isinstance(report, Mapping):
        return dict(report)
    return report


# ---------------------------------------------------------------------------- AsyncMemory
class AsyncMemory:
    """Async twin of `Memory`: the same methods, run in a worker thread (the loop never blocks)."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        store: HybridStore | None = None,
        model: Any = None,
        config: MemoryConfig | None = None,
        embeddings: Embeddings | Literal[False] | None = None,
        memory: Memory | None = None,
        on_cost: CostCallback | None = None,
    ) -> None:
        self.sync = memory or Memory(
            path, store=store, model=model, config=config, embeddings=embeddings, on_cost=on_cost
        )

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> AsyncMemory:
        """See `Memory.from_config`."""
        return cls(memory=Memory.from_config(config))

    async def add(
        self, messages: Any, user_id: str, session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None, infer: bool = True,
        timestamp: datetime | str | float | None = None, *,
        agent_id: str | None = None, run_id: str | None = None,
    ) -> list[str]:  # fmt: skip
        """See `Memory.add`."""
        return await asyncio.to_thread(
            lambda: self.sync.add(
                messages, user_id, session_id, metadata, infer, timestamp,
                agent_id=agent_id, run_id=run_id,
            )
        )  # fmt: skip

    async def search(
        self, query: str, user_id: str, limit: int = 5,
        filters: Mapping[str, Any] | None = None, time_range: TimeRangeArg = None, *,
        include_superseded: bool = False, as_of: datetime | str | float | None = None,
        agent_id: str | None = None, run_id: str | None = None, threshold: float | None = None,
    ) -> list[SearchHit]:  # fmt: skip
        """See `Memory.search`."""
        return await asyncio.to_thread(
            lambda: self.sync.search(
                query, user_id, limit, filters, time_range,
                include_superseded=include_superseded, as_of=as_of,
                agent_id=agent_id, run_id=run_id, threshold=threshold,
            )
        )  # fmt: skip

    async def get(
        self, id: str | None = None, user_id: str | None = None, *, memory_id: str | None = None
    ) -> MemoryRecord:
        """See `Memory.get`."""
        return await asyncio.to_thread(lambda: self.sync.get(id, user_id, memory_id=memory_id))

    async def get_all(
        self, user_id: str, limit: int = 100, offset: int = 0, *,
        agent_id: str | None = None, run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> MemoryPage:  # fmt: skip
        """See `Memory.get_all`."""
        return await asyncio.to_thread(
            lambda: self.sync.get_all(
                user_id, limit, offset, agent_id=agent_id, run_id=run_id, filters=filters
            )
        )

    async def update(
        self, id: str | None = None, user_id: str | None = None, text: str | None = None,
        data: str | Mapping[str, Any] | None = None, *, memory_id: str | None = None,
    ) -> MemoryRecord:  # fmt: skip
        """See `Memory.update`."""
        return await asyncio.to_thread(
            lambda: self.sync.update(id, user_id, text, data, memory_id=memory_id)
        )

    async def delete(
        self, id: str | None = None, user_id: str | None = None, *, memory_id: str | None = None
    ) -> None:
        """See `Memory.delete`."""
        await asyncio.to_thread(lambda: self.sync.delete(id, user_id, memory_id=memory_id))

    async def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, int]:
        """See `Memory.delete_all`."""
        return await asyncio.to_thread(self.sync.delete_all, user_id, agent_id, run_id)

    async def reset(self, user_id: str, *, keep_conversations: bool = False) -> dict[str, int]:
        """See `Memory.reset`."""
        return await asyncio.to_thread(
            self.sync.reset, user_id, keep_conversations=keep_conversations
        )

    async def history(
        self, id: str | None = None, user_id: str | None = None, *, memory_id: str | None = None
    ) -> list[dict[str, Any]]:
        """See `Memory.history`."""
        return await asyncio.to_thread(lambda: self.sync.history(id, user_id, memory_id=memory_id))

    async def consolidate(self, user_id: str | None = None) -> dict[str, Any]:
        """See `Memory.consolidate`."""
        return await asyncio.to_thread(self.sync.consolidate, user_id)

    async def add_turn(
        self, user_id: str, session_id: str, role: str, content: str,
        created_at: datetime | None = None,
    ) -> ConversationTurn:  # fmt: skip
        """See `Memory.add_turn`."""
        return await asyncio.to_thread(
            self.sync.add_turn, user_id, session_id, role, content, created_at
        )

    async def recall(
        self, query: str, user_id: str, limit: int = 5, session_id: str | None = None,
        time_range: TimeRangeArg = None,
    ) -> dict[str, Any]:  # fmt: skip
        """See `Memory.recall`."""
        return await asyncio.to_thread(
            self.sync.recall, query, user_id, limit, session_id, time_range
        )

    async def summarize(
        self,
        user_id: str,
        session_id: str,
        from_turn: int | None = None,
        to_turn: int | None = None,
    ) -> dict[str, Any]:
        """See `Memory.summarize`."""
        return await asyncio.to_thread(self.sync.summarize, user_id, session_id, from_turn, to_turn)

    async def cleanup(self, **kwargs: Any) -> dict[str, Any]:
        """See `Memory.cleanup` (same keyword arguments)."""
        return await asyncio.to_thread(lambda: self.sync.cleanup(**kwargs))

    async def import_logs(
        self, directory: str | Path, user_id: str = "default", *, infer: bool = False
    ) -> dict[str, int]:
        """See `Memory.import_logs`."""
        return await asyncio.to_thread(
            lambda: self.sync.import_logs(directory, user_id, infer=infer)
        )

    async def stats(self) -> dict[str, Any]:
        """See `Memory.stats`."""
        return await asyncio.to_thread(self.sync.stats)

    async def get_profile(self, user_id: str) -> UserProfile:
        """See `Memory.get_profile`."""
        return await asyncio.to_thread(self.sync.get_profile, user_id)

    async def put_profile(self, user_id: str, **sections: str | None) -> UserProfile:
        """See `Memory.put_profile`."""
        return await asyncio.to_thread(lambda: self.sync.put_profile(user_id, **sections))

    async def export(
        self, user_id: str | None = None, format: Literal["json", "jsonl"] = "json"
    ) -> str:
        """See `Memory.export`."""
        return await asyncio.to_thread(self.sync.export, user_id, format)

    async def import_(self, data: Any) -> dict[str, int]:
        """See `Memory.import_`."""
        return await asyncio.to_thread(self.sync.import_, data)

    async def close(self) -> None:
        """See `Memory.close`."""
        await asyncio.to_thread(self.sync.close)
