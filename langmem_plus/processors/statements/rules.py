"""Rule-based statement extraction for Chinese and English (the offline knowledge monitor).

`extract_statements(text)` reads one user turn and returns the memory-worthy statements in
it, each with a rule family (preference, personal, plan, code, other_person, state, habit,
event, remember), a category, `who`, a confidence and — for single-valued facts such as a
name or a home town — a slot key. `turn_signals(text)` additionally finds corrections
("不是X是Y", "actually", "I meant"), deletions ("忘掉…", "forget that…", "I no longer…") and
says why a clause is skipped (chitchat, knowledge question, request, fragment).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from langmem_plus.processors.statements.classify import (
    Statement,
    slot_of,
    statement_from_clause,
    tech_terms,
)
from langmem_plus.processors.statements.corrections import (
    Correction,
    Deletion,
    en_correction,
    find_deletion,
    zh_correction,
)
from langmem_plus.processors.statements.patterns import (
    CHITCHAT_EN,
    CHITCHAT_ZH,
    EN_FORGET,
    EN_REMEMBER,
    QUESTION_EN,
    QUESTION_ZH,
    ZH_CODE_CONT,
    ZH_DELETE,
    ZH_REMEMBER,
)
from langmem_plus.processors.statements.textutil import (
    clean_clause,
    content_tokens,
    detect_lang,
    split_clauses,
    split_sentences,
)

__all__ = [
    "Correction",
    "Deletion",
    "Statement",
    "TurnSignals",
    "extract_statements",
    "is_chitchat",
    "is_question",
    "slot_of",
    "tech_terms",
    "turn_signals",
]


@dataclass
class TurnSignals:
    """Everything the rules read from one user turn."""

    statements: list[Statement] = field(default_factory=list)
    corrections: list[Correction] = field(default_factory=list)
    deletions: list[Deletion] = field(default_factory=list)
    remember: bool = False
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (clause, reason)


# ------------------------------------------------------------------------ classifiers


def is_chitchat(clause: str) -> bool:
    """Greetings, thanks, acknowledgements and small talk with nothing to remember."""
    text = clause.strip()
    return bool(CHITCHAT_ZH.match(text) or CHITCHAT_EN.match(text))


def is_question(clause: str) -> bool:
    """A question or a task request (knowledge questions, 'explain…', '什么是…')."""
    text = clause.strip()
    if detect_lang(text) == "zh":
        return bool(QUESTION_ZH.search(text))
    return bool(QUESTION_EN.search(text))


def turn_signals(text: str) -> TurnSignals:
    """Read one user turn: statements, corrections, deletions, remember requests, skips."""
    signals = TurnSignals()
    if not text or not text.strip():
        return signals
    for sentence in split_sentences(text):
        lang = detect_lang(sentence)
        # "记住 processOrder 在 src/order.ts 里": a Chinese request around English code
        rem = (ZH_REMEMBER if lang == "zh" else EN_REMEMBER).search(sentence) or (
            ZH_REMEMBER if lang != "zh" else EN_REMEMBER
        ).search(sentence)
        remember = bool(rem) and not re.search(
            r"(?:你还?记得|还记得|记得吗|do you remember|you remember|I remember|"
            r"remember when|remember me\?)",
            sentence,
            re.I,
        )
        body = sentence
        if remember and rem:
            body = (sentence[: rem.start()] + " " + sentence[rem.end() :]).strip()
            signals.remember = True
        correct = zh_correction if lang == "zh" else en_correction
        forget_request = bool((ZH_DELETE if lang == "zh" else EN_FORGET).search(body))
        if not forget_request:
            corr = correct(body)
            if corr and (corr.statement or corr.old_value or corr.bare):
                signals.corrections.append(corr)
                continue
        for clause in split_clauses(body):
            cleaned = clean_clause(clause)
            if not cleaned:
                continue
            if is_chitchat(cleaned) or is_chitchat(clause):
                signals.skipped.append((clause, "chitchat"))
                continue
            deletion = find_deletion(cleaned)
            if deletion and deletion.content:
                signals.deletions.append(deletion)
                continue
            if forget_request:
                corr = correct(clause)
                if corr and corr.statement:
                    signals.corrections.append(corr)
                    continue
            if is_question(clause) and not remember:
                signals.skipped.append((clause, "question"))
                continue
            last = signals.statements[-1] if signals.statements else None
            if (
                last is not None
                and last.family == "code"
                and last.lang == "zh"
                and ZH_CODE_CONT.match(cleaned)
                and last.source_clause
            ):
                # "我们的项目用 PostgreSQL 15，部署在 k8s 上": one subject, one memory
                merged = statement_from_clause(last.source_clause + "，" + cleaned)
                if merged is not None and merged.family == "code":
                    signals.statements[-1] = merged
                    continue
            statement = statement_from_clause(cleaned, remember=remember)
            if statement:
                signals.statements.append(statement)
            else:
                reason = "fragment" if len(content_tokens(cleaned)) < 3 else "no-personal-info"
                signals.skipped.append((clause, reason))
    return signals


def extract_statements(text: str) -> list[Statement]:
    """Memory-worthy statements of a user turn (corrections included as plain statements)."""
    signals = turn_signals(text)
    out = list(signals.statements)
    out.extend(c.statement for c in signals.corrections if c.statement)
    return out
