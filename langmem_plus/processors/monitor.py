"""Knowledge monitor and write decider.

`KnowledgeMonitor.run(turns, existing)` returns ADD / UPDATE / DELETE / BOOST / SKIP
operations; `WriteDecider.decide(turns)` says whether an exchange is worth an episodic
memory. Both use the model when one is given and the Chinese/English rules otherwise (or
when the model fails).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langmem_plus.errors import ValidationError
from langmem_plus.processors import prompts
from langmem_plus.processors.model.base import BaseProcessor, normalize_turns
from langmem_plus.processors.schemas import MemoryOp, OpsOut, WriteDecision
from langmem_plus.processors.statements.rules import (
    Correction,
    Deletion,
    Statement,
    extract_statements,
    slot_of,
    turn_signals,
)
from langmem_plus.processors.statements.textutil import (
    align_value,
    content_tokens,
    coverage,
    detect_lang,
    jaccard,
    salient_tokens,
    substitute_value,
    to_third_person,
)
from langmem_plus.text.timeparse import date_metadata

__all__ = ["KnowledgeMonitor", "WriteDecider", "normalize_existing"]

logger = logging.getLogger("langmem_plus.processors")

# Token-overlap thresholds of the rule monitor (module constants, not config: they belong to
# the rules, not to the memory model).
RESTATE_JACCARD = 0.7  # a new statement this close to a stored one is a restatement -> BOOST
CORRECTION_MIN_SCORE = 0.34  # coverage of a memory's tokens for a correction to target it
DELETE_MIN_COVERAGE = 0.5  # coverage of a memory's tokens by "forget ..." content
REPLY_BOOST_COVERAGE = 0.6  # share of a memory's salient tokens the reply must use


@dataclass
class _Known:
    id: str
    text: str
    tokens: set[str]
    salient: set[str]
    slot: str | None
    who: str


def normalize_existing(existing: Any) -> list[dict[str, str]]:
    """Validate `[{"id": ..., "text": ...}]` (records and store items accepted too)."""
    if existing is None:
        return []
    if isinstance(existing, str) or not isinstance(existing, Iterable):
        raise ValidationError('existing must be a list of {"id": ..., "text": ...} dicts')
    out = []
    for i, mem in enumerate(existing):
        if isinstance(mem, Mapping):
            ident, text = mem.get("id", mem.get("key")), mem.get("text")
            if text is None and isinstance(mem.get("value"), Mapping):
                text = mem["value"].get("text")
            who = mem.get("who") or "user"
        else:
            ident = getattr(mem, "id", None) or getattr(mem, "key", None)
            text = getattr(mem, "text", None)
            if text is None and isinstance(getattr(mem, "value", None), Mapping):
                text = mem.value.get("text")
            who = getattr(mem, "who", None) or "user"
        if not ident or not isinstance(text, str):
            raise ValidationError(f"existing[{i}] needs an id and a text")
        out.append({"id": str(ident), "text": text, "who": str(who)})
    return out


def _known(mem: Mapping[str, str]) -> _Known:
    text = mem["text"]
    statements = extract_statements(text)
    who = statements[0].who if statements else mem.get("who", "user")
    slot = statements[0].slot if statements else slot_of(text, who)
    return _Known(mem["id"], text, content_tokens(text), salient_tokens(text), slot, who)


def _strip_common(old: str, new: str) -> tuple[str, str]:
    i = 0
    while i < min(len(old), len(new)) and old[i] == new[i]:
        i += 1
    j = 0
    while j < min(len(old), len(new)) - i and old[-1 - j] == new[-1 - j]:
        j += 1
    o, n = old[i : len(old) - j].strip(), new[i : len(new) - j].strip()
    return (o, n) if o and n else (old, new)


def _replace_value(text: str, old: str, new: str) -> str | None:
    for o, n in ((old, new), _strip_common(old, new)):
        out = substitute_value(text, o, n)
        if out is not None:
            return out
    return None


def _is_value(text: str) -> bool:
    """A bare value ("Shanghai", "5月13号"), not a clause with its own subject."""
    return not re.search(r"我|用户|\b(?:I|I'm|my|User|User's)\b", text)


def corrected_text(memory: str, corr: Correction) -> str | None:
    """`memory` with the corrected value in place of the old one, or None when the
    correction does not name a value the memory holds."""
    old, new = corr.old_value, corr.new_value
    if not old or not new:
        return None
    if old.lower() in memory.lower():
        sources = [corr.new_clause or ""]
        if corr.statement:
            sources.append(corr.statement.text)
        for source in sources:
            value = align_value(memory, old, source) if source else None
            if value and value.lower() != old.lower():
                out = substitute_value(memory, old, value)
                if out:
                    return out
    if _is_value(new):
        return _replace_value(memory, old, new)
    return None


def value_spans(text: str, value: str, lang: str) -> list[str]:
    """Spans of `text` shaped like `value`: capitalised names or numbers in English, words of
    the same part of speech (place, person, number, time) in Chinese."""
    if lang == "zh":
        import jieba.posseg as pseg

        flags = {p.flag for p in pseg.cut(value, HMM=False)}
        kinds = {f[:2] for f in flags if f[:2] in ("ns", "nr", "nt", "nz", "m", "t")}
        if not kinds:
            return []
        return [p.word for p in pseg.cut(text, HMM=False) if p.flag[:2] in kinds]
    if re.search(r"\d", value):
        return re.findall(r"\d[\w:./-]*", text)
    if value[:1].isupper():
        spans = re.findall(r"(?<!^)(?<![.!?] )\b[A-Z][\w'-]*(?: [A-Z][\w'-]*)*", text)
        return [sp for sp in spans if not sp.startswith("User")]
    return []


class _RuleMonitor:
    """The offline knowledge monitor: one pass over the user turns, then reply BOOSTs."""

    def __init__(self, existing: list[dict[str, str]]) -> None:
        self.known = [_known(m) for m in existing]
        self.ops: list[MemoryOp] = []
        self.touched: set[str] = set()
        self.added: list[str] = []

    def _op(self, op: MemoryOp) -> None:
        if op.id:
            self.touched.add(op.id)
        if op.op == "ADD" and op.text:
            if any(jaccard(content_tokens(op.text), content_tokens(t)) >= 0.9 for t in self.added):
                return
            self.added.append(op.text)
        self.ops.append(op)

    def _restated(self, statement: Statement) -> _Known | None:
        tokens = content_tokens(statement.text)
        best, score = None, 0.0
        for k in self.known:
            s = jaccard(tokens, k.tokens)
            if s > score:
                best, score = k, s
        return best if score >= RESTATE_JACCARD else None

    def bare(self, corr: Correction) -> None:
        """A bare value ("I meant Shanghai", "我是说上海") updates the one memory holding a
        value of that shape; with none or several candidates nothing is written."""
        value = corr.new_value or ""
        lang = detect_lang(value + corr.clause)
        targets = []
        for k in self.known:
            if k.id in self.touched:
                continue
            spans = [sp for sp in value_spans(k.text, value, lang) if sp.lower() != value.lower()]
            if len(spans) == 1:
                targets.append((k, spans[0]))
        if len(targets) != 1:
            return  # no target, or a guess between several: better nothing than a wrong write
        k, old = targets[0]
        new_text = substitute_value(k.text, old, value)
        if new_text and new_text != k.text:
            self._op(
                MemoryOp(
                    op="UPDATE", id=k.id, text=new_text, who=k.who, confidence=0.8,
                    reason="correction",
                )
            )  # fmt: skip

    def statement(self, st: Statement) -> None:
        same = self._restated(st)
        if same is not None:
            if same.id not in self.touched:
                self._op(MemoryOp(op="BOOST", id=same.id, reason="restated"))
            return
        if st.slot:
            for k in self.known:
                if k.slot == st.slot and k.id not in self.touched:
                    self._op(
                        MemoryOp(
                            op="UPDATE",
                            id=k.id,
                            text=st.text,
                            category=st.category,
                            who=st.who,
                            confidence=st.confidence,
                            reason="slot changed",
                            symbols=st.symbols,
                        )
                    )
                    return
        self._op(
            MemoryOp(
                op="ADD",
                text=st.text,
                category=st.category,
                who=st.who,
                confidence=st.confidence,
                reason=st.family,
                symbols=st.symbols,
            )
        )

    def correction(self, corr: Correction) -> None:
        if corr.bare:
            self.bare(corr)
            return
        clause_tokens = content_tokens(corr.clause)
        old_tokens = content_tokens(corr.old_value or "")
        best, best_score = None, 0.0
        for k in self.known:
            if k.id in self.touched:
                continue
            score = coverage(clause_tokens, k.tokens)
            if old_tokens and old_tokens & k.tokens:
                score += 0.5
            if corr.old_value and corr.old_value.lower() in k.text.lower():
                score += 0.5
            if corr.statement and corr.statement.slot and corr.statement.slot == k.slot:
                score += 0.5
            if score > best_score:
                best, best_score = k, score
        if best is not None and best_score >= CORRECTION_MIN_SCORE:
            new_text = corrected_text(best.text, corr)
            if new_text is None and corr.statement:
                new_text = corr.statement.text
            if new_text and new_text != best.text:
                st = corr.statement
                self._op(
                    MemoryOp(
                        op="UPDATE",
                        id=best.id,
                        text=new_text,
                        category=st.category if st else "fact",
                        who=best.who,
                        confidence=0.9,
                        reason="correction",
                        symbols=st.symbols if st else [],
                    )
                )
                return
        if corr.statement:
            self.statement(corr.statement)

    def deletion(self, d: Deletion) -> None:
        tokens = content_tokens(d.content)
        best, best_score = None, 0.0
        for k in self.known:
            if k.id in self.touched or not k.tokens:
                continue
            score = (coverage(tokens, k.tokens) + coverage(k.tokens, tokens)) / 2
            if not (tokens & (k.salient or k.tokens)):
                continue
            if score > best_score:
                best, best_score = k, score
        if best is not None and best_score >= DELETE_MIN_COVERAGE:
            self._op(MemoryOp(op="DELETE", id=best.id, reason="obsolete or asked to forget"))
            return
        if (
            d.strong
            and len(tokens) >= 2
            and not re.search(r"\b(?:forget|delete|remove|erase)\b|忘掉|删|清除", d.clause, re.I)
        ):
            text = to_third_person(d.clause, d.lang)
            if text:
                self._op(
                    MemoryOp(
                        op="ADD", text=text, category="fact", confidence=0.75, reason="no longer"
                    )
                )

    def reply(self, text: str) -> None:
        tokens = content_tokens(text)
        for k in self.known:
            if k.id in self.touched or not k.salient:
                continue
            matched = len(k.salient & tokens)
            if coverage(tokens, k.salient) >= REPLY_BOOST_COVERAGE and (
                len(k.salient) < 3 or matched >= 2
            ):
                self._op(MemoryOp(op="BOOST", id=k.id, reason="used in the reply"))


def annotate_ops(ops: list[MemoryOp], now: datetime | None = None) -> list[MemoryOp]:
    """Add the absolute date of a relative time phrase ("下周三", "next Friday") to the
    metadata of ADD / UPDATE facts; the text keeps the user's own words."""
    for op in ops:
        if op.op not in ("ADD", "UPDATE") or not op.text or op.category not in ("fact", "episode"):
            continue
        if slot_of(op.text, op.who):
            continue  # a birthday or an age is not an appointment
        dated = date_metadata(op.text, now)
        if dated:
            op.metadata = {**op.metadata, **dated}
    return ops


