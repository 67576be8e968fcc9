"""`Memory`: the mem0-style facade over `HybridStore` (SPEC R-API); `AsyncMemory` wraps it.

A user's memories live in the namespace ``("memories", user_id)``; conversation turns and
rolling summaries are kept in the conversation log and indexed for recall under
``("conversations", user_id)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Literal

from langchain_core.embeddings import Embeddings

from langmem_plus.config import MemoryConfig
from langmem_plus.episodic.conversation_log import ConversationLog, check_log
from langmem_plus.episodic.episodes import respanned
from langmem_plus.episodic.lifecycle import consolidate as consolidate_namespace
from langmem_plus.episodic.provenance import forget, revise
from langmem_plus.episodic.validity import replacement
from langmem_plus.errors import MemoryNotFoundError, ValidationError
from langmem_plus.memory.checks import (
    check_id,
    check_int,
    check_label,
    check_mapping,
    check_number,
    check_time,
    normalize_messages,
    record_of,
    with_metadata,
)
from langmem_plus.memory.lookup import history, matching, owner, user_spaces
from langmem_plus.memory.results import (
    MAX_LIMIT,
    AddResult,
    Mem0Record,
    MemoryPage,
    SearchHit,
    SearchResults,
    TimeRangeArg,
    as_plain,
)
from langmem_plus.memory.scopes import (
    call_user,
    config_kwargs,
    pick_id,
    pick_limit,
    scope_metadata,
    translate_filters,
)
from langmem_plus.memory.transfer import export, import_data, import_logs
from langmem_plus.memory.turns import ConversationIndex
from langmem_plus.memory.writes import MemoryWriter, updated_record
from langmem_plus.model.costs import CostCallback, CostTimer, TurnCost, check_on_cost, deliver
from langmem_plus.model.namespaces import MEMORY_ROOT, unescape_label, user_namespace
from langmem_plus.model.records import ConversationTurn, MemoryRecord, UserProfile, utcnow
from langmem_plus.store import HybridStore

__all__ = ["Memory"]


class Memory:
    """Long-term memory for one application, many users: add, search, manage, export.

    `Memory("memory.db")` persists to SQLite; `Memory()` keeps everything in memory.
    `model` (a LangChain chat model or `init_chat_model` string) drives the processors behind
    `add(..., infer=True)` and `summarize`; without one they run their offline rules.
    `embeddings=False` turns vectors off (keyword recall only). `conversation_log` replaces
    the store's own log of turns, summaries and profiles (any `ConversationLog`); `clock`
    (epoch seconds) dates records, turns, updates, cleanup cut-offs and the store it opens.
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
        conversation_log: ConversationLog | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        if store is not None and path is not None:
            raise ValidationError("give either path or store, not both")
        if store is not None and embeddings is not None:
            raise ValidationError("embeddings belong to the store: configure them on the store")
        if store is not None and not isinstance(store, HybridStore):
            raise ValidationError(f"store must be a HybridStore, got {type(store).__name__}")
        if config is not None and not isinstance(config, MemoryConfig):
            raise ValidationError(f"config must be a MemoryConfig, got {type(config).__name__}")
        if clock is not None and not callable(clock):
            raise ValidationError("clock must be a callable returning epoch seconds")
        log = check_log(conversation_log) if conversation_log is not None else None
        self._owns_store = store is None
        if store is None:
            index: Any = embeddings if embeddings in (None, False) else {"embed": embeddings}
            store = HybridStore(path, index=index, config=config or MemoryConfig(), clock=clock)
        self.store: HybridStore = store
        self.config: MemoryConfig = config or store.config
        self.model = model
        self.clock = clock
        self.turns = ConversationIndex(self.store, self.config, model, log=log, now=self.now)
        self.writer = MemoryWriter(self.store, self.turns, self.config, model)
        self.on_cost = check_on_cost(on_cost)
        self.last_cost: TurnCost | None = None  # what the last `add` cost, per stage

    def now(self) -> datetime:
        """The current time in UTC: the injected `clock` (epoch seconds) or the wall clock."""
        if self.clock is None:
            return utcnow()
        return datetime.fromtimestamp(self.clock(), tz=timezone.utc)

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
        """The Memory itself; leaving the block closes it (`close`)."""
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
    ) -> AddResult:
        """Remember `messages` (text, a message or a list); returns the ids created or changed
        (an `AddResult`: a list of ids that also reads as mem0's ``{"results": [...]}``).

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
        self.writer.warm_up(infer, " ".join(m["text"] for m in msgs))  # loading is no turn's cost
        timer = CostTimer()
        if not infer:
            with timer.stage("store"):
                if sid is not None:
                    self.writer.log(user_id, sid, msgs, at, index=True)
                ids = self.writer.add_raw(self.namespace(user_id), msgs, sid, meta, at)
        else:
            ids = self.writer.keep(
                user_id, msgs, sid, meta, at, log=sid is not None, timer=timer, now=self.now()
            )
        self.last_cost = timer.finish(user_id=user_id, session_id=sid, phase="add", at=self.now())
        deliver(self.last_cost, on_cost=self.on_cost, store=self.store)
        return AddResult(ids, self._find)

    def _find(self, memory_id: str) -> MemoryRecord | None:
        """The memory `memory_id`, or None when it is gone."""
        try:
            return self.get(memory_id)
        except MemoryNotFoundError:
            return None

    # ------------------------------------------------------------------ read
    def search(
        self,
        query: str,
        user_id: str | None = None,
        limit: int = 5,
        filters: Mapping[str, Any] | None = None,
        time_range: TimeRangeArg = None,
        *,
        include_superseded: bool = False,
        as_of: datetime | str | float | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        threshold: float | None = None,
        top_k: int | None = None,
    ) -> SearchResults:
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
        keep one agent's or run's memories; `threshold` drops hits scoring below it. mem0
        2.x's spelling works too: the user as ``filters={"user_id": ...}``, `top_k` for
        `limit` (default 5), its filter operators (``{"in": [...]}``, ``icontains``, ``"*"``,
        ``AND``/``OR``/``NOT``; an unknown one is refused). The result is a list of
        `SearchHit`; each reads as mem0's dict (``hit["memory"]``) and the list as mem0's
        answer (``results["results"]``).
        """
        user_id = call_user(user_id, filters)
        limit = pick_limit(limit, top_k, 5)
        ns = self.namespace(user_id)
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query must be a non-empty string")
        check_int("limit", limit, 1, MAX_LIMIT)
        if not isinstance(include_superseded, bool):
            raise ValidationError("include_superseded must be True or False")
        when = check_time("as_of", as_of)
        flt = translate_filters(filters, user_id=user_id, agent_id=agent_id, run_id=run_id) or None
        if threshold is not None:
            check_number("threshold", threshold)
        query, tr = self.turns.time_range(time_range, query, user_id)
        view: dict[str, Any] = {"include_superseded": include_superseded, "as_of": when}
        found = self.store.search(ns, query=query, filter=flt, limit=limit, time_range=tr, **view)
        found = self.turns.join_symbols(
            found, user_id, ns, query, limit=limit, filter=flt, time_range=tr, view=view
        )
        hits = [SearchHit.of(it, replacement(self.store, ns, it.value)) for it in found[:limit]]
        self.writer.recalled(user_id, [h.text for h in hits])
        return SearchResults(h for h in hits if threshold is None or h.score >= threshold)

    def get(
        self, id: str | None = None, user_id: str | None = None, *, memory_id: str | None = None
    ) -> MemoryRecord:
        """The memory `id` (mem0's `memory_id`); raises MemoryNotFoundError when absent.

        Ids are unique across users, so `user_id` is optional; given, it must be the owner.
        The record also reads as mem0's dict (``m.get(id)["memory"]``).
        """
        mid = pick_id(id, memory_id)
        ns = owner(self.store, mid) if user_id is None else self.namespace(user_id)
        item = self.store.get(ns, mid)
        if item is None:
            who = "" if user_id is None else f" for user {user_id!r}"
            raise MemoryNotFoundError(f"no memory {mid!r}{who}")
        return Mem0Record.of(record_of(item))

    def get_all(
        self,
        user_id: str | None = None,
        limit: int = 100,
        offset: int = 0,
        *,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        top_k: int | None = None,
    ) -> MemoryPage:
        """One page of the user's memories (oldest first, superseded facts included: they are
        still memories, marked by `valid_to`) and the total count.

        `agent_id`, `run_id` and `filters` (as in `search`) narrow it to matching memories;
        as in mem0 2.x, the user may be given as ``filters={"user_id": ...}`` and the page
        size (default 100) as `top_k`. ``page["results"]`` is the list of mem0 dicts.
        """
        user_id = call_user(user_id, filters)
        limit = pick_limit(limit, top_k, 100)
        ns = self.namespace(user_id)
        check_int("limit", limit, 1, MAX_LIMIT)
        check_int("offset", offset, 0, 10**12)
        flt = translate_filters(filters, user_id=user_id, agent_id=agent_id, run_id=run_id)
        if flt:
            found = [record_of(it) for it in matching(self.store, ns, flt)]
            return MemoryPage(
                items=found[offset : offset + limit],
                total=len(found),
                limit=limit,
                offset=offset,
            )
        items = self.store.search(ns, limit=limit + 1, offset=offset, include_superseded=True)
        own = [record_of(it) for it in items if tuple(it.namespace) == ns][:limit]
        return MemoryPage(items=own, total=self.store.count(ns), limit=limit, offset=offset)

    def history(
        self, id: str | None = None, user_id: str | None = None, *, memory_id: str | None = None
    ) -> list[dict[str, Any]]:
        """How memory `id` came to be, oldest first: for a fact, the whole validity chain.

        Each fact of the chain (the ones it replaced, itself, the ones that replaced it) gives
        an ``ADD`` event with its sources and validity; each closing a ``SUPERSEDED`` event
        naming the newer fact; changes made through `update` follow as ``UPDATE`` events.
        """
        return history(self.store, self.get(id, user_id, memory_id=memory_id))

    # ------------------------------------------------------------------ write
    def update(
        self,
        id: str | None = None,
        user_id: str | None = None,
        text: str | None = None,
        data: str | Mapping[str, Any] | None = None,
        *,
        memory_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> MemoryRecord:
        """Change a memory's text and/or fields; the change is logged in `metadata.updates`.

        Edits follow provenance: an episode's facts are derived again from its new text (the
        ones the user deleted or edited never again); a fact's new text is kept as the
        user's own and its old text is never derived again from its episodes.

        `data` is a dict of fields, or the new text as in mem0 (``update(id, data="text")``);
        `metadata` (mem0 2.x) is merged into the record's metadata.
        """
        id = pick_id(id, memory_id)
        if isinstance(data, str):
            if text is not None:
                raise ValidationError("give the new text once: text or data")
            text, data = data, None
        fields = check_mapping("data", data)
        if metadata is not None:
            if "metadata" in fields:
                raise ValidationError("give metadata once: metadata= or data['metadata']")
            fields["metadata"] = check_mapping("metadata", metadata)
        rec = self.get(id, user_id)
        new = updated_record(rec, text, fields, self.now())
        if new.kind == "episodic" and new.text != rec.text:
            new = respanned(new)
        if new.kind in ("episodic", "semantic") and new.text != rec.text:
            # provenance: an episode's facts are derived again, a fact's old text is rejected
            revise(self.store, rec, new, keeper=self.writer.keeper(), now=self.now())
        else:
            self.store.put(rec.namespace, rec.id, new.to_value())
        item = self.store.get(rec.namespace, rec.id)
        if item is None:  # deleted meanwhile by another writer
            raise MemoryNotFoundError(f"no memory {id!r}")
        return Mem0Record.of(record_of(item))

    def delete(
        self, id: str | None = None, user_id: str | None = None, *, memory_id: str | None = None
    ) -> dict[str, str]:
        """Delete memory `id` from SQLite, the keyword index and the vectors; returns mem0's
        ``{"message": ...}``.

        Deletes follow provenance: deleting an episode deletes the facts it alone supports
        (a fact with other sources loses this one) and makes current again what they had
        superseded; a deleted fact is never derived again from the same episode."""
        rec = self.get(id, user_id, memory_id=memory_id)
        forget(self.store, rec, now=self.now())
        return {"message": "Memory deleted successfully!"}

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
            spaces = user_spaces(self.store)
        flt = translate_filters(None, agent_id=agent_id, run_id=run_id)
        keys: list[tuple[tuple[str, ...], str]] = []
        for ns in spaces:
            if flt:
                keys += [(ns, it.key) for it in matching(self.store, ns, flt)]
            else:
                keys += [(n, k) for n, k in self.store.keys(ns, exact=True)]
        self.writer.delete_keys(keys)
        return {"memories_deleted": len(keys)}

    def reset(
        self, user_id: str | None = None, *, keep_conversations: bool = False
    ) -> dict[str, int]:
        """Delete everything of a user: memories, and (unless kept) turns, summaries, profile.

        Without `user_id` (mem0's ``reset()``) every user's data goes (see `cleanup`)."""
        if user_id is None:
            if keep_conversations:
                raise ValidationError("keep_conversations needs a user_id")
            counts = self.cleanup(everything=True)
            counts.pop("space_freed_kb", None)
            return counts
        ns = self.namespace(user_id)
        keys = self.store.keys(ns)
        self.writer.delete_keys(keys)
        counts = {"memories_deleted": len(keys)}
        if not keep_conversations:
            counts.update(self.turns.delete_user(user_id))
        return counts

    def vacuum(self) -> int:
        """Reclaim space and purge deleted text from the database file; returns bytes freed."""
        return self.store.vacuum()

    def users(self) -> list[str]:
        """Every user with memories, turns or a profile."""
        with_mem = [unescape_label(ns[1]) for ns in user_spaces(self.store, deeper=True)]
        return sorted(set(with_mem) | set(self.turns.log.users()))

    def consolidate(
        self, user_id: str | None = None, *, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, Any]:
        """Merge near-duplicate episodes and separate similar ones (SPEC R-LIFE), per user."""
        users = [check_label("user_id", user_id)] if user_id is not None else self.users()
        out: dict[str, Any] = {}
        for i, uid in enumerate(users, 1):
            report = consolidate_namespace(
                self.store, self.namespace(uid), embeddings=self.store.embeddings,
                config=self.config,
            )  # fmt: skip
            out[uid] = as_plain(report)
            if progress:
                progress(i, len(users))
        return out

    def stats(self) -> dict[str, Any]:
        """Store counts and sizes plus users, sessions and turns."""
        conv = self.turns.log
        sessions = conv.sessions()
        return {
            **self.store.stats(),
            "users": len(self.users()),
            "sessions": len(sessions),
            "turns": sum(s["turn_count"] for s in sessions),
        }

    def get_profile(self, user_id: str) -> UserProfile:
        """The user's profile document (empty sections when none was written yet)."""
        uid = check_label("user_id", user_id)
        return self.turns.log.get_profile(uid) or UserProfile(user_id=uid)

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
            self.writer.delete_keys(keys)
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
        return export(self.turns, user_id, format)

    def import_(
        self, data: str | bytes | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *, progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, int]:  # fmt: skip
        """Load an `export` (JSON text, JSON Lines text or the parsed dict); returns counts."""
        return import_data(self.turns, data, progress=progress)

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
        add = self.add if infer else None
        return import_logs(self.turns, directory, user_id, add=add, progress=progress)
