"""The write side of `Memory.add`: messages stored as given, or exchanges kept as episodes
with facts derived from them (and the facts they replace closed)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import Any

from langgraph.store.base import PutOp

from langmem_plus.config import MemoryConfig
from langmem_plus.episodic.episodes import EpisodeKeeper, Turn
from langmem_plus.errors import ValidationError
from langmem_plus.memory.checks import SETTABLE, make_record, with_metadata
from langmem_plus.memory.turns import ConversationIndex
from langmem_plus.model.costs import CostTimer
from langmem_plus.model.namespaces import user_namespace
from langmem_plus.model.records import MemoryRecord
from langmem_plus.processors.processor_set import Processors
from langmem_plus.store import HybridStore
from langmem_plus.text import extract_symbols
from langmem_plus.text.tokenize import tokenize

__all__ = ["MemoryWriter", "updated_record"]

_RECALLED_USERS = 1024  # users whose last search results are kept for their next add


class MemoryWriter:
    """Writes of one `Memory`: its store, its conversation index and its fact deriver."""

    def __init__(
        self, store: HybridStore, turns: ConversationIndex, config: MemoryConfig, model: Any
    ) -> None:
        self.store = store
        self.turns = turns
        self.config = config
        self.model = model
        self.episodes: EpisodeKeeper | None = None  # built on first use; tests may set it
        self.loaded = False  # the segmenter and the embedding model, see `warm_up`
        # the texts of each user's last search: the memories a reply added next was given
        self._recalled: OrderedDict[str, list[str]] = OrderedDict()
        self._lock = threading.Lock()

    def recalled(self, user_id: str, texts: list[str]) -> None:
        """Note what a search found for `user_id`: the next `add` of that user reads its
        reply against it (a reply that repeats recalled memories adds no evidence)."""
        with self._lock:
            self._recalled[user_id] = texts
            self._recalled.move_to_end(user_id)
            while len(self._recalled) > _RECALLED_USERS:
                self._recalled.popitem(last=False)

    def _take_recalled(self, user_id: str) -> list[str]:
        with self._lock:
            return self._recalled.pop(user_id, [])

    def warm_up(self, infer: bool, sample: str) -> None:
        """Load, once per process, what the first write would load — the word segmenter's
        dictionary (when `sample`, the write's text, is Chinese), the embedding model, the
        chat model's client — so that it is not counted as the cost of the turn that happens
        to come first (a one-shot CLI call is nothing but a first turn)."""
        if not self.loaded:
            tokenize(sample[:200])  # Chinese text loads the segmenter's dictionary
            if self.store.embeddings is not None:
                self.store.embeddings.embed_query("warm up")
            self.loaded = True
        if infer:
            self.keeper()

    def log(
        self,
        user_id: str,
        sid: str,
        msgs: list[dict[str, str]],
        at: datetime | None,
        *,
        index: bool,
    ) -> list[int]:
        """Log the non-empty messages as turns of session `sid` (one transaction); returns
        their turn ids."""
        said = [(m["role"], m["text"]) for m in msgs if m["text"].strip()]
        if not said:
            return []
        logged = self.turns.add_turns(user_id, sid, said, created_at=at, index=index)
        return [t.id if t.id is not None else -1 for t in logged]

    def add_raw(
        self,
        ns: tuple[str, str],
        msgs: list[dict[str, str]],
        sid: str | None,
        meta: dict[str, Any],
        at: datetime | None,
    ) -> list[str]:
        """Store each user/assistant message as one memory, as given (``infer=False``)."""
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

    def keeper(self) -> EpisodeKeeper:
        """The episode keeper: a one-call FactDeriver with a model, the rules without."""
        if self.episodes is None:  # built as the middleware's and the nodes' is
            self.episodes = EpisodeKeeper(
                self.config, Processors.build(self.model, self.config).deriver
            )
        return self.episodes

    def keep(
        self,
        user_id: str,
        msgs: list[dict[str, str]],
        sid: str | None,
        meta: dict[str, Any],
        at: datetime | None,
        *,
        log: bool,
        timer: CostTimer,
        now: datetime,
    ) -> list[str]:
        """Each exchange of `msgs` becomes an episode; facts are derived and superseded
        (the write driver `EpisodeKeeper.keep_turns`, as in the middleware; timed as stage
        ``knowledge``, with the FactDeriver's calls and tokens)."""
        ns = user_namespace(user_id)
        said = [m for m in msgs if m["role"] in ("user", "assistant") and m["text"].strip()]
        ids: list[int | None] = [None] * len(said)
        context = None
        if sid is not None:
            with self._log_transaction():  # the last reply read and the turns logged: one
                context = self.last_reply(user_id, sid)
                if log:
                    ids = list(self.log(user_id, sid, said, at, index=False))
        turns = [Turn(m["role"], m["text"], at, i) for m, i in zip(said, ids, strict=False)]
        with timer.stage("knowledge", meter=False) as tally:
            kept = self.keeper().keep_turns(
                self.store, ns, turns, session_id=sid, at=at or now, context=context,
                log=self.turns.log, recalled=self._take_recalled(user_id),
                stamp=(lambda rec: with_metadata(rec, meta)) if meta else None,
            )  # fmt: skip
            for k in kept:
                tally.add_usage(k.cost)
        return list(dict.fromkeys(i for k in kept for i in k.ids))

    def _log_transaction(self) -> AbstractContextManager[Any]:
        """One write transaction of the conversation log, where it has them."""
        begin = getattr(self.turns.log, "transaction", None)
        return begin() if begin is not None else nullcontext()

    def delete_keys(self, keys: Sequence[tuple[tuple[str, ...], str]]) -> None:
        """Delete store items by (namespace, key), in batches."""
        for i in range(0, len(keys), 500):
            self.store.batch([PutOp(ns, key, None) for ns, key in keys[i : i + 500]])

    def last_reply(self, user_id: str, sid: str) -> str | None:
        """The last assistant turn logged in the session (what an untied correction answers),
        among its last four turns (a bounded read where the log has one)."""
        recent = getattr(self.turns.log, "recent_turns", None)
        last = recent(user_id, sid, 4) if recent else self.turns.log.turns(user_id, sid)[-4:]
        for turn in reversed(last):
            if turn.role == "assistant":
                return turn.content
        return None


def updated_record(
    rec: MemoryRecord, text: str | None, fields: dict[str, Any], now: datetime
) -> MemoryRecord:
    """`rec` with a new `text` and/or `fields` (checked: settable ones only), the change
    logged as an ``UPDATE`` event in `metadata.updates` (see `Memory.update`)."""
    if text is None and not fields:
        raise ValidationError("give text or data to update")
    if text is not None and (not isinstance(text, str) or not text.strip()):
        raise ValidationError("text must be a non-empty string")
    bad = sorted(set(fields) - SETTABLE)
    if bad:
        raise ValidationError(f"cannot update {bad}; settable: {sorted(SETTABLE)}")
    if text is not None:
        fields["text"] = text
    meta = dict(rec.metadata)
    if isinstance(fields.get("metadata"), Mapping):
        meta.update(fields.pop("metadata"))
    elif "metadata" in fields:
        raise ValidationError("data.metadata must be a dict")
    entry: dict[str, Any] = {"event": "UPDATE", "at": now.isoformat(), "source": "api"}
    if "text" in fields and fields["text"] != rec.text:
        entry.update(old_text=rec.text, new_text=fields["text"])
        fields.setdefault("symbols", extract_symbols(fields["text"]))
    changed = sorted(k for k in fields if k not in ("text", "symbols"))
    if changed:
        entry["fields"] = changed
    meta["updates"] = [*(meta.get("updates") or []), entry]
    return make_record(**{**rec.model_dump(), **fields, "metadata": meta, "updated_at": now})