def rule_ops(
    turns: list[dict[str, str]], existing: list[dict[str, str]], now: datetime | None = None
) -> list[MemoryOp]:
    """The rule-based knowledge monitor over validated turns and memories."""
    monitor = _RuleMonitor(existing)
    for turn in turns:
        if turn["role"] != "user":
            continue
        signals = turn_signals(turn["text"])
        for d in signals.deletions:
            monitor.deletion(d)
        for corr in signals.corrections:
            monitor.correction(corr)
        for st in signals.statements:
            monitor.statement(st)
    for turn in turns:
        if turn["role"] == "assistant":
            monitor.reply(turn["text"])
    return annotate_ops(monitor.ops, now) or [MemoryOp(op="SKIP", reason="nothing to remember")]


def _sanitize(ops: list[MemoryOp], known_ids: set[str]) -> list[MemoryOp]:
    out = []
    for op in ops:
        problem = op.problem()
        if problem:
            logger.info("dropping model op %s: %s", op.op, problem)
            continue
        if op.op in ("UPDATE", "DELETE", "BOOST") and op.id not in known_ids:
            logger.info("dropping model op %s for unknown id %r", op.op, op.id)
            continue
        if op.op == "SKIP" and len(ops) > 1:
            continue
        out.append(op)
    return out or [MemoryOp(op="SKIP", reason="nothing to remember")]


