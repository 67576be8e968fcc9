"""Episodic-memory processors: the reconsolidator (rewrite a recalled episode with new
context), the merger and the separator (used by consolidation). Invariants are enforced in code whatever a model answers: reconsolidation
never changes time / chat_id / who and always appends to ``updates``; a merge keeps the
earlier time and the union of source chats."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from datetime import datetime
from typing import Any

from langmem_plus.errors import ValidationError
from langmem_plus.model.records import MemoryRecord, new_id, utcnow
from langmem_plus.processors import prompts
from langmem_plus.processors.model.base import BaseProcessor
from langmem_plus.processors.schemas import MergeOut, ReconsolidationOut, SeparateOut
from langmem_plus.text.clauses import split_sentences
from langmem_plus.text.overlap import content_tokens, coverage
from langmem_plus.text.scripts import detect_lang
from langmem_plus.text.timeparse import parse_iso

__all__ = [
    "EpisodeMerger",
    "EpisodeSeparator",
    "Reconsolidator",
    "episode_time",
    "source_chats",
]


def _pair_prompt(a: MemoryRecord, b: MemoryRecord) -> str:
    """The user message that shows a model two records side by side."""
    return prompts.render_record(a, "memory_a") + "\n" + prompts.render_record(b, "memory_b")


def _check_record(record: Any, name: str = "memory") -> MemoryRecord:
    if not isinstance(record, MemoryRecord):
        raise ValidationError(f"{name} must be a MemoryRecord, got {type(record).__name__}")
    return record


def episode_time(record: MemoryRecord) -> datetime:
    """When an episode happened: `metadata.time` (ISO), else `created_at`."""
    raw = record.metadata.get("time")
    if isinstance(raw, str):
        try:
            parsed = parse_iso(raw)
        except ValueError:
            parsed = None
        if parsed is not None:
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=record.created_at.tzinfo)
    return record.created_at


def source_chats(record: MemoryRecord) -> list[str]:
    """All chat ids an episode came from (its own chat plus `metadata.source_chat_ids`)."""
    chats: list[str] = []
    for chat in [
        record.chat_id,
        record.metadata.get("chatid"),
        *(record.metadata.get("source_chat_ids") or []),
    ]:
        if chat and str(chat) not in chats:
            chats.append(str(chat))
    return chats


def _pieces(text: str) -> list[str]:
    out: list[str] = []
    for sentence in split_sentences(text) or [text]:
        out.extend(p.strip() for p in re.split(r"[，,；;]", sentence) if p.strip(" 。.!！?？"))
    return out


def _join(a: str, b: str, *, duplicate_at: float = 0.6) -> str:
    """`a` followed by the clauses of `b` that `a` does not already say."""
    lang = detect_lang(a + b)
    a_tokens = content_tokens(a)
    extra = []
    for piece in _pieces(b):
        tokens = content_tokens(piece)
        if tokens and coverage(a_tokens, tokens) >= duplicate_at:
            continue
        extra.append(piece.strip(" 。.!！"))
    base = a.strip()
    if not extra:
        return base
    if not re.search(r"[。！？.!?]$", base):
        base += "。" if lang == "zh" else "."
    if lang == "zh":
        return base + "，".join(extra) + "。"
    return base + " " + ". ".join(e[:1].upper() + e[1:] for e in extra) + "."


class Reconsolidator(BaseProcessor):
    """Rewrites a recalled episodic memory with the new context."""

    def reconsolidate(
        self, memory: MemoryRecord, current_context: str, *, now: datetime | None = None
    ) -> MemoryRecord:
        """The updated record: same id, time, chat_id and who; `updates` grows by one."""
        rec = _check_record(memory)
        if not isinstance(current_context, str):
            raise ValidationError("current_context must be a string")
        out = None
        if self.llm is not None and current_context.strip():
            user = (
                prompts.render_record(rec) + "\n" + prompts.render_text("context", current_context)
            )
            out = self.llm.call(ReconsolidationOut, prompts.RECONSOLIDATOR_PROMPT, user)
        return self._finish(rec, current_context, out, now)

    @staticmethod
    def _rule_text(rec: MemoryRecord, context: str) -> tuple[str, str]:
        context = context.strip()
        if not context:
            return rec.text, "recalled without new context"
        new_bits = [
            s
            for s in split_sentences(context)
            if coverage(content_tokens(rec.text), content_tokens(s)) < 0.8
        ]
        if not new_bits:
            return rec.text, "recalled; context repeated what was known"
        lang = detect_lang(rec.text)
        addition = ("".join(new_bits) if lang == "zh" else " ".join(new_bits))[:400]
        label = "后续：" if lang == "zh" else "Later: "
        return _join(rec.text, label + addition), addition[:200]

    def _finish(
        self,
        rec: MemoryRecord,
        context: str,
        out: ReconsolidationOut | None,
        now: datetime | None,
    ) -> MemoryRecord:
        now = now or utcnow()
        if out is not None and out.text.strip():
            text, desc = out.text.strip(), out.update_desc or "reconsolidated"
        else:
            text, desc = self._rule_text(rec, context)
        new = rec.model_copy(deep=True)
        metadata = dict(new.metadata)
        updates = list(metadata.get("updates") or [])
        updates.append({"time": now.isoformat(), "desc": desc, "old_text": rec.text})
        metadata["updates"] = updates
        if out is not None and out.context:
            metadata["context"] = out.context
        if out is not None and out.thing:
            metadata["thing"] = out.thing
        # invariants: never changed by reconsolidation
        for key in ("time", "chatid", "who"):
            if key in rec.metadata:
                metadata[key] = rec.metadata[key]
        new.metadata = metadata
        new.text = text
        new.updated_at = now
        new.chat_id = rec.chat_id
        new.who = rec.who
        return new


class _PairProcessor(BaseProcessor, ABC):
    """The call path shared by the two-record processors: check both records, ask the model
    (when there is one) with `_schema` / the prompt named `_prompt_name`, then `_finish`."""

    _schema: type[Any]
    _prompt_name: str

    @abstractmethod
    def _finish(self, a: MemoryRecord, b: MemoryRecord, out: Any, now: datetime | None) -> Any:
        """Build the processor's result from the records and the model's answer (or None)."""

    def _pair(self, a: MemoryRecord, b: MemoryRecord, now: datetime | None) -> Any:
        _check_record(a, "a")
        _check_record(b, "b")
        out = None
        if self.llm is not None:
            prompt = getattr(prompts, self._prompt_name)
            out = self.llm.call(self._schema, prompt, _pair_prompt(a, b))
        return self._finish(a, b, out, now)


class EpisodeMerger(_PairProcessor):
    """Merges two duplicate episodes into one record."""

    _schema = MergeOut
    _prompt_name = "MERGER_PROMPT"

    def merge(
        self, a: MemoryRecord, b: MemoryRecord, *, now: datetime | None = None
    ) -> MemoryRecord:
        """The record that replaces `a` and `b`: earlier time, union of source chats."""
        return self._pair(a, b, now)  # type: ignore[no-any-return]

    def _finish(
        self, a: MemoryRecord, b: MemoryRecord, out: MergeOut | None, now: datetime | None
    ) -> MemoryRecord:
        now = now or utcnow()
        first, second = (a, b) if episode_time(a) <= episode_time(b) else (b, a)
        text = (
            out.text.strip()
            if out is not None and out.text.strip()
            else _join(first.text, second.text)
        )
        chats = source_chats(first) + [
            c for c in source_chats(second) if c not in source_chats(first)
        ]
        merged_from = [first.id, second.id]
        for rec in (first, second):
            for old in rec.metadata.get("merged_from_ids") or []:
                if old not in merged_from:
                    merged_from.append(old)
        metadata = {**second.metadata, **first.metadata}
        metadata.update(
            {
                "time": episode_time(first).isoformat(),
                "source_chat_ids": chats,
                "merged_from_ids": merged_from,
                "updates": list(first.metadata.get("updates") or [])
                + list(second.metadata.get("updates") or [])
                + [{"time": now.isoformat(), "desc": f"merged {first.id} and {second.id}"}],
                "thing": (out.thing if out is not None and out.thing else text),
            }
        )
        if out is not None and out.context:
            metadata["context"] = out.context
        metadata.pop("separated_from", None)
        return MemoryRecord(
            id=new_id(),
            namespace=first.namespace,
            kind="episodic",
            category=first.category,
            tier=first.tier if first.tier != "normal" else second.tier,
            text=text,
            tags=list(dict.fromkeys(first.tags + second.tags)),
            symbols=list(dict.fromkeys(first.symbols + second.symbols)),
            who=first.who,
            session_id=first.session_id,
            chat_id=first.chat_id,
            confidence=max(first.confidence, second.confidence),
            importance=max(first.importance, second.importance),
            source=first.source,
            verified=first.verified or second.verified,
            created_at=min(first.created_at, second.created_at),
            updated_at=now,
            metadata=metadata,
        )


class EpisodeSeparator(_PairProcessor):
    """Rewrites two similar but distinct episodes so each states what sets it apart."""

    _schema = SeparateOut
    _prompt_name = "SEPARATOR_PROMPT"

    def separate(
        self, a: MemoryRecord, b: MemoryRecord, *, now: datetime | None = None
    ) -> tuple[MemoryRecord, MemoryRecord]:
        """(a', b'): same ids, distinguishing texts, each marked as separated from the other."""
        return self._pair(a, b, now)  # type: ignore[no-any-return]

    @staticmethod
    def _label(rec: MemoryRecord) -> str:
        when = episode_time(rec).strftime("%Y-%m-%d %H:%M")
        chat = rec.chat_id or rec.metadata.get("chatid")
        if detect_lang(rec.text) == "zh":
            return f"（{when}" + (f"，会话 {chat}" if chat else "") + "）"
        return f" ({when}" + (f", chat {chat}" if chat else "") + ")"

    def _finish(
        self,
        a: MemoryRecord,
        b: MemoryRecord,
        out: SeparateOut | None,
        now: datetime | None,
    ) -> tuple[MemoryRecord, MemoryRecord]:
        now = now or utcnow()
        texts: list[str]
        if out is not None and out.text_a.strip() and out.text_b.strip():
            texts = [out.text_a.strip(), out.text_b.strip()]
        else:
            texts = [
                r.text
                if r.text.rstrip().endswith(self._label(r).strip())
                else r.text.rstrip() + self._label(r)
                for r in (a, b)
            ]
        result = []
        for rec, other, text in ((a, b, texts[0]), (b, a, texts[1])):
            new = rec.model_copy(deep=True)
            separated = list(rec.metadata.get("separated_from") or [])
            if other.id not in separated:
                separated.append(other.id)
            updates = list(rec.metadata.get("updates") or [])
            updates.append(
                {
                    "time": now.isoformat(),
                    "desc": f"separated from {other.id}",
                    "old_text": rec.text,
                }
            )
            new.metadata = {**rec.metadata, "separated_from": separated, "updates": updates}
            new.text = text
            new.updated_at = now
            result.append(new)
        return result[0], result[1]