class KnowledgeMonitor(BaseProcessor):
    """Turns an exchange plus the memories recalled for it into memory operations."""

    def _inputs(
        self, turns: Any, existing: Any
    ) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
        return normalize_turns(turns), normalize_existing(existing)

    def _user_message(self, turns: list[dict[str, str]], existing: list[dict[str, str]]) -> str:
        return prompts.render_turns(turns) + "\n\n" + prompts.render_memories(existing)

    def run(
        self, turns: Any, existing: Any = None, *, now: datetime | None = None
    ) -> list[MemoryOp]:
        """Operations for `turns` (`[{"role", "text"}]`) given recalled `existing` memories.
        `now` (default: the current time) resolves relative dates into op metadata."""
        t, e = self._inputs(turns, existing)
        if self.llm is not None and t:
            out = self.llm.call(OpsOut, prompts.KNOWLEDGE_MONITOR_PROMPT, self._user_message(t, e))
            if out is not None:
                return annotate_ops(_sanitize(out.ops, {m["id"] for m in e}), now)
        return rule_ops(t, e, now)

    async def arun(
        self, turns: Any, existing: Any = None, *, now: datetime | None = None
    ) -> list[MemoryOp]:
        """Async twin of `run`."""
        t, e = self._inputs(turns, existing)
        if self.llm is not None and t:
            out = await self.llm.acall(
                OpsOut, prompts.KNOWLEDGE_MONITOR_PROMPT, self._user_message(t, e)
            )
            if out is not None:
                return annotate_ops(_sanitize(out.ops, {m["id"] for m in e}), now)
        return rule_ops(t, e, now)


def rule_decision(turns: list[dict[str, str]]) -> WriteDecision:
    """Rule write decision: store when a user turn holds a memory-worthy statement."""
    things: list[str] = []
    who = "user"
    remember = False
    for turn in turns:
        if turn["role"] != "user":
            continue
        signals = turn_signals(turn["text"])
        remember = remember or signals.remember
        statements = list(signals.statements)
        statements += [c.statement for c in signals.corrections if c.statement]
        for st in statements:
            things.append(st.text)
            if st.who != "user" and who == "user":
                who = st.who
        for d in signals.deletions:
            things.append(to_third_person(d.clause, d.lang))
    if not things:
        return WriteDecision(write_episodic=False, reason="chitchat, question or fragment")
    user_text = " ".join(t["text"] for t in turns if t["role"] == "user")
    sep = "；" if detect_lang(user_text) == "zh" else "; "
    return WriteDecision(
        write_episodic=True,
        reason="explicit remember request" if remember else "personal information",
        context=user_text[:120],
        thing=sep.join(dict.fromkeys(things)),
        who=who,
    )


class WriteDecider(BaseProcessor):
    """Decides whether an exchange becomes an episodic memory."""

    def decide(self, turns: Any) -> WriteDecision:
        """`write_episodic` plus context/thing/who for the episodic record."""
        t = normalize_turns(turns)
        if self.llm is not None and t:
            out = self.llm.call(
                WriteDecision, prompts.WRITE_DECIDER_PROMPT, prompts.render_turns(t)
            )
            if out is not None:
                return _guard_decision(out, t)
        return rule_decision(t)

    async def adecide(self, turns: Any) -> WriteDecision:
        """Async twin of `decide`."""
        t = normalize_turns(turns)
        if self.llm is not None and t:
            out = await self.llm.acall(
                WriteDecision, prompts.WRITE_DECIDER_PROMPT, prompts.render_turns(t)
            )
            if out is not None:
                return _guard_decision(out, t)
        return rule_decision(t)


def _guard_decision(out: WriteDecision, turns: list[dict[str, str]]) -> WriteDecision:
    """An explicit remember request with content is always stored, whatever the model says."""
    if out.write_episodic:
        return out
    rules = rule_decision(turns)
    if rules.write_episodic and rules.reason == "explicit remember request":
        return rules
    return out
